"""One spec per task (``elmo_tasks/tasks/<task>/spec.py``), read by the harness, the report, the demo and the
commands: every task folder has one, every spec's experiment files exist, and a seventh task joins them all
with its folder and experiment files alone (docs/CONVENTIONS.md, "Adding a task")."""

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Iterator

import pytest
from allennlp.common.registrable import Registrable
from allennlp.models import Model

import elmo_tasks.tasks
from elmo_tasks.commands.command_paths import TASK_COMMANDS, CommandPathError, check_archive_task, describe_archive
from elmo_tasks.demo.task_pages import TASKS as DEMO_TASKS
from elmo_tasks.demo.task_pages import task_of_predictor
from elmo_tasks.reproduction.cli import parse_args
from elmo_tasks.reproduction.notes import task_notes
from elmo_tasks.reproduction.plan import Plan
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.tasks.registry import NOT_BENCHMARKS, TaskSpecError, benchmark_specs
from tests.conftest import ROOT

TASKS_FOLDER = ROOT / "elmo_tasks" / "tasks"
# The paper's Table 1, in its order: the report's, the harness's and the demo's.
TABLE_1 = ["squad", "snli", "srl", "coref", "ner", "sst5"]

TOY_PACKAGE = '''"""A toy task: a model class whose predictor is the task."""

from allennlp.models import Model


@Model.register("toy_model")
class ToyModel(Model):
    default_predictor = "toy"
'''
TOY_SPEC = '''"""The toy task's spec, as a new task's folder has it."""

from elmo_tasks.demo.task_pages import DemoPage, FormField
from elmo_tasks.reproduction.notes import TaskNotes
from elmo_tasks.reproduction.task_table import mini_budget, paper_budget, task_spec
from elmo_tasks.tasks.registry import BenchmarkSpec

SPEC = BenchmarkSpec(
    key="toy",
    table1_row=None,
    reproduction=task_spec(
        "toy",
        name="Toy",
        metric="accuracy",
        metric_name="accuracy",
        paper=(50.0, 60.0),
        elmo_at="input",
        mini=mini_budget({"trainer.num_epochs": 2}),
        full=paper_budget("glove.6B.50d.txt", {}),
    ),
    report=TaskNotes(title="A toy task, test accuracy", notes={"mini": "Trained on nothing much."}),
    demo=DemoPage("A toy task", "its label", [FormField("sentence", "Sentence", "A toy sentence .")]),
    archive_holds="a toy model",
    archive_command="evaluate",
)
'''


def _add_task_folders(monkeypatch, extra: Path) -> None:
    """``extra``'s subfolders become task folders, as folders of elmo_tasks/tasks are."""
    monkeypatch.setattr(elmo_tasks.tasks, "__path__", [*elmo_tasks.tasks.__path__, str(extra)])


@pytest.fixture
def extra_tasks(tmp_path, monkeypatch) -> Iterator[Path]:
    """A folder for new task folders, seen by the registry; what a test imports from it is forgotten after it."""
    extra = tmp_path / "more_tasks"
    extra.mkdir()
    _add_task_folders(monkeypatch, extra)
    yield extra
    for folder in extra.iterdir():
        package = f"elmo_tasks.tasks.{folder.name}"
        for loaded in [name for name in sys.modules if name == package or name.startswith(f"{package}.")]:
            del sys.modules[loaded]
        if hasattr(elmo_tasks.tasks, folder.name):
            delattr(elmo_tasks.tasks, folder.name)
    Registrable._registry[Model].pop("toy_model", None)  # the toy package's model


def _write_toy_task(extra: Path) -> Path:
    """The toy task's folder, and its experiment files under a checkout-like root (returned)."""
    (extra / "toy").mkdir()
    (extra / "toy" / "__init__.py").write_text(TOY_PACKAGE)
    (extra / "toy" / "spec.py").write_text(TOY_SPEC)
    return extra.parent / "checkout"


def _write_toy_experiments(root: Path) -> None:
    (root / "elmo_tasks" / "experiments").mkdir(parents=True)
    (root / "elmo_tasks" / "experiments" / "toy.libsonnet").write_text("{ data:: {}, config(elmo):: {} }\n")
    (root / "experiments").mkdir()
    for variant, elmo in (("baseline", "false"), ("elmo", "true")):
        (root / "experiments" / f"toy_{variant}.jsonnet").write_text(f"(import 'toy.libsonnet').config(elmo={elmo})\n")


def test_every_task_folder_has_its_spec_and_every_spec_its_experiment_files():
    folders = {path.parent.name for path in TASKS_FOLDER.glob("*/__init__.py")}
    with_spec = {path.parent.name for path in TASKS_FOLDER.glob("*/spec.py")}
    assert folders - set(NOT_BENCHMARKS) == with_spec  # lm, the biLM, is the one folder without
    assert not set(NOT_BENCHMARKS) & with_spec
    specs = benchmark_specs()
    assert list(specs) == TABLE_1 and [spec.table1_row for spec in specs.values()] == [1, 2, 3, 4, 5, 6]
    for key, spec in specs.items():
        assert spec.missing_files() == [], key
        assert spec.reproduction.configs == {
            "baseline": f"experiments/{key}_baseline.jsonnet",
            "elmo": f"experiments/{key}_elmo.jsonnet",
        }


def test_every_reader_of_the_specs_has_every_task_in_table_1s_order():
    assert list(TASKS) == TABLE_1
    assert [task.name for task in DEMO_TASKS] == TABLE_1
    assert [task.predictor for task in DEMO_TASKS] == TABLE_1
    assert set(TASK_COMMANDS) == set(TABLE_1)
    assert TASK_COMMANDS["srl"] == (
        "an SRL model: use `allennlp srl-props` or `allennlp predict {archive} INPUT --predictor srl`"
    )
    assert [task_notes(key).title for key in TABLE_1] == [spec.report.title for spec in benchmark_specs().values()]


def test_the_reference_tables_experiments_row_names_every_tasks_configs():
    """The docs' table of the tasks (docs/REFERENCE.md, "Experiments"; the README links it) has every spec's."""
    text = (ROOT / "docs" / "REFERENCE.md").read_text(encoding="utf-8")
    table = text.split("\n## Experiments\n", 1)[1].split("\n## ", 1)[0]
    for spec in benchmark_specs().values():
        row = next((line for line in table.splitlines() if f"`{spec.reproduction.configs['elmo']}`" in line), None)
        assert row is not None, spec.key
        assert f"`{Path(spec.reproduction.configs['baseline']).name}`" in row, spec.key


def test_a_seventh_task_joins_by_its_folder_and_experiment_files_alone(extra_tasks, tmp_path):
    checkout = _write_toy_task(extra_tasks)
    assert "toy" in benchmark_specs()
    # the harness plans its runs, after the six
    args, tasks = parse_args(["all", "--budget", "mini"])
    assert tasks == [*TABLE_1, "toy"]
    args, tasks = parse_args(["toy", "--budget", "smoke", "--runs-dir", str(tmp_path / "runs")])
    plan = Plan(args)
    jobs = plan.jobs(tasks)
    assert [(job.task, job.variant, job.seed_index) for job in jobs] == [("toy", "baseline", 0), ("toy", "elmo", 0)]
    assert plan.paths(jobs[1]).run_dir == tmp_path / "runs" / "toy" / "elmo" / "seed0"
    assert TASKS["toy"].budgets["mini"].overrides == {"trainer.num_epochs": 2}
    assert task_notes("toy").note("mini") == "Trained on nothing much."
    # the demo lists its page, after the six
    assert [task.name for task in DEMO_TASKS] == [*TABLE_1, "toy"]
    toy_page = task_of_predictor("toy")
    assert toy_page is not None and toy_page.example() == {"sentence": "A toy sentence ."}
    # the commands know what its archives are
    assert (
        TASK_COMMANDS["toy"]
        == "a toy model: use `allennlp evaluate` or `allennlp predict {archive} INPUT --predictor toy`"
    )
    archive = tmp_path / "toy_archive"
    archive.mkdir()
    (archive / "config.json").write_text(json.dumps({"model": {"type": "toy_model"}}))
    assert describe_archive(str(archive), "toy_model").startswith("`toy_model`, a toy model: use `allennlp evaluate`")
    with pytest.raises(CommandPathError, match="holds `toy_model`, a toy model: .*`allennlp srl-props` needs an SRL"):
        check_archive_task(str(archive), "srl-props", "srl")
    # its spec is whole once its experiment files are there
    assert len(benchmark_specs()["toy"].missing_files(checkout)) == 3
    _write_toy_experiments(checkout)
    assert benchmark_specs()["toy"].missing_files(checkout) == []


def test_the_task_folders_are_the_six_again_once_the_added_folder_is_gone(extra_tasks, monkeypatch):
    _write_toy_task(extra_tasks)
    assert list(TASKS)[-1] == "toy"
    monkeypatch.setattr(elmo_tasks.tasks, "__path__", elmo_tasks.tasks.__path__[:-1])
    assert list(TASKS) == TABLE_1 and "toy" not in TASK_COMMANDS


def test_a_spec_that_names_a_missing_experiment_file_names_it():
    spec = benchmark_specs()["ner"]
    elsewhere = Path("/nonexistent")
    assert spec.missing_files(elsewhere) == [
        f"ner: its spec names {file}, which is not in {elsewhere}; expected the task's experiment files "
        '(docs/CONVENTIONS.md, "Adding a task")'
        for file in (
            "elmo_tasks/experiments/ner.libsonnet",
            "experiments/ner_baseline.jsonnet",
            "experiments/ner_elmo.jsonnet",
        )
    ]


def test_a_task_folder_without_its_spec_fails_naming_the_folder(extra_tasks):
    (extra_tasks / "half_done").mkdir()
    (extra_tasks / "half_done" / "__init__.py").write_text("")
    expected = f"{extra_tasks / 'half_done'}: a task folder without spec.py; expected spec.py defining SPEC"
    with pytest.raises(TaskSpecError, match=re.escape(expected)):
        benchmark_specs()
    with pytest.raises(TaskSpecError):
        list(TASKS)  # every reader of the specs fails alike


def test_a_spec_module_without_a_spec_fails_naming_its_file(extra_tasks):
    (extra_tasks / "wrong").mkdir()
    (extra_tasks / "wrong" / "__init__.py").write_text("")
    (extra_tasks / "wrong" / "spec.py").write_text("SPEC = {'key': 'wrong'}\n")
    with pytest.raises(TaskSpecError, match=r"wrong/spec.py: SPEC is dict; expected SPEC = BenchmarkSpec\(...\)"):
        benchmark_specs()


def test_two_folders_of_one_task_fail(extra_tasks):
    (extra_tasks / "ner_again").mkdir()
    (extra_tasks / "ner_again" / "__init__.py").write_text("")
    (extra_tasks / "ner_again" / "spec.py").write_text(
        "from elmo_tasks.tasks.ner.spec import SPEC as NER\nSPEC = NER\n"
    )
    with pytest.raises(TaskSpecError, match="two task folders' spec.py define the task 'ner'"):
        benchmark_specs()


def test_a_tests_replaced_part_lasts_until_it_is_set_back():
    own = benchmark_specs()["ner"].reproduction
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(TASKS, "ner", dataclasses.replace(own, name="NER, replaced"))
        assert TASKS["ner"].name == "NER, replaced" and list(TASKS) == TABLE_1  # in its place
        patch.setitem(TASKS, "more", own)
        assert list(TASKS) == [*TABLE_1, "more"]
    assert TASKS["ner"] is own and list(TASKS) == TABLE_1
    with pytest.raises(KeyError, match="'ner' is not a replaced part"):
        del TASKS["ner"]
