"""The tree parser on hand-written trees: phrases, labels, un-escaping and malformed input."""

import re

import pytest

from elmo_tasks.tasks.sst.trees import Phrase, SstTreeError, parse_tree, unescape_token


def test_every_subtree_is_a_phrase_root_first() -> None:
    phrases = parse_tree("(3 (2 It) (4 (4 rocks) (2 .)))\n")
    assert phrases == [
        Phrase(("It", "rocks", "."), 3),
        Phrase(("It",), 2),
        Phrase(("rocks", "."), 4),
        Phrase(("rocks",), 4),
        Phrase((".",), 2),
    ]


def test_single_word_tree() -> None:
    assert parse_tree("(1 Dull)") == [Phrase(("Dull",), 1)]


def test_ptb_escapes_are_undone() -> None:
    phrases = parse_tree(r"(2 (2 -LRB-) (2 (2 writer\/director) (2 -RRB-)))")
    assert phrases[0].tokens == ("(", "writer/director", ")")
    assert unescape_token(r"\*") == "*"


def test_no_break_space_stays_inside_a_word() -> None:
    assert parse_tree("(2 (2 8\xa01/2) (2 .))")[0].tokens == ("8\xa01/2", ".")


@pytest.mark.parametrize(
    "line, message",
    [
        ("", "empty line"),
        ("(7 (2 a) (2 b))", "label 0..4 at character 1, found '7'"),
        ("(2 (x a) (2 b))", "found 'x'"),
        ("(2 (2 a) (2 b)", "1 unclosed '('"),
        ("(2 (2 a) (2 b)))", "unexpected ')' at character 15 after the tree ended"),
        (")(2 a)", "unbalanced ')' at character 0"),
        ("(2 (2 a b) (2 c))", "expected ')' closing the leaf"),
        ("(2 (2 a) b)", "unexpected word 'b'"),
        ("(2 (2 a)) (2 b)", "after the tree ended"),
        ("(2 )", "node ending at character 3 has no words"),
        ("( (2 a))", "expected a label 0..4 after '(' at character 0"),
        ("(2 (3 ) (2 a))", "has no words"),
    ],
)
def test_malformed_trees_say_what_and_where(line: str, message: str) -> None:
    with pytest.raises(SstTreeError, match=re.escape(message)):
        parse_tree(line)
