"""Both NER configs through the CLI: train on fixtures -> archive -> evaluate -> predict.

The commands run in-process (``allennlp.commands.main`` with ``sys.argv`` patched, from the repo
root) to save the interpreter start-up and imports of six subprocesses.
"""
import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_ROOT, run_allennlp
TEST = str(FIXTURES_ROOT / "ner" / "test.txt")
SENTENCES = ["Marta Velkin visited Port Elby on Monday.", "Shares of Pellon Group fell."]


@pytest.fixture(scope="module", params=["ner_baseline", "ner_elmo"])
def archive(request, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp(request.param) / "run"
    run_allennlp(
        "train", f"experiments/{request.param}.jsonnet", "-s", str(out),
        "-o", json.dumps({"trainer": {"num_epochs": 1}}),
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert "best_validation_f1-measure-overall" in metrics
    config = json.loads((out / "config.json").read_text())
    has_elmo = "elmo" in config["model"]["text_field_embedder"]["token_embedders"]
    assert has_elmo == (request.param == "ner_elmo")
    assert ("regularizer" in config["model"]) == has_elmo
    return out / "model.tar.gz"


def test_evaluate_reports_span_f1(archive, tmp_path):
    output = tmp_path / "eval.json"
    run_allennlp("evaluate", str(archive), TEST, "--output-file", str(output))
    metrics = json.loads(output.read_text())
    for key in ("precision-overall", "recall-overall", "f1-measure-overall", "loss"):
        assert key in metrics
    assert 0.0 <= metrics["f1-measure-overall"] <= 1.0


def test_predict_tags_raw_sentences(archive, tmp_path):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"sentence": s}) + "\n" for s in SENTENCES))
    output = tmp_path / "out.jsonl"
    run_allennlp("predict", str(archive), str(inputs), "--output-file", str(output), "--silent")
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["sentence"] for r in results] == SENTENCES
    assert results[0]["words"] == ["Marta", "Velkin", "visited", "Port", "Elby", "on", "Monday", "."]
    for result in results:
        assert len(result["tags"]) == len(result["iob1_tags"]) == len(result["words"])
        for entity in result["entities"]:
            assert result["sentence"][entity["char_start"] : entity["char_end"]] == entity["text"]


def test_predict_on_a_conll_file_with_the_dataset_reader(archive, tmp_path):
    output = tmp_path / "out.jsonl"
    run_allennlp(
        "predict", str(archive), TEST, "--use-dataset-reader", "--output-file", str(output), "--silent"
    )
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(results) == 10
    assert results[0]["words"][:2] == ["Karl", "Ostrom"]
    assert all(len(r["iob1_tags"]) == len(r["words"]) for r in results)
