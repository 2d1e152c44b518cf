"""Both NER configs through the CLI: train on fixtures -> archive -> evaluate -> predict.

The commands run in-process (``allennlp.commands.main`` with ``sys.argv`` patched, from the repo
root) to save the interpreter start-up and imports of six subprocesses.
"""

import json
from pathlib import Path
from typing import List

import pytest
from allennlp.data.dataset_readers.dataset_utils.span_utils import iob1_tags_to_spans

from tests.conftest import FIXTURES_ROOT, run_allennlp
from tests.tasks.command_runs import evaluate_span_f1, train_span_tagger

TEST = str(FIXTURES_ROOT / "ner" / "test.txt")
SENTENCES = ["Marta Velkin visited Port Elby on Monday.", "Shares of Pellon Group fell."]


@pytest.fixture(scope="module", params=["ner_baseline", "ner_elmo"])
def archive(request, tmp_path_factory) -> Path:
    archive, config = train_span_tagger(tmp_path_factory, request.param, json.dumps({"trainer": {"num_epochs": 1}}))
    assert ("regularizer" in config["model"]) == (request.param == "ner_elmo")
    return archive


def test_evaluate_reports_span_f1(archive, tmp_path):
    metrics = evaluate_span_f1(archive, TEST, tmp_path / "eval.json")
    # conlleval's span F1, recomputed from the predicted IOB1 tags and the file's gold tags.
    predictions = tmp_path / "predictions.jsonl"
    run_allennlp("predict", str(archive), TEST, "--use-dataset-reader", "--output-file", str(predictions), "--silent")
    lines = predictions.read_text().splitlines()
    predicted = [set(iob1_tags_to_spans(json.loads(line)["iob1_tags"])) for line in lines]
    gold = [set(iob1_tags_to_spans(tags)) for tags in _gold_iob1(TEST)]
    assert len(predicted) == len(gold) == 10
    correct = sum(len(p & g) for p, g in zip(predicted, gold, strict=True))
    n_predicted, n_gold = sum(map(len, predicted)), sum(map(len, gold))
    f1 = 2 * correct / (n_predicted + n_gold) if n_predicted + n_gold else 0.0
    assert metrics["f1-measure-overall"] == pytest.approx(f1, abs=1e-6)


def _gold_iob1(path: str):
    """The NER column of each sentence of a CoNLL-2003 file, as written (IOB1)."""
    sentences: List[List[str]] = []
    current: List[str] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("-DOCSTART-"):
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(line.split()[3])
    return sentences + ([current] if current else [])


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
    run_allennlp("predict", str(archive), TEST, "--use-dataset-reader", "--output-file", str(output), "--silent")
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(results) == 10
    assert results[0]["words"][:2] == ["Karl", "Ostrom"]
    assert all(len(r["iob1_tags"]) == len(r["words"]) for r in results)
