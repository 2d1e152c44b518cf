"""The biLM as an AllenNLP Model: forward + backward LM losses over ONE shared softmax.

The network is :class:`elmo_tasks.bilm.BiLM`, the very module the ``fast_elmo`` token
embedder runs, so what is trained here exports to the original hdf5 and loads back unchanged.
"""

import logging
from typing import Any, Dict, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.nn import util

from elmo_tasks.bilm import BiLM, BilmOptions, load_weights
from elmo_tasks.bilm.characters import BOS_TOKEN, EOS_TOKEN, add_sentence_boundaries
from elmo_tasks.tasks.lm.perplexity import PerplexityTracker
from elmo_tasks.tasks.lm.pretrained import load_softmax, options_differences, resolve_pretrained
from elmo_tasks.tasks.lm.reader import LM_TARGET_NAMESPACE
from elmo_tasks.tasks.lm.softmax import LmSoftmax

logger = logging.getLogger(__name__)

# the training forward pass's lower-precision dtype on CPU (None: float32 throughout)
AUTOCAST_DTYPES: Dict[Optional[str], Optional[torch.dtype]] = {None: None, "bfloat16": torch.bfloat16}


@Model.register("bilm_language_model")
class BilmLanguageModel(Model):
    """Trains a biLM. Sizes come from ``options`` (the ``options.json`` layout, inline) and/or
    ``options_file``; given both, they must agree.

    ``pretrained_file`` starts from existing weights (domain adaptation): an hdf5 weight file
    (fresh softmax), or a directory written by ``export_bilm`` (``weights.hdf5`` and, when
    present, ``softmax.npz``, whose vocabulary must equal ours). AllenNLP drops
    ``pretrained_file`` when it loads an archive, so archives never need the original file.

    Training uses a sampled softmax with ``num_samples`` negatives; ``model.eval()`` uses the
    exact softmax. Metrics say which: ``ppl_*_sampled`` vs ``ppl_*_exact``.

    ``autocast="bfloat16"`` runs the training forward pass under ``torch.autocast("cpu")``: the
    matrix products take bfloat16 inputs (several times faster on CPUs with AMX or AVX-512 BF16;
    other CPUs have no bfloat16 matrix units), while the weights, Adam's state, the LSTM state and
    the loss stay float32.
    Evaluation (the exact perplexity) always runs in float32, so its numbers never depend on it.
    AllenNLP's ``use_amp`` is for CUDA only; this is its CPU counterpart.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        options: Optional[Dict[str, Any]] = None,
        options_file: Optional[str] = None,
        pretrained_file: Optional[str] = None,
        dropout: float = 0.1,
        num_samples: int = 8192,
        sampler: str = "log_uniform",
        target_namespace: str = LM_TARGET_NAMESPACE,
        autocast: Optional[str] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if autocast not in AUTOCAST_DTYPES:
            raise ConfigurationError(
                f"bilm_language_model's autocast is {autocast!r}; use one of "
                f"{sorted(name for name in AUTOCAST_DTYPES if name)} or leave it out (float32)"
            )
        self.autocast_dtype = AUTOCAST_DTYPES[autocast]
        self.bilm_options = _resolve_options(options, options_file)
        self.bilm = BiLM(self.bilm_options, stateful=False, dropout=dropout)
        self.top_dropout = torch.nn.Dropout(dropout) if dropout > 0 else torch.nn.Identity()
        self.target_namespace = target_namespace
        vocab_size = vocab.get_vocab_size(target_namespace)
        for token in (BOS_TOKEN, EOS_TOKEN):
            if token not in vocab.get_token_to_index_vocabulary(target_namespace):
                raise ConfigurationError(
                    f"the vocabulary namespace {target_namespace!r} lacks {token}; build it from "
                    "instances of the 'bilm_raw_text' reader (its targets carry <S> and </S>)"
                )
        self.softmax = LmSoftmax(
            vocab_size,
            self.bilm_options.projection_dim,
            num_samples,
            sampler,
            padding_index=0 if vocab.is_padded(target_namespace) else None,
        )
        self._trackers = {"sampled": PerplexityTracker("sampled"), "exact": PerplexityTracker("exact")}
        if pretrained_file:
            self._load_pretrained(pretrained_file, options_file)

    def _load_pretrained(self, pretrained_file: str, options_file: Optional[str]) -> None:
        weights, softmax = resolve_pretrained(pretrained_file)
        load_weights(self.bilm, weights, options_source=options_file or "the configured options")
        logger.info("biLM weights initialised from %s", weights)
        if softmax is not None:
            tokens = self.vocab.get_index_to_token_vocabulary(self.target_namespace)
            ours = [tokens[i] for i in range(len(tokens))]
            weight, bias = load_softmax(softmax, ours, self.bilm_options.projection_dim)
            with torch.no_grad():
                self.softmax.weight.copy_(weight)
                self.softmax.bias.copy_(bias)
            logger.info("softmax initialised from %s", softmax)

    def forward(self, tokens: TextFieldTensors, targets: TextFieldTensors) -> Dict[str, torch.Tensor]:
        tracker = self._trackers["sampled" if self.training else "exact"]
        tracker.start()
        char_ids = _elmo_ids(tokens)
        ids, mask = add_sentence_boundaries(char_ids)
        target_ids = util.get_token_ids_from_text_field_tensors(targets)
        if target_ids.shape != mask.shape or not torch.equal(target_ids > 0, mask):
            raise ValueError("targets must be the tokens with <S>/</S> around them (use the 'bilm_raw_text' reader)")
        low_precision = self.training and self.autocast_dtype is not None
        with torch.autocast("cpu", dtype=self.autocast_dtype or torch.bfloat16, enabled=low_precision):
            top = self.top_dropout(self.bilm.layers_with_boundaries(ids, mask)[-1])
            p = self.bilm_options.projection_dim
            # forward state at t predicts t+1; backward state at t predicts t-1
            valid = mask[:, 1:]
            fwd_hidden, fwd_targets = top[:, :-1, :p][valid], target_ids[:, 1:][valid]
            bwd_hidden, bwd_targets = top[:, 1:, p:][valid], target_ids[:, :-1][valid]
            if self.training:
                # one draw shared by both directions, scored in one pass over the sampled rows
                nll = self.softmax.sampled_nll(
                    torch.cat([fwd_hidden, bwd_hidden]), torch.cat([fwd_targets, bwd_targets])
                ).float()
                fwd_nll, bwd_nll = nll.split([fwd_targets.shape[0], bwd_targets.shape[0]])
            else:  # autocast is off here: evaluation is float32
                fwd_nll = self.softmax.exact_nll(fwd_hidden, fwd_targets)
                bwd_nll = self.softmax.exact_nll(bwd_hidden, bwd_targets)
        tracker.add(float(fwd_nll.detach().sum()), float(bwd_nll.detach().sum()), int(fwd_nll.numel()))
        loss = 0.5 * (fwd_nll.mean() + bwd_nll.mean())
        return {"loss": loss, "fwd_nll": fwd_nll.detach(), "bwd_nll": bwd_nll.detach()}

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics: Dict[str, float] = {}
        for tracker in self._trackers.values():
            metrics.update(tracker.metrics())
            if reset:
                tracker.reset()
        return metrics


def _resolve_options(options: Optional[Dict[str, Any]], options_file: Optional[str]) -> BilmOptions:
    if options is None and options_file is None:
        raise ConfigurationError("bilm_language_model needs `options` (sizes) or `options_file` (an options.json)")
    inline = BilmOptions.from_json_dict(options, source="the model's `options`") if options is not None else None
    if options_file is None:
        assert inline is not None  # without options_file, options were given (checked above)
        return inline
    from_file = BilmOptions.from_file(options_file)
    if inline is not None:
        differences = options_differences(inline, from_file)
        if differences:
            raise ConfigurationError(
                f"the model's `options` disagree with {options_file}: "
                + "; ".join(differences)
                + ". Drop `options` to use the file's sizes, or give the options.json that matches the weights."
            )
    return from_file


def _elmo_ids(tokens: TextFieldTensors) -> torch.Tensor:
    for indexed in tokens.values():
        if "elmo_tokens" in indexed:
            return indexed["elmo_tokens"]
    raise ConfigurationError("the `tokens` field needs an 'elmo_characters' token indexer")
