"""Both SQuAD configs through the CLI: train on fixtures -> evaluate -> predict -> squad-predict,
and squad-score on a predictions file worked out by hand."""

import json
from pathlib import Path

import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from elmo_tasks.commands.squad_predict import gold_answers
from elmo_tasks.tasks.squad.metric import score_predictions
from tests.conftest import FIXTURES_ROOT, experiment_config, run_allennlp
from tests.tasks.command_runs import baseline_and_elmo_configs, evaluate, train_experiment, without_elmo

DEV = str(FIXTURES_ROOT / "squad" / "dev.json")
TRAIN = str(FIXTURES_ROOT / "squad" / "train.json")
ONE_EPOCH = json.dumps({"trainer.num_epochs": 1})
# The configs as read for the cross-validation's fold 4 of 4 (ELMO_TASKS_FOLD).
FOLD_4_OF_4 = {"ELMO_TASKS_FOLD": "4/4"}


def _last_line(capsys) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


def _numbers(line: str):
    words = line.split()
    assert words[0] == "exact_match" and words[2] == "f1" and len(words) == 4, line
    return float(words[1]), float(words[3])


@pytest.fixture(scope="module", params=["baseline", "elmo"])
def trained(request, tmp_path_factory) -> Path:
    return train_experiment(tmp_path_factory, f"squad_{request.param}", ONE_EPOCH)


def test_train_and_evaluate(trained):
    metrics = json.loads((trained / "run" / "metrics.json").read_text())
    assert 0.0 <= metrics["validation_f1"] <= 1.0 and metrics["training_loss"] > 0
    evaluated = evaluate(trained, DEV, trained / "test_metrics.json")
    assert set(evaluated) >= {"em", "f1", "loss"} and 0.0 <= evaluated["em"] <= evaluated["f1"] <= 1.0


def test_predict_returns_answer_offsets_and_probability(trained):
    inputs = trained / "questions.jsonl"
    passage = "The Panthers beat the Denver Broncos 24-10 in Santa Clara, California."
    inputs.write_text(json.dumps({"question": "Who lost?", "passage": passage}) + "\n")
    out = trained / "predictions.jsonl"
    run_allennlp("predict", str(trained / "run" / "model.tar.gz"), str(inputs), "--output-file", str(out), "--silent")
    prediction = json.loads(out.read_text())
    assert passage[prediction["answer_start"] : prediction["answer_end"]] == prediction["answer"] != ""
    assert 0.0 < prediction["span_probability"] <= 1.0


def test_squad_predict_writes_official_predictions_and_scores_them(trained, capsys):
    out = trained / "official.json"
    capsys.readouterr()
    run_allennlp("squad-predict", str(trained / "run" / "model.tar.gz"), DEV, str(out))
    printed = _last_line(capsys)
    predictions = json.loads(out.read_text())
    questions = gold_answers(DEV)
    assert sorted(predictions) == sorted(question_id for question_id, _ in questions) and len(questions) == 8
    scores = score_predictions(questions, predictions)
    assert printed == f"exact_match {scores['exact_match']!r} f1 {scores['f1']!r}"
    run_allennlp("squad-score", DEV, str(out))
    assert _last_line(capsys) == printed


def test_squad_score_hand_worked(tmp_path, capsys):
    predictions = {
        "56e16182e3433e1400422e28": "computational complexity theory.",  # EM 1
        "56e16182e3433e1400422e29": "their inherent difficulty",  # vs "inherent difficulty": F1 0.8
        # 56e16182e3433e1400422e2a unanswered: 0
        "56e7586d37bdd419002c3eb3": "the most common",  # vs "one of the most common": P 1, R 1/2 -> 2/3
        "56e7586d37bdd419002c3eb4": "Most Western countries",  # EM 1
        "56e7586d37bdd419002c3eb5": "the United States",  # EM 1 (article dropped)
        "56e7586d37bdd419002c3eb6": "Supreme Court decision",  # vs "US Supreme Court": 2/3
        "56e7586d37bdd419002c3eb7": "pain",  # vs "physical pain": P 1, R 1/2 -> 2/3
        "not-a-question": "ignored",
    }
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(predictions))
    capsys.readouterr()
    run_allennlp("squad-score", DEV, str(path))
    output = capsys.readouterr().out
    assert "8 questions" in output and "1 unanswered" in output and "1 prediction for unknown ids" in output
    exact_match, f1 = _numbers(output.strip().splitlines()[-1])
    assert exact_match == pytest.approx(100 * 3 / 8)
    assert f1 == pytest.approx(100 * (1 + 0.8 + 0 + 2 / 3 + 1 + 1 + 2 / 3 + 2 / 3) / 8)


def test_squad_score_on_one_fold(tmp_path, capsys):
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps({"56e7586d37bdd419002c3eb5": "United States"}))
    run_allennlp("squad-score", DEV + "#fold=2/2", str(path))  # fold 2 of 2 = the second article: 5 questions
    assert _numbers(_last_line(capsys)) == (pytest.approx(20.0), pytest.approx(20.0))


@pytest.mark.parametrize("data", ["fixtures", "full"])
def test_configs_differ_only_in_elmo(data):
    baseline, elmo = baseline_and_elmo_configs("squad", data, **FOLD_4_OF_4)
    stripped, elmo_embedder = without_elmo(elmo)
    model = stripped["model"]
    assert model.pop("elmo_at_output") is True and baseline["model"].pop("elmo_at_output") is False
    assert elmo_embedder["num_output_representations"] == 2 and elmo_embedder["dropout"] == 0.5
    assert "regularizer" not in model  # lambda = 0
    assert stripped == baseline
    assert elmo["trainer"]["optimizer"] == {"type": "adadelta", "lr": 1.0, "rho": 0.95}
    assert elmo["trainer"]["moving_average"] == {"type": "exponential", "decay": 0.999}
    # the fixtures cap training passages at 400 tokens; the recipe (appendix A.4) trains on whole passages
    assert elmo["dataset_reader"]["passage_length_limit"] == (400 if data == "fixtures" else None)
    assert elmo["validation_dataset_reader"]["passage_length_limit"] is None
    # the recipe trains every epoch and keeps the best on dev F1, as the authors' code
    assert elmo["trainer"]["patience"] == (4 if data == "fixtures" else None)


def test_substitutes_config_folds_never_share_an_article():
    config = experiment_config("squad_elmo", "substitutes", **FOLD_4_OF_4)
    assert config["train_data_path"].endswith("xquad.en.json#folds-except=4,1/4")
    assert config["validation_data_path"].endswith("xquad.en.json#fold=1/4")


def test_labeled_instances_carry_the_predicted_span(trained):
    predictor = Predictor.from_archive(load_archive(str(trained / "run" / "model.tar.gz")), "squad_qa")
    given = {"question": "Who plays the guitar?", "passage": "A man plays the guitar in the park."}
    [labeled] = predictor.json_to_labeled_instances(given)
    answer = predictor.predict_json(given)["answer"]
    start, end = labeled["span_start"].sequence_index, labeled["span_end"].sequence_index
    passage_tokens = [t.text for t in labeled["passage"].tokens]
    assert 0 <= start <= end < len(passage_tokens)
    assert "".join(passage_tokens[start : end + 1]) == answer.replace(" ", "")
