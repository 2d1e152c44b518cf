"""Both SNLI configs through the CLI: train on fixtures -> archive -> evaluate -> predict.

Training and evaluation run in-process (``allennlp.commands.main`` with ``sys.argv`` patched,
from the repo root) to save interpreter start-ups; ``predict`` runs once as a real subprocess
so the ``.allennlp_plugins`` route is exercised too.
"""

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_ROOT, ROOT, experiment_config, run_allennlp
from tests.tasks.command_runs import baseline_and_elmo_configs, evaluate, predict, train_experiment, without_elmo

TEST_GZ = str(FIXTURES_ROOT / "snli" / "test.jsonl.gz")
# One epoch on the first 96 pairs of the bundled train/dev files: the round trip is what matters.
ONE_EPOCH = json.dumps({"trainer.num_epochs": 1, "dataset_reader.max_instances": 96})


@pytest.fixture(scope="module", params=["baseline", "elmo"])
def trained(request, tmp_path_factory) -> Path:
    return train_experiment(tmp_path_factory, f"snli_{request.param}", ONE_EPOCH)


def test_train_writes_archive_and_metrics(trained):
    metrics = json.loads((trained / "run" / "metrics.json").read_text())
    assert (trained / "run" / "model.tar.gz").exists()
    # One epoch: the archived model is the validated one, so evaluating it on the same 96 dev
    # pairs gives the validation accuracy again.
    out = trained / "dev_metrics.json"
    dev = str(FIXTURES_ROOT / "snli" / "dev.jsonl")
    dev_metrics = evaluate(trained, dev, out, "-o", json.dumps({"dataset_reader.max_instances": 96}))
    assert dev_metrics["accuracy"] == pytest.approx(metrics["validation_accuracy"])
    vocab_labels = (trained / "run" / "vocabulary" / "labels.txt").read_text().split()
    assert sorted(vocab_labels) == ["contradiction", "entailment", "neutral"]


def test_evaluate_on_gzipped_test_agrees_with_predict(trained):
    metrics = evaluate(trained, TEST_GZ, trained / "test_metrics.json")
    assert metrics["loss"] > 0
    # The accuracy is the share of test pairs whose predicted label is the gold one.
    predictions = trained / "test_predictions.jsonl"
    run_allennlp(
        "predict",
        str(trained / "run" / "model.tar.gz"),
        TEST_GZ,
        "--use-dataset-reader",
        "--output-file",
        str(predictions),
        "--silent",
    )
    predicted = [json.loads(line)["label"] for line in predictions.read_text().splitlines()]
    with gzip.open(TEST_GZ, "rt", encoding="utf-8") as handle:
        gold = [label for label in (json.loads(line)["gold_label"] for line in handle) if label != "-"]
    # The archived config keeps the training run's max_instances, so both read the first 96 pairs.
    assert len(predicted) == 96 and len(gold) == 99
    assert metrics["accuracy"] == pytest.approx(sum(p == g for p, g in zip(predicted, gold, strict=False)) / 96)


@pytest.mark.slow  # a whole `allennlp predict` per variant, 20 to 40 s: in `make test-all`, out of the fast suite
def test_predict_gives_label_and_probabilities(trained):
    inputs = trained / "pairs.jsonl"
    pairs = [
        {"premise": "A man plays a guitar on stage.", "hypothesis": "A man performs music."},
        {"premise": "Two dogs run in the snow.", "hypothesis": "The cats are asleep."},
    ]
    inputs.write_text("\n".join(json.dumps(p) for p in pairs) + "\n")
    out = trained / "predictions.jsonl"
    # the ELMo model in a fresh process: plugins found via .allennlp_plugins
    predict(trained, inputs, out, fresh_process=trained.name.startswith("snli_elmo"))
    predictions = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["premise"] for p in predictions] == [p["premise"] for p in pairs]
    for prediction in predictions:
        probs = prediction["label_probs"]
        assert set(probs) == {"entailment", "neutral", "contradiction"}
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
        assert prediction["label"] == max(probs, key=probs.get)


MIXING_WEIGHTS_PENALTY = [".*scalar_mix.*scalar_parameters.*", {"type": "l2", "alpha": 0.001}]
WEIGHT_MATRICES_PENALTY = [
    r"^(encoder|inference_encoder|projection_feedforward|output_feedforward|output_logit)\..*weight",
    {"type": "l2", "alpha": 0.0001},
]


@pytest.mark.parametrize("data", ["fixtures", "substitutes", "full"])
def test_configs_differ_only_in_elmo(data):
    """The ELMo config is the baseline's plus ELMo: on the real data at the paper's place (appendix A.3: the
    input and the input encoder's output) with dropout after the attention; in `full` mode also the rest of
    the paper's recipe, layer norm and a penalty on the weight matrices, which the mini budget's
    (`substitutes`) committed runs never had; on the fixtures at the input only (the README's main job)."""
    baseline, elmo = baseline_and_elmo_configs("snli", data)
    stripped, elmo_embedder = without_elmo(elmo, readers=["dataset_reader"])
    model = stripped["model"]
    paper = data == "full"
    placed = data != "fixtures"
    assert baseline["model"].pop("elmo_at_output") is False
    assert model.pop("elmo_at_output") is placed
    assert elmo_embedder["num_output_representations"] == (2 if placed else 1)
    assert elmo_embedder["do_layer_norm"] is paper
    assert elmo_embedder["dropout"] == 0
    penalties = model.pop("regularizer")["regexes"]
    assert penalties == ([MIXING_WEIGHTS_PENALTY, WEIGHT_MATRICES_PENALTY] if paper else [MIXING_WEIGHTS_PENALTY])
    assert model.pop("attention_dropout", None) == (0.5 if placed else None)
    assert stripped == baseline


def test_the_weight_penalty_covers_every_recurrent_and_feedforward_weight_matrix():
    """A.3's 0.0001 penalty: every LSTM input and recurrent weight and every feedforward and logit weight of
    the `full` ELMo model, and nothing else (no bias, no embedding, nothing of ELMo's)."""
    import os
    import re

    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model

    tiny_bilm = {name: os.environ[name] for name in ("ELMO_OPTIONS", "ELMO_WEIGHTS")}  # the tests' own
    model_params = experiment_config("snli_elmo", "full", **tiny_bilm)["model"]
    for name in ("encoder", "inference_encoder"):
        model_params[name]["hidden_size"] = 4
    for name in ("projection_feedforward", "output_feedforward"):
        model_params[name]["hidden_dims"] = 4
    model_params["text_field_embedder"]["token_embedders"]["tokens"]["embedding_dim"] = 4
    vocab = Vocabulary({"tokens": {"a": 1}, "labels": {"entailment": 1, "neutral": 1, "contradiction": 1}})
    model = Model.from_params(vocab=vocab, params=Params(model_params))
    penalised = sorted(name for name, _ in model.named_parameters() if re.search(WEIGHT_MATRICES_PENALTY[0], name))
    lstm_weights = [
        f"{encoder}._module.weight_{kind}_l0{direction}"
        for encoder in ("encoder", "inference_encoder")
        for kind in ("hh", "ih")
        for direction in ("", "_reverse")
    ]
    feedforward_weights = [
        "output_feedforward._linear_layers.0.weight",
        "output_logit.weight",
        "projection_feedforward._linear_layers.0.weight",
    ]
    assert penalised == sorted(lstm_weights + feedforward_weights)


def test_substitutes_config_is_the_full_recipe_on_split_dev_with_the_mini_budgets_elmo():
    config = experiment_config("snli_elmo", "substitutes")
    assert config["train_data_path"].endswith("snli/snli_1.0_dev.jsonl.gz#train")
    assert config["validation_data_path"].endswith("snli/snli_1.0_dev.jsonl.gz#holdout")
    assert config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["embedding_dim"] == 300
    assert config["model"]["encoder"]["hidden_size"] == 300
    assert config["model"]["dropout"] == 0.5
    assert config["trainer"]["optimizer"] == {"type": "adam", "lr": 0.0004}
    assert config["trainer"]["grad_norm"] == 5.0
    assert config["data_loader"]["batch_sampler"]["batch_size"] == 32
    # Only the data and ELMo's part of the recipe differ from `full` (elmo_tasks/experiments/snli.libsonnet, `paper`).
    for variant in ("baseline", "elmo"):
        substitutes, full = (experiment_config(f"snli_{variant}", data) for data in ("substitutes", "full"))
        for resolved in (substitutes, full):
            for key in ("train_data_path", "validation_data_path"):
                resolved.pop(key)
            if variant == "elmo":
                for key in ("elmo_at_output", "attention_dropout", "regularizer"):
                    resolved["model"].pop(key, None)
                for key in ("num_output_representations", "do_layer_norm"):
                    resolved["model"]["text_field_embedder"]["token_embedders"]["elmo"].pop(key)
        assert substitutes == full, variant


@pytest.mark.parametrize(
    "bad_line, expected",
    [
        ('{"premise": "A dog runs.", "hypothesis": ', "line 4: not valid JSON"),
        ('{"premise": "A dog runs.", "hypo": "x"}', 'line 4: no "hypothesis" key'),
        ('["A dog runs.", "An animal moves."]', "line 4: a JSON array, not an object"),
    ],
)
def test_predict_names_the_input_line_of_a_bad_record(trained, bad_line, expected, capsys):
    """Blank lines (which allennlp skips before the predictor sees a line) still count."""
    good = json.dumps({"premise": "A man plays a guitar.", "hypothesis": "A man makes music."})
    inputs = trained / "bad_pairs.jsonl"
    inputs.write_text(f"{good}\n\n   \n{bad_line}\n{good}\n")
    args = ["predict", str(trained / "run" / "model.tar.gz"), str(inputs), "--silent", "--batch-size", "2"]
    with pytest.raises(SystemExit) as exit_:
        run_allennlp(*args, "--output-file", str(trained / "bad_predictions.jsonl"))
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in error
    assert f"allennlp predict: {inputs}, {expected}" in error
    assert '"premise"' in error and '"hypothesis"' in error


def test_the_readme_main_job_shows_the_test_metrics(trained, caplog):
    """The README's evaluate command, run as written (on this test's archive), writes the file its
    next line shows, the final test accuracy and loss, and logs them (``Metrics: {...}``), as the
    README says."""
    import logging
    import shlex

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Set up and run the main job", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = block.strip().splitlines()
    evaluate = next(i for i, line in enumerate(lines) if line.startswith("allennlp evaluate "))
    command = shlex.split(lines[evaluate].replace("runs/snli/", f"{trained}/run/"))
    shown = shlex.split(lines[evaluate + 1].replace("runs/snli/", f"{trained}/run/"))
    output = Path(command[command.index("--output-file") + 1])
    assert shown == ["cat", str(output)]
    with caplog.at_level(logging.INFO, logger="allennlp.common.util"):
        run_allennlp(*command[1:])
    metrics = json.loads(output.read_text(encoding="utf-8"))
    assert set(metrics) == {"accuracy", "loss"}
    logged = [record.getMessage() for record in caplog.records if record.getMessage().startswith("Metrics: ")]
    assert [json.loads(message.removeprefix("Metrics: ")) for message in logged] == [metrics]
    assert "`Metrics: {...}`" in readme.split("## Set up and run the main job", 1)[1].split("\n## ", 1)[0]
