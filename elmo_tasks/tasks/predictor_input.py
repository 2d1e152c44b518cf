"""The base class of every task predictor: JSON-lines input errors that name the input line.

``allennlp predict`` reads the input file itself, skips lines that are only whitespace, and hands
each other line to ``Predictor.load_line``; left alone, a bad line ends in a traceback (a bare
``json.JSONDecodeError``, a ``UnicodeDecodeError`` raised while AllenNLP reads the file, or a
``KeyError`` a batch later) that says neither which line nor what was expected.

:class:`JsonLinesPredictor` makes every bad line end the command with one line on stderr,
``allennlp predict: FILE, line N: what was wrong; expected ...``, and exit status 2, no traceback:

- When ``allennlp predict`` builds the predictor, the input file is read once before any
  prediction: bytes that are not UTF-8, lines that are not JSON, lines that are not objects and
  required keys that are missing, not strings or empty are all reported then (the first ten, one
  line each, and a count), so no half-written output is left. A missing input file gets one line
  too. stdin is read as UTF-8 with undecodable bytes kept (``surrogateescape``), so ``load_line``
  can report them.
- ``load_line`` checks each line again (this covers stdin and the subclasses' own checks, such as
  the input limits), counting the lines it gets; because blank lines never reach it, that count
  is turned into the file's line number, only when an error is reported, by rereading the file.

Used from Python, the same checks raise :class:`PredictorInputError`: ``predict_json`` for one
input, :meth:`JsonLinesPredictor.check_input_file` for a whole file (naming each bad line).

What this relies on in AllenNLP, and how each assumption is kept honest:

- *Which file ``allennlp predict`` reads* (supported interfaces only). AllenNLP hands a predictor
  nothing but the lines, so the predictor reads the command line that started the process,
  ``sys.argv``, with AllenNLP's own definition of the ``predict`` arguments (the public
  ``allennlp.commands.predict.Predict`` subcommand's ``add_subparser``): the same parser the
  command itself used, so the input file and ``--use-dataset-reader`` are read exactly as
  AllenNLP read them (:func:`predict_command_input`). This works for ``allennlp predict``,
  ``elmo-tasks predict`` and ``python -m elmo_tasks predict`` alike; a predictor built by any other
  program (``sys.argv[1]`` is not ``predict``) raises instead of printing.
- *Blank lines never reach ``load_line``, and the others come in file order, once each* (the
  line numbers of ``load_line``'s errors rest on it). No AllenNLP interface promises this; it is
  what ``_PredictManager._get_json_data`` of AllenNLP 2.10.1 does. ``tests/tasks/test_predictor_inputs.py``
  pins it: it checks the installed AllenNLP version and the shape of that function, and runs
  ``allennlp predict`` on a file with blank lines before a bad one, so an AllenNLP upgrade that
  changes it fails there rather than giving wrong line numbers.
"""

import argparse
import contextlib
import functools
import io
import json
import os
import sys
from typing import Callable, Dict, List, NoReturn, Optional, Sequence

from allennlp.commands.predict import Predict
from allennlp.common.file_utils import open_compressed
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.tasks.data_files import first_bad_byte, not_utf8

# The most problems listed when the input file is checked before predicting.
MAX_REPORTED_LINES = 10
#: The subcommand whose input file the predictor checks.
PREDICT_COMMAND = "predict"

#: A function that says what is wrong with a parsed input line at a place (or None).
RecordCheck = Callable[[object, str], Optional[str]]


class PredictorInputError(ValueError):
    """A predictor input that cannot be used; the message says where and what was expected."""


class JsonLinesPredictor(Predictor):
    """A Predictor whose input lines are JSON objects with the non-empty string keys in ``input_keys``.

    Subclasses set ``input_keys`` (key -> what it holds, for the error message) and call
    :meth:`check_input` in ``_json_to_instance`` so ``predict_json`` from Python checks too; they
    may extend ``check_input`` (calling it first) with checks of their own.

    One input goes through the batch methods as a batch of one (``predict_json`` through
    ``predict_batch_json``, ``predict_instance`` through ``predict_batch_instance``), so each task
    builds its output, and bounds the model's passes, in one place.
    """

    input_keys: Dict[str, str] = {}

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._records_read = 0
        #: The input of the ``allennlp predict`` command that built this predictor ("-" for stdin),
        #: or None (used from Python, or ``--use-dataset-reader``): then errors are raised, not printed.
        self._command_input: Optional[str] = predict_command_input(sys.argv)
        if self._command_input == "-":
            _read_stdin_keeping_bad_bytes()
        elif self._command_input is not None:
            # The generic checks only: a subclass's own checks may need what its __init__ sets next.
            problems = self._file_problems(self._command_input, self._generic_problem)
            if problems:
                _exit_with(problems)

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def load_line(self, line: str) -> JsonDict:
        """One input line -> its JSON object; a bad line ends ``allennlp predict`` with one line naming it."""
        self._records_read += 1
        try:
            record = self._parse_line(line, self._where)
            self.check_input(record, self._where)
        except PredictorInputError as error:
            if self._command_input is None:
                raise
            _exit_with([str(error)])
        assert isinstance(record, dict)  # check_input raised otherwise
        return record

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """Raises PredictorInputError unless ``record`` is an object whose every input key is a non-empty string.

        ``where``: a function giving the input's place for the message (default: "input").
        """
        problem = self._record_problem(record)
        if problem is not None:
            raise PredictorInputError(f"{where() if where is not None else 'input'}: {problem}")

    def example(self) -> str:
        """A valid input line, for error messages."""
        return json.dumps({key: "..." for key in self.input_keys})

    def expected(self) -> str:
        """What an input line must be, for error messages."""
        keys = " and ".join(f'the "{key}" string ({meaning})' for key, meaning in self.input_keys.items())
        return f"expected one JSON object per line with {keys}, not empty, like {self.example()}"

    def check_input_file(self, path: str) -> None:
        """Raises PredictorInputError unless every line of the JSON-lines file ``path`` passes :meth:`check_input`.

        The message has one line per bad line, ``FILE, line N: what was wrong; expected ...`` (the
        first ten, then how many in all), as ``allennlp predict`` prints them. A missing file is
        one such line; a URL is not read here (``load_line`` checks its lines as they come).
        """
        problems = self._file_problems(path, self._full_problem)
        if problems:
            raise PredictorInputError("\n".join(problems))

    def _parse_line(self, line: str, where: Callable[[], str]) -> object:
        position = first_bad_byte(line)
        if position is not None:
            raise PredictorInputError(f"{where()}: {not_utf8(position)}")
        try:
            return json.loads(line.rstrip("\r\n"))
        except json.JSONDecodeError as error:
            raise PredictorInputError(
                f"{where()}: not valid JSON ({error.msg}, column {error.colno}); {self.expected()}"
            ) from None

    def _record_problem(self, record: object) -> Optional[str]:
        """What is wrong with a parsed input line, or None."""
        if not isinstance(record, dict):
            return f"a JSON {_json_kind(record)}, not an object; {self.expected()}"
        problems = []
        for key in self.input_keys:
            value = record.get(key)
            if key not in record:
                problems.append(f'no "{key}" key')
            elif not isinstance(value, str):
                problems.append(f'"{key}" is a JSON {_json_kind(value)}, not a string')
            elif not value.strip():
                problems.append(f'"{key}" is empty' if not value else f'"{key}" is only whitespace')
        if not problems:
            return None
        return f"{', '.join(problems)}; {self.expected()}; got keys {sorted(record)}"

    def _generic_problem(self, record: object, place: str) -> Optional[str]:
        return self._record_problem(record)

    def _full_problem(self, record: object, place: str) -> Optional[str]:
        try:
            self.check_input(record, lambda: place)
        except PredictorInputError as error:
            return str(error).removeprefix(f"{place}: ")
        return None

    def _file_problems(self, path: str, record_problem: RecordCheck) -> List[str]:
        """Reads the whole input file as ``allennlp predict`` will: one line per bad line (the first
        ten, then a count), or for a missing file one line; [] when every line passes."""
        if "://" in path:  # a URL: AllenNLP downloads it; load_line checks its lines
            return []
        if not os.path.isfile(path):
            what = "is a folder" if os.path.isdir(path) else "does not exist"
            return [f"{path}: the input file {what}; expected a file of JSON lines like {self.example()}"]
        problems: List[str] = []
        count = 0
        with open_compressed(path, errors="surrogateescape") as handle:
            for line_number, line in enumerate(handle, start=1):
                if line.isspace():
                    continue
                place = f"{path}, line {line_number}"
                try:
                    problem = record_problem(self._parse_line(line, functools.partial(str, place)), place)
                except PredictorInputError as error:
                    problem = str(error).removeprefix(f"{place}: ")
                if problem is not None:
                    count += 1
                    if len(problems) < MAX_REPORTED_LINES:
                        problems.append(f"{place}: {problem}")
        if count > len(problems):
            problems.append(f"{path}: {count} bad lines in all, the first {len(problems)} shown above")
        return problems

    def _where(self) -> str:
        record = self._records_read
        path = self._command_input if self._command_input not in (None, "-") else None
        line = _line_of_record(path, record) if path is not None else None
        if line is None:
            return f"input record {record} (blank lines not counted)"
        return f"{path}, line {line}"


class _NotUnderstood(Exception):
    """The command line is not one the ``predict`` parser accepts."""


class _QuietParser(argparse.ArgumentParser):
    """An argument parser that raises where argparse would print usage and exit."""

    def error(self, message: str) -> NoReturn:
        raise _NotUnderstood(message)

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        raise _NotUnderstood(message or "")


def predict_command_input(argv: Sequence[str]) -> Optional[str]:
    """The input file (``"-"`` for stdin) of an ``allennlp predict`` command line that reads JSON lines.

    ``argv`` is a process's ``sys.argv``: the program, then the subcommand and its arguments, as
    ``allennlp``, ``elmo-tasks`` and ``python -m elmo_tasks`` are run. None when the subcommand is
    not ``predict``, when it reads instances with ``--use-dataset-reader`` (``load_line`` is not
    used then), or when the arguments are not ones ``allennlp predict`` accepts. The arguments are
    read with AllenNLP's own definition of them (``Predict.add_subparser``), so an option that takes
    a value is never mistaken for the input file.
    """
    if len(argv) < 2 or argv[1] != PREDICT_COMMAND:
        return None
    parser = _QuietParser(add_help=False)
    subparser = Predict().add_subparser(parser.add_subparsers())
    if Predict.requires_plugins:  # AllenNLP's own parser adds this option to such subcommands
        subparser.add_argument("--include-package", type=str, action="append", default=[])
    try:
        args = parser.parse_args(list(argv[1:]))
    except _NotUnderstood:
        return None
    if getattr(args, "use_dataset_reader", False):
        return None
    input_file = getattr(args, "input_file", None)
    return str(input_file) if input_file is not None else None


def _read_stdin_keeping_bad_bytes() -> None:
    """Decode stdin as UTF-8 keeping undecodable bytes as escapes, so load_line can report them."""
    if not isinstance(sys.stdin, io.TextIOWrapper):  # not a text stream we can change: AllenNLP's own errors
        return
    with contextlib.suppress(ValueError, OSError):
        sys.stdin.reconfigure(encoding="utf-8", errors="surrogateescape")


def _exit_with(messages: List[str]) -> NoReturn:
    for message in messages:
        print(f"allennlp predict: {message}", file=sys.stderr)
    sys.exit(2)


def _json_kind(value: object) -> str:
    """JSON's name for the type of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _line_of_record(path: str, record: int) -> Optional[int]:
    """The 1-based line number of the ``record``-th line that is not only whitespace."""
    seen = 0
    try:
        with open_compressed(path, errors="surrogateescape") as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.isspace():
                    seen += 1
                    if seen == record:
                        return line_number
    except OSError:
        return None
    return None
