"""``elmo``: ELMo vectors for every token: ``token.vector``, ``doc.tensor``, and all layers in ``doc._.elmo_layers``.

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")  # the shipped small biLM, the average of its layers
    doc = nlp("The cat sat on the mat.")
    doc[1].vector            # ELMo of "cat" (doc.tensor[1])
    doc._.elmo_layers        # (layers, tokens, dim): the token layer and each LSTM layer
    doc[1].similarity(doc[5])

The biLM is the shipped small one (``elmo_tasks:pretrained/bilm_small/options.json`` with its
``weights.hdf5``), any other in the original format (``options_file`` + ``weight_file``: paths or
``elmo_tasks:`` references), or the one inside a task model's archive (``model``, whose biLM weights
are part of the model, fine-tuned or not). ``mix`` says what ``doc.tensor`` (and so ``token.vector``,
``span.vector``, ``doc.vector``) holds: ``"average"`` of the layers, the ``"top"`` layer, or
``"learned"``, the archive's learned mix (``gamma * sum_j softmax(s)_j * layer_j`` of its ``fast_elmo``
embedder's ``scalar_mix_K``, ``K`` = ``scalar_mix``; without its dropout or projection; a mix with
layer norm normalises over each sentence).

The biLM reads each sentence on its own when the pipeline sets sentence boundaries (a
``sentencizer`` before ``elmo``), and the whole Doc as one sequence otherwise; it is stateless, so a
Doc's vectors do not depend on the Docs batched with it. Whitespace tokens get zero vectors.
``doc.tensor`` is replaced. spaCy's ``token.vector`` reads ``doc.tensor`` when the vocabulary has no
static vectors (``spacy.blank``, the ``_sm`` pipelines); where it has some (``_md``, ``_lg``) the
component sets ``doc.user_token_hooks`` etc. so that the vectors are ELMo's too; those hooks stay
with the Doc object and are not saved with it (``doc.tensor`` and ``doc._.elmo_layers`` are).
"""

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, Token

from elmo_tasks.spacy_pipes.component import DocPipe
from elmo_tasks.spacy_pipes.doc_words import Words
from elmo_tasks.spacy_pipes.errors import ElmoPipeError
from elmo_tasks.spacy_pipes.extensions import LAYERS
from elmo_tasks.spacy_pipes.limits import checked_sentences, positive_setting
from elmo_tasks.spacy_pipes.passes import in_length_sorted_passes

if TYPE_CHECKING:
    import torch

    from elmo_tasks.bilm import BiLM
    from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder

FACTORY = "elmo"
MIXES = ("average", "top", "learned")
#: The longest sentence (or Doc, without sentence boundaries) taken, as the ``ner`` predictor's.
MAX_SENTENCE_TOKENS = 10_000

#: One sentence's result: its layers ``(layers, words, dim)`` and its mixed vectors ``(words, dim)``.
SentenceVectors = Tuple[numpy.ndarray, numpy.ndarray]


class Elmo(DocPipe[List[Words]]):
    """Sets ``doc.tensor`` to the chosen mix of the biLM's layers and ``doc._.elmo_layers`` to all of them."""

    factory = FACTORY

    def __init__(
        self,
        name: str,
        options_file: Optional[str] = None,
        weight_file: Optional[str] = None,
        model: Optional[str] = None,
        mix: str = "average",
        scalar_mix: int = 0,
        store_layers: bool = True,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
        cuda_device: int = -1,
    ) -> None:
        files = {"options_file": options_file, "weight_file": weight_file, "model": model}
        choices = {"mix": mix, "scalar_mix": scalar_mix, "store_layers": store_layers}
        limits = {"max_sentence_tokens": max_sentence_tokens, "cuda_device": cuda_device}
        super().__init__(name, {**files, **choices, **limits})
        if mix not in MIXES:
            raise ElmoPipeError(f"{FACTORY}: mix must be one of {', '.join(MIXES)}; got {mix!r}")
        if mix == "learned" and not model:
            raise ElmoPipeError(
                f'{FACTORY}: mix "learned" takes the mixing weights of a task model: name its archive as model'
            )
        if model and (options_file or weight_file):
            raise ElmoPipeError(
                f"{FACTORY}: give model (a task model's archive, whose biLM is used) or options_file and weight_file, "
                "not both"
            )
        if (options_file is None) != (weight_file is None):
            raise ElmoPipeError(
                f"{FACTORY}: give both options_file and weight_file, or neither (for the shipped small biLM)"
            )
        self.mix, self.store_layers = mix, bool(store_layers)
        self.max_sentence_tokens = positive_setting(max_sentence_tokens, "max_sentence_tokens", FACTORY)
        self.scalar_mix = scalar_mix
        self.embedder: Optional["ElmoTokenEmbedder"] = None
        self.bilm: "BiLM" = (
            self._archived_bilm(model, mix, scalar_mix, cuda_device)
            if model
            else _plain_bilm(options_file, weight_file, cuda_device)
        )
        self.bilm.eval()

    def _archived_bilm(self, model: str, mix: str, scalar_mix: int, cuda_device: int) -> "BiLM":
        """The biLM of the task model in ``model`` (and its ``fast_elmo`` embedder, for the learned mix)."""
        from elmo_tasks.modules.elmo_token_embedder import find_elmo_embedder
        from elmo_tasks.spacy_pipes.archives import load_model

        archive = load_model(model, FACTORY, cuda_device)
        embedder = find_elmo_embedder(archive.model)
        if embedder is None:
            raise ElmoPipeError(
                f"{FACTORY}: {model} holds a `{archive.config['model']['type']}` model without ELMo (no fast_elmo "
                "embedder: a baseline?); name an archive of an ELMo experiment, or leave model out for the shipped biLM"
            )
        count = embedder.num_output_representations
        if mix == "learned" and (isinstance(scalar_mix, bool) or scalar_mix not in range(count)):
            raise ElmoPipeError(
                f"{FACTORY}: scalar_mix must name one of the model's ELMo mixes, 0 to {count - 1}; got {scalar_mix!r}"
            )
        embedder.eval()
        self.embedder = embedder
        return embedder.bilm

    def read(self, doc: Doc) -> List[Words]:
        return checked_sentences(doc, self.max_sentence_tokens, FACTORY)

    def annotate(self, batch: List[Tuple[Doc, List[Words]]]) -> None:
        sentences = [sentence for _, doc_sentences in batch for sentence in doc_sentences]
        outputs = iter(in_length_sorted_passes(sentences, len, self._vectors))
        layers_count, dim = self.bilm.num_layers, self.bilm.output_dim
        for doc, doc_sentences in batch:
            layers = numpy.zeros((layers_count, len(doc), dim), dtype=numpy.float32)
            tensor: Any = numpy.zeros((len(doc), dim), dtype=numpy.float32)  # spaCy's stub types doc.tensor float64
            for sentence in doc_sentences:
                sentence_layers, vectors = next(outputs)
                layers[:, sentence.positions] = sentence_layers
                tensor[sentence.positions] = vectors
            doc.tensor = tensor
            if self.store_layers:
                doc._.set(LAYERS, layers)
            if doc.vocab.vectors.size:
                _use_tensor_as_vectors(doc)

    def _vectors(self, sentences: List[Words]) -> List[SentenceVectors]:
        """One biLM pass over ``sentences``: each one's layers and mixed vectors."""
        import torch

        from elmo_tasks.bilm import batch_to_ids

        bilm = self.bilm
        device = next(bilm.parameters()).device
        ids = batch_to_ids([sentence.words for sentence in sentences], bilm.options.max_characters_per_token)
        if bilm.stateful:  # an archived biLM may carry states: each pass starts afresh, as a stateless one
            bilm.reset_states()
        with torch.no_grad():
            stacked = torch.stack(bilm(ids.to(device), keep_boundaries=True).layers)  # (layers, rows, tokens + 2, dim)
            results = []
            for row, sentence in enumerate(sentences):
                with_boundaries = stacked[:, row, : len(sentence) + 2]
                layers = with_boundaries[:, 1:-1]
                mixed = self._mixed(layers, with_boundaries)
                results.append((layers.cpu().numpy(), mixed.cpu().numpy()))
        return results

    def _mixed(self, layers: "torch.Tensor", with_boundaries: "torch.Tensor") -> "torch.Tensor":
        """The chosen mix of one sentence's ``layers`` ``(layers, words, dim)`` (``with_boundaries``: the same
        with ``<S>``/``</S>``, which a layer norm in the AllenNLP style takes its statistics over)."""
        import torch

        if self.mix == "average":
            return layers.mean(dim=0)
        if self.mix == "top":
            return layers[-1]
        assert self.embedder is not None  # "learned" needs a model: checked in __init__
        scalar_mix = getattr(self.embedder, f"scalar_mix_{self.scalar_mix}")
        if not self.embedder.do_layer_norm:
            return scalar_mix(list(layers.unbind(0)))
        if self.embedder.layer_norm_style == "bilm_tf":  # statistics over the words only
            mask = torch.ones(1, layers.shape[1], dtype=torch.bool, device=layers.device)
            return scalar_mix([layer.unsqueeze(0) for layer in layers], mask)[0]
        mask = torch.ones(1, with_boundaries.shape[1], dtype=torch.bool, device=layers.device)
        return scalar_mix([layer.unsqueeze(0) for layer in with_boundaries], mask)[0, 1:-1]


def _plain_bilm(options_file: Optional[str], weight_file: Optional[str], cuda_device: int) -> "BiLM":
    """The biLM of ``options_file`` + ``weight_file`` (both None: the shipped small one) on ``cuda_device``."""
    from elmo_tasks.bilm import BilmError, load_bilm
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.pretrained import SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE
    from elmo_tasks.spacy_pipes.archives import check_device

    check_device(cuda_device, FACTORY)
    try:
        bilm = load_bilm(
            resolve_bilm_file(options_file or SMALL_OPTIONS_REFERENCE),
            resolve_bilm_file(weight_file or SMALL_WEIGHT_REFERENCE),
        )
    except BilmError as error:
        raise ElmoPipeError(f"{FACTORY}: {error}") from None
    return bilm.to("cpu" if cuda_device < 0 else f"cuda:{cuda_device}")


def _use_tensor_as_vectors(doc: Doc) -> None:
    """``token.vector``, ``span.vector`` and ``doc.vector`` from ``doc.tensor`` even where the vocabulary
    has static vectors (spaCy reads those first)."""
    doc.user_token_hooks["vector"] = _token_vector
    doc.user_span_hooks["vector"] = _span_vector
    doc.user_hooks["vector"] = _doc_vector
    for hooks in (doc.user_token_hooks, doc.user_span_hooks, doc.user_hooks):
        hooks["has_vector"] = _has_vector


def _token_vector(token: Token) -> numpy.ndarray:
    return token.doc.tensor[token.i]


def _span_vector(span: Span) -> numpy.ndarray:
    if not len(span):
        return numpy.zeros(span.doc.tensor.shape[1], dtype=numpy.float32)
    return span.doc.tensor[span.start : span.end].mean(axis=0)


def _doc_vector(doc: Doc) -> numpy.ndarray:
    return doc.tensor.mean(axis=0) if len(doc) else numpy.zeros(doc.tensor.shape[1], dtype=numpy.float32)


def _has_vector(_: Any) -> bool:
    return True


@Language.factory(
    FACTORY,
    default_config={
        "options_file": None,
        "weight_file": None,
        "model": None,
        "mix": "average",
        "scalar_mix": 0,
        "store_layers": True,
        "max_sentence_tokens": MAX_SENTENCE_TOKENS,
        "cuda_device": -1,
    },
    assigns=["doc.tensor", f"doc._.{LAYERS}"],
)
def make_elmo(
    nlp: Language,
    name: str,
    options_file: Optional[str],
    weight_file: Optional[str],
    model: Optional[str],
    mix: str,
    scalar_mix: int,
    store_layers: bool,
    max_sentence_tokens: int,
    cuda_device: int,
) -> Any:
    """``nlp.add_pipe("elmo")``; the settings are :class:`Elmo`'s (module docstring)."""
    return Elmo(name, options_file, weight_file, model, mix, scalar_mix, store_layers, max_sentence_tokens, cuda_device)
