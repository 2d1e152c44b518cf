#!/usr/bin/env python
"""Continue training an exported biLM with the exact softmax, for a wall-clock budget (a GPU's route).

Needs PyTorch, NumPy and h5py only (no AllenNLP), so it runs on a GPU machine that has nothing
else installed. It starts from a folder written by ``allennlp export-bilm`` (``options.json``,
``weights.hdf5`` and ``softmax.npz``, e.g. the shipped ``elmo_tasks/pretrained/bilm_small``),
trains on whitespace-tokenized sentences (``scripts/build_bilm_corpus.py`` writes them; ``.xz``
files are read too; name a file twice to read it twice as often), and writes the same files into
``--output`` after every evaluation, with ``training_log.jsonl`` (one line per evaluation: tokens,
training loss, learning rate, the held-out texts' exact perplexity).

It imports ``elmo_tasks`` as any script does: installed (``.venv/bin/python``), or, on a machine where the
checkout is only copied, with the checkout's root on ``PYTHONPATH``:

    PYTHONPATH=. python scripts/train_bilm_full_softmax.py --start elmo_tasks/pretrained/bilm_small \\
        --train runs/bilm_corpus/train.txt --heldout wiki_99=runs/wiki_99.tok.txt \\
        --output runs/bilm_stage5 --seconds 420 --device cuda

The model card of the shipped biLM says which stage was trained this way, with its exact command.
"""

import argparse
import json
import os
import sys
import time

import torch

from elmo_tasks.bilm.full_softmax_training import (
    BatchStream,
    Schedule,
    SentenceEncoder,
    Softmax,
    append_json_line,
    export,
    heldout_perplexity,
    read_lines,
    train,
)
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.softmax_file import SOFTMAX_FILE
from elmo_tasks.bilm.weights import load_weights


def _heldout(values):
    texts = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--heldout takes NAME=PATH, got {value!r}")
        texts[name] = path
    return texts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start", required=True, help="an export folder: options.json, weights.hdf5, softmax.npz")
    parser.add_argument("--train", action="append", required=True, help="sentences, one per line (repeatable)")
    parser.add_argument("--heldout", action="append", default=[], help="NAME=PATH of tokenized held-out text")
    parser.add_argument("--output", required=True)
    parser.add_argument("--seconds", type=float, required=True, help="training wall-clock budget")
    parser.add_argument("--batch-size", type=int, default=512, help="sentences per update")
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam's peak learning rate")
    parser.add_argument("--warmup-steps", type=int, default=300)
    parser.add_argument("--final-lr-fraction", type=float, default=0.05)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--evaluate-every", type=float, default=60.0, help="seconds between evaluations")
    parser.add_argument("--workers", type=int, default=4, help="DataLoader processes building batches")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="float16", choices=["float16", "float32"], help="of the written files")
    args = parser.parse_args(argv)

    begun = time.perf_counter()
    torch.manual_seed(args.seed)
    torch.set_float32_matmul_precision("high")  # TF32 products on GPUs that have them
    device = torch.device(args.device)
    options = BilmOptions.from_file(os.path.join(args.start, "options.json"))
    bilm = BiLM(options, dropout=args.dropout)
    load_weights(bilm, os.path.join(args.start, "weights.hdf5"))
    softmax = Softmax.load(os.path.join(args.start, SOFTMAX_FILE))
    bilm.to(device)
    softmax.weight.data = softmax.weight.data.to(device)
    softmax.bias.data = softmax.bias.data.to(device)
    encoder = SentenceEncoder(softmax.tokens)
    lines = [line for path in args.train for line in read_lines(path)]
    heldout = {name: read_lines(path) for name, path in _heldout(args.heldout).items()}
    os.makedirs(args.output, exist_ok=True)
    log_path = os.path.join(args.output, "training_log.jsonl")

    def evaluate():
        return {name: heldout_perplexity(bilm, softmax, encoder, text, device) for name, text in heldout.items()}

    def log(record):
        append_json_line(log_path, record)
        print(json.dumps(record), flush=True)

    log(
        {
            "start": args.start,
            "train_lines": len(lines),
            "device": str(device),
            "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
            "settings": {k: v for k, v in vars(args).items() if k not in ("start",)},
            "loading_seconds": round(time.perf_counter() - begun, 1),
            "heldout": evaluate(),
            "step": 0,
        }
    )
    loader = torch.utils.data.DataLoader(
        BatchStream(lines, encoder, args.batch_size, args.seed),
        batch_size=None,
        num_workers=args.workers,
        pin_memory=device.type == "cuda",
        prefetch_factor=8 if args.workers else None,
    )
    schedule = Schedule(args.lr, args.warmup_steps, args.seconds, args.final_lr_fraction)
    train(
        bilm,
        softmax,
        iter(loader),
        schedule,
        device,
        evaluate,
        lambda: export(bilm, softmax, args.output, args.dtype),
        log,
        dropout=args.dropout,
        evaluate_every_seconds=args.evaluate_every,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
