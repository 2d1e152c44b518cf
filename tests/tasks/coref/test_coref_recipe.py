"""The pieces of Lee et al. (2017)'s recipe that the `full` configs add: the learning rate decayed every
100 updates, the dropout on the BiLSTM and on the feature embeddings, and the recipe's model (their BiLSTM,
pruning and head attention included) and trainer trained, saved and reloaded by AllenNLP's model checks."""

import json
import os
from pathlib import Path

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Vocabulary
from allennlp.training.learning_rate_schedulers import LearningRateScheduler

from elmo_tasks.allennlp_internals import head_attention
from elmo_tasks.tasks.coref import antecedents as ranking
from elmo_tasks.tasks.coref import model as coref_model
from elmo_tasks.tasks.coref.learning_rate import StaircaseExponentialLR
from elmo_tasks.tasks.coref.mention_scores import first_layer_of_spans, mention_layer_parts
from tests.conftest import ROOT
from tests.tasks.coref.test_coref_mention_scores import CONTEXT_DIM, EMBEDDING_DIM, TOKENS, _mention_modules, _spans
from tests.tasks.coref.test_coref_model import TINY_COREF, ZERO_GRADIENT, _instances, small_coref_model
from tests.tasks.experiment_case import ExperimentModelTestCase, write_tiny_config


def _recipe_config(experiment: str) -> dict:
    """``experiments/<experiment>`` as `full` mode resolves it (the paper's recipe), shrunk by TINY_COREF."""
    env = {**os.environ, "ELMO_TASKS_DATA": "full"}
    return Params.from_file(str(ROOT / "experiments" / experiment), json.dumps(TINY_COREF), ext_vars=env).as_dict()


# ---- the learning-rate schedule -------------------------------------------------------------------


def _scheduler(**settings) -> StaircaseExponentialLR:
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=0.001)
    params = Params({"type": "staircase_exponential", "decay_rate": 0.999, "decay_steps": 100, **settings})
    scheduler = LearningRateScheduler.from_params(optimizer=optimizer, params=params)
    assert isinstance(scheduler, StaircaseExponentialLR)
    return scheduler


def _rate(scheduler: StaircaseExponentialLR) -> float:
    return scheduler.optimizer.param_groups[0]["lr"]


def test_the_rate_drops_by_the_factor_after_every_100_updates_and_not_at_epoch_ends():
    """Lee et al.'s TensorFlow schedule: update n (from 1) has 0.001 * 0.999 ** ((n - 1) // 100)."""
    scheduler = _scheduler()
    rates = {}
    for update in range(1, 302):  # up to the first update of the fourth hundred
        scheduler.step_batch(update)  # what AllenNLP's trainer does before update n
        rates[update] = _rate(scheduler)
        if update % 37 == 0:
            scheduler.step(0.5)  # an epoch's end: no change
            assert _rate(scheduler) == rates[update]
    assert rates[1] == rates[100] == pytest.approx(0.001)
    assert rates[101] == rates[200] == pytest.approx(0.001 * 0.999)
    assert rates[201] == rates[300] == pytest.approx(0.001 * 0.999**2)
    assert rates[301] == pytest.approx(0.001 * 0.999**3)


def test_a_recovered_run_goes_on_with_the_rate_of_its_update_count():
    scheduler = _scheduler()
    scheduler.step_batch(1234)
    assert _rate(scheduler) == pytest.approx(0.001 * 0.999**12)


@pytest.mark.parametrize("settings", [{"decay_rate": 1.5}, {"decay_rate": 0.0}, {"decay_steps": 0}])
def test_settings_out_of_range_are_refused(settings):
    with pytest.raises(ConfigurationError, match="staircase_exponential"):
        _scheduler(**settings)


def test_the_recipe_configs_schedule_is_lee_et_al_s():
    trainer = _recipe_config("coref_elmo.jsonnet")["trainer"]
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=trainer["optimizer"]["lr"])
    scheduler = LearningRateScheduler.from_params(
        optimizer=optimizer, params=Params(trainer["learning_rate_scheduler"])
    )
    scheduler.step_batch(101)
    assert _rate(scheduler) == pytest.approx(0.001 * 0.999)


# ---- dropout on the BiLSTM and on the feature embeddings ------------------------------------------


def test_a_span_width_dropped_out_is_the_ffnn_on_g_i_with_its_width_embedding_masked():
    """With a dropout mask per span on its width embedding, the mention layer by parts equals the first
    layer on the extractors' g_i whose width columns are multiplied by that mask."""
    endpoint, attentive, feedforward, _ = _mention_modules(torch.float64)
    contextual = torch.randn(2, TOKENS, CONTEXT_DIM, dtype=torch.float64)
    embedded = torch.randn(2, TOKENS, EMBEDDING_DIM, dtype=torch.float64)
    document_mask = torch.ones(2, TOKENS, dtype=torch.bool)
    spans, span_mask = _spans(2, 30, seed=4)
    width_dim = endpoint._span_width_embedding.get_output_dim()
    width_keep = (torch.rand(2, 30, width_dim, generator=torch.Generator().manual_seed(5)) > 0.5).double() * 2
    endpoints = endpoint(contextual, spans, document_mask, span_mask)
    endpoints = torch.cat([endpoints[..., :-width_dim], endpoints[..., -width_dim:] * width_keep], dim=-1)
    g = torch.cat([endpoints, attentive(embedded, spans, document_mask, span_mask)], dim=-1)
    expected = feedforward.first_layer(g) * span_mask.unsqueeze(-1)
    parts = mention_layer_parts(
        endpoint, feedforward.first_layer, contextual, embedded, head_attention(attentive)(embedded)
    )
    found = first_layer_of_spans(parts, spans, width_keep) * span_mask.unsqueeze(-1)
    assert torch.allclose(found, expected, atol=1e-12)
    assert not torch.allclose(first_layer_of_spans(parts, spans) * span_mask.unsqueeze(-1), expected)


@pytest.fixture(scope="module")
def document():
    instances = _instances(elmo=False)[:1]
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    return vocab, batch.as_tensor_dict()


def test_each_kept_span_keeps_the_width_mask_of_its_mention_score_and_pair_features_are_dropped(document, monkeypatch):
    vocab, tensors = document
    torch.manual_seed(0)
    model = small_coref_model(vocab, elmo=False, feature_dropout=0.5, context_dropout=0.5).train()
    seen = {}
    first_layer, embed, score_pairs = coref_model.first_layer_of_spans, model._embed_spans, ranking.score_pairs

    def first_layer_seen(parts, spans, width_keep=None):
        seen["candidates"] = width_keep
        return first_layer(parts, spans, width_keep)

    def embed_seen(*args):
        seen["kept"] = args[-1]  # the kept spans' width mask
        return embed(*args)

    def score_pairs_seen(*args):
        seen["features"] = args[4]
        return score_pairs(*args)

    monkeypatch.setattr(coref_model, "first_layer_of_spans", first_layer_seen)
    monkeypatch.setattr(model, "_embed_spans", embed_seen)
    monkeypatch.setattr(ranking, "score_pairs", score_pairs_seen)
    output = model(**tensors)
    output["loss"].backward()
    candidates, kept, features = seen["candidates"], seen["kept"], seen["features"]
    # one mask per candidate span: zeros and 1 / (1 - 0.5), about half each
    assert set(candidates.unique().tolist()) == {0.0, 2.0} and 0.3 < (candidates == 0).float().mean() < 0.7
    top_spans = output["top_spans"]
    spans = tensors["spans"]
    for row, (start, end) in enumerate(top_spans[0].tolist()):
        candidate = ((spans[0, :, 0] == start) & (spans[0, :, 1] == end)).nonzero()[0, 0]
        assert torch.equal(kept[0, row], candidates[0, candidate])
    assert 0.3 < (features == 0).float().mean() < 0.7


def test_in_evaluation_and_at_rate_0_nothing_is_dropped(document):
    vocab, tensors = document
    torch.manual_seed(0)
    model = small_coref_model(vocab, elmo=False, feature_dropout=0.5, context_dropout=0.5)
    assert model.eval()._width_keep(tensors["spans"]) is None
    torch.manual_seed(0)
    without = small_coref_model(vocab, elmo=False).train()
    assert without._width_keep(tensors["spans"]) is None
    with torch.no_grad():
        first, second = without(**tensors)["loss"], without(**tensors)["loss"]
    assert first == second  # no dropout draws: training mode is deterministic


def test_dropout_rates_out_of_range_are_refused(document):
    vocab, _ = document
    with pytest.raises(ConfigurationError, match="feature_dropout 1.0"):
        small_coref_model(vocab, elmo=False, feature_dropout=1.0)


def test_the_recipe_configs_bilstm_drops_out_its_recurrent_state():
    model = _recipe_config("coref_baseline.jsonnet")["model"]
    assert model["context_layer"]["type"] == "coupled_gate_lstm"
    assert (model["context_layer"]["recurrent_dropout_probability"], model["context_dropout"]) == (0.2, 0.2)


# ---- the recipe's model and trainer through AllenNLP's model checks -----------------------------------


class TestCorefRecipeModelCase(ExperimentModelTestCase):
    """The `full` configs' model and trainer (the paper's recipe), shrunk, on the fixture data."""

    @pytest.mark.parametrize("variant", ["baseline", "elmo"])
    def test_train_save_load_and_batch_consistency(self, variant: str) -> None:
        experiment = f"coref_{variant}.jsonnet"
        recipe = _recipe_config(experiment)
        param_file = write_tiny_config(
            experiment, {"model": recipe["model"], "trainer": recipe["trainer"]}, Path(self.TEST_DIR)
        )
        self.set_up_model(Path(param_file), json.loads(Path(param_file).read_text())["validation_data_path"], seed=0)
        self.ensure_model_can_train_save_and_load(param_file, gradients_to_ignore=ZERO_GRADIENT)
        self.ensure_batch_predictions_are_consistent()
