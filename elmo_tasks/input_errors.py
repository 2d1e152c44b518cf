"""One line, no traceback, when a command ends on a file the user gave that is corrupt or of the wrong kind.

AllenNLP's commands (``allennlp train``, ``evaluate``, ``predict``) let every exception through to
Python, which prints a traceback of AllenNLP's and torch's frames. For a mistake in a user's file
that hides the one line that matters. :func:`install_input_error_lines` (called where a command
starts, :mod:`elmo_tasks.command_start`, beside ``install_safe_extraction``) replaces ``sys.excepthook``
so that an uncaught exception ends the program with ``PROGRAM: error: MESSAGE``, one line on
stderr (exit status 1), when it is:

- one of our errors about a user's file (:func:`user_file_errors`: the biLM's options, weights and
  softmax, task data files, word vectors, model archives, vocabulary folders), whose message
  already names the file and what was expected; or
- any failure inside one of the AllenNLP functions that use a user's file (:data:`CHECKED_CALLS`:
  ``load_archive``, ``Vocabulary.from_files``, the readers of pretrained word vectors, a training
  whose config reads its vocabulary from a folder, ``allennlp evaluate``'s and ``predict``'s runs) for
  which a check of that file, run then, finds what is wrong with it: the line is the check's
  (:func:`elmo_tasks.archive_errors.archive_problem`,
  :func:`elmo_tasks.vocabulary_files.check_vocabulary_folder`,
  :func:`elmo_tasks.word_vectors.check_glove_file`, for ``evaluate`` and ``predict`` a label in the data
  that the model does not have, and for ``predict`` whether the predictor fits the archive's model).
  The checks cost nothing until a command fails.

Anything else goes to the hook that was there before (a traceback): a failure that no check
explains is not the file's. Nothing of AllenNLP is replaced; the hook only reads the arguments of
the failing call from the traceback's frames (a test checks that those functions still take them).
"""

import os
import re
import sys
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Type

# the attribute our hook carries, so that installing twice changes nothing
_INSTALLED_MARK = "_elmo_tasks_input_error_lines"


@dataclass(frozen=True)
class CheckedCall:
    """An AllenNLP function that uses a user's file: ``module.qualname``, and the check that explains its
    failure from its frame's arguments (one line, or None when the file shows nothing wrong)."""

    module: str
    qualname: str
    explain: Callable[[Dict[str, Any], BaseException], Optional[str]]


def _archive_explained(arguments: Dict[str, Any], error: BaseException) -> Optional[str]:
    from elmo_tasks.archive_errors import archive_problem

    return archive_problem(os.fspath(arguments["archive_file"]), arguments.get("weights_file"), error)


def _vocabulary_explained(arguments: Dict[str, Any], error: BaseException) -> Optional[str]:
    from elmo_tasks.vocabulary_files import vocabulary_folder_problem

    directory = os.fspath(arguments["directory"])
    if "://" in directory or not os.path.isdir(directory):  # a URL or an archive: AllenNLP's cache extracted it
        return None
    return vocabulary_folder_problem(directory)


def _training_vocabulary_explained(arguments: Dict[str, Any], error: BaseException) -> Optional[str]:
    """A training whose config reads its vocabulary from a folder (``type: from_files`` or ``extend``): a token
    on two lines there loads silently and fails only batches later, on an index out of range."""
    from allennlp.common import Params

    params = Params.from_file(str(arguments["parameter_filename"]), arguments.get("overrides") or "")
    vocabulary = params.get("vocabulary", None)
    settings = vocabulary.as_dict(quiet=True) if vocabulary is not None else {}
    directory = settings.get("directory")
    if settings.get("type") not in ("from_files", "extend") or not isinstance(directory, str):
        return None
    return _vocabulary_explained({"directory": directory}, error)


def _word_vectors_explained(path_argument: str, dim_argument: Optional[str]) -> Callable[..., Optional[str]]:
    def explain(arguments: Dict[str, Any], error: BaseException) -> Optional[str]:
        from pathlib import Path

        from elmo_tasks.word_vectors import GloveFormatError, check_glove_file

        path = str(arguments[path_argument])
        if "://" in path or "#" in path:  # a URL, or a file inside an archive: not checked here
            return None
        try:
            check_glove_file(Path(path), dim=arguments.get(dim_argument) if dim_argument else None)
        except GloveFormatError as problem:
            return str(problem)
        return None

    return explain


def _predictor_explained(arguments: Dict[str, Any], error: BaseException) -> Optional[str]:
    """``allennlp predict`` failed with a predictor other than the archive's model's own (or with none, for
    a model that has none): the predictor cannot read inputs for that model."""
    from elmo_tasks.commands.command_paths import archive_model_type, describe_archive, predictor_of

    args = arguments["args"]
    archive_file, asked = str(args.archive_file), args.predictor
    model_type = archive_model_type(archive_file)
    if model_type is None:
        return None
    own = predictor_of(model_type)
    if own is not None and asked in (None, own):
        return None  # the model's own predictor: a failure of something else
    used = f"the predictor {asked!r}, which is not this model's," if asked else "no predictor (the model names none)"
    fix = f"pass --predictor {own} or leave --predictor out" if own else "give it an archive of a task model"
    return (
        f"{archive_file} holds {describe_archive(archive_file, model_type)}; `allennlp predict` ran it with {used} "
        f"and failed ({type(error).__name__}): {fix}"
    )


# AllenNLP's message for a label that is not in a namespace without an unknown-token entry (``labels``)
_UNKNOWN_LABEL = re.compile(r"^'(.*)' not found in vocab namespace '(.*)', and namespace does not contain the default")


def _unknown_label_explained(arguments: Dict[str, Any], error: BaseException) -> Optional[str]:
    """``allennlp evaluate`` or ``predict --use-dataset-reader`` on data with a label the model was not
    trained with (a NER tag type of another tag set, say): AllenNLP's KeyError names neither the data file
    nor what to do."""
    match = _UNKNOWN_LABEL.match(str(error.args[0])) if isinstance(error, KeyError) and error.args else None
    if match is None:
        return None
    args = arguments["args"]
    label, namespace = match.groups()
    return (
        f"{args.input_file} has the label {label!r} (as the model's dataset reader reads it), which the model in "
        f"{args.archive_file} was not trained with (its {namespace!r} namespace has no such entry): give it data "
        "labelled with the labels of its training data"
    )


#: The AllenNLP functions whose failures :func:`failure_explained` asks a check about, in this order: the
#: files first, the predictor last (a broken archive fails ``predict`` too). ``load_archive`` reads the
#: archive's vocabulary through ``Vocabulary.from_files``, in a folder it has removed by the time the
#: hook runs: the archive's check covers it.
CHECKED_CALLS: Tuple[CheckedCall, ...] = (
    CheckedCall("allennlp.models.archival", "load_archive", _archive_explained),
    CheckedCall("allennlp.data.vocabulary", "Vocabulary.from_files", _vocabulary_explained),
    CheckedCall(
        "allennlp.modules.token_embedders.embedding",
        "_read_pretrained_embeddings_file",
        _word_vectors_explained("file_uri", "embedding_dim"),
    ),
    CheckedCall(
        "allennlp.data.vocabulary", "_read_pretrained_tokens", _word_vectors_explained("embeddings_file_uri", None)
    ),
    CheckedCall("allennlp.commands.train", "train_model_from_file", _training_vocabulary_explained),
    CheckedCall("allennlp.commands.evaluate", "evaluate_from_args", _unknown_label_explained),
    CheckedCall("allennlp.commands.predict", "_predict", _unknown_label_explained),
    CheckedCall("allennlp.commands.predict", "_predict", _predictor_explained),
)


def user_file_errors() -> Tuple[Type[BaseException], ...]:
    """Our exception types whose message is the one line a user needs (imported when asked: the hook
    runs after the command has imported them, or has no instance of them to show)."""
    from elmo_tasks.archive_errors import ArchiveFileError
    from elmo_tasks.bilm.errors import BilmError
    from elmo_tasks.data_file_error import DataFileError
    from elmo_tasks.safe_archives import UnsafeArchiveError
    from elmo_tasks.vocabulary_files import VocabularyFileError
    from elmo_tasks.whole_archive import ArchiveWriteError
    from elmo_tasks.word_vectors.errors import WordVectorsError

    return (
        BilmError,
        DataFileError,
        WordVectorsError,
        ArchiveFileError,
        VocabularyFileError,
        UnsafeArchiveError,
        ArchiveWriteError,
    )


def failure_explained(error: BaseException, traceback: Optional[TracebackType]) -> Optional[str]:
    """The one line for an uncaught ``error``: its own message for a :func:`user_file_errors` type, else the
    line of the first check (:func:`_checked_calls`' order) of a :data:`CHECKED_CALLS` call in ``traceback``
    that finds its file wrong; None for anything else."""
    if isinstance(error, user_file_errors()):
        return " ".join(str(error).split("\n"))
    for call, arguments in _checked_calls(traceback):
        try:
            line = call.explain(arguments, error)
        except Exception:  # noqa: BLE001  (a check that fails must not hide the original error)
            line = None
        if line is not None:
            return line
    return None


def install_input_error_lines() -> None:
    """Makes an uncaught error that :func:`failure_explained` explains end the program with its one line
    (``PROGRAM: error: LINE`` on stderr); any other goes to the hook that was there before. Idempotent."""
    previous_hook = sys.excepthook
    if getattr(previous_hook, _INSTALLED_MARK, False):
        return

    def excepthook(exc_type: Type[BaseException], value: BaseException, traceback: Optional[TracebackType]) -> None:
        line = failure_explained(value, traceback) if isinstance(value, Exception) else None
        if line is None:
            previous_hook(exc_type, value, traceback)
        else:
            print(f"{program_name()}: error: {line}", file=sys.stderr)

    setattr(excepthook, _INSTALLED_MARK, True)
    sys.excepthook = excepthook


def program_name() -> str:
    """The program's name as its user typed it: ``allennlp``, ``elmo-tasks``, ``python -m elmo_tasks``."""
    launched = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if os.path.basename(launched) == "__main__.py":
        return f"python -m {os.path.basename(os.path.dirname(launched))}"
    return os.path.basename(launched) or "python"


def checked_call_arguments() -> List[Tuple[str, str, Tuple[str, ...]]]:
    """``(module, qualname, argument names)`` of each of :data:`CHECKED_CALLS` as the installed AllenNLP
    defines it, for the test that they still exist and take the arguments the checks read."""
    import importlib

    found = []
    for call in CHECKED_CALLS:
        function: Any = importlib.import_module(call.module)
        for part in call.qualname.split("."):
            function = getattr(function, part)
        code = getattr(function, "__func__", function).__code__
        found.append((call.module, call.qualname, code.co_varnames[: code.co_argcount]))
    return found


def _checked_calls(traceback: Optional[TracebackType]) -> Iterator[Tuple[CheckedCall, Dict[str, Any]]]:
    """Each call of one of :data:`CHECKED_CALLS` on the traceback's stack, with its arguments: in the order
    of :data:`CHECKED_CALLS`, and of one function outermost first."""
    frames: List[FrameType] = []
    while traceback is not None:
        frames.append(traceback.tb_frame)
        traceback = traceback.tb_next
    for call in CHECKED_CALLS:
        for frame in frames:
            if frame.f_globals.get("__name__") == call.module and frame.f_code.co_qualname == call.qualname:
                yield call, dict(frame.f_locals)
