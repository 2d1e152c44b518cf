"""The committed records of the ``mini`` runs (docs/results/records/mini/) are recognised as finished
runs: the harness reuses each of them rather than training it again.

A record stops being reused when the run it describes would not be the same run today: another shipped
biLM (an ELMo run reads it), other word vectors than the budget builds today, a raised epoch cap or
patience that would not have stopped the run where it stopped (it is continued from its checkpoint), or a
resolved config that changed otherwise. The first three are expected when the biLM is replaced, the
vectors are rebuilt or a budget's cap or patience is raised (README: those runs are then retrained or
continued); the last one means an edit to the configs changed what the committed results were trained
with (docs/CONVENTIONS.md: a refactoring must leave every resolved config as it was), and this test fails
on it, unless the task is in ``EDITED_SINCE_THEIR_RUNS``: a config changed on purpose, whose runs the
harness then retrains.
"""

import os

import pytest

from elmo_tasks.config_defaults import DEFAULTS
from elmo_tasks.reproduction import configs, main
from elmo_tasks.reproduction.cli import mark_outdated, parse_args
from elmo_tasks.reproduction.configs import IDENTIFYING
from elmo_tasks.reproduction.decide import Reuse, decide
from elmo_tasks.reproduction.plan import Plan, from_root
from elmo_tasks.reproduction.records import load_records
from elmo_tasks.reproduction.stopping_rule import asked_rule, epochs_trained, raised_from
from elmo_tasks.reproduction.task_table import TASKS
from tests.conftest import ROOT

MINI_RECORDS = ROOT / "docs" / "results" / "records" / "mini"

#: Tasks whose config was edited on purpose after some of their committed runs, and why. Their runs
#: of the older config are retrained; remove a task once its committed records are all current again.
EDITED_SINCE_THEIR_RUNS = {
    "squad": "the GRUs became padded_gru (AllenNLP's gru on the padded batch: the same model up to float "
    "rounding, 2.2x faster epochs; docs/BENCHMARKS.md)",
    "ner": "the paper's recipe (appendix A.7): BiLSTM layers of 200 and 100 units with variational dropout on "
    "their inputs, the CRF's loss summed over a batch (it was averaged, which made lambda = 0.1 about 64x "
    "stronger), no CRF start/end transitions; the mini budget cuts the layers to 100 and 100",
    "snli": "ELMo's output mix moved to the paper's place (appendix A.3: the input encoder's output, before the "
    "attention; it joined the inference composition's output) and the input-and-output analysis "
    "(elmo_input_output) drops out the attention's output at 0.5, as the paper does with it; then the mini "
    "budget's ELMo itself took that placement (the paper's) in place of the input only, so its Table 1, "
    "diagnosis and sample-efficiency runs of ELMo at the input only are retrained",
}


def _reusable_today(record: dict, shipped_bilm: str, plan: Plan, settings: dict) -> bool:
    """Whether a record's run is the run the harness would train today: the same biLM, the same word vectors
    as the budget builds today, no epoch cap or patience raised that would not have stopped it where it
    stopped, no biLM outside this invocation's runs dir (a fine-tuned biLM lies in the runs dir of the
    invocation that made it), and the config of today where its task's config was edited on purpose."""
    same_bilm = record.get("bilm_weights_sha256") in (None, shipped_bilm)
    same_vectors = record.get("word_vectors") == plan.word_vectors(record["task"])
    old_rule = raised_from(record, settings)
    stopped_before_a_raised_rule = old_rule is not None and not old_rule.makes_the_same_stop(
        asked_rule(settings), epochs_trained(record)
    )
    # A biLM other than the shipped one is a fine-tuned biLM, in the runs dir of the invocation that made it.
    runs_dir = f"{from_root(plan.runs_dir)}/"
    bilm_elsewhere = any(not record["env"][name].startswith(runs_dir) for name in IDENTIFYING if name in record["env"])
    edited_config = record["task"] in EDITED_SINCE_THEIR_RUNS and record["config_sha256"] != settings["config_sha256"]
    return same_bilm and same_vectors and not stopped_before_a_raised_rule and not bilm_elsewhere and not edited_config


@pytest.mark.parametrize(
    "asked",
    [
        pytest.param(["--variants", "baseline", "elmo"], id="table-1"),
        pytest.param(["--analyses", "--sample-efficiency", "--splits", "all"], id="every-run", marks=pytest.mark.slow),
    ],
)
def test_the_committed_mini_records_are_reused_not_retrained(asked, tmp_path, monkeypatch):
    # The mini runs read the shipped biLM (the tests' own default is a tiny test biLM).
    monkeypatch.setenv("ELMO_OPTIONS", DEFAULTS["ELMO_OPTIONS"])
    monkeypatch.setenv("ELMO_WEIGHTS", DEFAULTS["ELMO_WEIGHTS"])
    shipped_bilm = configs.bilm_weights_sha256()
    paths = ["--runs-dir", str(tmp_path), "--records-dir", str(MINI_RECORDS)]
    args, tasks = parse_args(["all", "--budget", "mini", *asked, *paths])
    plan = Plan(args)
    jobs = {(job.task, job.variant, plan.paths(job).run_dir.name): job for job in plan.jobs(tasks)}
    records = [r for r in load_records(MINI_RECORDS) if (r["task"], r["variant"], r["run_name"]) in jobs]
    # Every task's baseline and ELMo runs are among them (3 seeds each).
    assert len(records) >= len(TASKS) * 2 * 3
    mark_outdated(plan, records)
    settings_of = {}
    for record in records:
        job = jobs[record["task"], record["variant"], record["run_name"]]
        key = (job.task, job.variant, job.split)  # the seed is no setting
        if key not in settings_of:
            settings_of[key] = plan.settings(job.task, plan.variants(job.task)[job.variant], job.split)
        decision = decide(plan, job, settings_of[key])
        if decision.reuse is Reuse.TWIN and decision.record is not None:
            # Another variant trained the very same model (resolved config, biLM, seed): the harness copies
            # that current record in place of this one, training nothing.
            assert decision.record["variant"] != record["variant"], job
            assert _reusable_today(decision.record, shipped_bilm, plan, settings_of[key]), job
            continue
        reused = decision.record is not None and decision.step is None
        assert reused == _reusable_today(record, shipped_bilm, plan, settings_of[key]), job
        if reused:
            assert decision.record["value"] == record["value"]
        # The report marks a record † exactly where its run would not be reused.
        assert record["outdated"] == (not reused), job
    assert not any(tmp_path.iterdir())  # deciding wrote nothing


@pytest.mark.parametrize("data_root", ["as the tests name it", "absolute", "elsewhere"])
def test_the_committed_report_is_the_report_of_the_committed_records(data_root, tmp_path, monkeypatch):
    """docs/RESULTS.md is written by the harness from the records alone; a report left behind by a change to
    the report's code or to the records (one written before the change and never regenerated) fails here.
    Regenerate it with ``scripts/reproduce.py all --budget mini --report-only``. Where a reader keeps the
    data does not change it (the records are current wherever the data folder lies)."""
    if data_root == "absolute":
        monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(ROOT / os.environ["ELMO_TASKS_SHARED_DATA"]))
    elif data_root == "elsewhere":
        monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(tmp_path / "my data"))
    monkeypatch.setenv("ELMO_OPTIONS", DEFAULTS["ELMO_OPTIONS"])
    monkeypatch.setenv("ELMO_WEIGHTS", DEFAULTS["ELMO_WEIGHTS"])
    (tmp_path / "RESULTS_history.md").write_text("(the report links it when it is beside the report)\n")
    report = tmp_path / "RESULTS.md"
    # The default runs dir, as the documented command has it: whether a record that names a file of the runs
    # dir (a fine-tuned biLM) is current depends on that dir, and --report-only reads nothing from it.
    asked = ["all", "--budget", "mini", "--report-only", "--records-dir", str(MINI_RECORDS), "--results", str(report)]
    assert main(asked) == 0
    assert report.read_text() == (ROOT / "docs" / "RESULTS.md").read_text()
