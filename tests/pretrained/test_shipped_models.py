"""Shipped task models (elmo_tasks/pretrained/): made from run records by the harness's ``--ship``, loaded by
name (``elmo_tasks:pretrained/<name>``), listed, served by the demo.

A real tiny NER model is trained once on the bundled fixtures with the shipped biLM (a few seconds:
one epoch, widths of 8) into a runs folder as the harness lays it out, beside two records: seed1's,
whose run is there, with the better validation score, and seed0's, with the better test score and no
run. Shipping it into a temporary catalogue (``ELMO_TASKS_PRETRAINED_ROOT``, for tests) chooses seed1,
by validation; choosing by test would fail on seed0's missing run.
"""

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, Dict, List
from unittest import mock

import pytest
import torch
from allennlp.models.archival import Archive, load_archive
from allennlp.predictors import Predictor

from elmo_tasks.bilm import load_bilm
from elmo_tasks.bilm.archived import ARCHIVE_FOLDER
from elmo_tasks.bilm.references import PACKAGE_ROOT
from elmo_tasks.commands import pretrained_models
from elmo_tasks.demo.loaded_models import check_archives, load_models
from elmo_tasks.demo.serve_command import _shipped_archives
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder
from elmo_tasks.pretrained import SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE
from elmo_tasks.pretrained.catalogue import (
    ARCHIVE_FILE,
    CARD_FILE,
    RECORD_FILE,
    ROOT_VARIABLE,
    SHIPPED_MODELS_BUDGET_BYTES,
    PretrainedModelError,
    archive_path,
    shipped_models,
)
from elmo_tasks.pretrained.portable import PortableArchiveError, portable_config, write_portable_archive
from elmo_tasks.reproduction import shipping
from elmo_tasks.reproduction.cli import main as reproduce
from elmo_tasks.reproduction.shipping import (
    RecordFile,
    ShipError,
    best_by_validation,
    ship_task,
    shippable_records,
    shipped_bilm_sha256,
)
from tests.conftest import BILM_TF, OPTIONS_FILE, ROOT, WEIGHT_FILE, run_allennlp

ELMO = "model.text_field_embedder.token_embedders.elmo"
TINY_NER = {
    "model.encoder.hidden_sizes": [8, 8],
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": 8,
    "trainer.num_epochs": 1,
    f"{ELMO}.options_file": SMALL_OPTIONS_REFERENCE,
    f"{ELMO}.weight_file": SMALL_WEIGHT_REFERENCE,
}
SENTENCES = [{"sentence": "Marta Velkin visited Port Elby on Monday ."}, {"sentence": "Shares of Pellon Group fell ."}]
BASE_SEED = 13370


def _record(run_name: str, seed_index: int, validation: float, test: float, config: Dict[str, Any]) -> Dict[str, Any]:
    """A run record as the harness writes it (elmo_tasks/reproduction/records.py), for the smoke budget."""
    return {
        "commands": [f"OMP_NUM_THREADS=1 .venv/bin/allennlp train experiments/ner_elmo.jsonnet -s runs/{run_name}"],
        "train_seconds": 5.0,
        "git_commit": "0123abc",
        "git_dirty": False,
        "record_version": 2,
        "task": "ner",
        "variant": "elmo",
        "seed_index": seed_index,
        "seed": BASE_SEED + seed_index,
        "split": None,
        "run_name": run_name,
        "config": "experiments/ner_elmo.jsonnet",
        "data": "fixtures",
        "overrides": {},
        "env": {},
        "bilm_weights_sha256": shipped_bilm_sha256(),
        "metric": "f1-measure-overall",
        "value": test,
        "test_metrics": {"test": {"f1-measure-overall": test / 100}},
        "best_validation": validation,
        "best_epoch": 0,
        "validation_curve": [validation],
        "layer_weights": {},
        "config_resolved": config,
        "budget": "smoke",
    }


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Dict[str, Any]:
    """The tiny run, its records, and the model shipped from them into a temporary catalogue."""
    base = tmp_path_factory.mktemp("shipping")
    runs, records, catalogue = base / "runs", base / "records", base / "catalogue"
    run = runs / "ner" / "elmo" / "seed1"
    with mock.patch.object(tarfile, "open", _fast_gzip):  # the biLM's 28 MB make model.tar.gz slow at level 9
        run_allennlp("train", "experiments/ner_elmo.jsonnet", "-s", str(run), "-o", json.dumps(TINY_NER))
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    (records / "ner" / "elmo").mkdir(parents=True)
    for name, index, validation, test in (("seed0", 0, 40.0, 90.0), ("seed1", 1, 60.0, 10.0)):
        record = _record(name, index, validation, test, config)
        (records / "ner" / "elmo" / f"{name}.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    said: List[str] = []
    model = ship_task("ner", "smoke", runs, records, root=catalogue, say=said.append)
    return {"original": run / "model.tar.gz", "model": model, "catalogue": catalogue, "said": said, "base": base}


_real_tar_open = tarfile.open


def _fast_gzip(name: Any = None, mode: str = "r", *args: Any, **kwargs: Any) -> tarfile.TarFile:
    """``tarfile.open``, writing gzip at level 1 (AllenNLP's archive_model writes at the default, 9)."""
    if mode == "w:gz":
        kwargs.setdefault("compresslevel", 1)
    return _real_tar_open(name, mode, *args, **kwargs)


@pytest.fixture(scope="module")
def original(shipped) -> Archive:
    """The tiny run's own archive, loaded once."""
    return load_archive(str(shipped["original"]))


def _members(archive: Path) -> List[str]:
    with tarfile.open(archive) as tar:
        return tar.getnames()


def _weights(archive: Path, tmp_path: Path) -> Dict[str, torch.Tensor]:
    with tarfile.open(archive) as tar:
        tar.extract("weights.th", tmp_path, filter="data")
    return torch.load(tmp_path / "weights.th", weights_only=True)


def _tags(archive: Archive) -> List[List[str]]:
    predictor = Predictor.from_archive(archive, "ner")
    return [output["tags"] for output in predictor.predict_batch_json(SENTENCES)]


def test_the_portable_archive_names_the_shipped_bilm_and_carries_no_copy_of_it(shipped, tmp_path):
    portable, original = shipped["model"].archive, shipped["original"]
    assert any(name.startswith(ARCHIVE_FOLDER) for name in _members(original))
    assert not any(name.startswith(ARCHIVE_FOLDER) for name in _members(portable))
    weights = _weights(portable, tmp_path)
    assert weights and not any(".bilm." in key for key in weights)
    assert any(".bilm." in key for key in _weights(original, tmp_path / "original"))
    with tarfile.open(portable) as tar:
        embedder = json.load(tar.extractfile("config.json"))["model"]["text_field_embedder"]["token_embedders"]["elmo"]
    assert (embedder["options_file"], embedder["weight_file"]) == (SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE)
    assert portable.stat().st_size * 20 < original.stat().st_size  # the biLM was 28 MB of float32


def test_float16_is_measured_on_the_test_file_and_recorded(shipped, tmp_path):
    facts = shipped["model"].facts
    check = facts["precision_check"]
    assert facts["test_file"] == "fixtures/ner/test.txt"
    assert abs(check["float16"] - check["float32"]) < 0.05 and facts["precision"] == "float16"
    assert all(tensor.dtype != torch.float32 for tensor in _weights(shipped["model"].archive, tmp_path).values())
    assert any("float16" in line and "float32" in line and "test F1" in line for line in shipped["said"])


def test_the_test_scores_progress_bar_writes_lines_not_carriage_returns_into_a_log(shipped, capfd):
    from allennlp.common import logging as common_logging

    assert not common_logging.FILE_FRIENDLY_LOGGING
    score = shipping._test_score(shipped["original"], str(ROOT / "fixtures/ner/test.txt"), "f1-measure-overall")
    bar = capfd.readouterr().err  # not a terminal under pytest: as in a --ship log
    assert 0.0 <= score <= 1.0 and "f1-measure-overall" in bar
    assert "\r" not in bar
    assert not common_logging.FILE_FRIENDLY_LOGGING  # AllenNLP's setting is given back


def test_float32_portable_predicts_what_the_original_does_and_float16_within_its_rounding(shipped, original, tmp_path):
    full = tmp_path / "float32.tar.gz"
    write_portable_archive(shipped["original"], full, original.model, half_precision=False)
    expected = original.model.state_dict()
    portable = load_archive(str(full))
    found = portable.model.state_dict()
    assert found.keys() == expected.keys() and all(torch.equal(expected[key], found[key]) for key in expected)
    half = load_archive(str(shipped["model"].archive))
    for key, tensor in expected.items():
        assert torch.allclose(half.model.state_dict()[key], tensor, rtol=1e-3, atol=1e-4), key
    tags = _tags(original)
    assert _tags(portable) == tags and _tags(half) == tags


def test_a_shipped_model_loads_by_name(shipped, original, monkeypatch):
    monkeypatch.setenv(ROOT_VARIABLE, str(shipped["catalogue"]))
    assert archive_path("elmo_tasks:pretrained/ner") == str(shipped["model"].archive)
    predictor = Predictor.from_path("elmo_tasks:pretrained/ner", "ner")
    assert [output["tags"] for output in predictor.predict_batch_json(SENTENCES)] == _tags(original)


@pytest.mark.slow  # a whole `allennlp predict`, 20 to 40 s: in `make test-all`, out of the fast suite
def test_allennlp_predict_takes_the_name_from_another_directory(shipped, original, tmp_path):
    (tmp_path / "input.jsonl").write_text("".join(json.dumps(line) + "\n" for line in SENTENCES), encoding="utf-8")
    allennlp = str(Path(sys.executable).parent / "allennlp")
    command = [allennlp, "predict", "elmo_tasks:pretrained/ner", "input.jsonl", "--predictor", "ner"]
    command += ["--output-file", "out.jsonl", "--silent", "--include-package", "elmo_tasks.plugin"]
    env = {**os.environ, ROOT_VARIABLE: str(shipped["catalogue"]), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["tags"] for line in lines] == _tags(original)


def test_the_card_names_the_records_seed_metrics_and_data_terms(shipped):
    card = shipped["model"].card.read_text(encoding="utf-8")
    assert "`elmo_tasks:pretrained/ner`" in card and "A demonstration, not a production model" in card
    assert f"| seed | {BASE_SEED + 1} (`ELMO_TASKS_SEED`; seed index 1) |" in card
    assert "| validation (`dev.txt`), best epoch | 60.00 |" in card
    assert "| test (`test.txt`), as the record has it | 10.00 |" in card
    assert f"`{shipped_bilm_sha256()}`" in card and "Reuters/NIST agreement" in card and "for research" in card
    assert "scripts/reproduce.py ner --budget smoke --ship" in card and "test scores played no part" in card
    assert json.loads((shipped["model"].folder / "record.json").read_text())["run_name"] == "seed1"


def test_the_run_is_chosen_by_validation_never_by_test(shipped):
    """The negative control: seed0 has the better test score and seed1 the better validation score."""
    assert shipped["model"].facts["run_name"] == "seed1"  # seed0 has no run: choosing it would have failed
    candidates, left_out = shippable_records(shipped["base"] / "records", "ner", "elmo")
    assert [c.run_name for c in candidates] == ["seed0", "seed1"] and left_out == []
    assert max(candidates, key=lambda c: c.record["value"]).run_name == "seed0"
    assert best_by_validation(candidates).run_name == "seed1"
    tied = [RecordFile(c.path, {**c.record, "best_validation": 50.0}) for c in candidates]
    assert best_by_validation(tied).run_name == "seed0"  # a tie: the lower seed index


def test_records_of_another_biLM_are_left_out_and_a_missing_run_stops_shipping(shipped, tmp_path):
    records = tmp_path / "records" / "ner" / "elmo"
    records.mkdir(parents=True)
    best = json.loads((shipped["base"] / "records" / "ner" / "elmo" / "seed0.json").read_text())
    (records / "seed0.json").write_text(json.dumps(best))
    (records / "seed2.json").write_text(
        json.dumps({**best, "run_name": "seed2", "seed_index": 2, "best_validation": 99.0, "bilm_weights_sha256": "0"})
    )
    said: List[str] = []
    with pytest.raises(ShipError) as stopped:
        ship_task("ner", "smoke", tmp_path / "runs", tmp_path / "records", root=tmp_path / "catalogue", say=said.append)
    assert "seed0.json is the best run by validation, but its archive" in str(stopped.value)
    assert "is gone" in str(stopped.value) and len(str(stopped.value).splitlines()) == 1
    assert said[0] == f"left out: seed2: trained with the biLM 0, not the shipped one ({shipped_bilm_sha256()})"
    assert not (tmp_path / "catalogue").exists()


def test_a_record_copied_from_another_variants_run_ships_that_runs_archive(shipped, tmp_path):
    # The harness copies the record of another variant that trained the very same model, naming that run
    # (`trained_as`); only that run's folder holds the archive.
    best = json.loads((shipped["base"] / "records" / "ner" / "elmo" / "seed1.json").read_text())
    records = tmp_path / "records" / "ner" / "elmo"
    records.mkdir(parents=True)
    (records / "seed1.json").write_text(json.dumps({**best, "trained_as": "elmo_twin/seed1"}))
    (tmp_path / "runs" / "ner" / "elmo_twin").mkdir(parents=True)
    (tmp_path / "runs" / "ner" / "elmo_twin" / "seed1").symlink_to(shipped["original"].parent)
    model = ship_task("ner", "smoke", tmp_path / "runs", tmp_path / "records", root=tmp_path / "catalogue", say=print)
    assert model.folder == tmp_path / "catalogue" / "ner"
    assert (model.folder / ARCHIVE_FILE).read_bytes() == (shipped["model"].folder / ARCHIVE_FILE).read_bytes()
    assert not (tmp_path / "runs" / "ner" / "elmo").exists()


def test_the_list_names_each_model_with_its_metrics_size_and_card(shipped, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(ROOT_VARIABLE, str(shipped["catalogue"]))
    pretrained_models.run(None)  # type: ignore[arg-type]  (it takes no arguments)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("elmo_tasks:pretrained/ner  NER (elmo, smoke budget, seed 13371)  F1: validation 60.00")
    assert f"card: {shipped['model'].card}" in lines[0] and "(float16)" in lines[0]
    assert lines[1].startswith("1 shipped, ") and lines[1].endswith("of the 80.0 MB budget")
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path))
    pretrained_models.run(None)  # type: ignore[arg-type]
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("No task model is shipped yet") and "--ship" in line


def test_an_unknown_name_gives_one_line_naming_the_shipped_ones(shipped, monkeypatch, tmp_path):
    monkeypatch.setenv(ROOT_VARIABLE, str(shipped["catalogue"]))
    for wrong in ("elmo_tasks:pretrained/nre", "elmo_tasks:pretrained/bilm_small", "elmo_tasks:ner"):
        with pytest.raises(PretrainedModelError) as unknown:
            load_archive(wrong)
        message = str(unknown.value)
        assert message == (
            f"{wrong} names no shipped task model; the shipped ones are elmo_tasks:pretrained/ner (NER) "
            "(`elmo-tasks pretrained-models` lists them)"
        )
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path))
    with pytest.raises(PretrainedModelError, match="none is shipped yet: `scripts/reproduce.py TASK --budget"):
        Predictor.from_path("elmo_tasks:pretrained/ner")


def test_the_demo_serves_every_shipped_model_and_says_what_to_do_without_one(shipped, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(ROOT_VARIABLE, str(shipped["catalogue"]))
    assert _shipped_archives() == ["ner=elmo_tasks:pretrained/ner"]
    assert [checked.name for checked in check_archives(["elmo_tasks:pretrained/ner"])] == ["ner"]
    (model,) = load_models(_shipped_archives())
    assert model.summary()["archive"] == "elmo_tasks:pretrained/ner"
    assert model.scores.scores == {"best validation": 0.6, "test": shipped["model"].facts["test"] / 100}
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path))
    with pytest.raises(SystemExit):
        _shipped_archives()
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("elmo-demo: error: no ARCHIVE given and no task model is shipped yet")


def test_a_seed_recorded_after_shipping_that_does_not_lead_updates_the_card_without_the_archive(shipped, tmp_path):
    """The shipped run's archive is gone (runs/ is scratch space): a new record below it by validation keeps
    the weights and scores and adds the run to the list the card says it was chosen from; one above it
    still needs its own archive."""
    catalogue, records = tmp_path / "catalogue", tmp_path / "records" / "ner" / "elmo"
    shutil.copytree(shipped["catalogue"], catalogue)
    shutil.copytree(shipped["base"] / "records" / "ner" / "elmo", records)
    before = {name: (catalogue / "ner" / name).read_bytes() for name in (ARCHIVE_FILE, RECORD_FILE)}
    best = json.loads((records / "seed1.json").read_text())
    (records / "seed2.json").write_text(
        json.dumps({**best, "run_name": "seed2", "seed_index": 2, "best_validation": 55.0})
    )
    said: List[str] = []
    model = ship_task("ner", "smoke", tmp_path / "runs", tmp_path / "records", root=catalogue, say=said.append)
    assert model.facts["run_name"] == "seed1" and "still leads" in said[-1]
    assert model.facts["chosen_from"] == [
        {"run_name": "seed0", "validation": 40.0},
        {"run_name": "seed1", "validation": 60.0},
        {"run_name": "seed2", "validation": 55.0},
    ]
    assert {key: value for key, value in model.facts.items() if key != "chosen_from"} == {
        key: value for key, value in shipped["model"].facts.items() if key != "chosen_from"
    }
    assert {name: (catalogue / "ner" / name).read_bytes() for name in before} == before
    assert "of 3 runs" in (catalogue / "ner" / CARD_FILE).read_text()
    (records / "seed2.json").write_text(
        json.dumps({**best, "run_name": "seed2", "seed_index": 2, "best_validation": 70.0})
    )
    with pytest.raises(ShipError, match="seed2.json is the best run by validation, but its archive"):
        ship_task("ner", "smoke", tmp_path / "runs", tmp_path / "records", root=catalogue, say=said.append)
    assert (catalogue / "ner" / ARCHIVE_FILE).read_bytes() == before[ARCHIVE_FILE]


def test_shipping_the_same_model_again_writes_the_same_bytes(shipped, original, tmp_path):
    for name in ("first.tar.gz", "second.tar.gz"):
        write_portable_archive(shipped["original"], tmp_path / name, original.model, half_precision=True)
    assert (tmp_path / "first.tar.gz").read_bytes() == (tmp_path / "second.tar.gz").read_bytes()
    assert (tmp_path / "first.tar.gz").read_bytes() == shipped["model"].archive.read_bytes()


def test_the_harness_command_ships_one_variant_and_fails_with_one_line(shipped, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path / "catalogue"))
    arguments = ["ner", "--budget", "smoke", "--ship", "--runs-dir", str(tmp_path), "--records-dir", str(tmp_path)]
    assert reproduce(arguments) == 1
    out = capsys.readouterr().out
    assert "not shipped: ner: no record of ner elmo to ship in" in out
    with pytest.raises(SystemExit):
        reproduce([*arguments, "--variants", "elmo", "baseline"])
    assert "--ship ships one model per task" in capsys.readouterr().err


def test_a_biLM_that_is_not_the_shipped_one_cannot_be_left_out():
    elmo = {"type": "fast_elmo", "options_file": SMALL_OPTIONS_REFERENCE, "weight_file": SMALL_WEIGHT_REFERENCE}
    config = {"model": {"text_field_embedder": {"token_embedders": {"elmo": elmo}}}}
    assert portable_config(config, "m.tar.gz") == config
    copy = {**elmo, "options_file": str(PACKAGE_ROOT / "pretrained" / "bilm_small" / "options.json")}
    assert portable_config({"model": copy}, "m.tar.gz") == {"model": elmo}  # a path to the same file: named
    for other in ({**elmo, "requires_grad": True}, {**elmo, "options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE}):
        with pytest.raises(PortableArchiveError) as refused:
            portable_config({"model": other}, "m.tar.gz")
        assert str(refused.value).startswith("m.tar.gz: its ELMo") and len(str(refused.value).splitlines()) == 1


def test_a_state_dict_without_the_biLM_keeps_the_biLM_read_from_its_weight_file():
    from_file = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, dropout=0.0)
    without_bilm = {key: value for key, value in from_file.state_dict().items() if not key.startswith("bilm.")}
    from_file.load_state_dict(without_bilm)  # strict: nothing is missing
    expected = load_bilm(str(BILM_TF / "options.json"), str(BILM_TF / "lm_weights.hdf5")).state_dict()
    assert all(torch.equal(from_file.bilm.state_dict()[key], tensor) for key, tensor in expected.items())
    random = ElmoTokenEmbedder(OPTIONS_FILE, None, dropout=0.0)  # options alone: the weights must come with it
    with pytest.raises(RuntimeError, match="Missing key"):
        random.load_state_dict(without_bilm)


def test_shipping_above_the_budget_replaces_nothing(shipped, tmp_path, monkeypatch):
    catalogue = tmp_path / "catalogue"
    shutil.copytree(shipped["catalogue"], catalogue)
    before = {path.name: path.read_bytes() for path in (catalogue / "ner").iterdir()}
    monkeypatch.setattr(shipping, "SHIPPED_MODELS_BUDGET_BYTES", 1_000)
    (chosen,) = [c for c in shippable_records(shipped["base"] / "records", "ner", "elmo")[0] if c.run_name == "seed0"]
    with pytest.raises(
        ShipError, match=r"^ner \([\d.]+ [kM]B\) would bring the shipped models to [\d.]+ [kM]B, above the 1 kB"
    ):
        shipping._write_folder(catalogue, "ner", shipped["original"], chosen, shipped["model"].facts)
    assert {path.name: path.read_bytes() for path in (catalogue / "ner").iterdir()} == before
    assert sorted(path.name for path in catalogue.iterdir()) == ["ner"]


def test_the_shipped_models_fit_the_budget():
    models = shipped_models(PACKAGE_ROOT / "pretrained")
    assert sum(model.size_bytes for model in models) <= SHIPPED_MODELS_BUDGET_BYTES
    for model in models:
        assert model.archive.stat().st_size < 40_000_000, model.name
        assert ARCHIVE_FOLDER not in " ".join(_members(model.archive)), model.name
