"""The CoNLL-2012 ``*_gold_conll`` format: documents, speakers and bracketed coreference clusters.

One document is one ``#begin document (ID); part NNN`` ... ``#end document`` block (what the
official scorer calls a document: every part of OntoNotes is scored on its own). Token lines
have whitespace-separated columns (document id, part, word number, word, POS, parse, lemma,
frameset, sense, speaker, NER, one SRL column per predicate, coreference last); sentences are
separated by blank lines.

The coreference column is read exactly the way scorer.pl v8.01 (reference-coreference-scorers)
reads it: on each token line, first every one-token mention ``(N)``, then every opening
``(N``, then every closing ``N)``, where a closing bracket ends the most recently opened
mention of the same entity (a stack per entity). Mentions therefore keep the scorer's order,
which matters for its duplicate-mention rules (see ``metric.py``). Double antecedents
``(N+M)`` are discarded, as the scorer does. Unlike the scorer, a malformed cell is an error
here (it names the file, the line and the document) instead of being read as far as possible.
The scorer splits lines on tabs; OntoNotes files are space-aligned and their other columns
never contain bracketed numbers, so reading the last whitespace-separated column gives the
same mentions.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from elmo_tasks.tasks.data_files import DataFileError, read_lines
from elmo_tasks.tasks.official_files import data_file_parts

Span = Tuple[int, int]  # first and last token of a mention, inclusive, counted over the document
Cluster = List[Span]

BEGIN = re.compile(r"^#\s*begin document (.*?)$")
END = re.compile(r"#\s*end document")
DOCUMENT_NAME = re.compile(r"^\((.*)\); part (\d+)$")
CELL_PART = re.compile(r"^(\(\d+\)|\(\d+|\d+\)|\(\d+\+\d+\))$")
SINGLE, OPEN, CLOSE = re.compile(r"\((\d+)\)"), re.compile(r"\((\d+)"), re.compile(r"(\d+)\)")
DOUBLE_ANTECEDENT = re.compile(r"\((\d+\+\d)\)")
SPEAKER_COLUMN = 9
MIN_GOLD_COLUMNS = 12


#: The name of CoNLL-2012 data errors before every data file had one error class (kept for code that catches it).
ConllFormatError = DataFileError


@dataclass
class ConllDocument:
    """One ``#begin document`` block.

    ``name`` is the text after ``#begin document `` (the scorer's key, e.g.
    ``(bc/cctv/00/cctv_0000); part 000``); ``clusters`` hold document-level token offsets in
    the scorer's order; ``token_lines`` the 1-based file line of every token.
    """

    name: str
    begin_line: int
    sentences: List[List[str]] = field(default_factory=list)
    speakers: List[List[str]] = field(default_factory=list)
    clusters: List[Cluster] = field(default_factory=list)
    token_lines: List[int] = field(default_factory=list)

    @property
    def document_id(self) -> str:
        match = DOCUMENT_NAME.match(self.name)
        return match.group(1) if match else self.name

    @property
    def genre(self) -> str:
        """OntoNotes genre: the first two letters of the document id (bc, bn, mz, nw, pt, tc, wb)."""
        return self.document_id[:2]

    @property
    def num_tokens(self) -> int:
        return sum(len(sentence) for sentence in self.sentences)


def parse_coref_cell(cell: str, where: str) -> Tuple[List[str], List[str], List[str]]:
    """The entity numbers of the one-token mentions, openings and closings of one cell."""
    if cell not in ("-", "_"):
        for part in cell.split("|"):
            if not CELL_PART.match(part):
                raise DataFileError(
                    f"{where}: coreference column {cell!r} has the malformed part {part!r}; expected "
                    "'-' or '|'-separated '(N)', '(N' or 'N)' with entity numbers N"
                )
    rest = DOUBLE_ANTECEDENT.sub("", cell)
    singles = SINGLE.findall(rest)
    rest = SINGLE.sub("", rest)
    opens = OPEN.findall(rest)
    rest = OPEN.sub("", rest)
    return singles, opens, CLOSE.findall(rest)


class _ClusterBuilder:
    """Turns the bracket cells of one document into clusters, in the scorer's order."""

    def __init__(self, document: ConllDocument, path: str) -> None:
        self.document, self.path = document, path
        self.entity_index: Dict[str, int] = {}
        self.open_starts: Dict[str, List[Tuple[int, int]]] = {}  # entity -> [(token, line)]

    def _cluster(self, entity: str) -> Cluster:
        if entity not in self.entity_index:
            self.entity_index[entity] = len(self.document.clusters)
            self.document.clusters.append([])
        return self.document.clusters[self.entity_index[entity]]

    def add(self, token: int, cell: str, line_number: int) -> None:
        where = f"{self.path}, line {line_number} (document {self.document.name})"
        singles, opens, closes = parse_coref_cell(cell, where)
        for entity in singles:
            self._cluster(entity).append((token, token))
        for entity in opens:
            self._cluster(entity)  # the scorer numbers entities by first appearance, openings included
            self.open_starts.setdefault(entity, []).append((token, line_number))
        for entity in closes:
            cluster = self._cluster(entity)
            starts = self.open_starts.get(entity)
            if not starts:
                raise DataFileError(
                    f"{where}: '{entity})' closes a mention of entity {entity}, but none is open; "
                    "every 'N)' needs an earlier '(N' in the same document"
                )
            start, _ = starts.pop()
            cluster.append((start, token))

    def finish(self, end_line: int) -> None:
        for entity, starts in self.open_starts.items():
            if starts:
                _, line = starts[-1]
                raise DataFileError(
                    f"{self.path}, line {line} (document {self.document.name}): the mention of entity "
                    f"{entity} opened here ('({entity}') is never closed before line {end_line}; add "
                    f"'{entity})' on its last token"
                )
        self.document.clusters = [cluster for cluster in self.document.clusters if cluster]


def read_conll_documents(path: str, min_columns: int = MIN_GOLD_COLUMNS) -> Iterator[ConllDocument]:
    """Every document of a CoNLL-2012 file (plain or .gz) or of the release's per-document folder of a
    split (:func:`elmo_tasks.tasks.official_files.data_file_parts`), in file order.

    ``min_columns`` is checked on every token line (12 for ``*_gold_conll`` files, whose
    speaker column the reader needs; 1 when only the coreference column matters, as for
    scoring a system's output).
    """
    for part in data_file_parts(str(path)):
        yield from parse_conll_lines(read_lines(part), part, min_columns)


def parse_conll_lines(lines: Iterable[str], path: str, min_columns: int = MIN_GOLD_COLUMNS) -> Iterator[ConllDocument]:
    document: Optional[ConllDocument] = None
    builder: Optional[_ClusterBuilder] = None
    sentence: List[str] = []
    speakers: List[str] = []

    def close_sentence(document: ConllDocument) -> None:
        if sentence:
            document.sentences.append(list(sentence))
            document.speakers.append(list(speakers))
            sentence.clear()
            speakers.clear()

    line_number = 0
    for line_number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        begin = BEGIN.match(line.rstrip("\r"))
        if begin:
            if document is not None:
                raise DataFileError(
                    f"{path}, line {line_number}: '#begin document' inside document {document.name} "
                    f"(begun on line {document.begin_line}); close it with '#end document' first"
                )
            document = ConllDocument(name=begin.group(1), begin_line=line_number)
            builder = _ClusterBuilder(document, path)
            continue
        if END.search(line):
            if document is None:
                raise DataFileError(f"{path}, line {line_number}: '#end document' without '#begin document'")
            close_sentence(document)
            assert builder is not None  # begun with the document
            builder.finish(line_number)
            yield document
            document, builder = None, None
            continue
        if not line.strip():
            if document is not None:
                close_sentence(document)
            continue
        if document is None:
            raise DataFileError(
                f"{path}, line {line_number}: a token line outside any document; every token line must "
                "sit between '#begin document (ID); part N' and '#end document'"
            )
        assert builder is not None  # begun with the document
        _add_token_line(line.split(), document, builder, sentence, speakers, (path, line_number), min_columns)
    if document is not None:
        raise DataFileError(
            f"{path}, line {line_number}: the file ends inside document {document.name} (begun on line "
            f"{document.begin_line}); add '#end document'"
        )


def _add_token_line(
    columns: List[str],
    document: ConllDocument,
    builder: "_ClusterBuilder",
    sentence: List[str],
    speakers: List[str],
    place: Tuple[str, int],
    min_columns: int,
) -> None:
    """One token line's word, speaker and coreference brackets, into the open sentence and document."""
    path, line_number = place
    if len(columns) < min_columns:
        raise DataFileError(
            f"{path}, line {line_number} (document {document.name}): {len(columns)} columns, expected "
            f"at least {min_columns} (word, POS, parse, ..., speaker, ..., coreference last)"
        )
    builder.add(document.num_tokens + len(sentence), columns[-1], line_number)
    sentence.append(columns[3] if len(columns) > 3 else columns[0])
    speakers.append(columns[SPEAKER_COLUMN] if len(columns) > SPEAKER_COLUMN else "-")
    document.token_lines.append(line_number)


def coref_cells(num_tokens: int, clusters: Sequence[Sequence[Span]]) -> List[str]:
    """The coreference column for ``num_tokens`` tokens: ``-`` or ``|``-joined brackets.

    Cluster k is written as entity number k. On each token, openings come outermost first
    (longest span first), then one-token mentions, then closings innermost first, the usual
    CoNLL-2012 layout (the scorer itself does not depend on the order within a cell).
    """
    opens: List[List[Tuple[int, int]]] = [[] for _ in range(num_tokens)]
    singles: List[List[int]] = [[] for _ in range(num_tokens)]
    closes: List[List[Tuple[int, int]]] = [[] for _ in range(num_tokens)]
    for number, cluster in enumerate(clusters):
        for start, end in cluster:
            if not 0 <= start <= end < num_tokens:
                raise ValueError(f"mention ({start}, {end}) of cluster {number} is outside the {num_tokens} tokens")
            if start == end:
                singles[start].append(number)
            else:
                opens[start].append((end, number))
                closes[end].append((start, number))
    cells = []
    for token in range(num_tokens):
        parts = [f"({number}" for _, number in sorted(opens[token], key=lambda item: (-item[0], item[1]))]
        parts += [f"({number})" for number in sorted(singles[token])]
        parts += [f"{number})" for _, number in sorted(closes[token], key=lambda item: (-item[0], item[1]))]
        cells.append("|".join(parts) if parts else "-")
    return cells


LAST_COLUMN = re.compile(r"(\S+)(\s*)$")


def replace_last_column(line: str, value: str) -> str:
    """``line`` with its last whitespace-separated column replaced, spacing and newline kept."""
    match = LAST_COLUMN.search(line)
    if match is None:
        raise ValueError(f"no column to replace in {line!r}")
    return line[: match.start(1)] + value + line[match.end(1) :]
