"""scripts/reproduce.py at the smoke budget: every task, run records, reuse, resume, failures, locks,
the same seed twice, the ELMo diagnosis variants and the report generated from the records."""

import dataclasses
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional, Tuple

import pytest

from elmo_tasks.reproduction import configs, main
from elmo_tasks.reproduction.cli import parse_args
from elmo_tasks.reproduction.finetune import prepare_finetuned_bilm
from elmo_tasks.reproduction.notes import task_notes
from elmo_tasks.reproduction.plan import Plan
from elmo_tasks.reproduction.records import load_records, same_settings
from elmo_tasks.reproduction.report_sections import FIXTURES_NOTE
from elmo_tasks.reproduction.report_tables import OUTDATED_NOTE
from elmo_tasks.reproduction.report_values import OUTDATED_MARK
from elmo_tasks.reproduction.task_table import TASKS
from tests.conftest import ROOT

TASK_NAMES = ["squad", "snli", "srl", "coref", "ner", "sst5"]
# Two runs of the same seed on CPU: allowed difference of any test metric (fractions).
SAME_SEED_TOLERANCE = 1e-6


def _main(*args: str) -> int:
    return main([*args, "--in-process"])


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """``reproduce.py all --budget smoke`` once for the module: (runs dir, exit code)."""
    runs = tmp_path_factory.mktemp("smoke")
    code = _main("all", "--budget", "smoke", "--runs-dir", str(runs))
    return runs, code


def _records(runs: Path):
    return load_records(runs / "records")


def _edited_config(monkeypatch, dropout: float) -> None:
    """As if ELMo's dropout had been edited in the config files since the runs."""
    original = configs.resolved_config

    def edited(*args, **kwargs):
        config = original(*args, **kwargs)
        embedders = config["model"]["text_field_embedder"]["token_embedders"]
        if "elmo" in embedders:
            embedders["elmo"]["dropout"] = dropout
        return config

    monkeypatch.setattr(configs, "resolved_config", edited)


def test_smoke_budget_runs_every_task_and_records_each_run(smoke):
    runs, code = smoke
    assert code == 0
    records = _records(runs)
    assert sorted((r["task"], r["variant"]) for r in records) == sorted(
        (task, variant) for task in TASK_NAMES for variant in ("baseline", "elmo")
    )
    for record in records:
        run_dir = runs / record["task"] / record["variant"] / "seed0"
        assert json.loads((run_dir / "record.json").read_text())["value"] == record["value"]
        assert record["budget"] == "smoke" and record["data"] == "fixtures" and record["seed"] == 13370
        assert record["overrides"] == {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 4}
        assert record["commands"][0].startswith("ELMO_OPTIONS=") and " train experiments/" in record["commands"][0]
        assert any(" evaluate " in command for command in record["commands"][1:])
        assert len(record["git_commit"]) == 40 and record["train_seconds"] > 0
        assert record["config_resolved"]["trainer"]["num_epochs"] == 1
        assert record["config_sha256"] == configs.config_fingerprint(record["config_resolved"])
        metric = record["metric"]
        assert record["value"] == pytest.approx(record["test_metrics"]["test"][metric] * 100)
        assert len(record["validation_curve"]) == 1
        # The ELMo models learned mixing weights (softmax-normalised, one per biLM layer); baselines have none.
        if record["variant"] == "elmo":
            assert record["layer_weights"] and all(
                sum(w) == pytest.approx(1.0, abs=1e-5) and len(w) == 3 for w in record["layer_weights"].values()
            )
        else:
            assert record["layer_weights"] == {}
    squad = next(r for r in records if r["task"] == "squad" and r["variant"] == "elmo")
    assert sorted(squad["layer_weights"]) == ["0", "1"]  # ELMo at the input and at the output


def test_smoke_report_has_table_1_with_every_task_and_plots(smoke):
    runs, _ = smoke
    text = (runs / "RESULTS.md").read_text()
    assert text.startswith("# Results") and "do not edit by hand" in text
    # Only what its own records say: no notes or conclusions of the mini runs, and it says what smoke runs are.
    assert "their numbers say nothing about the tasks or about ELMo" in text
    for task in TASK_NAMES:
        for note in [*task_notes(task).notes.values(), *task_notes(task).diagnosis_notes.values()]:
            assert note not in text
    assert text.count(FIXTURES_NOTE) == len(TASK_NAMES)
    assert "--budget mini" not in text and "Why ELMo hurt" not in text
    table = text.split("## The six benchmarks")[1].split("##")[0]
    for name in ("SQuAD", "SNLI", "SRL", "Coref", "NER", "SST-5"):
        row = next(line for line in table.splitlines() if line.startswith(f"| {name} |"))
        assert "not run yet" not in row and "| 1 / 1 |" in row
    assert (runs / "results" / "smoke_layer_weights.png").stat().st_size > 1000
    assert (runs / "results" / "smoke_validation_curves.png").stat().st_size > 1000
    # Regenerating from the records alone gives the same file.
    before = text
    assert _main("all", "--budget", "smoke", "--runs-dir", str(runs), "--report-only") == 0
    assert (runs / "RESULTS.md").read_text() == before


def test_finished_runs_are_reused(smoke, capsys):
    runs, _ = smoke
    record_file = runs / "ner" / "elmo" / "seed0" / "record.json"
    before = record_file.read_text()
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(runs)) == 0
    out = capsys.readouterr().out
    assert out.count("reusing") == 2 and "running" not in out
    assert json.loads(record_file.read_text())["train_seconds"] == json.loads(before)["train_seconds"]
    # The console ends with the task's test metrics, from its records.
    values = {r["variant"]: r["value"] for r in _records(runs) if r["task"] == "ner"}
    expected = f"ner smoke: baseline F1 {values['baseline']:.2f}, ELMo F1 {values['elmo']:.2f} (test, 1 seed each)"
    assert out.splitlines()[-1] == expected


@pytest.mark.slow  # smoke trainings of their own, 10 to 35 s: in `make test-all`, out of the fast suite
def test_an_interrupted_run_resumes_with_recover(smoke, capsys):
    runs, _ = smoke
    run_dir = runs / "sst5" / "baseline" / "seed0"
    first = json.loads((run_dir / "record.json").read_text())
    value = first["value"]
    for name in ("model.tar.gz", "record.json", "test_metrics.json"):  # as if killed before archiving
        (run_dir / name).unlink()
    assert list(run_dir.glob("*_state_e*.th"))
    capsys.readouterr()
    assert _main("sst5", "--budget", "smoke", "--runs-dir", str(runs), "--variants", "baseline") == 0
    out = capsys.readouterr().out
    assert "interrupted, resuming (--recover)" in out and "--recover" in out
    resumed = json.loads((run_dir / "record.json").read_text())
    assert resumed["value"] == pytest.approx(value)
    assert resumed["commands"][0].endswith(" --recover")  # the record shows the command as it ran
    # the record counts the first training too, not only the resumed part
    spent = json.loads((run_dir.parent / "seed0.train_seconds.json").read_text())
    assert len(spent) == 2 and spent[0] == first["train_seconds"] and spent[1] > 0
    assert resumed["train_seconds"] == pytest.approx(sum(spent))


def test_the_archive_of_an_interrupted_run_is_not_taken_for_a_finished_run(smoke, tmp_path, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    run_dir = tmp_path / "ner" / "baseline" / "seed0"
    # allennlp archives the best epoch so far when training is interrupted; only a finished run has metrics.json.
    for name in ("metrics.json", "record.json", "test_metrics.json"):
        (run_dir / name).unlink()
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline") == 0
    out = capsys.readouterr().out
    assert "interrupted, resuming (--recover)" in out and "trained already" not in out
    assert (run_dir / "metrics.json").exists()


def test_a_trained_run_is_evaluated_and_a_run_of_an_edited_config_retrained(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    run_dir = tmp_path / "ner" / "elmo" / "seed0"
    asked = ("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "elmo")
    for name in ("record.json", "test_metrics.json"):  # trained and archived, not yet evaluated
        (run_dir / name).unlink()
    capsys.readouterr()
    assert _main(*asked) == 0
    out = capsys.readouterr().out
    assert "trained already, evaluating" in out and " train experiments/" not in out
    trained = json.loads((run_dir / "record.json").read_text())["commands"][0]
    assert " train experiments/ner_elmo.jsonnet " in trained and not trained.endswith(("--recover", " -f"))
    for name in ("record.json", "test_metrics.json"):
        (run_dir / name).unlink()
    _edited_config(monkeypatch, 0.25)  # the config file edited since that run trained
    assert _main(*asked) == 0
    out = capsys.readouterr().out
    assert (
        "trained already" not in out
        and "made with other settings, forced, or interrupted before its first checkpoint: training from scratch" in out
    )


@pytest.mark.slow  # smoke trainings of their own, 10 to 35 s: in `make test-all`, out of the fast suite
def test_the_same_seed_twice_gives_the_same_metrics(smoke, tmp_path):
    runs, _ = smoke
    assert _main("ner", "snli", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "elmo") == 0
    for task in ("ner", "snli"):
        first = json.loads((runs / task / "elmo" / "seed0" / "record.json").read_text())["test_metrics"]["test"]
        again = json.loads((tmp_path / task / "elmo" / "seed0" / "record.json").read_text())["test_metrics"]["test"]
        assert first.keys() == again.keys()
        for key, value in first.items():
            assert again[key] == pytest.approx(value, abs=SAME_SEED_TOLERANCE), (task, key)


@pytest.mark.slow  # smoke trainings of their own, 10 to 35 s: in `make test-all`, out of the fast suite
def test_a_failed_run_is_reported_and_the_others_go_on(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    for task in ("ner", "snli"):
        shutil.copytree(runs / task, tmp_path / task)
    missing = {**TASKS["ner"].configs, "baseline": "experiments/missing.jsonnet"}
    monkeypatch.setitem(TASKS, "ner", dataclasses.replace(TASKS["ner"], configs=missing))
    capsys.readouterr()
    code = _main("ner", "snli", "--budget", "smoke", "--runs-dir", str(tmp_path), "--force")
    out = capsys.readouterr().out
    assert code == 1
    assert "FAILED ner baseline seed0" in out and "4 runs asked, 1 failed" in out
    assert "[4/4] running snli elmo seed0" in out and "about" in out  # progress with an estimate
    assert {(r["task"], r["variant"]) for r in _records(tmp_path)} >= {("ner", "elmo"), ("snli", "elmo")}


def test_a_recorded_run_without_its_directory_is_reused_unless_its_settings_differ(smoke, tmp_path, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "records" / "ner", tmp_path / "records" / "ner")  # the records only, no run directories
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only") == 0
    out = capsys.readouterr().out
    assert out.count("(from its record in") == 2 and "skipped" not in out
    assert not (tmp_path / "ner" / "baseline" / "seed0").exists()
    assert "| NER |" in (tmp_path / "RESULTS.md").read_text()
    # Other settings (one more epoch): not the same run, so nothing is reused.
    two_epochs = ("--overrides", '{"trainer.num_epochs": 2}')
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only", *two_epochs) == 0
    out = capsys.readouterr().out
    assert "from its record" not in out and out.count("skipped") == 2


def test_a_run_made_before_an_edit_to_its_config_is_not_reused(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    asked = ("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only", "--variants", "elmo")
    assert _main(*asked) == 0 and "reusing ner elmo seed0" in capsys.readouterr().out
    record = json.loads((tmp_path / "ner" / "elmo" / "seed0" / "record.json").read_text())
    settings = {key: record[key] for key in ("config", "data", "overrides", "env", "config_sha256")}
    assert same_settings(record, settings)
    # A record without one of the settings (here the config's fingerprint) is not the same run.
    assert not same_settings({key: value for key, value in record.items() if key != "config_sha256"}, settings)
    _edited_config(monkeypatch, 0.0)  # ELMo's dropout edited in the config file since the run
    assert _main(*asked) == 0
    assert "skipped (--reuse-only): ner elmo seed0" in capsys.readouterr().out


def test_a_variant_that_trains_the_same_model_as_another_reuses_its_run(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "records" / "sst5", tmp_path / "records" / "sst5")
    # SST-5's config already has lambda = 0.001, so the Table 2 variant with that lambda is the elmo run.
    asked = ("sst5", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only", "--analyses")
    capsys.readouterr()
    assert _main(*asked, "--variants", "elmo_lambda0.001", "elmo_top_layer") == 0
    out = capsys.readouterr().out
    assert "reusing sst5 elmo_lambda0.001 seed0 (trained as elmo/seed0: the same resolved config and seed)" in out
    assert "skipped (--reuse-only): sst5 elmo_top_layer seed0" in out
    elmo = json.loads((tmp_path / "records" / "sst5" / "elmo" / "seed0.json").read_text())
    twin = json.loads((tmp_path / "records" / "sst5" / "elmo_lambda0.001" / "seed0.json").read_text())
    assert twin["variant"] == "elmo_lambda0.001" and twin["trained_as"] == "elmo/seed0"
    assert twin["value"] == elmo["value"] and twin["commands"] == elmo["commands"]
    assert not (tmp_path / "sst5" / "elmo_lambda0.001").exists()  # nothing trained
    # Another biLM: the elmo run did not train that model, so it is not reused.
    shutil.rmtree(tmp_path / "records" / "sst5" / "elmo_lambda0.001")
    monkeypatch.setattr(configs, "bilm_weights_sha256", lambda: "another biLM")
    assert _main(*asked, "--variants", "elmo_lambda0.001") == 0
    assert "skipped (--reuse-only): sst5 elmo_lambda0.001 seed0" in capsys.readouterr().out


def test_the_report_marks_results_made_with_an_earlier_config(smoke, tmp_path, monkeypatch):
    runs, _ = smoke
    shutil.copytree(runs / "records" / "ner", tmp_path / "records" / "ner")
    asked = ("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--report-only")
    assert _main(*asked) == 0
    assert OUTDATED_NOTE not in (tmp_path / "RESULTS.md").read_text()
    _edited_config(monkeypatch, 0.25)
    assert _main(*asked) == 0
    ner = next(line for line in (tmp_path / "RESULTS.md").read_text().splitlines() if line.startswith("| NER |"))
    baseline, elmo = ner.split(" | ")[5:7]
    assert not baseline.endswith(OUTDATED_MARK) and elmo.endswith(OUTDATED_MARK)
    assert OUTDATED_NOTE in (tmp_path / "RESULTS.md").read_text()


@pytest.mark.slow  # smoke trainings of their own, 10 to 35 s: in `make test-all`, out of the fast suite
def test_a_run_that_another_process_is_training_fails_and_the_others_go_on(smoke, tmp_path, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    lock = tmp_path / "ner" / "elmo" / "seed0.lock"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock.write_text(str(other.pid))
        capsys.readouterr()
        assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--force") == 1
        out = capsys.readouterr().out
        assert f"FAILED ner elmo seed0: process {other.pid} is training this run" in out
        assert "2 runs asked, 1 failed" in out and lock.read_text() == str(other.pid)  # its lock is left alone
        assert not (tmp_path / "ner" / "baseline" / "seed0.lock").exists()  # the other run trained and let go
    finally:
        other.kill()
        other.wait()
    # A lock left by a process that has ended is taken over.
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--force", "--variants", "elmo") == 0
    assert not lock.exists()


@pytest.mark.slow  # smoke trainings of their own, 10 to 35 s: in `make test-all`, out of the fast suite
def test_a_raised_epoch_cap_continues_a_run_that_reached_the_old_one(smoke, tmp_path, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    run_dir = tmp_path / "ner" / "baseline" / "seed0"
    first = json.loads((run_dir / "record.json").read_text())
    assert len(first["validation_curve"]) == 1  # the smoke cap: one epoch, reached
    capsys.readouterr()
    two_epochs = ("--overrides", '{"trainer.num_epochs": 2}')
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", *two_epochs) == 0
    out = capsys.readouterr().out
    assert "trained under a lower epoch cap or patience, continuing from its last checkpoint (--recover)" in out
    extended = json.loads((run_dir / "record.json").read_text())
    assert extended["overrides"]["trainer.num_epochs"] == 2 and extended["epoch_cap_raised_from"] == 1
    assert extended["config_resolved"]["trainer"]["num_epochs"] == 2
    assert extended["commands"][0].endswith(" --recover")
    # The first epoch is the one trained before, not trained again; the second one was added.
    assert len(extended["validation_curve"]) == 2
    assert extended["validation_curve"][0] == pytest.approx(first["validation_curve"][0])
    spent = json.loads((run_dir.parent / "seed0.train_seconds.json").read_text())
    assert len(spent) == 2 and extended["train_seconds"] == pytest.approx(sum(spent))
    # The extended run is now the run of its cap: asked again, it is reused.
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", *two_epochs) == 0
    assert "reusing ner baseline seed0" in capsys.readouterr().out
    # Interrupted once it was continued, it resumes as any run, and its record still says where it began.
    for name in ("metrics.json", "model.tar.gz", "record.json", "test_metrics.json"):
        (run_dir / name).unlink()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", *two_epochs) == 0
    assert "interrupted, resuming (--recover)" in capsys.readouterr().out
    assert json.loads((run_dir / "record.json").read_text())["epoch_cap_raised_from"] == 1


def _under_rule(record: dict, cap: int, patience: Optional[int] = None) -> dict:
    """The record (or saved settings) a run would leave that trained the same epochs under a cap of ``cap``
    and, when given, a patience of ``patience``: with those in its overrides and its config's fingerprint."""
    overrides = {**record["overrides"], "trainer.num_epochs": cap}
    if patience is not None:
        overrides["trainer.patience"] = patience
    config = configs.resolved_config(record["config"], record["data"], overrides, record["env"])
    return {**record, "overrides": overrides, "config_sha256": configs.config_fingerprint(config)}


def _as_stopped_early_under(record: dict, cap: int, patience: Optional[int] = None) -> dict:
    """The record a run would leave that stopped by patience after the same epochs under a cap of ``cap``."""
    assert len(record["validation_curve"]) < cap
    return _under_rule(record, cap, patience)


def _kept_ner_baseline(smoke, tmp_path: Path):
    """The smoke NER baseline's record, a path to keep it at in ``tmp_path``'s records (no run directory)
    and the arguments that ask for that run without training."""
    runs, _ = smoke
    kept = tmp_path / "records" / "ner" / "baseline" / "seed0.json"
    kept.parent.mkdir(parents=True)
    record = json.loads((runs / "records" / "ner" / "baseline" / "seed0.json").read_text())
    asked = ("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", "--reuse-only")
    return record, kept, asked


# What --reuse-only says of the kept NER baseline when the run asked for is not the one it holds.
SKIPPED = "skipped (--reuse-only): ner baseline seed0"


def _asked_again(kept: Path, kept_record: dict, asked: Tuple[str, ...], overrides: dict, capsys) -> str:
    """The harness's output when ``kept`` holds ``kept_record`` and the runs ``asked`` are asked for again
    with ``overrides``."""
    kept.write_text(json.dumps(kept_record))
    capsys.readouterr()
    assert _main(*asked, "--overrides", json.dumps(overrides)) == 0
    return capsys.readouterr().out


def test_a_run_that_stopped_before_its_epoch_cap_is_reused_under_a_raised_one(smoke, tmp_path, capsys):
    record, kept, asked = _kept_ner_baseline(smoke, tmp_path)
    out = _asked_again(kept, _as_stopped_early_under(record, 3), asked, {"trainer.num_epochs": 5}, capsys)
    assert "stopped by patience after 1 epochs under a cap of 3: the same run under a cap of 5" in out
    reused = json.loads(kept.read_text())
    assert reused["overrides"]["trainer.num_epochs"] == 5 and reused["epoch_cap_raised_from"] == 3
    assert reused["value"] == record["value"] and reused["commands"] == record["commands"]
    # Anything else changed with the cap (here the gradient clipping) makes it another run.
    overrides = {"trainer.num_epochs": 5, "trainer.grad_norm": 1.0}
    assert SKIPPED in _asked_again(kept, _as_stopped_early_under(record, 3), asked, overrides, capsys)
    # A raised patience would not have stopped it where the old one did: it has to go on, not be reused.
    overrides = {"trainer.num_epochs": 3, "trainer.patience": 2}
    assert SKIPPED in _asked_again(kept, _as_stopped_early_under(record, 3, patience=1), asked, overrides, capsys)
    # A run that reached its cap (one epoch of one) was still improving as far as anyone knows: without its
    # directory to continue from, it is not reused.
    assert SKIPPED in _asked_again(kept, record, asked, {"trainer.num_epochs": 5}, capsys)


def test_a_run_that_reached_its_epoch_cap_is_reused_under_a_raised_patience(smoke, tmp_path, capsys):
    record, kept, asked = _kept_ner_baseline(smoke, tmp_path)
    stopped_at_its_cap = _under_rule(record, 1, patience=1)  # one epoch of one: the cap stopped it
    out = _asked_again(kept, stopped_at_its_cap, asked, {"trainer.num_epochs": 1, "trainer.patience": 4}, capsys)
    assert "stopped at its cap after 1 epochs under patience 1: the same run under patience 4" in out
    reused = json.loads(kept.read_text())
    assert reused["overrides"]["trainer.patience"] == 4 and reused["patience_raised_from"] == 1
    assert "epoch_cap_raised_from" not in reused and reused["value"] == record["value"]
    # A lower patience is another run: it might have stopped earlier.
    overrides = {"trainer.num_epochs": 1, "trainer.patience": 1}
    assert SKIPPED in _asked_again(kept, _under_rule(record, 1, patience=4), asked, overrides, capsys)


def _ner_baseline_trained_under(smoke, tmp_path: Path, cap: int, patience: int):
    """A copy of the smoke NER baseline's run directory in ``tmp_path`` whose saved settings say it trained
    under ``cap`` and ``patience``: (the run directory, its record, its settings file)."""
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    run_dir = tmp_path / "ner" / "baseline" / "seed0"
    first = json.loads((run_dir / "record.json").read_text())
    settings_file = run_dir.parent / "seed0.settings.json"
    settings_file.write_text(json.dumps(_under_rule(json.loads(settings_file.read_text()), cap, patience=patience)))
    return run_dir, first, settings_file


@pytest.mark.slow  # smoke trainings of their own, 10 to 35 s: in `make test-all`, out of the fast suite
def test_a_raised_patience_continues_a_run_that_the_old_one_stopped(smoke, tmp_path, capsys):
    # As if its one epoch had been stopped by a patience of 1 under a cap of 3 (its saved settings and config).
    run_dir, first, _ = _ner_baseline_trained_under(smoke, tmp_path, 3, 1)
    saved_config = json.loads((run_dir / "config.json").read_text())
    saved_config["trainer"].update(num_epochs=3, patience=1)
    (run_dir / "config.json").write_text(json.dumps(saved_config))
    rule = ("--overrides", '{"trainer.num_epochs": 3, "trainer.patience": 2}')
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", *rule) == 0
    assert "trained under a lower epoch cap or patience, continuing from its last checkpoint" in capsys.readouterr().out
    extended = json.loads((run_dir / "record.json").read_text())
    assert extended["patience_raised_from"] == 1 and "epoch_cap_raised_from" not in extended
    assert extended["config_resolved"]["trainer"]["patience"] == 2
    assert extended["commands"][0].endswith(" --recover")
    curve = extended["validation_curve"]
    assert len(curve) >= 2 and curve[0] == pytest.approx(first["validation_curve"][0])  # not trained again
    # Now the run of its rule: asked again, it is reused.
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", *rule) == 0
    assert "reusing ner baseline seed0" in capsys.readouterr().out


@pytest.mark.slow  # smoke trainings of their own, 10 to 35 s: in `make test-all`, out of the fast suite
def test_a_finished_run_without_its_record_is_evaluated_not_retrained_under_a_rule_that_stops_it_there(
    smoke, tmp_path, capsys
):
    # Trained under a cap of 1 and patience 1 (its one epoch: the cap stopped it), then its evaluation lost.
    run_dir, first, settings_file = _ner_baseline_trained_under(smoke, tmp_path, 1, 1)
    for name in ("record.json", "test_metrics.json"):
        (run_dir / name).unlink()
    archive_written = (run_dir / "model.tar.gz").stat().st_mtime_ns
    capsys.readouterr()
    rule = ("--overrides", '{"trainer.num_epochs": 1, "trainer.patience": 4}')
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", *rule) == 0
    assert "trained already, evaluating" in capsys.readouterr().out
    assert (run_dir / "model.tar.gz").stat().st_mtime_ns == archive_written  # not trained again
    evaluated = json.loads((run_dir / "record.json").read_text())
    assert evaluated["patience_raised_from"] == 1 and "epoch_cap_raised_from" not in evaluated
    assert evaluated["overrides"]["trainer.patience"] == 4
    assert not any(flag in evaluated["commands"][0] for flag in (" --recover", " -f"))
    assert evaluated["value"] == pytest.approx(first["value"])
    # Now the run of its rule: asked again, it is reused.
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "baseline", *rule) == 0
    assert "reusing ner baseline seed0" in capsys.readouterr().out
    # A rule that would not have stopped it there (a raised cap) continues it instead.
    for name in ("record.json", "test_metrics.json"):
        (run_dir / name).unlink()
    settings_file.write_text(json.dumps(_under_rule(json.loads(settings_file.read_text()), 1, patience=1)))
    assert (
        _main(
            "ner",
            "--budget",
            "smoke",
            "--runs-dir",
            str(tmp_path),
            "--variants",
            "baseline",
            "--overrides",
            '{"trainer.num_epochs": 2, "trainer.patience": 1}',
        )
        == 0
    )
    assert "continuing from its last checkpoint" in capsys.readouterr().out


def test_elmo_runs_of_another_biLM_are_not_reused_and_baselines_are(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    record = json.loads((runs / "ner" / "elmo" / "seed0" / "record.json").read_text())
    assert record["bilm_weights_sha256"] == configs.bilm_weights_sha256()
    assert "bilm_weights_sha256" not in json.loads((runs / "ner" / "baseline" / "seed0" / "record.json").read_text())
    # The shipped biLM replaced in place by another one: same path, other content.
    monkeypatch.setattr(configs, "bilm_weights_sha256", lambda: "another biLM")
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only") == 0
    out = capsys.readouterr().out
    assert "reusing ner baseline seed0" in out and "ner elmo seed0" in out.split("reusing ner baseline seed0")[1]
    assert out.count("reusing") == 1


@pytest.mark.slow  # 20 to 50 s: in `make test-all`, out of the fast suite
def test_sample_efficiency_runs_train_on_a_share_and_are_plotted(smoke, tmp_path):
    smoke_runs, _ = smoke
    runs = tmp_path / "runs"  # a copy: the shared smoke runs keep baseline and ELMo only, whatever the test order
    for task in ("srl", "snli"):
        shutil.copytree(smoke_runs / task, runs / task)
        shutil.copytree(smoke_runs / "records" / task, runs / "records" / task)
    assert _main("srl", "snli", "--budget", "smoke", "--runs-dir", str(runs), "--sample-efficiency") == 0
    records = {r["variant"]: r for r in _records(runs) if r["task"] == "srl"}
    assert {"baseline_sample0.5", "elmo_sample0.5"} <= set(records)
    share = records["elmo_sample0.5"]
    assert share["train_fraction"] == 0.5 and share["env"]["ELMO_TASKS_SRL_DATASET"] == "conll2005"
    assert share["overrides"]["train_data_path"] == "fixtures/srl/conll2005_train.txt#sample=0.5"
    assert share["config_resolved"]["train_data_path"].endswith("#sample=0.5")
    assert records["elmo"]["train_fraction"] is None
    assert (runs / "results" / "smoke_sample_efficiency_SRL.png").stat().st_size > 1000
    snli = {r["variant"]: r for r in _records(runs) if r["task"] == "snli"}
    assert snli["baseline_sample0.5"]["config_resolved"]["train_data_path"] == "fixtures/snli/train.jsonl#sample=0.5"
    assert (runs / "results" / "smoke_sample_efficiency_SNLI.png").stat().st_size > 1000
    # The report's tables: SNLI's full runs are its 100% point (same pairs); SRL's are not (CoNLL-2012 there).
    text = (runs / "RESULTS.md").read_text()
    srl, snli_section = text.split("### SRL")[1].split("### ")[0], text.split("### SNLI")[1].split("### ")[0]
    value = f"{snli['elmo_sample0.5']['value']:.2f}"
    assert f"| 50% | {snli['baseline_sample0.5']['value']:.2f} | {value} | 1 / 1 |" in snli_section
    assert f"| 100% | {snli['baseline']['value']:.2f} | {snli['elmo']['value']:.2f} | 1 / 1 |" in snli_section
    assert "| 50% |" in srl and "| 100% |" not in srl
    # Each variant's row says what it trained on: the file and the part of it.
    assert "| baseline_sample0.5 | `train.jsonl#sample=0.5` | 1 |" in snli_section
    assert "| elmo_sample0.5 | `conll2005_train.txt#sample=0.5` | 1 |" in srl


@pytest.mark.slow  # 20 to 50 s: in `make test-all`, out of the fast suite
def test_snli_diagnosis_variants_fine_tune_the_bilm_once_and_train_longer(tmp_path, capsys, monkeypatch):
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.config_defaults import DEFAULTS

    # The shipped biLM, whose folder has the softmax and vocabulary that the fine-tuning continues.
    shipped = Path(resolve_bilm_file(DEFAULTS["ELMO_WEIGHTS"])).parent
    monkeypatch.setenv("ELMO_OPTIONS", str(shipped / "options.json"))
    monkeypatch.setenv("ELMO_WEIGHTS", str(shipped / "weights.hdf5"))
    runs = tmp_path / "runs"
    asked = ("snli", "--budget", "smoke", "--runs-dir", str(runs), "--analyses")
    assert _main(*asked, "--variants", "elmo_finetuned_bilm") == 0
    records = {r["variant"]: r for r in _records(runs)}
    finetuned = records["elmo_finetuned_bilm"]
    export = runs / "snli" / "bilm_finetuned" / "run" / "elmo"
    assert finetuned["env"]["ELMO_WEIGHTS"] == str(export / "weights.hdf5")
    assert finetuned["config_resolved"]["model"]["text_field_embedder"]["token_embedders"]["elmo"]["weight_file"] == (
        str(export / "weights.hdf5")
    )
    # Its first command fine-tuned the shipped biLM (its softmax and vocabulary kept) on the training pairs' text.
    assert " train experiments/bilm_finetune.jsonnet " in finetuned["commands"][0]
    shown = shipped.relative_to(ROOT)  # recorded commands name files under the repository relative to it
    assert f'"model.pretrained_file": "{shown}"' in finetuned["commands"][0]
    assert f'"directory": "{shown / "vocabulary"}"' in finetuned["commands"][0]
    assert finetuned["bilm_finetuning"]["text"] == "fixtures/snli/train.jsonl"
    text = (runs / "snli" / "bilm_finetuned" / "text.txt").read_text().splitlines()
    assert text[0] == "A person on a horse jumps over a broken down airplane." and len(text) > 2990
    # The fine-tuned weights differ from the start biLM's.
    assert configs.bilm_weights_sha256() == finetuned["bilm_weights_sha256"]
    monkeypatch.setenv("ELMO_WEIGHTS", str(export / "weights.hdf5"))
    assert configs.bilm_weights_sha256() != finetuned["bilm_weights_sha256"]
    monkeypatch.setenv("ELMO_WEIGHTS", str(shipped / "weights.hdf5"))
    # Every seed of the variant reads the same fine-tuned biLM: it is made once per recipe.
    plan = Plan(parse_args([*asked])[0])
    capsys.readouterr()
    recipe, start_sha = finetuned["bilm_finetuning"], finetuned["bilm_weights_sha256"]
    again = prepare_finetuned_bilm(plan, "snli", recipe, start_sha)
    assert again == finetuned["commands"][0] and "fine-tuned biLM made already" in capsys.readouterr().out
    # Longer training: twice the budget's epochs.
    longer = plan.settings("snli", plan.variants("snli")["elmo_longer"], None)
    assert longer["overrides"]["trainer.num_epochs"] == 2
    mini = Plan(parse_args(["snli", "--budget", "mini", "--analyses"])[0])
    longer_mini = mini.settings("snli", mini.variants("snli")["elmo_longer"], None)
    assert longer_mini["overrides"]["trainer.num_epochs"] == 40  # twice the budget's cap
    report_text = (
        (runs / "RESULTS.md").read_text().split("### ELMo diagnosis variants (SNLI, NER)")[1].split("## Plots")[0]
    )
    header = next(line for line in report_text.splitlines() if line.startswith("| Task |"))
    row = next(line for line in report_text.splitlines() if line.startswith("| SNLI (ELMo at "))
    assert row.count("|") == header.count("|")
    assert "biLM fine-tuned on the training text" in report_text
    # What the mini runs showed is not a conclusion of these smoke runs.
    assert task_notes("snli").diagnosis_notes["mini"] not in report_text


def test_every_fine_tuned_bilm_variant_has_its_recipe_and_text_writer(tmp_path):
    for task, spec in TASKS.items():
        if not any(analysis.bilm_finetuning for analysis in spec.analyses.values()):
            continue
        assert set(spec.bilm_finetuning) == set(spec.budgets), task
        # The writer turns the smoke budget's training file into one sentence a line.
        train = configs.data_paths(task, {"ELMO_TASKS_DATA": "fixtures", "ELMO_TASKS_SEED": "0"})["train"]
        write_lm_text = importlib.import_module(spec.lm_text).write_lm_text
        counts = write_lm_text(train, tmp_path / task / "text.txt")
        lines = (tmp_path / task / "text.txt").read_text().splitlines()
        assert counts["sentences"] == len(lines) > 10 and all(line.strip() for line in lines), task
