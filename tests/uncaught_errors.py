"""What a command that ends on an uncaught exception prints, with elmo_tasks' error lines installed."""

import sys
from typing import Any, Callable
from unittest import mock

import pytest

from elmo_tasks.input_errors import install_input_error_lines


def uncaught_error_line(capsys: pytest.CaptureFixture[str], command: Callable[[], Any]) -> str:
    """Runs ``command``, which must raise; hands the exception to ``sys.excepthook`` with
    :func:`install_input_error_lines` installed, as Python does when a program ends on it, and returns
    the one line it printed, ``allennlp: error: ...`` (asserting that it printed one line and no traceback)."""
    with pytest.raises(Exception) as raised:
        command()
    capsys.readouterr()  # what the command printed before it failed
    install_input_error_lines()  # tests/conftest.py puts the hook back after the test
    with mock.patch.object(sys, "argv", ["allennlp"]):  # the program's name the line starts with
        sys.excepthook(raised.type, raised.value, raised.tb)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err[-3000:]
    return lines[0]
