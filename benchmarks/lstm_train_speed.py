"""Training throughput of our biLM's LSTM stack against ``torch.nn.LSTM(proj_size=...)``.

Both run forward + backward + an SGD update over the same random batches (2 layers, both
directions, ``dim`` cells projected to ``projection_dim``) on the CPU. ``torch.nn.LSTM`` is the
fused built-in, which cannot clip cells or projections; ours clips like the original. Prints
tokens/s of both and their ratio, back to back in one process.

    .venv/bin/python benchmarks/lstm_train_speed.py --sizes small,tiny
"""

import argparse
import time
from typing import Callable, Dict, List, Tuple

import torch

from elmo_tasks.bilm import BiLM, BilmOptions
from elmo_tasks.bilm.packing import packed_layout

SIZES: Dict[str, Tuple[int, int]] = {
    "tiny": (256, 64),
    "small": (1024, 128),
    "medium": (2048, 256),
    "original": (4096, 512),
}


def batches(
    count: int, batch_size: int, max_len: int, dim: int, seed: int = 0
) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        lengths = torch.randint(max_len // 3, max_len + 1, (batch_size,), generator=generator)
        mask = torch.arange(max_len).unsqueeze(0) < lengths.unsqueeze(1)
        out.append((torch.randn(batch_size, max_len, dim, generator=generator) * mask.unsqueeze(-1), mask))
    return out


def ours_step(dim: int, proj: int) -> Tuple[torch.nn.Module, Callable]:
    options = BilmOptions(dim=dim, projection_dim=proj, n_layers=2, filters=[(1, 4)], n_highway=0, char_embedding_dim=4)
    model = BiLM(options)

    def step(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        layout = packed_layout(mask)
        outputs = model._run_lstms(x, layout)  # the contextual layers alone, as the LM trains them
        return outputs[-1].pow(2).mean()

    return model, step


def torch_step(dim: int, proj: int) -> Tuple[torch.nn.Module, Callable]:
    model = torch.nn.LSTM(proj, dim, num_layers=2, bidirectional=True, proj_size=proj, batch_first=True)

    def step(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, mask.sum(1), batch_first=True, enforce_sorted=False)
        output, _ = model(packed)
        return output.data.pow(2).mean()

    return model, step


def measure(factory: Callable, size: Tuple[int, int], data, warmup: int = 2) -> float:
    model, step = factory(*size)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    tokens = 0
    for i, (x, mask) in enumerate(data):
        if i == warmup:
            start, tokens = time.perf_counter(), 0
        optimizer.zero_grad()
        step(x, mask).backward()
        optimizer.step()
        tokens += int(mask.sum())
    return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="small")
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-len", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.sizes.split(","):
        dim, proj = SIZES[name]
        data = batches(args.batches, args.batch_size, args.max_len, proj)
        theirs = measure(torch_step, (dim, proj), data)
        ours = measure(ours_step, (dim, proj), data)
        print(
            f"{name:8s} dim={dim} proj={proj}  torch.nn.LSTM {theirs:8.0f} tok/s  ours {ours:8.0f} "
            f"tok/s  ratio {ours / theirs:.2f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
