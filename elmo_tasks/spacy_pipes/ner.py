"""``elmo_ner``: named entities from a NER model (``ner_model``) as ``doc.ents``.

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_ner", config={"model": "runs/ner/model.tar.gz"})
    [(ent.text, ent.label_) for ent in nlp("Marta Velkin visited Port Elby.").ents]

Each sentence (the whole Doc when the pipeline sets no sentence boundaries, as the ``ner`` predictor
takes its input) is tagged by the model; its BIOUL tags (elmo_tasks/tasks/ner/tags.py) become
entity spans with the tag's type (CoNLL-2003's PER, LOC, ORG, MISC) as the label. ``doc.ents`` is
replaced: tokens outside the spans are set to outside any entity. The entities are the ``ner``
predictor's for the same words.
"""

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from elmo_tasks.spacy_pipes.component import SentenceReaderPipe
from elmo_tasks.spacy_pipes.doc_words import Words
from elmo_tasks.spacy_pipes.limits import checked_sentences
from elmo_tasks.spacy_pipes.passes import each_sentence_predicted

if TYPE_CHECKING:
    from allennlp.common.util import JsonDict

FACTORY = "elmo_ner"
#: The ``ner`` predictor's limit (elmo_tasks/tasks/ner/predictor.py); a test keeps them equal.
MAX_SENTENCE_TOKENS = 10_000


class ElmoNer(SentenceReaderPipe[List[Words]]):
    """Sets ``doc.ents`` from the NER model's tags of each sentence."""

    factory = FACTORY
    default_max_sentence_tokens = MAX_SENTENCE_TOKENS

    @staticmethod
    def predictor_name() -> str:
        from elmo_tasks.tasks.ner.names import PREDICTOR

        return PREDICTOR

    def read(self, doc: Doc) -> List[Words]:
        return checked_sentences(doc, self.max_sentence_tokens, FACTORY)

    def annotate(self, batch: List[Tuple[Doc, List[Words]]]) -> None:
        for doc, tagged in each_sentence_predicted(batch, self._tag):
            doc.ents = [
                Span(doc, *sentence.span(entity["start"], entity["end"]), label=entity["type"])
                for sentence, output in tagged
                for entity in output["entities"]
            ]

    def _tag(self, sentences: List[Words]) -> List["JsonDict"]:
        """The ``ner`` predictor's outputs for the sentences (``tags``, ``entities`` with inclusive word spans)."""
        from allennlp.data.tokenizers import Token

        instances = [self.reader.text_to_instance([Token(word) for word in s.words]) for s in sentences]
        return self.predictor.predict_batch_instance(instances)


@Language.factory(
    FACTORY,
    default_config={"model": None, "max_sentence_tokens": MAX_SENTENCE_TOKENS, "cuda_device": -1},
    assigns=["doc.ents", "token.ent_iob", "token.ent_type"],
)
def make_elmo_ner(nlp: Language, name: str, model: Optional[str], max_sentence_tokens: int, cuda_device: int) -> Any:
    """``nlp.add_pipe("elmo_ner", config={"model": ARCHIVE})``; ``max_sentence_tokens``: the longest
    sentence taken (the ``ner`` predictor's limit); ``cuda_device``: a GPU id, or -1 for the CPU."""
    return ElmoNer(name, model, max_sentence_tokens, cuda_device)
