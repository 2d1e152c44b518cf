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

from elmo_tasks.spacy_pipes.component import DocPipe
from elmo_tasks.spacy_pipes.doc_words import Words
from elmo_tasks.spacy_pipes.limits import checked_sentences
from elmo_tasks.spacy_pipes.passes import in_length_sorted_passes

if TYPE_CHECKING:
    from allennlp.common.util import JsonDict

FACTORY = "elmo_ner"
#: The ``ner`` predictor's limit (elmo_tasks/tasks/ner/predictor.py); a test keeps them equal.
MAX_SENTENCE_TOKENS = 10_000


class ElmoNer(DocPipe[List[Words]]):
    """Sets ``doc.ents`` from the NER model's tags of each sentence."""

    factory = FACTORY

    def __init__(
        self, name: str, model: Optional[str], max_sentence_tokens: int = MAX_SENTENCE_TOKENS, cuda_device: int = -1
    ) -> None:
        super().__init__(name, {"model": model, "max_sentence_tokens": max_sentence_tokens, "cuda_device": cuda_device})
        from elmo_tasks.tasks.ner.names import PREDICTOR

        self.predictor, archive = self.load_sentence_predictor(model, PREDICTOR, max_sentence_tokens, cuda_device)
        self.reader = archive.validation_dataset_reader

    def read(self, doc: Doc) -> List[Words]:
        return checked_sentences(doc, self.max_sentence_tokens, FACTORY)

    def annotate(self, batch: List[Tuple[Doc, List[Words]]]) -> None:
        sentences = [sentence for _, doc_sentences in batch for sentence in doc_sentences]
        outputs = iter(in_length_sorted_passes(sentences, len, self._tag))
        for doc, doc_sentences in batch:
            entities = []
            for sentence in doc_sentences:
                for entity in next(outputs)["entities"]:
                    start, end = sentence.span(entity["start"], entity["end"])
                    entities.append(Span(doc, start, end, label=entity["type"]))
            doc.ents = entities

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
