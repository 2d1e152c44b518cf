"""``sentences_read_aside``: the sentences a forked child reads arrive in order, its errors are raised
here as they were raised there, and the child is gone when the context ends, however it ends."""

import os
import signal
import subprocess
import sys

import pytest

from elmo_tasks.bilm.raw_text import TextPathError
from elmo_tasks.bilm.reading_child import SENTENCES_PER_MESSAGE, ReadingChildError, sentences_read_aside
from tests.conftest import ROOT

COUNT = 2 * SENTENCES_PER_MESSAGE + 3  # three messages, the last one short


def _numbered():
    for number in range(COUNT):
        yield [f"word{number}", "and", "more"]


def _failing_after_two():
    yield ["one"]
    yield ["two"]
    raise TextPathError("text.txt, line 3: bytes that are not UTF-8")


class _Unpicklable(Exception):
    def __init__(self):
        super().__init__("held a lock")
        self.lock = __import__("threading").Lock()


def _unpicklable():
    raise _Unpicklable()
    yield  # a generator, as the reader is


def _killed_after_one_message():
    """The child is killed (as by ``kill -9`` or the out-of-memory killer) after its first message."""
    yield from _numbered()
    os.kill(os.getpid(), signal.SIGKILL)


def _children():
    """This process's children (earlier tests may have left some of their own)."""
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children", encoding="ascii") as listed:
        return set(listed.read().split())


def test_every_sentence_arrives_in_order():
    before = _children()
    with sentences_read_aside(_numbered) as sentences:
        received = list(sentences)
    assert received == list(_numbered())
    assert _children() == before


def test_an_error_of_the_reading_is_raised_here_after_the_sentences_before_it():
    received = []
    before = _children()
    with (
        pytest.raises(TextPathError, match="text.txt, line 3: bytes that are not UTF-8"),
        sentences_read_aside(_failing_after_two) as sentences,
    ):
        for sentence in sentences:
            received.append(sentence)
    assert received == [["one"], ["two"]]
    assert _children() == before


def test_an_error_that_cannot_travel_is_named():
    with (
        pytest.raises(RuntimeError, match="_Unpicklable: held a lock"),
        sentences_read_aside(_unpicklable) as sentences,
    ):
        list(sentences)


def test_a_child_killed_midway_is_one_error_here_not_a_short_text():
    received = []
    with (
        pytest.raises(ReadingChildError, match="ended before the text did"),
        sentences_read_aside(_killed_after_one_message) as sentences,
    ):
        for sentence in sentences:
            received.append(sentence)
    assert received == list(_numbered())[: 2 * SENTENCES_PER_MESSAGE]  # the messages sent, nothing more


def test_a_reader_left_early_is_stopped():
    before = _children()
    with sentences_read_aside(_numbered) as sentences:
        assert next(iter(sentences)) == ["word0", "and", "more"]
        assert len(_children() - before) == 1
    assert _children() == before


def test_the_child_holds_torch_out_and_the_parent_does_not_import_it():
    """In a process that has not imported torch, the child reads with torch held out of imports."""
    script = (
        "import sys\n"
        "from elmo_tasks.bilm.reading_child import sentences_read_aside\n"
        "def read():\n"
        "    try:\n"
        "        import torch  # noqa: F401\n"
        "        yield ['imported']\n"
        "    except ImportError:\n"
        "        yield ['held', 'out']\n"
        "with sentences_read_aside(read) as sentences:\n"
        "    print(list(sentences), 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[['held', 'out']] False"
