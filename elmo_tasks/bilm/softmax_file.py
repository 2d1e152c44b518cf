"""``softmax.npz``: a language model's output layer beside the biLM's ``weights.hdf5``.

The original format has no softmax; ours adds one file (``weight`` ``(vocab, dim)``, ``bias``
``(vocab,)`` and ``tokens``, the word of each row) so that training can continue from exported
files. Both writers, ``allennlp export-bilm`` and the plain-PyTorch full-softmax trainer, go
through here, so the two stay one format.
"""

import os
import zipfile
import zlib
from typing import TYPE_CHECKING, List, Sequence, Tuple

import numpy as np

from elmo_tasks.bilm.errors import SoftmaxFileError

if TYPE_CHECKING:  # torch only where a tensor is made: bilm-perplexity reads the names above before torch loads
    import torch

SOFTMAX_FILE = "softmax.npz"
#: The AllenNLP vocabulary folder written beside it, whose ``lm_targets.txt`` names the softmax's rows.
VOCABULARY_DIR = "vocabulary"
_SOFTMAX_EXPECTED = (
    f"expected the {SOFTMAX_FILE} (arrays weight, bias, tokens) that `allennlp export-bilm` writes beside "
    "weights.hdf5: copy it again, or export it again"
)


def write_softmax(path: str, weight: "torch.Tensor", bias: "torch.Tensor", tokens: Sequence[str], dtype: str) -> None:
    """Write the rows in ``dtype`` (``float32`` or ``float16``), compressed: the token column is
    mostly padding, so compression makes the file about ten times smaller."""
    np.savez_compressed(
        path,
        weight=weight.detach().float().cpu().numpy().astype(dtype),
        bias=bias.detach().float().cpu().numpy().astype(dtype),
        tokens=np.array(list(tokens)),
    )


def read_softmax(path: str) -> Tuple["torch.Tensor", "torch.Tensor", List[str]]:
    """``(weight, bias, tokens)`` of a ``softmax.npz``, as float32 tensors whatever dtype was written.

    Raises SoftmaxFileError, naming the file, for a missing, truncated or corrupt file (the zip's
    checksums catch a damaged copy) or arrays that do not fit together."""
    if not os.path.isfile(path):
        raise SoftmaxFileError(f"softmax file not found: {path}; {_SOFTMAX_EXPECTED}")
    try:
        with np.load(path, allow_pickle=False) as data:
            weight, bias, tokens = data["weight"], data["bias"], [str(token) for token in data["tokens"]]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as err:
        reason = " ".join(f"{type(err).__name__}: {err}".split())
        raise SoftmaxFileError(f"{path} is not a whole softmax file ({reason}); {_SOFTMAX_EXPECTED}") from None
    if weight.ndim != 2 or bias.shape != (weight.shape[0],) or len(tokens) != weight.shape[0]:
        raise SoftmaxFileError(
            f"{path}: weight of shape {weight.shape}, bias of shape {bias.shape} and {len(tokens)} tokens do not fit "
            f"together; expected (rows, dim), (rows,) and one token per row: {_SOFTMAX_EXPECTED}"
        )
    import torch

    return torch.from_numpy(weight.astype(np.float32)), torch.from_numpy(bias.astype(np.float32)), tokens
