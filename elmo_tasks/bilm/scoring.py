"""Exact perplexity of an exported biLM (options, weights, softmax, vocabulary) on text. No AllenNLP.

What ``bilm-perplexity`` runs (:mod:`elmo_tasks.bilm.perplexity`). It computes what ``allennlp
evaluate`` computes for a ``bilm_language_model`` archive (stateless sentences wrapped in
``<S>``/``</S>``, every word and the sentence end scored forward, every word and the sentence start
backward, the full softmax without its padding row), but from the exported files and several times
faster: sentences are sorted by length so batches carry little padding, character ids of each
distinct word are built once, and the softmax normaliser is computed in cache-sized blocks
(:mod:`elmo_tasks.bilm.exact_nll`; no log-softmax matrix).

It lives beside the biLM, outside ``elmo_tasks.tasks`` (whose ``__init__`` imports AllenNLP), so
that ``elmo-tasks bilm-perplexity`` starts without AllenNLP; ``elmo_tasks.tasks.lm.scoring``, its
old place, re-exports it.
"""

import logging
import math
import os
import zipfile
import zlib
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Protocol, Sequence, Tuple, TypedDict

import numpy as np
import torch

from elmo_tasks.bilm import BiLM, load_bilm
from elmo_tasks.bilm.characters import BOS_TOKEN, EOS_TOKEN, batch_to_ids
from elmo_tasks.bilm.errors import ScoringError
from elmo_tasks.bilm.exact_nll import exact_nll
from elmo_tasks.bilm.seen_words import seen_words_kept
from elmo_tasks.bilm.softmax_file import SOFTMAX_FILE
from elmo_tasks.bilm.workers import ordered_map

logger = logging.getLogger(__name__)

PADDING_TOKEN = "@@PADDING@@"
UNKNOWN_TOKEN = "@@UNKNOWN@@"
TARGET_NAMESPACE = "lm_targets"


class BatchScores(TypedDict):
    """One batch's summed NLLs per direction and its counts of scored and unknown targets."""

    forward: float
    backward: float
    tokens: int
    unknown: int


class ProgressBar(Protocol):
    """What :meth:`ExportedLanguageModel.score` needs of a progress bar (a ``tqdm`` has it)."""

    def update(self, n: int) -> object: ...


@dataclass
class PerplexityResult:
    forward_nll: float  # summed over scored tokens
    backward_nll: float
    tokens: int  # scored tokens per direction: every word plus one sentence boundary per sentence
    sentences: int
    unknown: int  # scored targets outside the vocabulary (scored as the unknown token)

    @property
    def forward(self) -> float:
        return math.exp(self.forward_nll / self.tokens)

    @property
    def backward(self) -> float:
        return math.exp(self.backward_nll / self.tokens)

    @property
    def mean(self) -> float:
        """``exp`` of the mean of both directions' mean NLLs (the training metric ``ppl_exact``)."""
        return math.exp(0.5 * (self.forward_nll + self.backward_nll) / self.tokens)

    def line(self) -> str:
        return (
            f"perplexity forward {self.forward:.3f} backward {self.backward:.3f} "
            f"mean {self.mean:.3f} tokens {self.tokens}"
        )


def read_vocabulary(path: str, namespace: str = TARGET_NAMESPACE) -> List[str]:
    """The softmax rows' tokens from an AllenNLP vocabulary folder (or its ``lm_targets.txt``).

    The namespace is padded as AllenNLP's are: row 0 is ``@@PADDING@@``, the file's lines follow.
    """
    if os.path.isdir(path):
        path = os.path.join(path, f"{namespace}.txt")
    if not os.path.isfile(path):
        raise ScoringError(
            f"vocabulary file not found: {path} (pass the vocabulary/ folder written beside "
            f"{SOFTMAX_FILE} by `allennlp export-bilm`, or its {namespace}.txt)"
        )
    with open(path, "rb") as handle:
        content = handle.read()
    try:
        lines = content.decode("utf-8").split("\n")
    except UnicodeDecodeError as err:
        line = content.count(b"\n", 0, err.start) + 1
        raise ScoringError(
            f"{path}, line {line}: bytes that are not UTF-8; expected the UTF-8 vocabulary that `allennlp "
            "export-bilm` writes, one token per line: copy it again or export it again"
        ) from None
    if lines and lines[-1] == "":
        lines.pop()
    return [PADDING_TOKEN] + lines


class ExportedLanguageModel:
    """The biLM and its softmax, loaded from exported files and checked against each other."""

    def __init__(self, options_file: str, weight_file: str, softmax_file: str, vocab_file: str) -> None:
        self.bilm: BiLM = load_bilm(options_file, weight_file).eval()
        if not os.path.isfile(softmax_file):
            raise ScoringError(
                f"softmax file not found: {softmax_file} (the {SOFTMAX_FILE} that "
                "`allennlp export-bilm` writes beside weights.hdf5 for a language model)"
            )
        try:
            with np.load(softmax_file) as data:
                weight, bias = data["weight"], data["bias"]
                softmax_tokens = [str(t) for t in data["tokens"]] if "tokens" in data else None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as err:
            reason = " ".join(f"{type(err).__name__}: {err}".split())
            raise ScoringError(
                f"{softmax_file} is not a whole softmax written by `allennlp export-bilm` ({reason}; "
                "arrays 'weight', 'bias', 'tokens' expected): copy it again or export it again"
            ) from None
        dim = self.bilm.options.projection_dim
        if weight.ndim != 2 or weight.shape[1] != dim:
            raise ScoringError(
                f"{softmax_file}: softmax weight has shape {tuple(weight.shape)}, but the biLM in {options_file} "
                f"has projection_dim {dim}, so rows of width {dim} are expected: this softmax belongs to "
                "another biLM; pass the softmax.npz exported together with these weights"
            )
        if bias.shape != (weight.shape[0],):
            raise ScoringError(f"{softmax_file}: bias has shape {tuple(bias.shape)}, expected ({weight.shape[0]},)")
        tokens = read_vocabulary(vocab_file)
        if len(tokens) != weight.shape[0]:
            raise ScoringError(
                f"the vocabulary {vocab_file} has {len(tokens)} entries (padding included) but the softmax "
                f"{softmax_file} has {weight.shape[0]} rows: pass the vocabulary exported with this softmax"
            )
        if softmax_tokens is not None and softmax_tokens != tokens:
            first = next(
                (i for i, (a, b) in enumerate(zip(softmax_tokens, tokens, strict=False)) if a != b),
                min(len(softmax_tokens), len(tokens)),
            )
            ours = repr(tokens[first]) if first < len(tokens) else "the end of the file"
            stored = repr(softmax_tokens[first]) if first < len(softmax_tokens) else "the end of the stored list"
            raise ScoringError(
                f"the vocabulary {vocab_file} differs from the tokens stored in {softmax_file} at row {first} "
                f"({ours} vs {stored}): pass the vocabulary exported with this softmax"
            )
        for needed in (BOS_TOKEN, EOS_TOKEN, UNKNOWN_TOKEN):
            if needed not in tokens:
                raise ScoringError(f"the vocabulary {vocab_file} lacks {needed}; it is not a biLM softmax vocabulary")
        self.index: Dict[str, int] = {token: i for i, token in enumerate(tokens)}
        self.unknown_index = self.index[UNKNOWN_TOKEN]
        # Row 0 (padding) is never predicted; dropping it equals masking its logit to -inf.
        padded = tokens[0] == PADDING_TOKEN
        start = 1 if padded else 0
        self.row_offset = start
        self.weight = torch.from_numpy(np.ascontiguousarray(weight[start:], dtype=np.float32))
        self.bias = torch.from_numpy(np.ascontiguousarray(bias[start:], dtype=np.float32))
        self.weight_t = self.weight.t().contiguous()  # (dim, vocab): vocabulary blocks are contiguous
        # The tokens it can predict: the softmax's rows less the padding row. The shipped biLM's softmax.npz
        # has 50,004 rows, padding and 50,003 tokens (50,000 words, <S>, </S> and the unknown token).
        self.vocabulary_size = int(self.weight.shape[0])

    def char_ids(self, sentences: Sequence[Sequence[str]]) -> torch.Tensor:
        """``(batch, 2 + longest, 50)`` character ids with ``<S>``/``</S>`` already added."""
        return batch_to_ids([[BOS_TOKEN, *sentence, EOS_TOKEN] for sentence in sentences])

    def target_ids(self, sentences: Sequence[Sequence[str]], width: int) -> torch.Tensor:
        """``(batch, width)`` softmax rows of ``<S> words </S>`` (unknown words -> the unknown row)."""
        targets = np.zeros((len(sentences), width), dtype=np.int64)
        for row, sentence in enumerate(sentences):
            targets[row, : len(sentence) + 2] = [
                self.index.get(w, self.unknown_index) for w in (BOS_TOKEN, *sentence, EOS_TOKEN)
            ]
        return torch.from_numpy(targets)

    def nll(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Exact NLL of each softmax row ``targets`` (with padding) given ``hidden`` ``(n, dim)``
        (:func:`~elmo_tasks.bilm.exact_nll.exact_nll`: cache-sized blocks of rows and words)."""
        return exact_nll(hidden, targets - self.row_offset, self.weight, self.weight_t, self.bias)

    @torch.no_grad()
    def score_batch(self, sentences: Sequence[Sequence[str]]) -> BatchScores:
        ids = self.char_ids(sentences)
        lengths = torch.tensor([len(s) + 2 for s in sentences])
        mask = torch.arange(ids.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
        top = self.bilm.layers_with_boundaries(ids, mask)[-1]
        targets = self.target_ids(sentences, ids.shape[1])
        p = self.bilm.options.projection_dim
        valid = mask[:, 1:]  # forward state at t predicts t+1; backward state at t predicts t-1
        forward = self.nll(top[:, :-1, :p][valid], targets[:, 1:][valid])
        backward = self.nll(top[:, 1:, p:][valid], targets[:, :-1][valid])
        unknown = int((targets[:, 1:-1][mask[:, 2:]] == self.unknown_index).sum())
        return {
            "forward": float(forward.double().sum()),
            "backward": float(backward.double().sum()),
            "tokens": int(valid.sum()),
            "unknown": unknown,
        }

    def _score_batch_with_size(self, sentences: Sequence[Sequence[str]]) -> Tuple[int, BatchScores]:
        return len(sentences), self.score_batch(sentences)

    def score(
        self,
        sentences: Iterable[Sequence[str]],
        batch_size: int = 64,
        progress: Optional[ProgressBar] = None,
        workers: int = 1,
        word_cache_bytes: int = 0,
    ) -> PerplexityResult:
        """Score every sentence (stateless, so batching and order do not change the result).

        ``workers`` processes of one thread each score the batches (:mod:`elmo_tasks.bilm.workers`);
        their sums are added in batch order, so the result does not depend on their number. Each keeps
        the vectors of the words it has encoded, up to ``word_cache_bytes`` (0: none; the command keeps
        64 MB; :mod:`elmo_tasks.bilm.seen_words`).
        """
        result = PerplexityResult(0.0, 0.0, 0, 0, 0)
        batches = _length_sorted_batches(sentences, batch_size)
        with seen_words_kept(self.bilm, word_cache_bytes):
            for batch_sentences, scored in ordered_map(self._score_batch_with_size, batches, workers):
                result.forward_nll += scored["forward"]
                result.backward_nll += scored["backward"]
                result.tokens += scored["tokens"]
                result.unknown += scored["unknown"]
                result.sentences += batch_sentences
                if progress is not None:
                    progress.update(scored["tokens"])
        if result.tokens == 0:
            raise ScoringError("no sentence to score")
        return result


def _length_sorted_batches(
    sentences: Iterable[Sequence[str]], batch_size: int, chunk_batches: int = 32
) -> Iterator[List[Sequence[str]]]:
    """Batches of similar length from consecutive chunks (memory stays bounded by the chunk)."""
    chunk: List[Sequence[str]] = []
    for sentence in sentences:
        chunk.append(sentence)
        if len(chunk) == batch_size * chunk_batches:
            yield from _split_sorted(chunk, batch_size)
            chunk = []
    if chunk:
        yield from _split_sorted(chunk, batch_size)


def _split_sorted(chunk: List[Sequence[str]], batch_size: int) -> Iterator[List[Sequence[str]]]:
    chunk.sort(key=len)
    for start in range(0, len(chunk), batch_size):
        yield chunk[start : start + batch_size]
