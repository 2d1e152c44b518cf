"""Freed memory kept for the next batch (glibc's malloc): no page faults for a block allocated again, the
same output, and a clear error for a bad setting. Each check that changes malloc runs in its own process."""

import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

from elmo_tasks import freed_memory
from elmo_tasks.freed_memory import ENVIRONMENT_VARIABLE, FreedMemorySettingError, keep_freed_memory
from tests.conftest import OPTIONS_FILE, ROOT, WEIGHT_FILE

glibc_only = pytest.mark.skipif(not freed_memory._is_glibc(), reason="mallopt is glibc's")

# Allocates, writes and frees a 64 MB block six times through malloc itself and prints whether the setting
# was made and the page faults of the last five: glibc maps a block that large afresh each time unless it
# is kept. (numpy asks for huge pages for its large arrays, which would hide most faults.)
FAULTS_SCRIPT = textwrap.dedent(
    """
    import ctypes
    import resource
    from elmo_tasks.freed_memory import keep_freed_memory
    kept = keep_freed_memory()
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    def block():
        address = libc.malloc(64 << 20)
        ctypes.memset(address, 1, 64 << 20)
        libc.free(address)
    block()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        block()
    print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """
)


def _faults(setting: str):
    done = subprocess.run(
        [sys.executable, "-c", FAULTS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, ENVIRONMENT_VARIABLE: setting},
        check=True,
    )
    kept, faults = done.stdout.split()
    return kept == "True", int(faults)


@glibc_only
def test_a_kept_block_is_reused_without_page_faults():
    assert _faults("keep") == (True, pytest.approx(0, abs=1000))
    kept, faults = _faults("return")  # glibc's default: 16,384 pages of 4 KB faulted in for each block
    assert not kept and faults > 5 * 10_000


def test_a_bad_setting_names_the_variable_and_its_values(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "yes")
    with pytest.raises(FreedMemorySettingError, match=r"ELMO_TASKS_FREED_MEMORY must be 'keep' .* got 'yes'"):
        keep_freed_memory()


def test_nothing_is_set_without_glibc(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "keep")
    monkeypatch.setattr(os, "confstr", lambda name: None)
    assert keep_freed_memory() is False


def _embed(tmp_path, setting: str):
    sentences = tmp_path / "in.txt"
    sentences.write_text("The cat sat on the mat .\nHello world\n", encoding="utf-8")
    out = tmp_path / f"{setting}.hdf5"
    arguments = ["--options-file", OPTIONS_FILE, "--weight-file", WEIGHT_FILE, "--no-progress"]
    return subprocess.run(
        [sys.executable, "-m", "elmo_tasks.bilm.embed", str(sentences), str(out), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, ENVIRONMENT_VARIABLE: setting},
    ), out


def test_elmo_embed_writes_the_same_with_freed_memory_kept_or_returned(tmp_path):
    (kept, kept_file), (returned, returned_file) = _embed(tmp_path, "keep"), _embed(tmp_path, "return")
    assert kept.returncode == returned.returncode == 0, kept.stderr + returned.stderr
    with h5py.File(kept_file, "r") as a, h5py.File(returned_file, "r") as b:
        assert sorted(a) == sorted(b) == ["0", "1", "sentence_to_index"]
        for name in ("0", "1"):
            assert np.array_equal(a[name][...], b[name][...])


def test_elmo_embed_refuses_a_bad_setting_in_one_line(tmp_path):
    done, out = _embed(tmp_path, "always")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "elmo-embed: error: ELMO_TASKS_FREED_MEMORY must be 'keep' (the default: freed memory is reused) or "
        "'return' (glibc's defaults), got 'always'"
    )
    assert not out.exists()
