"""Character ids of a batch: ``batch_to_ids`` against building them word by word, back to back.

Until 2026-12-01 ``elmo_tasks.bilm.batch_to_ids`` made a tensor of each sentence from Python lists,
one word at a time; it now fills one array from a cache of each word's ids. This prints the
milliseconds per batch of both (the word-by-word way is kept here as the baseline) on the bundled
LM fixture's sentences, in batches sorted by length as ``elmo-embed`` cuts them, and checks that
both give the same ids. On a GPU these milliseconds are host time the device waits through.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/char_ids_speed.py
"""

import argparse
import time
from typing import Callable, List, Sequence

import torch
from gpu_check import embed_batches, read_sentences

from elmo_tasks.bilm.characters import MAX_CHARACTERS_PER_TOKEN, batch_to_ids, word_to_character_ids

Batch = Sequence[Sequence[str]]


def word_by_word(sentences: Batch) -> torch.Tensor:
    """The previous construction: one Python list per word, one tensor per sentence."""
    longest = max(len(sentence) for sentence in sentences)
    ids = torch.zeros(len(sentences), longest, MAX_CHARACTERS_PER_TOKEN, dtype=torch.long)
    for row, sentence in enumerate(sentences):
        ids[row, : len(sentence)] = torch.tensor([word_to_character_ids(word) for word in sentence])
    return ids


def ms_per_batch(build: Callable[[Batch], torch.Tensor], batches: List[List[List[str]]], rounds: int) -> float:
    timings = []
    for _ in range(rounds):
        start = time.perf_counter()
        for batch in batches:
            build(batch)
        timings.append((time.perf_counter() - start) / len(batches) * 1e3)
    return sorted(timings)[len(timings) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5, help="passes over the sentences; the median is printed")
    args = parser.parse_args()
    batches = embed_batches(read_sentences(400), args.batch_size)
    for batch in batches:
        if not torch.equal(word_by_word(batch), batch_to_ids(batch)):
            raise SystemExit("batch_to_ids differs from the word-by-word ids")
    before = ms_per_batch(word_by_word, batches, args.rounds)
    after = ms_per_batch(batch_to_ids, batches, args.rounds)
    words = sum(len(sentence) for batch in batches for sentence in batch)
    print(f"{len(batches)} batches of up to {args.batch_size} sentences ({words:,} words), median of {args.rounds}")
    print(f"word by word:  {before:7.2f} ms per batch")
    print(f"batch_to_ids:  {after:7.2f} ms per batch  ({before / after:.1f}x)")


if __name__ == "__main__":
    main()
