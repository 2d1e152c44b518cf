"""The ``sst_ptb_trees`` reader on hand-written trees, and on the real data when it is present."""

from pathlib import Path
from typing import List, Tuple

import pytest
from allennlp.common.checks import ConfigurationError

from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.sst.reader import SstTreesReader
from tests.conftest import FIXTURES_ROOT, SHARED, needs_shared

# Two trees; "the" (2) and "." (2) occur in both, so deduplication has work to do.
TREES = "(4 (2 (2 the) (4 best)) (2 .))\n(0 (2 the) (0 (0 worst) (2 .)))\n"


def _read(path: Path, **kwargs) -> List[Tuple[List[str], int]]:
    reader = SstTreesReader(**kwargs)
    return [(instance["metadata"]["words"], instance["label"].label) for instance in reader.read(str(path))]


@pytest.fixture
def trees(tmp_path: Path) -> Path:
    path = tmp_path / "trees.txt"
    path.write_text(TREES, encoding="utf-8")
    return path


def test_all_phrases_without_deduplication(trees: Path) -> None:
    # Tree 1: 5 nodes; tree 2: 5 nodes.
    assert _read(trees, deduplicate=False) == [
        (["the", "best", "."], 4),
        (["the", "best"], 2),
        (["the"], 2),
        (["best"], 4),
        (["."], 2),
        (["the", "worst", "."], 0),
        (["the"], 2),
        (["worst", "."], 0),
        (["worst"], 0),
        (["."], 2),
    ]


def test_deduplication_keeps_first_copy_of_each_labelled_phrase(trees: Path) -> None:
    read = _read(trees)
    assert len(read) == 8
    assert read.count((["the"], 2)) == 1 and read.count((["."], 2)) == 1


def test_roots_only(trees: Path) -> None:
    assert _read(trees, phrases="roots") == [(["the", "best", "."], 4), (["the", "worst", "."], 0)]


def test_binary_drops_neutral_and_merges_classes(trees: Path) -> None:
    assert _read(trees, binary=True) == [
        (["the", "best", "."], 1),
        (["best"], 1),
        (["the", "worst", "."], 0),
        (["worst", "."], 0),
        (["worst"], 0),
    ]


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "blank.txt"
    path.write_text("(3 good)\n\n(1 bad)\n", encoding="utf-8")
    assert _read(path, phrases="roots") == [(["good"], 3), (["bad"], 1)]


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.txt"
    path.write_text("(3 good)\n(1 (2 not) (9 bad))\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"broken.txt, line 2: not a sentiment tree .*found '9'"):
        _read(path)


def test_unknown_phrases_option() -> None:
    with pytest.raises(ConfigurationError, match="phrases must be one of"):
        SstTreesReader(phrases="leaves")


def test_bundled_fixtures_read() -> None:
    for split, trees in [("train", 60), ("dev", 20), ("test", 20)]:
        assert len(_read(FIXTURES_ROOT / "sst" / f"{split}.txt", phrases="roots")) == trees


@needs_shared
@pytest.mark.needs_shared
def test_real_sst_counts() -> None:
    sst = SHARED / "data" / "sst"
    assert len(_read(sst / "dev.txt", phrases="roots")) == 1101
    # 318,582 subtrees in the 8,544 training trees, 159,274 distinct labelled phrases.
    assert len(_read(sst / "train.txt")) == 159274
