"""The official SQuAD v1.1 scoring rules, on answers worked out by hand."""

import pytest

from elmo_tasks.tasks.squad.metric import (
    SquadEmAndF1,
    best_over_gold,
    exact_match_score,
    f1_score,
    metric_line,
    normalize_answer,
    score_predictions,
)


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("The Denver Broncos", "denver broncos"),
        ("  Denver\tBroncos.\n", "denver broncos"),
        ("an apple, a pear & the plum!", "apple pear plum"),
        ("theater anthem", "theater anthem"),  # articles only as whole words
        ("A-list", "alist"),  # punctuation is removed, not replaced by a space
        ("“Quoted” — dash", "“quoted” — dash"),  # not ASCII punctuation: kept, as officially
        ("$1,000.50", "100050"),
        ("", ""),
    ],
)
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_ignores_case_punctuation_and_articles_only():
    assert exact_match_score("Denver Broncos.", "denver broncos") == 1.0
    assert exact_match_score("the Broncos", "Broncos") == 1.0
    assert exact_match_score("Broncos (NFL)", "Broncos NFL") == 1.0
    assert exact_match_score("Broncos team", "Broncos") == 0.0
    assert exact_match_score("1990s", "1990") == 0.0


def test_f1_by_hand():
    # {carolina, panthers, team} vs {carolina, panthers}: 2 shared, P = 2/3, R = 1 -> 0.8
    assert f1_score("the Carolina Panthers team", "Carolina Panthers") == pytest.approx(0.8)
    # multiset overlap: {x, x, y} vs {x, y, y} shares one x and one y: P = R = 2/3
    assert f1_score("x x y", "x y y") == pytest.approx(2 / 3)
    # punctuation-only difference is a perfect match; no shared token scores 0
    assert f1_score("Santa Clara, California", "Santa Clara California") == 1.0
    assert f1_score("Levi's Stadium", "Santa Clara") == 0.0
    # an empty normalised answer scores F1 0 even against an empty gold (EM is 1), as officially
    assert f1_score("the", "a") == 0.0 and exact_match_score("the", "a") == 1.0


def test_best_over_several_gold_answers_takes_each_maximum_separately():
    # vs "Broncos": 1 shared, P = 1/2, R = 1 -> 2/3; vs "Denver Broncos team": P = 1, R = 2/3 -> 0.8
    assert best_over_gold("Denver Broncos", ["Broncos", "Denver Broncos team"]) == (0.0, pytest.approx(0.8))
    # EM comes from the second gold answer, F1 1.0 too
    assert best_over_gold("broncos", ["Denver Broncos", "The Broncos!"]) == (1.0, 1.0)
    with pytest.raises(ValueError, match="at least one gold answer"):
        best_over_gold("x", [])


def test_score_predictions_averages_over_all_questions_unanswered_score_zero():
    questions = [
        ("q1", ["Denver Broncos"]),
        ("q2", ["Carolina Panthers", "the Panthers"]),
        ("q3", ["Santa Clara"]),  # unanswered
        ("q4", ["February 7, 2016"]),
    ]
    predictions = {"q1": "the Denver Broncos", "q2": "Panthers team", "q4": "February 7", "zzz": "ignored"}
    # q1: EM 1, F1 1. q2: vs "the Panthers" P = 1/2, R = 1 -> 2/3 (vs the other gold: 1/2). q3: 0.
    # q4: {february, 7} vs {february, 7, 2016}: P = 1, R = 2/3 -> 0.8.
    scores = score_predictions(questions, predictions)
    assert scores["exact_match"] == pytest.approx(100 * 1 / 4)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3 + 0 + 0.8) / 4)
    assert (scores["questions"], scores["unanswered"], scores["unknown_ids"]) == (4, 1, 1)
    assert metric_line({"exact_match": 25.0, "f1": 61.66666666666667}) == "exact_match 25.0 f1 61.66666666666667"


def test_repeated_question_ids_count_each_time():
    scores = score_predictions([("q", ["a b"]), ("q", ["a b"]), ("r", ["c"])], {"q": "a b", "r": "d"})
    assert scores["exact_match"] == pytest.approx(200 / 3)


def test_running_metric_is_the_mean_fraction():
    metric = SquadEmAndF1()
    metric(["the Denver Broncos", "Panthers team"], [["Denver Broncos"], ["Carolina Panthers", "the Panthers"]])
    metric(["nothing"], [["Santa Clara"]])
    assert metric.get_metric(reset=True) == {"em": pytest.approx(1 / 3), "f1": pytest.approx((1 + 2 / 3) / 3)}
    assert metric.get_metric() == {"em": 0.0, "f1": 0.0}


@pytest.mark.parametrize(
    "text, normalized",
    [
        # Each pair is what the official evaluate-v1.1.py's normalize_answer returns (checked with
        # the script): Unicode spaces split words (so "The" is an article), a zero-width space is
        # not a space, only ASCII punctuation goes, and lowercasing is Python's.
        ("\u00a0The\u2009Broncos\u200b!", "broncos\u200b"),
        ("\uff0c\u3002 the\u3000end", "\uff0c\u3002 end"),
        ("don\u2019t vs don't", "don\u2019t vs dont"),
        ("\u0130stanbul STRASSE stra\u00dfe", "i\u0307stanbul strasse stra\u00dfe"),
        ("\u03a3\u039f\u03a6\u039f\u03a3", "\u03c3\u03bf\u03c6\u03bf\u03c2"),  # final sigma
    ],
)
def test_normalize_answer_on_unicode_like_the_official_script(text, normalized):
    assert normalize_answer(text) == normalized


def test_non_breaking_space_separates_tokens_for_f1():
    assert f1_score("Broncos\u00a0Denver", "denver broncos") == 1.0
    assert exact_match_score("Denver\u00a0Broncos", "denver broncos") == 1.0
