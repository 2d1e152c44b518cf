"""Broken GloVe-format files handed to an experiment (``ELMO_TASKS_WORD_VECTORS``) end in one line naming the
file and line; a word given twice is listed, or refused on request.

The other line-level mistakes (a wrong number of values, a value that is not a number, tabs, a
header of another dimension, an empty file) are checked in test_glove_format.py through
``check_glove_file``; here the same check names the line when ``allennlp train`` fails on the file.
"""

from pathlib import Path

import pytest

from elmo_tasks.word_vectors import GloveFormatError, check_glove_file, read_glove_file
from tests.conftest import run_allennlp
from tests.uncaught_errors import uncaught_error_line

# words of the SST fixtures, 16 values each: the size of sst5_baseline's word embedding on the fixtures
WORDS = ["the", ",", ".", "a", "and", "of"]
DIM = 16


def _vector_line(word: str, dim: int = DIM, seed: int = 0) -> str:
    return word + "".join(f" {((index + seed) % 7 - 3) / 10:.1f}" for index in range(dim)) + "\n"


def _write(tmp_path: Path, text: str, data: bytes = b"") -> Path:
    path = tmp_path / "vectors.txt"
    path.write_bytes(text.encode("utf-8") + data)
    return path


def test_a_word_given_twice_is_listed_with_both_lines(tmp_path):
    path = _write(tmp_path, _vector_line("the") + _vector_line("cat") + _vector_line("the", seed=1))
    summary = check_glove_file(path)
    assert (summary.vectors, summary.repeated_words) == (3, [(3, 1)])
    assert read_glove_file(path)[0] == ["the", "cat", "the"]


def test_a_word_given_twice_is_refused_when_each_word_must_come_once(tmp_path):
    path = _write(tmp_path, _vector_line("the") + _vector_line("cat") + _vector_line("the", seed=1))
    with pytest.raises(GloveFormatError) as refused:
        check_glove_file(path, unique_words=True)
    assert str(refused.value) == (
        f"{path}, line 3: 'the' repeats the word of line 1; expected each word once (AllenNLP would keep this line's "
        "vector and drop the other): delete one of the two lines"
    )


def _train_with(path: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ELMO_TASKS_WORD_VECTORS", str(path))
    run_allennlp(
        "train", "experiments/sst5_baseline.jsonnet", "-s", str(tmp_path / "run"), "-o", '{"trainer.num_epochs": 1}'
    )


@pytest.mark.parametrize(
    "lines, tail, expected",
    [
        (
            [_vector_line(word) for word in WORDS[:2]],
            b"caf\xe9" + _vector_line("").encode(),
            "vectors.txt, line 3: bytes that are not UTF-8 (the first at character 4); expected UTF-8 text",
        ),
        (
            [_vector_line(word, dim=8) for word in WORDS],
            b"",
            "vectors.txt, line 1: 'the' has 8 values; expected 16, the dimension asked for (is this a 8-dimensional "
            "file?)",
        ),
        (
            [_vector_line(word) for word in WORDS[:2]] + [_vector_line(".").replace(" 0.1", " O.1", 1)],
            b"",
            "vectors.txt, line 3: value 5 of '.' is 'O.1', not a number; expected a word, then its values",
        ),
        ([], b"", "vectors.txt holds no word vectors; expected lines of a word, then its values"),
    ],
    ids=["not UTF-8", "another dimension", "not a number", "empty"],
)
def test_allennlp_train_ends_with_the_vector_files_line(lines, tail, expected, tmp_path, monkeypatch, capsys):
    path = _write(tmp_path, "".join(lines), tail)
    line = uncaught_error_line(capsys, lambda: _train_with(path, tmp_path, monkeypatch))
    assert line.startswith(f"allennlp: error: {tmp_path / expected}"), line
