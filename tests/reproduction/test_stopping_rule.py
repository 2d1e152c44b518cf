"""The stopping rule's arithmetic: which raised cap or patience leaves a finished run as it was."""

from elmo_tasks.reproduction.stopping_rule import StoppingRule, described


def test_a_rule_stops_no_later_than_one_with_a_cap_and_patience_as_high_or_higher():
    assert StoppingRule(15, 3).stops_no_later_than(StoppingRule(30, 3))
    assert StoppingRule(15, 3).stops_no_later_than(StoppingRule(15, 5))
    assert StoppingRule(15, 3).stops_no_later_than(StoppingRule(15, None))  # no patience: never stops early
    assert not StoppingRule(15, None).stops_no_later_than(StoppingRule(30, 3))
    assert not StoppingRule(15, 5).stops_no_later_than(StoppingRule(30, 3))
    assert not StoppingRule(30, 3).stops_no_later_than(StoppingRule(15, 3))


def test_a_run_is_the_same_run_only_where_the_limit_that_stopped_it_is_unchanged():
    stopped_by_patience, reached_the_cap = 8, 15
    old = StoppingRule(15, 3)
    assert old.makes_the_same_stop(StoppingRule(30, 3), stopped_by_patience)
    assert not old.makes_the_same_stop(StoppingRule(15, 5), stopped_by_patience)
    assert not old.makes_the_same_stop(StoppingRule(30, 5), stopped_by_patience)
    assert old.makes_the_same_stop(StoppingRule(15, 5), reached_the_cap)
    assert not old.makes_the_same_stop(StoppingRule(30, 3), reached_the_cap)
    assert not old.makes_the_same_stop(StoppingRule(30, 5), reached_the_cap)


def test_a_rule_is_described_by_what_differs():
    assert described(StoppingRule(15, 3), StoppingRule(30, 3)) == "a cap of 15"
    assert described(StoppingRule(15, 3), StoppingRule(15, 5)) == "patience 3"
    assert described(StoppingRule(30, None), StoppingRule(15, 3)) == "a cap of 30 and no patience"
