"""``elmo_tasks.modules.Elmo`` checked for the behaviours AllenNLP's own elmo_test.py checks
(reference outputs, shapes, boundaries, 4-D input, custom module, requires_grad, the word
cache) and against AllenNLP's ``Elmo`` itself on the same weights."""

import json

import h5py
import numpy as np
import pytest
import torch
from allennlp.common import Params
from allennlp.modules.elmo import Elmo as AllenNlpElmo

from elmo_tasks.bilm import batch_to_ids, load_bilm
from elmo_tasks.modules import Elmo
from tests.conftest import BILM_TF, FIXTURES_ROOT, OPTIONS_FILE, WEIGHT_FILE

# AllenNLP's ELMo needs residual connections: the same weights with them switched on.
SKIP_OPTIONS = str(FIXTURES_ROOT / "migrating" / "bilm_tf_options_with_skip.json")
SENTENCES = [["The", "sentence", "."], ["ELMo", "helps", "disambiguate", "ELMo", "from", "Elmo", "."]]
TOP_ONLY = [-9e10, -9e10, 1.0]


def _reference_batches():
    with open(BILM_TF / "lm_embeddings_sentences.json") as handle:
        streams = json.load(handle)
    for i in range(10):
        expected = []
        for k in range(3):
            with h5py.File(BILM_TF / f"lm_embeddings_{k}.hdf5", "r") as f:
                expected.append(np.concatenate(f[str(i)][...], axis=-1))
        yield [streams[k][i].split() for k in range(3)], expected


def test_stateful_by_default_and_reproduces_bilm_tf_reference_outputs():
    elmo = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, scalar_mix_parameters=TOP_ONLY)
    assert elmo.bilm.stateful and elmo.cache is None
    worst = 0.0
    for batch, expected in _reference_batches():
        output = elmo(batch_to_ids(batch))
        top, mask = output["elmo_representations"][0], output["mask"]
        assert mask.sum(dim=1).tolist() == [len(s) for s in batch]
        for k, sentence in enumerate(batch):
            worst = max(worst, float(np.abs(top[k, : len(sentence)].detach().numpy() - expected[k]).max()))
    assert worst < 1e-5
    stateless = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, scalar_mix_parameters=TOP_ONLY, stateful=False)
    batches = list(_reference_batches())
    stateless(batch_to_ids(batches[0][0]))
    second = stateless(batch_to_ids(batches[1][0]))["elmo_representations"][0]
    assert np.abs(second[0, : len(batches[1][0][0])].detach().numpy() - batches[1][1][0]).max() > 1e-3


def test_output_dict_shapes_and_output_dim():
    elmo = Elmo(OPTIONS_FILE, WEIGHT_FILE, 2)
    output = elmo(batch_to_ids(SENTENCES))
    assert len(output["elmo_representations"]) == 2
    assert all(list(r.shape) == [2, 7, 32] for r in output["elmo_representations"])
    assert list(output["mask"].shape) == [2, 7] and output["mask"].sum().item() == 10
    assert elmo.get_output_dim() == 32


def test_keep_sentence_boundaries_adds_the_two_positions():
    kept = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, keep_sentence_boundaries=True, stateful=False)
    plain = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, stateful=False)
    ids = batch_to_ids(SENTENCES)
    with_boundaries, without = kept(ids), plain(ids)
    assert list(with_boundaries["elmo_representations"][0].shape) == [2, 9, 32]
    assert with_boundaries["mask"].sum(dim=1).tolist() == [5, 9]
    inner = with_boundaries["elmo_representations"][0][:, 1:8] * without["mask"].unsqueeze(-1)
    assert torch.allclose(inner, without["elmo_representations"][0], atol=1e-6)
    # the boundary rows are the biLM's <S> / </S> vectors, not zeros
    assert with_boundaries["elmo_representations"][0][0, 0].abs().sum() > 0
    assert with_boundaries["elmo_representations"][0][0, 4].abs().sum() > 0  # </S> after 3 tokens


@pytest.mark.parametrize("stateful", [False, True])
def test_4d_input_equals_the_flattened_batch(stateful):
    texts = [[["The", "cat"], ["sat", "on", "the", "mat"]], [["Dogs"], []]]
    flat = [t for instance in texts for t in instance]
    longest = max(len(t) for t in flat)
    ids = torch.zeros(2, 2, longest, 50, dtype=torch.long)
    for i, instance in enumerate(texts):
        for j, text in enumerate(instance):
            if text:
                ids[i, j, : len(text)] = batch_to_ids([text])[0]
    elmo4 = Elmo(OPTIONS_FILE, WEIGHT_FILE, 2, dropout=0.0, stateful=stateful)
    elmo3 = Elmo(OPTIONS_FILE, WEIGHT_FILE, 2, dropout=0.0, stateful=stateful)
    out4, out3 = elmo4(ids), elmo3(ids.view(4, longest, 50))
    assert list(out4["mask"].shape) == [2, 2, longest] and out4["mask"].sum(dim=-1).tolist() == [[2, 4], [1, 0]]
    for r4, r3 in zip(out4["elmo_representations"], out3["elmo_representations"], strict=True):
        assert list(r4.shape) == [2, 2, longest, 32]
        assert torch.allclose(r4.view(4, longest, 32), r3, atol=1e-6)
        assert r4[1, 1].abs().sum() == 0  # the empty text is all padding


def test_custom_module_with_allennlp_interface():
    class ConstantLayers(torch.nn.Module):
        num_layers = 2

        def get_output_dim(self) -> int:
            return 4

        def forward(self, inputs, word_inputs=None):
            mask = torch.ones(inputs.shape[0], inputs.shape[1] + 2, dtype=torch.bool)
            layer = torch.arange(inputs.shape[1] + 2.0).view(1, -1, 1).expand(inputs.shape[0], -1, 4)
            return {"activations": [layer, 3 * layer], "mask": mask}

    elmo = Elmo(None, None, 1, dropout=0.0, module=ConstantLayers(), scalar_mix_parameters=[0.0, 0.0])
    output = elmo(batch_to_ids([["a", "b"]]))["elmo_representations"][0]
    # equal weights: (t + 3t) / 2 = 2t at boundary-stripped position t = 1, 2
    assert torch.allclose(output[0, :, 0], torch.tensor([2.0, 4.0]))
    assert elmo.get_output_dim() == 4
    with pytest.raises(Exception, match="either module or options_file"):
        Elmo(OPTIONS_FILE, None, 1, module=ConstantLayers())


def test_requires_grad_reaches_the_bilm_only_when_asked():
    for requires_grad in (False, True):
        elmo = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, requires_grad=requires_grad)
        elmo(batch_to_ids(SENTENCES))["elmo_representations"][0].sum().backward()
        bilm_grads = [p.grad for p in elmo.bilm.parameters()]
        assert all(p.requires_grad == requires_grad for p in elmo.bilm.parameters())
        assert all(g is not None for g in bilm_grads) == requires_grad
        assert elmo.scalar_mix_0.gamma.grad is not None


def test_word_cache_gives_the_character_path_vectors_and_skips_known_words():
    known = ["The", "sentence", ".", "ELMo"]
    cached = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, vocab_to_cache=known, stateful=False, cache_size_mb=0)
    plain = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, stateful=False, cache_size_mb=0)
    encoded = []
    original = cached.bilm.token_encoder.encode_words
    cached.bilm.token_encoder.encode_words = lambda words: encoded.append(words.shape[0]) or original(words)
    ids = batch_to_ids(SENTENCES)
    a, b = cached(ids)["elmo_representations"][0], plain(ids)["elmo_representations"][0]
    assert torch.allclose(a, b, atol=1e-6)
    # first call builds the 6 cached vectors (4 words + <S> + </S>); then only the 4 distinct
    # unknown words (helps, disambiguate, from, Elmo) go through the character CNN
    assert encoded == [6, 4]
    word_cache = cached.bilm.word_cache
    assert (word_cache.hits, word_cache.misses) == (6, 4)
    # AllenNLP's word_inputs argument is accepted and changes nothing
    word_ids = torch.tensor([[2, 3, 4, 0, 0, 0, 0], [5, 1, 1, 5, 1, 1, 4]])
    assert torch.allclose(cached(ids, word_ids)["elmo_representations"][0], b, atol=1e-6)


def test_word_cache_from_a_vocabulary_namespace_in_a_config():
    from allennlp.data import Vocabulary

    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["The", "sentence"], "tokens")
    elmo = Elmo.from_params(
        Params(
            {
                "options_file": OPTIONS_FILE,
                "weight_file": WEIGHT_FILE,
                "num_output_representations": 1,
                "vocab_to_cache": "tokens",
            }
        ),
        vocab=vocab,
    )
    assert set(elmo.word_cache.words) >= {"The", "sentence", "<S>", "</S>"}


def test_word_cache_is_rebuilt_after_loading_other_weights():
    elmo = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, vocab_to_cache=["The"], stateful=False, cache_size_mb=0)
    ids = batch_to_ids([["The"]])
    before = elmo(ids)["elmo_representations"][0]
    state = elmo.state_dict()
    state["bilm.token_encoder.projection.bias"] = state["bilm.token_encoder.projection.bias"] + 1.0
    elmo.load_state_dict(state)
    plain = Elmo(OPTIONS_FILE, WEIGHT_FILE, 1, dropout=0.0, stateful=False, cache_size_mb=0)
    plain.load_state_dict(state)
    after = elmo(ids)["elmo_representations"][0]
    assert not torch.allclose(before, after) and torch.allclose(after, plain(ids)["elmo_representations"][0], atol=1e-6)


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"do_layer_norm": True},
        {"keep_sentence_boundaries": True},
        {"scalar_mix_parameters": [1.0, 2.0, 3.0]},
        {"vocab_to_cache": ["The", "sentence", "cat"]},
    ],
)
def test_matches_allennlp_elmo_statefully_and_draws_the_same_random_numbers(arguments):
    torch.manual_seed(7)
    theirs = AllenNlpElmo(SKIP_OPTIONS, WEIGHT_FILE, 2, dropout=0.0, **arguments)
    their_next_draw = torch.rand(3)
    torch.manual_seed(7)
    ours = Elmo(SKIP_OPTIONS, WEIGHT_FILE, 2, dropout=0.0, **arguments)
    assert torch.equal(torch.rand(3), their_next_draw)
    worst = 0.0
    for batch in (SENTENCES, [["A", "cat"], ["sat"], ["Unseen", "words", "too"]], SENTENCES):
        ids = batch_to_ids(batch)
        a, b = theirs(ids), ours(ids)
        assert torch.equal(a["mask"], b["mask"])
        keep = a["mask"].unsqueeze(-1)
        for x, y in zip(a["elmo_representations"], b["elmo_representations"], strict=True):
            worst = max(worst, float(((x - y) * keep).abs().max().detach()))
    assert worst < 1e-5


def test_reads_a_state_dict_of_allennlp_elmo():
    torch.manual_seed(0)
    theirs = AllenNlpElmo(SKIP_OPTIONS, WEIGHT_FILE, 1, dropout=0.0, vocab_to_cache=["The"])
    with torch.no_grad():  # make every array differ from the file, so loading must really map them
        for _name, parameter in theirs.named_parameters():
            parameter.add_(0.01 * torch.randn_like(parameter))
    ours = Elmo(SKIP_OPTIONS, WEIGHT_FILE, 1, dropout=0.0)
    ours.load_state_dict(theirs.state_dict())
    ids = batch_to_ids(SENTENCES)
    theirs._elmo_lstm._word_embedding = None  # compare the character path of both
    expected = theirs(ids)["elmo_representations"][0]
    assert torch.allclose(ours(ids)["elmo_representations"][0], expected, atol=1e-5)
    reference = load_bilm(SKIP_OPTIONS, WEIGHT_FILE)
    assert not torch.allclose(ours.bilm.layers[0].w_input, reference.layers[0].w_input)


# ---- what code written for AllenNLP's Elmo reaches into ------------------------------------


def _representations(elmo, batch):
    return [r.detach() for r in elmo(batch_to_ids(batch))["elmo_representations"]]


def test_biattentive_classification_network_use_scalar_mixes_and_two_representations():
    """What allennlp-models' BCN does with the Elmo it is given, on ours and on AllenNLP's."""
    torch.manual_seed(1)
    theirs = AllenNlpElmo(SKIP_OPTIONS, WEIGHT_FILE, 2, dropout=0.0)
    torch.manual_seed(1)
    ours = Elmo(SKIP_OPTIONS, WEIGHT_FILE, 2, dropout=0.0)
    assert len(ours._scalar_mixes) == len(theirs._scalar_mixes) == 2  # BCN: one per flag it sets
    assert ours._scalar_mixes[1] is ours.scalar_mix_1
    assert ours.get_output_dim() == theirs.get_output_dim() == 32
    # the mixes stay registered under AllenNLP's names only: no new state-dict keys
    assert {key for key in ours.state_dict() if not key.startswith("bilm.")} == {
        f"scalar_mix_{k}.{name}"
        for k in (0, 1)
        for name in ("gamma", "scalar_parameters.0", "scalar_parameters.1", "scalar_parameters.2")
    }
    with torch.no_grad():
        ours._scalar_mixes[1].scalar_parameters[2].fill_(2.0)  # BCN's two mixes train apart
        theirs._scalar_mixes[1].scalar_parameters[2].fill_(2.0)
    their_output, our_output = theirs(batch_to_ids(SENTENCES)), ours(batch_to_ids(SENTENCES))
    their_list, our_list = their_output["elmo_representations"], our_output["elmo_representations"]
    integrator_output, input_elmo = our_list.pop(), our_list.pop()  # BCN pops from the end
    assert not our_list
    keep = our_output["mask"].unsqueeze(-1)
    assert torch.allclose(integrator_output * keep, their_list[1] * keep, atol=1e-5)
    assert torch.allclose(input_elmo * keep, their_list[0] * keep, atol=1e-5)
    assert not torch.allclose(integrator_output, input_elmo, atol=1e-3)


def test_reset_states_through_allennlps_attribute_path_like_allennlp():
    """``elmo._elmo_lstm._elmo_lstm.reset_states()``, as AllenNLP's elmo_test.py does, with and without a mask."""
    torch.manual_seed(2)
    theirs = AllenNlpElmo(SKIP_OPTIONS, WEIGHT_FILE, 1, dropout=0.0)
    torch.manual_seed(2)
    ours = Elmo(SKIP_OPTIONS, WEIGHT_FILE, 1, dropout=0.0)
    fresh = _representations(Elmo(SKIP_OPTIONS, WEIGHT_FILE, 1, dropout=0.0), SENTENCES)[0]
    second = [["A", "dog", "barked", "."], ["Cats", "sleep", "."]]
    for elmo in (theirs, ours):
        _representations(elmo, second)
    carried = _representations(ours, SENTENCES)[0]
    assert not torch.allclose(carried, fresh, atol=1e-4)  # the states were carried over
    worst = float((carried - _representations(theirs, SENTENCES)[0]).abs().max())
    for elmo in (theirs, ours):
        elmo._elmo_lstm._elmo_lstm.reset_states()
    after_reset = _representations(ours, SENTENCES)[0]
    assert torch.allclose(after_reset, fresh, atol=1e-6)
    worst = max(worst, float((after_reset - _representations(theirs, SENTENCES)[0]).abs().max()))
    # reset only the second row: the first keeps its state, the second starts afresh
    for elmo in (theirs, ours):
        elmo._elmo_lstm._elmo_lstm.reset_states(torch.tensor([False, True]))
    a, b = _representations(theirs, SENTENCES)[0], _representations(ours, SENTENCES)[0]
    worst = max(worst, float((a - b).abs().max()))
    assert torch.allclose(b[1], fresh[1], atol=1e-6) and not torch.allclose(b[0], fresh[0], atol=1e-4)
    assert worst < 1e-5
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        ours._elmo_lstm._elmo_lstm.reset_states(torch.tensor([True]))
    assert ours._elmo_lstm.get_output_dim() == 32


def test_batch_to_ids_is_exported_beside_elmo_and_gives_allennlps_ids():
    from allennlp.modules.elmo import batch_to_ids as allennlp_batch_to_ids

    from elmo_tasks.modules import Elmo as ExportedElmo
    from elmo_tasks.modules import batch_to_ids as exported_batch_to_ids

    batch = [["ELMo", "naïve", "x" * 60, "<S>", "</S>"], ["日本語"]]
    assert ExportedElmo is Elmo
    assert torch.equal(exported_batch_to_ids(batch), allennlp_batch_to_ids(batch))


def test_shipped_float16_bilm_against_allennlp_and_why_they_differ(tmp_path):
    """The measurement in docs/MIGRATING.md: the shipped biLM's weights are float16. AllenNLP adds
    TensorFlow's forget-gate bias of 1 to them while they are still float16, which rounds every
    forget bias to float16's resolution near 1 (2**-10); ours widens to float32 first. With a
    float32 copy of the same weights AllenNLP agrees with us to float32 noise."""
    from allennlp.modules.elmo import _ElmoBiLm

    from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE

    float32_copy = tmp_path / "weights_float32.hdf5"
    with h5py.File(SMALL_WEIGHT_FILE, "r") as source, h5py.File(float32_copy, "w") as target:

        def copy_widened(name: str, item) -> None:  # visititems stops at the first non-None return
            if isinstance(item, h5py.Dataset):
                target.create_dataset(name, data=item[...].astype(np.float32))

        source.visititems(copy_widened)
        assert target["char_embed"].dtype == np.float32 and len(target) == len(source)
    sentences, sentence = [], []
    for line in (FIXTURES_ROOT / "ner" / "dev.txt").read_text().splitlines():
        if line.strip() and not line.startswith("-DOCSTART"):
            sentence.append(line.split()[0])
        elif sentence:
            sentences, sentence = sentences + [sentence], []

    def largest_difference_per_layer(weight_file) -> list:
        theirs = _ElmoBiLm(str(SMALL_OPTIONS_FILE), str(weight_file))
        ours = load_bilm(str(SMALL_OPTIONS_FILE), str(SMALL_WEIGHT_FILE), stateful=True)
        worst = [0.0, 0.0, 0.0]
        with torch.no_grad():
            for start in range(0, len(sentences), 5):  # stateful, batch after batch
                ids = batch_to_ids(sentences[start : start + 5])
                a, b = theirs(ids), ours(ids, keep_boundaries=True)
                keep = a["mask"].unsqueeze(-1)
                for k, (x, y) in enumerate(zip(a["activations"], b.layers, strict=True)):
                    worst[k] = max(worst[k], float(((x - y) * keep).abs().max()))
        return worst

    assert len(sentences) == 15
    token_layer, first_lstm, second_lstm = largest_difference_per_layer(SMALL_WEIGHT_FILE)
    assert token_layer < 1e-5  # no LSTM, no forget bias: the same numbers
    assert 5e-5 < first_lstm < 5e-4 and 5e-5 < second_lstm < 5e-4  # measured 1.3e-4 and 2.1e-4
    assert max(largest_difference_per_layer(float32_copy)) < 1e-5  # measured 4.3e-6
