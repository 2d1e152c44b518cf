"""``elmo_sst``: the sentiment of an SST-5 model (``sst5_model``) as ``doc.cats``.

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_sst", config={"model": "runs/sst5/model.tar.gz"})
    nlp("A gorgeous, witty film.").cats  # {"very negative": 0.01, ..., "very positive": 0.62}

The whole Doc is one input, as the ``sst5`` predictor takes its sentence: ``doc.cats`` holds the
probability of every class ("very negative" .. "very positive"; a binary model's "negative" and
"positive"), which sum to one. For a label per sentence, give each sentence as its own Doc. A Doc
with no words is left as it is. The probabilities are the ``sst5`` predictor's for the same words.
"""

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from elmo_tasks.spacy_pipes.component import SentenceReaderPipe
from elmo_tasks.spacy_pipes.doc_words import Words, preview, words_of
from elmo_tasks.spacy_pipes.limits import check_length
from elmo_tasks.spacy_pipes.passes import in_length_sorted_passes

if TYPE_CHECKING:
    from allennlp.common.util import JsonDict

FACTORY = "elmo_sst"
#: The ``sst5`` predictor's limit (elmo_tasks/tasks/sst/predictor.py); a test keeps them equal.
MAX_SENTENCE_TOKENS = 5_000


class ElmoSst(SentenceReaderPipe[Words]):
    """Sets ``doc.cats`` to the SST model's class probabilities for the whole Doc."""

    factory = FACTORY
    default_max_sentence_tokens = MAX_SENTENCE_TOKENS

    @staticmethod
    def predictor_name() -> str:
        from elmo_tasks.tasks.sst.names import PREDICTOR

        return PREDICTOR

    def read(self, doc: Doc) -> Words:
        words = words_of(doc)
        check_length(
            len(words),
            self.max_sentence_tokens,
            "tokens",
            preview(doc),
            FACTORY,
            "max_sentence_tokens",
            "give its sentences as Docs of their own",
        )
        return words

    def annotate(self, batch: List[Tuple[Doc, Words]]) -> None:
        texts = [words for _, words in batch if len(words)]
        outputs = iter(in_length_sorted_passes(texts, len, self._classify))
        for doc, words in batch:
            if len(words):
                doc.cats = dict(next(outputs)["label_probs"])

    def _classify(self, texts: List[Words]) -> List["JsonDict"]:
        """The ``sst5`` predictor's outputs (``label``, ``label_probs``) for the texts."""
        instances = [self.reader.text_to_instance(list(words.words)) for words in texts]
        return self.predictor.predict_batch_instance(instances)


@Language.factory(
    FACTORY,
    default_config={"model": None, "max_sentence_tokens": MAX_SENTENCE_TOKENS, "cuda_device": -1},
    assigns=["doc.cats"],
)
def make_elmo_sst(nlp: Language, name: str, model: Optional[str], max_sentence_tokens: int, cuda_device: int) -> Any:
    """``nlp.add_pipe("elmo_sst", config={"model": ARCHIVE})``; ``max_sentence_tokens``: the longest Doc
    taken, in words (the ``sst5`` predictor's limit); ``cuda_device``: a GPU id, or -1 for the CPU."""
    return ElmoSst(name, model, max_sentence_tokens, cuda_device)
