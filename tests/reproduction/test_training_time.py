import json
import signal
import subprocess
import sys
import time

import pytest

from elmo_tasks.reproduction.training_time import seconds_spent, timed_sitting

# a sitting that trains "forever" and writes its time every 0.05 s; the test kills it as a session end would
KILLED_SITTING = """
import sys, time
from pathlib import Path
from elmo_tasks.reproduction.training_time import timed_sitting
with timed_sitting(Path(sys.argv[1]), restart=False, every_seconds=0.05):
    print("training", flush=True)
    time.sleep(600)
"""


def test_a_killed_sitting_keeps_its_time_and_the_next_one_adds_to_it(tmp_path):
    spent_file = tmp_path / "seed0.train_seconds.json"
    spent_file.write_text(json.dumps([12.5]))  # a first sitting that ended normally
    command = [sys.executable, "-c", KILLED_SITTING, str(spent_file)]
    sitting = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert sitting.stdout is not None and sitting.stdout.readline() == "training\n"
    time.sleep(0.6)
    sitting.send_signal(signal.SIGKILL)
    sitting.wait()
    earlier, killed = json.loads(spent_file.read_text())
    assert earlier == 12.5 and 0.3 <= killed <= 5.0

    with timed_sitting(spent_file, restart=False, every_seconds=60):
        time.sleep(0.2)
    sittings = json.loads(spent_file.read_text())
    assert sittings[:2] == [12.5, killed] and len(sittings) == 3 and 0.2 <= sittings[2] < 5.0
    assert seconds_spent(spent_file) == pytest.approx(sum(sittings))
    assert not list(tmp_path.glob("*.partial"))


def test_a_restart_forgets_earlier_sittings_and_a_failed_one_still_counts(tmp_path):
    spent_file = tmp_path / "seed1.train_seconds.json"
    spent_file.write_text(json.dumps([100.0, 50.0]))
    with pytest.raises(RuntimeError), timed_sitting(spent_file, restart=True):
        time.sleep(0.1)
        raise RuntimeError("allennlp train failed")
    (only,) = json.loads(spent_file.read_text())
    assert 0.1 <= only < 5.0
    assert seconds_spent(tmp_path / "never_trained.json") == 0.0


def test_a_damaged_file_names_itself_and_what_to_do(tmp_path):
    spent_file = tmp_path / "seed2.train_seconds.json"
    spent_file.write_text(json.dumps({"seconds": 3}))
    with pytest.raises(ValueError, match="seed2.train_seconds.json: expected a JSON list of seconds.*delete the file"):
        seconds_spent(spent_file)
