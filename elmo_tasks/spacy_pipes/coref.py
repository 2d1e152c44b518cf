"""``elmo_coref``: the coreference clusters of a coreference model (``coref_model``) as ``doc.spans`` groups.

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo_coref", config={"model": "runs/coref/model.tar.gz"})
    doc = nlp("Marta met John. She liked him.")
    [span.text for span in doc.spans["coref_0"]]  # ["Marta", "She"]
    displacy.render(doc, style="span", options={"spans_key": "coref"})

The whole Doc is one document, as the ``coref`` predictor takes it; its sentences are the pipeline's
when it sets sentence boundaries, else the predictor's (after ``.``, ``!`` or ``?``, see
elmo_tasks/tasks/coref/predictor.py). Cluster ``k`` is the span group ``doc.spans["coref_k"]`` (its
mentions in Doc order; ``spans_key`` sets the prefix), and ``doc.spans["coref"]`` holds every
mention, labelled with its cluster's number, for ``displacy``; ``doc._.elmo_coref[k]`` is the same
cluster as plain data, ``[[start, end], ...]`` (token spans ``[start, end)`` of the Doc). The
clusters are the ``coref`` predictor's for the same words and sentences.
"""

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup

from elmo_tasks.spacy_pipes.component import DocPipe
from elmo_tasks.spacy_pipes.doc_words import Words, has_sentences, joined, preview, sentences_of, words_of
from elmo_tasks.spacy_pipes.extensions import COREF_CLUSTERS
from elmo_tasks.spacy_pipes.limits import check_length, positive_setting
from elmo_tasks.spacy_pipes.passes import in_length_sorted_passes

if TYPE_CHECKING:
    from allennlp.common.util import JsonDict

FACTORY = "elmo_coref"
#: The ``coref`` predictor's limits (elmo_tasks/tasks/coref/predictor.py); a test keeps them equal.
MAX_DOCUMENT_TOKENS = 10_000
MAX_PADDED_TOKENS = 100_000
#: OntoNotes' genre the model is told, as the ``coref`` predictor's default.
DEFAULT_GENRE = "nw"


class ElmoCoref(DocPipe[List[Words]]):
    """Sets one span group per cluster, one of all mentions, and ``doc._.elmo_coref``."""

    factory = FACTORY

    def __init__(
        self,
        name: str,
        model: Optional[str],
        spans_key: str = "coref",
        genre: str = DEFAULT_GENRE,
        max_document_tokens: int = MAX_DOCUMENT_TOKENS,
        max_padded_tokens: int = MAX_PADDED_TOKENS,
        cuda_device: int = -1,
    ) -> None:
        settings = {"model": model, "spans_key": spans_key, "genre": genre}
        limits = {"max_document_tokens": max_document_tokens, "max_padded_tokens": max_padded_tokens}
        super().__init__(name, {**settings, **limits, "cuda_device": cuda_device})
        from elmo_tasks.spacy_pipes.archives import task_predictor
        from elmo_tasks.spacy_pipes.errors import ElmoPipeError
        from elmo_tasks.tasks.coref.names import PREDICTOR
        from elmo_tasks.tasks.coref.reader import Conll2012CorefReader

        for setting, value in (("spans_key", spans_key), ("genre", genre)):
            if not isinstance(value, str) or not value:
                raise ElmoPipeError(f"{FACTORY}: {setting} must be a non-empty string, got {value!r}")
        self.spans_key, self.genre = spans_key, genre
        self.max_document_tokens = positive_setting(max_document_tokens, "max_document_tokens", FACTORY)
        self.max_padded_tokens = positive_setting(max_padded_tokens, "max_padded_tokens", FACTORY)
        self.predictor, archive = task_predictor(
            model,
            FACTORY,
            PREDICTOR,
            cuda_device,
            max_document_tokens=self.max_document_tokens,
            max_padded_tokens=self.max_padded_tokens,
        )
        reader = archive.validation_dataset_reader
        assert isinstance(reader, Conll2012CorefReader)  # the coref model reads the fields this reader writes
        self.reader = reader

    def read(self, doc: Doc) -> List[Words]:
        from elmo_tasks.tasks.coref.predictor import split_sentences

        if has_sentences(doc):
            sentences = sentences_of(doc)
        else:
            words = words_of(doc)
            sentences, start = [], 0
            for part in split_sentences(words.words):
                sentences.append(Words(part, words.positions[start : start + len(part)]))
                start += len(part)
        tokens = sum(len(sentence) for sentence in sentences)
        split = "split the Doc into parts (coreference is then found within each part only)"
        check_length(tokens, self.max_document_tokens, "tokens", preview(doc), FACTORY, "max_document_tokens", split)
        longest = max((len(sentence) for sentence in sentences), default=0)
        check_length(
            len(sentences) * longest,
            self.max_padded_tokens,
            f"padded tokens ({len(sentences):,} sentences x the longest, {longest:,} tokens: the model pads every "
            "sentence to the longest)",
            preview(doc),
            FACTORY,
            "max_padded_tokens",
            "split its longest sentences",
        )
        return sentences

    def annotate(self, batch: List[Tuple[Doc, List[Words]]]) -> None:
        documents = [sentences for _, sentences in batch if sentences]
        outputs = iter(in_length_sorted_passes(documents, _padded_size, self._resolve, self.max_padded_tokens))
        for doc, sentences in batch:
            clusters = []
            if sentences:
                words = joined(sentences)
                clusters = [[list(words.span(start, end)) for start, end in c] for c in next(outputs)["clusters"]]
            self._write(doc, clusters)

    def _write(self, doc: Doc, clusters: List[List[List[int]]]) -> None:
        """The clusters as span groups ``<spans_key>_<k>`` and ``<spans_key>`` (earlier ones of this key
        removed), and as data."""
        prefix = f"{self.spans_key}_"
        for key in [key for key in doc.spans if key.startswith(prefix) and key[len(prefix) :].isdigit()]:
            del doc.spans[key]
        mentions = []
        for number, cluster in enumerate(clusters):
            spans = [Span(doc, start, end, label=str(number)) for start, end in cluster]
            doc.spans[f"{prefix}{number}"] = SpanGroup(doc, name=f"{prefix}{number}", spans=spans)
            mentions.extend(spans)
        mentions.sort(key=lambda span: (span.start, span.end))
        doc.spans[self.spans_key] = SpanGroup(doc, name=self.spans_key, spans=mentions)
        doc._.set(COREF_CLUSTERS, clusters)

    def _resolve(self, documents: List[List[Words]]) -> List["JsonDict"]:
        """The ``coref`` predictor's outputs for the documents (``clusters`` of inclusive word spans)."""
        instances = [
            self.reader.text_to_instance([s.words for s in sentences], genre=self.genre, name="doc")
            for sentences in documents
        ]
        return self.predictor.predict_batch_instance(instances)


def _padded_size(sentences: List[Words]) -> int:
    """What a document costs the model: sentences x the longest, as it pads them."""
    return len(sentences) * max(len(sentence) for sentence in sentences)


@Language.factory(
    FACTORY,
    default_config={
        "model": None,
        "spans_key": "coref",
        "genre": DEFAULT_GENRE,
        "max_document_tokens": MAX_DOCUMENT_TOKENS,
        "max_padded_tokens": MAX_PADDED_TOKENS,
        "cuda_device": -1,
    },
    assigns=["doc.spans", f"doc._.{COREF_CLUSTERS}"],
)
def make_elmo_coref(
    nlp: Language,
    name: str,
    model: Optional[str],
    spans_key: str,
    genre: str,
    max_document_tokens: int,
    max_padded_tokens: int,
    cuda_device: int,
) -> Any:
    """``nlp.add_pipe("elmo_coref", config={"model": ARCHIVE})``; ``spans_key``: the name of the group of
    all mentions and the prefix of the clusters' groups; ``genre``: the OntoNotes genre the model is told
    (``nw``, ``bc``, ...); ``max_document_tokens``, ``max_padded_tokens``: the ``coref`` predictor's limits;
    ``cuda_device``: a GPU id, or -1 for the CPU."""
    return ElmoCoref(name, model, spans_key, genre, max_document_tokens, max_padded_tokens, cuda_device)
