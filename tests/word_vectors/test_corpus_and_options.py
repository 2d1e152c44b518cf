"""The corpus as gensim reads it, and the options: checked, recorded, and spelled as a command line."""

import argparse
import shlex

import pytest

from elmo_tasks.word_vectors import CorpusError, WordVectorOptions, WordVectorsError
from elmo_tasks.word_vectors.build_command import add_arguments, options_from_args
from elmo_tasks.word_vectors.corpus import TokenizedCorpus
from tests.word_vectors.unreadable_files import check_unreadable_files_are_named


def test_sentences_are_split_on_single_spaces_and_read_again_on_each_pass(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes("The cat  sat .\r\n\n   \nNaïve\tword Ünïcode\n".encode("utf-8"))
    corpus = TokenizedCorpus(path)
    expected = [["The", "cat", "sat", "."], ["Naïve\tword", "Ünïcode"]]
    assert list(corpus) == expected and list(corpus) == expected
    assert list(TokenizedCorpus(path, lowercase=True))[1] == ["naïve\tword", "ünïcode"]


def test_a_line_longer_than_the_limit_comes_in_pieces(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(" ".join(str(number) for number in range(7)) + "\nend\n", encoding="utf-8")
    assert list(TokenizedCorpus(path, max_sentence_tokens=3)) == [["0", "1", "2"], ["3", "4", "5"], ["6"], ["end"]]


def test_corpus_errors_name_the_file_and_line(tmp_path):
    check_unreadable_files_are_named(
        lambda path: list(TokenizedCorpus(path)),
        CorpusError,
        tmp_path,
        missing="the corpus .*none.txt does not exist; expected a UTF-8 text file",
    )


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"algorithm": "glove"}, r"algorithm \(--algorithm\) is 'glove'; expected one of \('word2vec', 'fasttext'\)"),
        ({"architecture": "sg"}, r"architecture \(--architecture\) is 'sg'"),
        ({"dim": 0}, r"dim \(--dim\) is 0; expected a whole number of at least 1"),
        ({"min_count": 2.5}, r"min_count \(--min-count\) is 2.5"),
        ({"decimals": 12}, r"decimals \(--decimals\) is 12; expected at most 9"),
        ({"seed": -1}, r"seed \(--seed\) is -1"),
    ],
)
def test_options_out_of_range_are_refused(changes, message):
    with pytest.raises(WordVectorsError, match=message):
        WordVectorOptions(**changes)


def test_the_recorded_command_line_parses_back_to_the_same_options():
    options = WordVectorOptions(algorithm="fasttext", architecture="cbow", dim=50, min_count=2, lowercase=True)
    line = options.command_line("runs/corpus dir/train.txt", "vectors.txt")
    arguments = shlex.split(line)
    assert arguments[:4] == ["allennlp", "build-word-vectors", "runs/corpus dir/train.txt", "vectors.txt"]
    parsed = add_arguments(argparse.ArgumentParser()).parse_args(arguments[2:])
    assert options_from_args(parsed) == options
    assert options_from_args(add_arguments(argparse.ArgumentParser()).parse_args(["c", "o"])) == WordVectorOptions()


def test_options_come_back_from_a_record():
    options = WordVectorOptions(dim=20, epochs=2)
    assert WordVectorOptions.from_dict(options.as_dict()) == options
    with pytest.raises(WordVectorsError, match=r"unknown word-vector options \['size'\]"):
        WordVectorOptions.from_dict({"size": 20})
