"""Both SST-5 configs through the CLI on the bundled fixtures: train -> archive -> evaluate -> predict.

``train`` and ``evaluate`` run in-process (``allennlp.commands.main`` with ``sys.argv`` patched,
from the repo root) to save interpreter start-ups; ``predict`` of the ELMo archive runs as a real
``allennlp`` subprocess so plugin discovery through ``.allennlp_plugins`` is exercised too.
"""

import copy
import json
from pathlib import Path

import pytest
from allennlp.models.archival import load_archive

from elmo_tasks.tasks.sst.labels import FINE_GRAINED_NAMES
from elmo_tasks.tasks.sst.trees import parse_tree
from tests.conftest import FIXTURES_ROOT, ROOT, experiment_config, run_allennlp
from tests.tasks.command_runs import evaluate, predict, train_experiment

TWO_EPOCHS = json.dumps({"trainer.num_epochs": 2})
SENTENCES = ["A gorgeous, witty film that never drags.", "I didn't like it (at all)."]


@pytest.fixture(scope="module", params=["baseline", "elmo"])
def trained(request, tmp_path_factory) -> Path:
    return train_experiment(tmp_path_factory, f"sst5_{request.param}", TWO_EPOCHS)


def test_train_writes_archive_and_metrics(trained: Path) -> None:
    metrics = json.loads((trained / "run" / "metrics.json").read_text())
    assert metrics["epoch"] == 1
    assert metrics["training_loss"] > 0
    if trained.name.startswith("sst5_elmo"):
        assert metrics["training_reg_loss"] > 0  # lambda * ||w||^2 on the ELMo mixing weights
    assert (trained / "run" / "model.tar.gz").exists()


def test_evaluate_counts_test_roots(trained: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = trained / "test_metrics.json"
    metrics = evaluate(trained, str(FIXTURES_ROOT / "sst" / "test.txt"), out)
    assert metrics["loss"] > 0
    # The accuracy is the share of test sentences (roots) whose predicted class is the gold one.
    predictions = trained / "test_predictions.jsonl"
    run_allennlp(
        "predict",
        str(trained / "run" / "model.tar.gz"),
        str(FIXTURES_ROOT / "sst" / "test.txt"),
        "--use-dataset-reader",
        "--output-file",
        str(predictions),
        "--silent",
    )
    predicted = [json.loads(line)["label"] for line in predictions.read_text().splitlines()]
    lines = (FIXTURES_ROOT / "sst" / "test.txt").read_text(encoding="utf-8").splitlines()
    gold = [FINE_GRAINED_NAMES[parse_tree(line)[0].label] for line in lines if line.strip()]
    assert len(predicted) == len(gold) == 20
    assert metrics["accuracy"] == pytest.approx(sum(p == g for p, g in zip(predicted, gold, strict=True)) / len(gold))
    # `evaluate` reads with the archive's validation reader: sentences (20 roots), not phrases.
    monkeypatch.chdir(ROOT)  # the archived config names the biLM files relative to the repo root
    archive = load_archive(str(trained / "run" / "model.tar.gz"))
    assert len(list(archive.validation_dataset_reader.read(str(FIXTURES_ROOT / "sst" / "test.txt")))) == 20


def test_predict_gives_class_name_and_probabilities(trained: Path) -> None:
    inputs = trained / "sentences.jsonl"
    inputs.write_text("".join(json.dumps({"sentence": s}) + "\n" for s in SENTENCES))
    out = trained / "predictions.jsonl"
    # the ELMo model in a fresh process: plugins found via .allennlp_plugins
    predict(trained, inputs, out, fresh_process=trained.name.startswith("sst5_elmo"))
    predictions = [json.loads(line) for line in out.read_text().splitlines()]
    assert predictions[0]["tokens"] == ["A", "gorgeous", ",", "witty", "film", "that", "never", "drags", "."]
    assert predictions[1]["tokens"] == ["I", "did", "n't", "like", "it", "(", "at", "all", ")", "."]
    names = ["very negative", "negative", "neutral", "positive", "very positive"]
    for prediction in predictions:
        probs = prediction["label_probs"]
        assert list(probs) == names and sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
        assert prediction["label"] == max(probs, key=probs.get)


def _config(name: str, data: str) -> dict:
    return experiment_config(f"sst5_{name}", data)


@pytest.mark.parametrize("data", ["fixtures", "full"])
def test_configs_differ_only_in_elmo(data: str) -> None:
    baseline, elmo = _config("baseline", data), _config("elmo", data)
    stripped = copy.deepcopy(elmo)
    model = stripped["model"]
    assert model.pop("elmo_at_output") is True and baseline["model"].pop("elmo_at_output") is False
    assert model["text_field_embedder"]["token_embedders"].pop("elmo")["num_output_representations"] == 2
    for reader in ("dataset_reader", "validation_dataset_reader"):
        assert stripped[reader]["token_indexers"].pop("elmo") == {"type": "elmo_characters"}
    assert model.pop("regularizer")["regexes"][0][1] == {"type": "l2", "alpha": 0.001}
    assert stripped == baseline


def test_full_config_trains_on_phrases_of_four_tokens_and_validates_on_roots() -> None:
    config = _config("elmo", "full")
    assert config["train_data_path"] == "../shared/data/sst/train.txt"
    assert config["validation_data_path"] == "../shared/data/sst/dev.txt"
    # appendix A.8: the phrases of four or more tokens, every copy of each
    assert config["dataset_reader"]["phrases"] == {"min_tokens": 4, "deduplicate": False}
    assert config["validation_dataset_reader"]["phrases"] == "roots"
    assert config["trainer"]["optimizer"]["type"] == "adam"
    assert "test_data_path" not in config  # test is evaluated separately, only to report
