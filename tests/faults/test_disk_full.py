"""A disk that fills and a read-only folder: one line naming the path and the errno, nothing left
looking complete, nothing existing damaged (issue 54)."""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.faults.earlier_export import EARLIER_EXPORT, earlier_export_files, write_earlier_export
from tests.faults.mounts import small_filesystem

SENTENCES = "".join(f"the cat sat on the mat number {i}\n" for i in range(200))  # about 5 MB of vectors
EARLIER_OUTPUT = b"an earlier output that must survive\n" * 1000


def _embed(source, output):
    return subprocess.run(
        [sys.executable, "-m", "elmo_tasks.bilm.embed", str(source), str(output), "--no-progress"],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_elmo_embed_on_a_full_disk_says_so_and_leaves_nothing(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text(SENTENCES, encoding="utf-8")
    with small_filesystem(tmp_path / "disk", kilobytes=256) as disk:
        done = _embed(source, disk / "out.hdf5")
        left = sorted(os.listdir(disk))
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines() == [
        f"elmo-embed: error: cannot write {disk / 'out.hdf5'}: No space left on device (ENOSPC); free some space "
        f"there or write to another folder (nothing was written to {disk / 'out.hdf5'})"
    ]
    assert left == []


def test_elmo_embed_on_a_full_disk_keeps_an_earlier_output(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text(SENTENCES, encoding="utf-8")
    with small_filesystem(tmp_path / "disk", kilobytes=256, files={"out.hdf5": EARLIER_OUTPUT}) as disk:
        done = _embed(source, disk / "out.hdf5")
        assert (disk / "out.hdf5").read_bytes() == EARLIER_OUTPUT
        left = sorted(os.listdir(disk))
    assert done.returncode == 2 and "(ENOSPC)" in done.stderr and "keeps its earlier content" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and left == ["out.hdf5"]


def test_elmo_embed_into_a_read_only_folder_says_so_before_any_work(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text(SENTENCES, encoding="utf-8")
    with small_filesystem(tmp_path / "disk", kilobytes=256, read_only=True, files={"out.hdf5": b"old"}) as disk:
        done = _embed(source, disk / "out.hdf5")
        assert (disk / "out.hdf5").read_bytes() == b"old"
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"elmo-embed: error: cannot write {disk / 'out.hdf5'}: Read-only file system (EROFS); that file system is "
        f"read-only: write to another folder ({disk / 'out.hdf5'} keeps its earlier content)"
    ]


def test_a_run_record_on_a_full_or_read_only_disk_fails_its_run_with_one_line(tmp_path):
    from elmo_tasks.reproduction.allennlp_runs import RunFailed
    from elmo_tasks.reproduction.records import write_whole

    record = '{"value": 1.0}\n' * 20000  # 300 KB, more than the disk holds
    with small_filesystem(tmp_path / "full", kilobytes=64, files={"r.json": b"old"}) as disk:
        with pytest.raises(RunFailed) as failed:
            write_whole(disk / "r.json", record)
        assert (disk / "r.json").read_bytes() == b"old" and os.listdir(disk) == ["r.json"]
    assert str(failed.value) == (
        f"cannot write {disk / 'r.json'}: No space left on device (ENOSPC); free some space there or write to "
        f"another folder ({disk / 'r.json'} is unchanged)"
    )
    with small_filesystem(tmp_path / "ro", kilobytes=64, read_only=True, files={"r.json": b"old"}) as disk:
        with pytest.raises(RunFailed, match=r"r\.json: Read-only file system \(EROFS\)"):
            write_whole(disk / "r.json", "{}\n")
        assert (disk / "r.json").read_bytes() == b"old"


# --- export-bilm and build-word-vectors (in this process: the commands' own code, without a second start) ----


def _export(archive, output, capsys):
    from tests.conftest import run_allennlp

    with pytest.raises(SystemExit) as ended:
        run_allennlp("export-bilm", str(archive), str(output))
    return ended.value.code, capsys.readouterr().err


@pytest.fixture(scope="module")
def bilm_archive(tmp_path_factory):
    from tests.conftest import untrained_archive

    return untrained_archive("ner_elmo", tmp_path_factory.mktemp("ner_elmo"))  # weights.hdf5 of 14 MB


@pytest.mark.parametrize("earlier", [False, True], ids=["empty-disk", "earlier-export"])
def test_export_bilm_on_a_full_disk_says_so_and_keeps_an_earlier_export(tmp_path, bilm_archive, capsys, earlier):
    with small_filesystem(tmp_path / "disk", kilobytes=256) as disk:
        output = disk / "elmo"
        if earlier:
            write_earlier_export(output)
        code, err = _export(bilm_archive, output, capsys)
        left = sorted(os.listdir(output)) if output.exists() else None
        kept = earlier_export_files(output) if earlier else None
        beside = sorted(os.listdir(disk))
    assert code == 2
    state = "an earlier export there is unchanged" if earlier else "it holds no export"
    assert err.strip().splitlines()[-1] == (
        f"export-bilm: error: cannot write {output}: No space left on device (ENOSPC); free some space there or "
        f"write to another folder ({state})"
    ), err[-3000:]
    assert "Traceback" not in err
    if earlier:
        assert kept == EARLIER_EXPORT and left == sorted(EARLIER_EXPORT)
    else:
        assert left is None and beside == []


def test_build_word_vectors_on_a_full_disk_says_so_and_keeps_earlier_vectors(tmp_path, capsys):
    from elmo_tasks.word_vectors.build_command import main

    corpus = tmp_path / "corpus.txt"
    words = [f"word{index}" for index in range(400)]
    corpus.write_text("".join(" ".join(words[(i * 7 + k) % 400] for k in range(12)) + "\n" for i in range(2000)))
    for earlier in (None, b"earlier vectors 0.1 0.2\n"):
        with small_filesystem(tmp_path / f"disk{bool(earlier)}", kilobytes=256) as disk:
            output = disk / "vectors.txt"
            if earlier:
                output.write_bytes(earlier)
            with pytest.raises(SystemExit) as ended:
                main([str(corpus), str(output), "--dim", "100", "--epochs", "1", "--workers", "1"])
            err = capsys.readouterr().err
            left = sorted(name for name in os.listdir(disk) if name != ".vectors.txt.lock")  # the build lock stays
            kept = output.read_bytes() if earlier else None
        state = f"{output} keeps its earlier content" if earlier else f"nothing was written to {output}"
        assert ended.value.code == 2
        assert err.strip().splitlines()[-1] == (
            f"build-word-vectors: error: cannot write {output}: No space left on device (ENOSPC); free some space "
            f"there or write to another folder ({state})"
        ), err[-3000:]
        assert left == (["vectors.txt"] if earlier else []) and kept == earlier
