"""The srl-eval metric on hand-worked propositions, props reading/writing, BIO conversions.

Every expected count below was worked out by hand from srl-eval.pl's documented rules (see
elmo_tasks/tasks/srl/metric.py). With SRL_EVAL_PL pointing at the official srl-eval.pl, one more
test compares whole random files with it.
"""

import io
import os
import random
import re
import subprocess

import pytest

from elmo_tasks.tasks.srl.metric import (
    SrlCounts,
    SrlEvalMetric,
    lines_srl_eval_reads,
    metric_line,
    score_props,
    srl_eval_percentages,
)
from elmo_tasks.tasks.srl.props import (
    PropsFormatError,
    arguments_of,
    bio_to_start_end,
    read_props,
    start_end_to_bio,
    write_props,
)
from tests.tasks.srl.random_props import write_pair


def _counts(gold, predicted):
    counts = SrlCounts()
    counts.add_proposition(gold, predicted)
    return counts


def test_exact_span_and_label_are_correct_and_v_is_not_scored():
    #          The     cat   chased  the    mouse  .
    gold = ["(A0*", "*)", "(V*)", "(A1*", "*)", "*"]
    counts = _counts(gold, list(gold))
    assert counts.totals() == (2, 0, 0)
    assert counts.correct["V"] == 1  # counted apart, not in the totals
    assert metric_line(counts) == "precision 1.0000 recall 1.0000 f1 1.0000"


def test_wrong_label_and_crossing_span_are_one_excess_and_one_miss_each():
    gold = ["(A0*", "*)", "(V*)", "(A1*", "*)", "*"]
    # A1 labelled A2: excess A2 + missed A1; A0 predicted on "cat" only, inside the gold A0
    # "The cat": excess A0 + missed A0.
    predicted = ["*", "(A0*)", "(V*)", "(A2*", "*)", "*"]
    counts = _counts(gold, predicted)
    assert counts.totals() == (0, 2, 2)
    assert (counts.excess["A2"], counts.missed["A1"], counts.excess["A0"], counts.missed["A0"]) == (1, 1, 1, 1)
    assert metric_line(counts) == "precision 0.0000 recall 0.0000 f1 0.0000"


def test_continuation_belongs_to_its_argument_all_pieces_must_match():
    #         Nobody knows ,  Lena  said  ,  where  the  key  is  .
    gold = ["(A1*", "*)", "*", "(A0*)", "(V*)", "*", "(C-A1*", "*", "*", "*)", "*"]
    assert [(a.label, a.start, a.end, a.pieces) for a in arguments_of(gold)] == [
        ("A1", 0, 9, [(0, 1), (6, 9)]),
        ("A0", 3, 3, []),
        ("V", 4, 4, []),
    ]
    assert _counts(gold, list(gold)).totals() == (2, 0, 0)  # A1 (two pieces) + A0
    # Only the first piece predicted: an A1 over words 0-1, which is not the gold A1 (0-9).
    first_piece_only = ["(A1*", "*)", "*", "(A0*)", "(V*)"] + ["*"] * 6
    counts = _counts(gold, first_piece_only)
    assert counts.totals() == (1, 1, 1)
    # The continuation labelled as a separate A1: two single A1s, neither matches.
    two_a1 = gold[:6] + ["(A1*", "*", "*", "*)", "*"]
    assert _counts(gold, two_a1).totals() == (1, 2, 1)


def test_continuation_nested_in_its_own_head_never_matches_as_in_srl_eval():
    # "(A1*" "(C-A1*))": the C-A1 phrase is embedded in the A1 phrase and also continues it, so
    # the A1 argument holds the piece (1, 1) twice. srl-eval.pl ticks gold pieces off a set
    # ({1.1}); the prediction's second (1, 1) finds nothing left, so even an identical
    # prediction is one excess and one miss (checked with the official script).
    gold = ["(A1*", "(C-A1*))", "(V*)"]
    assert [(a.label, a.start, a.end, a.pieces) for a in arguments_of(gold)] == [
        ("A1", 0, 1, [(1, 1), (1, 1)]),
        ("V", 2, 2, []),
    ]
    counts = _counts(gold, list(gold))
    assert counts.totals() == (0, 1, 1)
    assert (counts.correct["V"], counts.perfect_propositions) == (1, 0)
    # Pieces as a set: a prediction with the single piece (1, 1) matches it.
    assert _counts(gold, ["(A1*", "(A0*))", "(V*)"]).totals() == (1, 1, 0)


def test_continuation_without_head_counts_as_the_argument_itself():
    gold = ["(A1*)", "(V*)", "*"]
    assert _counts(gold, ["(C-A1*)", "(V*)", "*"]).totals() == (1, 0, 0)


def test_reference_arguments_are_labels_of_their_own():
    #        The farmer who  planted the trees
    gold = ["(A0*", "*)", "(R-A0*)", "(V*)", "(A1*", "*)"]
    counts = _counts(gold, ["(A0*", "*)", "(A0*)", "(V*)", "(A1*", "*)"])
    assert counts.totals() == (2, 1, 1)
    assert (counts.missed["R-A0"], counts.excess["A0"], counts.correct["A0"]) == (1, 1, 1)


def test_propositions_without_arguments_and_missing_predictions():
    assert _counts(["*", "(V*)", "*"], ["*", "(V*)", "*"]).totals() == (0, 0, 0)
    counts = SrlCounts()
    counts.add_proposition(["(A0*)", "(V*)"], None)  # no prediction: every gold argument missed
    assert counts.totals() == (0, 0, 1)
    assert metric_line(SrlCounts()) == "precision 0.0000 recall 0.0000 f1 0.0000"


def test_printed_numbers_have_srl_eval_digits():
    # 27 correct, 0 excess, 10 missed: P = 100%, R = 2700/37%, F1 = 54/64 = 84.375% exactly.
    # srl-eval.pl computes F1 from the percentages and prints 84.38 (checked with the official
    # script); the same F1 from fractions is 0.84374999..., which would print 84.37 / 0.8437.
    counts = SrlCounts()
    for i in range(37):
        counts.add_proposition(["(A0*)", "(V*)"], ["(A0*)" if i < 27 else "*", "(V*)"])
    assert counts.totals() == (27, 0, 10)
    assert [f"{x:.2f}" for x in srl_eval_percentages(*counts.totals())] == ["100.00", "72.97", "84.38"]
    assert metric_line(counts) == "precision 1.0000 recall 0.7297 f1 0.8438"


def test_files_that_srl_eval_would_stop_reading_early_are_refused():
    # srl-eval.pl takes an empty sentence (a second blank line, or one at the top) for the end of
    # the file and scores only the sentences before it: on the first gold file below it counts 1
    # proposition (checked with the official script) where our reader would count 2.
    one, two = "-  (A0*)\ngo (V*)\n", "-  *\ngo (V*)\n"
    for text, line in ((one + "\n\n" + one + "\n", 4), ("\n" + one + "\n", 1), (one + " \n\t\n" + one, 4)):
        with pytest.raises(PropsFormatError, match=f"gold.props, line {line}: a blank line that ends no sentence"):
            list(read_props(lines_srl_eval_reads(io.StringIO(text), "gold.props"), "gold.props"))
    # blank lines at the end of a file are fine
    fine = one + "\n" + two + "\n\n\n"
    assert len(list(read_props(lines_srl_eval_reads(io.StringIO(fine), "gold.props"), "gold.props"))) == 2


def test_sentence_level_matching_by_position_and_verb():
    gold = next(read_props(io.StringIO("go (A0*) *\n- (V*) (A0*)\nsay * (V*)\n\n"), "gold"))
    assert gold.predicate_positions == [0, 2]
    # the predicted "say" predicate is called "tell": all its gold arguments are missed.
    predicted = next(read_props(io.StringIO("go (A0*) *\n- (V*) (A0*)\ntell * (V*)\n\n"), "pred"))
    counts = SrlCounts()
    counts.add_sentence(gold, predicted)
    assert counts.totals() == (1, 0, 1)
    assert counts.propositions == 2


def test_metric_on_bio_predictions_gives_the_same_counts():
    metric = SrlEvalMetric()
    gold = ["(A0*", "*)", "(V*)", "(A1*", "*)", "*"]
    metric([["B-A0", "I-A0", "B-V", "B-A1", "I-A1", "O"], ["B-A0", "B-A0", "B-V", "O", "O", "O"]], [gold, gold])
    result = metric.get_metric(reset=True)
    # 2 + 0 correct, 0 + 2 excess, 0 + 2 missed.
    assert result["precision-overall"] == pytest.approx(0.5)
    assert result["recall-overall"] == pytest.approx(0.5)
    assert result["f1-measure-A1"] == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert metric.get_metric()["f1-measure-overall"] == 0.0  # reset


def test_bio_and_start_end_round_trip():
    bio = ["B-A0", "I-A0", "B-V", "B-C-A0", "O", "B-A1", "B-A1", "I-A1"]
    column = bio_to_start_end(bio)
    assert column == ["(A0*", "*)", "(V*)", "(C-A0*)", "*", "(A1*)", "(A1*", "*)"]
    assert start_end_to_bio(column) == (bio, 0)
    # an I- tag that does not continue its label opens a new argument
    assert bio_to_start_end(["O", "I-A1", "I-A1", "I-A0"]) == ["*", "(A1*", "*)", "(A0*)"]
    # BIO keeps the outer phrase of an embedded pair and says it dropped one
    assert start_end_to_bio(["(C-A2(V*)", "*)"]) == (["B-C-A2", "I-C-A2"], 1)


@pytest.mark.parametrize(
    "bad, message",
    [
        (["(A0*", "*"], "never closed"),
        (["*)", "*"], "never opened"),
        (["A0"], "cannot read"),
        (["(A0*A1)"], "closes A1"),
    ],
)
def test_bad_columns_say_where(bad, message):
    with pytest.raises(PropsFormatError, match=message):
        arguments_of(bad, "file.props, line 3")


def test_props_files_round_trip_and_misaligned_files_are_refused():
    text = "-    (A0*     *\ngo   *)    (A1*\n-    *     *)\nsay  (V*)   (V*)\n\n-  \n-  \n\n"
    with pytest.raises(PropsFormatError, match="1 target verb.*2 argument column"):
        list(read_props(io.StringIO("-  (A0*)  *\ngo (V*) (V*)\n\n"), "bad.props"))
    sentences = list(read_props(io.StringIO(text), "x.props"))
    out = io.StringIO()
    for sentence in sentences:
        write_props(out, sentence.targets, sentence.columns)
    again = list(read_props(io.StringIO(out.getvalue()), "y.props"))
    assert [(s.targets, s.columns) for s in again] == [(s.targets, s.columns) for s in sentences]
    assert len(again) == 2 and again[1].columns == []
    with pytest.raises(ValueError, match="ends after 1 sentence but"):
        score_props(sentences[:1], sentences, "gold.props", "pred.props")


@pytest.mark.skipif(not os.environ.get("SRL_EVAL_PL"), reason="set SRL_EVAL_PL to the official srl-eval.pl")
def test_equals_the_official_srl_eval_on_random_files(tmp_path):
    for seed in range(50):
        gold, predicted = tmp_path / "gold.props", tmp_path / "pred.props"
        with gold.open("w") as g, predicted.open("w") as p:
            write_pair(random.Random(seed), g, p, 30)
        output = subprocess.run(
            ["perl", os.environ["SRL_EVAL_PL"], str(gold), str(predicted)], capture_output=True, text=True, check=True
        ).stdout
        official = tuple(int(n) for n in re.search(r"Overall\s+(\d+)\s+(\d+)\s+(\d+)", output).groups())
        with gold.open() as g, predicted.open() as p:
            assert score_props(read_props(g, "gold"), read_props(p, "pred")).totals() == official, seed
