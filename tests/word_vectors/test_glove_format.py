"""The GloVe text format: what we write, AllenNLP's reader reads back with the same numbers; bad files name
their line."""

import gzip
import zipfile
from pathlib import Path

import numpy
import pytest
from allennlp.data import Vocabulary
from allennlp.modules.token_embedders.embedding import _read_pretrained_embeddings_file

from elmo_tasks.word_vectors import (
    GloveFormatError,
    WordVectorsError,
    check_glove_file,
    read_glove_file,
    write_glove_file,
)
from tests.word_vectors.unreadable_files import check_unreadable_files_are_named

WORDS = ["the", ",", "Paris", "naïve", "co-op", "3.5"]


def _vectors(rows: int = len(WORDS), dim: int = 4) -> numpy.ndarray:
    return numpy.random.default_rng(0).normal(0.0, 0.4, size=(rows, dim)).astype(numpy.float32)


def _write(tmp_path: Path, text: str, name: str = "vectors.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["vectors.txt", "vectors.txt.gz"])
def test_allennlp_reads_back_the_written_numbers(tmp_path, name):
    vectors = _vectors()
    path = tmp_path / name
    write_glove_file(path, WORDS, vectors, decimals=6)
    vocab = Vocabulary()
    for word in WORDS + ["unseen"]:
        vocab.add_token_to_namespace(word)
    matrix = _read_pretrained_embeddings_file(str(path), 4, vocab).numpy()
    for row, word in enumerate(WORDS):
        written = numpy.asarray([f"{value:.6f}" for value in vectors[row].tolist()], dtype="float32")
        index = vocab.get_token_index(word)
        assert numpy.array_equal(matrix[index], written), word
        assert numpy.abs(matrix[index] - vectors[row]).max() <= 5e-7
    words, ours = read_glove_file(path)
    assert words == WORDS
    assert numpy.array_equal(ours, matrix[[vocab.get_token_index(word) for word in WORDS]])


def test_the_file_is_a_word_and_fixed_decimals_per_line(tmp_path):
    path = tmp_path / "v.txt"
    write_glove_file(path, ["a", "b"], numpy.asarray([[0.5, -0.25], [1.0, 0.0]], dtype=numpy.float32), decimals=3)
    assert path.read_bytes() == b"a 0.500 -0.250\nb 1.000 0.000\n"


def test_gzip_output_is_byte_identical_for_equal_vectors(tmp_path):
    first, second = tmp_path / "a" / "v.txt.gz", tmp_path / "b" / "w.txt.gz"
    for path in (first, second):
        path.parent.mkdir()
        write_glove_file(path, WORDS, _vectors())
    assert first.read_bytes() == second.read_bytes()  # no time stamp or file name inside
    assert gzip.decompress(first.read_bytes()).decode("utf-8").startswith("the ")


@pytest.mark.parametrize("word", ["", "two words", "line\nbreak", "carriage\rreturn"])
def test_words_the_format_cannot_hold_are_refused(tmp_path, word):
    with pytest.raises(WordVectorsError, match="cannot be written in the GloVe text format"):
        write_glove_file(tmp_path / "v.txt", ["ok", word], _vectors(2))


def test_non_finite_values_are_refused_on_writing(tmp_path):
    vectors = _vectors(2)
    vectors[1, 2] = numpy.nan
    with pytest.raises(WordVectorsError, match="the vector of 'b' holds values that are not finite"):
        write_glove_file(tmp_path / "v.txt", ["a", "b"], vectors)


def test_check_gives_the_dimension_and_count(tmp_path):
    summary = check_glove_file(_write(tmp_path, "the 0.1 0.2 0.3\ncat 1 -2 3e-2\n\n"))
    assert (summary.dim, summary.vectors, summary.header, summary.words_with_spaces) == (3, 2, False, [])


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "the 0.1 0.2 0.3\ncat 0.1 0.2\n",
            r"v\.txt, line 2: 'cat' has 2 values; expected 3, as the first vector \(line 1\) has$",
        ),
        ("the 0.1 0.2\ncat 0.1 0.2 0.3\n", r"line 2: 'cat' has 3 values; expected 2"),
        ("the 0.1 0.2\ncat 0.1 zero\n", r"line 2: value 2 of 'cat' is 'zero', not a number"),
        ("the 0.1 0.2\ncat 0.1  0.2\n", r"line 2: 'cat' has 3 values"),
        ("the 0.1 0.2\ncat 0.1\t0.2\n", r"line 2: 'cat' has 1 value; expected 2"),
        ("the 0.1 0.2 0.3\ncat 0.1  0.2\n", r"line 2: value 2 of 'cat' is an empty value \(two spaces in a row\?\)"),
        ("the 0.1 0.2\ncat nan 0.2\n", r"line 2: value 1 of 'cat' is 'nan'; expected finite numbers"),
        ("the 0.1 0.2\ncat\t0.1\t0.2\n", r"line 2: 'cat\\t0.1\\t0.2' has no values after it \(it holds tabs"),
        ("the 0.1 0.2\n 0.1 0.2\n", r"line 2: the line starts with a space"),
        ("", r"holds no word vectors"),
        ("\n\n", r"holds no word vectors"),
    ],
)
def test_a_bad_line_is_named(tmp_path, text, message):
    with pytest.raises(GloveFormatError, match=message):
        check_glove_file(_write(tmp_path, text, "v.txt"))


def test_a_file_of_another_dimension_says_so_on_its_first_line(tmp_path):
    with pytest.raises(GloveFormatError) as error:
        check_glove_file(_write(tmp_path, "the 0.1 0.2\ncat 0.3 0.4\n"), dim=300)
    assert str(error.value).endswith(
        "line 1: 'the' has 2 values; expected 300, the dimension asked for (is this a 2-dimensional file?)"
    )


def test_missing_folder_undecodable_and_archive_paths(tmp_path):
    check_unreadable_files_are_named(check_glove_file, GloveFormatError, tmp_path, missing="does not exist")
    archive = tmp_path / "glove.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("glove.50d.txt", "the 0.1 0.2\n")
    with pytest.raises(GloveFormatError, match=r"is an archive \(zip or tar\); extract the vectors file"):
        check_glove_file(archive)


def test_a_header_line_is_accepted_as_allennlp_skips_it(tmp_path):
    path = _write(tmp_path, "2 3\nthe 0.1 0.2 0.3\ncat 0.4 0.5 0.6\n")
    summary = check_glove_file(path)
    assert (summary.header, summary.dim, summary.vectors) == (True, 3, 2)
    with pytest.raises(GloveFormatError, match="line 1: the header line says the vectors have 3 values; expected 4"):
        check_glove_file(path, dim=4)
    with pytest.raises(GloveFormatError, match=r"line 2: 'the' has 3 values; expected 2, as the header line"):
        check_glove_file(_write(tmp_path, "2 2\nthe 0.1 0.2 0.3\n", "h.txt"))


def test_words_holding_spaces_are_reported_and_left_out_as_allennlp_leaves_them_out(tmp_path):
    # the published 840B-token GloVe file has lines like these
    path = _write(tmp_path, "the 0.1 0.2\n. . . 0.3 0.4\nat name@domain.com 0.5 0.6\ncat 0.7 0.8\n")
    summary = check_glove_file(path)
    assert (summary.vectors, summary.words_with_spaces) == (2, [2, 3])
    words, vectors = read_glove_file(path)
    assert words == ["the", "cat"] and vectors.shape == (2, 2)
    vocab = Vocabulary()
    for word in ("the", ".", "cat"):
        vocab.add_token_to_namespace(word)
    matrix = _read_pretrained_embeddings_file(str(path), 2, vocab).numpy()
    assert numpy.allclose(matrix[vocab.get_token_index("cat")], [0.7, 0.8])
    assert not numpy.allclose(matrix[vocab.get_token_index(".")], [0.3, 0.4])  # skipped: a random vector
