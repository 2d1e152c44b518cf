"""Predictions off the event loop: one worker thread at a time per model, a bounded queue, clear errors.

The server's event loop answers pages and ``/api/health`` while models compute, because every
prediction runs in a worker thread (torch releases the GIL while it computes). A model takes one
request at a time: a model's forward pass keeps state between calls (ELMo's cached layers, the
representations a model reads back after embedding), so two threads must never run one model
at once. Requests for a busy model wait on the event loop, not in a thread; past ``max_waiting``
they are answered 503 at once, so a flood of requests cannot grow memory or latency without bound.

A predictor's input errors become 4xx answers that keep its message (which names the key):
``InputTooLong`` 413, other ``PredictorInputError``/``ValueError``/``ConfigurationError`` 422.
Anything else is the model failing, answered 500 with a one-line message; the traceback goes to
the server's log, never to the client.
"""

import logging
from typing import Any, Callable, Optional

import anyio
import anyio.to_thread
from allennlp.common.checks import ConfigurationError

from elmo_tasks.demo.request_json import ApiError
from elmo_tasks.tasks.input_limits import InputTooLong
from elmo_tasks.tasks.predictor_input import PredictorInputError

logger = logging.getLogger(__name__)

#: Requests that may wait for one busy model before more are refused with 503.
MAX_WAITING = 32


class ModelRunner:
    """Runs ``predict(record)`` for the model called ``name`` in worker threads, one call at a time."""

    def __init__(self, name: str, predict: Callable[[Any], Any], max_waiting: int = MAX_WAITING) -> None:
        self.name = name
        self._predict = predict
        self._max_waiting = max_waiting
        self._waiting = 0
        # Made on first use, inside the server's event loop (anyio ties it to the running loop).
        self._limiter: Optional[anyio.CapacityLimiter] = None

    @property
    def waiting(self) -> int:
        """Requests queued or running now (for ``/api/health``)."""
        return self._waiting

    async def run(self, record: Any) -> Any:
        """The prediction for ``record``; ApiError for bad input, a full queue or a failing model."""
        if self._waiting >= self._max_waiting:
            raise ApiError(
                503, f"the {self.name} model has {self._waiting} requests waiting, its limit; try again shortly"
            )
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        self._waiting += 1
        try:
            return await anyio.to_thread.run_sync(self._predict_or_error, record, limiter=self._limiter)
        finally:
            self._waiting -= 1

    def _predict_or_error(self, record: Any) -> Any:
        try:
            return self._predict(record)
        except ApiError:
            raise
        except InputTooLong as error:
            raise ApiError(413, str(error)) from None
        except (PredictorInputError, ValueError, ConfigurationError) as error:
            raise ApiError(422, str(error)) from None
        except Exception as error:  # the model itself failed: log it, answer one line, keep serving
            logger.exception("the %s model failed on %.300r", self.name, record)
            raise ApiError(
                500, f"the {self.name} model failed on this input ({type(error).__name__}: {error})"
            ) from error
