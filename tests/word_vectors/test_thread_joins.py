"""Waiting for gensim's worker threads at the end of training or after a stop: a thread that another
thread has just started, and that is not running yet, cannot be joined (``RuntimeError``); the wait
tries again until it can, instead of ending the command with a traceback (seen once in CI, on a SIGINT)."""

import threading

from elmo_tasks.word_vectors import train


class _StartingThread:
    """A thread as ``threading.enumerate`` can list it while it starts: its first joins raise."""

    def __init__(self, refusals: int) -> None:
        self.refusals, self.joins = refusals, 0

    def join(self, timeout: float) -> None:
        self.joins += 1
        if self.joins <= self.refusals:
            raise RuntimeError("cannot join thread before it is started")


def test_a_thread_not_yet_running_is_joined_once_it_runs(monkeypatch):
    starting = _StartingThread(refusals=3)
    monkeypatch.setattr(threading, "enumerate", lambda: [threading.current_thread(), starting])
    train._join_threads_started_since(set(), seconds=5.0)
    assert starting.joins == 4


def test_a_thread_that_never_runs_is_given_up_at_the_deadline(monkeypatch):
    never = _StartingThread(refusals=10**9)
    monkeypatch.setattr(threading, "enumerate", lambda: [never])
    train._join_threads_started_since(set(), seconds=0.05)
    assert 1 < never.joins < 10**9
