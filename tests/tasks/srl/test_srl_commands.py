"""Both SRL configs through the CLI on fixtures: train -> evaluate -> predict -> srl-props -> srl-score."""

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from elmo_tasks.tasks.srl.metric import score_props
from elmo_tasks.tasks.srl.props import read_props
from tests.conftest import FIXTURES_ROOT, run_allennlp
from tests.tasks.command_runs import evaluate_span_f1, train_span_tagger

SRL = FIXTURES_ROOT / "srl"
TEST = str(SRL / "conll2005_test.txt")


@pytest.fixture(scope="module", params=["srl_baseline", "srl_elmo"])
def archive(request, tmp_path_factory) -> Path:
    archive, _config = train_span_tagger(tmp_path_factory, request.param, json.dumps({"trainer.num_epochs": 2}))
    return archive


def _last_line(*args: str) -> str:
    captured = io.StringIO()
    with redirect_stdout(captured):
        run_allennlp(*args)
    return captured.getvalue().strip().splitlines()[-1]


def test_evaluate_reports_srl_eval_f1(archive, tmp_path):
    evaluate_span_f1(archive, TEST, tmp_path / "eval.json")


def test_predict_raw_sentences_and_dataset_files(archive, tmp_path):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(
        json.dumps({"sentence": "The dog chased the cat.", "verbs": [2]})
        + "\n"
        + json.dumps({"sentence": "Mira baked a cake."})
        + "\n"
    )
    output = tmp_path / "out.jsonl"
    run_allennlp("predict", str(archive), str(inputs), "--output-file", str(output), "--silent")
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert [frame["verb"] for frame in results[0]["verbs"]] == ["chased"]
    assert [frame["verb"] for frame in results[1]["verbs"]] == ["baked"]
    # the first names its predicate; the second's is found by the shipped POS tagger on the shipped biLM
    assert [r["verbs_found_by"] for r in results] == ["input", "pos_tagger"]
    assert all(len(frame["tags"]) == len(r["words"]) for r in results for frame in r["verbs"])
    from_file = tmp_path / "file.jsonl"
    run_allennlp("predict", str(archive), TEST, "--use-dataset-reader", "--output-file", str(from_file), "--silent")
    assert len(from_file.read_text().splitlines()) == 6  # one line per predicate


@pytest.mark.parametrize("data, fmt", [(TEST, "conll2005"), (str(SRL / "conll2012_test.gold_conll"), "conll2012")])
def test_srl_props_writes_every_sentence_and_scores_like_srl_score(archive, tmp_path, data, fmt):
    predicted, gold = tmp_path / "pred.props", tmp_path / "gold.props"
    line = _last_line("srl-props", str(archive), data, str(predicted), "--gold-output", str(gold), "--data-format", fmt)
    assert line.startswith("precision ") and " recall " in line and " f1 " in line
    with gold.open() as g, predicted.open() as p:
        gold_sentences, predicted_sentences = list(read_props(g, "gold")), list(read_props(p, "pred"))
    assert len(gold_sentences) == len(predicted_sentences) == 5  # including the one without a predicate
    assert [s.targets for s in gold_sentences] == [s.targets for s in predicted_sentences]
    assert _last_line("srl-score", str(gold), str(predicted)) == line
    # and a perfect prediction scores 1
    assert _last_line("srl-score", str(gold), str(gold)) == "precision 1.0000 recall 1.0000 f1 1.0000"
    if fmt == "conll2005":
        # the gold props written from the input are the input's own props
        counts = score_props(read_props(gold.open(), "g"), read_props(gold.open(), "g"))
        assert counts.totals()[0] == 15  # 2 + 4 + (2 + 2) + 0 + (3 + 2) arguments, worked by hand


def test_labeled_instances_carry_the_predicted_tags(archive):
    predictor = Predictor.from_archive(load_archive(str(archive)), "srl")
    instance = predictor._dataset_reader.text_to_instance(["The", "cat", "chased", "the", "mouse", "."], 2)
    predictor._dataset_reader.apply_token_indexers(instance)
    outputs = predictor._model.forward_on_instance(instance)
    [labeled] = predictor.predictions_to_labeled_instances(instance, outputs)
    assert labeled["tags"].labels == outputs["tags"] and len(outputs["tags"]) == 6
