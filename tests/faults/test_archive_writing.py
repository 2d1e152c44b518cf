"""``model.tar.gz`` on a full disk or a read-only file system (issue 54): AllenNLP's ``archive_model``, as
``allennlp train`` calls it when training ends (or a stopped training archives its best epoch), writes
through a temporary file (``elmo_tasks/whole_archive.py``). A failed write ends with one line naming
the path and the errno; no archive cut short is left (it looked like a finished run); an earlier
archive keeps its bytes."""

import os
import shutil
import subprocess

import pytest
from allennlp.commands import train
from allennlp.models import archival

from elmo_tasks.input_errors import failure_explained
from elmo_tasks.whole_archive import ArchiveWriteError
from tests.conftest import untrained_archive
from tests.faults.mounts import small_filesystem

EARLIER_ARCHIVE = b"an earlier archive that must survive\n"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A serialization folder as ``allennlp train`` leaves it (config, vocabulary, best.th, meta)."""
    folder = tmp_path_factory.mktemp("ner_baseline")
    untrained_archive("ner_baseline", folder)  # archived through the replacement (tests start as commands do)
    (folder / "model.tar.gz").unlink()
    return folder


def test_allennlp_train_archives_through_the_replacement_and_the_archive_loads(run_folder, tmp_path):
    assert train.archive_model is archival.archive_model  # what `allennlp train` calls is ours
    folder = tmp_path / "run"
    shutil.copytree(run_folder, folder)
    (folder / "model.tar.gz").write_bytes(EARLIER_ARCHIVE)
    assert train.archive_model(str(folder)) == str(folder / "model.tar.gz")
    assert archival.load_archive(str(folder / "model.tar.gz")).model is not None
    assert not [name for name in os.listdir(folder) if name.endswith(".partial")]


def _filled(disk, left_kilobytes: int) -> None:
    """Fills ``disk`` until about ``left_kilobytes`` are free."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    (disk / "filler").write_bytes(b"\0" * max(0, free - left_kilobytes * 1024))


@pytest.mark.parametrize("earlier", [False, True], ids=["no-archive", "earlier-archive"])
def test_a_full_disk_while_the_archive_is_written_says_so_and_leaves_no_archive_cut_short(
    run_folder, tmp_path, earlier
):
    with small_filesystem(tmp_path / "disk", kilobytes=8192) as disk:
        folder = disk / "run"
        shutil.copytree(run_folder, folder)
        if earlier:
            (folder / "model.tar.gz").write_bytes(EARLIER_ARCHIVE)
        _filled(disk, left_kilobytes=64)  # the folder fits; its archive (about 4 MB) does not
        with pytest.raises(ArchiveWriteError) as failed:
            train.archive_model(str(folder))
        kept = (folder / "model.tar.gz").read_bytes() if earlier else None
        left = sorted(os.listdir(folder))
    archive = folder / "model.tar.gz"
    state = "an earlier model.tar.gz there is unchanged" if earlier else f"nothing was written to {archive}"
    line = (
        f"cannot write {archive}: No space left on device (ENOSPC); free some space there or write to another "
        f"folder ({state})"
    )
    assert str(failed.value) == line and failed.value.errno == 28
    assert failure_explained(failed.value, None) == line  # what `allennlp train` ends with: one line
    assert kept == (EARLIER_ARCHIVE if earlier else None)
    assert left == sorted(os.listdir(run_folder) + (["model.tar.gz"] if earlier else []))  # no .partial either


def test_a_read_only_file_system_is_named_before_anything_is_written(run_folder, tmp_path):
    with small_filesystem(tmp_path / "disk", kilobytes=8192) as disk:
        folder = disk / "run"
        shutil.copytree(run_folder, folder)
        (folder / "model.tar.gz").write_bytes(EARLIER_ARCHIVE)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        with pytest.raises(ArchiveWriteError) as failed:
            train.archive_model(str(folder))
        kept = (folder / "model.tar.gz").read_bytes()
    assert str(failed.value) == (
        f"cannot write {folder / 'model.tar.gz'}: Read-only file system (EROFS); that file system is read-only: "
        "write to another folder (an earlier model.tar.gz there is unchanged)"
    )
    assert kept == EARLIER_ARCHIVE
