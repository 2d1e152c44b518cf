"""srl_elmo: training from the configs, constrained decoding, one biLM pass per sentence, predictor."""

import json
from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.token_indexers import (
    ELMoTokenCharactersIndexer,
    SingleIdTokenIndexer,
)
from allennlp.models import Model

from elmo_tasks.modules import find_elmo_embedder
from elmo_tasks.tasks.srl import SrlConllReader, SrlElmo, SrlPredictor
from elmo_tasks.tasks.srl.model import describe
from elmo_tasks.tasks.srl.verbs import guess_verbs
from tests.conftest import FIXTURES_ROOT, OPTIONS_FILE, ROOT, WEIGHT_FILE

TRAIN = str(FIXTURES_ROOT / "srl" / "conll2005_train.txt")


class TestSrlConfigs(ModelTestCase):
    @pytest.mark.parametrize("variant", ["srl_baseline", "srl_elmo"])
    def test_config_trains_saves_and_loads(self, variant, monkeypatch):
        monkeypatch.chdir(ROOT)
        self.set_up_model(str(ROOT / "experiments" / f"{variant}.jsonnet"), TRAIN)
        # Without shuffling and padding noise, the original and the loaded model see the same batch.
        # (Dotted keys: a nested override object would replace the config's whole object.)
        overrides = {
            "trainer.num_epochs": 2,
            "data_loader.batch_sampler.shuffle": False,
            "data_loader.batch_sampler.padding_noise": 0.0,
        }
        self.ensure_model_can_train_save_and_load(self.param_file, overrides=json.dumps(overrides))


def _reader(elmo: bool) -> SrlConllReader:
    indexers = {"tokens": SingleIdTokenIndexer(lowercase_tokens=True)}
    if elmo:
        indexers["elmo"] = ELMoTokenCharactersIndexer()
    return SrlConllReader(token_indexers=indexers)


def _model(vocab: Vocabulary, elmo: bool, hidden: int = 16) -> SrlElmo:
    embedders = {"tokens": {"type": "embedding", "embedding_dim": 16}}
    if elmo:
        embedders["elmo"] = {
            "type": "fast_elmo",
            "options_file": OPTIONS_FILE,
            "weight_file": WEIGHT_FILE,
            "dropout": 0.0,
        }
    params = Params(
        {
            "type": "srl_elmo",
            "predicate_embedding_dim": 8,
            "text_field_embedder": {"token_embedders": embedders},
            "encoder": {"type": "alternating_lstm", "hidden_size": hidden, "num_layers": 2},
        }
    )
    model = Model.from_params(vocab=vocab, params=params)
    assert isinstance(model, SrlElmo)
    return model


def _instances(reader: SrlConllReader) -> List[Instance]:
    instances = list(reader.read(TRAIN))
    for instance in instances:
        reader.apply_token_indexers(instance)
    return instances


def _run(model: Model, instances: List[Instance], vocab: Vocabulary):
    batch = Batch(instances)
    batch.index_instances(vocab)
    return model(**batch.as_tensor_dict())


def test_encoder_input_is_embedder_plus_predicate_embedding():
    reader = _reader(True)
    instances = _instances(reader)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, True)
    assert model.encoder.get_input_dim() == 16 + 32 + 8  # words + test biLM (2 x 16) + indicator


def test_constrained_viterbi_never_starts_or_jumps_into_an_inside_tag():
    vocab = Vocabulary(non_padded_namespaces=[])
    for tag in ["O", "B-A0", "I-A0", "B-A1", "I-A1", "B-V"]:
        vocab.add_token_to_namespace(tag, "srl_roles")
    model = _model_without_data(vocab)
    index = {tag: vocab.get_token_index(tag, "srl_roles") for tag in ["O", "B-A0", "I-A0", "B-A1", "I-A1", "B-V"]}
    # Per-token argmax would give I-A0 I-A0 B-V I-A1: invalid twice.
    rows = [{"I-A0": 0.6, "B-A0": 0.3}, {"I-A0": 0.9}, {"B-V": 0.9}, {"I-A1": 0.5, "O": 0.4}]
    probabilities = torch.full((1, 4, vocab.get_vocab_size("srl_roles")), 0.01)
    for position, row in enumerate(rows):
        for tag, value in row.items():
            probabilities[0, position, index[tag]] = value
    path = model.decode_paths(probabilities, torch.ones(1, 4, dtype=torch.bool))[0]
    tags = [vocab.get_token_from_index(i, "srl_roles") for i in path]
    # B-A0 I-A0 (0.3 * 0.9) beats O I-A0 (impossible); I-A1 after B-V is impossible, O wins.
    assert tags == ["B-A0", "I-A0", "B-V", "O"]


def _model_without_data(vocab: Vocabulary) -> SrlElmo:
    vocab.add_token_to_namespace("word", "tokens")
    return _model(vocab, False)


def test_bilm_runs_once_per_distinct_sentence():
    """All predicates of a sentence share one biLM pass; a second epoch needs none."""
    reader = _reader(True)
    instances = _instances(reader)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, True)
    model.eval()
    elmo = find_elmo_embedder(model)
    calls = []
    original = elmo.bilm.forward
    elmo.bilm.forward = lambda char_ids, **kwargs: calls.append(char_ids.size(0)) or original(char_ids, **kwargs)
    sentences = {tuple(i["metadata"]["words"]) for i in instances}
    assert len(instances) == 19 and len(sentences) == 15  # 4 sentences have two predicates
    with torch.no_grad():
        _run(model, instances, vocab)
        assert sum(calls) == elmo.sentences_run == 15
        _run(model, instances[:5], vocab)
    assert sum(calls) == 15  # all from the cache


@pytest.mark.parametrize("elmo", [False, True])
def test_loss_goes_down_on_a_tiny_batch(elmo):
    torch.manual_seed(0)
    reader = _reader(elmo)
    instances = _instances(reader)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo)
    batch = instances[:6]
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.02)
    first = _run(model, batch, vocab)["loss"].item()
    for _ in range(25):
        optimizer.zero_grad()
        _run(model, batch, vocab)["loss"].backward()
        optimizer.step()
    last = _run(model, batch, vocab)["loss"].item()
    # Untrained: ~ln(number of tags) per token; fitting six sentences takes it far below that.
    assert last < 0.3 * first, (first, last)


def test_predictor_labels_given_or_guessed_verbs():
    torch.manual_seed(1)
    reader = _reader(False)
    instances = _instances(reader)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, False, hidden=32)
    batch = instances[:2]  # "The cat chased the mouse ." and "The dog chased the ball yesterday ."
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(60):
        optimizer.zero_grad()
        _run(model, batch, vocab)["loss"].backward()
        optimizer.step()
    model.eval()
    predictor = SrlPredictor(model, reader)
    result = predictor.predict_json({"sentence": "The cat chased the mouse.", "verbs": [2]})
    assert result["words"] == ["The", "cat", "chased", "the", "mouse", "."]
    assert result["verbs_given"] is True
    assert result["verbs"] == [
        {
            "index": 2,
            "verb": "chased",
            "tags": ["B-A0", "I-A0", "B-V", "B-A1", "I-A1", "O"],
            "description": "[A0: The cat] [V: chased] [A1: the mouse] .",
        }
    ]
    guessed = predictor.predict_json({"sentence": "The dog chased the ball yesterday."})
    assert guessed["verbs_given"] is False and guessed["verbs_found_by"] == "pos_tagger"
    assert [frame["verb"] for frame in guessed["verbs"]] == ["chased"]
    with pytest.raises(ValueError, match='"verbs" must be a list of token indices between 0 and 5'):
        predictor.predict_json({"sentence": "The cat chased the mouse.", "verbs": [9]})
    with pytest.raises(ValueError, match='"sentence" string'):
        predictor.predict_json({"text": "no sentence"})


def test_description_and_verb_guesses():
    assert (
        describe(["The", "cat", "chased", "it", "."], ["B-A0", "I-A0", "B-V", "B-A1", "O"])
        == "[A0: The cat] [V: chased] [A1: it] ."
    )
    assert describe(["a", "b"], ["I-A0", "B-A0"]) == "[A0: a] [A0: b]"
    assert guess_verbs("The running water was boiling and she said nothing".split()) == [4, 7]
