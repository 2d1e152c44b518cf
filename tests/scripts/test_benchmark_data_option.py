"""A benchmark whose ``--data`` file is missing (its default lies in the data folder) says so in one line
and how to fix it, before any work: no traceback."""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize("script", ["embed_end_to_end.py", "bilm_speed.py"])
def test_a_missing_data_file_is_named_with_what_to_do(script, tmp_path):
    env = {**os.environ, "ELMO_TASKS_SHARED_DATA": str(tmp_path / "no data here")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--sizes", "small"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    missing = tmp_path / "no data here" / "lm" / "books" / "brown" / "brown_news_a-c.txt"
    assert f"argument --data: no file {missing}: pass --data FILE, or set ELMO_TASKS_SHARED_DATA" in done.stderr
    assert "Traceback" not in done.stderr
