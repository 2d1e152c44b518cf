"""The `run` fixture: `allennlp elmo-embed ...` in this process, as the allennlp entry point runs it."""

import sys

import pytest
from allennlp.commands import main

from tests.conftest import OPTIONS_FILE, WEIGHT_FILE


class Done:
    def __init__(self, returncode: int, stderr: str) -> None:
        self.returncode, self.stderr = returncode, stderr


@pytest.fixture()
def run(monkeypatch, capsys):
    """Run `allennlp elmo-embed ...` in this process (as the allennlp entry point would)."""

    def _run(*args, check=True, weight_file=WEIGHT_FILE):
        argv = [
            "allennlp",
            "elmo-embed",
            *map(str, args),
            "--options-file",
            OPTIONS_FILE,
            "--weight-file",
            str(weight_file),
            "--no-progress",
        ]
        monkeypatch.setattr(sys, "argv", argv)
        code = 0
        try:
            main(prog="allennlp")
        except SystemExit as exit_:
            code = exit_.code or 0
        done = Done(code, capsys.readouterr().err)
        if check:
            assert done.returncode == 0, done.stderr[-2000:]
        return done

    return _run
