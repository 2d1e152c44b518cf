"""``WholeFolder``: a set of files (an exported biLM) appears whole or not at all (issue 54)."""

import os

import pytest

from elmo_tasks.atomic_files import WholeFolder


def _write(folder, files):
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")


def _read(folder):
    return {
        os.path.relpath(os.path.join(root, name), folder): open(os.path.join(root, name), encoding="utf-8").read()
        for root, _, names in os.walk(folder)
        for name in names
    }


def test_a_new_folder_appears_when_the_block_ends(tmp_path):
    target = tmp_path / "elmo"
    with WholeFolder(target) as partial:
        _write(partial, {"options.json": "new", "vocabulary/tokens.txt": "a\n"})
        assert not target.exists()  # nothing visible while it is written
    assert _read(target) == {"options.json": "new", "vocabulary/tokens.txt": "a\n"}
    assert os.listdir(tmp_path) == ["elmo"]


def test_an_existing_folder_gets_the_new_set_and_keeps_other_files(tmp_path):
    target = tmp_path / "elmo"
    _write(target, {"options.json": "old", "weights.hdf5": "old", "vocabulary/stale.txt": "x", "notes.txt": "mine"})
    with WholeFolder(target) as partial:
        _write(partial, {"options.json": "new", "weights.hdf5": "new", "vocabulary/tokens.txt": "a\n"})
        assert _read(target)["options.json"] == "old"
    assert _read(target) == {
        "options.json": "new",
        "weights.hdf5": "new",
        "vocabulary/tokens.txt": "a\n",  # the vocabulary folder is replaced whole
        "notes.txt": "mine",
    }


def test_a_failed_block_changes_nothing_and_leaves_nothing(tmp_path):
    target = tmp_path / "elmo"
    _write(target, {"options.json": "old"})
    with pytest.raises(KeyboardInterrupt), WholeFolder(target) as partial:
        _write(partial, {"options.json": "new"})
        raise KeyboardInterrupt
    assert _read(target) == {"options.json": "old"} and os.listdir(target) == ["options.json"]
    with pytest.raises(OSError), WholeFolder(tmp_path / "fresh") as partial:
        raise OSError("disk full")
    assert sorted(os.listdir(tmp_path)) == ["elmo"]
