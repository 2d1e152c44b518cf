"""The README's main job under the thread policy, alone and beside one busy process.

Runs ``allennlp train experiments/snli_elmo.jsonnet`` (the README's main job) in a fresh process
for each setting, back to back, and prints its wall time and CPU seconds:

- ``policy``: as a user runs it (no ``OMP_NUM_THREADS``; our plugin sets one thread);
- ``torch-default``: ``OMP_NUM_THREADS`` set to the core count, which is torch's own default
  and what the plugin did not change before the thread policy.

Each setting runs alone and then beside ``--competitors`` busy-looping processes (another
user's CPU job). The ratio "beside / alone" is what the policy is for.

    .venv/bin/python benchmarks/thread_policy.py                                 # the whole main job
    .venv/bin/python benchmarks/thread_policy.py --epochs 1 --settings torch-default
"""

import argparse
import json
import os
import resource
import subprocess
import tempfile
import time
from typing import Any, Dict, Optional

from bench_files import ALLENNLP, ROOT, environment_without_thread_settings, report_rows  # noqa: E402
from embed_threads import busy_processes  # noqa: E402  (the same busy-looping competitors)


def environment(setting: str) -> Dict[str, str]:
    env = environment_without_thread_settings()
    if setting == "torch-default":
        env["OMP_NUM_THREADS"] = str(os.cpu_count())
    return env


def train_once(setting: str, epochs: Optional[int]) -> Dict[str, float]:
    """Wall and CPU seconds (the child's user + system) of one training run, and its best accuracy."""
    with tempfile.TemporaryDirectory() as directory:
        command = [ALLENNLP, "train", "experiments/snli_elmo.jsonnet", "-s", os.path.join(directory, "run")]
        if epochs is not None:
            command += ["-o", json.dumps({"trainer.num_epochs": epochs})]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, env=environment(setting), check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(os.path.join(directory, "run", "metrics.json")) as handle:
            metrics = json.load(handle)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "best_validation_accuracy": metrics["best_validation_accuracy"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--settings", default="policy,torch-default", help="comma-separated: policy, torch-default")
    parser.add_argument("--epochs", type=int, help="override the config's epochs (default: the main job as written)")
    parser.add_argument("--competitors", type=int, default=1, help="busy-looping processes in the loaded runs")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    settings = args.settings.split(",")
    report_rows((_alone_and_beside_busy(s, args.epochs, args.competitors) for s in settings), _described, args.json)


def _alone_and_beside_busy(setting: str, epochs: Optional[int], competitors: int) -> Dict[str, Any]:
    alone = train_once(setting, epochs)
    with busy_processes(competitors):
        loaded = train_once(setting, epochs)
    ratio = loaded["wall_s"] / alone["wall_s"]
    return {"setting": setting, "competitors": competitors, "alone": alone, "beside_busy": loaded, "ratio": ratio}


def _described(row: Dict[str, Any]) -> str:
    alone, loaded = row["alone"], row["beside_busy"]
    return (
        f"{row['setting']:14s} alone {alone['wall_s']:7.1f} s wall ({alone['cpu_s']:7.1f} CPU s)  "
        f"beside {row['competitors']} busy {loaded['wall_s']:7.1f} s wall ({loaded['cpu_s']:7.1f} CPU s)  "
        f"ratio {row['ratio']:.2f}  best acc {alone['best_validation_accuracy']:.4f} / "
        f"{loaded['best_validation_accuracy']:.4f}"
    )


if __name__ == "__main__":
    main()
