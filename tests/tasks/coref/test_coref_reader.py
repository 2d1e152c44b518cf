"""The CoNLL-2012 format and the `conll2012_coref` reader: clusters, speakers, genre, splits, cuts, errors."""

from typing import List

import pytest

from elmo_tasks.tasks.coref.conll import (
    ConllFormatError,
    coref_cells,
    parse_conll_lines,
    read_conll_documents,
    replace_last_column,
)
from elmo_tasks.tasks.coref.reader import (
    Conll2012CorefReader,
    candidate_spans,
    cut_document,
    in_holdout,
)
from elmo_tasks.tasks.data_selection import DataPathError
from tests.conftest import FIXTURES_ROOT

TRAIN = str(FIXTURES_ROOT / "coref" / "train.gold_conll")


def _line(word: str, speaker: str, coref: str, doc: str = "bc/x/00/x_0001") -> str:
    return f"{doc}  0  0  {word}  XX  *  -  -  -  {speaker}  *  {coref}\n"


def _document(rows, name="(bc/x/00/x_0001); part 000") -> List[str]:
    lines = [f"#begin document {name}\n"]
    for row in rows:
        lines.append("\n" if row is None else _line(*row))
    return lines + ["#end document\n"]


def test_nested_overlapping_and_one_token_mentions():
    rows = [
        ("Her", "A", "(1|(2)"),
        ("sister", "A", "1)"),
        ("smiled", "A", "-"),
        (".", "A", "-"),
        None,
        ("She", "B", "(1)"),
        ("waved", "B", "-"),
        ("at", "B", "-"),
        ("her", "B", "(3|(2)"),
        ("friend", "B", "3)"),
        (".", "B", "-"),
    ]
    (document,) = parse_conll_lines(_document(rows), "mem")
    assert document.sentences == [["Her", "sister", "smiled", "."], ["She", "waved", "at", "her", "friend", "."]]
    assert document.speakers[1] == ["B"] * 6
    assert document.genre == "bc" and document.document_id == "bc/x/00/x_0001"
    # scorer order: per line one-token mentions first, so entity 2 "(2)" is numbered before 1 "(1"
    assert document.clusters == [[(0, 0), (7, 7)], [(0, 1), (4, 4)], [(7, 8)]]


def test_same_entity_nested_mentions_close_innermost_first():
    rows = [("the", "-", "(5"), ("head", "-", "-"), ("of", "-", "-"), ("the", "-", "(5"), ("team", "-", "5)|5)")]
    (document,) = parse_conll_lines(_document(rows), "mem")
    assert sorted(document.clusters[0]) == [(0, 4), (3, 4)]


@pytest.mark.parametrize(
    "rows, message",
    [
        ([("a", "-", "(1"), ("b", "-", "-")], r"line 2 \(document .*entity 1 opened here .* never closed"),
        ([("a", "-", "-"), ("b", "-", "4)")], r"line 3 .*'4\)' closes a mention of entity 4, but none is open"),
        ([("a", "-", "(x)")], r"line 2 .*malformed part '\(x\)'"),
    ],
)
def test_errors_name_file_line_and_document(rows, message):
    with pytest.raises(ConllFormatError, match=message):
        list(parse_conll_lines(_document(rows), "mem"))


def test_too_few_columns_and_missing_end_are_errors():
    lines = ["#begin document (nw/a); part 000\n", "nw/a 0 0 word -\n", "#end document\n"]
    with pytest.raises(ConllFormatError, match=r"mem, line 2 \(document \(nw/a\); part 000\): 5 columns"):
        list(parse_conll_lines(lines, "mem"))
    with pytest.raises(ConllFormatError, match="ends inside document"):
        list(parse_conll_lines(_document([("a", "-", "-")])[:-1], "mem"))


def test_writing_brackets_reads_back_the_same_clusters():
    clusters = [[(0, 1), (4, 4)], [(0, 0), (7, 7)], [(7, 8), (2, 8)]]
    cells = coref_cells(9, clusters)
    assert cells[0] == "(0|(1)" and cells[8] == "2)|2)"
    rows = [(f"w{i}", "-", cell) for i, cell in enumerate(cells)]
    (document,) = parse_conll_lines(_document(rows), "mem")
    assert sorted(map(sorted, document.clusters)) == sorted(map(sorted, clusters))
    assert replace_last_column("a  b   (1)\n", "-") == "a  b   -\n"


def test_fixture_has_genres_speakers_and_no_singletons():
    documents = list(read_conll_documents(TRAIN))
    assert len(documents) == 6
    assert {d.genre for d in documents} == {"nw", "bc", "wb", "mz"}
    assert {s for d in documents if d.genre == "bc" for row in d.speakers for s in row} == {"Host", "Guest"}
    assert all(len(cluster) > 1 for d in documents for cluster in d.clusters)


def test_candidate_spans_stay_inside_sentences_and_width():
    spans = candidate_spans([["a", "b", "c"], ["d", "e"]], max_span_width=2)
    assert spans == [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2), (3, 3), (3, 4), (4, 4)]


def test_instances_label_gold_spans_with_their_cluster():
    reader = Conll2012CorefReader(max_span_width=10)
    instances = list(reader.read(TRAIN))
    assert len(instances) == 6
    first = instances[0]
    metadata = first["metadata"].metadata
    spans = [(field.span_start, field.span_end) for field in first["spans"].field_list]
    labels = first["span_labels"].labels
    marta = spans.index((0, 1))
    she = spans.index(metadata["clusters"][0][1])
    assert labels[marta] == labels[she] == 0
    assert sum(1 for label in labels if label >= 0) == sum(len(c) for c in metadata["clusters"])
    assert len(first["text"].field_list) == 5 and metadata["genre"] == "nw"


def test_split_by_document_is_a_partition():
    reader = Conll2012CorefReader(holdout_modulus=3)

    def names(suffix):
        return {i["metadata"].metadata["name"] for i in reader.read(TRAIN + suffix)}

    train, holdout, everything = names("#train"), names("#holdout"), names("")
    assert train and holdout and not train & holdout and train | holdout == everything
    assert all(in_holdout(name[1 : name.index(")")], 3) for name in holdout)
    with pytest.raises(DataPathError, match="unknown suffix '#dev'; accepted suffixes"):
        list(reader.read(TRAIN + "#dev"))


def test_long_documents_are_cut_into_even_pieces_with_their_clusters():
    document = next(read_conll_documents(TRAIN))  # 5 sentences
    pieces, lost = cut_document(document, max_sentences=2)
    assert [len(p.sentences) for p in pieces] == [2, 1, 2] or [len(p.sentences) for p in pieces] == [2, 2, 1]
    assert sum(p.num_tokens for p in pieces) == document.num_tokens and lost == 0
    words = [w for s in document.sentences for w in s]
    offset = 0
    kept_mentions = 0
    for piece in pieces:
        piece_words = [w for s in piece.sentences for w in s]
        assert piece_words == words[offset : offset + len(piece_words)]
        for cluster in piece.clusters:
            for start, end in cluster:
                assert any((start + offset, end + offset) in c for c in document.clusters)
                kept_mentions += 1
        offset += len(piece_words)
    assert kept_mentions == sum(len(c) for c in document.clusters)
    reader = Conll2012CorefReader(max_sentences=2)
    assert len(list(reader.read(TRAIN))) > 6
