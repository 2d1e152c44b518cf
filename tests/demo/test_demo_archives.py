"""What the demo reads from archives: page names, tasks, the biLM, scores and the learned mixing weights."""

import json
import math

import pytest
import torch

from elmo_tasks.demo.archive_info import archive_scores, bilm_files, selection_metric
from elmo_tasks.demo.loaded_models import DemoSetupError, check_archives, parse_archive_spec
from elmo_tasks.demo.mixing_weights import learned_mixes
from tests.conftest import untrained_archive


def test_name_equals_archive_is_split_unless_the_whole_argument_is_a_file(tmp_path):
    assert parse_archive_spec("ner_b=runs/x/model.tar.gz") == parse_archive_spec("ner_b=runs/x/model.tar.gz")
    assert parse_archive_spec("ner_b=runs/x/model.tar.gz").name == "ner_b"
    assert parse_archive_spec("ner_b=runs/x/model.tar.gz").archive_file == "runs/x/model.tar.gz"
    odd = tmp_path / "a=b.tar.gz"
    odd.write_bytes(b"")
    assert parse_archive_spec(str(odd)).name is None  # an existing path is an archive, "=" or not
    assert parse_archive_spec("not a name=x.tar.gz").name is None  # a name must fit in a URL


def test_two_archives_of_one_task_need_names(tmp_path):
    archive = str(untrained_archive("snli_baseline", tmp_path / "snli"))
    with pytest.raises(DemoSetupError, match="served as 'snli'.*NAME=ARCHIVE"):
        check_archives([archive, archive])
    named = check_archives([archive, f"snli_b={archive}"])
    assert [(c.name, c.task.name, c.model_type) for c in named] == [
        ("snli", "snli", "snli_model"),
        ("snli_b", "snli", "snli_model"),
    ]


def test_a_missing_archive_is_named_before_anything_loads(tmp_path):
    with pytest.raises(DemoSetupError, match=f"{tmp_path}/none.tar.gz does not exist"):
        check_archives([str(tmp_path / "none.tar.gz")])


def test_scores_are_the_selection_metric_of_each_metrics_file_beside_the_archive(tmp_path):
    config = {"trainer": {"validation_metric": "+f1"}}
    (tmp_path / "metrics.json").write_text(json.dumps({"best_epoch": 3, "best_validation_f1": 0.5, "f1": 9}))
    (tmp_path / "test_metrics.json").write_text(json.dumps({"f1": 0.25, "em": 0.2}))
    (tmp_path / "test_brown_metrics.json").write_text(json.dumps({"f1": 0.125}))
    (tmp_path / "model.tar.gz").write_bytes(b"")
    scores = archive_scores(str(tmp_path / "model.tar.gz"), config)
    assert (scores.metric, scores.best_epoch) == ("f1", 3)
    assert scores.scores == {"best validation": 0.5, "test brown": 0.125, "test": 0.25}
    assert archive_scores(str(tmp_path / "elsewhere" / "model.tar.gz"), config).scores == {}
    assert selection_metric({"trainer": {"validation_metric": ["-loss", "+f1"]}}) == "loss"


def test_the_bilm_files_are_found_in_any_embedder_of_the_config():
    config = {
        "model": {
            "text_field_embedder": {
                "token_embedders": {
                    "tokens": {"type": "embedding"},
                    "elmo": {"type": "fast_elmo", "options_file": "o.json", "weight_file": "w.hdf5"},
                }
            }
        }
    }
    (found,) = bilm_files(config)
    assert (found.options_file, found.weight_file, found.fine_tuned) == ("o.json", "w.hdf5", False)
    assert bilm_files({"model": {"type": "baseline"}}) == []


def test_mixing_weights_are_the_softmax_of_each_mix_parameters():
    prefix = "text_field_embedder.token_embedder_elmo"
    parameters = {f"{prefix}.scalar_mix_0.scalar_parameters.{j}": math.log(w) for j, w in enumerate([1, 2, 1])}
    parameters.update({f"{prefix}.scalar_mix_1.scalar_parameters.{j}": v for j, v in enumerate([0.0, 0.0, 0.0])})
    parameters.update({f"{prefix}.scalar_mix_0.gamma": 2.0, "encoder.weight": 5.0})
    mixes = learned_mixes((name, torch.tensor([value])) for name, value in parameters.items())
    assert [(m.owner, m.representation) for m in mixes] == [(prefix, "input"), (prefix, "output")]
    assert mixes[0].weights == pytest.approx([0.25, 0.5, 0.25])
    assert mixes[1].weights == pytest.approx([1 / 3] * 3)
    assert (mixes[0].gamma, mixes[1].gamma) == (pytest.approx(2.0), 1.0)
    (only,) = learned_mixes([(f"{prefix}.scalar_mix_0.scalar_parameters.0", torch.tensor([0.3]))])
    assert (only.representation, only.weights) == ("input", [1.0])
    assert learned_mixes([("encoder.weight", torch.zeros(2))]) == []
