#!/usr/bin/env python
"""Held-out perplexity of every checkpoint of a biLM training run: a JSON table and a PNG plot.

For each ``model_state_e<N>.th`` in ``--states`` (default: the run's serialization directory;
a folder of hard links keeps checkpoints the trainer has already deleted), the checkpoint is
exported to the original format with ``allennlp export-bilm --weights-file`` and every held-out
text is scored with ``allennlp bilm-perplexity`` (exact softmax). Tokens seen come from the
run's ``metrics_epoch_<N>.json`` (each epoch's training tokens/s x its time, summed).
Results already in ``--output`` are reused, so the script can be re-run as the run goes on.
A run that continues an earlier one gives ``--tokens-before`` (the tokens the earlier stages saw,
added to this run's count) and ``--earlier`` (their curve files, drawn in the same plot).
A run of ``scripts/train_bilm_full_softmax.py`` scores its held-out texts while it trains: give its
``training_log.jsonl`` as ``--training-log`` (and its output folder as ``run_dir``) to take the
curve from the log instead of scoring checkpoints.

    python scripts/bilm_learning_curve.py runs/bilm_v2 --states runs/bilm_v2_states \\
        --heldout wiki_99=$ELMO_TASKS_SHARED_DATA/lm/wikipedia/wiki_99.txt --heldout news300=runs/news300.txt \\
        --baseline wiki_99=1121.5 --baseline news300=436.2 \\
        --output runs/bilm_v2_curve.json --plot elmo_tasks/pretrained/bilm_small/learning_curve.png
    python scripts/bilm_learning_curve.py runs/bilm_v3 --states runs/bilm_v3_states ... \\
        --tokens-before 2811236 --earlier runs/bilm_v2_curve.json \\
        --baseline news300=436.2 --baseline-label "first shipped biLM (stage 1)" \\
        --output runs/bilm_v3_curve.json --plot ...
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

from elmo_tasks.counted_nouns import counted

ROOT = Path(__file__).resolve().parent.parent
ALLENNLP = str(ROOT / ".venv" / "bin" / "allennlp")
LAST_LINE = re.compile(r"perplexity forward (\S+) backward (\S+) mean (\S+) tokens (\d+)")


def _pairs(values: List[str], what: str) -> Dict[str, str]:
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep:
            sys.exit(f"{what} takes NAME=VALUE, got {value!r}")
        out[name] = rest
    return out


def _seconds(duration: str) -> float:
    hours, minutes, seconds = (float(x) for x in duration.split(":"))
    return 3600 * hours + 60 * minutes + seconds


def tokens_seen(run_dir: Path, epochs_completed: int) -> int:
    """Training tokens in the first ``epochs_completed`` epochs, from the run's per-epoch metrics:
    the epoch's token count (``training_tokens_sampled``, summed over all workers) where the run
    logged it, else its tokens/s x its time (AllenNLP's ``training_duration`` is cumulative)."""
    total, previous = 0.0, 0.0
    for e in range(epochs_completed):
        path = run_dir / f"metrics_epoch_{e}.json"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: tokens seen cannot be counted")
        metrics = json.loads(path.read_text())
        elapsed = _seconds(metrics["training_duration"])
        if "training_tokens_sampled" in metrics:
            total += metrics["training_tokens_sampled"]
        else:
            total += metrics["training_tokens_per_s"] * (elapsed - previous)
        previous = elapsed
    return int(total)


def perplexity(export_dir: str, text: str, threads: int) -> Dict[str, float]:
    command = [
        ALLENNLP,
        "bilm-perplexity",
        text,
        "--options-file",
        f"{export_dir}/options.json",
        "--weight-file",
        f"{export_dir}/weights.hdf5",
        "--softmax-file",
        f"{export_dir}/softmax.npz",
        "--vocab-file",
        f"{export_dir}/vocabulary/lm_targets.txt",
        "--threads",
        str(threads),
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    lines = [line for line in result.stdout.splitlines() if LAST_LINE.search(line)]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr[-2000:]}")
    fwd, bwd, mean, tokens = LAST_LINE.search(lines[-1]).groups()
    return {"forward": float(fwd), "backward": float(bwd), "mean": float(mean), "tokens": int(tokens)}


def curve_from_training_log(path: Path, tokens_before: int) -> List[Dict]:
    """The evaluations a full-softmax run logged (step 0 is the starting biLM), as curve points."""
    curve = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "heldout" not in record:
            continue
        curve.append(
            {
                "checkpoint": f"step {record['step']}" + (" (final)" if record.get("final") else ""),
                "perplexity": record["heldout"],
                "tokens_seen_in_run": record.get("tokens", 0),
                "tokens_seen": tokens_before + record.get("tokens", 0),
            }
        )
    return curve


def plot(
    curve: List[Dict], baselines: Dict[str, float], path: str, stage_starts: List[int], baseline_label: str
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.5, 4))
    names = sorted({name for point in curve for name in point["perplexity"]})
    for name in names:
        points = [(p["tokens_seen"] / 1e6, p["perplexity"][name]["mean"]) for p in curve if name in p["perplexity"]]
        (line,) = axes.plot(*zip(*points, strict=True), marker="o", label=f"{name}")
        if name in baselines:
            axes.axhline(
                baselines[name],
                color=line.get_color(),
                linestyle="--",
                linewidth=1,
                label=f"{name}: {baseline_label}",
            )
    for start in stage_starts:
        axes.axvline(start / 1e6, color="grey", linestyle=":", linewidth=1)
    if stage_starts:
        axes.text(stage_starts[-1] / 1e6, axes.get_ylim()[1], " this run", va="top", fontsize=8, color="grey")
    axes.set_xlabel(
        "training tokens seen (millions)" if stage_starts else "training tokens seen in this run (millions)"
    )
    axes.set_ylabel("held-out perplexity (mean of fwd/bwd, exact)")
    axes.set_yscale("log")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def plot_after_earlier_stages(args: argparse.Namespace, curve: List[Dict], baselines: Dict[str, float]) -> None:
    """Plot ``curve`` after the curves of ``--earlier`` stages, with the ``baselines`` lines."""
    earlier = [point for path in args.earlier for point in json.loads(Path(path).read_text())]
    stage_starts = [args.tokens_before] if args.earlier else []
    plot(earlier + curve, baselines, args.plot, stage_starts, args.baseline_label)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir")
    parser.add_argument("--states", help="folder of model_state_e<N>.th files (default: run_dir)")
    parser.add_argument("--heldout", action="append", default=[], help="NAME=TEXT_FILE (repeatable)")
    parser.add_argument("--baseline", action="append", default=[], help="NAME=PERPLEXITY drawn as a line")
    parser.add_argument("--baseline-label", default="previous shipped biLM", help="what the --baseline lines are")
    parser.add_argument("--every", type=int, default=1, help="score every N-th checkpoint (and the last)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", required=True)
    parser.add_argument("--plot")
    parser.add_argument("--tokens-before", type=int, default=0, help="tokens seen by the stages this run continues")
    parser.add_argument("--earlier", action="append", default=[], help="curve JSON of an earlier stage (repeatable)")
    parser.add_argument("--training-log", help="training_log.jsonl of scripts/train_bilm_full_softmax.py")
    args = parser.parse_args(argv)
    baselines = {k: float(v) for k, v in _pairs(args.baseline, "--baseline").items()}
    if args.training_log:
        curve = curve_from_training_log(Path(args.training_log), args.tokens_before)
        Path(args.output).write_text(json.dumps(curve, indent=2))
        if args.plot:
            plot_after_earlier_stages(args, curve, baselines)
        print(f"bilm_learning_curve: {counted(len(curve), 'evaluation')} from {args.training_log} -> {args.output}")
        return 0

    run_dir = Path(args.run_dir)
    heldout = _pairs(args.heldout, "--heldout")
    states = sorted(
        Path(args.states or run_dir).glob("model_state_e*.th"),
        key=lambda p: int(re.search(r"_e(\d+)", p.name).group(1)),
    )
    done = (
        {p["checkpoint"]: p for p in json.loads(Path(args.output).read_text())} if os.path.exists(args.output) else {}
    )
    chosen = [s for i, s in enumerate(states) if i % args.every == args.every - 1 or s == states[-1]]
    curve = []
    for state in chosen:
        # AllenNLP names a checkpoint by the number of epochs completed
        epochs_completed = int(re.search(r"_e(\d+)", state.name).group(1))
        point = done.get(state.name, {"checkpoint": state.name, "epochs_completed": epochs_completed, "perplexity": {}})
        missing = [n for n in heldout if n not in point["perplexity"]]
        point["tokens_seen_in_run"] = tokens_seen(run_dir, epochs_completed)
        point["tokens_seen"] = args.tokens_before + point["tokens_seen_in_run"]
        if missing:
            with tempfile.TemporaryDirectory() as export_dir:
                subprocess.run(
                    [ALLENNLP, "export-bilm", str(run_dir), export_dir, "--weights-file", str(state)],
                    check=True,
                    capture_output=True,
                    cwd=ROOT,
                )
                for name in missing:
                    point["perplexity"][name] = perplexity(export_dir, heldout[name], args.threads)
                    print(f"{state.name}: {name} {point['perplexity'][name]}", file=sys.stderr)
        curve.append(point)
        Path(args.output).write_text(json.dumps(curve, indent=2))
    if args.plot and curve:
        plot_after_earlier_stages(args, curve, baselines)
    scored = f"{counted(len(curve), 'checkpoint')} scored on {counted(len(heldout), 'held-out text')}"
    print(f"bilm_learning_curve: {scored} -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
