import numpy as np
import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules.text_field_embedders import TextFieldEmbedder
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import RegularizerApplicator

from elmo_tasks.bilm import batch_to_ids, load_bilm
from elmo_tasks.config_defaults import MIXING_WEIGHTS_REGEX
from elmo_tasks.modules import ElmoAtOutput, ElmoTokenEmbedder, find_elmo_embedder
from elmo_tasks.modules.elmo_at_output import accept_state_dicts_with_elmo_twice
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE

SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark", "loudly", "at", "night", "."]]


def _embedder(**kwargs) -> ElmoTokenEmbedder:
    kwargs.setdefault("dropout", 0.0)
    return ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, **kwargs)


def _layers():
    with torch.no_grad():
        return load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()(batch_to_ids(SENTENCES)).layers


def test_built_from_params_by_its_registered_name():
    embedder = TokenEmbedder.from_params(
        Params({"type": "fast_elmo", "options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE})
    )
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
    with pytest.raises(ConfigurationError, match="needs 3 non-negative weights"):
        _embedder(fixed_layer_weights=[1, 1])


def _text_embedder(*elmo_mixes: int, tokens: bool = False) -> TextFieldEmbedder:
    """A basic text field embedder with one fast_elmo embedder per entry of ``elmo_mixes`` (its
    num_output_representations), named elmo, elmo2, ..., and 4-d word vectors if ``tokens``."""
    embedders = {
        "elmo" if k == 0 else f"elmo{k + 1}": {
            "type": "fast_elmo",
            "options_file": OPTIONS_FILE,
            "weight_file": WEIGHT_FILE,
            "dropout": 0.0,
            "num_output_representations": mixes,
        }
        for k, mixes in enumerate(elmo_mixes)
    }
    if tokens:
        embedders["tokens"] = {"type": "embedding", "embedding_dim": 4, "num_embeddings": 10}
    return TextFieldEmbedder.from_params(Params({"token_embedders": embedders}))


def test_several_representations_are_independent_mixes_of_one_pass():
    embedder = _embedder(num_output_representations=2, cache_size_mb=0)  # no cache: every call runs the biLM
    with torch.no_grad():
        embedder.scalar_mix_1.scalar_parameters[2].fill_(5.0)
    calls = []
    embedder.bilm.register_forward_hook(lambda *args: calls.append(1))
    representations = embedder.representations(batch_to_ids(SENTENCES))
    assert len(calls) == 1 and len(representations) == 2
    assert not torch.allclose(representations[0], representations[1])
    # forward is representation 0, computed again, or taken from representations of the same text
    assert torch.equal(embedder(batch_to_ids(SENTENCES)), representations[0]) and len(calls) == 2
    assert embedder(batch_to_ids(SENTENCES), elmo_representations=representations) is representations[0]
    assert len(calls) == 2
    with pytest.raises(ValueError, match=r"representations of these elmo_tokens, shaped \(1, 4\)"):
        embedder(batch_to_ids(SENTENCES[:1]), elmo_representations=representations)  # another text's


def test_elmo_at_output_embeds_as_the_text_field_embedder_and_adds_the_output_mix():
    text_embedder = _text_embedder(2, tokens=True)
    elmo = find_elmo_embedder(text_embedder)
    with torch.no_grad():
        elmo.scalar_mix_1.scalar_parameters[0].fill_(5.0)
    text = {
        "elmo": {"elmo_tokens": batch_to_ids(SENTENCES)},
        "tokens": {"tokens": torch.tensor([[1, 2, 3, 4, 0, 0], [5, 6, 7, 8, 9, 1]])},
    }
    calls = []
    elmo.bilm.register_forward_hook(lambda *args: calls.append(1))
    elmo_at_output = ElmoAtOutput(text_embedder, "my_model")
    assert elmo_at_output.elmo is elmo and elmo_at_output.indexer_name == "elmo"
    assert elmo_at_output.get_output_dim() == 32
    embedded, output_mix = elmo_at_output.embed(text)
    assert len(calls) == 1  # one biLM pass for both
    assert torch.equal(embedded, text_embedder(text))  # [ELMo mix 0; word vectors], as without it
    assert torch.equal(output_mix, elmo.representations(text["elmo"]["elmo_tokens"])[1])
    assert not torch.allclose(output_mix, embedded[..., :32])
    assert ElmoAtOutput.for_model(False, text_embedder, "my_model") is None
    assert ElmoAtOutput.for_model(elmo_at_output, text_embedder, "my_model") is elmo_at_output


@pytest.mark.parametrize(
    "mixes, found",
    [((), "no 'fast_elmo' embedder"), ((1,), "num_output_representations=1"), ((2, 2), "2 of them \\(elmo, elmo2\\)")],
)
def test_elmo_at_output_says_what_to_change(mixes, found):
    text_embedder = _text_embedder(*mixes, tokens=True)
    with pytest.raises(ConfigurationError, match=f"my_model: elmo_at_output=true .* found {found}. Set num_output"):
        ElmoAtOutput(text_embedder, "my_model")


def test_elmo_at_output_needs_a_basic_text_field_embedder():
    with pytest.raises(ConfigurationError, match="needs a 'basic' text_field_embedder"):
        ElmoAtOutput(_embedder(num_output_representations=2), "my_model")


def test_state_dicts_with_elmo_twice_load_without_the_second_copy():
    model = torch.nn.Module()
    model.text_field_embedder = _text_embedder(2)
    accept_state_dicts_with_elmo_twice(model)
    state = model.state_dict()
    inner = "text_field_embedder.token_embedder_elmo."
    twice = {**state, **{"_elmo." + key[len(inner) :]: value for key, value in state.items()}}
    assert len(twice) == 2 * len(state)
    loaded = model.load_state_dict(twice, strict=True)
    assert loaded.missing_keys == [] and loaded.unexpected_keys == []
    with pytest.raises(RuntimeError, match="Unexpected key"):
        plain = torch.nn.Module()
        plain.text_field_embedder = _text_embedder(2)
        plain.load_state_dict(twice)


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
    regularizer = RegularizerApplicator.from_params(
        Params({"regexes": [[MIXING_WEIGHTS_REGEX, {"type": "l2", "alpha": 0.1}]]})
    )
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


# ---- AllenNLP's elmo_token_embedder arguments and input shapes --------------------------------


def _texts_per_instance():
    """Character ids (2 instances, 2 texts, tokens, 50), the second text of instance 1 empty."""
    texts = [[SENTENCES[0], ["Cats", "purr"]], [SENTENCES[1], []]]
    longest = max(len(t) for instance in texts for t in instance)
    ids = torch.zeros(2, 2, longest, 50, dtype=torch.long)
    for i, instance in enumerate(texts):
        for j, text in enumerate(instance):
            if text:
                ids[i, j, : len(text)] = batch_to_ids([text])[0]
    return ids


@pytest.mark.parametrize("cache_size_mb", [0, 1024])
def test_4d_input_with_and_without_the_layer_cache(cache_size_mb):
    ids = _texts_per_instance()
    embedder = _embedder(cache_size_mb=cache_size_mb)
    out = embedder(ids)
    flat = _embedder(cache_size_mb=0)(ids.view(4, ids.shape[2], 50))
    assert out.shape == (2, 2, ids.shape[2], 32)
    assert torch.allclose(out.view(4, ids.shape[2], 32), flat, atol=1e-6)
    assert out[1, 1].abs().sum() == 0
    if cache_size_mb:
        assert torch.allclose(embedder(ids), out, atol=1e-6) and embedder.cache.hits == 4


def test_projection_dim_projects_3d_and_4d_outputs():
    embedder = _embedder(projection_dim=7)
    assert embedder.get_output_dim() == 7
    ids = batch_to_ids(SENTENCES)
    out = embedder(ids)
    assert out.shape == (2, 6, 7)
    unprojected = sum(_layers()) / 3
    assert torch.allclose(out, embedder.projection(unprojected), atol=1e-6)
    assert embedder(_texts_per_instance()).shape[-1] == 7
    out.sum().backward()
    assert embedder.projection.weight.grad is not None


def _numpy_layer_norm_mix(layers, statistics_mask, weights, gamma):
    """gamma * sum_j w_j (h_j - mean_j) / sqrt(var_j + eps), mean and var over statistics_mask."""
    keep = statistics_mask[..., None].astype(np.float64)
    count = keep.sum() * layers[0].shape[-1]
    total = 0.0
    for weight, layer in zip(weights, layers, strict=True):
        layer = layer.astype(np.float64)
        mean = (layer * keep).sum() / count
        variance = (((layer - mean) * keep) ** 2).sum() / count
        total = total + weight * (layer - mean) / np.sqrt(variance + 1e-12)
    return gamma * total


@pytest.mark.parametrize("style", ["bilm_tf", "allennlp"])
def test_layer_norm_statistics_follow_the_named_style(style):
    embedder = _embedder(do_layer_norm=True, layer_norm_style=style, scalar_mix_parameters=[0.3, -0.2, 0.5])
    ids = batch_to_ids(SENTENCES)
    out = embedder(ids).detach().numpy()
    with torch.no_grad():
        full = load_bilm(OPTIONS_FILE, WEIGHT_FILE)(ids, keep_boundaries=True)
    layers = [layer.numpy() for layer in full.layers]
    full_mask = full.mask.numpy()
    token_mask = (ids > 0).any(dim=-1).numpy()
    if style == "bilm_tf":  # the real tokens only (bilm-tf's weight_layers)
        statistics_mask = np.zeros_like(full_mask)
        statistics_mask[:, 1:-1] = token_mask
    else:  # the boundaries too (AllenNLP's Elmo)
        statistics_mask = full_mask
    weights = np.exp([0.3, -0.2, 0.5]) / np.exp([0.3, -0.2, 0.5]).sum()
    expected = _numpy_layer_norm_mix(layers, statistics_mask, weights, 1.0)[:, 1:-1] * token_mask[..., None]
    assert np.abs(out - expected).max() < 1e-5
    other = "allennlp" if style == "bilm_tf" else "bilm_tf"
    other_out = _embedder(do_layer_norm=True, layer_norm_style=other, scalar_mix_parameters=[0.3, -0.2, 0.5])(ids)
    assert np.abs(other_out.detach().numpy() - expected).max() > 1e-3  # the styles really differ
    assert (out[~token_mask] == 0).all()  # padding stays zero


def test_layer_norm_style_is_checked():
    with pytest.raises(ConfigurationError, match="layer_norm_style must be one of"):
        _embedder(layer_norm_style="tf")


def test_vocab_to_cache_a_namespace_from_the_model_vocabulary():
    from allennlp.data import Vocabulary

    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["The", "cat", "sat"], "tokens")
    embedder = TokenEmbedder.from_params(
        vocab=vocab,
        params=Params(
            {
                "type": "fast_elmo",
                "options_file": OPTIONS_FILE,
                "weight_file": WEIGHT_FILE,
                "dropout": 0.0,
                "vocab_to_cache": "tokens",
                "cache_size_mb": 0,
            }
        ),
    )
    ids = batch_to_ids(SENTENCES)
    assert torch.allclose(embedder(ids), sum(_layers()) / 3, atol=1e-6)
    word_cache = embedder.bilm.token_encoder.word_cache
    assert word_cache.hits == 5 and word_cache.misses == 6  # <S> </S> The cat sat | . Dogs bark loudly at night
    with pytest.raises(ConfigurationError, match="no namespace 'words'"):
        ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, vocab_to_cache="words", vocab=vocab)
    with pytest.raises(ConfigurationError, match="no vocabulary was given"):
        ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, vocab_to_cache="tokens")


def test_vocab_to_cache_is_not_used_while_fine_tuning(caplog):
    embedder = _embedder(vocab_to_cache=["The"], requires_grad=True)
    assert embedder.word_cache is None and embedder.bilm.token_encoder.word_cache is None
    assert "ignored while fine-tuning" in caplog.text
