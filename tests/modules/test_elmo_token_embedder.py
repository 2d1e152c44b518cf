import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common import Params
from allennlp.modules.text_field_embedders import TextFieldEmbedder
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import RegularizerApplicator

from elmo_tasks.bilm import batch_to_ids, load_bilm
from elmo_tasks.modules import ElmoTokenEmbedder, elmo_at_output, find_elmo_embedder
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE

SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark", "loudly", "at", "night", "."]]


def _embedder(**kwargs) -> ElmoTokenEmbedder:
    kwargs.setdefault("dropout", 0.0)
    return ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, **kwargs)


def _layers():
    with torch.no_grad():
        return load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()(batch_to_ids(SENTENCES)).layers


def test_built_from_params_by_its_registered_name():
    embedder = TokenEmbedder.from_params(Params({"type": "fast_elmo", "options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE}))
    assert isinstance(embedder, ElmoTokenEmbedder) and embedder.get_output_dim() == 32


def test_default_mix_is_the_layer_average_times_gamma():
    out = _embedder()(batch_to_ids(SENTENCES))
    assert torch.allclose(out, sum(_layers()) / 3, atol=1e-6)


def test_fixed_layer_weights_top_only_and_average():
    layers = _layers()
    top = _embedder(fixed_layer_weights=[0, 0, 1])
    assert torch.allclose(top(batch_to_ids(SENTENCES)), layers[2], atol=1e-6)
    assert not any(p.requires_grad for p in top.parameters())
    average = _embedder(fixed_layer_weights=[1, 1, 1])
    assert torch.allclose(average(batch_to_ids(SENTENCES)), sum(layers) / 3, atol=1e-6)
    with pytest.raises(ValueError, match="needs 3 non-negative weights"):
        _embedder(fixed_layer_weights=[1, 1])


def test_several_representations_are_independent_mixes_of_one_pass():
    embedder = _embedder(num_output_representations=2)
    with torch.no_grad():
        embedder.scalar_mix_1.scalar_parameters[2].fill_(5.0)
    calls = []
    embedder.bilm.register_forward_hook(lambda *args: calls.append(1))
    first = embedder(batch_to_ids(SENTENCES))
    representations = embedder.take_representations()
    assert len(calls) == 1 and len(representations) == 2
    assert torch.equal(first, representations[0])
    assert not torch.allclose(representations[0], representations[1])
    with pytest.raises(RuntimeError, match="needs a new ELMo pass"):
        embedder.take_representations()  # handed over once: a stale read is an error
    # reachable from a model through its TextFieldEmbedder, checked in one place
    text_embedder = TextFieldEmbedder.from_params(Params({"token_embedders": {"elmo": {
        "type": "fast_elmo", "options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE, "num_output_representations": 2}}}))
    assert isinstance(find_elmo_embedder(text_embedder), ElmoTokenEmbedder)
    assert elmo_at_output(text_embedder, "my_model") is find_elmo_embedder(text_embedder)
    one_mix = TextFieldEmbedder.from_params(Params({"token_embedders": {"elmo": {
        "type": "fast_elmo", "options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE}}}))
    with pytest.raises(ConfigurationError, match="my_model: elmo_at_output=true .* found num_output_representations=1"):
        elmo_at_output(one_mix, "my_model")


def test_layer_norm_changes_the_mix_and_keeps_padding_finite():
    out = _embedder(do_layer_norm=True)(batch_to_ids(SENTENCES))
    assert torch.isfinite(out).all() and not torch.allclose(out, sum(_layers()) / 3, atol=1e-3)


def test_dropout_is_applied_in_training_only():
    embedder = _embedder(dropout=0.5)
    ids = batch_to_ids(SENTENCES)
    embedder.train()
    assert (embedder(ids) == 0).float().mean() > 0.3
    embedder.eval()
    assert torch.allclose(embedder(ids), sum(_layers()) / 3, atol=1e-6)


def test_frozen_by_default_and_fine_tuned_with_requires_grad():
    frozen = _embedder()
    frozen(batch_to_ids(SENTENCES)).sum().backward()
    assert all(p.grad is None for p in frozen.bilm.parameters())
    assert frozen.scalar_mix_0.gamma.grad is not None
    tuned = _embedder(requires_grad=True)
    tuned(batch_to_ids(SENTENCES)).sum().backward()
    assert tuned.bilm.layers[0].w_state.grad is not None and tuned.bilm.layers[0].w_state.grad.abs().sum() > 0


def test_mixing_weight_penalty_reaches_the_loss_through_the_regularizer_config():
    embedder = _embedder()
    with torch.no_grad():
        for i, value in enumerate([0.5, -1.0, 2.0]):
            embedder.scalar_mix_0.scalar_parameters[i].fill_(value)
    regularizer = RegularizerApplicator.from_params(Params(
        {"regexes": [[".*scalar_mix.*scalar_parameters.*", {"type": "l2", "alpha": 0.1}]]}))
    penalty = regularizer(embedder)
    assert torch.isclose(penalty, torch.tensor(0.1 * (0.25 + 1.0 + 4.0)))
    penalty.backward()
    assert torch.isclose(embedder.scalar_mix_0.scalar_parameters[2].grad, torch.tensor([0.4])).all()
    assert embedder.scalar_mix_0.gamma.grad is None  # gamma is not penalised


def test_cache_is_exact_and_skips_the_bilm_on_repeats():
    cached, plain = _embedder(), _embedder(cache_size_mb=0)
    ids = batch_to_ids(SENTENCES)
    first = cached(ids)
    calls = []
    cached.bilm.register_forward_hook(lambda *args: calls.append(1))
    mixed_order = batch_to_ids([SENTENCES[1], ["new", "words"], SENTENCES[0]])
    second = cached(mixed_order)
    assert len(calls) == 1  # only the new sentence ran
    assert torch.equal(first, plain(ids))
    assert torch.allclose(second, plain(mixed_order), atol=1e-6)
    assert cached.cache.hits == 2 and len(cached.cache) == 3


def test_cache_respects_its_budget():
    tiny = _embedder(cache_size_mb=1e-6)
    tiny(batch_to_ids(SENTENCES))
    assert len(tiny.cache) == 0 and tiny.cache.used_bytes == 0


def test_no_cache_when_fine_tuning_or_stateful():
    assert _embedder(requires_grad=True).cache is None
    assert _embedder(stateful=True).cache is None


def test_stateful_embedder_carries_state_between_batches():
    embedder = _embedder(stateful=True)
    ids = batch_to_ids(SENTENCES)
    first, second = embedder(ids), embedder(ids)
    assert not torch.allclose(first, second, atol=1e-4)
    embedder.bilm.reset_states()
    assert torch.allclose(embedder(ids), first, atol=1e-6)

