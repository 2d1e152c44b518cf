#!/usr/bin/env python
"""Reproduce the benchmarks of Peters et al. (2018): baseline vs. ELMo, several seeds, one report.

Every (task, variant, seed) is trained with ``allennlp train`` into
``<runs-dir>/<task>/<variant>/seed<k>`` (runs-dir: ``runs/<budget>``; ELMO_TASKS_SEED = seed base
+ k; ``fold<K>of<N>-seed<k>`` for SQuAD's other cross-validation folds, ``--splits``) and its
archive is scored with ``allennlp evaluate`` on every test file the task's libsonnet names
(``data.test``, and ``data.test_brown`` for CoNLL-2005 SRL). Each finished run leaves a record,
``record.json`` in its directory and a copy under ``<records-dir>/<task>/<variant>/<run>.json``
(records-dir: ``docs/results/records/<budget>`` for mini and paper): the
exact commands, the resolved config, overrides, environment, seed, git commit, wall times, test
and validation metrics, the validation curve and the learned ELMo layer weights. The report
(docs/RESULTS.md for the ``mini`` budget: a table shaped like the paper's Table 1, the analyses,
plots and a section per task) is regenerated from the records alone, never edited by hand.

    .venv/bin/python scripts/reproduce.py all --budget smoke           # every task on the fixtures
    .venv/bin/python scripts/reproduce.py squad coref --budget mini    # real data, this machine
    .venv/bin/python scripts/reproduce.py ner sst5 snli --budget mini --analyses --analysis-seeds 1   # Tables 2, 3
    .venv/bin/python scripts/reproduce.py all --budget mini --report-only          # the report alone

Budgets (scripts/reproduction_tasks.py): ``smoke`` (fixtures, one epoch, 1 seed), ``mini`` (the
real data, cut to fit a 2-core CPU; 3 seeds) and ``paper`` (the experiment configs unchanged;
5 seeds; GPUs advised). ``--analyses`` adds the paper's Table 2/3 variants, ``--sample-efficiency``
the training-share runs (Figure 1), ``--reuse-only`` records finished runs without training.
Without ``--budget`` the old interface still works: ``--data``, ``--epochs`` and ``--overrides``
set everything by hand.

A finished run made with the same settings is reused (for an ELMo run the settings include the
sha256 of the biLM weights it read), from its run directory or, when that is gone (``runs/`` is
scratch space), from its record in the records directory; so is the run of another variant of the task
that trained the very same model (same resolved config, biLM and seed: e.g. an analysis variant
whose overrides a config file has since adopted), whose record is copied with ``trained_as`` naming
it. Records that the current config files or shipped biLM would not reuse are marked † in the
report. A run that was interrupted is resumed with
``allennlp train --recover``; a run that fails is reported and the others go on (exit status 1
at the end). Progress (which run, how many are left, elapsed and estimated time) goes to stdout,
and the last lines give each asked task's test metrics from the records, as the report's Table 1:
``ner smoke: baseline F1 5.00, ELMo F1 0.00 (test, 1 seed each)``.
"""

import argparse
import contextlib
import datetime
import hashlib
import importlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reproduction_report  # noqa: E402
from reproduction_plots import state_layer_weights  # noqa: E402
from reproduction_tasks import BUDGETS, TASKS, default_split, run_name, variants  # noqa: E402

from elmo_tasks.wording import counted  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# The allennlp beside this Python (.venv/bin/allennlp when run as the docstring shows).
ALLENNLP = str(Path(sys.executable).parent / "allennlp")
RECORD_VERSION = 2
FINETUNE_CONFIG = "experiments/bilm_finetune.jsonnet"

# Set in the caller's environment, these change a run, so the recorded commands show them.
PASSED_ON = ("ELMO_OPTIONS", "ELMO_WEIGHTS", "OMP_NUM_THREADS", "ELMO_TASKS_SRL_DATASET", "ELMO_TASKS_FOLD")
# Of those, the ones that make a finished run unusable for another invocation (another biLM).
IDENTIFYING = ("ELMO_OPTIONS", "ELMO_WEIGHTS")


def bilm_weights_sha256() -> str:
    """The start of the sha256 of the weights file ELMo runs read (ELMO_WEIGHTS or the shipped biLM).

    The shipped biLM is replaced in place when a better one is trained, under the same name, so a
    record names its biLM by content: a finished ELMo run is reused only with the same weights.
    """
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.config_defaults import DEFAULTS

    path = resolve_bilm_file(os.environ.get("ELMO_WEIGHTS", DEFAULTS["ELMO_WEIGHTS"]))
    if not os.path.isfile(path):
        raise RunFailed(f"ELMO_WEIGHTS names {path}, which is not a file: set it to a biLM's weights.hdf5")
    digest = hashlib.sha256()
    with open(path, "rb") as weights:
        for block in iter(lambda: weights.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


class RunFailed(Exception):
    """A command of one run exited with an error; the message says which and where its log is."""


def _env(data: str, seed: int, extra: Dict[str, str]) -> Dict[str, str]:
    passed = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    return {**passed, **extra, "ELMO_TASKS_DATA": data, "ELMO_TASKS_SEED": str(seed)}


def data_paths(task: str, env: Dict[str, str]) -> Dict[str, str]:
    """The libsonnet's ``data`` (train, validation, test... files), evaluated with every environment
    variable as an external variable (as allennlp passes them), the run's settings in ``env`` and,
    for variables still unset, the plugin's defaults (elmo_tasks/config_defaults.py)."""
    import _jsonnet

    from elmo_tasks.config_defaults import DEFAULTS

    ext_vars = {**DEFAULTS, **os.environ, **env}
    snippet = f"(import '{TASKS[task]['libsonnet']}').data"
    return json.loads(_jsonnet.evaluate_snippet("reproduce.py", snippet, ext_vars=ext_vars, jpathdir=[str(ROOT)]))


def test_paths(task: str, env: Dict[str, str]) -> Dict[str, str]:
    """``name -> file`` of every ``test*`` entry of the libsonnet's ``data``."""
    return {name: path for name, path in data_paths(task, env).items() if name.startswith("test")}


def config_value(config: str, data: str, dotted: str) -> Any:
    """One value of an experiment config (e.g. ``trainer.num_epochs``), evaluated for a data mode."""
    node = resolved_config(config, data, {}, {})
    for part in dotted.split("."):
        node = node[part]
    return node


def prepare_finetuned_bilm(plan: "Plan", task: str, recipe: Dict[str, Any], sha: str) -> str:
    """Fine-tunes the start biLM on the task's training text (the paper's appendix), unless this
    recipe already made ``<runs-dir>/<task>/bilm_finetuned/run/elmo/``; an interrupted fine-tuning
    resumes. The texts are the sentences of the recipe's data paths, written by the module that the task's
    ``lm_text`` entry names (e.g. elmo_tasks/tasks/snli/lm_text.py);
    the start biLM's softmax and vocabulary are kept when its folder has them (the shipped one does).
    Returns the fine-tuning command, for the records of the runs that read this biLM."""
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.config_defaults import DEFAULTS

    write_lm_text = importlib.import_module(TASKS[task]["lm_text"]).write_lm_text
    directory = plan.finetuned_bilm_dir(task)
    run_dir, recipe_file, command_file = directory / "run", directory / "recipe.json", directory / "command.txt"
    wanted = {**recipe, "start_bilm_weights_sha256": sha}
    same = recipe_file.exists() and json.loads(recipe_file.read_text()) == wanted
    if same and (run_dir / "elmo" / "weights.hdf5").exists():
        print(f"    {directory}: fine-tuned biLM made already, reusing it", flush=True)
        return command_file.read_text().strip()
    texts = {name: directory / f"{name}.txt" for name in ("text", "validation_text")}
    for name, path in texts.items():
        counts = write_lm_text(recipe[name], path)
        counted = ", ".join(f"{count} {what}" for what, count in counts.items())
        print(f"    {path}: {counted} of {recipe[name]}", flush=True)
    start = Path(resolve_bilm_file(os.environ.get("ELMO_WEIGHTS", DEFAULTS["ELMO_WEIGHTS"]))).parent
    overrides: Dict[str, Any] = {
        "train_data_path": str(texts["text"]),
        "validation_data_path": str(texts["validation_text"]),
        **recipe["overrides"],
    }
    if (start / "softmax.npz").exists() and (start / "vocabulary").is_dir():
        vocabulary = {"type": "from_files", "directory": str(start / "vocabulary")}
        overrides.update({"model.pretrained_file": str(start), "vocabulary": vocabulary})
    train = [ALLENNLP, "train", recipe["config"], "-s", str(run_dir), "-o", json.dumps(overrides, sort_keys=True)]
    if same and any(run_dir.glob("*_state_e*.th")):
        train.append("--recover")
    elif run_dir.exists():
        train.append("-f")
    recipe_file.write_text(json.dumps(wanted, indent=2))
    env = _env(plan.data(task), recipe["seed"], {})
    _run(env, train, directory / "train.log", plan.args.in_process)
    if not (run_dir / "elmo" / "weights.hdf5").exists():
        raise RunFailed(f"the biLM fine-tuning in {run_dir} exported no biLM; see {directory / 'train.log'}")
    command_file.write_text(_shown(env, train) + "\n")
    return _shown(env, train)


def _shown(env: Dict[str, str], command: List[str]) -> str:
    """The command as one shell line a reader can paste (run from the repo root)."""
    prefix = " ".join(f"{key}={value}" for key, value in env.items())
    shown = [".venv/bin/allennlp" if part == ALLENNLP else part.replace(f"{ROOT}/", "") for part in command]
    return f"{prefix} {shlex.join(shown)}"


def _run(env: Dict[str, str], command: List[str], log: Path, in_process: bool) -> float:
    """Runs one allennlp command from the repo root, output to ``log``; its wall time in seconds.

    ``in_process`` runs it inside this Python (the test suite's smoke run: no interpreter start-up
    per command); otherwise it is a subprocess, so a crash or a leak stays in that run."""
    print(f"    $ {_shown(env, command)}", flush=True)
    start = time.monotonic()
    if in_process:
        _run_in_process(env, command, log)
    else:
        with open(log, "w", encoding="utf-8") as handle:
            result = subprocess.run(
                command, cwd=ROOT, env={**os.environ, **env}, stdout=handle, stderr=subprocess.STDOUT, check=False
            )
        if result.returncode != 0:
            raise RunFailed(f"exit {result.returncode}; see {log}: {_shown(env, command)}")
    return time.monotonic() - start


def _run_in_process(env: Dict[str, str], command: List[str], log: Path) -> None:
    from unittest import mock

    from allennlp.commands import main as allennlp_main

    import elmo_tasks.plugin  # noqa: F401 (its environment defaults must outlive each run's patched environment)

    previous = os.getcwd()
    os.chdir(ROOT)
    try:
        with (
            open(log, "w", encoding="utf-8") as handle,
            contextlib.redirect_stdout(handle),
            contextlib.redirect_stderr(handle),
            mock.patch.object(sys, "argv", ["allennlp", *command[1:]]),
            mock.patch.dict(os.environ, env),
        ):
            allennlp_main(prog="allennlp")
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise RunFailed(f"exit {stop.code}; see {log}: {_shown(env, command)}") from None
    except Exception as error:  # noqa: BLE001 (any failure of one run is reported, the others go on)
        raise RunFailed(f"{type(error).__name__}: {error}; see {log}: {_shown(env, command)}") from error
    finally:
        os.chdir(previous)


def _git_commit() -> Dict[str, Any]:
    """HEAD and whether the working tree had uncommitted changes to tracked files."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()

    return {"git_commit": git("rev-parse", "HEAD") or None, "git_dirty": bool(git("status", "--porcelain", "-uno"))}


class Plan:
    """The settings of one invocation: which budget, data, overrides and environment each run gets."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.budget: Optional[str] = args.budget
        self.records_dir = _records_dir(args)

    def data(self, task: str) -> str:
        if self.budget and self.args.data is None:
            return TASKS[task]["budgets"][self.budget]["data"]
        return self.args.data or "full"

    def overrides(self, task: str, variant: Dict[str, Any]) -> Dict[str, Any]:
        budget = TASKS[task]["budgets"][self.budget]["overrides"] if self.budget else {}
        epochs = {"trainer.num_epochs": self.args.epochs} if self.args.epochs is not None else {}
        merged = {**budget, **variant.get("overrides", {}), **self.args.overrides, **epochs}
        if "epochs_factor" in variant:  # e.g. twice the epochs of the run it is compared with
            base_epochs = merged.get("trainer.num_epochs")
            if base_epochs is None:
                base_epochs = config_value(variant["config"], self.data(task), "trainer.num_epochs")
            merged["trainer.num_epochs"] = int(base_epochs * variant["epochs_factor"])
        return merged

    def env(self, task: str, split: Optional[str], variant: Dict[str, Any]) -> Dict[str, str]:
        from elmo_tasks.config_defaults import DEFAULTS

        # Only a biLM other than the default identifies a run (the plugin writes its defaults into os.environ).
        env = {name: os.environ[name] for name in IDENTIFYING if os.environ.get(name, DEFAULTS[name]) != DEFAULTS[name]}
        env.update(TASKS[task]["budgets"][self.budget].get("env", {}) if self.budget else {})
        env.update(variant.get("env", {}))
        if variant.get("bilm_finetuning"):  # the biLM this invocation fine-tunes (see prepare_finetuned_bilm)
            export = self.finetuned_bilm_dir(task) / "run" / "elmo"
            env.update(ELMO_OPTIONS=str(export / "options.json"), ELMO_WEIGHTS=str(export / "weights.hdf5"))
        if split != default_split(task):  # the default split needs no variable
            env[TASKS[task]["split"]["env"]] = split
        return env

    def splits(self, task: str) -> List[Optional[str]]:
        spec = TASKS[task].get("split")
        if spec is None or not self.args.splits:
            return [default_split(task)]
        return spec["all"] if self.args.splits == ["all"] else self.args.splits

    def seeds(self, task: str) -> int:
        if self.args.seeds is not None:
            return self.args.seeds
        return TASKS[task]["budgets"][self.budget]["seeds"] if self.budget else 5

    def settings(self, task: str, variant: Dict[str, Any], split: Optional[str]) -> Dict[str, Any]:
        """What makes two runs of the same variant and seed the same run."""
        settings = {
            "config": variant["config"],
            "data": self.data(task),
            "overrides": self.overrides(task, variant),
            "env": self.env(task, split, variant),
        }
        if variant["config"] == TASKS[task]["configs"]["elmo"]:  # baselines read no biLM
            settings["bilm_weights_sha256"] = bilm_weights_sha256()
        if variant.get("bilm_finetuning"):  # the biLM is made from the start biLM (its sha above) by this recipe
            settings["bilm_finetuning"] = self.finetuning_recipe(task)
        if "train_share" in variant:  # a deterministic share of the training file (the task reader's suffix)
            train = data_paths(task, _env(settings["data"], 0, settings["env"]))["train"]
            settings["overrides"]["train_data_path"] = f"{train}#sample={variant['train_share']}"
            settings["train_share"] = variant["train_share"]
        # The config's content, so that a run made before an edit to its config (or a file it imports) is not reused.
        config = resolved_config(settings["config"], settings["data"], settings["overrides"], settings["env"])
        settings["config_sha256"] = config_fingerprint(config)
        return settings

    def variants(self, task: str) -> Dict[str, Dict[str, Any]]:
        return variants(task, self.args.analyses, self.budget, self.args.sample_efficiency)

    def finetuned_bilm_dir(self, task: str) -> Path:
        return Path(self.args.runs_dir) / task / "bilm_finetuned"

    def finetuning_recipe(self, task: str) -> Dict[str, Any]:
        """How the task's fine-tuned biLM is made: config, overrides, texts (the budget's training and
        validation files), seed; the start biLM is the run's ``bilm_weights_sha256``."""
        paths = data_paths(task, _env(self.data(task), 0, {}))
        return {
            "config": FINETUNE_CONFIG,
            "overrides": TASKS[task]["bilm_finetuning"][self.budget or "paper"],
            "text": paths["train"],
            "validation_text": paths["validation"],
            "seed": self.args.seed_base,
        }


# What a run's config sets besides what it trains: its seeds (a run's seed is part of its name, not its settings).
SEED_KEYS = ("random_seed", "numpy_seed", "pytorch_seed")


def resolved_config(config: str, data: str, overrides: Dict[str, Any], env: Dict[str, str]) -> Dict[str, Any]:
    """The config that `allennlp train CONFIG -o OVERRIDES` resolves today (what it writes to config.json),
    for seed 0."""
    from allennlp.common import Params

    from elmo_tasks.config_defaults import DEFAULTS

    ext_vars = {**DEFAULTS, **os.environ, **_env(data, 0, env)}
    try:
        params = Params.from_file(str(ROOT / config), params_overrides=json.dumps(overrides), ext_vars=ext_vars)
    except Exception as error:  # a missing file, a jsonnet error, an override of a wrong type: this run fails
        raise RunFailed(f"cannot resolve {config} with overrides {json.dumps(overrides)}: {error}") from error
    return params.as_dict(quiet=True)


def config_fingerprint(config: Dict[str, Any]) -> str:
    """The start of the sha256 of a resolved config without its seeds: two runs with the same fingerprint
    train the same model whatever their seeds; an edit to a config file changes it."""
    unseeded = {key: value for key, value in config.items() if key not in SEED_KEYS}
    return hashlib.sha256(json.dumps(unseeded, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _same_settings(previous: Dict[str, Any], settings: Dict[str, Any]) -> bool:
    return all(_previous_setting(previous, key, settings) == value for key, value in settings.items())


def _previous_setting(previous: Dict[str, Any], key: str, settings: Dict[str, Any]) -> Any:
    if key in previous:
        return previous[key]
    if key == "config":  # records of the first reproduce.py: it was always the variant's file
        return settings[key]
    if key == "config_sha256":  # made before the fingerprint: from the config they recorded; none: not the same
        return recorded_fingerprint(previous)
    return {}  # e.g. "env", absent from the first reproduce.py's records


def completed(run_dir: Path, settings: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The record of a finished run in ``run_dir`` made with ``settings``, if any."""
    record_file = run_dir / "record.json"
    if not record_file.exists():
        record_file = run_dir / "reproduce.json"  # the first reproduce.py's name
    if not (record_file.exists() and (run_dir / "test_metrics.json").exists()):
        return None
    previous = json.loads(record_file.read_text())
    return previous if _same_settings(previous, settings) else None


def recorded_run(
    plan: "Plan", task: str, variant: str, name: str, settings: Dict[str, Any]
) -> Optional[Dict[str, Any]]:
    """The record kept in the records directory of a run made with ``settings``, if any.

    Run directories are scratch space (``runs/`` is not committed) while the records of ``mini``
    and ``paper`` runs are: a finished run whose directory is gone is still finished.
    """
    record_file = plan.records_dir / task / variant / f"{name}.json"
    if not record_file.exists():
        return None
    record = json.loads(record_file.read_text())
    if record.get("record_version") != RECORD_VERSION or not _same_settings(record, settings):
        return None
    return record


# What decides the model a run trains besides its resolved config (config_sha256) and seed.
_TWIN_KEYS = ("config_sha256", "data", "env", "bilm_weights_sha256", "bilm_finetuning", "train_share")


def twin_record(plan: "Plan", task: str, variant: str, name: str, settings: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The record of a finished run of any variant of ``task``, with the same run name (seed and split),
    that trained the very model ``settings`` ask for: e.g. an analysis variant whose overrides the config
    file has since adopted, or one whose overrides equal the config. Reusing it saves a whole training."""
    for record_file in sorted((plan.records_dir / task).glob(f"*/{name}.json")):
        record = json.loads(record_file.read_text())
        if record.get("record_version") != RECORD_VERSION:
            continue
        if record["variant"] == variant and "trained_as" not in record:
            continue  # the variant's own run: reused through its run directory or record (or resumed) instead
        recorded = {**record, "config_sha256": recorded_fingerprint(record)}
        if all(recorded.get(key) == settings.get(key) for key in _TWIN_KEYS):
            return record
    return None


def recorded_fingerprint(record: Dict[str, Any]) -> Optional[str]:
    """The config fingerprint of a record (computed from its resolved config for records made before it)."""
    if record.get("config_sha256"):
        return record["config_sha256"]
    return config_fingerprint(record["config_resolved"]) if record.get("config_resolved") else None


def _validation_curve(run_dir: Path, metric: str) -> List[float]:
    values = []
    epoch = 0
    while (run_dir / f"metrics_epoch_{epoch}.json").exists():
        metrics = json.loads((run_dir / f"metrics_epoch_{epoch}.json").read_text())
        if f"validation_{metric}" in metrics:
            values.append(float(metrics[f"validation_{metric}"]))
        epoch += 1
    return values


def _layer_weights(run_dir: Path) -> Dict[str, List[float]]:
    """Softmax-normalised ELMo mixing weights of the best model (mix index as a string)."""
    best = run_dir / "best.th"
    if not best.exists():
        return {}
    import torch

    state = torch.load(best, map_location="cpu", weights_only=True)
    return {str(mix): weights for mix, weights in state_layer_weights(state).items()}


def build_record(
    task: str, variant: str, k: int, seed: int, run_dir: Path, settings: Dict[str, Any], base: Dict[str, Any]
) -> Dict[str, Any]:
    """The record of a finished run: ``base`` (commands, times, commit) plus what its files hold."""
    spec = TASKS[task]
    tests = {}
    for metrics_file in sorted(run_dir.glob("test*_metrics.json")):
        name = metrics_file.name[: -len("_metrics.json")]
        metrics = json.loads(metrics_file.read_text())
        if spec["metric"] not in metrics:
            raise RunFailed(f"{metrics_file} has no metric {spec['metric']!r} (has {sorted(metrics)})")
        tests[name] = metrics
    final = json.loads((run_dir / "metrics.json").read_text()) if (run_dir / "metrics.json").exists() else {}
    config = json.loads((run_dir / "config.json").read_text()) if (run_dir / "config.json").exists() else None
    best_validation = final.get(f"best_validation_{spec['metric']}")
    return {
        **base,
        "record_version": RECORD_VERSION,
        "task": task,
        "variant": variant,
        "seed_index": k,
        "seed": seed,
        "train_fraction": settings.get("train_share"),
        "split": settings["env"].get(TASKS[task]["split"]["env"], default_split(task)) if "split" in spec else None,
        "run_name": run_dir.name,
        **settings,
        "metric": spec["metric"],
        "value": tests["test"][spec["metric"]] * spec["scale"],
        "test_metrics": tests,
        "best_validation": None if best_validation is None else best_validation * spec["scale"],
        "best_epoch": final.get("best_epoch"),
        "validation_curve": [v * spec["scale"] for v in _validation_curve(run_dir, spec["metric"])],
        "layer_weights": _layer_weights(run_dir),
        "config_resolved": config,
    }


def _train_seconds(spent_file: Path, seconds: Optional[float], restart: bool) -> float:
    """The wall time of every training invocation of one run, kept beside it, so that a run resumed after an
    interruption records its whole training time and not only the last part; ``seconds`` adds one."""
    spent = [] if restart or not spent_file.exists() else json.loads(spent_file.read_text())
    if seconds is not None:
        spent.append(round(seconds, 1))
        spent_file.write_text(json.dumps(spent))
    return sum(spent)


def run_one(
    plan: Plan, task: str, variant_name: str, k: int, split: Optional[str], progress: "Progress"
) -> Optional[Dict[str, Any]]:
    """Trains (unless done), evaluates and records one variant for one seed; raises RunFailed."""
    args = plan.args
    variant = plan.variants(task)[variant_name]
    settings = plan.settings(task, variant, split)
    seed = args.seed_base + k
    env = _env(settings["data"], seed, settings["env"])
    name = run_name(task, split, k)
    run_dir = Path(args.runs_dir) / task / variant_name / name
    previous = None if args.force else completed(run_dir, settings)
    if previous is not None:
        record = previous
        if record.get("record_version") != RECORD_VERSION:  # made by the first reproduce.py: complete it
            base = {key: record[key] for key in ("commands", "train_seconds", "evaluate_seconds") if key in record}
            base.update(git_commit=None, git_dirty=None, git_note="made before run records held the commit")
            record = build_record(task, variant_name, k, seed, run_dir, settings, base)
        progress.reused(f"{task} {variant_name} {name}")
        return _save(record, run_dir, plan)
    recorded = None if args.force or run_dir.exists() else recorded_run(plan, task, variant_name, name, settings)
    if recorded is not None:
        progress.reused(f"{task} {variant_name} {name} (from its record in {plan.records_dir}; no run directory)")
        return recorded
    twin = None if args.force else twin_record(plan, task, variant_name, name, settings)
    if twin is not None:
        trained_as = twin.get("trained_as") or f"{twin['variant']}/{name}"
        progress.reused(f"{task} {variant_name} {name} (trained as {trained_as}: the same resolved config and seed)")
        return _save_record({**twin, "variant": variant_name, "trained_as": trained_as}, plan)
    if args.reuse_only:
        progress.skipped(f"{task} {variant_name} {name}")
        return None

    progress.start(f"{task} {variant_name} {name}")
    with run_lock(run_dir.parent / f"{name}.lock"):
        finetuning = []
        if "bilm_finetuning" in settings:
            recipe, start_sha = settings["bilm_finetuning"], settings["bilm_weights_sha256"]
            finetuning.append(prepare_finetuned_bilm(plan, task, recipe, start_sha))
        overrides = settings["overrides"]
        train = [ALLENNLP, "train", variant["config"], "-s", str(run_dir)]
        if overrides:
            train += ["-o", json.dumps(overrides, sort_keys=True)]
        settings_file = run_dir.parent / f"{name}.settings.json"  # outside: allennlp wants a new run_dir
        archive = run_dir / "model.tar.gz"
        saved = json.loads(settings_file.read_text()) if settings_file.exists() else None
        if saved is not None and "config_sha256" not in saved and (run_dir / "config.json").exists():
            saved["config_resolved"] = json.loads((run_dir / "config.json").read_text())  # what it trained with
        same_unfinished = not args.force and saved is not None and _same_settings(saved, settings)
        spent_file = run_dir.parent / f"{name}.train_seconds.json"
        # metrics.json comes at the end of training: an archive without it is the best epoch of an interrupted run
        if same_unfinished and archive.exists() and (run_dir / "metrics.json").exists():
            print(f"    {run_dir}: trained already, evaluating", flush=True)
            train_s = _train_seconds(spent_file, None, restart=False)
        else:
            resuming = same_unfinished and any(run_dir.glob("*_state_e*.th"))
            if resuming:
                print(f"    {run_dir}: interrupted, resuming (--recover)", flush=True)
                train.append("--recover")
            elif run_dir.exists():  # forced, or made with other settings: start again
                print(f"    {run_dir}: made with other settings or forced, training from scratch", flush=True)
                train.append("-f")
            run_dir.parent.mkdir(parents=True, exist_ok=True)
            settings_file.write_text(json.dumps(settings, indent=2))
            seconds = _run(env, train, run_dir.parent / f"{name}.train.log", args.in_process)
            train_s = _train_seconds(spent_file, seconds, restart=not resuming)
        commit = _git_commit()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        commands, eval_s = [*finetuning, _shown(env, train)], 0.0
        for test_name, path in test_paths(task, env).items():
            output = str(run_dir / f"{test_name}_metrics.json")
            evaluate = [ALLENNLP, "evaluate", str(archive), path, "--output-file", output]
            eval_s += _run(env, evaluate, run_dir / f"evaluate_{test_name}.log", args.in_process)
            commands.append(_shown(env, evaluate))
        base = {
            "commands": commands,
            "train_seconds": round(train_s, 1),
            "evaluate_seconds": round(eval_s, 1),
            "evaluated_at": started,
            **commit,
        }
        record = build_record(task, variant_name, k, seed, run_dir, settings, base)
    progress.finished()
    return _save(record, run_dir, plan)


@contextlib.contextmanager
def run_lock(lock: Path) -> Iterator[None]:
    """Holds a run for this process, so that two reproduce.py processes never train one run directory at
    once (the second would resume the first's checkpoints under it); a lock left by a dead process is taken
    over, and the lock goes when the run is recorded or has failed."""
    _claim(lock)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def _claim(lock: Path) -> None:
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            with open(lock, "x", encoding="utf-8") as handle:
                handle.write(str(os.getpid()))
            return
        except FileExistsError:
            try:
                owner = int(lock.read_text(encoding="utf-8").strip() or 0)
            except (OSError, ValueError):
                owner = 0
            if owner and owner != os.getpid() and _process_alive(owner):
                raise RunFailed(
                    f"process {owner} is training this run (lock file {lock}); run this command again when it has "
                    "finished, and the finished run is reused"
                ) from None
            lock.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _save(record: Dict[str, Any], run_dir: Path, plan: Plan) -> Dict[str, Any]:
    """Writes the record into the run directory and, under its budget, into the records directory."""
    record = {**record, "budget": plan.budget}
    (run_dir / "record.json").write_text(json.dumps(record, indent=2))
    return _save_record(record, plan)


def _save_record(record: Dict[str, Any], plan: Plan) -> Dict[str, Any]:
    """Writes the record into the records directory."""
    copy = plan.records_dir / record["task"] / record["variant"] / f"{record['run_name']}.json"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(json.dumps(record, indent=2) + "\n")
    return record


class Progress:
    """Which run, how many are left, elapsed time and an estimate from the runs trained so far."""

    def __init__(self, total: int):
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.durations: List[float] = []
        self.current: Optional[float] = None

    def _line(self, what: str, label: str) -> None:
        elapsed = (time.monotonic() - self.started) / 60
        left = self.total - self.done
        estimate = (
            f", about {statistics.mean(self.durations) * left / 60:.0f} min left" if self.durations and left else ""
        )
        print(f"[{self.done + 1}/{self.total}] {what} {label} (elapsed {elapsed:.1f} min{estimate})", flush=True)

    def reused(self, label: str) -> None:
        self._line("reusing", label)
        self.done += 1

    def skipped(self, label: str) -> None:
        self._line("not finished, skipped (--reuse-only):", label)
        self.done += 1

    def start(self, label: str) -> None:
        self._line("running", label)
        self.current = time.monotonic()

    def finished(self) -> None:
        if self.current is not None:
            self.durations.append(time.monotonic() - self.current)
        self.current = None
        self.done += 1

    def failed(self) -> None:
        self.current = None
        self.done += 1


def _json_object(text: str) -> Dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--overrides is not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--overrides must be a JSON object, e.g. '{\"trainer.num_epochs\": 3}'")
    return value


def parse_args(argv: Optional[List[str]]) -> Tuple[argparse.Namespace, List[str]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tasks", nargs="+", metavar="TASK", help=f"'all' or any of {', '.join(TASKS)}")
    parser.add_argument("--budget", choices=BUDGETS, help="smoke, mini or paper (see scripts/reproduction_tasks.py)")
    parser.add_argument("--seeds", type=int, help="seeds per variant (default: the budget's; 5 without one)")
    parser.add_argument("--seed-base", type=int, default=13370, help="seed k uses ELMO_TASKS_SEED = base + k")
    parser.add_argument(
        "--only-seeds",
        type=int,
        nargs="+",
        metavar="K",
        help="only these seed indices (others run elsewhere)",
    )
    parser.add_argument(
        "--splits",
        nargs="+",
        metavar="S",
        help="for tasks with splits (SQuAD's folds ELMO_TASKS_FOLD): these, e.g. 2/4 3/4, or 'all' (default: 1/4)",
    )
    parser.add_argument("--variants", nargs="+", help="only these variants (default: baseline and elmo)")
    parser.add_argument(
        "--analysis-seeds",
        type=int,
        metavar="N",
        help="seeds of the --analyses variants (default: as many as the others); the paper's tables are single runs",
    )
    parser.add_argument("--analyses", action="store_true", help="also the analysis variants (Tables 2 and 3)")
    parser.add_argument(
        "--sample-efficiency", action="store_true", help="also train on the budget's shares of the training data"
    )
    parser.add_argument("--data", choices=["full", "fixtures"], help="override the budget's data (default full)")
    parser.add_argument("--epochs", type=int, help="override trainer.num_epochs")
    parser.add_argument(
        "--overrides",
        type=_json_object,
        default={},
        help="JSON object of config overrides for every run, on top of the budget's (dotted keys, as `allennlp "
        "train -o`); recorded with the results",
    )
    parser.add_argument("--runs-dir", help="default: runs/<budget> (runs/ without a budget)")
    parser.add_argument("--records-dir", help="default: docs/results/records/<budget> for mini and paper, else in runs")
    parser.add_argument("--results", help="the report (default: docs/RESULTS.md for mini, else in the runs dir)")
    parser.add_argument("--force", action="store_true", help="retrain even if a run is complete")
    parser.add_argument("--report-only", action="store_true", help="only regenerate the report from the records")
    parser.add_argument(
        "--reuse-only", action="store_true", help="record finished runs (e.g. of another runs dir), train nothing"
    )
    parser.add_argument("--in-process", action="store_true", help="run allennlp in this process (tests)")
    args = parser.parse_args(argv)
    tasks = list(TASKS) if args.tasks == ["all"] else args.tasks
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        parser.error(f"unknown task(s) {unknown}; choose 'all' or from {list(TASKS)}")
    if args.runs_dir is None:
        args.runs_dir = str(ROOT / "runs" / args.budget) if args.budget else str(ROOT / "runs")
    if args.variants:
        known = {v for t in tasks for v in variants(t, True, args.budget, sample_efficiency=True)}
        bad = sorted(set(args.variants) - known)
        if bad:
            parser.error(f"unknown variant(s) {bad}; the tasks have {sorted(known)}")
    return args, tasks


def _records_dir(args: argparse.Namespace) -> Path:
    if args.records_dir:
        return Path(args.records_dir)
    if args.budget in ("mini", "paper"):
        return ROOT / "docs" / "results" / "records" / args.budget
    return Path(args.runs_dir) / "records"


def _results_path(args: argparse.Namespace) -> Path:
    if args.results:
        return Path(args.results)
    if args.budget == "mini":
        return ROOT / "docs" / "RESULTS.md"
    return Path(args.runs_dir) / "RESULTS.md"


def mark_outdated(plan: Plan, records: List[Dict[str, Any]]) -> None:
    """Sets ``outdated`` on each record whose run the current config files or shipped biLM would not
    reuse: its config fingerprint or biLM sha256 differs from what its variant resolves to today (or the
    variant is gone), so the report can say which results predate a change."""
    current: Dict[Tuple[str, str, Optional[str]], Optional[Dict[str, Any]]] = {}
    for record in records:
        key = (record["task"], record["variant"], record.get("split"))
        if key not in current:
            known = variants(record["task"], True, plan.budget, sample_efficiency=True)
            try:
                current[key] = plan.settings(key[0], known[key[1]], key[2]) if key[1] in known else None
            except RunFailed:
                current[key] = None
        settings = current[key]
        recorded = {
            "config_sha256": recorded_fingerprint(record),
            "bilm_weights_sha256": record.get("bilm_weights_sha256"),
        }
        record["outdated"] = settings is None or any(value != settings.get(name) for name, value in recorded.items())


def planned_runs(plan: Plan, tasks: List[str]) -> List[Tuple[str, str, int, Optional[str]]]:
    """``(task, variant, seed index, split)`` of every run an invocation asks for, in running order."""
    args = plan.args
    return [
        (task, name, k, split)
        for task in tasks
        for split in plan.splits(task)
        for k in range(plan.seeds(task))
        for name, variant in plan.variants(task).items()
        if (not args.variants or name in args.variants)
        and (not args.only_seeds or k in args.only_seeds)
        and not ("table" in variant and args.analysis_seeds is not None and k >= args.analysis_seeds)
    ]


def main(argv: Optional[List[str]] = None) -> int:
    args, tasks = parse_args(argv)
    plan = Plan(args)
    jobs = planned_runs(plan, tasks)
    failures: List[str] = []
    if not args.report_only:
        progress = Progress(len(jobs))
        for task, name, k, split in jobs:
            try:
                run_one(plan, task, name, k, split, progress)
            except RunFailed as failure:
                progress.failed()
                failures.append(f"{task} {name} {run_name(task, split, k)}: {failure}")
                print(f"    FAILED {failures[-1]}", flush=True)
    results = _results_path(args)
    records = reproduction_report.load_records(plan.records_dir)
    if plan.budget is not None:
        mark_outdated(plan, records)
    reproduction_report.write_report(records, results, budget=args.budget)
    asked = "report only" if args.report_only else f"{counted(len(jobs), 'run')} asked, {len(failures)} failed"
    print(f"reproduce: {asked}; {counted(len(records), 'record')} -> {results}")
    for failure in failures:
        print(f"  failed: {failure}")
    # The last lines: each task's test metrics, as the report's Table 1 gives them.
    for task in tasks:
        print(reproduction_report.metrics_line(records, task, args.budget))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
