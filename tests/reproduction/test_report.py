"""The report from hand-made records: Table 1, the analyses, notes per budget, task sections, the
cross-validation and the console's metrics lines, with the numbers worked out by hand."""

from elmo_tasks.reproduction import plots
from elmo_tasks.reproduction.cli import current_where_rerun
from elmo_tasks.reproduction.notes import task_notes
from elmo_tasks.reproduction.report_sections import FIXTURES_NOTE, task_section
from elmo_tasks.reproduction.report_tables import (
    IMPROVING_NOTE,
    OUTDATED_NOTE,
    analysis_table,
    cross_validation,
    diagnosis_heading,
    diagnosis_notes,
    sample_efficiency_table,
    table_1,
)
from elmo_tasks.reproduction.report_values import metrics_line, sample_efficiency_points
from elmo_tasks.reproduction.task_table import PAPER_LAYER_TABLE, PAPER_PLACEMENT_TABLE, TASKS


def _record(task: str, variant: str, k: int, value: float, best: float) -> dict:
    return {"task": task, "variant": variant, "seed_index": k, "value": value, "best_validation": best}


# Two seeds each of the NER baseline (test 80, 82) and ELMo (85, 87), the numbers the tests work by hand.
NER_RUNS = [
    _record("ner", "baseline", 0, 80.0, 81.0),
    _record("ner", "baseline", 1, 82.0, 83.0),
    _record("ner", "elmo", 0, 85.0, 86.0),
    _record("ner", "elmo", 1, 87.0, 88.0),
]


def test_table_1_means_stds_and_error_reductions_by_hand():
    records = list(NER_RUNS)
    row = next(line for line in table_1(records, "mini") if line.startswith("| NER |"))
    # baseline 81 ± 1.41, ELMo 86 ± 1.41; error reduction (86 - 81) / (100 - 81) = 26.3%;
    # the paper's (92.22 - 90.15) / (100 - 90.15) = 21.0%.
    assert row.startswith("| NER | F1 | 90.15 | 92.22 | 21.0% | 81.00 ± 1.41 | 86.00 ± 1.41 | 26.3% | 2 / 2 |")
    squad = next(line for line in table_1(records, "mini") if line.startswith("| SQuAD |"))
    assert "not run yet" in squad and "24.9%" in squad  # (85.8 - 81.1) / 18.9


def test_a_report_shows_the_notes_of_its_own_budget_only_where_its_records_hold_those_runs():
    records = [
        {**_record("ner", "baseline", 0, 80.0, 81.0), "data": "full"},
        {**_record("ner", "elmo", 0, 85.0, 86.0), "data": "full"},
    ]
    mini_note = task_notes("ner").notes["mini"]
    assert task_section("ner", records, "records", "mini")[2] == mini_note
    assert mini_note not in task_section("ner", records, "records", "paper")
    fixtures = [{**record, "data": "fixtures"} for record in records]
    assert task_section("ner", fixtures, "records", "smoke")[2] == FIXTURES_NOTE
    # The diagnosis notes: the budget's own, and only with diagnosis runs among the records.
    assert diagnosis_notes(records, "mini") == []
    assert diagnosis_heading(records, "mini") == "ELMo diagnosis variants (SNLI, NER)"
    diagnosed = records + [{**_record("ner", "elmo_layer_norm", 0, 84.0, 85.0), "data": "full"}]
    assert diagnosis_notes(diagnosed, "mini") == [
        f"- NER: {task_notes('ner').diagnosis_notes['mini']}",
        "",
    ]
    assert diagnosis_heading(diagnosed, "mini") == "Why ELMo hurt (SNLI, NER): what was tried"
    assert diagnosis_notes(diagnosed, "smoke") == []
    # Without runs of a table's variants, the command to make them is the report's own budget's.
    assert analysis_table(records, "layers", {}, "smoke") == [
        "No runs of these variants yet (`scripts/reproduce.py TASK --budget smoke --analyses`)."
    ]


def test_the_console_metrics_line_gives_table_1s_numbers():
    records = NER_RUNS[:3]
    # baseline 81 ± 1.41 (two seeds), ELMo 85 (one seed)
    assert metrics_line(records, "ner", "mini") == (
        "ner mini: baseline F1 81.00 ± 1.41, ELMo F1 85.00 (test, seeds 2 / 1)"
    )
    assert metrics_line(records[2:], "ner", "smoke") == (
        "ner smoke: baseline not run yet, ELMo F1 85.00 (test, seeds 0 / 1)"
    )
    assert metrics_line([], "sst5", "paper") == (
        "sst5 paper: baseline not run yet, ELMo not run yet (test, 0 seeds each)"
    )


def test_analysis_tables_use_best_validation_of_the_analysis_variants():
    records = [
        _record("sst5", "baseline", 0, 30.0, 31.0),
        _record("sst5", "elmo", 0, 35.0, 36.0),
        _record("sst5", "elmo_top_layer", 0, 33.0, 34.0),
        _record("sst5", "elmo_top_layer", 1, 33.0, 35.0),
        _record("sst5", "elmo_input_only", 0, 32.0, 32.5),
    ]
    layers = analysis_table(records, "layers", PAPER_LAYER_TABLE)
    assert layers[0].startswith("| Task | baseline | ELMo as configured") and "top layer only" in layers[0]
    assert layers[2] == "| SST-5 (ELMo at input and output, lambda 0.001) | 31.00 | 36.00 | 34.50 ± 0.71 |"
    placement = analysis_table(records, "placement", PAPER_PLACEMENT_TABLE)
    assert placement[2] == "| SST-5 (ELMo at input and output, lambda 0.001) | 31.00 | 36.00 | 32.50 |"
    # Tasks that put ELMo in different places share the columns (one "ELMo as configured" column).
    records += [_record("ner", "baseline", 0, 70.0, 71.0), _record("ner", "elmo_top_layer", 0, 72.0, 73.0)]
    layers = analysis_table(records, "layers", {})
    assert layers[0] == "| Task | baseline | ELMo as configured | top layer only |"
    assert layers[2:4] == [
        "| NER (ELMo at input, lambda 0.1) | 71.00 | – | 73.00 |",
        "| SST-5 (ELMo at input and output, lambda 0.001) | 31.00 | 36.00 | 34.50 ± 0.71 |",
    ]
    assert "| SNLI | 88.9 | 89.5 | 88.7 |" in placement


def test_task_sections_give_each_runs_best_epoch_and_count_runs_still_improving():
    def run(variant: str, k: int, curve: list) -> dict:
        best = max(range(len(curve)), key=curve.__getitem__)
        return {**_record("coref", variant, k, 40.0, curve[best]), "best_epoch": best, "validation_curve": curve}

    records = [
        run("baseline", 0, [10.0, 20.0, 30.0]),  # best at its last epoch: still improving
        run("baseline", 1, [10.0, 25.0, 24.0]),
        run("elmo", 0, [30.0, 35.0]),  # stopped early after 2 epochs, best at the last
        {**_record("coref", "elmo", 1, 41.0, 36.0), "best_epoch": None, "validation_curve": []},  # no curve
    ]
    lines = task_section("coref", records, "records")
    header = next(i for i, line in enumerate(lines) if "| Best epoch |" in line)
    baseline, elmo = lines[header + 2 : header + 4]
    assert "| 3/3, 2/3 |" in baseline and "| 2/2 |" in elmo
    note = next(line for line in lines if line.startswith("Best epoch:"))
    assert note.endswith("Runs still improving at their last epoch: baseline 1 of 2, elmo 1 of 2.")
    records = [run("baseline", 0, [10.0, 30.0, 20.0])]
    note = next(line for line in task_section("coref", records, "records") if line.startswith("Best epoch:"))
    assert "Runs still improving" not in note


def test_a_task_section_shows_a_biLM_the_harness_made_from_its_runs_folder_on():
    def elmo_run(k: int, options_file: str) -> dict:
        embedders = {"elmo": {"options_file": options_file}}
        config = {"model": {"text_field_embedder": {"token_embedders": embedders}}}
        return {**_record("snli", "elmo", k, 60.0, 61.0), "config_resolved": config, "bilm_weights_sha256": "ab12"}

    made = "/home/someone/elmo-tasks/runs/mini/snli/bilm_finetuned/run/elmo/options.json"
    records = [elmo_run(0, made), elmo_run(1, "elmo_tasks:pretrained/bilm_small/options.json")]
    line = next(line for line in task_section("snli", records, "records") if line.startswith("biLM: "))
    assert line == (
        "biLM: `elmo_tasks:pretrained/bilm_small/options.json` (weights sha256 `ab12`), "
        "`runs/mini/snli/bilm_finetuned/run/elmo/options.json` (weights sha256 `ab12`)"
    )


def test_table_1_marks_results_any_of_whose_runs_was_still_improving():
    def run(variant: str, k: int, best_epoch: int) -> dict:
        return {**_record("ner", variant, k, 80.0 + k, 81.0), "best_epoch": best_epoch, "validation_curve": [1.0] * 4}

    # Baseline: 2 of 3 runs best at their last epoch (3 of 0..3); ELMo: 1 of 3; a third row none.
    records = [run("baseline", 0, 3), run("baseline", 1, 3), run("baseline", 2, 1)]
    records += [run("elmo", 0, 3), run("elmo", 1, 2), run("elmo", 2, 0)]
    lines = table_1(records, "mini")
    row = next(line for line in lines if line.startswith("| NER |"))
    assert "| 81.00 ± 1.00 ‡ | 81.00 ± 1.00 ‡ | " in row
    assert IMPROVING_NOTE in lines
    records = [run("baseline", 0, 2), run("baseline", 1, 0), run("elmo", 0, 2)]
    row = next(line for line in table_1(records, "mini") if line.startswith("| NER |"))
    assert "‡" not in row
    records = [run("baseline", 0, 2), run("elmo", 0, 2)]
    assert IMPROVING_NOTE not in table_1(records, "mini")


def test_other_folds_are_runs_of_their_own_and_a_cross_validation_table():
    assert TASKS["squad"].run_name("1/4", 0) == "seed0"  # the default fold keeps the plain name
    assert TASKS["squad"].run_name("3/4", 2) == "fold3of4-seed2"
    assert TASKS["ner"].run_name(None, 1) == "seed1"
    records = [
        {**_record("squad", "baseline", 0, 10.0, 11.0), "split": "1/4"},
        {**_record("squad", "baseline", 1, 12.0, 11.0), "split": "1/4"},
        {**_record("squad", "baseline", 0, 20.0, 11.0), "split": "2/4"},
        {**_record("squad", "elmo", 0, 30.0, 31.0), "split": "1/4"},
    ]
    table = cross_validation("squad", records)
    assert "| baseline | 11.00 (2) | 20.00 (1) | – | – | 2 of 4 folds run |" in table
    assert "| elmo | 30.00 (1) | – | – | – | 1 of 4 folds run |" in table
    more = [{**_record("squad", "baseline", 0, v, 0.0), "split": s} for s, v in (("3/4", 30.0), ("4/4", 40.0))]
    complete = cross_validation("squad", records + more)
    assert "| baseline | 11.00 (2) | 20.00 (1) | 30.00 (1) | 40.00 (1) | 25.25 |" in complete
    # Table 1 takes the default fold only until the cross-validation is complete: baseline
    # 11 ± 1.41 from the two fold-1 seeds.
    row = next(line for line in table_1(records, "mini") if line.startswith("| SQuAD |"))
    assert "| 11.00 ± 1.41 | 30.00 |" in row and "test fold 1/4 only" in row


def test_a_complete_cross_validation_gives_table_1_the_mean_over_folds_per_seed():
    values = {  # (variant, seed) -> F1 on folds 1/4 .. 4/4; EM is F1 - 5
        ("baseline", 0): [10.0, 20.0, 30.0, 40.0],
        ("baseline", 1): [12.0, 22.0, 32.0, 42.0],
        ("elmo", 0): [30.0, 40.0, 50.0, 60.0],
        ("elmo", 1): [34.0, 44.0, 54.0, 64.0],
    }
    records = [
        {
            **_record("squad", variant, k, f1, 0.0),
            "split": f"{fold}/4",
            "test_metrics": {"test": {"em": (f1 - 5) / 100}},
        }
        for (variant, k), folds in values.items()
        for fold, f1 in enumerate(folds, start=1)
    ]
    # Per seed, the mean over the 4 folds: baseline 25 and 27 (26 ± 1.41), ELMo 45 and 49 (47 ± 2.83);
    # error reduction (47 - 26) / (100 - 26) = 28.4%.
    row = next(line for line in table_1(records, "mini") if line.startswith("| SQuAD |"))
    assert "| 26.00 ± 1.41 | 47.00 ± 2.83 | 28.4% | 2 / 2 |" in row and "mean over all 4 test folds" in row
    table = cross_validation("squad", records)
    assert "| elmo | 32.00 (2) | 42.00 (2) | 52.00 (2) | 62.00 (2) | 47.00 |" in table  # F1
    assert "| elmo | 27.00 (2) | 37.00 (2) | 47.00 (2) | 57.00 (2) | 42.00 |" in table  # EM
    # One ELMo seed missing on one fold: both variants back to the default fold (10, 12 and 30, 34).
    partial = [r for r in records if not (r["variant"] == "elmo" and r["seed_index"] == 1 and r["split"] == "3/4")]
    row = next(line for line in table_1(partial, "mini") if line.startswith("| SQuAD |"))
    assert "| 11.00 ± 1.41 | 32.00 ± 2.83 |" in row and "mean over all" not in row
    # The default fold rerun with a new config, the other folds not yet: Table 1 takes the default fold's
    # new runs, never a mean over folds of two configs, and the fold table marks the old folds.
    rerun = [{**r, "outdated": r["split"] != "1/4"} for r in records]
    row = next(line for line in table_1(rerun, "mini") if line.startswith("| SQuAD |"))
    assert "| 11.00 ± 1.41 | 32.00 ± 2.83 |" in row and "mean over all" not in row
    table = cross_validation("squad", rerun)
    assert "| elmo | 32.00 (2) | 42.00 (2) † | 52.00 (2) † | 62.00 (2) † | – (folds of different configs) |" in table
    assert OUTDATED_NOTE in table


def test_the_mean_over_folds_needs_one_config_apart_from_the_fold_whether_or_not_it_is_current():
    def fold_run(fold: int, f1: float, encoder: str) -> dict:
        resolved = {
            "train_data_path": f"xquad.en.json#folds-except={fold},{fold % 4 + 1}/4",
            "validation_data_path": f"xquad.en.json#fold={fold % 4 + 1}/4",
            "model": {"phrase_layer": {"type": encoder}},
            "random_seed": 13370 + fold,  # seeds differ between runs of one config too
        }
        return {**_record("squad", "baseline", 0, f1, 0.0), "split": f"{fold}/4", "config_resolved": resolved}

    # Every fold made with a config since edited (all marked), but all with the same one: their mean.
    same = [{**fold_run(fold, 10.0 * fold, "gru"), "outdated": True} for fold in range(1, 5)]
    assert "| baseline | 10.00 (1) † | 20.00 (1) † | 30.00 (1) † | 40.00 (1) † | 25.00 |" in cross_validation(
        "squad", same
    )
    # All marked, but two folds from another config than the others: no mean.
    mixed = same[:2] + [{**fold_run(fold, 10.0 * fold, "lstm"), "outdated": True} for fold in (3, 4)]
    different = "| baseline | 10.00 (1) † | 20.00 (1) † | 30.00 (1) † | 40.00 (1) † | – (folds of different configs) |"
    assert different in cross_validation("squad", mixed)


def test_table_1_names_the_biLMs_of_the_elmo_runs():
    records = [
        _record("ner", "baseline", 0, 80.0, 81.0),
        {**_record("ner", "elmo", 0, 85.0, 86.0), "bilm_weights_sha256": "e309e129aa32eec2"},
        {**_record("ner", "elmo", 1, 87.0, 88.0), "bilm_weights_sha256": "0123456789abcdef"},
    ]
    lines = table_1(records, "mini")
    row = next(line for line in lines if line.startswith("| NER |"))
    assert "| 1 / 2 | `0123456789abcdef`, `e309e129aa32eec2` |" in row  # a mix is shown, not hidden
    assert "`e309e129aa32eec2`: the stage-2 shipped biLM" in lines[-1] and "0123456789abcdef`:" not in lines[-1]


def test_a_row_rerun_with_todays_settings_shows_only_the_rerun_seeds():
    old = [{**_record("sst5", "baseline", k, 30.0 + k, 31.0), "outdated": True} for k in range(3)]
    new = {**_record("sst5", "baseline", 0, 44.0, 44.3), "outdated": False}
    untouched = [{**_record("snli", "elmo", k, 60.0, 60.0), "outdated": True} for k in range(2)]
    shown = current_where_rerun([*old[1:], new, *untouched])
    assert shown == [new, *untouched]  # the rerun row: its current seed alone; a row not rerun: all, marked
    row = next(line for line in table_1(shown, "mini") if line.startswith("| SST-5 |"))
    assert "| 44.00 |" in row and "†" not in row.split("|")[6] and "| 1 / 0 |" in row


def test_a_row_of_two_earlier_configs_shows_the_runs_of_the_last_one_evaluated():
    def run(k: int, value: float, config: str, evaluated_at: str) -> dict:
        extra = {"outdated": True, "config_sha256": config, "evaluated_at": evaluated_at}
        return {**_record("coref", "baseline", k, value, value), **extra}

    older = [run(1, 30.0, "a", "2026-11-24T06:00:00+00:00"), run(2, 34.0, "a", "2026-11-24T07:00:00+00:00")]
    newer = run(0, 50.0, "b", "2026-11-27T15:00:00+00:00")  # rerun under a cap raised again since
    assert current_where_rerun([*older, newer]) == [newer]
    assert current_where_rerun(older) == older


def test_the_sample_efficiency_table_marks_shares_still_improving_or_of_an_earlier_config():
    def run(variant: str, k: int, value: float, best_epoch: int, **extra: object) -> dict:
        curve = {"best_epoch": best_epoch, "validation_curve": [1.0] * 4}
        return {**_record("snli", variant, k, value, 0.0), **curve, **extra}

    records = [
        run("baseline", 0, 60.0, 1),  # the full runs are SNLI's 100% point
        run("elmo", 0, 63.0, 2),
        run("baseline_sample0.1", 0, 50.0, 3, train_fraction=0.1),  # best at its last epoch
        run("baseline_sample0.1", 1, 52.0, 1, train_fraction=0.1),
        run("elmo_sample0.1", 0, 55.0, 2, train_fraction=0.1, outdated="config"),
    ]
    lines = sample_efficiency_table("snli", records)
    assert "| 10% | 51.00 ± 1.41 ‡ | 55.00 † | 2 / 1 |" in lines
    assert "| 100% | 60.00 | 63.00 | 1 / 1 |" in lines
    assert IMPROVING_NOTE in lines and OUTDATED_NOTE in lines
    assert IMPROVING_NOTE not in sample_efficiency_table("snli", records[:2] + records[3:4])


def test_the_sample_efficiency_plot_joins_only_the_current_runs(tmp_path, monkeypatch):
    def run(variant: str, k: int, value: float, share: float, **extra: object) -> dict:
        return {**_record("srl", variant, k, value, 0.0), "train_fraction": share, **extra}

    records = [
        run("baseline_sample0.01", 0, 48.0, 0.01),
        run("baseline_sample0.01", 1, 50.0, 0.01),
        run("baseline_sample0.1", 0, 24.0, 0.1, outdated=True),  # an earlier config's: no line to it
        run("elmo_sample0.01", 0, 58.0, 0.01),
        run("elmo_sample0.1", 0, 61.0, 0.1),
    ]
    assert sample_efficiency_points(records, "srl", outdated=True) == {"baseline": [(0.1, 24.0)]}
    drawn = {}

    def keep(plt, figure, path):
        drawn["lines"] = [
            (line.get_label(), line.get_linestyle(), list(line.get_xdata()), list(line.get_ydata()))
            for line in figure.axes[0].get_lines()
        ]
        plt.close(figure)
        return path

    monkeypatch.setattr(plots, "_saved", keep)
    current, earlier = (sample_efficiency_points(records, "srl", outdated=flag) for flag in (False, True))
    plots.sample_efficiency_figure(current, "SRL", "F1", tmp_path / "srl.png", earlier)
    assert drawn["lines"] == [
        ("baseline", "-", [1.0], [49.0]),  # the mean of the two current seeds, alone on its line
        ("baseline (earlier config or biLM)", "None", [10.0], [24.0]),
        ("elmo", "-", [1.0, 10.0], [58.0, 61.0]),
    ]


def _reading(record: dict, sha: str, built_at: str) -> dict:
    vectors = {"file": "runs/word_vectors/corpus_word2vec_300d_cased_8e19ae70.txt"}
    return {**record, "word_vectors": vectors, "word_vectors_built": {"output_sha256": sha, "built_at": built_at}}


def test_a_task_section_says_which_variants_read_which_build_of_their_word_vectors():
    old, new = "7808f38f" + "0" * 56, "5f2f8ee2" + "0" * 56
    records = [
        _reading(_record("sst5", "baseline", 0, 40.0, 41.0), new, "2026-11-30T00:23:31+00:00"),
        _reading(_record("sst5", "elmo", 0, 45.0, 46.0), new, "2026-11-30T00:23:31+00:00"),
        _reading(_record("sst5", "elmo_top_layer", 0, 44.0, 45.0), old, "2026-11-27T21:00:57+00:00"),
        _reading(_record("sst5", "elmo_lambda1", 0, 43.0, 44.0), old, "2026-11-28T10:00:00+00:00"),
    ]
    line = next(line for line in task_section("sst5", records, "records") if line.startswith("Word vectors"))
    assert line.startswith(
        "Word vectors, more than one build: `corpus_word2vec_300d_cased_8e19ae70.txt` first built 2026-11-27 "
        "(sha256 `7808f38f`): elmo_lambda1, elmo_top_layer; `corpus_word2vec_300d_cased_8e19ae70.txt` first built "
        "2026-11-30 (sha256 `5f2f8ee2`): baseline, elmo. The builds have the same file name"
    )
    # one build, however often it was built again (the same bytes): nothing to say
    same = [_reading(r, new, f"2026-11-{27 + k}T00:00:00+00:00") for k, r in enumerate(records)]
    assert not any(line.startswith("Word vectors") for line in task_section("sst5", same, "records"))
