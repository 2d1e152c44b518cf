"""Continue training an exported biLM with the exact (full) softmax, in plain PyTorch.

The AllenNLP trainer (``experiments/bilm_small_continue.jsonnet``) is the recipe on CPUs, where
the softmax over 50k words must be sampled. On a GPU the full softmax costs little, and no
AllenNLP needs to be installed there: this module reads whitespace-tokenized sentences (the
corpus ``scripts/build_bilm_corpus.py`` writes), trains the biLM and its softmax for a wall-clock
budget with a learning rate that warms up and then decays to the budget's end, scores held-out
texts with the exact perplexity as it goes, and writes the same files ``allennlp export-bilm``
writes (``options.json``, ``weights.hdf5``, ``softmax.npz``). ``scripts/train_bilm_full_softmax.py``
is its command line.
"""

import json
import math
import os
import random
import time
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch.nn import functional as F

from elmo_tasks.bilm.characters import BOS_TOKEN, EOS_TOKEN, add_sentence_boundaries, word_to_character_ids
from elmo_tasks.bilm.errors import BilmError
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.softmax_file import SOFTMAX_FILE, read_softmax, write_softmax
from elmo_tasks.bilm.weights import export_bilm

PADDING_TOKEN = "@@PADDING@@"
UNKNOWN_TOKEN = "@@UNKNOWN@@"


@dataclass
class Softmax:
    """The output layer: ``weight`` ``(vocab, projection_dim)``, ``bias`` ``(vocab,)`` and each row's token."""

    weight: torch.nn.Parameter
    bias: torch.nn.Parameter
    tokens: List[str]

    @classmethod
    def load(cls, path: str) -> "Softmax":
        """A ``softmax.npz`` as ``allennlp export-bilm`` writes it (row 0 padding, row 1 unknown)."""
        weight, bias, tokens = read_softmax(path)
        if tokens[:2] != [PADDING_TOKEN, UNKNOWN_TOKEN] or BOS_TOKEN not in tokens or EOS_TOKEN not in tokens:
            raise BilmError(
                f"{path}: expected rows {PADDING_TOKEN}, {UNKNOWN_TOKEN} first and rows for {BOS_TOKEN} and "
                f"{EOS_TOKEN}; give the softmax.npz that `allennlp export-bilm` wrote for a language model"
            )
        return cls(torch.nn.Parameter(weight), torch.nn.Parameter(bias), tokens)

    def save(self, path: str, dtype: str = "float32") -> None:
        write_softmax(path, self.weight, self.bias, self.tokens, dtype)


class SentenceEncoder:
    """Whitespace-tokenized sentences to the model's inputs: character ids and softmax targets.

    Each distinct word is converted once (its character ids and its softmax row are cached).
    """

    def __init__(self, tokens: Sequence[str], max_sentence_length: int = 50) -> None:
        self.row_of = {token: row for row, token in enumerate(tokens)}
        self.unknown = self.row_of[UNKNOWN_TOKEN]
        self.bos, self.eos = self.row_of[BOS_TOKEN], self.row_of[EOS_TOKEN]
        self.max_sentence_length = max_sentence_length
        self._characters: Dict[str, np.ndarray] = {}

    def split(self, line: str) -> List[List[str]]:
        """The sentences of one corpus line: its tokens, cut into pieces of at most the maximum length."""
        words = line.split()
        step = self.max_sentence_length
        return [words[start : start + step] for start in range(0, len(words), step)]

    def encode(self, sentences: Sequence[Sequence[str]]) -> Tuple[torch.Tensor, torch.Tensor]:
        """``(char_ids (batch, tokens, 50), targets (batch, tokens + 2))``; targets carry <S> and </S>, 0 pads."""
        longest = max(len(sentence) for sentence in sentences)
        char_ids = np.zeros((len(sentences), longest, 50), dtype=np.int16)
        targets = np.zeros((len(sentences), longest + 2), dtype=np.int64)
        for row, sentence in enumerate(sentences):
            char_ids[row, : len(sentence)] = [self._character_ids(word) for word in sentence]
            targets[row, 0] = self.bos
            targets[row, 1 : len(sentence) + 1] = [self.row_of.get(word, self.unknown) for word in sentence]
            targets[row, len(sentence) + 1] = self.eos
        return torch.from_numpy(char_ids), torch.from_numpy(targets)

    def _character_ids(self, word: str) -> np.ndarray:
        ids = self._characters.get(word)
        if ids is None:
            ids = self._characters[word] = np.array(word_to_character_ids(word), dtype=np.int16)
        return ids


def lm_nll(
    bilm: BiLM,
    softmax: Softmax,
    char_ids: torch.Tensor,
    targets: torch.Tensor,
    top_dropout: Optional[torch.nn.Module] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Exact negative log-likelihoods ``(forward, backward)`` of every predicted token.

    The forward LM's state at position t predicts t+1, the backward LM's predicts t-1 (the
    boundary tokens included), over one softmax whose padding row is never predicted: the same
    quantity as the AllenNLP language model's evaluation loss.
    """
    ids, mask = add_sentence_boundaries(char_ids.long())
    if targets.shape != mask.shape or not torch.equal(targets > 0, mask):
        raise BilmError("targets must be each sentence's softmax rows with <S> and </S> around them, 0 as padding")
    top = bilm.layers_with_boundaries(ids, mask)[-1]
    if top_dropout is not None:
        top = top_dropout(top)
    p = bilm.options.projection_dim
    valid = mask[:, 1:]
    hidden = torch.cat([top[:, :-1, :p][valid], top[:, 1:, p:][valid]])
    wanted = torch.cat([targets[:, 1:][valid], targets[:, :-1][valid]])
    never = torch.full_like(softmax.bias[:1], float("-inf"))  # row 0 is padding
    nll = F.cross_entropy(
        F.linear(hidden, softmax.weight, torch.cat([never, softmax.bias[1:]])), wanted, reduction="none"
    )
    return nll.split([int(valid.sum())] * 2)


def batches(
    lines: Sequence[str], encoder: SentenceEncoder, batch_size: int, seed: int
) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
    """Endless shuffled batches of ``batch_size`` sentences, a new order each pass over ``lines``."""
    order = list(range(len(lines)))
    generator = random.Random(seed)
    while True:
        generator.shuffle(order)
        pending: List[List[str]] = []
        for index in order:
            pending.extend(encoder.split(lines[index]))
            while len(pending) >= batch_size:
                yield encoder.encode(pending[:batch_size])
                pending = pending[batch_size:]


class BatchStream(torch.utils.data.IterableDataset):
    """:func:`batches` split over DataLoader workers (each shuffles its own share of the lines)."""

    def __init__(self, lines: Sequence[str], encoder: SentenceEncoder, batch_size: int, seed: int) -> None:
        self.lines, self.encoder, self.batch_size, self.seed = lines, encoder, batch_size, seed

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        return batches(self.lines[worker::workers], self.encoder, self.batch_size, self.seed + worker)


def heldout_perplexity(
    bilm: BiLM, softmax: Softmax, encoder: SentenceEncoder, lines: Sequence[str], device: torch.device
) -> Dict[str, float]:
    """Exact forward, backward and mean perplexity (exp of the mean of the two mean NLLs) of ``lines``."""
    sentences = [piece for line in lines for piece in encoder.split(line)]
    sums = [0.0, 0.0]
    count = 0
    was_training = bilm.training
    bilm.eval()
    with torch.no_grad():
        for start in range(0, len(sentences), 256):
            char_ids, targets = encoder.encode(sentences[start : start + 256])
            fwd, bwd = lm_nll(bilm, softmax, char_ids.to(device), targets.to(device))
            sums[0] += float(fwd.double().sum())
            sums[1] += float(bwd.double().sum())
            count += int(fwd.numel())
    bilm.train(was_training)
    fwd_mean, bwd_mean = sums[0] / count, sums[1] / count
    return {
        "forward": math.exp(fwd_mean),
        "backward": math.exp(bwd_mean),
        "mean": math.exp(0.5 * (fwd_mean + bwd_mean)),
        "tokens": count,
    }


@dataclass
class Schedule:
    """Adam's learning rate: linear warm-up over ``warmup_steps``, then linear decay with the
    elapsed share of the wall-clock budget down to ``final_fraction`` of the peak at its end."""

    peak: float
    warmup_steps: int
    seconds: float
    final_fraction: float = 0.05

    def rate(self, step: int, elapsed: float) -> float:
        warm = min(1.0, (step + 1) / max(1, self.warmup_steps))
        decay = 1.0 - (1.0 - self.final_fraction) * min(1.0, elapsed / self.seconds)
        return self.peak * warm * decay


def export(bilm: BiLM, softmax: Softmax, directory: str, dtype: str = "float16") -> None:
    """``options.json`` + ``weights.hdf5`` + ``softmax.npz``, as ``allennlp export-bilm`` writes them."""
    export_bilm(bilm, directory, dtype=dtype)
    softmax.save(os.path.join(directory, SOFTMAX_FILE), dtype=dtype)


def train(
    bilm: BiLM,
    softmax: Softmax,
    stream: Iterator[Tuple[torch.Tensor, torch.Tensor]],
    schedule: Schedule,
    device: torch.device,
    evaluate: Callable[[], Dict[str, Dict[str, float]]],
    checkpoint: Callable[[], None],
    log: Callable[[Dict[str, object]], None],
    dropout: float = 0.1,
    grad_norm: float = 10.0,
    evaluate_every_seconds: float = 60.0,
) -> Dict[str, object]:
    """Train until ``schedule.seconds`` have passed; evaluate and checkpoint every
    ``evaluate_every_seconds`` and at the end. Returns the totals (steps, tokens, seconds)."""
    parameters = list(bilm.parameters()) + [softmax.weight, softmax.bias]
    optimizer = torch.optim.Adam(parameters, lr=schedule.peak)
    top_dropout = torch.nn.Dropout(dropout) if dropout > 0 else None
    bilm.train()
    started = time.perf_counter()
    last_evaluation = started
    step = tokens = 0
    window_loss, window_steps, window_tokens, window_start = 0.0, 0, 0, started
    while True:
        elapsed = time.perf_counter() - started
        if elapsed >= schedule.seconds:
            break
        char_ids, targets = next(stream)
        char_ids, targets = char_ids.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        for group in optimizer.param_groups:
            group["lr"] = schedule.rate(step, elapsed)
        fwd, bwd = lm_nll(bilm, softmax, char_ids, targets, top_dropout)
        loss = 0.5 * (fwd.mean() + bwd.mean())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, grad_norm)
        optimizer.step()
        step += 1
        tokens += int(fwd.numel())
        window_loss += float(loss.detach())
        window_steps += 1
        window_tokens += int(fwd.numel())
        now = time.perf_counter()
        if now - last_evaluation >= evaluate_every_seconds:
            log(
                {
                    "step": step,
                    "seconds": round(now - started, 1),
                    "tokens": tokens,
                    "lr": schedule.rate(step, now - started),
                    "train_loss": window_loss / window_steps,
                    "tokens_per_s": window_tokens / (now - window_start),
                    "heldout": evaluate(),
                }
            )
            checkpoint()
            window_loss, window_steps, window_tokens, window_start = 0.0, 0, 0, time.perf_counter()
            last_evaluation = time.perf_counter()
    seconds = time.perf_counter() - started
    final = {"step": step, "seconds": round(seconds, 1), "tokens": tokens, "heldout": evaluate(), "final": True}
    log(final)
    checkpoint()
    return final


def read_lines(path: str) -> List[str]:
    """Non-empty lines of a text file (``.xz`` files are decompressed)."""
    import lzma

    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line for line in handle.read().split("\n") if line.strip()]


def append_json_line(path: str, record: Dict[str, object]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
