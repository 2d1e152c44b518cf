"""Embed a file of sentences into hdf5: one dataset per line, keyed by its 0-based index.

Stateless mode reads the file in chunks and sorts each chunk by length before batching, so
batches waste no work on ragged lengths while memory stays bounded by the chunk. Stateful
mode keeps file order: consecutive lines form a batch and row r continues row r of the
previous batch, which replays streams exactly like the original implementation.
"""
import json
import os
from itertools import islice
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import torch

from elmo_tasks.bilm.characters import batch_to_ids
from elmo_tasks.bilm.errors import BilmError
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.sentence_file import Tokenizer, read_sentences

Line = Tuple[int, str, List[str]]


class OutputMode:
    """How the L+1 layers become what is stored for each sentence."""

    def __init__(self, kind: str, weights: Optional[Sequence[float]] = None) -> None:
        if kind not in ("all", "top", "average", "mix"):
            raise BilmError(f"unknown output mode {kind!r}: use all, top, average or mix")
        self.kind = kind
        self.weights = list(weights) if weights is not None else None

    def check(self, num_layers: int) -> None:
        if self.kind == "mix" and (self.weights is None or len(self.weights) != num_layers):
            raise BilmError(f"--mix needs {num_layers} comma-separated weights (one per layer), got {self.weights}")

    def apply(self, layers: torch.Tensor) -> torch.Tensor:
        """``layers`` ``(L+1, n, dim)`` -> what to store."""
        if self.kind == "all":
            return layers
        if self.kind == "top":
            return layers[-1]
        if self.kind == "average":
            return layers.mean(dim=0)
        weights = torch.tensor(self.weights, dtype=layers.dtype, device=layers.device)
        return (weights.view(-1, 1, 1) * layers).sum(dim=0)


def _batches(lines: Iterator[Line], batch_size: int, stateful: bool) -> Iterator[List[Line]]:
    if stateful:
        while True:
            batch = list(islice(lines, batch_size))
            if not batch:
                return
            yield batch
    chunk_size = batch_size * 32
    while True:
        chunk = list(islice(lines, chunk_size))
        if not chunk:
            return
        chunk.sort(key=lambda line: len(line[2]))
        for start in range(0, len(chunk), batch_size):
            yield chunk[start: start + batch_size]


def embed_sentences(model: BiLM, sentences: Sequence[Sequence[str]], device: torch.device) -> List[torch.Tensor]:
    """The ``(L+1, n_i, dim)`` layers of each tokenized sentence (one batch)."""
    ids = batch_to_ids(sentences).to(device)
    with torch.no_grad():
        output = model(ids)
    stacked = torch.stack(output.layers, dim=1)  # (batch, L+1, tokens, dim)
    return [stacked[row, :, : len(s)] for row, s in enumerate(sentences)]


def embed_file(
    model: BiLM,
    input_path: str,
    output_path: str,
    mode: OutputMode,
    batch_size: int = 64,
    device: Optional[torch.device] = None,
    tokenize: Optional[Tokenizer] = None,
    progress: bool = True,
) -> int:
    """Write one dataset per input line; returns the number of lines embedded.

    On any error the partial output file is removed, so an output file always covers the
    whole input.
    """
    import h5py

    mode.check(model.num_layers)
    device = device or next(model.parameters()).device
    model.eval()
    if model.stateful:
        model.reset_states()
    try:
        handle = h5py.File(output_path, "w")
    except OSError as err:
        raise BilmError(f"cannot write the output file {output_path}: {err}") from None
    done = 0
    try:
        with handle:
            index_of: Dict[str, str] = {}
            bar = _progress_bar(input_path, progress)
            for batch in _batches(read_sentences(input_path, tokenize), batch_size, model.stateful):
                layers = embed_sentences(model, [tokens for _, _, tokens in batch], device)
                for (index, text, _), value in zip(batch, layers):
                    handle.create_dataset(str(index), data=mode.apply(value).cpu().numpy())
                    index_of.setdefault(text, str(index))
                done += len(batch)
                bar.update(sum(len(tokens) for _, _, tokens in batch))
            bar.close()
            handle.create_dataset("sentence_to_index", data=[json.dumps(index_of)])
    except BaseException:
        if os.path.exists(output_path):
            os.remove(output_path)
        raise
    return done


class _NoBar:
    def update(self, _: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(input_path: str, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(desc=f"embedding {os.path.basename(input_path)}", unit=" tokens", unit_scale=True)
