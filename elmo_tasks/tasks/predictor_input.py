"""The base class of every task predictor: JSON-lines input errors that name the input line.

``allennlp predict`` reads the input file itself, skips lines that are only whitespace, and hands
each other line to ``Predictor.load_line``; a malformed line then ends in a bare
``json.JSONDecodeError``, and a missing key in a ``KeyError`` a batch later, neither saying where.

:class:`JsonLinesPredictor` parses and checks each line in ``load_line``, so an error surfaces at
the line that caused it, naming the line and the keys expected. Line numbers: ``load_line`` counts
the lines it is given (the "record number"). Because blank lines never reach it, the record number
is turned into the file's line number, only when an error is reported, by rereading the input
file up to that record. The input file's name is taken from AllenNLP's predict loop (the caller
of ``load_line``, pinned AllenNLP 2.10.1); when the input is stdin or the predictor is used from
Python, the message gives the record number instead.
"""

import inspect
import json
from typing import Callable, Dict, Optional

from allennlp.common.file_utils import open_compressed
from allennlp.common.util import JsonDict
from allennlp.predictors import Predictor


class PredictorInputError(ValueError):
    """A predictor input that cannot be used; the message says where and what was expected."""


class JsonLinesPredictor(Predictor):
    """A Predictor whose input lines are JSON objects with the string keys in ``input_keys``.

    Subclasses set ``input_keys`` (key -> what it holds, for the error message) and call
    :meth:`check_input` in ``_json_to_instance`` so ``predict_json`` from Python checks too.
    """

    input_keys: Dict[str, str] = {}

    def load_line(self, line: str) -> JsonDict:
        """One input line -> its JSON object, or a PredictorInputError naming the line."""
        self._records_read = getattr(self, "_records_read", 0) + 1
        if self._records_read == 1:
            self._input_path = _predict_input_path(inspect.currentframe())
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise PredictorInputError(
                f"{self._where()}: not valid JSON ({error.msg} at column {error.colno}); expected one "
                f"JSON object per line, like {self.example()}"
            ) from None
        self.check_input(record, self._where)
        return record

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """Raises PredictorInputError unless ``record`` is an object with every input key as a string.

        ``where``: a function giving the input's place for the message (default: "input").
        """
        place = where() if where is not None else "input"
        if not isinstance(record, dict):
            raise PredictorInputError(
                f"{place}: expected a JSON object like {self.example()}, got {type(record).__name__}"
            )
        wrong = [key for key in self.input_keys if not isinstance(record.get(key), str)]
        if wrong:
            expected = ", ".join(f'the "{key}" string ({meaning})' for key, meaning in self.input_keys.items())
            raise PredictorInputError(
                f"{place}: missing or not a string: {', '.join(repr(k) for k in wrong)}; expected {expected}, "
                f"e.g. {self.example()}; got keys {sorted(record)}"
            )

    def example(self) -> str:
        """A valid input line, for error messages."""
        return json.dumps({key: "..." for key in self.input_keys})

    def _where(self) -> str:
        record = getattr(self, "_records_read", 0)
        path = getattr(self, "_input_path", None)
        line = _line_of_record(path, record) if path is not None else None
        if line is None:
            return f"input record {record} (blank lines not counted)"
        return f"{path}, line {line}"


def _predict_input_path(frame) -> Optional[str]:
    """The local input file ``allennlp predict`` is reading, found in the frame calling load_line."""
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "_get_json_data":
        return None
    path = caller.f_locals.get("input_file")
    return str(path) if path is not None else None


def _line_of_record(path: str, record: int) -> Optional[int]:
    """The 1-based line number of the ``record``-th line that is not only whitespace."""
    seen = 0
    try:
        with open_compressed(path) as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.isspace():
                    seen += 1
                    if seen == record:
                        return line_number
    except OSError:
        return None
    return None
