"""scripts/reproduce.py: every task at the smoke budget, run records, reuse, resume, failures,
the same seed twice, and the report generated from the records."""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

TASK_NAMES = ["squad", "snli", "srl", "coref", "ner", "sst5"]
# Two runs of the same seed on CPU: allowed difference of any test metric (fractions).
SAME_SEED_TOLERANCE = 1e-6


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reproduce = _module("reproduce")
report = _module("reproduction_report")


def _main(*args: str) -> int:
    return reproduce.main([*args, "--in-process"])


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """``reproduce.py all --budget smoke`` once for the module: (runs dir, its stdout, exit code)."""
    runs = tmp_path_factory.mktemp("smoke")
    code = _main("all", "--budget", "smoke", "--runs-dir", str(runs))
    return runs, code


def _records(runs: Path):
    return report.load_records(runs / "records")


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
    for spec in reproduce.TASKS.values():
        for note in [*spec["notes"].values(), *spec.get("diagnosis_notes", {}).values()]:
            assert note not in text
    assert text.count(report.FIXTURES_NOTE) == len(TASK_NAMES)
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


def test_the_same_seed_twice_gives_the_same_metrics(smoke, tmp_path):
    runs, _ = smoke
    assert _main("ner", "snli", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "elmo") == 0
    for task in ("ner", "snli"):
        first = json.loads((runs / task / "elmo" / "seed0" / "record.json").read_text())["test_metrics"]["test"]
        again = json.loads((tmp_path / task / "elmo" / "seed0" / "record.json").read_text())["test_metrics"]["test"]
        assert first.keys() == again.keys()
        for key, value in first.items():
            assert again[key] == pytest.approx(value, abs=SAME_SEED_TOLERANCE), (task, key)


def test_a_failed_run_is_reported_and_the_others_go_on(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    for task in ("ner", "snli"):
        shutil.copytree(runs / task, tmp_path / task)
    monkeypatch.setitem(reproduce.TASKS["ner"]["configs"], "baseline", "experiments/missing.jsonnet")
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
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only", "--epochs", "2") == 0
    out = capsys.readouterr().out
    assert "from its record" not in out and out.count("skipped") == 2


def test_a_run_made_before_an_edit_to_its_config_is_not_reused(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    asked = ("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only", "--variants", "elmo")
    assert _main(*asked) == 0 and "reusing ner elmo seed0" in capsys.readouterr().out
    record = json.loads((tmp_path / "ner" / "elmo" / "seed0" / "record.json").read_text())
    assert record["config_sha256"] == reproduce.config_fingerprint(record["config_resolved"])
    # A record made before the fingerprint existed is checked against the config it recorded.
    legacy = {key: value for key, value in record.items() if key != "config_sha256"}
    settings = {key: record[key] for key in ("config", "data", "overrides", "env", "config_sha256")}
    assert reproduce._same_settings(legacy, settings)
    changed = json.loads(json.dumps(legacy))
    changed["config_resolved"]["model"]["dropout"] = 0.25
    assert not reproduce._same_settings(changed, settings)
    # As if the config file had been edited since the run (ELMo's dropout): the run is not the same run any more.
    original = reproduce.resolved_config

    def edited(*args, **kwargs):
        config = original(*args, **kwargs)
        config["model"]["text_field_embedder"]["token_embedders"]["elmo"]["dropout"] = 0.0
        return config

    monkeypatch.setattr(reproduce, "resolved_config", edited)
    assert _main(*asked) == 0
    assert "skipped (--reuse-only): ner elmo seed0" in capsys.readouterr().out


def test_a_trained_run_from_before_the_fingerprint_is_checked_against_the_config_it_trained(
    smoke, tmp_path, monkeypatch, capsys
):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    run_dir = tmp_path / "ner" / "elmo" / "seed0"
    for name in ("record.json", "test_metrics.json"):  # trained and archived, not yet evaluated
        (run_dir / name).unlink()
    settings_file = tmp_path / "ner" / "elmo" / "seed0.settings.json"
    legacy = {key: value for key, value in json.loads(settings_file.read_text()).items() if key != "config_sha256"}
    asked = ("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--variants", "elmo")
    settings_file.write_text(json.dumps(legacy))
    capsys.readouterr()
    assert _main(*asked) == 0  # its config.json is what the config resolves to today: evaluated, not trained
    assert "trained already, evaluating" in capsys.readouterr().out
    for name in ("record.json", "test_metrics.json"):
        (run_dir / name).unlink()
    settings_file.write_text(json.dumps(legacy))
    original = reproduce.resolved_config

    def edited(*args, **kwargs):  # the config file edited since that run trained
        config = original(*args, **kwargs)
        config["model"]["text_field_embedder"]["token_embedders"]["elmo"]["dropout"] = 0.25
        return config

    monkeypatch.setattr(reproduce, "resolved_config", edited)
    assert _main(*asked) == 0
    out = capsys.readouterr().out
    assert "trained already" not in out and "made with other settings or forced, training from scratch" in out


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
    monkeypatch.setattr(reproduce, "bilm_weights_sha256", lambda: "another biLM")
    assert _main(*asked, "--variants", "elmo_lambda0.001") == 0
    assert "skipped (--reuse-only): sst5 elmo_lambda0.001 seed0" in capsys.readouterr().out


def test_the_report_marks_results_made_with_an_earlier_config(smoke, tmp_path, monkeypatch):
    runs, _ = smoke
    shutil.copytree(runs / "records" / "ner", tmp_path / "records" / "ner")
    asked = ("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--report-only")
    assert _main(*asked) == 0
    assert report.OUTDATED_NOTE not in (tmp_path / "RESULTS.md").read_text()
    original = reproduce.resolved_config

    def edited(*args, **kwargs):  # as if ELMo's dropout had been edited in the config files since the runs
        config = original(*args, **kwargs)
        embedders = config["model"]["text_field_embedder"]["token_embedders"]
        if "elmo" in embedders:
            embedders["elmo"]["dropout"] = 0.25
        return config

    monkeypatch.setattr(reproduce, "resolved_config", edited)
    assert _main(*asked) == 0
    ner = next(line for line in (tmp_path / "RESULTS.md").read_text().splitlines() if line.startswith("| NER |"))
    baseline, elmo = ner.split(" | ")[5:7]
    assert not baseline.endswith(report.OUTDATED_MARK) and elmo.endswith(report.OUTDATED_MARK)
    assert report.OUTDATED_NOTE in (tmp_path / "RESULTS.md").read_text()


def test_a_run_that_another_process_is_training_fails_and_the_others_go_on(smoke, tmp_path, capsys):
    import subprocess

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


def test_the_config_fingerprint_ignores_the_seeds_only():
    config = {"random_seed": 1, "numpy_seed": 2, "pytorch_seed": 3, "trainer": {"num_epochs": 4}}
    reseeded = {**config, "random_seed": 11, "numpy_seed": 12, "pytorch_seed": 13}
    assert reproduce.config_fingerprint(config) == reproduce.config_fingerprint(reseeded)
    longer = {**config, "trainer": {"num_epochs": 5}}
    assert reproduce.config_fingerprint(config) != reproduce.config_fingerprint(longer)


def test_the_bilm_fingerprint_follows_the_weights_file_content(tmp_path, monkeypatch):
    weights = tmp_path / "weights.hdf5"
    weights.write_bytes(b"first biLM")
    monkeypatch.setenv("ELMO_WEIGHTS", str(weights))
    first = reproduce.bilm_weights_sha256()
    assert first == reproduce.bilm_weights_sha256() and len(first) == 16
    weights.write_bytes(b"second biLM, same path")
    assert reproduce.bilm_weights_sha256() != first
    monkeypatch.setenv("ELMO_WEIGHTS", str(tmp_path / "missing.hdf5"))
    with pytest.raises(reproduce.RunFailed, match="missing.hdf5"):
        reproduce.bilm_weights_sha256()


def test_elmo_runs_of_another_biLM_are_not_reused_and_baselines_are(smoke, tmp_path, monkeypatch, capsys):
    runs, _ = smoke
    shutil.copytree(runs / "ner", tmp_path / "ner")
    record = json.loads((runs / "ner" / "elmo" / "seed0" / "record.json").read_text())
    assert record["bilm_weights_sha256"] == reproduce.bilm_weights_sha256()
    assert "bilm_weights_sha256" not in json.loads((runs / "ner" / "baseline" / "seed0" / "record.json").read_text())
    # The shipped biLM replaced in place by another one: same path, other content.
    monkeypatch.setattr(reproduce, "bilm_weights_sha256", lambda: "another biLM")
    capsys.readouterr()
    assert _main("ner", "--budget", "smoke", "--runs-dir", str(tmp_path), "--reuse-only") == 0
    out = capsys.readouterr().out
    assert "reusing ner baseline seed0" in out and "ner elmo seed0" in out.split("reusing ner baseline seed0")[1]
    assert out.count("reusing") == 1


def test_runs_of_the_first_reproduce_py_are_reused_and_completed(tmp_path):
    run_dir = tmp_path / "snli" / "elmo" / "seed1"
    run_dir.mkdir(parents=True)
    old = {"variant": "elmo", "data": "full", "epochs": None, "overrides": {"trainer.num_epochs": 8}}
    (run_dir / "reproduce.json").write_text(json.dumps(old))
    settings = {"config": "experiments/snli_elmo.jsonnet", "data": "full", "overrides": {"trainer.num_epochs": 8}}
    settings["env"] = {}
    assert reproduce.completed(run_dir, settings) is None  # no test metrics yet: not finished
    (run_dir / "test_metrics.json").write_text("{}")
    assert reproduce.completed(run_dir, settings) == old
    assert reproduce.completed(run_dir, {**settings, "overrides": {"trainer.num_epochs": 9}}) is None
    assert reproduce.completed(run_dir, {**settings, "data": "fixtures"}) is None


def test_overrides_must_be_a_json_object():
    assert reproduce._json_object('{"trainer.num_epochs": 2}') == {"trainer.num_epochs": 2}
    for bad in ("[1, 2]", "{not json"):
        with pytest.raises(Exception, match="--overrides"):
            reproduce._json_object(bad)


def _record(task: str, variant: str, k: int, value: float, best: float) -> dict:
    return {"task": task, "variant": variant, "seed_index": k, "value": value, "best_validation": best}


def test_table_1_means_stds_and_error_reductions_by_hand():
    records = [
        _record("ner", "baseline", 0, 80.0, 81.0),
        _record("ner", "baseline", 1, 82.0, 83.0),
        _record("ner", "elmo", 0, 85.0, 86.0),
        _record("ner", "elmo", 1, 87.0, 88.0),
    ]
    row = next(line for line in report.table_1(records, "mini") if line.startswith("| NER |"))
    # baseline 81 ± 1.41, ELMo 86 ± 1.41; error reduction (86 - 81) / (100 - 81) = 26.3%;
    # the paper's (92.22 - 90.15) / (100 - 90.15) = 21.0%.
    assert row.startswith("| NER | F1 | 90.15 | 92.22 | 21.0% | 81.00 ± 1.41 | 86.00 ± 1.41 | 26.3% | 2 / 2 |")
    squad = next(line for line in report.table_1(records, "mini") if line.startswith("| SQuAD |"))
    assert "not run yet" in squad and "24.9%" in squad  # (85.8 - 81.1) / 18.9


def test_a_report_shows_the_notes_of_its_own_budget_only_where_its_records_hold_those_runs():
    records = [
        {**_record("ner", "baseline", 0, 80.0, 81.0), "data": "full"},
        {**_record("ner", "elmo", 0, 85.0, 86.0), "data": "full"},
    ]
    mini_note = reproduce.TASKS["ner"]["notes"]["mini"]
    assert report.task_section("ner", records, "records", "mini")[2] == mini_note
    assert mini_note not in report.task_section("ner", records, "records", "paper")
    fixtures = [{**record, "data": "fixtures"} for record in records]
    assert report.task_section("ner", fixtures, "records", "smoke")[2] == report.FIXTURES_NOTE
    # The diagnosis notes: the budget's own, and only with diagnosis runs among the records.
    assert report.diagnosis_notes(records, "mini") == []
    assert report.diagnosis_heading(records, "mini") == "ELMo diagnosis variants (SNLI, NER)"
    diagnosed = records + [{**_record("ner", "elmo_layer_norm", 0, 84.0, 85.0), "data": "full"}]
    assert report.diagnosis_notes(diagnosed, "mini") == [
        f"- NER: {reproduce.TASKS['ner']['diagnosis_notes']['mini']}",
        "",
    ]
    assert report.diagnosis_heading(diagnosed, "mini") == "Why ELMo hurt (SNLI, NER): what was tried"
    assert report.diagnosis_notes(diagnosed, "smoke") == []
    # Without runs of a table's variants, the command to make them is the report's own budget's.
    assert report.analysis_table(records, "layers", {}, "smoke") == [
        "No runs of these variants yet (`scripts/reproduce.py TASK --budget smoke --analyses`)."
    ]


def test_the_console_metrics_line_gives_table_1s_numbers():
    records = [
        _record("ner", "baseline", 0, 80.0, 81.0),
        _record("ner", "baseline", 1, 82.0, 83.0),
        _record("ner", "elmo", 0, 85.0, 86.0),
    ]
    # baseline 81 ± 1.41 (two seeds), ELMo 85 (one seed)
    assert report.metrics_line(records, "ner", "mini") == (
        "ner mini: baseline F1 81.00 ± 1.41, ELMo F1 85.00 (test, seeds 2 / 1)"
    )
    assert report.metrics_line(records[2:], "ner", "smoke") == (
        "ner smoke: baseline not run yet, ELMo F1 85.00 (test, seeds 0 / 1)"
    )
    assert report.metrics_line([], "sst5", None) == (
        "sst5 custom: baseline not run yet, ELMo not run yet (test, 0 seeds each)"
    )


def test_analysis_tables_use_best_validation_of_the_analysis_variants():
    records = [
        _record("sst5", "baseline", 0, 30.0, 31.0),
        _record("sst5", "elmo", 0, 35.0, 36.0),
        _record("sst5", "elmo_top_layer", 0, 33.0, 34.0),
        _record("sst5", "elmo_top_layer", 1, 33.0, 35.0),
        _record("sst5", "elmo_input_only", 0, 32.0, 32.5),
    ]
    layers = report.analysis_table(records, "layers", reproduce.reproduction_report.PAPER_LAYER_TABLE)
    assert layers[0].startswith("| Task | baseline | ELMo as configured") and "top layer only" in layers[0]
    assert layers[2] == "| SST-5 (ELMo at input and output, lambda 0.001) | 31.00 | 36.00 | 34.50 ± 0.71 |"
    placement = report.analysis_table(records, "placement", reproduce.reproduction_report.PAPER_PLACEMENT_TABLE)
    assert placement[2] == "| SST-5 (ELMo at input and output, lambda 0.001) | 31.00 | 36.00 | 32.50 |"
    # Tasks that put ELMo in different places share the columns (one "ELMo as configured" column).
    records += [_record("ner", "baseline", 0, 70.0, 71.0), _record("ner", "elmo_top_layer", 0, 72.0, 73.0)]
    layers = report.analysis_table(records, "layers", {})
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
    lines = report.task_section("coref", records, "records")
    header = next(i for i, line in enumerate(lines) if "| Best epoch |" in line)
    baseline, elmo = lines[header + 2 : header + 4]
    assert "| 3/3, 2/3 |" in baseline and "| 2/2 |" in elmo
    note = next(line for line in lines if line.startswith("Best epoch:"))
    assert note.endswith("Runs still improving at their last epoch: baseline 1 of 2, elmo 1 of 2.")
    records = [run("baseline", 0, [10.0, 30.0, 20.0])]
    note = next(line for line in report.task_section("coref", records, "records") if line.startswith("Best epoch:"))
    assert "Runs still improving" not in note


def test_table_1_marks_results_most_of_whose_runs_were_still_improving():
    def run(variant: str, k: int, best_epoch: int) -> dict:
        return {**_record("ner", variant, k, 80.0 + k, 81.0), "best_epoch": best_epoch, "validation_curve": [1.0] * 4}

    # Baseline: 2 of 3 runs best at their last epoch (3 of 0..3); ELMo: 1 of 3.
    records = [run("baseline", 0, 3), run("baseline", 1, 3), run("baseline", 2, 1)]
    records += [run("elmo", 0, 3), run("elmo", 1, 2), run("elmo", 2, 0)]
    lines = report.table_1(records, "mini")
    row = next(line for line in lines if line.startswith("| NER |"))
    assert "| 81.00 ± 1.00 ‡ | 81.00 ± 1.00 | " in row
    assert report.IMPROVING_NOTE in lines
    records = [run("baseline", 0, 2), run("elmo", 0, 2)]
    assert report.IMPROVING_NOTE not in report.table_1(records, "mini")


def test_other_folds_are_runs_of_their_own_and_a_cross_validation_table():
    assert reproduce.run_name("squad", "1/4", 0) == "seed0"  # the default fold keeps the plain name
    assert reproduce.run_name("squad", "3/4", 2) == "fold3of4-seed2"
    assert reproduce.run_name("ner", None, 1) == "seed1"
    records = [
        {**_record("squad", "baseline", 0, 10.0, 11.0), "split": "1/4"},
        {**_record("squad", "baseline", 1, 12.0, 11.0), "split": "1/4"},
        {**_record("squad", "baseline", 0, 20.0, 11.0), "split": "2/4"},
        {**_record("squad", "elmo", 0, 30.0, 31.0), "split": "1/4"},
    ]
    table = report.cross_validation("squad", records)
    assert "| baseline | 11.00 (2) | 20.00 (1) | – | – | 2 of 4 folds run |" in table
    assert "| elmo | 30.00 (1) | – | – | – | 1 of 4 folds run |" in table
    more = [{**_record("squad", "baseline", 0, v, 0.0), "split": s} for s, v in (("3/4", 30.0), ("4/4", 40.0))]
    complete = report.cross_validation("squad", records + more)
    assert "| baseline | 11.00 (2) | 20.00 (1) | 30.00 (1) | 40.00 (1) | 25.25 |" in complete
    # Table 1 takes the default fold only until the cross-validation is complete: baseline
    # 11 ± 1.41 from the two fold-1 seeds.
    row = next(line for line in report.table_1(records, "mini") if line.startswith("| SQuAD |"))
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
    row = next(line for line in report.table_1(records, "mini") if line.startswith("| SQuAD |"))
    assert "| 26.00 ± 1.41 | 47.00 ± 2.83 | 28.4% | 2 / 2 |" in row and "mean over all 4 test folds" in row
    table = report.cross_validation("squad", records)
    assert "| elmo | 32.00 (2) | 42.00 (2) | 52.00 (2) | 62.00 (2) | 47.00 |" in table  # F1
    assert "| elmo | 27.00 (2) | 37.00 (2) | 47.00 (2) | 57.00 (2) | 42.00 |" in table  # EM
    # One ELMo seed missing on one fold: both variants back to the default fold (10, 12 and 30, 34).
    partial = [r for r in records if not (r["variant"] == "elmo" and r["seed_index"] == 1 and r["split"] == "3/4")]
    row = next(line for line in report.table_1(partial, "mini") if line.startswith("| SQuAD |"))
    assert "| 11.00 ± 1.41 | 32.00 ± 2.83 |" in row and "mean over all" not in row


# Optional constructor arguments an override may add (every other overridden key must already exist).
ADDED_KEYS = {"fixed_layer_weights", "batches_per_epoch"}


@pytest.mark.parametrize("task", TASK_NAMES)
def test_every_budget_and_analysis_override_names_a_key_of_the_config(task):
    from tests.conftest import experiment_config

    spec = reproduce.TASKS[task]
    for budget_name, budget in spec["budgets"].items():
        for variant_name, variant in reproduce.variants(task, analyses=True).items():
            experiment = Path(variant["config"]).stem
            config = experiment_config(experiment, budget["data"], **budget.get("env", {}))
            for dotted in {**budget["overrides"], **variant.get("overrides", {})}:
                *parents, leaf = dotted.split(".")
                node = config
                for part in parents:
                    assert part in node, (budget_name, variant_name, dotted)
                    node = node[part]
                assert leaf in node or leaf in ADDED_KEYS, (budget_name, variant_name, dotted)


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


def test_small_sample_shares_get_their_budgets_extra_epochs():
    args, _ = reproduce.parse_args(["srl", "snli", "--budget", "mini", "--sample-efficiency"])
    plan = reproduce.Plan(args)
    srl, snli = plan.variants("srl"), plan.variants("snli")
    assert plan.settings("srl", srl["baseline_sample0.01"], None)["overrides"]["trainer.num_epochs"] == 30
    assert plan.settings("srl", srl["elmo_sample0.1"], None)["overrides"]["trainer.num_epochs"] == 8
    assert plan.settings("srl", srl["elmo"], None)["overrides"]["trainer.num_epochs"] == 10  # the budget's own
    settings = plan.settings("snli", snli["elmo_sample0.1"], None)
    assert settings["overrides"]["trainer.num_epochs"] == 40 and settings["train_share"] == 0.1
    assert settings["overrides"]["train_data_path"].endswith("snli_1.0_dev.jsonl.gz#train#sample=0.1")


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
    assert reproduce.bilm_weights_sha256() == finetuned["bilm_weights_sha256"]
    monkeypatch.setenv("ELMO_WEIGHTS", str(export / "weights.hdf5"))
    assert reproduce.bilm_weights_sha256() != finetuned["bilm_weights_sha256"]
    monkeypatch.setenv("ELMO_WEIGHTS", str(shipped / "weights.hdf5"))
    # Every seed of the variant reads the same fine-tuned biLM: it is made once per recipe.
    plan = reproduce.Plan(reproduce.parse_args([*asked])[0])
    capsys.readouterr()
    recipe, start_sha = finetuned["bilm_finetuning"], finetuned["bilm_weights_sha256"]
    again = reproduce.prepare_finetuned_bilm(plan, "snli", recipe, start_sha)
    assert again == finetuned["commands"][0] and "fine-tuned biLM made already" in capsys.readouterr().out
    # Longer training: twice the budget's epochs.
    longer = plan.settings("snli", plan.variants("snli")["elmo_longer"], None)
    assert longer["overrides"]["trainer.num_epochs"] == 2
    mini = reproduce.Plan(reproduce.parse_args(["snli", "--budget", "mini", "--analyses"])[0])
    assert mini.settings("snli", mini.variants("snli")["elmo_longer"], None)["overrides"]["trainer.num_epochs"] == 16
    report_text = (
        (runs / "RESULTS.md").read_text().split("### ELMo diagnosis variants (SNLI, NER)")[1].split("## Plots")[0]
    )
    header = next(line for line in report_text.splitlines() if line.startswith("| Task |"))
    row = next(line for line in report_text.splitlines() if line.startswith("| SNLI (ELMo at "))
    assert row.count("|") == header.count("|")
    assert "biLM fine-tuned on the training text" in report_text
    # What the mini runs showed is not a conclusion of these smoke runs.
    assert reproduce.TASKS["snli"]["diagnosis_notes"]["mini"] not in report_text


def test_every_fine_tuned_bilm_variant_has_its_recipe_and_text_writer(tmp_path):
    for task, spec in reproduce.TASKS.items():
        if not any(analysis.get("bilm_finetuning") for analysis in spec["analyses"].values()):
            continue
        assert set(spec["bilm_finetuning"]) == set(spec["budgets"]), task
        # The writer turns the smoke budget's training file into one sentence a line.
        train = reproduce.data_paths(task, {"ELMO_TASKS_DATA": "fixtures", "ELMO_TASKS_SEED": "0"})["train"]
        write_lm_text = importlib.import_module(spec["lm_text"]).write_lm_text
        counts = write_lm_text(train, tmp_path / task / "text.txt")
        lines = (tmp_path / task / "text.txt").read_text().splitlines()
        assert counts["sentences"] == len(lines) > 10 and all(line.strip() for line in lines), task


def test_analysis_seeds_limits_only_the_analysis_variants():
    args, tasks = reproduce.parse_args(["ner", "--budget", "mini", "--analyses", "--analysis-seeds", "1"])
    runs = reproduce.planned_runs(reproduce.Plan(args), tasks)
    analyses = set(reproduce.TASKS["ner"]["analyses"])
    assert analyses and sorted(k for _, name, k, _ in runs if name == "elmo") == [0, 1, 2]
    assert sorted(name for _, name, k, _ in runs if name in analyses) == sorted(analyses)
    assert all(k == 0 for _, name, k, _ in runs if name in analyses)
    args, tasks = reproduce.parse_args(["ner", "--budget", "mini", "--analyses"])
    assert len(reproduce.planned_runs(reproduce.Plan(args), tasks)) == 3 * (2 + len(analyses))


def test_table_1_names_the_biLMs_of_the_elmo_runs():
    records = [
        _record("ner", "baseline", 0, 80.0, 81.0),
        {**_record("ner", "elmo", 0, 85.0, 86.0), "bilm_weights_sha256": "e309e129aa32eec2"},
        {**_record("ner", "elmo", 1, 87.0, 88.0), "bilm_weights_sha256": "0123456789abcdef"},
    ]
    lines = report.table_1(records, "mini")
    row = next(line for line in lines if line.startswith("| NER |"))
    assert "| 1 / 2 | `0123456789abcdef`, `e309e129aa32eec2` |" in row  # a mix is shown, not hidden
    assert "`e309e129aa32eec2`: the stage-2 shipped biLM" in lines[-1] and "0123456789abcdef`:" not in lines[-1]
