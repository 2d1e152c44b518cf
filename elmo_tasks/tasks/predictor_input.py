"""The base class of every task predictor: JSON-lines input errors that name the input line.

``allennlp predict`` reads the input file itself, skips lines that are only whitespace, and hands
each other line to ``Predictor.load_line``; left alone, a bad line ends in a traceback (a bare
``json.JSONDecodeError``, a ``UnicodeDecodeError`` raised while AllenNLP reads the file, or a
``KeyError`` a batch later) that says neither which line nor what was expected.

:class:`JsonLinesPredictor` makes every bad line end the command with one line on stderr,
``allennlp predict: FILE, line N: what was wrong; expected ...``, and exit status 2, no traceback:

- When ``allennlp predict`` builds the predictor (found from the predictor's constructor: the
  frame of ``allennlp.commands.predict._get_predictor`` and its ``args``, pinned AllenNLP 2.10.1),
  the input file is read once before any prediction: bytes that are not UTF-8, lines that are not
  JSON, lines that are not objects and required keys that are missing, not strings or empty are
  all reported then (the first ten, one line each, and a count), so no half-written output is
  left. A missing input file gets one line too. stdin is read as UTF-8 with undecodable bytes
  kept (``surrogateescape``), so ``load_line`` can report them.
- ``load_line`` checks each line again (this covers stdin and the subclasses' own checks, such as
  the input limits), counting the lines it gets; because blank lines never reach it, that count
  is turned into the file's line number, only when an error is reported, by rereading the file.

Used from Python (``predict_json``), the same checks raise :class:`PredictorInputError`.
"""

import inspect
import json
import os
import re
import sys
from typing import Callable, Dict, List, NoReturn, Optional

from allennlp.common.file_utils import open_compressed
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor

# What Python's "surrogateescape" makes of bytes that are not UTF-8.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
# The most problems listed when the input file is checked before predicting.
MAX_REPORTED_LINES = 10


class PredictorInputError(ValueError):
    """A predictor input that cannot be used; the message says where and what was expected."""


class JsonLinesPredictor(Predictor):
    """A Predictor whose input lines are JSON objects with the non-empty string keys in ``input_keys``.

    Subclasses set ``input_keys`` (key -> what it holds, for the error message) and call
    :meth:`check_input` in ``_json_to_instance`` so ``predict_json`` from Python checks too; they
    may extend ``check_input`` (calling it first) with checks of their own.
    """

    input_keys: Dict[str, str] = {}

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._records_read = 0
        #: The input of the ``allennlp predict`` command that built this predictor ("-" for stdin),
        #: or None (used from Python, or ``--use-dataset-reader``): then errors are raised, not printed.
        self._command_input: Optional[str] = _predict_command_input(inspect.currentframe())
        if self._command_input == "-":
            _read_stdin_keeping_bad_bytes()
        elif self._command_input is not None:
            self._check_input_file(self._command_input)

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

    def _parse_line(self, line: str, where: Callable[[], str]) -> object:
        escaped = _ESCAPED_BYTE.search(line)
        if escaped is not None:
            raise PredictorInputError(f"{where()}: {_not_utf8(escaped.start())}")
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

    def _check_input_file(self, path: str) -> None:
        """Reads the whole input file as ``allennlp predict`` will; exits with one line per bad line."""
        if "://" in path:  # a URL: AllenNLP downloads it; load_line checks its lines
            return
        if not os.path.isfile(path):
            what = "is a folder" if os.path.isdir(path) else "does not exist"
            _exit_with([f"{path}: the input file {what}; expected a file of JSON lines like {self.example()}"])
        problems: List[str] = []
        count = 0
        with open_compressed(path, errors="surrogateescape") as handle:
            for line_number, line in enumerate(handle, start=1):
                if line.isspace():
                    continue
                place = f"{path}, line {line_number}"
                try:
                    # The generic checks only: a subclass's own checks may need what its __init__ sets next.
                    problem = self._record_problem(self._parse_line(line, lambda: place))
                except PredictorInputError as error:
                    problem = str(error).removeprefix(f"{place}: ")
                if problem is not None:
                    count += 1
                    if len(problems) < MAX_REPORTED_LINES:
                        problems.append(f"{place}: {problem}")
        if count > len(problems):
            problems.append(f"{path}: {count} bad lines in all, the first {len(problems)} shown above")
        if problems:
            _exit_with(problems)

    def _where(self) -> str:
        record = self._records_read
        path = self._command_input if self._command_input not in (None, "-") else None
        line = _line_of_record(path, record) if path is not None else None
        if line is None:
            return f"input record {record} (blank lines not counted)"
        return f"{path}, line {line}"


def _predict_command_input(frame) -> Optional[str]:
    """The input file (or "-") of the ``allennlp predict`` run building this predictor, when it reads JSON lines.

    AllenNLP 2.10.1 builds the predictor in ``allennlp.commands.predict._get_predictor(args)``.
    """
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_get_predictor" and frame.f_globals.get("__name__") == "allennlp.commands.predict":
            args = frame.f_locals.get("args")
            if args is None or getattr(args, "use_dataset_reader", False):
                return None
            input_file = getattr(args, "input_file", None)
            return str(input_file) if input_file is not None else None
        frame = frame.f_back
    return None


def _read_stdin_keeping_bad_bytes() -> None:
    """Decode stdin as UTF-8 keeping undecodable bytes as escapes, so load_line can report them."""
    try:
        sys.stdin.reconfigure(encoding="utf-8", errors="surrogateescape")  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # not a text stream we can change: AllenNLP's own errors
        pass


def _exit_with(messages: List[str]) -> NoReturn:
    for message in messages:
        print(f"allennlp predict: {message}", file=sys.stderr)
    sys.exit(2)


def _not_utf8(column: int) -> str:
    return (
        f"bytes that are not UTF-8 (the first at character {column + 1}); expected UTF-8 text: convert the file, "
        "e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8"
    )


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
