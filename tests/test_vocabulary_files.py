"""A broken vocabulary folder (``non_padded_namespaces.txt`` and ``NAMESPACE.txt`` files) is named in one line.

AllenNLP's ``Vocabulary.from_files`` fails on some breakages with a traceback that names neither file
nor line, and takes a token on two lines silently (training then fails batches later on an index out
of range). :func:`check_vocabulary_folder` names each; through ``allennlp train`` with
``vocabulary: {type: from_files, directory: ...}`` the program ends with that line.
"""

import json
import re
import shutil
from pathlib import Path

import pytest
from allennlp.data import Vocabulary

from elmo_tasks.vocabulary_files import VocabularyFileError, check_vocabulary_folder
from tests.conftest import run_allennlp
from tests.uncaught_errors import uncaught_error_line

REMEDY = "re-create the vocabulary (or restore the folder from where it was written)"


@pytest.fixture()
def folder(tmp_path) -> Path:
    """A vocabulary folder as AllenNLP writes it: padded ``tokens``, non-padded ``labels``."""
    vocabulary = Vocabulary()
    vocabulary.add_tokens_to_namespace(["the", "cat", "sat", "."], "tokens")
    vocabulary.add_tokens_to_namespace(["positive", "negative"], "labels")
    vocabulary.save_to_files(str(tmp_path / "vocabulary"))
    return tmp_path / "vocabulary"


def _refusal(folder: Path) -> str:
    """The message ``check_vocabulary_folder`` refuses ``folder`` with (the test fails if it accepts it)."""
    with pytest.raises(VocabularyFileError) as refused:
        check_vocabulary_folder(str(folder))
    return str(refused.value)


def test_a_folder_as_allennlp_writes_it_passes(folder):
    check_vocabulary_folder(str(folder))
    assert Vocabulary.from_files(str(folder)).get_vocab_size("tokens") == 6


def test_a_missing_folder_a_file_and_a_folder_without_its_namespace_list_are_named(folder, tmp_path):
    expected = "expected an AllenNLP vocabulary folder (non_padded_namespaces.txt and one NAMESPACE.txt per namespace"
    with pytest.raises(VocabularyFileError, match=rf"none does not exist; {re.escape(expected)}"):
        check_vocabulary_folder(str(tmp_path / "none"))
    with pytest.raises(VocabularyFileError, match=rf"tokens\.txt is a file; {re.escape(expected)}"):
        check_vocabulary_folder(str(folder / "tokens.txt"))
    (folder / "non_padded_namespaces.txt").unlink()
    assert _refusal(folder).startswith(f"{folder} has no non_padded_namespaces.txt; {expected}")


def test_a_folder_inside_is_named(folder):
    (folder / "old").mkdir()
    with pytest.raises(VocabularyFileError, match=r"vocabulary/old is a folder; expected only namespace files"):
        check_vocabulary_folder(str(folder))


def test_bytes_that_are_not_utf8_name_the_line_and_character(folder):
    (folder / "tokens.txt").write_bytes(b"the\ncat\ncaf\xe9\n")
    assert _refusal(folder) == (
        f"{folder / 'tokens.txt'}, line 3: bytes that are not UTF-8 (the first at character 4); expected UTF-8 "
        f"text, one token per line: {REMEDY}"
    )


def test_a_token_on_two_lines_is_named_with_both_lines(folder):
    (folder / "tokens.txt").write_text("@@UNKNOWN@@\nthe\ncat\nthe\n", encoding="utf-8")
    assert _refusal(folder) == (
        f"{folder / 'tokens.txt'}, line 4: 'the' repeats line 2; expected each token once (AllenNLP would size the "
        f"namespace one entry short and fail later on an index out of range): {REMEDY}"
    )


def test_the_padding_token_in_a_padded_namespace_is_named_but_allowed_in_a_non_padded_one(folder):
    (folder / "labels.txt").write_text("@@PADDING@@\npositive\n", encoding="utf-8")  # labels: not padded
    check_vocabulary_folder(str(folder))
    (folder / "tokens.txt").write_text("@@PADDING@@\n@@UNKNOWN@@\nthe\n", encoding="utf-8")
    with pytest.raises(VocabularyFileError, match=r"tokens\.txt, line 1: the padding token @@PADDING@@, which"):
        check_vocabulary_folder(str(folder))


def test_allennlp_train_with_a_vocabulary_folder_names_its_broken_file(tmp_path, capsys):
    """The non-UTF-8 byte fails in Vocabulary.from_files; the repeated token only batches into training."""
    folder = tmp_path / "vocabulary"
    run_allennlp(
        "train",
        "experiments/sst5_baseline.jsonnet",
        "-s",
        str(tmp_path / "first"),
        "--dry-run",  # builds and saves the vocabulary, trains nothing
    )
    shutil.copytree(tmp_path / "first" / "vocabulary", folder)
    tokens = (folder / "tokens.txt").read_text(encoding="utf-8").splitlines(keepends=True)

    def train(name: str) -> None:
        overrides = {"vocabulary": {"type": "from_files", "directory": str(folder)}, "trainer.num_epochs": 1}
        run_allennlp(
            "train", "experiments/sst5_baseline.jsonnet", "-s", str(tmp_path / name), "-o", json.dumps(overrides)
        )

    (folder / "tokens.txt").write_bytes("".join(tokens[:3]).encode() + b"caf\xe9\n")
    line = uncaught_error_line(capsys, lambda: train("latin1"))
    assert line.startswith(f"allennlp: error: {folder / 'tokens.txt'}, line 4: bytes that are not UTF-8"), line

    (folder / "tokens.txt").write_text("".join(tokens[:4] + [tokens[2]] + tokens[4:]), encoding="utf-8")
    line = uncaught_error_line(capsys, lambda: train("repeated"))
    assert line.startswith(f"allennlp: error: {folder / 'tokens.txt'}, line 5: {tokens[2].strip()!r} repeats line 3"), (
        line
    )
