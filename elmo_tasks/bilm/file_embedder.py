"""Embed a file of sentences into hdf5: one dataset per line, keyed by its 0-based index.

Stateless mode reads the file in chunks and sorts each chunk by length before batching, so
batches waste no work on ragged lengths while memory stays bounded by the chunk. Stateful
mode keeps file order: consecutive lines form a batch and row r continues row r of the
previous batch, which replays streams exactly like the original implementation.
"""

import json
import os
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from elmo_tasks.atomic_files import FirstWriteFailure, WholeFile, failed_write_errno, write_failure
from elmo_tasks.bilm.characters import batch_to_ids
from elmo_tasks.bilm.errors import BilmError
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.seen_words import seen_words_kept
from elmo_tasks.bilm.sentence_file import Tokenizer, read_sentences, refuse_same_file
from elmo_tasks.bilm.workers import ordered_map

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
            yield chunk[start : start + batch_size]


def embed_sentences(model: BiLM, sentences: Sequence[Sequence[str]], device: torch.device) -> List[torch.Tensor]:
    """The ``(L+1, n_i, dim)`` layers of each tokenized sentence (one batch), on the host.

    The batch is copied off the device in one piece: a copy per sentence made the host wait for
    the device once per sentence.
    """
    ids = batch_to_ids(sentences).to(device)
    with torch.no_grad():
        output = model(ids)
    stacked = torch.stack(output.layers, dim=1).cpu()  # (batch, L+1, tokens, dim)
    return [stacked[row, :, : len(s)] for row, s in enumerate(sentences)]


@dataclass
class EmbedResult:
    """What :func:`embed_file` wrote."""

    sentences: int
    tokens: int
    skipped_empty_lines: List[int]  # 0-based, like the dataset names


def embed_file(
    model: BiLM,
    input_path: str,
    output_path: str,
    mode: OutputMode,
    batch_size: int = 64,
    device: Optional[torch.device] = None,
    tokenize: Optional[Tokenizer] = None,
    progress: bool = True,
    skip_empty_lines: bool = False,
    workers: int = 1,
    word_cache_bytes: int = 0,
) -> EmbedResult:
    """Write one dataset per input line, named by its 0-based line number.

    The hdf5 file is written beside ``output_path`` under a temporary name and renamed into place
    only when complete, so ``output_path`` always holds either its previous content or a file
    covering the whole input; a failure removes the temporary file (a killed process may leave
    ``.NAME.*.partial`` behind, never a broken ``NAME``). With ``skip_empty_lines`` empty lines
    are left out and listed in the dataset ``skipped_empty_lines`` (0-based line numbers).
    ``workers`` processes (one thread each, :mod:`elmo_tasks.bilm.workers`) embed the batches of a
    stateless model; the file is the same whatever their number. On the CPU each process keeps the
    vectors of the words it has encoded, up to ``word_cache_bytes`` (0: none; ``elmo-embed`` keeps
    64 MB), unless the model already has a word cache (:mod:`elmo_tasks.bilm.seen_words`).
    """
    refuse_same_file(input_path, output_path)
    mode.check(model.num_layers)
    device = device or next(model.parameters()).device
    model.eval()
    _check_workers(model, device, workers)
    if model.stateful:
        model.reset_states()
    with seen_words_kept(model, word_cache_bytes):
        return _embed_into(
            model, input_path, output_path, mode, batch_size, device, tokenize, progress, skip_empty_lines, workers
        )


def _embed_into(
    model: BiLM,
    input_path: str,
    output_path: str,
    mode: OutputMode,
    batch_size: int,
    device: torch.device,
    tokenize: Optional[Tokenizer],
    progress: bool,
    skip_empty_lines: bool,
    workers: int,
) -> EmbedResult:
    import h5py

    def embed_batch(batch: List[Line]) -> Tuple[List[Line], List[np.ndarray]]:
        layers = embed_sentences(model, [words for _, _, words in batch], device)
        return batch, [mode.apply(value).cpu().numpy() for value in layers]

    try:
        whole_output = WholeFile(output_path)
    except OSError as err:
        raise BilmError(write_failure(output_path, err.errno or 0) + _unchanged(output_path)) from None
    skipped: Optional[List[int]] = [] if skip_empty_lines else None
    raw: Optional[FirstWriteFailure] = None
    try:
        with whole_output as partial_path:
            with FirstWriteFailure(partial_path) as raw, h5py.File(raw, "w") as handle:
                lines = read_sentences(input_path, tokenize, skipped_empty_lines=skipped)
                batches = ordered_map(embed_batch, _batches(lines, batch_size, model.stateful), workers)
                sentences, tokens = _write_datasets(handle, batches, _progress_bar(input_path, progress), raw)
                if skipped is not None and raw.failure is None:
                    handle.create_dataset("skipped_empty_lines", data=np.array(skipped, dtype=np.int64))
            if raw.failure is not None:
                raise raw.failure  # the partial file is removed on the way out
    except (OSError, RuntimeError) as err:
        # after a dropped write HDF5 may fail on its own terms; the first failed write is the cause
        code = failed_write_errno(raw.failure if raw is not None and raw.failure is not None else err)
        if code is None:
            raise
        raise BilmError(write_failure(output_path, code) + _unchanged(output_path)) from None
    return EmbedResult(sentences, tokens, skipped or [])


def _unchanged(output_path: Union[str, Path]) -> str:
    """What a failed run left of ``output_path``: the partial file is gone, an earlier file untouched."""
    if os.path.exists(output_path):
        return f" ({output_path} keeps its earlier content)"
    return f" (nothing was written to {output_path})"


def _check_workers(model: BiLM, device: torch.device, workers: int) -> None:
    if workers > 1 and model.stateful:
        raise BilmError(
            "a stateful biLM embeds in one process (row r of a batch continues row r of the previous one): "
            "use one worker (--workers 1), or drop --stateful"
        )
    if workers > 1 and device.type != "cpu":
        raise BilmError("worker processes are for the CPU; on a GPU use one worker (--workers 1)")


def _write_datasets(
    handle: Any, batches: Iterable[Tuple[List[Line], List[np.ndarray]]], bar: Any, raw: FirstWriteFailure
) -> Tuple[int, int]:
    """One dataset per embedded line, then ``sentence_to_index`` (each distinct text's first line);
    returns the sentences and tokens written. Stops at the first failed write of ``raw``, the file under ``handle``."""
    sentences = tokens = 0
    index_of: Dict[str, str] = {}
    for batch, arrays in batches:
        if raw.failure is not None:
            break
        for (index, text, _), array in zip(batch, arrays, strict=True):
            handle.create_dataset(str(index), data=array)
            index_of.setdefault(text, str(index))
        batch_tokens = sum(len(words) for _, _, words in batch)
        sentences, tokens = sentences + len(batch), tokens + batch_tokens
        bar.update(batch_tokens)
    bar.close()
    if raw.failure is None:
        handle.create_dataset("sentence_to_index", data=[json.dumps(index_of)])
    return sentences, tokens


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
