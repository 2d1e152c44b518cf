"""`allennlp elmo-embed` never destroys or corrupts a file, and rejects bad input before loading a model.

Runs that must fail before the model is loaded get a weight file that does not exist: had the
model been loaded first, the error would be about the weights instead.
"""

import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest
import torch

from tests.conftest import OPTIONS_FILE, ROOT, WEIGHT_FILE

GOOD = ["The cat sat on the mat .", "Hello world", "A longer sentence , with more tokens ."]


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _assert_failed_before_loading(done, *expected):
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "weight file" not in done.stderr, done.stderr
    for text in expected:
        assert text in done.stderr, (text, done.stderr)


def test_same_file_as_input_and_output_is_refused_and_the_input_kept(run, tmp_path):
    source = _write(tmp_path / "in.txt", GOOD)
    os.symlink(source, tmp_path / "link.hdf5")
    os.link(source, tmp_path / "hard.hdf5")
    for output in (source, tmp_path / "link.hdf5", tmp_path / "hard.hdf5", tmp_path / "." / "in.txt"):
        done = run(source, output, check=False, weight_file=tmp_path / "missing.hdf5")
        _assert_failed_before_loading(done, "is the input file")
        assert source.read_text(encoding="utf-8") == "".join(line + "\n" for line in GOOD)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.hdf5", "in.txt", "link.hdf5"]


def test_a_rerun_with_a_typo_in_the_input_keeps_the_previous_output(run, tmp_path):
    source, output = _write(tmp_path / "in.txt", GOOD), tmp_path / "out.hdf5"
    run(source, output)
    before = output.read_bytes()
    done = run(tmp_path / "in.tx", output, check=False)
    assert done.returncode == 2 and "cannot read the input file" in done.stderr and "in.tx" in done.stderr
    assert output.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.hdf5"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_failure_while_embedding_keeps_the_previous_output_and_leaves_no_temporary_file(
    run, tmp_path, monkeypatch, workers
):
    """In this process, or in a forked worker whose error comes back here (its call count stays there)."""
    from elmo_tasks.bilm import file_embedder

    source, output = _write(tmp_path / "in.txt", GOOD * 4), tmp_path / "out.hdf5"
    run(source, output, "--top")
    before = output.read_bytes()
    real = file_embedder.embed_sentences
    calls = []

    def fail_on_the_second_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("simulated failure in the middle of the file")
        return real(*args, **kwargs)

    monkeypatch.setattr(file_embedder, "embed_sentences", fail_on_the_second_batch)
    with pytest.raises(RuntimeError, match="simulated failure"):
        run(source, output, "--all", "--batch-size", "2", "--workers", workers, check=False)
    assert len(calls) == (2 if workers == "1" else 0)
    assert output.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.hdf5"]


def _start_embedding(source, output, extra=()):
    """``python -m elmo_tasks.bilm.embed`` in a subprocess (the same command, without AllenNLP)."""
    command = [
        sys.executable,
        "-m",
        "elmo_tasks.bilm.embed",
        str(source),
        str(output),
        "--options-file",
        OPTIONS_FILE,
        "--weight-file",
        WEIGHT_FILE,
        "--no-progress",
        *extra,
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kill_while_writing(process, directory, timeout=120.0):
    """SIGKILL ``process`` as soon as its temporary output exists (it is embedding by then)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.name.endswith(".partial") for p in directory.iterdir()):
            break
        assert process.poll() is None, process.communicate()
        time.sleep(0.005)
    else:
        process.kill()
        pytest.fail("the temporary output never appeared")
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("previous", [False, True], ids=["no-previous-output", "previous-output"])
def test_a_killed_run_leaves_the_final_path_empty_or_holding_the_previous_file(run, tmp_path, previous):
    small, big, output = (
        _write(tmp_path / "small.txt", GOOD),
        _write(tmp_path / "big.txt", GOOD * 2000),
        tmp_path / "out.hdf5",
    )
    if previous:
        run(small, output, "--top")
        before = output.read_bytes()
    _kill_while_writing(_start_embedding(big, output, ["--batch-size", "1"]), tmp_path)
    if previous:
        assert output.read_bytes() == before
        with h5py.File(output, "r") as handle:
            assert sorted(k for k in handle if k != "sentence_to_index") == ["0", "1", "2"]
    else:
        assert not output.exists()
    # what a kill leaves is a hidden temporary file beside the output, never the output's own name
    assert [p.name.startswith(".out.hdf5.") for p in tmp_path.iterdir() if p.name.endswith(".partial")] == [True]


def test_every_bad_line_is_reported_at_once_before_the_model_is_loaded(run, tmp_path):
    lines = [f"sentence number {i} ." for i in range(5000)]
    lines.append("")  # line 5,001: the late empty line
    lines.append("   \t ")  # line 5,002: only whitespace is empty too
    lines.append("word " * 1001)  # line 5,003: longer than --max-tokens 1000
    source = tmp_path / "in.txt"
    source.write_bytes(("\n".join(lines) + "\n").encode("utf-8") + b"caf\xe9 latin-1\n")  # line 5,004
    done = run(source, tmp_path / "out.hdf5", check=False, weight_file=tmp_path / "missing.hdf5")
    _assert_failed_before_loading(
        done,
        "4 of 5004 lines cannot be embedded",
        "line 5001: empty line",
        "line 5002: empty line",
        "line 5003: 1001 tokens, more than --max-tokens 1000",
        "line 5004: bytes that are not UTF-8",
        "--skip-empty-lines",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]
    # with --skip-empty-lines the empty lines are fine, the other two still stop it
    done = run(source, tmp_path / "out.hdf5", "--skip-empty-lines", check=False, weight_file=tmp_path / "missing.hdf5")
    _assert_failed_before_loading(done, "2 of 5004 lines", "line 5003:", "line 5004:")
    assert "line 5001" not in done.stderr


def test_many_bad_lines_show_the_first_ten_and_the_count(run, tmp_path):
    source = _write(tmp_path / "in.txt", ["ok", ""] * 25)
    done = run(source, tmp_path / "out.hdf5", check=False, weight_file=tmp_path / "missing.hdf5")
    _assert_failed_before_loading(done, "25 of 50 lines", "line 2: empty line", "line 20: empty line", "and 15 more")
    assert "line 22:" not in done.stderr


def test_an_input_without_sentences_is_an_error(run, tmp_path):
    source, output, missing = tmp_path / "in.txt", tmp_path / "out.hdf5", tmp_path / "missing.hdf5"
    source.write_text("", encoding="utf-8")
    _assert_failed_before_loading(
        run(source, output, check=False, weight_file=missing), "in.txt is empty", "nothing to embed"
    )
    source.write_text("\n\n  \n", encoding="utf-8")
    _assert_failed_before_loading(
        run(source, output, check=False, weight_file=missing), "3 of 3 lines cannot be embedded"
    )
    done = run(source, output, "--skip-empty-lines", check=False, weight_file=missing)
    _assert_failed_before_loading(done, "holds only empty lines (3)", "nothing to embed")
    assert not output.exists()


def test_skip_empty_lines_keeps_line_numbers_and_records_the_skipped(run, tmp_path):
    lines = ["", GOOD[0], "", "  ", GOOD[1], GOOD[2], ""]
    source, output = _write(tmp_path / "in.txt", lines), tmp_path / "out.hdf5"
    done = run(source, output, "--top", "--skip-empty-lines")
    assert "wrote 3 sentences" in done.stderr and "skipped 4 empty lines" in done.stderr
    dense = _write(tmp_path / "dense.txt", GOOD)
    run(dense, tmp_path / "dense.hdf5", "--top")
    with h5py.File(output, "r") as handle, h5py.File(tmp_path / "dense.hdf5", "r") as reference:
        assert sorted(k for k in handle if k not in ("sentence_to_index", "skipped_empty_lines")) == ["1", "4", "5"]
        assert handle["skipped_empty_lines"][...].tolist() == [0, 2, 3, 6]
        for line, dense_line in (("1", "0"), ("4", "1"), ("5", "2")):
            assert np.allclose(handle[line][...], reference[dense_line][...], atol=1e-6)


def test_a_gpu_that_is_not_there_is_named(run, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is available here")
    done = run(_write(tmp_path / "in.txt", GOOD), tmp_path / "out.hdf5", "--cuda-device", "0", check=False)
    assert done.returncode == 2 and "no GPU is available" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.hdf5").exists()


def test_threads_sets_torch_threads(run, tmp_path):
    previous = torch.get_num_threads()
    try:
        run(_write(tmp_path / "in.txt", GOOD), tmp_path / "out.hdf5", "--threads", "2")
        assert torch.get_num_threads() == 2
        done = run(tmp_path / "in.txt", tmp_path / "out2.hdf5", "--threads", "0", check=False)
        assert done.returncode == 2 and "--threads must be at least 1" in done.stderr
    finally:
        torch.set_num_threads(previous)


def test_the_output_file_gets_ordinary_permissions(run, tmp_path):
    run(_write(tmp_path / "in.txt", GOOD), tmp_path / "out.hdf5")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "out.hdf5").stat().st_mode & 0o777 == 0o666 & ~umask
