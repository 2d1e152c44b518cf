"""Data paths as the documents show them. A record keeps the paths its commands ran with, which on the
machine that made the committed records point into that machine's data folder; the cards and the report
show them under ``$ELMO_TASKS_SHARED_DATA`` (the variable that names the data folder, docs/DATA.md), which
is what a reader sets, wherever their copy of the data is."""

import os
import re
import shlex
from typing import Optional, Pattern

# Where a path may start: at the start of the text or after a separator of a command or a JSON value.
_PATH_START = r"""(?<![^\s'"=\[{(,:])"""
# The committed records were made with ELMO_TASKS_SHARED_DATA set to a folder ``.../shared/data``
# (relative or absolute, with or without a trailing "/"); any path prefix ending there is that folder.
_COMMITTED_DATA_ROOT = _PATH_START + r"""[^\s'"=\[{(,:]*\bshared/data/+"""
DATA_ROOT_SHOWN = "$ELMO_TASKS_SHARED_DATA/"


def data_root() -> str:
    """The data folder as this process names it (ELMO_TASKS_SHARED_DATA, or the plugin's default)."""
    from elmo_tasks.config_defaults import DEFAULTS

    return os.environ.get("ELMO_TASKS_SHARED_DATA", DEFAULTS["ELMO_TASKS_SHARED_DATA"])


def _recorded_data_root(root: Optional[str] = None) -> Pattern[str]:
    """The committed records' data folder, and this process's (``root``, default ELMO_TASKS_SHARED_DATA as
    given, e.g. a user's ``/data/elmo``, or the default ``data``, which their own runs' records name): a card
    or report made from either shows neither."""
    own = (data_root() if root is None else root).rstrip("/")
    if not own:
        return re.compile(_COMMITTED_DATA_ROOT)
    return re.compile(f"{_COMMITTED_DATA_ROOT}|{_PATH_START}{re.escape(own)}/+")


def with_data_root_named(text: str, root: Optional[str] = None) -> str:
    """``text`` (not a shell command) with every recorded data-folder prefix shown as ``$ELMO_TASKS_SHARED_DATA/``
    (``root``: the data folder of the process that recorded it, if not this one's)."""
    return _recorded_data_root(root).sub(DATA_ROOT_SHOWN, text)


def command_with_data_root_named(command: str) -> str:
    """A recorded shell command that reads the data folder from ``$ELMO_TASKS_SHARED_DATA``, as bash runs it:
    the variable is left outside every single quote, so it expands (a path inside a ``-o '{...}'`` too)."""
    try:
        words = shlex.split(command)
    except ValueError:  # not a command that shlex can read: shown as recorded
        return command
    data_root = _recorded_data_root()
    if not any(data_root.search(word) for word in words):
        return command
    return " ".join(_shown_word(word, data_root) for word in words)


def _shown_word(word: str, data_root: Pattern[str]) -> str:
    if not data_root.search(word):
        return shlex.quote(word)
    pieces = data_root.split(word)
    return '"$ELMO_TASKS_SHARED_DATA"/'.join(shlex.quote(piece) if piece else "" for piece in pieces)
