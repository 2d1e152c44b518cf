"""The BiLSTM-CRF tagger: wiring from config, learning on a tiny batch, predictions with spans."""

from collections import Counter
from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.dataset_readers import Conll2003DatasetReader
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenCharactersIndexer
from allennlp.data.vocabulary import DEFAULT_OOV_TOKEN
from allennlp.models import Model

from elmo_tasks.config_defaults import MIXING_WEIGHTS_REGEX
from elmo_tasks.tasks.ner import ElmoCrfTagger, NerTaggerPredictor, names
from tests.conftest import FIXTURES_ROOT
from tests.tasks.experiment_case import ExperimentModelTestCase, tiny_bilm_embedder, write_tiny_config

TRAIN = str(FIXTURES_ROOT / "ner" / "train.txt")
DEV = str(FIXTURES_ROOT / "ner" / "dev.txt")


def _reader(elmo: bool = False) -> Conll2003DatasetReader:
    indexers = {
        "tokens": SingleIdTokenIndexer(lowercase_tokens=True),
        "token_characters": TokenCharactersIndexer(min_padding_length=3),
    }
    if elmo:
        from allennlp.data.token_indexers import ELMoTokenCharactersIndexer

        indexers["elmo"] = ELMoTokenCharactersIndexer()
    return Conll2003DatasetReader(tag_label="ner", convert_to_coding_scheme="BIOUL", token_indexers=indexers)


def _model_params(elmo: bool, hidden: int = 16, dropout: float = 0.0) -> Params:
    embedders = {
        "tokens": {"type": "embedding", "embedding_dim": 50},
        "token_characters": {
            "type": "character_encoding",
            "embedding": {"embedding_dim": 16},
            "encoder": {"type": "cnn", "embedding_dim": 16, "num_filters": 128, "ngram_filter_sizes": [3]},
        },
    }
    if elmo:
        embedders["elmo"] = tiny_bilm_embedder()
    return Params(
        {
            "type": names.MODEL,
            "dropout": dropout,
            "text_field_embedder": {"token_embedders": embedders},
            "encoder": {"type": "lstm", "hidden_size": hidden, "num_layers": 2, "bidirectional": True},
        }
    )


def _instances(reader: Conll2003DatasetReader, path: str) -> List[Instance]:
    instances = list(reader.read(path))
    for instance in instances:
        reader.apply_token_indexers(instance)
    return instances


def test_reader_reads_fixtures_with_docstart_anywhere():
    # dev.txt has its first -DOCSTART- at the end, like the shared CoNLL-2003 copy.
    assert len(_instances(_reader(), TRAIN)) == 44
    dev = _instances(_reader(), DEV)
    assert len(dev) == 15
    assert dev[7]["tags"].labels[:2] == ["U-PER", "U-PER"]  # IOB1 "I-PER B-PER"
    assert len(_instances(_reader(), str(FIXTURES_ROOT / "ner" / "test.txt"))) == 10


@pytest.mark.parametrize("elmo, width", [(False, 50 + 128), (True, 50 + 128 + 32)])
def test_encoder_input_size_comes_from_the_embedder(elmo, width):
    reader = _reader(elmo)
    vocab = Vocabulary.from_instances(_instances(reader, TRAIN))
    model = Model.from_params(vocab=vocab, params=_model_params(elmo))
    assert isinstance(model, ElmoCrfTagger)
    assert model.encoder.get_input_dim() == width
    # BIOUL over 4 types + O, all seen in the fixtures.
    assert model.num_tags == 17


def test_feedforward_and_initializer_from_a_config_with_derived_widths():
    """The feedforward's input_dim is the encoder's output (2 x 16), as the encoder's input is the embedder's."""
    vocab = Vocabulary.from_instances(_instances(_reader(), TRAIN))
    params = _model_params(False).as_dict()
    params["feedforward"] = {"num_layers": 1, "hidden_dims": 7, "activations": "relu"}
    params["initializer"] = {"regexes": [["tag_projection.*bias", {"type": "constant", "val": 0.5}]]}
    model = Model.from_params(vocab=vocab, params=Params(params))
    assert model.feedforward.get_input_dim() == 32 and model.tag_projection._module.in_features == 7
    assert torch.all(model.tag_projection._module.bias == 0.5)


def test_a_wrong_input_size_in_the_config_says_to_leave_it_out():
    vocab = Vocabulary.from_instances(_instances(_reader(), TRAIN))
    params = _model_params(False).as_dict()
    params["encoder"]["input_size"] = 100  # the embedder gives 50 + 128
    with pytest.raises(ConfigurationError, match=r"input_size \(leave it out of the encoder's config.*got 178 and 100"):
        Model.from_params(vocab=vocab, params=Params(params))


def test_elmo_mixing_weights_get_the_lambda_penalty():
    reader = _reader(True)
    vocab = Vocabulary.from_instances(_instances(reader, TRAIN))
    params = _model_params(True).as_dict()
    # What common.elmo_regularizer(0.1) produces.
    params["regularizer"] = {"regexes": [[MIXING_WEIGHTS_REGEX, {"type": "l2", "alpha": 0.1}]]}
    model = Model.from_params(vocab=vocab, params=Params(params))
    mixing = [p for n, p in model.named_parameters() if "scalar_mix" in n and "scalar_parameters" in n]
    assert len(mixing) == 3  # the test biLM: token layer + 2 LSTM layers
    with torch.no_grad():
        for weight, value in zip(mixing, [1.0, 2.0, 0.0], strict=True):
            weight.fill_(value)
    assert model.get_regularization_penalty().item() == pytest.approx(0.1 * (1.0 + 4.0))


def _loss(model: Model, instances: List[Instance], vocab: Vocabulary) -> torch.Tensor:
    batch = Batch(instances)
    batch.index_instances(vocab)
    return model(**batch.as_tensor_dict())["loss"]


@pytest.mark.parametrize("elmo", [False, True])
def test_loss_goes_down_on_a_tiny_batch(elmo):
    torch.manual_seed(0)
    reader = _reader(elmo)
    instances = _instances(reader, TRAIN)
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=_model_params(elmo))
    batch = instances[:6]
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.02)
    first = _loss(model, batch, vocab).item()
    for _ in range(20):
        optimizer.zero_grad()
        loss = _loss(model, batch, vocab)
        loss.backward()
        optimizer.step()
    last = _loss(model, batch, vocab).item()
    # Untrained, the loss is ~28 per sentence; predicting all O correctly gets it to ~13.
    assert last < 0.4 * first, (first, last)


def test_training_skips_decoding_with_the_same_loss_and_gradients():
    """Training batches are not Viterbi-decoded unless asked: same loss and gradients, no paths, no
    training F1; in eval mode the model decodes and counts spans whatever the switch."""
    reader = _reader()
    instances = _instances(reader, TRAIN)[:8]
    vocab = Vocabulary.from_instances(instances)
    results = {}
    for decode in (False, True):
        torch.manual_seed(3)
        params = _model_params(False).as_dict()
        params["decode_during_training"] = decode
        model = Model.from_params(vocab=vocab, params=Params(params))
        batch = Batch(instances)
        batch.index_instances(vocab)
        output = model(**batch.as_tensor_dict())
        output["loss"].backward()
        gradients = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        results[decode] = (output, gradients, model.get_metrics(reset=True))
        model.eval()
        evaluated = model(**batch.as_tensor_dict())
        assert len(evaluated["tags"]) == 8 and "f1-measure-overall" in model.get_metrics(reset=True)
    (skipped, skipped_grads, skipped_metrics), (decoded, decoded_grads, decoded_metrics) = results[False], results[True]
    assert "tags" not in skipped and skipped_metrics == {}
    assert len(decoded["tags"]) == 8 and "f1-measure-overall" in decoded_metrics
    assert skipped["loss"].item() == decoded["loss"].item()
    assert len(skipped_grads) == len(decoded_grads) > 0
    for left, right in zip(skipped_grads, decoded_grads, strict=True):
        assert torch.equal(left, right)


def test_summed_loss_is_the_batch_size_times_the_mean():
    """The recipe sums the CRF's loss over a batch's sentences (as AllenNLP's tagger); ``mean`` is the
    mini records' older scaling."""
    every = _instances(_reader(), TRAIN)
    vocab, instances = Vocabulary.from_instances(every), every[:5]
    losses = {}
    for reduction in ("sum", "mean"):
        torch.manual_seed(3)
        params = _model_params(False).as_dict()
        params["loss_reduction"] = reduction
        model = Model.from_params(vocab=vocab, params=Params(params))
        losses[reduction] = _loss(model, instances, vocab).item()
    assert losses["sum"] == pytest.approx(5 * losses["mean"], rel=1e-6)
    params = _model_params(False).as_dict()
    params["loss_reduction"] = "average"
    with pytest.raises(ConfigurationError, match="loss_reduction must be one of sum, mean"):
        Model.from_params(vocab=vocab, params=Params(params))


def test_predictor_returns_tags_and_entity_spans_of_raw_text():
    """Overfit two sentences, then tag raw text containing them through the predictor."""
    torch.manual_seed(1)
    reader = _reader()
    instances = _instances(reader, TRAIN)
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=_model_params(False, hidden=32))
    # "Marta Velkin visited Port Elby on Monday ." and "[Pim] [Pim Jorre] ..." style B- case.
    batch = [instances[0], instances[22]]
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(60):
        optimizer.zero_grad()
        _loss(model, batch, vocab).backward()
        optimizer.step()
    model.eval()
    predictor = NerTaggerPredictor(model, reader)

    sentence = "Marta Velkin visited Port Elby on Monday."
    result = predictor.predict_json({"sentence": sentence})
    assert result["words"] == ["Marta", "Velkin", "visited", "Port", "Elby", "on", "Monday", "."]
    assert result["tags"] == ["B-PER", "L-PER", "O", "B-LOC", "L-LOC", "O", "O", "O"]
    assert result["iob1_tags"] == ["I-PER", "I-PER", "O", "I-LOC", "I-LOC", "O", "O", "O"]
    assert result["entities"] == [
        {"text": "Marta Velkin", "type": "PER", "start": 0, "end": 1, "char_start": 0, "char_end": 12},
        {"text": "Port Elby", "type": "LOC", "start": 3, "end": 4, "char_start": 21, "char_end": 30},
    ]

    words = [token.text for token in instances[22]["tokens"].tokens]
    gold = instances[22]["tags"].labels
    both = predictor.predict_batch_json([{"sentence": " ".join(words)}, {"sentence": sentence}])
    assert both[0]["tags"] == gold
    assert both[0]["iob1_tags"][:2] == ["I-PER", "B-PER"]  # adjacent PERs back in IOB1
    assert both[1] == result


def test_predictor_rejects_bad_input():
    reader = _reader()
    vocab = Vocabulary.from_instances(_instances(reader, TRAIN))
    model = Model.from_params(vocab=vocab, params=_model_params(False))
    predictor = NerTaggerPredictor(model, reader)
    with pytest.raises(ValueError, match='"sentence" string'):
        predictor.predict_json({"text": "no sentence key"})
    with pytest.raises(ValueError, match='"sentence" is only whitespace'):
        predictor.predict_json({"sentence": "   "})


# Overrides that shrink experiments/ner_*.jsonnet for ModelTestCase: one key per size.
TINY_NER = {
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": 8,
    "model.encoder.hidden_sizes": [8, 8],
    "dataset_reader.max_instances": 16,
    "trainer.num_epochs": 1,
    # The vocabulary comes from train alone: validate on the same 16 sentences so every tag is known.
    "validation_data_path": "fixtures/ner/train.txt",
}


def test_one_override_changes_one_size(tmp_path):
    """The char CNN's filters alone: the encoder's input (words + filters) follows."""
    config = write_tiny_config("ner_baseline.jsonnet", TINY_NER, tmp_path)
    vocab = Vocabulary.from_instances(_instances(_reader(), TRAIN))
    model = Model.from_params(vocab=vocab, params=Params.from_file(config)["model"])
    assert model.encoder.get_input_dim() == 8 + 8


def test_config_trains_the_unknown_word_vector(tmp_path):
    """Words seen once in training share the unknown-word vector, so training updates it: with every
    training word in the vocabulary it kept its random initial values, and the words of the test file
    that training never saw were tagged from an arbitrary vector that differed with the seed."""
    config = Params.from_file(write_tiny_config("ner_elmo.jsonnet", TINY_NER, tmp_path))
    instances = _instances(_reader(), TRAIN)
    vocab = Vocabulary.from_params(config.pop("vocabulary"), instances=instances)
    counts = Counter(token.text.lower() for instance in instances for token in instance["tokens"].tokens)
    unknown = vocab.get_token_index(DEFAULT_OOV_TOKEN, "tokens")
    once = [word for word, count in counts.items() if count == 1]
    more = [word for word, count in counts.items() if count > 1]
    assert once and more
    assert all(vocab.get_token_index(word, "tokens") == unknown for word in once)
    assert all(vocab.get_token_index(word, "tokens") != unknown for word in more)

    model = Model.from_params(vocab=vocab, params=_model_params(elmo=False))
    embedding = model.text_field_embedder.token_embedder_tokens.weight
    _loss(model, instances, vocab).backward()
    assert embedding.grad[unknown].abs().sum() > 0


class TestNerModelCase(ExperimentModelTestCase):
    """AllenNLP's model checks on the real NER configs, shrunk to 8-d layers and 16 sentences."""

    @pytest.mark.parametrize("variant", ["baseline", "elmo"])
    def test_train_save_load_and_batch_consistency(self, variant):
        self.check_experiment(f"ner_{variant}.jsonnet", TINY_NER)


def test_training_loss_is_the_crfs_negative_log_likelihood():
    """The model trains on its CRF's likelihood (computed by crf_likelihood, faster): the same loss as
    AllenNLP's ``crf(logits, tags, mask)`` on the model's own logits, and the same gradients to rounding."""
    reader = _reader()
    instances = _instances(reader, TRAIN)[:8]
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(3)
    model = Model.from_params(vocab=vocab, params=_model_params(False))
    model.eval()  # no dropout: the two computations see the same logits
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    output = model(**tensors)
    output["loss"].backward()
    ours = [parameter.grad.clone() for parameter in model.parameters() if parameter.grad is not None]
    model.zero_grad()
    again = model(**tensors)
    theirs_loss = -model.crf(again["logits"], tensors["tags"], again["mask"])
    theirs_loss.backward()
    theirs = [parameter.grad.clone() for parameter in model.parameters() if parameter.grad is not None]
    assert torch.allclose(output["loss"], theirs_loss, rtol=1e-6, atol=0)
    assert len(ours) == len(theirs) > 0
    for our_gradient, their_gradient in zip(ours, theirs, strict=True):
        assert torch.allclose(our_gradient, their_gradient, rtol=1e-4, atol=1e-5)
