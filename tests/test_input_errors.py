"""The hook that ends a command on a user's broken file with one line: what it explains, what it leaves alone.

The files themselves are tested where they belong (tests/bilm/test_corrupt_bilm_files.py,
tests/test_archive_errors.py, tests/test_vocabulary_files.py,
tests/word_vectors/test_corrupt_glove_files.py); here: the AllenNLP functions it reads arguments
from still take them, installing twice changes nothing, and any other error keeps its traceback.
"""

import os
import sys
from typing import Any, List

import pytest

from elmo_tasks import input_errors
from elmo_tasks.archive_errors import ArchiveFileError
from elmo_tasks.bilm.errors import WeightFileError
from elmo_tasks.input_errors import checked_call_arguments, failure_explained, install_input_error_lines
from elmo_tasks.safe_archives import UnsafeArchiveError

# the arguments each check reads from the frame of the AllenNLP function it explains
ARGUMENTS_READ = {
    "load_archive": {"archive_file", "weights_file"},
    "Vocabulary.from_files": {"directory"},
    "_read_pretrained_embeddings_file": {"file_uri", "embedding_dim"},
    "_read_pretrained_tokens": {"embeddings_file_uri"},
    "train_model_from_file": {"parameter_filename", "overrides"},
    "evaluate_from_args": {"args"},
    "_predict": {"args"},
}


def test_the_allennlp_functions_it_explains_still_take_the_arguments_it_reads():
    """Fails when another AllenNLP renames one of them or its arguments: update CHECKED_CALLS."""
    found = {qualname: set(arguments) for _, qualname, arguments in checked_call_arguments()}
    assert set(found) == set(ARGUMENTS_READ)
    for qualname, needed in ARGUMENTS_READ.items():
        assert needed <= found[qualname], (qualname, found[qualname])


def _hooked(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    """Installs the hook over a recording one; returns what reached the recording hook."""
    reached: List[Any] = []
    monkeypatch.setattr(sys, "excepthook", lambda *info: reached.append(info[1]))
    install_input_error_lines()
    return reached


def test_our_file_errors_print_one_line_and_others_reach_the_previous_hook(monkeypatch, capsys):
    reached = _hooked(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["/venv/bin/allennlp", "train"])
    sys.excepthook(WeightFileError, WeightFileError("w.hdf5 is corrupt"), None)
    assert capsys.readouterr().err == "allennlp: error: w.hdf5 is corrupt\n" and reached == []
    sys.excepthook(UnsafeArchiveError, UnsafeArchiveError("model.tar.gz: refusing 'x'"), None)
    assert capsys.readouterr().err == "allennlp: error: model.tar.gz: refusing 'x'\n" and reached == []
    bug = ZeroDivisionError("a bug")
    sys.excepthook(ZeroDivisionError, bug, None)
    interrupt = KeyboardInterrupt()
    sys.excepthook(KeyboardInterrupt, interrupt, None)
    assert reached == [bug, interrupt] and capsys.readouterr().err == ""


def test_installing_twice_changes_nothing(monkeypatch):
    _hooked(monkeypatch)
    hook = sys.excepthook
    install_input_error_lines()
    assert sys.excepthook is hook


def test_a_message_of_several_lines_becomes_one(monkeypatch, capsys):
    _hooked(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["/x/elmo_tasks/__main__.py"])
    sys.excepthook(ArchiveFileError, ArchiveFileError("a\nb"), None)
    assert capsys.readouterr().err == "python -m elmo_tasks: error: a b\n"


def test_a_failing_check_leaves_the_original_error_alone(tmp_path, monkeypatch):
    """The check of a load_archive failure raises: the error is not explained (its traceback stands)."""
    from allennlp.models.archival import load_archive

    def broken_check(*args: Any) -> None:
        raise RuntimeError("the check broke")

    monkeypatch.setattr("elmo_tasks.archive_errors.archive_problem", broken_check)
    with pytest.raises(Exception) as raised:
        load_archive(str(tmp_path / "none.tar.gz"))
    assert failure_explained(raised.value, raised.tb) is None
    monkeypatch.undo()
    assert failure_explained(raised.value, raised.tb) == (
        f"{tmp_path / 'none.tar.gz'} does not exist; expected a model.tar.gz written by `allennlp train` (or its "
        "serialization folder)"
    )


def test_the_checked_calls_come_files_first_predictor_last():
    names = [call.qualname for call in input_errors.CHECKED_CALLS]
    assert names[0] == "load_archive" and names[-1] == "_predict"


@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_a_label_the_model_lacks_is_one_line_naming_the_data_file(command, tmp_path):
    """The shipped NER model (CoNLL-2003's four types) on a file with a GPE tag, as a user runs it."""
    import subprocess

    data = tmp_path / "ontonotes_like.txt"
    data.write_text("Karl NNP I-NP I-PER\nvisited VBD I-VP O\nOslo NNP I-NP I-GPE\n", encoding="utf-8")
    extra = ["--use-dataset-reader", "--output-file", "out.jsonl"] if command == "predict" else []
    archive = "elmo_tasks:pretrained/ner"
    done = subprocess.run(
        [sys.executable, "-m", "elmo_tasks", command, archive, str(data), *extra],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == (
        f"python -m elmo_tasks: error: {data} has the label 'U-GPE' (as the model's dataset reader reads it), which "
        f"the model in {archive} was not trained with (its 'labels' namespace has no such entry): give it data "
        "labelled with the labels of its training data"
    )
