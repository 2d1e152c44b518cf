"""The thread policy (elmo_tasks.threads): --threads, then OMP_NUM_THREADS, then one thread."""

import os
import subprocess
import sys

import pytest
import torch

from elmo_tasks.threads import ThreadSettingError, apply_thread_policy, chosen_threads, chosen_workers, usable_cores
from tests.conftest import ROOT


def test_an_explicit_count_wins_then_omp_num_threads_then_one(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert chosen_threads(3) == 3
    assert chosen_threads() is None  # torch read OMP_NUM_THREADS at start-up: leave it
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert chosen_threads() == 1
    with pytest.raises(ThreadSettingError, match="--threads must be at least 1"):
        chosen_threads(0)


def test_a_users_omp_num_threads_is_left_as_torch_set_it(monkeypatch):
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        assert apply_thread_policy() == 2
        monkeypatch.delenv("OMP_NUM_THREADS")
        assert apply_thread_policy() == 1
        assert apply_thread_policy(2) == 2
    finally:
        torch.set_num_threads(previous)


def test_workers_default_to_the_usable_cores_unless_the_user_chose_threads(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert chosen_workers(None, None, batches=1000) == usable_cores()
    assert chosen_workers(None, None, batches=1) == 1
    assert chosen_workers(None, 2, batches=1000) == 1
    assert chosen_workers(3, 1, batches=1) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert chosen_workers(None, None, batches=1000) == 1
    with pytest.raises(ThreadSettingError, match="each worker process runs one thread"):
        chosen_workers(2, 2, batches=10)
    with pytest.raises(ThreadSettingError, match="--workers must be at least 1"):
        chosen_workers(0, None, batches=10)


def test_loading_the_plugin_sets_one_thread():
    """What `allennlp train/evaluate/predict` get without OMP_NUM_THREADS (torch's default is one per core)."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    code = "import torch; torch.set_num_threads(2); import elmo_tasks.plugin; print(torch.get_num_threads())"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().split("\n")[-1] == "1"
