"""The character CNN's length groups against one group as wide as a batch's longest word, back to back.

The shipped small biLM (whose CNN has the original's 2,048 filters) embeds the first ``--sentences``
sentences of a whitespace-tokenized file in batches of 64, as ``elmo-embed`` batches them, with the
groups and with them switched off, alternated ``--rounds`` times in one process on one thread. It
prints CPU seconds for the token encoder alone and for the whole biLM forward pass, their ratios, and
the largest difference between the two outputs (float rounding: the convolutions may add up in
another order for a group's shape).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/char_cnn_groups.py --sentences 1500 --rounds 3
"""

import argparse
import time
from contextlib import contextmanager
from typing import Callable, Iterator, List

import torch
from bench_files import add_alternation_options

from elmo_tasks.bilm import token_encoder
from elmo_tasks.bilm.characters import batch_to_ids
from elmo_tasks.bilm.weights import load_bilm
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE


@contextmanager
def one_group() -> Iterator[None]:
    """The encoder as before the groups: no split is ever cheap enough."""
    chosen = token_encoder.cheapest_length_split
    token_encoder.cheapest_length_split = lambda *_: None
    try:
        yield
    finally:
        token_encoder.cheapest_length_split = chosen


def cpu_seconds(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_alternation_options(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = load_bilm(SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE).eval()
    with open(args.data, encoding="utf-8") as lines:
        sentences = [line.split() for line in lines if line.strip()][: args.sentences]
    batches = [batch_to_ids(sentences[start : start + 64]) for start in range(0, len(sentences), 64)]
    print(f"{len(sentences)} sentences, {sum(map(len, sentences))} tokens, {len(batches)} batches of 64")

    def encoder_pass() -> List[torch.Tensor]:
        return [model.token_encoder(ids, (ids > 0).any(dim=-1)) for ids in batches]

    def bilm_pass() -> List[torch.Tensor]:
        return [torch.stack(model(ids).layers) for ids in batches]

    with torch.no_grad():
        with one_group():
            plain = bilm_pass()
        difference = max((a - b).abs().max().item() for a, b in zip(plain, bilm_pass(), strict=True))
        for round_ in range(1, args.rounds + 1):
            with one_group():
                encoder_before, bilm_before = cpu_seconds(encoder_pass), cpu_seconds(bilm_pass)
            encoder_after, bilm_after = cpu_seconds(encoder_pass), cpu_seconds(bilm_pass)
            print(
                f"round {round_}: token encoder {encoder_before:.2f} -> {encoder_after:.2f} CPU s "
                f"({encoder_before / encoder_after:.2f}x); biLM forward {bilm_before:.2f} -> {bilm_after:.2f} CPU s "
                f"({bilm_before / bilm_after:.2f}x)"
            )
    print(f"largest difference of the biLM's layers, groups against one group: {difference:.1e}")


if __name__ == "__main__":
    main()
