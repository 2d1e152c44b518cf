"""The thread policy (elmo_tasks.threads): --threads, then OMP_NUM_THREADS, then one thread.

Where it is applied (every command's start, never the plugin's import): tests/test_import_side_effects.py.
"""

import pytest
import torch

from elmo_tasks.threads import ThreadSettingError, apply_thread_policy, chosen_threads, chosen_workers, usable_cores


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
