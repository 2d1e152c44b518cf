"""Importing our plugin only registers names; every command starts with the setup (elmo_tasks/command_start.py).

The import and AllenNLP's own command line run in fresh processes (tests/conftest.py has already
started this one); the hook's cases and our entry points are checked here, with the setup recorded.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from allennlp.commands.subcommand import Subcommand

import elmo_tasks.__main__ as elmo_tasks_main
from elmo_tasks.command_start import with_command_start
from elmo_tasks.commands import allennlp_hook
from tests.conftest import ROOT

OURS = ("ELMO_", "BILM_")
SWITCH = "ELMO_TASKS_REPLACE_ALLENNLP_ELMO"

# torch's count before and after the import; what the plugin left of our variables, the excepthook,
# AllenNLP's extraction and the drop-in; then the same after start_command()
IMPORT_SCRIPT = """
import json, os, sys
import torch
default_threads = torch.get_num_threads()
import elmo_tasks
import elmo_tasks.plugin
from allennlp.models import archival
import cached_path._cached_path as cached
from elmo_tasks.modules.allennlp_compat import allennlp_elmo_is_replaced

def state():
    return {
        "threads": torch.get_num_threads(),
        "variables": sorted(k for k in os.environ if k.startswith(("ELMO_", "BILM_"))),
        "excepthook_replaced": sys.excepthook is not sys.__excepthook__,
        "extraction_replaced": [hasattr(archival.extracted_archive, "_elmo_tasks_safe_extraction"),
                                hasattr(cached.check_tarfile, "_elmo_tasks_safe_extraction")],
        "drop_in": allennlp_elmo_is_replaced(),
        "model_names": hasattr(archival.cached_path, "_elmo_tasks_archive_names"),
    }

imported = state()
from elmo_tasks.command_start import start_command
start_command()
print(json.dumps({"default_threads": default_threads, "imported": imported, "started": state()}))
"""

# `allennlp train` as the `allennlp` script runs it, with AllenNLP's train function replaced by a probe
# of what the command finds when it starts (the parser binds `train_model_from_args` when it is built)
TRAIN_PROBE_SCRIPT = """
import json, os, sys
import torch
import allennlp.commands.train as train
from allennlp.common import Params

def probe(args):
    from allennlp.models import archival
    from elmo_tasks.modules.allennlp_compat import allennlp_elmo_is_replaced
    config = Params.from_file(args.param_path).as_dict(quiet=True)  # the experiment's std.extVar, as train reads it
    print(json.dumps({
        "threads": torch.get_num_threads(),
        "seed": config["random_seed"],
        "options": os.environ.get("ELMO_OPTIONS"),
        "excepthook_replaced": sys.excepthook is not sys.__excepthook__,
        "extraction_replaced": hasattr(archival.extracted_archive, "_elmo_tasks_safe_extraction"),
        "drop_in": allennlp_elmo_is_replaced(),
    }))

train.train_model_from_args = probe
assert "elmo_tasks.plugin" not in sys.modules  # AllenNLP imports it (.allennlp_plugins), after parsing `train`
sys.argv = ["allennlp", "train", "experiments/ner_baseline.jsonnet", "-s", "unused"]
from allennlp.commands import main
main(prog="allennlp")
"""


def _users_environment(**extra: str) -> Dict[str, str]:
    """This environment without any variable we would set (nor OMP_NUM_THREADS), plus ``extra``."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(OURS) and k != "OMP_NUM_THREADS"}
    return {**kept, **extra}


def _last_json(code: str, env: Dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_plugin_changes_nothing_and_a_command_start_applies_the_setup():
    result = _last_json(IMPORT_SCRIPT, _users_environment(**{SWITCH: "1"}))
    imported, started = result["imported"], result["started"]
    assert imported == {
        "threads": result["default_threads"],  # torch's own default: one per core
        "variables": [SWITCH],  # the user's, and none of ours
        "excepthook_replaced": False,
        "extraction_replaced": [False, False],
        "drop_in": False,  # the user's switch is read where a command starts
        "model_names": False,  # elmo_tasks:pretrained/NAME in load_archive
    }
    assert started["threads"] == 1
    assert {"ELMO_OPTIONS", "ELMO_WEIGHTS", "ELMO_TASKS_DATA", "ELMO_TASKS_SEED"} <= set(started["variables"])
    assert started["excepthook_replaced"] and started["extraction_replaced"] == [True, True] and started["drop_in"]
    assert started["model_names"]


@pytest.mark.slow  # whole `allennlp` processes, 15 to 30 s: in `make test-all`, out of the fast suite
def test_allennlp_train_starts_with_the_setup_before_it_reads_its_config():
    probed = _last_json(TRAIN_PROBE_SCRIPT, _users_environment(**{SWITCH: "1"}))
    assert probed == {
        "threads": 1,
        "seed": 13370,  # ELMO_TASKS_SEED's default, read by the experiment's std.extVar
        "options": "elmo_tasks:pretrained/bilm_small/options.json",
        "excepthook_replaced": True,
        "extraction_replaced": True,
        "drop_in": True,
    }


@pytest.mark.slow  # whole `allennlp` processes, 15 to 30 s: in `make test-all`, out of the fast suite
def test_a_users_omp_num_threads_still_wins_at_a_commands_start():
    probed = _last_json(TRAIN_PROBE_SCRIPT, _users_environment(OMP_NUM_THREADS="2", ELMO_TASKS_SEED="7"))
    assert (probed["threads"], probed["seed"], probed["drop_in"]) == (2, 7, False)


@pytest.mark.slow  # a real training of the fixtures, in a fresh `allennlp` process
def test_allennlp_train_resolves_the_experiments_defaults_and_trains(tmp_path):
    command = [str(Path(sys.executable).parent / "allennlp"), "train", "experiments/ner_baseline.jsonnet"]
    command += ["-s", str(tmp_path / "run"), "-o", json.dumps({"trainer.num_epochs": 1})]
    done = subprocess.run(command, cwd=ROOT, env=_users_environment(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["random_seed"] == 13370 and config["train_data_path"].startswith("fixtures/")
    assert (tmp_path / "run" / "model.tar.gz").is_file()


# ---- the hook's cases: AllenNLP's frames, imitated -------------------------------------------


def _called_from(module: str, function: str, **local_values: object) -> None:
    """Calls the hook from a function named ``function`` of a module named ``module`` whose locals hold
    ``local_values``, as AllenNLP's plugin loading would from there."""
    source = f"def {function}(hook, {', '.join(local_values)}):\n    hook()\n"
    namespace: dict = {"__name__": module}
    exec(source, namespace)
    namespace[function](allennlp_hook.hook_the_starting_command, **local_values)


@pytest.fixture()
def starts(monkeypatch) -> List[str]:
    """Records each start_command() instead of running it."""
    calls: List[str] = []
    monkeypatch.setattr("elmo_tasks.command_start.start_command", lambda: calls.append("start"))
    monkeypatch.setattr(allennlp_hook, "start_command", lambda: calls.append("start"))
    return calls


def test_the_hook_wraps_the_parsed_command_of_allennlps_command_line(starts):
    ran: List[str] = []
    for function in ("parse_args", "main"):  # after parsing; main: --include-package elmo_tasks.plugin
        args = argparse.Namespace(func=lambda parsed: ran.append("run"))
        _called_from("allennlp.commands", function, args=args)
        assert starts == [] and ran == []  # nothing at import
        args.func(args)
        assert (starts, ran) == (["start"], ["run"])
        starts.clear()
        ran.clear()


def test_the_hook_does_nothing_before_parsing_or_outside_allennlp(starts):
    _called_from("allennlp.commands", "parse_args", subcommands=set())  # `allennlp --help`, one of our commands
    _called_from("my_program", "main", args=argparse.Namespace(func=print))  # a Python program importing it
    allennlp_hook.hook_the_starting_command()  # here
    assert starts == []


def test_a_distributed_training_worker_starts_when_it_loads_the_plugin(starts):
    _called_from("allennlp.commands.train", "_train_worker", process_rank=0)
    assert starts == ["start"]


# ---- our commands ---------------------------------------------------------------------------


def test_every_command_of_ours_starts_with_the_setup():
    ours = [
        name for name in Subcommand.list_available() if Subcommand.by_name(name).__module__.startswith("elmo_tasks.")
    ]
    assert len(ours) >= 12
    for name in ours:
        subparsers = argparse.ArgumentParser().add_subparsers()
        parser = Subcommand.by_name(name)().add_subparser(subparsers)
        assert getattr(parser.get_default("func"), "_elmo_tasks_starts_first", False), name


def test_with_command_start_runs_the_setup_first_and_wraps_once(starts):
    ran: List[str] = []
    run = with_command_start(lambda args: ran.append(args.value) or "done")
    assert with_command_start(run) is run
    assert run(argparse.Namespace(value="x")) == "done"
    assert (starts, ran) == (["start"], ["x"])


def test_elmo_tasks_starts_allennlps_commands_and_its_own(monkeypatch, starts):
    import allennlp.commands

    order: List[str] = []
    parsed = argparse.Namespace(func=lambda args: order.extend([*starts, "run"]))
    monkeypatch.setattr(allennlp.commands, "parse_args", lambda prog: (None, parsed))
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        elmo_tasks_main.run_allennlp("elmo-tasks")
    finally:
        signal.signal(signal.SIGTERM, sigterm)  # run_allennlp makes SIGTERM raise, as `allennlp` does
    assert order == ["start", "run"]
    # the commands without AllenNLP: threads and one-line errors, then the command (its --threads last)
    steps: List[str] = []
    monkeypatch.setattr(
        elmo_tasks_main, "start_process", lambda load_torch=True: steps.append(f"start_process torch={load_torch}")
    )
    monkeypatch.setattr("elmo_tasks.bilm.embed.run", lambda args: steps.append("run"))
    elmo_tasks_main.run_without_allennlp("elmo-tasks", ["elmo-embed", "in.txt", "out.hdf5"])
    assert steps == ["start_process torch=True", "run"]
    # bilm-perplexity imports torch itself, once its reading child is forked (elmo_tasks/bilm/reading_child.py)
    steps.clear()
    monkeypatch.setattr("elmo_tasks.bilm.perplexity.run", lambda args: steps.append("run"))
    elmo_tasks_main.run_without_allennlp("elmo-tasks", ["bilm-perplexity", "text.txt"])
    assert steps == ["start_process torch=False", "run"]
