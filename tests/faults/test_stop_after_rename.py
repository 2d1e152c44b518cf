"""A Ctrl-C or SIGTERM in the instant after a command renamed its output into place: the stop line says the
output is complete, not that it was not written (issue 54).

The signal is raised from inside ``os.replace``, right after (or, for the negative control, right before)
the real rename of the output, so the instant is hit every time, not by timing luck.
"""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import pytest

from elmo_tasks.atomic_files import WholeFile
from elmo_tasks.stopping import output_files_outcome, writing_output_file
from tests.conftest import ROOT

EARLIER = b"an earlier output\n"


def _signal_at_rename(monkeypatch, destination: Path, when: str, signum: int = signal.SIGTERM) -> None:
    """``os.replace`` onto ``destination`` raises ``signum`` in this thread ``when`` ("after" or "before")
    it renames; Python runs the handler at its next instruction, so before anything else the command does."""
    real_replace = os.replace
    target = os.path.realpath(destination)

    def replace_with_signal(source, replaced, *args, **kwargs):
        ours = os.path.realpath(replaced) == target
        if ours and when == "before":
            signal.raise_signal(signum)
        real_replace(source, replaced, *args, **kwargs)
        if ours and when == "after":
            signal.raise_signal(signum)

    monkeypatch.setattr(os, "replace", replace_with_signal)


def _write_whole(args) -> None:
    """A command's writer, as ``squad-predict`` and ``coref-conll`` write theirs."""
    with WholeFile(args.output_file) as partial:
        Path(partial).write_text("the whole output\n", encoding="utf-8")


@pytest.mark.parametrize(
    "when, said, content",
    [
        pytest.param(
            "after", "{out} was complete before it stopped; nothing to run again", b"the whole output\n", id="after"
        ),
        # negative control: the same signal an instant earlier, before the rename
        pytest.param(
            "before",
            "{out} was not written (an earlier file there is unchanged); run the same command again",
            EARLIER,
            id="before",
        ),
    ],
)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_at_the_rename_gets_a_true_stop_line(tmp_path, monkeypatch, capsys, when, said, content, signum):
    output = tmp_path / "out.json"
    output.write_bytes(EARLIER)
    _signal_at_rename(monkeypatch, output, when, signum)
    run = writing_output_file("squad-predict", _write_whole)
    with pytest.raises(SystemExit) as stopped:
        run(type("Args", (), {"output_file": str(output)}))
    assert stopped.value.code == 128 + signum
    name = signal.Signals(signum).name
    assert capsys.readouterr().err.splitlines() == [f"squad-predict: stopped by {name}; {said.format(out=output)}"]
    assert output.read_bytes() == content
    assert os.listdir(tmp_path) == ["out.json"]  # no partial file left either way


def test_the_outcome_names_each_output_complete_or_not_written(tmp_path):
    out, gold = str(tmp_path / "out.props"), str(tmp_path / "gold.props")
    outcome = output_files_outcome(out, gold)
    assert outcome() == (
        f"{out} and {gold} were not written (earlier files there are unchanged); run the same command again"
    )
    with WholeFile(gold) as partial:
        Path(partial).write_text("gold\n", encoding="utf-8")
    assert outcome() == (
        f"{gold} was complete before it stopped, but {out} was not written (an earlier file there is unchanged); "
        "run the same command again"
    )
    with WholeFile(out) as partial:
        Path(partial).write_text("out\n", encoding="utf-8")
    assert outcome() == f"{out} and {gold} were complete before it stopped; nothing to run again"


def test_only_this_commands_own_file_counts_as_complete(tmp_path):
    output = tmp_path / "out.txt"
    with WholeFile(output) as partial:  # an earlier command of this process wrote it
        Path(partial).write_text("earlier\n", encoding="utf-8")
    outcome = output_files_outcome(str(output))
    assert outcome().startswith(f"{output} was not written")
    with WholeFile(output) as partial:
        Path(partial).write_text("ours\n", encoding="utf-8")
    assert outcome().startswith(f"{output} was complete")
    replacement = tmp_path / "other"
    replacement.write_text("another process's file\n", encoding="utf-8")
    os.replace(replacement, output)  # replaced since by someone else: not ours to call complete
    assert outcome().startswith(f"{output} was not written")


# `python -m elmo_tasks elmo-embed ...` (what `elmo-tasks` runs), with the rename hooked as in the tests above
_HOOKED_COMMAND = textwrap.dedent(
    """
    import os, runpy, signal, sys

    when, target = sys.argv.pop(1), os.path.realpath(sys.argv.pop(1))
    real_replace = os.replace

    def replace_with_signal(source, replaced, *args, **kwargs):
        ours = os.path.realpath(replaced) == target
        if ours and when == "before":
            signal.raise_signal(signal.SIGTERM)
        real_replace(source, replaced, *args, **kwargs)
        if ours and when == "after":
            signal.raise_signal(signal.SIGTERM)

    os.replace = replace_with_signal
    sys.argv[0] = "elmo-tasks"
    runpy.run_module("elmo_tasks", run_name="__main__")
    """
)


@pytest.mark.parametrize("when", ["after", "before"])
def test_elmo_embed_stopped_in_the_instant_after_its_output_is_in_place_says_it_is_complete(tmp_path, when):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"the cat sat on mat {i}\n" for i in range(12)), encoding="utf-8")
    output = tmp_path / "out" / "out.hdf5"
    output.parent.mkdir()
    output.write_bytes(EARLIER)
    completed = subprocess.run(
        [sys.executable, "-c", _HOOKED_COMMAND, when, str(output), "elmo-embed", str(source), str(output)]
        + ["--batch-size", "4", "--workers", "1", "--no-progress"],
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 128 + signal.SIGTERM, completed.stderr[-3000:]
    last = completed.stderr.strip().splitlines()[-1]
    assert "Traceback" not in completed.stderr
    assert os.listdir(output.parent) == ["out.hdf5"]
    if when == "after":
        assert last == f"elmo-embed: stopped by SIGTERM; {output} was complete before it stopped; nothing to run again"
        with h5py.File(output, "r") as written:
            assert len([name for name in written if name.isdigit()]) == 12
    else:  # negative control
        assert last == (
            f"elmo-embed: stopped by SIGTERM; {output} was not written (an earlier file there is unchanged); "
            "run the same command again"
        )
        assert output.read_bytes() == EARLIER
