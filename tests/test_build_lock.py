"""Two processes that want one input (word vectors, a fine-tuned biLM): it is built once, the second waiting for it."""

import subprocess
import sys
import textwrap

from elmo_tasks.build_lock import build_lock

# Takes the lock, says so, builds for a while, and leaves its product behind.
BUILDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from elmo_tasks.build_lock import build_lock
    lock, product = Path(sys.argv[1]), Path(sys.argv[2])
    with build_lock(lock, "the vectors"):
        print("holding", flush=True)
        time.sleep(float(sys.argv[3]))
        product.write_text("built")
    """
)


def _builder(tmp_path, seconds: float) -> subprocess.Popen:
    lock, product = tmp_path / "vectors.txt.lock", tmp_path / "vectors.txt"
    command = [sys.executable, "-c", BUILDER, str(lock), str(product), str(seconds)]
    builder = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert builder.stdout is not None and builder.stdout.readline().strip() == "holding"
    return builder


def test_a_second_process_waits_for_the_builder_and_then_finds_its_product(tmp_path, capsys):
    builder = _builder(tmp_path, 1.0)
    with build_lock(tmp_path / "vectors.txt.lock", "the vectors"):
        assert (tmp_path / "vectors.txt").read_text() == "built"  # not entered before the builder was done
    builder.wait()
    out = capsys.readouterr().out
    assert f"waiting for process {builder.pid}, which is building the vectors" in out
    with build_lock(tmp_path / "vectors.txt.lock", "the vectors"):  # free again: no waiting
        pass
    assert "waiting" not in capsys.readouterr().out


def test_a_killed_builder_leaves_nothing_to_clear(tmp_path, capsys):
    builder = _builder(tmp_path, 60.0)
    builder.kill()
    builder.wait()
    with build_lock(tmp_path / "vectors.txt.lock", "the vectors"):
        assert not (tmp_path / "vectors.txt").exists()  # this process builds it now
    assert "waiting" not in capsys.readouterr().out
