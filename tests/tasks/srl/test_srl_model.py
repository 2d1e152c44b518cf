"""srl_model: training from the configs, constrained decoding, one biLM pass per sentence, predictor, names."""

from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Instance, Vocabulary
from allennlp.models import Model

from elmo_tasks.modules import find_elmo_embedder
from elmo_tasks.tasks.srl import SrlConllReader, SrlElmo, SrlPredictor, names
from elmo_tasks.tasks.srl.model import describe
from elmo_tasks.tasks.srl.verbs import guess_verbs
from tests.conftest import FIXTURES_ROOT
from tests.tasks.experiment_case import BaselineAndElmoModelCase
from tests.tasks.hand_built_models import fit, tensor_batch, token_indexers, words_and_elmo_config

TRAIN = str(FIXTURES_ROOT / "srl" / "conll2005_train.txt")


# Overrides that shrink experiments/srl_*.jsonnet for ModelTestCase: one key per size.
TINY_SRL = {
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.predicate_embedding_dim": 4,
    "model.encoder.hidden_size": 8,
    "trainer.num_epochs": 2,
}


class TestSrlModelCase(BaselineAndElmoModelCase):
    """AllenNLP's model checks on the real SRL configs, shrunk to 8-d layers."""

    task = "srl"
    overrides = TINY_SRL


def _reader(elmo: bool) -> SrlConllReader:
    return SrlConllReader(token_indexers=token_indexers(elmo))


def _model(vocab: Vocabulary, elmo: bool, hidden: int = 16) -> SrlElmo:
    params = Params(
        {
            "type": names.MODEL,
            "predicate_embedding_dim": 8,
            "text_field_embedder": {"token_embedders": words_and_elmo_config(elmo)},
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
    return model(**tensor_batch(instances, vocab))


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


def test_tags_are_decoded_outside_training_and_named_by_the_readable_output():
    """As NER's: ``tags`` (ids) in the output, tag strings after make_output_human_readable."""
    reader = _reader(False)
    instances = _instances(reader)[:3]
    vocab = Vocabulary.from_instances(_instances(reader))
    model = _model(vocab, False)
    with torch.no_grad():
        trained_batch = _run(model.train(), instances, vocab)
        output = _run(model.eval(), instances, vocab)
    assert "tags" not in trained_batch  # decoding every training batch would slow training down
    paths = output["tags"]
    assert paths == model.decode_paths(output["class_probabilities"], output["mask"])
    assert [len(path) for path in paths] == [len(instance["tokens"]) for instance in instances]
    readable = model.make_output_human_readable(output)
    assert readable["tags"] == [[vocab.get_token_from_index(t, "srl_roles") for t in path] for path in paths]
    assert model.make_output_human_readable(trained_batch)["tags"] == readable["tags"]  # decoded there
    assert {"logits", "class_probabilities", "mask"}.isdisjoint(readable)


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
    tensors = tensor_batch(instances[:6], vocab)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.02)
    first = model(**tensors)["loss"].item()
    fit(model, tensors, optimizer, steps=25)
    last = model(**tensors)["loss"].item()
    # Untrained: ~ln(number of tags) per token; fitting six sentences takes it far below that.
    assert last < 0.3 * first, (first, last)


def test_predictor_labels_given_or_guessed_verbs():
    torch.manual_seed(1)
    reader = _reader(False)
    instances = _instances(reader)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, False, hidden=32)
    # "The cat chased the mouse ." and "The dog chased the ball yesterday ."
    tensors = tensor_batch(instances[:2], vocab)
    fit(model, tensors, torch.optim.Adam(model.parameters(), lr=0.02), steps=60)
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
    assert guess_verbs(["The", "running", "water", "was", "boiling", "and", "she", "said", "nothing"]) == [4, 7]
