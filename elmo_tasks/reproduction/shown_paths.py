"""Data paths as the documents show them. A record keeps the paths its commands ran with, which on the
machine that made the committed records point into that machine's data folder; the cards and the report
show them under ``$ELMO_TASKS_SHARED_DATA`` (the variable that names the data folder, docs/DATA.md), which
is what a reader sets, wherever their copy of the data is."""

import re
import shlex

# The committed records were made with ELMO_TASKS_SHARED_DATA set to a folder ``.../shared/data``
# (relative or absolute); any path prefix ending there is that folder.
_RECORDED_DATA_ROOT = re.compile(r"""(?<![^\s'"=\[{(,:])[^\s'"=\[{(,:]*\bshared/data/""")
DATA_ROOT_SHOWN = "$ELMO_TASKS_SHARED_DATA/"


def with_data_root_named(text: str) -> str:
    """``text`` (not a shell command) with every recorded data-folder prefix shown as ``$ELMO_TASKS_SHARED_DATA/``."""
    return _RECORDED_DATA_ROOT.sub(DATA_ROOT_SHOWN, text)


def command_with_data_root_named(command: str) -> str:
    """A recorded shell command that reads the data folder from ``$ELMO_TASKS_SHARED_DATA``, as bash runs it:
    the variable is left outside every single quote, so it expands (a path inside a ``-o '{...}'`` too)."""
    try:
        words = shlex.split(command)
    except ValueError:  # not a command that shlex can read: shown as recorded
        return command
    if not any(_RECORDED_DATA_ROOT.search(word) for word in words):
        return command
    return " ".join(_shown_word(word) for word in words)


def _shown_word(word: str) -> str:
    if not _RECORDED_DATA_ROOT.search(word):
        return shlex.quote(word)
    pieces = _RECORDED_DATA_ROOT.split(word)
    return '"$ELMO_TASKS_SHARED_DATA"/'.join(shlex.quote(piece) if piece else "" for piece in pieces)
