"""Our plugin beside allennlp-models 2.10.1, and our commands from any directory.

The fast tests check every name we register against the names AllenNLP and allennlp-models
register (the list ``tests/allennlp_registrations.tsv``, see tests/allennlp_models_support.py).
The slow ones run the real thing in subprocesses: allennlp-models installed with
``pip install --no-deps --target`` (skipped, saying why, when pip cannot reach PyPI; point
``ELMO_TASKS_ALLENNLP_MODELS_PATH`` at a folder prepared that way to skip pip), AllenNLP's plugin
discovery from the repo root, its biattentive classification network trained with AllenNLP's
``Elmo`` and with ours, our commands run from a folder outside the repo, and the reproduction
harness's smoke budget run there beside allennlp-models.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional
from xml.etree import ElementTree

import pytest
import torch

from elmo_tasks.modules.allennlp_compat import allennlp_elmo_is_replaced
from tests.allennlp_models_support import (
    PATH_VARIABLE,
    SOURCE_VARIABLE,
    current_registrations,
    environment_with,
    import_allennlp_like_the_cli,
    install_allennlp_models,
    read_registrations,
)
from tests.conftest import BILM_TF, FIXTURES_ROOT, OPTIONS_FILE, ROOT, WEIGHT_FILE

BIN = Path(sys.executable).parent
SKIP_OPTIONS = str(FIXTURES_ROOT / "migrating" / "bilm_tf_options_with_skip.json")
BCN_CONFIG = "fixtures/migrating/bcn_elmo_allennlp_models.jsonnet"
NER_CONFIG = str(FIXTURES_ROOT / "migrating" / "ner_elmo_allennlp.jsonnet")
COREF_KEY = "fixtures/coref/test.gold_conll"


def _ours() -> Dict[tuple, str]:
    return {
        (registry, name): registered
        for registry, name, registered in current_registrations()
        if registered.startswith("elmo_tasks.")
    }


# ---- names: fast, from the list -------------------------------------------------------------


def test_no_name_we_register_is_registered_by_allennlp_or_allennlp_models():
    assert not allennlp_elmo_is_replaced()  # the drop-in serves AllenNLP's name on purpose, only when on
    listed = {
        (registry, name): f"{source} ({registered})" for source, registry, name, registered in read_registrations()
    }
    ours = _ours()
    assert len(ours) >= 36  # every kind: models, readers, predictors, metrics, commands, ...
    collisions = {
        f"{registry.rsplit('.', 1)[1]} '{name}'": listed[registry, name]
        for registry, name in ours
        if (registry, name) in listed
    }
    assert not collisions, f"registered by us and by {collisions}: choose other names"


def test_the_list_holds_what_stopped_allennlp_before_we_renamed():
    rows = read_registrations()
    metric = "allennlp.training.metrics.metric.Metric"
    models = {(registry, name) for source, registry, name, _ in rows if source == "allennlp-models"}
    assert len(models) == 121  # as many as `.register("...")` calls in allennlp-models 2.10.1's source
    assert {(metric, "conll_coref_scores"), (metric, "srl_eval")} <= models  # our old names
    ours = _ours()
    assert ours[metric, "coref_conll2012_scores"] == "elmo_tasks.tasks.coref.metric.ConllCorefScores"
    assert ours[metric, "srl_eval_scores"] == "elmo_tasks.tasks.srl.metric.SrlEvalMetric"


def test_the_listed_allennlp_registrations_are_the_installed_ones():
    """Also catches a name of ours written over one of AllenNLP's (its class would be gone)."""
    import_allennlp_like_the_cli()
    # ours, and test-only classes other test modules register (e.g. a callback in tests/tasks/lm)
    installed = {row for row in current_registrations() if not row[2].startswith(("elmo_tasks.", "tests."))}
    listed = {
        (registry, name, registered)
        for source, registry, name, registered in read_registrations()
        if source == "allennlp"
    }
    assert installed == listed


# ---- allennlp-models installed: slow, in subprocesses ---------------------------------------


@pytest.fixture(scope="session")
def allennlp_models_path(tmp_path_factory) -> str:
    """A folder to put on PYTHONPATH that holds allennlp-models 2.10.1 and its load-time imports."""
    if os.environ.get(PATH_VARIABLE):
        return os.environ[PATH_VARIABLE]
    target = tmp_path_factory.mktemp("allennlp_models")
    problem = install_allennlp_models(target)
    if problem:
        pytest.skip(f"allennlp-models 2.10.1 could not be installed (needs PyPI): {problem}")
    return str(target)


def _run(command: List[str], cwd: Path, python_path: str = "", **env: str) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        command, cwd=cwd, env={**environment_with(python_path), **env}, capture_output=True, text=True, timeout=900
    )
    return completed


def _check(completed: subprocess.CompletedProcess) -> str:
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


STATE_SCRIPT = """
import json
from allennlp.common.plugins import import_plugins
from allennlp.modules.elmo import Elmo
from tests.allennlp_models_support import current_registrations
import_plugins()
from elmo_tasks.command_start import start_command
start_command()  # as every command starts: reads ELMO_TASKS_REPLACE_ALLENNLP_ELMO (importing the plugin does not)
state = {"registrations": sorted(current_registrations()), "elmo_from_params_replaced": "from_params" in vars(Elmo)}
print(json.dumps(state))
"""


def _plugin_state(python_path: str, **env: str) -> dict:
    """What AllenNLP registered after its plugin discovery from the repo root (``.allennlp_plugins``) and a
    command's start."""
    stdout = _check(_run([sys.executable, "-c", STATE_SCRIPT], ROOT, os.pathsep.join([python_path, str(ROOT)]), **env))
    state = json.loads(stdout.strip().splitlines()[-1])
    state["registrations"] = {tuple(row) for row in state["registrations"]}
    return state


@pytest.mark.slow
def test_allennlp_and_a_command_run_from_the_repo_root_with_allennlp_models_installed(allennlp_models_path):
    help_text = _check(_run([str(BIN / "allennlp"), "--help"], ROOT, allennlp_models_path))
    assert "elmo-embed" in help_text and "coref-score" in help_text
    scored = _check(_run([str(BIN / "allennlp"), "coref-score", COREF_KEY, COREF_KEY], ROOT, allennlp_models_path))
    assert scored.strip().splitlines()[-1] == "muc 100.00 bcub 100.00 ceafe 100.00 avg 100.00"
    # our entry point loads our plugin first and allennlp-models after it: the other order
    assert "elmo-embed" in _check(_run([str(BIN / "elmo-tasks"), "--help"], ROOT, allennlp_models_path))


@pytest.mark.slow
def test_every_name_of_allennlp_models_is_kept_and_ours_changes_nothing_unless_switched_on(allennlp_models_path):
    listed = {(registry, name, registered) for _, registry, name, registered in read_registrations()}
    state = _plugin_state(allennlp_models_path)
    assert listed <= state["registrations"]  # every AllenNLP and allennlp-models name, same classes
    assert len({row for row in state["registrations"] if row[2].startswith("elmo_tasks.")}) == len(_ours())
    assert not state["elmo_from_params_replaced"]
    switched_on = _plugin_state(allennlp_models_path, ELMO_TASKS_REPLACE_ALLENNLP_ELMO="1")
    embedder = "allennlp.modules.token_embedders.token_embedder.TokenEmbedder"
    scheduler = "allennlp.training.learning_rate_schedulers.learning_rate_scheduler.LearningRateScheduler"
    changed = listed - switched_on["registrations"]
    served = {(embedder, "elmo_token_embedder"), (scheduler, "reduce_on_plateau")}
    assert {(registry, name) for registry, name, _ in changed} == served
    assert {
        (embedder, "elmo_token_embedder", "elmo_tasks.modules.allennlp_compat.AllenNlpElmoTokenEmbedder"),
        (scheduler, "reduce_on_plateau", "elmo_tasks.training.reduce_on_plateau.ReduceOnPlateauScheduler"),
    } <= switched_on["registrations"]
    assert switched_on["elmo_from_params_replaced"]


LOAD_SCRIPT = """
import json, sys
import torch
from allennlp.common.plugins import import_plugins
from allennlp.data import Batch
from allennlp.models.archival import load_archive
from elmo_tasks.modules import allennlp_elmo_replaced
import_plugins()

def logits(path, drop_in):
    if drop_in:
        with allennlp_elmo_replaced():
            archive = load_archive(path)
    else:
        archive = load_archive(path)
    model = archive.model.eval()
    instances = list(archive.dataset_reader.read("fixtures/sst/dev.txt"))
    for instance in instances:
        instance.index_fields(model.vocab)
    with torch.no_grad():
        output = model(**Batch(instances).as_tensor_dict())
    return type(model._elmo).__module__, output["logits"].tolist()

print(json.dumps({f"{path} {drop_in}": logits(path, drop_in) for path in sys.argv[1:] for drop_in in (False, True)}))
"""


#: What the drop-in logs when it switches on (elmo_tasks/modules/allennlp_compat.py): proof that ours served a run
SERVED_LOG_LINE = "are now served by elmo_tasks"


@pytest.mark.slow
def test_biattentive_classification_network_trains_the_same_with_our_elmo(allennlp_models_path, tmp_path):
    """allennlp-models' BCN config, unchanged, with AllenNLP's Elmo and with the drop-in switched on."""
    allennlp = str(BIN / "allennlp")
    plain = _check(_run([allennlp, "train", BCN_CONFIG, "-s", str(tmp_path / "theirs")], ROOT, allennlp_models_path))
    completed = _run(
        [allennlp, "train", BCN_CONFIG, "-s", str(tmp_path / "ours")],
        ROOT,
        allennlp_models_path,
        ELMO_TASKS_REPLACE_ALLENNLP_ELMO="1",
    )
    _check(completed)
    assert SERVED_LOG_LINE in completed.stderr and SERVED_LOG_LINE not in plain
    theirs = json.loads((tmp_path / "theirs" / "metrics.json").read_text())
    ours = json.loads((tmp_path / "ours" / "metrics.json").read_text())
    for run in ("ours", "theirs"):  # both under AllenNLP's names
        assert any(key.startswith("_elmo._elmo_lstm.") for key in torch.load(tmp_path / run / "best.th", "cpu"))
    for key in ("training_loss", "validation_loss", "best_validation_loss", "best_validation_accuracy"):
        assert abs(theirs[key] - ours[key]) < 1e-5, key
    # each archive loads with AllenNLP's Elmo and with ours, and both predict the same
    archives = [str(tmp_path / run / "model.tar.gz") for run in ("theirs", "ours")]
    stdout = _check(
        _run([sys.executable, "-c", LOAD_SCRIPT, *archives], ROOT, os.pathsep.join([allennlp_models_path, str(ROOT)]))
    )
    loaded = json.loads(stdout.strip().splitlines()[-1])
    for archive in archives:
        (module_a, logits_a), (module_b, logits_b) = loaded[f"{archive} False"], loaded[f"{archive} True"]
        assert (module_a, module_b) == ("allennlp.modules.elmo", "elmo_tasks.modules.elmo")
        assert torch.allclose(torch.tensor(logits_a), torch.tensor(logits_b), atol=1e-5)


# ---- allennlp-models' own config tests, with the drop-in off and on: slow, in subprocesses ---


TEMPORARY_PATH = re.compile(re.escape(tempfile.gettempdir()) + r"/[^\s'\"]*")  # AllenNlpTestCase's TEST_DIR
ADDRESS = re.compile(r"0x[0-9a-f]+")  # object addresses in reprs
#: AllenNLP's reduce_on_plateau on torch 2.x, which only the drop-in fixes (bidaf_elmo, esim_elmo)
FIXED_BY_THE_DROP_IN = "unexpected keyword argument 'verbose'"


def _elmo_config_tests(source: Path) -> List[str]:
    """The node ids of allennlp-models' ``tests/training_config_test.py`` for every config that uses ELMo."""
    configs = sorted(
        path.relative_to(source).as_posix()
        for path in (source / "training_config").rglob("*.json*")
        if "elmo" in path.read_text().lower()
    )
    test = "tests/training_config_test.py::TestAllenNlpPretrainedModelConfigs::test_pretrained_configs"
    return [f"{test}[{config}]" for config in configs]


def _config_test_outcomes(source: Path, python_path: str, home: Path, plugins: str) -> Dict[str, str]:
    """Each config test's outcome, with the error's first line (temporary paths blanked), run in ``source``
    with the plugins AllenNLP finds in ``home``'s ``.allennlp/plugins``."""
    (home / ".allennlp").mkdir(parents=True, exist_ok=True)
    (home / ".allennlp" / "plugins").write_text(plugins)
    report = home / "report.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    command += ["--junitxml", str(report), *_elmo_config_tests(source)]
    completed = _run(command, source, os.pathsep.join([str(source), python_path]), HOME=str(home))
    assert report.is_file(), completed.stdout[-3000:] + completed.stderr[-3000:]
    outcomes = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = case.get("name", "")
        problem = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        if problem is None:
            outcomes[name] = "passed"
        else:
            lines = (problem.get("message") or "").splitlines()
            message = TEMPORARY_PATH.sub("<tmp>", lines[0] if lines else "")
            outcomes[name] = f"{problem.tag}: {ADDRESS.sub('0x', message)}"
    return outcomes


@pytest.mark.slow
def test_allennlp_models_elmo_config_tests_give_the_same_results_with_the_drop_in(allennlp_models_path, tmp_path):
    """allennlp-models 2.10.1's own ``training_config_test.py`` on its ELMo configs, with our plugin loaded
    and the drop-in off, then on: the same outcome for every config (offline, the configs that name
    AllenNLP's ELMo URLs, or leave them to its defaults, fail alike in both modes), except that a config
    stopped by AllenNLP's ``reduce_on_plateau`` on torch 2.x passes with the drop-in on."""
    source = os.environ.get(SOURCE_VARIABLE)
    if not source or not (Path(source) / "tests" / "training_config_test.py").is_file():
        pytest.skip(
            f"set {SOURCE_VARIABLE} to a checkout of allennlp-models v2.10.1 (its tests/, test_fixtures/ and "
            "training_config/ are not in the wheel)"
        )
    plugins = "elmo_tasks.plugin\n"
    off = _config_test_outcomes(Path(source), allennlp_models_path, tmp_path / "off", plugins)
    plugins += "elmo_tasks.modules.replace_allennlp_elmo\n"
    on = _config_test_outcomes(Path(source), allennlp_models_path, tmp_path / "on", plugins)
    assert len(off) >= 10 and on.keys() == off.keys()
    differ = {
        name: (off[name], on[name])
        for name in off
        if on[name] != off[name] and not (FIXED_BY_THE_DROP_IN in off[name] and on[name] == "passed")
    }
    assert not differ, f"(drop-in off, on) per config: {differ}"


# ---- our commands from a directory outside the repo: slow, in subprocesses -------------------


def _embed_command(
    program: List[str], tmp_path: Path, plugins: Optional[str] = None, include_package: bool = False
) -> subprocess.CompletedProcess:
    """``elmo-embed`` on two sentences, run in ``tmp_path`` (also HOME, for ``~/.allennlp/plugins``)."""
    (tmp_path / "in.txt").write_text("The cat sat .\nDogs bark .\n")
    if plugins is not None:
        (tmp_path / ".allennlp").mkdir(exist_ok=True)
        (tmp_path / ".allennlp" / "plugins").write_text(plugins)
    arguments = ["elmo-embed", "in.txt", "out.hdf5", "--options-file", OPTIONS_FILE, "--weight-file", WEIGHT_FILE]
    if include_package:
        arguments += ["--include-package", "elmo_tasks.plugin"]
    return _run(program + arguments, tmp_path, HOME=str(tmp_path))


@pytest.mark.slow
def test_our_commands_work_from_any_directory_through_elmo_tasks(tmp_path):
    for program in ([str(BIN / "elmo-tasks")], [sys.executable, "-m", "elmo_tasks"]):
        (tmp_path / "out.hdf5").unlink(missing_ok=True)
        _check(_embed_command(program, tmp_path))
        assert (tmp_path / "out.hdf5").stat().st_size > 0


@pytest.mark.slow
def test_plain_allennlp_finds_our_commands_through_the_global_plugins_file_only(tmp_path):
    without = _embed_command([str(BIN / "allennlp")], tmp_path, include_package=True)
    assert without.returncode != 0 and "invalid choice: 'elmo-embed'" in without.stderr
    _check(_embed_command([str(BIN / "allennlp")], tmp_path, plugins="elmo_tasks.plugin\n"))
    assert (tmp_path / "out.hdf5").stat().st_size > 0


@pytest.mark.slow
def test_include_package_and_the_environment_switch_train_with_our_elmo_outside_the_repo(tmp_path):
    overrides = {
        "train_data_path": str(FIXTURES_ROOT / "ner" / "train.txt"),
        "validation_data_path": str(FIXTURES_ROOT / "ner" / "dev.txt"),
        "model.text_field_embedder.token_embedders.elmo.options_file": SKIP_OPTIONS,
        "model.text_field_embedder.token_embedders.elmo.weight_file": str(BILM_TF / "lm_weights.hdf5"),
        "trainer.num_epochs": 1,
    }
    command = [str(BIN / "allennlp"), "train", NER_CONFIG, "-s", "run", "-o", json.dumps(overrides)]
    completed = _run(
        command + ["--include-package", "elmo_tasks.plugin"], tmp_path, ELMO_TASKS_REPLACE_ALLENNLP_ELMO="1"
    )
    _check(completed)
    assert SERVED_LOG_LINE in completed.stderr  # ours served it
    state = torch.load(tmp_path / "run" / "best.th", map_location="cpu")
    assert any(key.startswith("text_field_embedder.token_embedder_elmo._elmo._elmo_lstm.") for key in state)


@pytest.mark.slow
def test_the_reproduction_harness_runs_beside_allennlp_models_from_another_directory(allennlp_models_path, tmp_path):
    """The smoke budget as a user with allennlp-models installed runs it, outside the checkout, with
    relative output paths (the caller's, not the checkout's)."""
    shared_data = str((ROOT / os.environ["ELMO_TASKS_SHARED_DATA"]).resolve())  # conftest's, from the root
    command = [sys.executable, str(ROOT / "scripts" / "reproduce.py"), "ner", "--budget", "smoke"]
    command += ["--runs-dir", "runs", "--records-dir", "records", "--results", "RESULTS.md"]
    stdout = _check(_run(command, tmp_path, allennlp_models_path, ELMO_TASKS_SHARED_DATA=shared_data))
    assert "2 runs asked, 0 failed" in stdout
    for variant in ("baseline", "elmo"):
        record = json.loads((tmp_path / "records" / "ner" / variant / "seed0.json").read_text())
        assert record["metric"] == "f1-measure-overall" and 0.0 <= record["value"] <= 100.0
        evaluate_log = (tmp_path / "runs" / "ner" / variant / "seed0" / "evaluate_test.log").read_text()
        assert "Plugin allennlp_models available" in evaluate_log  # it ran beside allennlp-models
    assert "| NER |" in (tmp_path / "RESULTS.md").read_text()
