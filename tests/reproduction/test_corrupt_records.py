"""A run record cut short, not JSON, or without a field the report reads ends ``reproduce.py`` with one line.

Records are copies of a committed one, broken here; ``--report-only`` reads them all, before it
resolves a config or trains anything, so each case takes well under a second.
"""

import json
import re
from pathlib import Path
from typing import Callable

import pytest

from elmo_tasks.reproduction import main
from elmo_tasks.reproduction.allennlp_runs import RunFailed
from elmo_tasks.reproduction.records import RecordError, kept_record, read_record
from tests.conftest import ROOT

COMMITTED = ROOT / "docs" / "results" / "records" / "mini" / "ner" / "baseline" / "seed0.json"
REMEDY = "restore it (`git checkout -- FILE` for a committed record) or delete it to run that run again"


def _records(tmp_path: Path, change: Callable[[str], bytes]) -> Path:
    """A records folder with the committed NER baseline seed-0 record, changed by ``change`` (text -> bytes)."""
    path = tmp_path / "records" / "ner" / "baseline" / "seed0.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(change(COMMITTED.read_text(encoding="utf-8")))
    return path


def _with(field: str, value: object) -> Callable[[str], bytes]:
    def change(text: str) -> bytes:
        record = json.loads(text)
        record[field] = value
        return json.dumps(record).encode()

    return change


def _without(field: str) -> Callable[[str], bytes]:
    def change(text: str) -> bytes:
        record = json.loads(text)
        del record[field]
        return json.dumps(record).encode()

    return change


CASES = {
    "cut short": (
        lambda text: text[: len(text) // 2].encode(),
        r"seed0\.json, line \d+: not valid JSON \(.*\) \(the file ends too early: cut short\?\); expected a run record",
    ),
    "not UTF-8": (lambda text: b"\xff" + text.encode(), r"seed0\.json is not UTF-8 text; expected a run record"),
    "an array": (lambda text: b"[]", r"seed0\.json holds an array instead of a JSON object; expected a run record"),
    "no value": (_without("value"), r"seed0\.json has no field 'value'; expected a run record written by"),
    "no version": (_without("record_version"), r"seed0\.json has no field 'record_version'; expected a run record"),
    "seed as text": (_with("seed_index", "0"), r"seed0\.json: field 'seed_index' is a string; expected a number, as"),
    "unknown task": (_with("task", "pos"), r"seed0\.json: task 'pos' is none of squad, snli, srl, coref, ner, sst5;"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_report_ends_with_one_line_naming_the_record(case, tmp_path, capsys):
    change, expected = CASES[case]
    path = _records(tmp_path, change)
    asked = ["ner", "--budget", "mini", "--report-only", "--records-dir", str(tmp_path / "records")]
    assert main([*asked, "--results", str(tmp_path / "RESULTS.md")]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert lines[0].startswith(f"reproduce.py: error: {path}"), lines[0]
    assert re.search(expected, lines[0]), lines[0]
    assert lines[0].endswith(REMEDY) and not (tmp_path / "RESULTS.md").exists()


def test_a_broken_kept_record_fails_its_run_only(tmp_path):
    """The harness reads a kept record to decide whether to reuse its run: a RunFailed, so the others go on."""
    path = _records(tmp_path, lambda text: text[:100].encode())
    with pytest.raises(RecordError) as refused:
        kept_record(tmp_path / "records", "ner", "baseline", "seed0", {})
    assert isinstance(refused.value, RunFailed) and str(refused.value).startswith(f"{path}, line ")


def test_a_sound_record_and_an_older_version_read_as_before(tmp_path):
    assert read_record(COMMITTED)["task"] == "ner"
    older = _records(tmp_path, lambda text: json.dumps({"record_version": 1, "task": "ner"}).encode())
    assert read_record(older) == {"record_version": 1, "task": "ner"}  # reuse checks only its version
    with pytest.raises(RecordError, match="has no field 'variant'"):
        read_record(older, every_field=True)  # the report reads every field
