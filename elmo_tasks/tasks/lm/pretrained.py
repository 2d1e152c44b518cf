"""Starting a biLM from exported files, and writing them: options + hdf5 (+ softmax, vocabulary).

The original format has no softmax; we add ``softmax.npz`` (``elmo_tasks.bilm.softmax_file``) and
an AllenNLP ``vocabulary/`` folder beside it so a fine-tuning run can reuse the softmax, and so a
vocabulary that does not match is caught with a clear message.
"""

import logging
import os
from typing import List, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from elmo_tasks.bilm import BiLM, BilmOptions, export_bilm
from elmo_tasks.bilm.references import resolve_bilm_file
from elmo_tasks.bilm.softmax_file import SOFTMAX_FILE, VOCABULARY_DIR, read_softmax, write_softmax
from elmo_tasks.tasks.lm.softmax import LmSoftmax

logger = logging.getLogger(__name__)

WEIGHTS_FILE = "weights.hdf5"


def options_differences(ours: BilmOptions, theirs: BilmOptions) -> List[str]:
    """Human-readable ``field: a != b`` for every option that differs."""
    a, b = ours.to_json_dict(), theirs.to_json_dict()
    out = []
    for group in a:
        for key in a[group]:
            if a[group][key] != b[group].get(key):
                out.append(f"{group}.{key}: {a[group][key]} (config) != {b[group].get(key)} (file)")
    return out


def resolve_pretrained(path: str) -> Tuple[str, Optional[str]]:
    """``(weight_file, softmax_file or None)`` for an hdf5 file or an export directory."""
    path = resolve_bilm_file(path)  # an elmo_tasks: package reference, or a path
    if os.path.isdir(path):
        weights = os.path.join(path, WEIGHTS_FILE)
        if not os.path.isfile(weights):
            raise ConfigurationError(
                f"pretrained_file {path} is a directory without {WEIGHTS_FILE}; "
                "give an hdf5 weight file or a directory written by `allennlp export-bilm`"
            )
        softmax = os.path.join(path, SOFTMAX_FILE)
        return weights, softmax if os.path.isfile(softmax) else None
    if not os.path.isfile(path):
        raise ConfigurationError(f"pretrained_file not found: {path}")
    return path, None


def load_softmax(path: str, our_tokens: List[str], dim: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """The softmax in ``path``, after checking its rows are our vocabulary, in our order."""
    weight, bias, tokens = read_softmax(path)
    if weight.shape[1] != dim:
        raise ConfigurationError(f"{path}: softmax width {weight.shape[1]} != projection_dim {dim}")
    if tokens != our_tokens:
        first = next(
            (i for i, (x, y) in enumerate(zip(tokens, our_tokens, strict=False)) if x != y),
            min(len(tokens), len(our_tokens)),
        )
        theirs = tokens[first] if first < len(tokens) else "<end>"
        ours = our_tokens[first] if first < len(our_tokens) else "<end>"
        folder = os.path.join(os.path.dirname(path), VOCABULARY_DIR)
        raise ConfigurationError(
            f"the softmax in {path} was trained with a different vocabulary ({len(tokens)} words, this "
            f"run has {len(our_tokens)}; first difference at row {first}: {theirs!r} vs {ours!r}). "
            f"Reuse its vocabulary (`vocabulary: {{type: 'from_files', directory: '{folder}'}}`) or start "
            f"a fresh softmax by pointing pretrained_file at the {WEIGHTS_FILE} file itself."
        )
    return weight, bias


def export_language_model(
    bilm: BiLM,
    directory: str,
    dtype: str = "float32",
    softmax: Optional[LmSoftmax] = None,
    vocab: Optional[Vocabulary] = None,
    namespace: str = "lm_targets",
) -> str:
    """Write ``options.json`` + ``weights.hdf5`` (original layout) and, for a language model,
    ``softmax.npz`` + ``vocabulary/``. Returns ``directory``."""
    export_bilm(bilm, directory, dtype=dtype)
    if softmax is not None and vocab is not None:
        index_to_token = vocab.get_index_to_token_vocabulary(namespace)
        tokens = [index_to_token[i] for i in range(len(index_to_token))]
        write_softmax(os.path.join(directory, SOFTMAX_FILE), softmax.weight, softmax.bias, tokens, dtype)
        vocab.save_to_files(os.path.join(directory, VOCABULARY_DIR))
    logger.info("exported the biLM (%s) to %s", dtype, directory)
    return directory


def find_bilm(model: torch.nn.Module) -> BiLM:
    """The one :class:`BiLM` inside ``model`` (a language model or any model using ELMo)."""
    found = [m for m in model.modules() if isinstance(m, BiLM)]
    if not found:
        raise ConfigurationError("this model contains no biLM to export")
    if len({id(m) for m in found}) > 1:
        raise ConfigurationError(f"this model contains {len(found)} biLMs; export needs exactly one")
    return found[0]
