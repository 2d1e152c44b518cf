"""The ``sst_ptb_trees`` reader on hand-written trees, and on the real data when it is present."""

from pathlib import Path
from typing import List, Tuple

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader

from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.sst.reader import PhraseSelection, SstTreesReader
from tests.conftest import FIXTURES_ROOT, SHARED_DATA, needs_shared

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


def test_phrase_selection_keeps_every_copy_of_the_long_enough_phrases(trees: Path) -> None:
    # The paper's training set (appendix A.8) on trees of 3 tokens: min_tokens 2 keeps the phrases of 2+.
    selection = PhraseSelection(min_tokens=2, deduplicate=False)
    assert _read(trees, phrases=selection) == [
        (["the", "best", "."], 4),
        (["the", "best"], 2),
        (["the", "worst", "."], 0),
        (["worst", "."], 0),
    ]
    assert _read(trees, phrases=PhraseSelection(min_tokens=4)) == []


def test_phrase_selection_from_a_config(trees: Path) -> None:
    params = Params({"type": "sst5_reader", "phrases": {"min_tokens": 1, "deduplicate": False}})
    reader = DatasetReader.from_params(params)
    assert len(list(reader.read(str(trees)))) == 10  # every node of both trees, repeats included
    roots = DatasetReader.from_params(Params({"type": "sst5_reader", "phrases": "roots"}))
    assert len(list(roots.read(str(trees)))) == 2


def test_deduplicate_goes_inside_a_phrase_selection() -> None:
    with pytest.raises(ConfigurationError, match="deduplicate inside phrases"):
        SstTreesReader(phrases=PhraseSelection(min_tokens=4), deduplicate=False)
    with pytest.raises(ConfigurationError, match="min_tokens must be 1 or more"):
        PhraseSelection(min_tokens=0)


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


@pytest.mark.slow  # reads all of SST, about 10 s: in `make test-all`, out of the fast suite
@needs_shared
@pytest.mark.needs_shared
def test_real_sst_counts() -> None:
    sst = SHARED_DATA / "sst"
    assert len(_read(sst / "dev.txt", phrases="roots")) == 1101
    # 318,582 subtrees in the 8,544 training trees, 159,274 distinct labelled phrases.
    assert len(_read(sst / "train.txt")) == 159274
    # The paper's training set (appendix A.8): 93,567 phrases of four or more tokens (93,162 distinct).
    assert len(_read(sst / "train.txt", phrases=PhraseSelection(min_tokens=4, deduplicate=False))) == 93567
