"""The demo API's request bodies: read with a size bound, parsed as JSON, refused with a clear 4xx.

Every error of the API is one JSON object, ``{"error": "..."}``, with a status that says whose
mistake it is: 400 a body that is not JSON, 404 an unknown model, 413 a body or an input over a
limit, 422 a JSON input the predictor cannot use (the message names the key), 503 a model with
too many requests waiting. The body is read chunk by chunk and never kept past the limit, so an
oversized upload (even one sent without a ``Content-Length``) never sits in memory. The rest of an
oversized body is still read and dropped, up to ``DRAIN_FACTOR`` times the limit, because a client
still sending when the server answers and closes sees a broken connection, not the 413 and its
message; a body declared larger than that is refused at once.
"""

import json
from typing import Any

from starlette.requests import Request

#: The largest request body taken, in bytes (the predictors' own token limits come after it).
MAX_REQUEST_BYTES = 1_000_000
#: How far past the limit a body is read (and dropped) so that its sender gets the 413.
DRAIN_FACTOR = 16


class ApiError(Exception):
    """An error answered as ``{"error": message}`` with HTTP status ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def too_large(size: str, max_bytes: int) -> ApiError:
    return ApiError(
        413,
        f"the request body is {size} bytes, more than the demo's limit of {max_bytes:,}; send a shorter input "
        "(or start elmo-demo with a larger --max-request-bytes)",
    )


async def read_json_body(request: Request, max_bytes: int, example: str) -> Any:
    """The request's JSON body; ApiError 413 past ``max_bytes``, 400 for bytes that are not UTF-8 JSON.

    ``example`` is a valid body, for the message.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > DRAIN_FACTOR * max_bytes:
        raise too_large(f"{int(declared):,}", max_bytes)
    body = bytearray()
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= max_bytes:
            body += chunk
        elif size > DRAIN_FACTOR * max_bytes:
            break
    if size > max_bytes:
        raise too_large(f"{int(declared):,}" if declared.isdigit() else f"over {max_bytes:,}", max_bytes)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(
            400, f"the request body is not UTF-8 (byte {error.start + 1}); expected JSON like {example}"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise ApiError(
            400, f"the request body is not JSON ({error.msg}; {where}); expected JSON like {example}"
        ) from None
    except RecursionError:
        raise ApiError(
            400, f"the request body is JSON nested too deeply to read; expected JSON like {example}"
        ) from None
