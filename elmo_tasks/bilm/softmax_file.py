"""``softmax.npz``: a language model's output layer beside the biLM's ``weights.hdf5``.

The original format has no softmax; ours adds one file (``weight`` ``(vocab, dim)``, ``bias``
``(vocab,)`` and ``tokens``, the word of each row) so that training can continue from exported
files. Both writers, ``allennlp export-bilm`` and the plain-PyTorch full-softmax trainer, go
through here, so the two stay one format.
"""

from typing import List, Sequence, Tuple

import numpy as np
import torch

SOFTMAX_FILE = "softmax.npz"


def write_softmax(path: str, weight: torch.Tensor, bias: torch.Tensor, tokens: Sequence[str], dtype: str) -> None:
    """Write the rows in ``dtype`` (``float32`` or ``float16``), compressed: the token column is
    mostly padding, so compression makes the file about ten times smaller."""
    np.savez_compressed(
        path,
        weight=weight.detach().float().cpu().numpy().astype(dtype),
        bias=bias.detach().float().cpu().numpy().astype(dtype),
        tokens=np.array(list(tokens)),
    )


def read_softmax(path: str) -> Tuple[torch.Tensor, torch.Tensor, List[str]]:
    """``(weight, bias, tokens)`` of a ``softmax.npz``, as float32 tensors whatever dtype was written."""
    with np.load(path) as data:
        weight, bias, tokens = data["weight"], data["bias"], [str(token) for token in data["tokens"]]
    return torch.from_numpy(weight.astype(np.float32)), torch.from_numpy(bias.astype(np.float32)), tokens
