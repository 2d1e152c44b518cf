import os

import pytest

from elmo_tasks.atomic_files import WholeFile


def test_the_file_is_replaced_only_when_the_block_ends(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with WholeFile(path) as partial:
        partial.write_text("new")
        assert path.read_text() == "old" and partial.name.startswith(".out.txt.") and partial.suffix == ".partial"
    assert path.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_partial(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), WholeFile(path) as partial:
        partial.write_text("half")
        raise RuntimeError("stopped")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_symlink_keeps_pointing_at_the_new_content(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with WholeFile(link) as partial:
        partial.write_text("new")
    assert link.is_symlink() and target.read_text() == "new"


def test_the_new_file_has_the_usual_permissions_and_a_missing_folder_fails_first(tmp_path):
    umask = os.umask(0o022)
    try:
        with WholeFile(tmp_path / "out.txt") as partial:
            partial.write_text("x")
    finally:
        os.umask(umask)
    assert (tmp_path / "out.txt").stat().st_mode & 0o777 == 0o644
    with pytest.raises(OSError):
        WholeFile(tmp_path / "no" / "such" / "out.txt")
