"""scripts/reproduce.py: the results table, and (slow) one fixture-mode run end to end."""

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _reproduce_module():
    spec = importlib.util.spec_from_file_location("reproduce", ROOT / "scripts" / "reproduce.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(variant: str, value: float, seed: int) -> dict:
    return {
        "variant": variant,
        "value": value,
        "seed": seed,
        "data": "full",
        "train_seconds": 120.0,
        "commands": [f"train {variant} {seed}", f"evaluate {variant} {seed}"],
    }


def test_table_has_mean_std_and_paper_numbers_and_replaces_itself(tmp_path):
    reproduce = _reproduce_module()
    records = [_record("baseline", 80.0, 0), _record("baseline", 82.0, 1), _record("elmo", 85.0, 0)]
    table = reproduce.render_table("snli", records)
    assert "| baseline | 2 | 81.00 ± 1.41 | 88.0 | 2.0 min | full |" in table  # stdev(80, 82) = 1.414
    assert "| elmo | 1 | 85.00 | 88.7 ± 0.17 | 2.0 min | full |" in table
    assert "train baseline 1" in table
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\nintro kept\n")
    reproduce.update_results(results, "snli", table)
    reproduce.update_results(results, "snli", reproduce.render_table("snli", records[:1]))
    text = results.read_text()
    assert "intro kept" in text and text.count("<!-- reproduce:snli:start -->") == 1
    assert "| baseline | 1 | 80.00 |" in text and "| elmo |" not in text


@pytest.mark.slow
def test_fixture_mode_end_to_end(tmp_path):
    results = tmp_path / "RESULTS.md"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "reproduce.py"),
            "snli",
            "--seeds",
            "1",
            "--data",
            "fixtures",
            "--epochs",
            "1",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--results",
            str(results),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    records = json.loads((tmp_path / "runs" / "snli" / "results.json").read_text())
    assert [r["variant"] for r in records] == ["baseline", "elmo"]
    assert all(0.0 <= r["value"] <= 100.0 for r in records)
    assert "| elmo | 1 |" in results.read_text()


def test_completed_runs_are_found_only_with_the_same_settings(tmp_path):
    import argparse

    reproduce = _reproduce_module()
    run_dir = tmp_path / "snli" / "elmo" / "seed1"
    run_dir.mkdir(parents=True)
    record = {"variant": "elmo", "data": "full", "epochs": None, "overrides": {"trainer.num_epochs": 8}}
    (run_dir / "reproduce.json").write_text(json.dumps(record))
    args = argparse.Namespace(runs_dir=str(tmp_path), data="full", epochs=None, overrides={"trainer.num_epochs": 8})
    assert reproduce.completed("snli", "elmo", 1, args) is None  # no test metrics yet: not finished
    (run_dir / "test_metrics.json").write_text("{}")
    assert reproduce.completed("snli", "elmo", 1, args) == record
    assert reproduce.completed("snli", "elmo", 0, args) is None
    assert reproduce.completed("snli", "elmo", 1, argparse.Namespace(**{**vars(args), "epochs": 3})) is None
    other = argparse.Namespace(**{**vars(args), "overrides": {"trainer.num_epochs": 9}})
    assert reproduce.completed("snli", "elmo", 1, other) is None


def test_overrides_must_be_a_json_object():
    reproduce = _reproduce_module()
    assert reproduce._json_object('{"trainer.num_epochs": 2}') == {"trainer.num_epochs": 2}
    for bad in ("[1, 2]", "{not json"):
        with pytest.raises(Exception, match="--overrides"):
            reproduce._json_object(bad)


def test_table_lists_the_config_overrides_of_its_runs():
    reproduce = _reproduce_module()
    records = [
        {**_record("baseline", 80.0, 0), "overrides": {"trainer.num_epochs": 8}},
        {**_record("elmo", 81.0, 0), "overrides": {"trainer.num_epochs": 8}},
    ]
    table = reproduce.render_table("snli", records)
    assert table.count('- `{"trainer.num_epochs": 8}`') == 1
    assert "overrides" not in reproduce.render_table("snli", [_record("baseline", 80.0, 0)])
