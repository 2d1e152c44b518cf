"""``elmo_srl``: the semantic-role frames of an SRL model (``srl_model``) as ``doc.spans`` groups.

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_srl", config={"model": "runs/srl/model.tar.gz"})
    doc = nlp("The cat chased the mouse.")
    [(span.text, span.label_) for span in doc.spans["srl_0"]]  # [("The cat", "A0"), ("chased", "V"), ...]
    displacy.render(doc, style="span", options={"spans_key": "srl_0"})

Each sentence (the whole Doc when the pipeline sets no sentence boundaries, as the ``srl`` predictor
takes its input) gets its predicates from the shipped POS tagger, as the ``srl`` predictor finds them
for a sentence that names none (elmo_tasks/tasks/srl/verbs.py), and the model labels each one's roles.
Frame ``k`` (predicates in Doc order) is the span group ``doc.spans["srl_k"]`` (``spans_key`` sets the
prefix): the predicate (``V``) and its arguments, labelled with their roles, with ``attrs``
``{"predicate": token index, "verb": text}``; ``doc._.elmo_srl[k]`` is the same frame as plain data,
``{"predicate", "verb", "arguments": [[label, start, end], ...], "description"}`` (token spans
``[start, end)`` of the Doc, the ``V`` one included), which travels with the Doc. The frames are the
``srl`` predictor's for the same words.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup

from elmo_tasks.spacy_pipes.component import DocPipe
from elmo_tasks.spacy_pipes.doc_words import Words
from elmo_tasks.spacy_pipes.extensions import SRL_FRAMES
from elmo_tasks.spacy_pipes.limits import checked_sentences
from elmo_tasks.spacy_pipes.passes import each_sentence_predicted

if TYPE_CHECKING:
    from allennlp.common.util import JsonDict

FACTORY = "elmo_srl"
#: The ``srl`` predictor's limit (elmo_tasks/tasks/srl/predictor.py); a test keeps them equal.
MAX_SENTENCE_TOKENS = 4_000


class ElmoSrl(DocPipe[List[Words]]):
    """Sets one span group per predicate, and ``doc._.elmo_srl``, from the SRL model's frames."""

    factory = FACTORY

    def __init__(
        self,
        name: str,
        model: Optional[str],
        spans_key: str = "srl",
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
        cuda_device: int = -1,
    ) -> None:
        settings = {"model": model, "spans_key": spans_key, "max_sentence_tokens": max_sentence_tokens}
        super().__init__(name, {**settings, "cuda_device": cuda_device})
        from elmo_tasks.spacy_pipes.errors import ElmoPipeError
        from elmo_tasks.tasks.srl.names import PREDICTOR
        from elmo_tasks.tasks.srl.predictor import SrlPredictor

        if not isinstance(spans_key, str) or not spans_key:
            raise ElmoPipeError(f"{FACTORY}: spans_key must be a non-empty string, got {spans_key!r}")
        self.spans_key = spans_key
        predictor, _ = self.load_sentence_predictor(model, PREDICTOR, max_sentence_tokens, cuda_device)
        assert isinstance(predictor, SrlPredictor)  # the predictor registered as "srl"
        self.predictor = predictor

    def read(self, doc: Doc) -> List[Words]:
        return checked_sentences(doc, self.max_sentence_tokens, FACTORY)

    def annotate(self, batch: List[Tuple[Doc, List[Words]]]) -> None:
        from allennlp.data.dataset_readers.dataset_utils.span_utils import bio_tags_to_spans

        for doc, labelled in each_sentence_predicted(batch, self._label):
            frames: List[Dict[str, Any]] = []
            for sentence, output in labelled:
                for frame in output["verbs"]:
                    roles = sorted(bio_tags_to_spans(frame["tags"]), key=lambda role: role[1])
                    arguments = [[label, *sentence.span(start, end)] for label, (start, end) in roles]
                    predicate = sentence.positions[frame["index"]]
                    frames.append(
                        {
                            "predicate": predicate,
                            "verb": frame["verb"],
                            "arguments": arguments,
                            "description": frame["description"],
                        }
                    )
            self._write(doc, frames)

    def _write(self, doc: Doc, frames: List[Dict[str, Any]]) -> None:
        """The frames as span groups ``<spans_key>_<k>`` (earlier ones of this key removed) and as data."""
        prefix = f"{self.spans_key}_"
        for key in [key for key in doc.spans if key.startswith(prefix) and key[len(prefix) :].isdigit()]:
            del doc.spans[key]
        for number, frame in enumerate(frames):
            spans = [Span(doc, start, end, label=label) for label, start, end in frame["arguments"]]
            attrs = {"predicate": frame["predicate"], "verb": frame["verb"]}
            doc.spans[f"{prefix}{number}"] = SpanGroup(doc, name=f"{prefix}{number}", attrs=attrs, spans=spans)
        doc._.set(SRL_FRAMES, frames)

    def _label(self, sentences: List[Words]) -> List["JsonDict"]:
        """The ``srl`` predictor's outputs for the sentences (``verbs``: a frame per predicate found)."""
        return self.predictor.predict_words([sentence.words for sentence in sentences])


@Language.factory(
    FACTORY,
    default_config={"model": None, "spans_key": "srl", "max_sentence_tokens": MAX_SENTENCE_TOKENS, "cuda_device": -1},
    assigns=["doc.spans", f"doc._.{SRL_FRAMES}"],
)
def make_elmo_srl(
    nlp: Language, name: str, model: Optional[str], spans_key: str, max_sentence_tokens: int, cuda_device: int
) -> Any:
    """``nlp.add_pipe("elmo_srl", config={"model": ARCHIVE})``; ``spans_key``: the prefix of the span
    groups' names; ``max_sentence_tokens``: the longest sentence taken (the ``srl`` predictor's limit);
    ``cuda_device``: a GPU id, or -1 for the CPU."""
    return ElmoSrl(name, model, spans_key, max_sentence_tokens, cuda_device)
