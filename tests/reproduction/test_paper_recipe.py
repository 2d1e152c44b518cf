"""The experiment files resolve to the paper's recipe (elmo_tasks/reproduction/paper_recipe/<task>.toml)
in ``full`` mode, and docs/PAPER.md's audit table names every setting the recipe table checks."""

import tomllib
from typing import Any, Dict, List

import pytest

from elmo_tasks.reproduction.configs import resolved_config
from elmo_tasks.reproduction.task_table import TASKS
from tests.conftest import ROOT
from tests.reproduction.test_paper_budget import AUDIT_SECTIONS

RECIPES = ROOT / "elmo_tasks" / "reproduction" / "paper_recipe"
PAPER_MD = ROOT / "docs" / "PAPER.md"
TABLE_HEADINGS = AUDIT_SECTIONS  # each task's table in docs/PAPER.md


def _rows() -> Dict[str, List[Dict[str, Any]]]:
    """task -> its recipe rows, one file per task."""
    rows = {}
    for path in sorted(RECIPES.glob("*.toml")):
        with path.open("rb") as handle:
            rows[path.stem] = tomllib.load(handle)["setting"]
    return rows


def _value(config: Dict[str, Any], dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        node = node[part]
    return node


def _audit_rows(task: str) -> List[str]:
    """The setting names of the task's table in docs/PAPER.md."""
    text = PAPER_MD.read_text(encoding="utf-8")
    section = text[text.index(TABLE_HEADINGS[task]) :]
    section = section[: section.index("\n### ", 1)]
    return [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")]


@pytest.mark.parametrize("task", sorted(_rows()))
def test_the_full_configs_are_the_papers_recipe(task):
    assert task in TASKS and task in TABLE_HEADINGS, task
    configs = {variant: resolved_config(path, "full", {}, {}) for variant, path in TASKS[task].configs.items()}
    wrong = []
    for row in _rows()[task]:
        for variant in row.get("variants", list(configs)):
            found = _value(configs[variant], row["key"])
            if found != row["value"]:
                wrong.append(f"{variant} {row['key']}: {found!r}, the paper's is {row['value']!r} ({row['source']})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("task", sorted(_rows()))
def test_papers_audit_table_has_a_row_for_each_checked_setting(task):
    named = set(_audit_rows(task))
    missing = sorted({row["audit_row"] for row in _rows()[task]} - named)
    assert not missing, f"docs/PAPER.md's {TABLE_HEADINGS[task]} table lacks the rows {missing}"


def test_a_drifted_setting_is_caught():
    """Negative control: the same check on a config with one size changed reports that size."""
    config = resolved_config(TASKS["ner"].configs["elmo"], "full", {"model.encoder.hidden_sizes": [200, 200]}, {})
    row = next(row for row in _rows()["ner"] if row["key"] == "model.encoder.hidden_sizes")
    assert _value(config, row["key"]) != row["value"]


def test_every_row_is_complete():
    for task, rows in _rows().items():
        for row in rows:
            assert {"key", "value", "source", "audit_row"} <= set(row), (task, row)
            assert set(row.get("variants", [])) <= {"baseline", "elmo"}, (task, row)
