"""Both coref configs through the CLI: train -> evaluate -> predict -> coref-conll -> coref-score."""

import json
from pathlib import Path

import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from elmo_tasks.tasks.coref.conll import read_conll_documents
from elmo_tasks.tasks.coref.metric import score_corpus, summary_line
from elmo_tasks.tasks.coref.predictor import split_sentences
from tests.conftest import FIXTURES_ROOT, experiment_config, run_allennlp
from tests.tasks.command_runs import baseline_and_elmo_configs, evaluate, train_experiment, without_elmo

TEST = str(FIXTURES_ROOT / "coref" / "test.gold_conll")
ONE_EPOCH = json.dumps({"trainer.num_epochs": 1})


@pytest.fixture(scope="module", params=["baseline", "elmo"])
def trained(request, tmp_path_factory) -> Path:
    return train_experiment(tmp_path_factory, f"coref_{request.param}", ONE_EPOCH)


def test_train_and_evaluate_report_the_conll_scores(trained):
    metrics = json.loads((trained / "run" / "metrics.json").read_text())
    assert "validation_coref_f1" in metrics and metrics["validation_kept_spans_per_doc"] > 0
    test_metrics = evaluate(trained, TEST, trained / "test_metrics.json")
    for key in ("muc_f1", "bcub_f1", "ceafe_f1", "coref_f1", "loss"):
        assert key in test_metrics
    assert test_metrics["coref_f1"] == pytest.approx(
        (test_metrics["muc_f1"] + test_metrics["bcub_f1"] + test_metrics["ceafe_f1"]) / 3
    )


def test_predict_raw_text_gives_clusters_as_spans_and_strings(trained):
    inputs = trained / "documents.jsonl"
    inputs.write_text(json.dumps({"document": "Anna bought a bike. She rides it to work! Her boss likes it."}) + "\n")
    out = trained / "predictions.jsonl"
    run_allennlp(
        "predict",
        str(trained / "run" / "model.tar.gz"),
        str(inputs),
        "--output-file",
        str(out),
        "--predictor",
        "coref",
        "--silent",
    )
    (prediction,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert prediction["document"][:5] == ["Anna", "bought", "a", "bike", "."]
    assert [len(s) for s in prediction["sentences"]] == [5, 6, 5]
    for cluster, strings in zip(prediction["clusters"], prediction["cluster_strings"], strict=True):
        assert [" ".join(prediction["document"][s : e + 1]) for s, e in cluster] == strings


def test_coref_conll_copies_the_input_and_prints_the_scores_of_its_output(trained, capsys):
    output = trained / "test.response_conll"
    capsys.readouterr()
    run_allennlp("coref-conll", str(trained / "run" / "model.tar.gz"), TEST, str(output))
    printed = capsys.readouterr().out.strip().splitlines()
    key_lines = Path(TEST).read_text().splitlines()
    out_lines = output.read_text().splitlines()
    assert len(out_lines) == len(key_lines)
    for key_line, out_line in zip(key_lines, out_lines, strict=True):
        if key_line.startswith("#") or not key_line.strip():
            assert out_line == key_line
        else:
            assert key_line.split()[:-1] == out_line.split()[:-1]
    # the last line is the project's metric on (INPUT as key, OUTPUT as response)
    key = {d.name: d.clusters for d in read_conll_documents(TEST)}
    response = {d.name: d.clusters for d in read_conll_documents(str(output), min_columns=1)}
    assert printed[-1] == summary_line(score_corpus((key[name], response[name]) for name in key))
    capsys.readouterr()
    run_allennlp("coref-score", TEST, str(output))
    assert capsys.readouterr().out.strip().splitlines()[-1] == printed[-1]


def test_coref_score_on_hand_made_response(tmp_path, capsys):
    """Key: the fixture test file; response: its first document with one cluster split in two."""
    lines = Path(TEST).read_text().splitlines(keepends=True)
    # doc 1 cluster 1 = "The farmers ' union", "It", "The union": give "The union" its own entity 7
    edited = []
    seen_union = 0
    for line in lines:
        columns = line.split()
        if columns and not line.startswith("#") and columns[3] == "union":
            seen_union += 1
            if seen_union == 2:
                line = line.replace("1)", "7)")
        if columns and not line.startswith("#") and columns[3] == "The" and columns[-1] == "(1":
            line = line.replace("(1", "(7") if seen_union == 1 else line
        edited.append(line)
    response = tmp_path / "response"
    response.write_text("".join(edited))
    capsys.readouterr()
    run_allennlp("coref-score", TEST, str(response))
    last = capsys.readouterr().out.strip().splitlines()[-1]
    # 5 key clusters, 13 mentions; only {union x3} -> {union, It} + {The union}:
    # MUC R = 7/8, P = 7/7; B3 R = (2/3 * 2 + 1/3 + 10) / 13, P = 1; CEAF R = (0.8 + 4) / 5, P = 4.8 / 6
    muc_f1 = 2 * (7 / 8) / (7 / 8 + 1)
    b3_r = (4 / 3 + 1 / 3 + 10) / 13
    b3_f1 = 2 * b3_r / (b3_r + 1)
    ceaf_r, ceaf_p = 4.8 / 5, 4.8 / 6
    ceaf_f1 = 2 * ceaf_r * ceaf_p / (ceaf_r + ceaf_p)

    def trunc(v):
        return int(v * 10000) / 100

    expected = (
        f"muc {trunc(muc_f1):.2f} bcub {trunc(b3_f1):.2f} ceafe {trunc(ceaf_f1):.2f} "
        f"avg {trunc((muc_f1 + b3_f1 + ceaf_f1) / 3):.2f}"
    )
    assert last == expected


def test_sentence_split_keeps_closing_quotes():
    words = ["He", "said", '"', "go", "!", '"', "Then", "he", "left", "."]
    assert split_sentences(words) == [words[:6], words[6:]]


@pytest.mark.parametrize("data", ["fixtures", "full"])
def test_configs_differ_only_in_elmo(data):
    baseline, elmo = baseline_and_elmo_configs("coref", data)
    stripped, elmo_embedder = without_elmo(elmo)
    assert elmo_embedder["type"] == "fast_elmo"
    assert stripped == baseline


def test_substitutes_config_is_the_paper_recipe_on_split_dev():
    config = experiment_config("coref_elmo", "substitutes")
    assert config["train_data_path"].endswith("conll2012/dev.english.v4_gold_conll.gz#train")
    assert config["validation_data_path"].endswith("conll2012/dev.english.v4_gold_conll.gz#holdout")
    assert (
        config["dataset_reader"]["max_sentences"] == 50 and "max_sentences" not in config["validation_dataset_reader"]
    )
    model = config["model"]
    assert (model["max_span_width"], model["spans_per_word"], model["lexical_dropout"]) == (10, 0.4, 0.5)
    assert model["context_layer"]["hidden_size"] == 200
    assert model["mention_feedforward"]["hidden_dims"] == model["antecedent_feedforward"]["hidden_dims"] == 150
    # The paper's 0.5 is left to the lexical dropout, which drops out ELMo too (see coref.libsonnet).
    assert model["text_field_embedder"]["token_embedders"]["elmo"]["dropout"] == 0.0
    assert config["trainer"]["optimizer"] == {"type": "adam", "lr": 0.001}
    assert config["trainer"]["grad_norm"] == 5.0 and config["data_loader"]["batch_size"] == 1


def test_labeled_instances_carry_the_predicted_clusters(trained):
    predictor = Predictor.from_archive(load_archive(str(trained / "run" / "model.tar.gz")), "coref")
    given = {"document": "Mary met John. She gave him a book. He thanked her."}
    instance = predictor._json_to_instance(given)
    outputs = predictor._model.forward_on_instance(instance)
    [labeled] = predictor.predictions_to_labeled_instances(instance, outputs)
    spans = [(s.span_start, s.span_end) for s in labeled["spans"].field_list]
    expected = {tuple(span): n for n, cluster in enumerate(outputs["clusters"]) for span in cluster}
    assert labeled["span_labels"].labels == [expected.get(span, -1) for span in spans]
