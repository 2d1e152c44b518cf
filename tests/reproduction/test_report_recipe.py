"""The report's table of the paper's recipe on the full data (issue 55.6): its values, the ELMo gain's
standard error worked by hand, and its place in the mini budget's report."""

import pytest

from elmo_tasks.reproduction.report_recipe import gain_with_standard_error, recipe_table


def _record(variant: str, seed: int, value: float) -> dict:
    return {"task": "ner", "variant": variant, "seed_index": seed, "value": value, "env": {}}


def test_the_gain_and_its_standard_error_by_hand():
    # means 90 and 92: gain 2; variances 1 and 4 over 3 seeds each: sqrt(1/3 + 4/3) = 1.29
    assert gain_with_standard_error([89.0, 90.0, 91.0], [90.0, 92.0, 94.0]) == "+2.00 ± 1.29"
    assert gain_with_standard_error([90.0], [91.5]) == "+1.50"  # no spread from one seed
    assert gain_with_standard_error([], [91.5]) == "–"


def test_a_row_per_recipe_task_with_the_papers_numbers_and_ours():
    records = [_record("baseline", k, v) for k, v in enumerate((89.0, 90.0, 91.0))]
    records += [_record("elmo", k, v) for k, v in enumerate((90.0, 92.0, 94.0))]
    (row,) = [line for line in recipe_table(records) if line.startswith("| NER |")]
    assert row.startswith("| NER | F1 | 90.15 | 92.22 | 90.00 ± 1.00 | 92.00 ± 2.00 | +2.00 ± 1.29 | 3 / 3 |")


def test_a_task_without_runs_says_so():
    (row,) = [line for line in recipe_table([]) if line.startswith("| NER |")]
    assert "not run yet" in row


@pytest.mark.parametrize("budget, shown", [("mini", True), ("smoke", False)])
def test_the_mini_report_has_the_section(tmp_path, budget, shown):
    from elmo_tasks.reproduction.report import write_report

    write_report([], tmp_path / "RESULTS.md", budget, recipe_records=tmp_path / "records" / "recipe")
    text = (tmp_path / "RESULTS.md").read_text()
    assert ("## The paper's recipe on the full data" in text) is shown
