"""``allennlp train`` / ``elmo-tasks train`` with an experiment file it cannot read: one line, exit status 2.

Before, each case below ended in a traceback from AllenNLP's file cache (``FileNotFoundError: file
missing.jsonnet not found``) or from jsonnet (``RuntimeError: STATIC ERROR ...``).
"""

import subprocess

import pytest

from tests.command_runs import elmo_tasks_exit_status
from tests.conftest import ROOT

ELMO_TASKS = str(ROOT / ".venv" / "bin" / "elmo-tasks")


def _train(argv, monkeypatch, capsys):
    """``elmo-tasks train ARGV...`` in this process (the same prepared command as ``allennlp train``):
    its exit status and the last line of its stderr."""
    status = elmo_tasks_exit_status(["train", *argv], monkeypatch)
    return status, capsys.readouterr().err.strip().splitlines()[-1]


def test_a_missing_experiment_file_is_one_line_naming_the_folder_it_was_looked_for_in(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, line = _train(["missing.jsonnet", "-s", str(tmp_path / "run")], monkeypatch, capsys)
    assert status == 2
    assert line == (
        f"elmo-tasks train: error: missing.jsonnet (from {tmp_path}): no such experiment file; "
        "give the path of a .jsonnet or .json config"
    )
    assert not (tmp_path / "run").exists()


def test_a_folder_for_the_experiment_says_to_give_the_file(tmp_path, monkeypatch, capsys):
    status, line = _train([str(tmp_path), "-s", str(tmp_path / "run")], monkeypatch, capsys)
    assert status == 2
    assert (
        line == f"elmo-tasks train: error: {tmp_path} is a folder; give the experiment file itself (.jsonnet or .json)"
    )


@pytest.mark.parametrize(
    "text, says",
    [
        ('{"a": 1,,}', 'does not evaluate as written: STATIC ERROR: {path}:1:9: unexpected: ","'),
        (
            '{a: std.extVar("NO_SUCH_VARIABLE")}',
            "does not evaluate as written: RUNTIME ERROR: undefined external variable: NO_SUCH_VARIABLE",
        ),
    ],
)
def test_a_config_jsonnet_cannot_evaluate_names_the_file_line_and_column(tmp_path, monkeypatch, capsys, text, says):
    experiment = tmp_path / "broken.jsonnet"
    experiment.write_text(text, encoding="utf-8")
    status, line = _train([str(experiment), "-s", str(tmp_path / "run")], monkeypatch, capsys)
    assert status == 2
    assert line.startswith(f"elmo-tasks train: error: {experiment} " + says.format(path=experiment))
    assert not (tmp_path / "run").exists()


def test_overrides_that_do_not_evaluate_are_named_as_the_overrides(tmp_path, monkeypatch, capsys):
    experiment = ROOT / "experiments" / "ner_baseline.jsonnet"
    status, line = _train([str(experiment), "-s", str(tmp_path / "run"), "-o", "{bad"], monkeypatch, capsys)
    assert status == 2
    assert line.startswith(f"elmo-tasks train: error: {experiment} does not evaluate with the overrides given by -o: ")
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_through_the_real_entry_point_from_another_folder(tmp_path):
    finished = subprocess.run(
        [ELMO_TASKS, "train", "missing.jsonnet", "-s", "run"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 2
    assert finished.stderr.strip().splitlines()[-1].startswith("elmo-tasks train: error: missing.jsonnet (from ")
    assert "Traceback" not in finished.stderr
    assert not (tmp_path / "run").exists()
