"""``squad-predict`` and ``coref-conll`` stopped in the instant they write their output (issue 54).

Both predict everything first and write the output at the end, in milliseconds, through ``WholeFile``
(a hidden ``.NAME.*.partial`` renamed onto NAME when complete). To land a signal inside that write, the
real ``allennlp`` entry point runs with the command's output file held open half written, as on a slow
disk: its ``open`` of the partial file returns a file that, once it holds ``HELD_AFTER`` characters,
flushes them to disk, says so on stderr and waits. The test then sends the signal. SIGKILL runs no
clean-up: the partial file stays (hidden), the earlier output keeps its bytes, and the same command
again writes the whole file. SIGINT and SIGTERM remove the partial file and end with the command's line.

Each run starts ``allennlp`` afresh (about 20 s on the loaded 2-core machine): slow.
"""

import signal
import sys
import textwrap
from pathlib import Path
from typing import Dict

import pytest

from tests.conftest import run_allennlp, untrained_archive
from tests.faults.test_command_signals import EARLIER, TASKS, _check_stopped, _left_beside, _start, _stop, _wait_for

COMMANDS = ["squad-predict", "coref-conll"]
SIGNALS = [signal.SIGKILL, signal.SIGINT, signal.SIGTERM]
# characters written before the writer stops and waits (the outputs of the inputs below are far longer)
HELD_AFTER = 200

_HELD_WRITER = textwrap.dedent(
    """
    import builtins, importlib, sys, time

    command, module_name, held_after = sys.argv[1], sys.argv[2], int(sys.argv[3])
    command_module = importlib.import_module(module_name)

    class HeldWhileWriting:
        # the command's output file, held half written: the rest is never written
        def __init__(self, handle, path):
            self.handle, self.path, self.written = handle, path, 0

        def write(self, text):
            self.handle.write(text)
            self.written += len(text)
            if self.written >= held_after:
                self.handle.flush()
                print("HELD WHILE WRITING", self.path, file=sys.stderr, flush=True)
                time.sleep(600)
            return len(text)

        def writelines(self, lines):
            for line in lines:
                self.write(line)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    def held_open(path, mode="r", *args, **kwargs):
        handle = builtins.open(path, mode, *args, **kwargs)
        if "w" in mode and str(path).endswith(".partial"):
            return HeldWhileWriting(handle, path)
        return handle

    command_module.open = held_open  # the module's own name `open`: nothing else in the process changes
    sys.argv = ["allennlp", command, *sys.argv[4:]]
    from allennlp.__main__ import run

    run()
    """
)

MODULES = {"squad-predict": "elmo_tasks.commands.squad_predict", "coref-conll": "elmo_tasks.commands.coref_conll"}


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> Dict[str, Path]:
    folder = tmp_path_factory.mktemp("archives")
    return {command: untrained_archive(TASKS[command][0], folder / command) for command in COMMANDS}


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda signum: signal.Signals(signum).name)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_signal_while_the_output_is_written_keeps_the_earlier_output_and_the_run_again_is_whole(
    archives, tmp_path, command, signum
):
    _, make_input, _, extra, _, check_whole = TASKS[command]
    source = make_input(tmp_path, 2)
    output = tmp_path / "out" / "predicted.txt"
    output.parent.mkdir()
    output.write_bytes(EARLIER)
    stderr_file = tmp_path / "stderr.txt"
    process = _start(
        [
            sys.executable,
            "-c",
            _HELD_WRITER,
            command,
            MODULES[command],
            str(HELD_AFTER),
            str(archives[command]),
            str(source),
            str(output),
            *extra,
        ],
        stderr_file,
    )
    _wait_for(process, stderr_file, "HELD WHILE WRITING")
    # the signal lands inside the write: part of the new output is on disk beside the earlier one
    partial = [path for path in output.parent.iterdir() if path.name.endswith(".partial")]
    assert len(partial) == 1 and partial[0].name.startswith(".predicted.txt.")
    assert partial[0].stat().st_size >= HELD_AFTER
    assert output.read_bytes() == EARLIER

    err = _stop(process, signum, stderr_file)
    outcome = f"{output} was not written (an earlier file there is unchanged); run the same command again"
    _check_stopped(err, signum, process.returncode, command, outcome)
    assert output.read_bytes() == EARLIER
    _left_beside(output.parent, signum, ["predicted.txt"])
    if signum == signal.SIGKILL:
        assert partial[0].exists()  # what a kill leaves: hidden, never NAME cut short

    run_allennlp(command, str(archives[command]), str(source), str(output), *extra)
    check_whole(output, source)
    _left_beside(output.parent, signum, ["predicted.txt"])
