#!/usr/bin/env python
"""Reproduce a benchmark of Peters et al. (2018): baseline vs. ELMo, several seeds, one table.

For a task named in TASKS below, every variant (baseline, elmo) is trained for each seed with
``allennlp train`` into ``runs/<task>/<variant>/seed<k>`` (ELMO_TASKS_SEED = seed_base + k),
then ``allennlp evaluate`` scores the archive on the task's test file. The test metric and
wall times go to ``runs/<task>/results.json`` and to a table in docs/RESULTS.md next to the
paper's numbers (Peters et al. 2018, Table 1; see docs/PAPER.md), with the exact commands.
The test file is the one the task's libsonnet names as ``data.test`` for the chosen data mode.
A run whose archive and test metrics already exist is reused, so an interrupted reproduction can
simply be restarted.

    .venv/bin/python scripts/reproduce.py snli --seeds 5             # the real thing (hours)
    .venv/bin/python scripts/reproduce.py snli --seeds 1 --data fixtures --epochs 1 \\
        --runs-dir /tmp/runs --results /tmp/RESULTS.md                # smoke test (minutes)

To add a task: add an entry to TASKS (its libsonnet, configs per variant, the metric key of
`allennlp evaluate`, a scale to percent, and the paper's numbers).
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
# The allennlp beside this Python (.venv/bin/allennlp when run as the docstring shows).
ALLENNLP = str(Path(sys.executable).parent / "allennlp")

# The test file of each task is `(import '<libsonnet>').data.test`, evaluated like allennlp does.
TASKS: Dict[str, Dict[str, Any]] = {
    "snli": {
        "title": "SNLI (ESIM), test accuracy",
        "libsonnet": "experiments/snli.libsonnet",
        "configs": {"baseline": "experiments/snli_baseline.jsonnet", "elmo": "experiments/snli_elmo.jsonnet"},
        "metric": "accuracy",
        "scale": 100.0,
        "paper": {"baseline": "88.0", "elmo": "88.7 ± 0.17"},
        "note": "Trained on SNLI dev minus a held-out tenth (model selection on that tenth); the full "
        "SNLI training set was not available, so absolute numbers are not comparable with the paper's.",
    },
    "ner": {
        "title": "CoNLL-2003 NER (BiLSTM-CRF), eng.testb span F1",
        "libsonnet": "experiments/ner.libsonnet",
        "configs": {"baseline": "experiments/ner_baseline.jsonnet", "elmo": "experiments/ner_elmo.jsonnet"},
        "metric": "f1-measure-overall",
        "scale": 100.0,
        "paper": {"baseline": "90.15", "elmo": "92.22 ± 0.10"},
        "note": "Trained on eng.train, model selection on eng.testa; no pretrained word vectors (GloVe is not "
        "available here) and fewer epochs than the paper (see experiments/ner.libsonnet).",
    },
    "sst5": {
        "title": "SST-5 (biattentive classification network), test root accuracy",
        "libsonnet": "experiments/sst5.libsonnet",
        "configs": {"baseline": "experiments/sst5_baseline.jsonnet", "elmo": "experiments/sst5_elmo.jsonnet"},
        "metric": "accuracy",
        "scale": 100.0,
        "paper": {"baseline": "51.4", "elmo": "54.7 ± 0.5"},
        "note": "Selected on dev roots; no GloVe (trainable embeddings) and smaller/shorter training than "
        "the paper (see experiments/sst5.libsonnet). The config trains on all distinct phrases of "
        "train.txt, as the paper did; `dataset_reader.phrases: roots` below means sentences only.",
    },
    "srl": {
        "title": "SRL (He et al. 2017), srl-eval F1 on CoNLL-2005 test WSJ "
        "(ELMO_TASKS_SRL_DATASET=conll2012: CoNLL-2012 test)",
        "libsonnet": "experiments/srl.libsonnet",
        "configs": {"baseline": "experiments/srl_baseline.jsonnet", "elmo": "experiments/srl_elmo.jsonnet"},
        "metric": "f1-measure-overall",
        "scale": 100.0,
        "paper": {"baseline": "81.4 (CoNLL-2012)", "elmo": "84.6 (CoNLL-2012)"},
        "note": "The paper reports CoNLL-2012; CoNLL-2012 here trains on its dev set split by document (its training "
        "split is not available). No GloVe and fewer epochs than the paper (see experiments/srl.libsonnet).",
    },
    "squad": {
        "title": "SQuAD v1.1 (BiDAF + self-attention), XQuAD English, test fold ELMO_TASKS_FOLD (default 1/4), F1",
        "libsonnet": "experiments/squad.libsonnet",
        "configs": {"baseline": "experiments/squad_baseline.jsonnet", "elmo": "experiments/squad_elmo.jsonnet"},
        "metric": "f1",
        "scale": 100.0,
        "paper": {"baseline": "81.1", "elmo": "85.8"},
        "note": "Cross-validation by article over the 1,190 XQuAD English questions (SQuAD v1.1 dev): about 600 "
        "training questions instead of about 87,600 and one gold answer instead of three, no GloVe; absolute "
        "numbers are not comparable with the paper's. One fold per invocation (ELMO_TASKS_FOLD=K/4).",
    },
    "coref": {
        "title": "CoNLL-2012 coreference (Lee et al. 2017), test average F1 of MUC, B-cubed, CEAF-phi4",
        "libsonnet": "experiments/coref.libsonnet",
        "configs": {"baseline": "experiments/coref_baseline.jsonnet", "elmo": "experiments/coref_elmo.jsonnet"},
        "metric": "coref_f1",
        "scale": 100.0,
        "paper": {"baseline": "67.2", "elmo": "70.4"},
        "note": "Trained on CoNLL-2012 dev minus a held-out tenth of its documents (model selection there): 343 "
        "instead of 2,802 training documents, no GloVe, K = 50 antecedents and far fewer steps, so absolute "
        "numbers are not comparable with the paper's (see experiments/coref.libsonnet).",
    },
}


# Set in the caller's environment, these change a run, so the recorded commands show them.
PASSED_ON = ("ELMO_OPTIONS", "ELMO_WEIGHTS", "OMP_NUM_THREADS", "ELMO_TASKS_SRL_DATASET", "ELMO_TASKS_FOLD")


def _env(data: str, seed: int) -> Dict[str, str]:
    passed = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    return {**passed, "ELMO_TASKS_DATA": data, "ELMO_TASKS_SEED": str(seed)}


def test_path(task: str, env: Dict[str, str]) -> str:
    """The task's test file: ``data.test`` of its libsonnet, with every environment variable as an
    external variable (as allennlp passes them), the run's settings in ``env`` and, for variables
    still unset, the plugin's defaults (elmo_tasks/config_defaults.py)."""
    import _jsonnet

    from elmo_tasks.config_defaults import DEFAULTS

    ext_vars = {**DEFAULTS, **os.environ, **env}
    snippet = f"(import '{TASKS[task]['libsonnet']}').data.test"
    return json.loads(_jsonnet.evaluate_snippet("reproduce.py", snippet, ext_vars=ext_vars, jpathdir=[str(ROOT)]))


def _shown(env: Dict[str, str], command: List[str]) -> str:
    """The command as one shell line a reader can paste (run from the repo root)."""
    prefix = " ".join(f"{key}={value}" for key, value in env.items())
    shown = [".venv/bin/allennlp" if part == ALLENNLP else part.replace(f"{ROOT}/", "") for part in command]
    return f"{prefix} {shlex.join(shown)}"


def _run(env: Dict[str, str], command: List[str], log: Path) -> float:
    """Runs one command from the repo root, output to ``log``; returns its wall time in seconds."""
    print(f"$ {_shown(env, command)}", flush=True)
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as handle:
        result = subprocess.run(
            command, cwd=ROOT, env={**os.environ, **env}, stdout=handle, stderr=subprocess.STDOUT, check=False
        )
    if result.returncode != 0:
        sys.exit(f"command failed (exit {result.returncode}); see {log}:\n  {_shown(env, command)}")
    return time.monotonic() - start


def _overrides(args: argparse.Namespace) -> Dict[str, Any]:
    return {**args.overrides, **({"trainer.num_epochs": args.epochs} if args.epochs is not None else {})}


def completed(task: str, variant: str, k: int, args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """The record of a finished run of this variant and seed made with the same settings, if any."""
    run_dir = Path(args.runs_dir) / task / variant / f"seed{k}"
    record_file, metrics_file = run_dir / "reproduce.json", run_dir / "test_metrics.json"
    if not (record_file.exists() and metrics_file.exists()):
        return None
    previous = json.loads(record_file.read_text())
    same = (previous.get("data"), previous.get("epochs"), previous.get("overrides", {})) == (
        args.data,
        args.epochs,
        _overrides(args),
    )
    return previous if same else None


def run_one(task: str, variant: str, k: int, args: argparse.Namespace) -> Dict[str, Any]:
    """Trains (unless already done) and evaluates one variant for one seed."""
    spec = TASKS[task]
    seed = args.seed_base + k
    env = _env(args.data, seed)
    run_dir = Path(args.runs_dir) / task / variant / f"seed{k}"
    train = [ALLENNLP, "train", spec["configs"][variant], "-s", str(run_dir)]
    overrides = _overrides(args)
    if overrides:
        train += ["-o", json.dumps(overrides, sort_keys=True)]
    metrics_file = run_dir / "test_metrics.json"
    evaluate = [
        ALLENNLP,
        "evaluate",
        str(run_dir / "model.tar.gz"),
        test_path(task, env),
        "--output-file",
        str(metrics_file),
    ]
    record_file = run_dir / "reproduce.json"
    previous = None if args.force else completed(task, variant, k, args)
    if previous is not None:
        print(f"reusing {run_dir}", flush=True)
        return previous
    if run_dir.exists():  # incomplete, forced, or made with other settings: start it again
        print(f"retraining {run_dir} from scratch", flush=True)
        train.append("-f")
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    train_log = run_dir.parent / f"seed{k}.train.log"
    train_s = _run(env, train, train_log)
    eval_s = _run(env, evaluate, run_dir / "evaluate.log")
    metrics = json.loads(metrics_file.read_text())
    if spec["metric"] not in metrics:
        sys.exit(f"{metrics_file} has no metric {spec['metric']!r} (has {sorted(metrics)})")
    record = {
        "task": task,
        "variant": variant,
        "seed": seed,
        "data": args.data,
        "epochs": args.epochs,
        "overrides": overrides,
        "metric": spec["metric"],
        "value": metrics[spec["metric"]] * spec["scale"],
        "train_seconds": round(train_s, 1),
        "evaluate_seconds": round(eval_s, 1),
        "commands": [_shown(env, train), _shown(env, evaluate)],
    }
    record_file.write_text(json.dumps(record, indent=2))
    return record


def _json_object(text: str) -> Dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--overrides is not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--overrides must be a JSON object, e.g. '{\"trainer.num_epochs\": 3}'")
    return value


def _mean_std(values: List[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def render_table(task: str, records: List[Dict[str, Any]]) -> str:
    """The markdown section of one task (between markers, so reruns replace it)."""
    spec = TASKS[task]
    lines = [f"<!-- reproduce:{task}:start -->", f"## {spec['title']}", ""]
    if spec.get("note"):
        lines += [spec["note"], ""]
    overrides = sorted({json.dumps(r.get("overrides") or {}, sort_keys=True) for r in records})
    if overrides != ["{}"]:
        lines += ["Config overrides of these runs (`-o`, on top of the experiment configs):", ""]
        lines += [f"- `{o}`" for o in overrides] + [""]
    lines += ["| Variant | Seeds | Ours (mean ± std) | Paper | Train time (mean) | Data |", "|---|---|---|---|---|---|"]
    for variant in spec["configs"]:
        rows = [r for r in records if r["variant"] == variant]
        if not rows:
            continue
        minutes = statistics.mean(r["train_seconds"] for r in rows) / 60
        lines.append(
            f"| {variant} | {len(rows)} | {_mean_std([r['value'] for r in rows])} | "
            f"{spec['paper'][variant]} | {minutes:.1f} min | {rows[0]['data']} |"
        )
    lines += ["", "Commands (from the repo root):", "", "```"]
    for record in records:
        lines += record["commands"]
    lines += ["```", f"<!-- reproduce:{task}:end -->"]
    return "\n".join(lines)


def update_results(path: Path, task: str, section: str) -> None:
    """Replaces the task's section in ``path`` (or appends it; creates the file if needed)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Results\n"
    pattern = re.compile(rf"<!-- reproduce:{task}:start -->.*?<!-- reproduce:{task}:end -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds per variant (default 5)")
    parser.add_argument("--seed-base", type=int, default=13370, help="seed k uses ELMO_TASKS_SEED = base + k")
    parser.add_argument("--variants", nargs="+", help="subset of the task's variants (default: all)")
    parser.add_argument("--data", choices=["full", "fixtures"], default="full")
    parser.add_argument("--epochs", type=int, help="override trainer.num_epochs")
    parser.add_argument(
        "--overrides",
        type=_json_object,
        default={},
        help="JSON object of config overrides for every variant (dotted keys, as `allennlp "
        "train -o`); recorded with the results",
    )
    parser.add_argument("--runs-dir", default=str(ROOT / "runs"))
    parser.add_argument("--results", default=str(ROOT / "docs" / "RESULTS.md"))
    parser.add_argument("--force", action="store_true", help="retrain even if a run is complete")
    args = parser.parse_args(argv)
    spec = TASKS[args.task]
    variants = args.variants or list(spec["configs"])
    unknown = sorted(set(variants) - set(spec["configs"]))
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; {args.task} has {list(spec['configs'])}")
    started = time.monotonic()
    records = []
    for variant in spec["configs"]:  # variants not asked for keep their finished runs in the table
        for k in range(args.seeds):
            record = (
                run_one(args.task, variant, k, args) if variant in variants else completed(args.task, variant, k, args)
            )
            if record is not None:
                records.append(record)
    summary = Path(args.runs_dir) / args.task / "results.json"
    summary.write_text(json.dumps(records, indent=2))
    update_results(Path(args.results), args.task, render_table(args.task, records))
    means = ", ".join(
        f"{variant} {statistics.mean(r['value'] for r in records if r['variant'] == variant):.2f}"
        for variant in spec["configs"]
        if any(r["variant"] == variant for r in records)
    )
    print(
        f"reproduce {args.task}: {len(records)} runs ({means or 'none finished'}; mean {spec['metric']}) in "
        f"{(time.monotonic() - started) / 60:.1f} min; wrote {summary} and {args.results}"
    )


if __name__ == "__main__":
    main()
