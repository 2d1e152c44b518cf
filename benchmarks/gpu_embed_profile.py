"""Where the GPU time of ``elmo-embed`` goes: ours against AllenNLP's ``Elmo``, at the original size.

gpu_check.py's part (a) measures tokens/s at one batch size; this script says why the ratio is what it
is. For each implementation it prints, in one markdown table:

- tokens/s at several batch sizes (sentences sorted by length, as ``elmo-embed`` cuts them), float32
  with TF32 off: if throughput grows with the batch, the GPU was waiting on the host at the small one;
- for one pass at the first batch size under ``torch.profiler``: the wall time, the time the GPU spent
  in kernels (its busy share of the wall), the number of kernels launched, and the operators with the
  most GPU time.

    .venv/bin/python benchmarks/gpu_embed_profile.py                           # on the GPU
    .venv/bin/python benchmarks/gpu_embed_profile.py --device cpu --size tiny  # smoke run (tested)
"""

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check import embed_batches, read_sentences, write_random_bilm  # noqa: E402

Embed = Callable[[List[List[str]]], torch.Tensor]


def builders(files: Tuple[str, str], device: torch.device) -> Dict[str, Callable[[], Embed]]:
    """Each implementation's embedding of a batch, outputs copied to the host (what elmo-embed writes)."""

    def ours() -> Embed:
        from elmo_tasks.bilm import load_bilm
        from elmo_tasks.bilm.file_embedder import embed_sentences

        model = load_bilm(*files).to(device).eval()
        return lambda batch: torch.cat([value.cpu() for value in embed_sentences(model, batch, device)], dim=1)

    def allennlp() -> Embed:
        from allennlp.modules.elmo import Elmo, batch_to_ids

        model: Any = Elmo(*files, num_output_representations=1, dropout=0.0).to(device).eval()

        def mixed(batch: List[List[str]]) -> torch.Tensor:
            model._elmo_lstm._elmo_lstm.reset_states()  # stateless, like ours
            with torch.no_grad():
                return model(batch_to_ids(batch).to(device))["elmo_representations"][0].cpu()

        return mixed

    return {"ours": ours, "AllenNLP": allennlp}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def tokens_per_s(embed: Embed, batches: List[List[List[str]]], device: torch.device) -> float:
    embed(batches[-1])  # warm-up at the longest batch (allocator, cuDNN's algorithm choice)
    sync(device)
    start = time.perf_counter()
    for batch in batches:
        embed(batch)
    sync(device)
    return sum(len(words) for batch in batches for words in batch) / (time.perf_counter() - start)


def profile(embed: Embed, batches: List[List[List[str]]], device: torch.device, top: int) -> Dict[str, Any]:
    """One pass under the profiler: wall seconds, kernel seconds, kernels launched, the top operators."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    embed(batches[-1])
    sync(device)
    with torch_profile(activities=activities) as prof:
        start = time.perf_counter()
        for batch in batches:
            embed(batch)
        sync(device)
        wall = time.perf_counter() - start
    on_gpu = [event for event in prof.events() if event.device_type == torch.autograd.DeviceType.CUDA]
    kernel_us = sum(event.time_range.elapsed_us() for event in on_gpu)
    by_time: Counter = Counter()
    for average in prof.key_averages():
        if average.device_type != torch.autograd.DeviceType.CPU:
            continue  # the operators, each with the GPU time of the kernels it launched
        seconds = average.self_device_time_total if device.type == "cuda" else average.self_cpu_time_total
        by_time[average.key] += seconds / 1e6
    launches = len(on_gpu)
    return {"wall_s": wall, "kernel_s": kernel_us / 1e6, "launches": launches, "top": by_time.most_common(top)}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--size", choices=["original", "shipped", "tiny"], default="original")
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--batch-sizes", default="64,256,1024", help="the first is profiled")
    parser.add_argument("--top", type=int, default=8, help="operators listed per implementation")
    args = parser.parse_args(argv)
    import elmo_tasks.plugin  # noqa: F401

    device = torch.device(args.device)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False  # float32 as on a CPU
    sizes = [int(size) for size in args.batch_sizes.split(",")]
    sentences = read_sentences(args.sentences)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"elmo-embed profile on {name}: torch {torch.__version__}, --size {args.size}, {len(sentences)} sentences")
    lines = [
        "| ELMo | "
        + " | ".join(f"tokens/s at batch {size}" for size in sizes)
        + " | wall s | kernel s | GPU busy | kernels |"
    ]
    lines.append("|---" * (len(sizes) + 5) + "|")
    tops: Dict[str, List[Tuple[str, float]]] = {}
    with tempfile.TemporaryDirectory() as directory:
        files = write_random_bilm(args.size, directory)
        for label, build in builders(files, device).items():
            embed = build()
            rates = [tokens_per_s(embed, embed_batches(sentences, size), device) for size in sizes]
            found = profile(embed, embed_batches(sentences, sizes[0]), device, args.top)
            busy = found["kernel_s"] / found["wall_s"] if device.type == "cuda" else float("nan")
            cells = [f"{rate:,.0f}" for rate in rates]
            cells += [f"{found['wall_s']:.3f}", f"{found['kernel_s']:.3f}", f"{busy:.0%}", f"{found['launches']:,}"]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
            tops[label] = found["top"]
            del embed
            if device.type == "cuda":
                torch.cuda.empty_cache()
    print("\n".join(lines))
    for label, top in tops.items():
        where = "GPU" if device.type == "cuda" else "CPU"
        print(f"\n{label}: operators with the most {where} time (s, self) at batch {sizes[0]}")
        print("\n".join(f"  {seconds:8.4f}  {key}" for key, seconds in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
