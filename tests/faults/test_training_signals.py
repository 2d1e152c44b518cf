"""Ctrl-C and ``kill`` during ``allennlp train`` / ``elmo-tasks train``: one line naming the command that
continues the run, and that command (``--recover``) finishes a run whose archive evaluates (issue 54)."""

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elmo_tasks.commands.allennlp_stops import stop_line
from tests.command_runs import finished
from tests.conftest import ROOT
from tests.faults.signalled import signalled

BIN = Path(sys.executable).parent
OVERRIDES = '{"trainer.num_epochs": 4, "trainer.patience": null}'


def test_the_stop_line_of_train_gives_the_command_that_continues():
    argv = ["train", "experiments/ner_baseline.jsonnet", "-s", "runs/x", "-f", "-o", "{}"]
    line = stop_line("allennlp", argv, signal.SIGTERM)
    assert line.startswith("allennlp train: stopped by SIGTERM; the checkpoints in runs/x are kept")
    assert line.endswith("continue with allennlp train experiments/ner_baseline.jsonnet -s runs/x -o '{}' --recover")
    again = stop_line("elmo-tasks", ["train", "c.jsonnet", "--serialization-dir=d", "--recover"], signal.SIGINT)
    assert again.endswith(
        "in d are kept (a model.tar.gz there holds the best epoch so far, not the finished run): "
        "continue with elmo-tasks train c.jsonnet --serialization-dir=d --recover"
    )
    assert stop_line("allennlp", ["predict", "a", "b"], signal.SIGINT) == (
        "allennlp predict: stopped by SIGINT; an output file it was writing is incomplete: run the same command again"
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background job starts with SIGINT ignored


@pytest.mark.slow  # about a minute and a half: three AllenNLP start-ups and a few epochs on the fixtures
@pytest.mark.parametrize("entry_point, signum", [("allennlp", signal.SIGINT), ("elmo-tasks", signal.SIGTERM)])
def test_a_stopped_training_says_how_to_continue_and_recover_finishes_it(tmp_path, entry_point, signum):
    run_dir = tmp_path / "run"
    command = [str(BIN / entry_point), "train", "experiments/ner_baseline.jsonnet", "-s", str(run_dir), "-o", OVERRIDES]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("ELMO_TASKS_DATA", None)  # the fixtures
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 240
        while not list(run_dir.glob("model_state_e*.th")):  # an epoch is checkpointed: mid-run
            assert process.poll() is None, process.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no checkpoint within 4 minutes"
            time.sleep(0.2)
        seconds, err = signalled(process, signum, timeout=60)
    finally:
        process.kill()
    assert seconds < 30
    assert process.returncode == 128 + signum, err[-3000:]
    last = err.strip().splitlines()[-1]
    name = signal.Signals(signum).name
    assert last.startswith(f"{entry_point} train: stopped by {name}; the checkpoints in {run_dir} are kept"), last
    assert "Traceback" not in err
    assert not (run_dir / "metrics.json").exists()  # not finished, and not made to look finished
    again = shlex.split(last.split("continue with ", 1)[1])
    assert again[0] == entry_point and again[-1] == "--recover"
    again[0] = str(BIN / entry_point)  # the tests run without the virtualenv's bin on PATH
    finished(again, ROOT, env)
    assert (run_dir / "metrics.json").exists()
    evaluated = finished(
        [str(BIN / "allennlp"), "evaluate", str(run_dir / "model.tar.gz"), "fixtures/ner/test.txt"], ROOT, env
    )
    assert "f1-measure-overall" in evaluated.stdout + evaluated.stderr
