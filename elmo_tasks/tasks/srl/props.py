"""The CoNLL props format (CoNLL-2004/2005 "Start-End" bracket columns) and BIO tags.

A props column holds one tag per word: ``(A0*`` opens an argument of type A0 on that word,
``*)`` closes the innermost open one, ``(V*)`` is a one-word predicate and ``*`` is a word
inside or outside arguments. Closing brackets may repeat the type (``*A0)``, the CoNLL-2004
style). A props *file* has one sentence per block: the first column names the target verbs
(the predicate's lemma, or ``-`` on other words), then one column per target, in the order of
the targets' positions.

Everything that turns columns into arguments lives here, so the metric, the commands and the
model's decoder read spans the same way the official srl-eval.pl does.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Sequence, TextIO, Tuple

from elmo_tasks.tasks.data_files import DataFileError

OUTSIDE = "O"
_OPEN = re.compile(r"\(((?:\\\*|[^*(])+)")
_CLOSE = re.compile(r"([^)]*)\)")


#: The name of props-file errors before every data file had one error class (kept for code that catches it).
PropsFormatError = DataFileError


@dataclass
class Phrase:
    """A labelled run of words ``start..end`` (inclusive), possibly with embedded phrases."""

    start: int
    end: int
    label: str
    children: List["Phrase"] = field(default_factory=list)

    def walk(self) -> Iterator["Phrase"]:
        """This phrase, then its embedded phrases, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class Argument:
    """One argument of a predicate: a single phrase, or a discontinuous one (``A1 ... C-A1``).

    ``start`` is the first word of the first piece and ``end`` the last word of the last piece,
    as srl-eval.pl keys arguments; ``pieces`` is empty for a single-phrase argument.
    """

    start: int
    end: int
    label: str
    pieces: List[Tuple[int, int]] = field(default_factory=list)

    @property
    def single(self) -> bool:
        return not self.pieces


def parse_start_end(tags: Sequence[str], where: str = "props column") -> List[Phrase]:
    """Every phrase of a Start-End column, ordered by start, then longest first.

    Embedded phrases are listed too (srl-eval.pl counts them as arguments of their own). Two
    phrases with the same span keep the later one, as srl-eval.pl's span-indexed table does.
    """
    open_phrases: List[Phrase] = []
    top_level: List[Phrase] = []
    for position, raw in enumerate(tags):
        tag = raw
        while not tag.startswith("*"):
            match = _OPEN.match(tag)
            if match is None:
                raise DataFileError(
                    f"{where}, word {position + 1}: cannot read {raw!r}; expected '*' optionally "
                    "preceded by '(LABEL' and followed by ')'"
                )
            open_phrases.append(Phrase(position, -1, match.group(1)))
            tag = tag[match.end() :]
        tag = tag[1:]
        while tag:
            match = _CLOSE.match(tag)
            if match is None:
                raise DataFileError(f"{where}, word {position + 1}: cannot read the closing part of {raw!r}")
            if not open_phrases:
                raise DataFileError(f"{where}, word {position + 1}: {raw!r} closes a phrase that was never opened")
            phrase = open_phrases.pop()
            if match.group(1) and match.group(1) != phrase.label:
                raise DataFileError(
                    f"{where}, word {position + 1}: {raw!r} closes {match.group(1)} but the open "
                    f"phrase is {phrase.label}"
                )
            phrase.end = position
            (open_phrases[-1].children if open_phrases else top_level).append(phrase)
            tag = tag[match.end() :]
    if open_phrases:
        raise DataFileError(
            f"{where}: {len(open_phrases)} phrase(s) opened but never closed "
            f"({', '.join(p.label for p in open_phrases)})"
        )
    by_span = {}
    for phrase in top_level:
        for item in phrase.walk():
            by_span[(item.start, item.end)] = item
    return [by_span[span] for span in sorted(by_span, key=lambda s: (s[0], -s[1]))]


def arguments_of(tags: Sequence[str], where: str = "props column") -> List[Argument]:
    """The arguments of one props column, with continuations joined to their head.

    ``C-X`` continues the most recent argument of type ``X`` (in srl-eval.pl's phrase order);
    without one it becomes a plain ``X`` argument. ``R-X`` is a label of its own. As in
    srl-eval.pl, a phrase with phrases embedded in it is an argument made of those embedded
    pieces (not a single span), each embedded phrase is also an argument of its own, and a
    continuation extends the phrase object it joins wherever that phrase is also a piece.
    """
    heads: List[Phrase] = []
    latest: Dict[str, Phrase] = {}
    for phrase in parse_start_end(tags, where):
        if phrase.label.startswith("C-"):
            base = phrase.label[2:]
            head = latest.get(base)
            if head is not None:
                if not head.children:
                    head.children.append(Phrase(head.start, head.end, base))
                head.children.append(phrase)
                head.end = phrase.end
                continue
            phrase.label = base
        heads.append(phrase)
        latest[phrase.label] = phrase
    return [Argument(p.start, p.end, p.label, [(c.start, c.end) for c in p.children]) for p in heads]


def bio_to_start_end(bio_tags: Sequence[str]) -> List[str]:
    """BIO tags -> a Start-End column. ``I-X`` that does not continue an ``X`` opens a new one."""
    spans: List[Tuple[int, int, str]] = []
    for position, tag in enumerate(bio_tags):
        if tag == OUTSIDE:
            continue
        prefix, label = tag[:2], tag[2:]
        if prefix not in ("B-", "I-") or not label:
            raise DataFileError(f"word {position + 1}: {tag!r} is not a BIO tag (O, B-LABEL or I-LABEL)")
        if prefix == "I-" and spans and spans[-1][2] == label and spans[-1][1] == position - 1:
            spans[-1] = (spans[-1][0], position, label)
        else:
            spans.append((position, position, label))
    column = ["*"] * len(bio_tags)
    for start, end, label in spans:
        column[start] = f"({label}*"
        column[end] = column[end] + ")" if start != end else f"({label}*)"
    return column


def start_end_to_bio(tags: Sequence[str], where: str = "props column") -> Tuple[List[str], int]:
    """A Start-End column -> BIO tags over its outermost phrases, and how many embedded phrases
    had to be dropped (BIO cannot hold them; the props columns of CoNLL-2005/2012 have none)."""
    bio = [OUTSIDE] * len(tags)
    dropped = 0
    covered_until = -1
    for phrase in parse_start_end(tags, where):
        if phrase.start <= covered_until:
            dropped += 1
            continue
        bio[phrase.start] = "B-" + phrase.label
        for position in range(phrase.start + 1, phrase.end + 1):
            bio[position] = "I-" + phrase.label
        covered_until = phrase.end
    return bio, dropped


@dataclass
class PropsSentence:
    """One sentence of a props file: the target column and one argument column per target."""

    targets: List[str]
    columns: List[List[str]]
    line: int = 0  # first line of the block in its file (1-based), for messages

    @property
    def predicate_positions(self) -> List[int]:
        return [i for i, target in enumerate(self.targets) if target != "-"]


def read_props(lines: Iterable[str], name: str) -> Iterator[PropsSentence]:
    """The sentences of a props file, from its ``lines`` (blank or whitespace-only lines separate sentences)."""
    rows: List[List[str]] = []
    first_line = 0
    for line_number, line in enumerate(lines, start=1):
        fields = line.split()
        if fields:
            if not rows:
                first_line = line_number
            if rows and len(fields) != len(rows[0]):
                raise DataFileError(
                    f"{name}, line {line_number}: {len(fields)} columns, but the sentence started at "
                    f"line {first_line} has {len(rows[0])}; every line of a sentence needs the same columns"
                )
            rows.append(fields)
            continue
        if rows:
            yield props_sentence(rows, name, first_line)
            rows = []
    if rows:
        yield props_sentence(rows, name, first_line)


def props_sentence(rows: List[List[str]], name: str, first_line: int) -> PropsSentence:
    """One sentence of props rows (the target column, then one argument column per target), checked:
    a sentence whose argument columns do not match its targets names ``name`` and ``first_line``."""
    targets = [row[0] for row in rows]
    columns = [[row[k] for row in rows] for k in range(1, len(rows[0]))]
    sentence = PropsSentence(targets, columns, first_line)
    if len(columns) != len(sentence.predicate_positions):
        raise DataFileError(
            f"{name}, line {first_line}: the sentence has {len(sentence.predicate_positions)} target verb(s) "
            f"but {len(columns)} argument column(s); there must be one argument column per target"
        )
    return sentence


def write_props(handle: TextIO, targets: Sequence[str], columns: Sequence[Sequence[str]]) -> None:
    """One sentence in the props format, columns aligned, followed by a blank line."""
    target_width = max(len(target) for target in targets)
    layouts = []
    for column in columns:
        stars = [tag.index("*") for tag in column]
        left = max(stars)
        right = max(len(tag) - star for tag, star in zip(column, stars, strict=True))
        layouts.append((left, right))
    for position, target in enumerate(targets):
        cells = [target.ljust(target_width)]
        for column, (left, right) in zip(columns, layouts, strict=True):
            tag = column[position]
            star = tag.index("*")
            cells.append(tag[:star].rjust(left) + tag[star:].ljust(right))
        handle.write("  ".join(cells).rstrip() + "\n")
    handle.write("\n")


def empty_column(length: int) -> List[str]:
    """A props column with no arguments."""
    return ["*"] * length
