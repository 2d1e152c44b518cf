"""The report's "What the numbers mean" from hand-made records, its gains and standard errors worked out by hand."""

import math

import pytest

from elmo_tasks.reproduction.notes import task_notes
from elmo_tasks.reproduction.report_meaning import gain_and_error, verdict, what_the_numbers_mean


def _record(task: str, variant: str, k: int, value: float, **extra: object) -> dict:
    return {"task": task, "variant": variant, "seed_index": k, "value": value, **extra}


def _table_1_runs(task: str, baseline: tuple, elmo: tuple, **extra: object) -> list:
    """Baseline and ELMo records of ``task``, a seed per value."""
    runs = [_record(task, "baseline", k, value) for k, value in enumerate(baseline)]
    return runs + [_record(task, "elmo", k, value, **extra) for k, value in enumerate(elmo)]


def test_the_gain_and_its_standard_error_by_hand():
    # means 81 and 86, each sample variance 2 over 2 seeds: SE = sqrt(2/2 + 2/2) = 1.414
    gain, error = gain_and_error([80.0, 82.0], [85.0, 87.0])
    assert gain == pytest.approx(5.0) and error == pytest.approx(math.sqrt(2))
    assert verdict(gain, error) == "ELMo ahead beyond seed noise"
    assert verdict(2.0, 1.5) == "within seed noise"  # 2 < 2 x 1.5
    assert verdict(-3.1, 1.5) == "**baseline ahead** beyond seed noise"
    assert gain_and_error([80.0], [85.0, 87.0]) is None  # one seed: no spread to compare with


def test_a_row_per_task_with_both_models_its_reading_and_the_budgets_limits():
    records = [
        *_table_1_runs("ner", (80.0, 82.0), (85.0, 87.0)),
        _record("sst5", "baseline", 0, 40.0),
    ]  # SST-5: no ELMo
    lines = what_the_numbers_mean(records, "mini")
    rows = [line for line in lines if line.startswith("| NER") or line.startswith("| SST-5")]
    # error reductions: ours (86 - 81) / 19 = 26.3%, the paper's (92.22 - 90.15) / 9.85 = 21.0%
    assert rows == [
        f"| NER | +5.00 ± 1.41 | ELMo ahead beyond seed noise | 26.3% | 21.0% | {task_notes('ner').limits['mini']} |"
    ]
    assert "| – |" in what_the_numbers_mean(records, "paper")[-1]  # no limits note for that budget
    assert what_the_numbers_mean(records[:2], "mini") == ["No task has runs of both models yet."]


def test_the_sample_efficiency_runs_measure_how_far_more_data_goes_on_the_data_they_name():
    records = [
        *_table_1_runs("snli", (60.0, 62.0), (63.0, 64.0)),
        _record("snli", "baseline_sample0.1", 0, 50.0, train_fraction=0.1),
        _record("snli", "baseline_sample0.1", 1, 52.0, train_fraction=0.1),
        _record("snli", "elmo_sample0.1", 0, 55.0, train_fraction=0.1),
        *_table_1_runs("srl", (64.0, 65.0), (68.0, 69.0)),
        _record("srl", "baseline_sample0.01", 0, 47.0, train_fraction=0.01),
        _record("srl", "baseline_sample0.1", 0, 63.0, train_fraction=0.1),
    ]
    rows = {line.split(" |")[0]: line for line in what_the_numbers_mean(records, "mini") if line.startswith("| S")}
    # the full runs are SNLI's 100% point: baseline 51 -> 61, ELMo 55 -> 63.5
    assert rows["| SNLI"].endswith(
        "Measured by the sample-efficiency runs (the training pairs, sampled by premise), test metric: "
        "baseline 51.0 at 10%, 61.0 at 100%; ELMo 55.0 at 10%, 63.5 at 100% of the training data. |"
    )
    # SRL's full runs are on CoNLL-2012, so they are no point of its CoNLL-2005 curve
    assert rows["| SRL"].endswith(
        "Measured by the sample-efficiency runs (CoNLL-2005 train, sampled by sentence; tested on test WSJ), "
        "test metric: baseline 47.0 at 1%, 63.0 at 10% of the training data. |"
    )


def test_runs_of_an_earlier_config_are_marked_and_left_out_of_the_data_curve():
    records = [
        *_table_1_runs("snli", (60.0, 62.0), (63.0, 64.0), outdated="config"),
        _record("snli", "baseline_sample0.1", 0, 50.0, train_fraction=0.1, outdated="config"),
    ]
    lines = what_the_numbers_mean(records, "mini")
    row = next(line for line in lines if line.startswith("| SNLI"))
    assert row.startswith("| SNLI | +2.50 ± 1.12 † |") and "Measured" not in row  # sqrt(2/2 + 0.5/2) = 1.118
    assert lines[-1].startswith("†: some of these runs were made with an earlier config")
