"""ESIM: output shapes, ELMo-at-output wiring, configuration errors, pinned numbers, and that it learns."""

import copy
from typing import Any, List, Union

import pytest
import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import Instance, Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward
from allennlp.modules.seq2seq_encoders import LstmSeq2SeqEncoder
from allennlp.nn import Activation

from elmo_tasks.modules import ElmoAtOutput
from elmo_tasks.tasks.snli.model import EsimElmo
from elmo_tasks.tasks.snli.reader import SnliJsonlReader
from tests.tasks.experiment_case import ExperimentModelTestCase
from tests.tasks.hand_built_models import fit, tensor_batch, token_indexers, words_and_elmo
from tests.tasks.pinned_outputs import CASES, check_pinned, fixture_batch

H = 8  # hidden size of both BiLSTMs
# Overrides that shrink experiments/snli_*.jsonnet for ModelTestCase: one key per size.
TINY_SNLI = {
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.encoder.hidden_size": 8,
    "model.projection_feedforward.hidden_dims": 8,
    "model.inference_encoder.hidden_size": 8,
    "model.output_feedforward.hidden_dims": 8,
    "dataset_reader.max_instances": 24,
    "trainer.num_epochs": 2,
}
PAIRS = [
    ("A man plays a guitar on stage.", "A man performs music.", "entailment"),
    ("Two dogs run in the snow.", "The cats are asleep.", "contradiction"),
    ("A woman reads a book.", "A woman reads a novel for school.", "neutral"),
    ("Kids play soccer in a park.", "Children are outside.", "entailment"),
]


def _instances(elmo: bool) -> List[Instance]:
    reader = SnliJsonlReader(token_indexers=token_indexers(elmo))
    return [reader.text_to_instance(p, h, label) for p, h, label in PAIRS]


def _model(
    vocab: Vocabulary, elmo: bool, elmo_at_output: bool, dropout: float = 0.5, attention_dropout: float = 0.0
) -> EsimElmo:
    return EsimElmo.from_partial_objects(
        vocab=vocab,
        text_field_embedder=words_and_elmo(vocab, 6, elmo),
        encoder=Lazy(LstmSeq2SeqEncoder, constructor_extras={"hidden_size": H, "bidirectional": True}),
        projection_feedforward=Lazy(
            FeedForward,
            constructor_extras={"num_layers": 1, "hidden_dims": H, "activations": Activation.by_name("relu")()},
        ),
        inference_encoder=Lazy(LstmSeq2SeqEncoder, constructor_extras={"hidden_size": H, "bidirectional": True}),
        output_feedforward=Lazy(
            FeedForward,
            constructor_extras={"num_layers": 1, "hidden_dims": H, "activations": Activation.by_name("tanh")()},
        ),
        elmo_at_output=elmo_at_output,
        dropout=dropout,
        attention_dropout=attention_dropout,
    )


# EsimElmo's arguments that are modules (the attributes it keeps them as).
ESIM_LAYERS = ("text_field_embedder", "encoder", "projection_feedforward", "inference_encoder", "output_feedforward")


def _esim_of_the_layers_of(model: EsimElmo, **settings: Any) -> EsimElmo:
    """A new ESIM over ``model``'s vocabulary, embedder, encoders and feedforwards, with ``settings``."""
    return EsimElmo(vocab=model.vocab, **{layer: getattr(model, layer) for layer in ESIM_LAYERS}, **settings)


@pytest.mark.parametrize("elmo", [False, True])
def test_forward_shapes_and_readable_output(elmo):
    instances = _instances(elmo)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=elmo, elmo_at_output=elmo).eval()
    output = model(**tensor_batch(instances, vocab))
    assert output["label_logits"].shape == (4, 3)
    assert torch.allclose(output["label_probs"].sum(-1), torch.ones(4))
    assert output["loss"].dim() == 0 and output["loss"].item() > 0
    readable = model.make_output_human_readable(output)
    names = vocab.get_index_to_token_vocabulary("labels")
    assert set(names.values()) == {"entailment", "neutral", "contradiction"}
    for row, label in zip(output["label_probs"], readable["label"], strict=True):
        assert label == names[int(row.argmax())]
    # The metric counts exactly the pairs whose most probable label is the gold one.
    gold = [label for _, _, label in PAIRS]
    expected = sum(label == truth for label, truth in zip(readable["label"], gold, strict=True)) / len(gold)
    assert model.get_metrics(reset=True)["accuracy"] == pytest.approx(expected)


def test_elmo_at_output_joins_the_input_encoders_output_before_the_attention():
    """A.3: ELMo "at the input and output of the lowest layer LSTM": mix 1 of each sentence is concatenated
    to the input encoder's output, so the attention, the enhancement and the projection read it; the
    inference composition and the pooled vector have their own width only."""
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True).eval()
    elmo = model._elmo_at_output.elmo
    assert elmo is model.text_field_embedder.token_embedder_elmo  # the embedder of the input, not a copy
    width = 2 * H + elmo.get_output_dim()
    assert model.projection_feedforward.get_input_dim() == 4 * width
    assert model.output_feedforward.get_input_dim() == 4 * 2 * H
    # Make the two mixes clearly different, so reading the wrong one would show.
    with torch.no_grad():
        elmo.scalar_mix_0.scalar_parameters[0].fill_(5.0)
        elmo.scalar_mix_1.scalar_parameters[2].fill_(5.0)
        elmo.scalar_mix_1.gamma.fill_(3.0)
    attended = {}

    def keep_inputs(module, inputs, output) -> None:  # returns None: the output is left alone
        attended["premise"], attended["hypothesis"] = inputs

    model.matrix_attention.register_forward_hook(keep_inputs)
    tensors = tensor_batch(instances, vocab)
    model(**tensors)
    hyp_mix0, hyp_mix1 = elmo.representations(tensors["hypothesis"]["elmo"]["elmo_tokens"])
    hyp_mask = (tensors["hypothesis"]["elmo"]["elmo_tokens"] > 0).any(-1)
    encoded_h = attended["hypothesis"]
    assert encoded_h.shape[-1] == width
    # [input encoder's output (2H); ELMo mix 1] at every word of the hypothesis
    assert torch.allclose(encoded_h[..., 2 * H :][hyp_mask], hyp_mix1[hyp_mask], atol=1e-5)
    assert not torch.allclose(encoded_h[..., 2 * H :][hyp_mask], hyp_mix0[hyp_mask], atol=1e-3)


def test_attention_dropout_drops_out_the_projections_input_only():
    """The paper's dropout after the attention: on the enhanced vectors the projection reads, in training
    only; with every other dropout off, a model with it differs from one without only there."""
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(3)
    model = _model(vocab, elmo=False, elmo_at_output=False, dropout=0.0, attention_dropout=0.5)
    projected = []
    model.projection_feedforward.register_forward_hook(lambda module, inputs, output: projected.append(inputs[0]))
    tensors = tensor_batch(instances, vocab)
    model.train()
    model(**tensors)
    model.eval()
    model(**tensors)
    trained, evaluated = projected[0], projected[2]  # the premises' enhanced vectors, training then evaluation
    kept = trained != 0
    assert 0.3 < kept[evaluated != 0].float().mean() < 0.7  # about half of the units dropped out
    assert torch.allclose(trained[kept], 2 * evaluated[kept])  # the others scaled by 1 / (1 - 0.5)
    without = _esim_of_the_layers_of(model, dropout=0.0).eval()
    without.output_logit = model.output_logit
    assert torch.equal(without(**tensors)["label_logits"], model(**tensors)["label_logits"])


def test_output_mix_gets_gradients():
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True)
    model(**tensor_batch(instances, vocab))["loss"].backward()
    for k in (0, 1):
        grads = [p.grad for p in getattr(model._elmo_at_output.elmo, f"scalar_mix_{k}").scalar_parameters]
        assert all(g is not None for g in grads) and any(g.abs().sum() > 0 for g in grads)


def test_elmo_at_output_without_two_mixes_is_a_clear_error():
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    with pytest.raises(ConfigurationError, match="num_output_representations >= 2"):
        _model(vocab, elmo=False, elmo_at_output=True)


def test_one_bilm_pass_per_sentence_serves_input_and_output():
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True).eval()
    passes = []
    model._elmo_at_output.elmo.bilm.register_forward_hook(lambda *args: passes.append(1))
    model(**tensor_batch(instances, vocab))
    assert len(passes) == 2  # the premises, then the hypotheses (4 distinct sentences each)


def test_a_config_builds_elmo_at_output_once(monkeypatch):
    """from_partial_objects finds and checks the ELMo embedder once, sizes the output layers by it and
    hands it to the model."""
    from elmo_tasks.modules import elmo_at_output as module

    found = []
    find = module._the_elmo_embedder
    monkeypatch.setattr(module, "_the_elmo_embedder", lambda *args: found.append(1) or find(*args))
    model_params, instances = fixture_batch("snli_elmo.jsonnet", CASES["snli"]["elmo_input_output"][1])
    model = Model.from_params(vocab=Vocabulary.from_instances(instances), params=model_params)
    assert len(found) == 1 and model._elmo_at_output.elmo is model.text_field_embedder.token_embedder_elmo


def test_the_state_dict_lists_elmo_once_and_archives_with_it_twice_still_load():
    """Before ElmoAtOutput the model also held the ELMo embedder as ``_elmo``, so its archives list the
    embedder's tensors twice; they load, and the model's own state dict has them once."""
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True).eval()
    state = model.state_dict()
    assert not [key for key in state if key.startswith("_elmo.")]
    prefix = "text_field_embedder.token_embedder_elmo."
    old_state = {
        **state,
        **{"_elmo." + key[len(prefix) :]: value for key, value in state.items() if key.startswith(prefix)},
    }
    old_state[prefix + "scalar_mix_1.gamma"] = torch.tensor([2.5])
    old_state["_elmo.scalar_mix_1.gamma"] = torch.tensor([2.5])
    fresh = _model(vocab, elmo=True, elmo_at_output=True).eval()
    fresh.load_state_dict(old_state)  # strict, as AllenNLP's checks are
    assert fresh._elmo_at_output.elmo.scalar_mix_1.gamma.item() == 2.5
    tensors = tensor_batch(instances, vocab)
    model.text_field_embedder.token_embedder_elmo.scalar_mix_1.gamma.data.fill_(2.5)
    assert torch.equal(fresh(**tensors)["label_logits"], model(**tensors)["label_logits"])


def test_elmo_at_output_must_read_the_models_own_embedder():
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True)
    other = _model(vocab, elmo=True, elmo_at_output=True)

    def rebuilt_with(elmo_at_output: Union[ElmoAtOutput, bool]) -> EsimElmo:
        """An ESIM of ``model``'s own embedder and layers, reading ELMo at the output through ``elmo_at_output``."""
        return _esim_of_the_layers_of(model, elmo_at_output=elmo_at_output)

    with pytest.raises(ConfigurationError, match="reads another text_field_embedder than the model's"):
        rebuilt_with(other._elmo_at_output)
    # The same embedder's ElmoAtOutput, or true (built here), is accepted.
    for choice in (model._elmo_at_output, True):
        rebuilt = rebuilt_with(choice)
        assert isinstance(rebuilt._elmo_at_output, ElmoAtOutput)
        assert rebuilt._elmo_at_output.elmo is model.text_field_embedder.token_embedder_elmo


@pytest.mark.parametrize("case", sorted(CASES["snli"]))
def test_outputs_and_gradients_are_the_pinned_ones(case):
    """The numbers the model computed before ELMo at the output became explicit (tests/tasks/pinned_outputs.py)."""
    check_pinned("snli", case)


def test_loss_decreases_on_a_tiny_batch():
    torch.manual_seed(0)
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=False, elmo_at_output=False, dropout=0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = fit(model, tensor_batch(instances, vocab), optimizer, steps=30)
    assert losses[-1] < 0.3 * losses[0]
    assert model.get_metrics()["accuracy"] > 0.5


def test_matrix_attention_is_injectable():
    """A bilinear matrix attention from a config replaces the default dot product."""
    from allennlp.common import Params
    from allennlp.models import Model
    from allennlp.modules.matrix_attention import BilinearMatrixAttention, DotProductMatrixAttention

    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    params = {
        "type": "esim_elmo",
        "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}},
        "encoder": {"type": "lstm", "hidden_size": H, "bidirectional": True},
        "projection_feedforward": {"hidden_dims": H, "num_layers": 1, "activations": "relu"},
        "inference_encoder": {"type": "lstm", "hidden_size": H, "bidirectional": True},
        "output_feedforward": {"hidden_dims": H, "num_layers": 1, "activations": "tanh"},
    }
    default = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(params)))
    assert isinstance(default.matrix_attention, DotProductMatrixAttention)
    bilinear = {"type": "bilinear", "matrix_1_dim": 2 * H, "matrix_2_dim": 2 * H}
    model = Model.from_params(vocab=vocab, params=Params({**params, "matrix_attention": bilinear}))
    assert isinstance(model.matrix_attention, BilinearMatrixAttention)
    # The injected attention takes part: changing its weights changes the predictions.
    model.eval()
    tensors = tensor_batch(instances, vocab)
    before = model(**tensors)["label_probs"]
    with torch.no_grad():
        model.matrix_attention._weight_matrix.normal_(std=3.0)
    assert not torch.allclose(before, model(**tensors)["label_probs"])


def test_one_override_changes_one_size():
    """The encoder's hidden size alone: every width that depends on it follows."""
    import tempfile
    from pathlib import Path

    from allennlp.common import Params
    from allennlp.models import Model

    from tests.tasks.experiment_case import write_tiny_config

    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    with tempfile.TemporaryDirectory() as tmp:
        config = write_tiny_config("snli_baseline.jsonnet", {"model.encoder.hidden_size": 20}, Path(tmp))
        model = Model.from_params(vocab=vocab, params=Params.from_file(config)["model"])
    assert model.encoder.get_output_dim() == 40
    assert model.projection_feedforward.get_input_dim() == 4 * 40
    assert model.inference_encoder.get_output_dim() == 2 * 32  # its own size, unchanged


class TestEsimModelCase(ExperimentModelTestCase):
    """AllenNLP's model checks on the real SNLI configs, shrunk to 8-d layers and 24 pairs."""

    @pytest.mark.parametrize(
        "variant, overrides",
        [("baseline", {}), ("elmo", {}), ("elmo", CASES["snli"]["elmo_input_output"][1])],
        ids=["baseline", "elmo", "elmo_input_output"],
    )
    def test_train_save_load_and_batch_consistency(self, variant, overrides):
        self.check_experiment(f"snli_{variant}.jsonnet", {**TINY_SNLI, **overrides})
