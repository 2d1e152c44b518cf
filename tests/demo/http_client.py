"""A plain HTTP client for the demo tests (the standard library's, so tests need nothing more)."""

import json
import urllib.error
import urllib.request
from typing import Any, Tuple, Union


def request(
    url: str, body: Union[bytes, Any, None] = None, method: str = "POST", timeout: float = 60
) -> Tuple[int, Any]:
    """(status, parsed JSON answer) for ``body`` (bytes as they are, anything else as JSON); never raises on 4xx/5xx."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode("utf-8")
    sent = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(sent, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def get_json(url: str, timeout: float = 60) -> Tuple[int, Any]:
    return request(url, None, "GET", timeout)


def page_status(url: str, timeout: float = 60) -> int:
    """The HTTP status of a page (HTML, not parsed)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
