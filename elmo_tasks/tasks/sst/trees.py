"""Parsing the Stanford Sentiment Treebank's PTB-style trees, e.g. ``(3 (2 It) (4 (4 rocks) (2 .)))``.

Every node carries a sentiment label 0..4, so every subtree is a labelled phrase. We parse by
hand (a tiny stack parser) rather than with ``nltk.Tree`` so a malformed line gets an error that
says where in the line it went wrong, and so labels are checked as we go.

Tokens are un-escaped from the treebank's PTB conventions (``-LRB-`` -> ``(``, ``\\/`` -> ``/``):
ELMo's biLM and the predictor's spaCy tokenizer both see raw text, so training tokens should too.
"""

import re
from dataclasses import dataclass
from typing import List, Tuple

from elmo_tasks.tasks.data_files import DataFileError

NUM_CLASSES = 5

# PTB escapes found in the SST release; anything else is kept as written.
_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
_TOKEN_RE = re.compile(r"\(|\)|[^ \t\r\n()]+")  # ASCII whitespace only: some words hold a no-break space


#: The name of SST tree errors before every data file had one error class (kept for code that catches it).
SstTreeError = DataFileError


class _Malformed(Exception):
    """What is wrong inside one tree (``parse_tree`` adds the place)."""


@dataclass(frozen=True)
class Phrase:
    """One labelled subtree: its words in order and its sentiment (0 very negative .. 4 very positive)."""

    tokens: Tuple[str, ...]
    label: int


def unescape_token(token: str) -> str:
    """Undo the treebank's PTB escaping of brackets and of ``/`` and ``*``."""
    token = _UNESCAPE.get(token, token)
    return token.replace("\\/", "/").replace("\\*", "*")


def parse_tree(line: str, where: str = "tree") -> List[Phrase]:
    """All phrases of one tree, root first (then in pre-order).

    Raises DataFileError naming ``where`` (the reader gives ``FILE, line N``), what was wrong at
    which character of ``line``, and what a tree looks like.
    """
    try:
        return _parse_tree(line)
    except _Malformed as problem:
        raise DataFileError(
            f"{where}: not a sentiment tree ({problem}); expected every node as '(label children...)' with "
            f"labels 0..{NUM_CLASSES - 1}, e.g. '(3 (2 It) (4 rocks))'"
        ) from None


def _parse_tree(line: str) -> List[Phrase]:
    pieces = [(m.group(), m.start()) for m in _TOKEN_RE.finditer(line)]
    if not pieces:
        raise _Malformed("empty line; expected a tree like '(3 (2 It) (4 rocks))'")
    # Each open node: [label, start index into `words`, its pre-order position].
    stack: List[List[int]] = []
    words: List[str] = []
    found: List[Tuple[int, int, int, int]] = []  # (pre-order position, label, start, end)
    order = 0
    i = 0
    finished = False
    while i < len(pieces):
        piece, offset = pieces[i]
        if finished:
            raise _Malformed(f"unexpected {piece!r} at character {offset} after the tree ended")
        if piece == "(":
            if i + 1 >= len(pieces) or pieces[i + 1][0] in "()":
                raise _Malformed(f"expected a label 0..{NUM_CLASSES - 1} after '(' at character {offset}")
            stack.append([_parse_label(*pieces[i + 1]), len(words), order])
            order += 1
            i += 2
            # A leaf is "(label word)": take the word now.
            if i < len(pieces) and pieces[i][0] not in "()":
                words.append(unescape_token(pieces[i][0]))
                i += 1
                if i >= len(pieces) or pieces[i][0] != ")":
                    where = pieces[i][1] if i < len(pieces) else len(line)
                    raise _Malformed(f"expected ')' closing the leaf at character {where}")
            continue
        if piece == ")":
            if not stack:
                raise _Malformed(f"unbalanced ')' at character {offset}")
            label, start, position = stack.pop()
            if start == len(words):
                raise _Malformed(f"node ending at character {offset} has no words")
            found.append((position, label, start, len(words)))
            finished = not stack
            i += 1
            continue
        raise _Malformed(f"unexpected word {piece!r} at character {offset}; words must sit in '(label word)' leaves")
    if stack:
        raise _Malformed(f"{len(stack)} unclosed '(' at the end of the line")
    found.sort()
    return [Phrase(tuple(words[start:end]), label) for _, label, start, end in found]


def _parse_label(text: str, offset: int) -> int:
    if not text.isdigit() or not 0 <= int(text) < NUM_CLASSES:
        raise _Malformed(f"expected a label 0..{NUM_CLASSES - 1} at character {offset}, found {text!r}")
    return int(text)
