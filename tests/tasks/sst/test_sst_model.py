"""The biattentive classifier: pooling by hand, masking, training lowers the loss, ELMo wiring, pinned numbers."""

from typing import List

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.modules import FeedForward
from allennlp.modules.seq2seq_encoders import LstmSeq2SeqEncoder
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding
from allennlp.nn import Activation, RegularizerApplicator
from allennlp.nn.regularizers import L2Regularizer

from elmo_tasks.config_defaults import MIXING_WEIGHTS_REGEX
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder
from elmo_tasks.tasks.sst.model import BiattentiveClassifier
from elmo_tasks.tasks.sst.pooling import MultiPooling
from elmo_tasks.tasks.sst.reader import SstTreesReader
from tests.conftest import FIXTURES_ROOT, OPTIONS_FILE, WEIGHT_FILE
from tests.tasks.experiment_case import ExperimentModelTestCase, write_tiny_config
from tests.tasks.pinned_outputs import CASES, check_pinned

HIDDEN = 8


def test_pooling_by_hand() -> None:
    sequence = torch.tensor([[[1.0, 5.0], [3.0, -1.0], [100.0, 100.0]]])
    mask = torch.tensor([[True, True, False]])
    pooling = MultiPooling(2)
    torch.nn.init.zeros_(pooling.attention_scorer.weight)  # equal scores: attention = mean
    torch.nn.init.zeros_(pooling.attention_scorer.bias)
    pooled = pooling(sequence, mask)
    # max, min, mean, self-attentive over the two real tokens; the padding (100) never shows.
    assert pooled.tolist() == [[3.0, 5.0, 1.0, -1.0, 2.0, 2.0, 2.0, 2.0]]
    assert pooling.get_output_dim() == 8


def test_pooling_rejects_unknown_names() -> None:
    with pytest.raises(ConfigurationError, match="poolings"):
        MultiPooling(2, ["max", "median"])


def _instances(elmo: bool) -> List[Instance]:
    indexers = {"tokens": SingleIdTokenIndexer(lowercase_tokens=True)}
    if elmo:
        indexers["elmo"] = ELMoTokenCharactersIndexer()
    reader = SstTreesReader(token_indexers=indexers, phrases="roots")
    return list(reader.read(str(FIXTURES_ROOT / "sst" / "train.txt")))


def _model(vocab: Vocabulary, elmo: bool, elmo_at_output: bool) -> BiattentiveClassifier:
    embedders = {"tokens": Embedding(embedding_dim=HIDDEN, num_embeddings=vocab.get_vocab_size("tokens"))}
    input_dim = HIDDEN
    regularizer = None
    if elmo:
        embedders["elmo"] = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, dropout=0.0, num_output_representations=2)
        input_dim += embedders["elmo"].get_output_dim()
        regularizer = RegularizerApplicator([(MIXING_WEIGHTS_REGEX, L2Regularizer(0.001))])
    return BiattentiveClassifier(
        vocab=vocab,
        text_field_embedder=BasicTextFieldEmbedder(embedders),
        pre_encode_feedforward=FeedForward(input_dim, 1, HIDDEN, Activation.by_name("relu")()),
        encoder=LstmSeq2SeqEncoder(HIDDEN, HIDDEN, bidirectional=True),
        integrator=LstmSeq2SeqEncoder(6 * HIDDEN, HIDDEN, bidirectional=True),
        feedforward=FeedForward(
            4 * (2 * HIDDEN + (32 if elmo_at_output else 0)), 1, HIDDEN, Activation.by_name("relu")()
        ),
        embedding_dropout=0.0,
        integrator_dropout=0.0,
        elmo_at_output=elmo_at_output,
        regularizer=regularizer,
    )


def _train(model: BiattentiveClassifier, instances: List[Instance], steps: int, lr: float = 0.01) -> List[float]:
    batch = Batch(instances)
    batch.index_instances(model.vocab)
    tensors = batch.as_tensor_dict()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = model(**tensors)["loss"]
        losses.append(loss.item())
        penalty = model.get_regularization_penalty()
        (loss if penalty is None else loss + penalty).backward()
        optimizer.step()
    return losses


@pytest.mark.parametrize("elmo", [False, True])
def test_training_lowers_the_loss_and_beats_the_majority_class(elmo: bool) -> None:
    torch.manual_seed(0)
    instances = _instances(elmo)[:20]
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=elmo, elmo_at_output=elmo)
    losses = _train(model, instances, steps=30, lr=0.03)
    assert losses[-1] < 0.5 * losses[0], losses
    # Fitted sentences: accuracy (dropout off, fresh metric) well above always naming the commonest class.
    labels = [instance["label"].label for instance in instances]
    majority = max(labels.count(label) for label in set(labels)) / len(labels)
    model.eval()
    model.get_metrics(reset=True)
    batch = Batch(instances)
    batch.index_instances(vocab)
    with torch.no_grad():
        model(**batch.as_tensor_dict())
    assert model.get_metrics(reset=True)["accuracy"] >= majority + 0.3


def test_elmo_at_output_uses_the_second_mix() -> None:
    torch.manual_seed(0)
    instances = _instances(elmo=True)[:4]
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True)
    assert model.pooling.input_dim == 2 * HIDDEN + 32
    mix_1 = model.text_field_embedder.token_embedder_elmo.scalar_mix_1
    _train(model, instances, steps=1)
    # The output mix only influences the loss through the output path: it must get a gradient.
    assert mix_1.scalar_parameters[0].grad is not None
    assert float(mix_1.scalar_parameters[0].grad.abs().sum()) > 0


def test_one_bilm_pass_serves_input_and_output() -> None:
    instances = _instances(elmo=True)[:4]
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True).eval()
    elmo = model._elmo_at_output.elmo
    assert elmo is model.text_field_embedder.token_embedder_elmo
    passes = []
    elmo.bilm.register_forward_hook(lambda *args: passes.append(1))
    batch = Batch(instances)
    batch.index_instances(vocab)
    model(**batch.as_tensor_dict())
    assert len(passes) == 1


@pytest.mark.parametrize("case", sorted(CASES["sst"]))
def test_outputs_and_gradients_are_the_pinned_ones(case: str) -> None:
    """The numbers the model computed before ELMo at the output became explicit (tests/tasks/pinned_outputs.py)."""
    check_pinned("sst", case)


def test_padding_does_not_change_predictions() -> None:
    torch.manual_seed(0)
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=False, elmo_at_output=False).eval()
    short = min(instances, key=lambda i: len(i["tokens"]))
    long = max(instances, key=lambda i: len(i["tokens"]))
    alone = model.forward_on_instance(short)["label_probs"]
    together = model.forward_on_instances([short, long])[0]["label_probs"]
    assert alone == pytest.approx(together, abs=1e-6)


def test_elmo_at_output_needs_two_elmo_representations() -> None:
    vocab = Vocabulary()
    elmo = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, num_output_representations=1)
    embedder = BasicTextFieldEmbedder({"elmo": elmo})
    args = (
        FeedForward(32, 1, HIDDEN, Activation.by_name("relu")()),
        LstmSeq2SeqEncoder(HIDDEN, HIDDEN, bidirectional=True),
        LstmSeq2SeqEncoder(6 * HIDDEN, HIDDEN, bidirectional=True),
    )
    with pytest.raises(ConfigurationError, match="num_output_representations >= 2"):
        BiattentiveClassifier(vocab, embedder, *args, elmo_at_output=True)
    no_elmo = BasicTextFieldEmbedder({"tokens": Embedding(embedding_dim=32, num_embeddings=5)})
    with pytest.raises(ConfigurationError, match="needs a 'fast_elmo' token embedder"):
        BiattentiveClassifier(vocab, no_elmo, *args, elmo_at_output=True)


def test_dimension_mismatch_is_reported() -> None:
    embedder = BasicTextFieldEmbedder({"tokens": Embedding(embedding_dim=5, num_embeddings=5)})
    with pytest.raises(ConfigurationError, match="integrator input"):
        BiattentiveClassifier(
            Vocabulary(),
            embedder,
            FeedForward(5, 1, HIDDEN, Activation.by_name("relu")()),
            LstmSeq2SeqEncoder(HIDDEN, HIDDEN, bidirectional=True),
            LstmSeq2SeqEncoder(2 * HIDDEN, HIDDEN, bidirectional=True),
        )


def test_labels_out_of_range_are_reported() -> None:
    instances = _instances(elmo=False)[:3]
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=False, elmo_at_output=False)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    tensors["label"][0] = 7
    with pytest.raises(ConfigurationError, match="labels must be 0..4"):
        model(**tensors)


def test_human_readable_names() -> None:
    instances = _instances(elmo=False)[:2]
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=False, elmo_at_output=False).eval()
    outputs = model.forward_on_instances(instances)
    names = ["very negative", "negative", "neutral", "positive", "very positive"]
    for output in outputs:
        assert output["label"] == names[int(output["label_probs"].argmax())]
        assert output["label_logits"].shape == (5,)


# Overrides that shrink experiments/sst5_*.jsonnet for ModelTestCase: one key per size.
TINY_SST = {
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.pre_encode_feedforward.hidden_dims": [8],
    "model.encoder.hidden_size": 8,
    "model.integrator.hidden_size": 8,
    "model.feedforward.hidden_dims": [8],
    "dataset_reader.max_instances": 32,
    "validation_dataset_reader.max_instances": 16,
    "trainer.num_epochs": 1,
}


def test_one_override_changes_one_size(tmp_path) -> None:
    """The encoder's hidden size alone: the integrator's input (3x its output) follows."""
    from allennlp.common import Params
    from allennlp.models import Model

    config = write_tiny_config("sst5_baseline.jsonnet", {**TINY_SST, "model.encoder.hidden_size": 5}, tmp_path)
    vocab = Vocabulary.from_instances(_instances(False))
    model = Model.from_params(vocab=vocab, params=Params.from_file(config)["model"])
    assert model.encoder.get_output_dim() == 10
    assert model.integrator.get_input_dim() == 30
    assert model.pooling.get_output_dim() == 4 * 16  # 4 poolings of the integrator's 2 x 8


class TestBiattentiveClassifierModelCase(ExperimentModelTestCase):
    """AllenNLP's model checks on the real SST-5 configs, shrunk to 8-d layers and 32 phrases."""

    @pytest.mark.parametrize("variant", ["baseline", "elmo"])
    def test_train_save_load_and_batch_consistency(self, variant: str) -> None:
        # The self-attentive pooling's bias shifts every token's score alike and a softmax ignores a
        # shared shift: its true gradient is exactly zero (what is computed is float noise or 0).
        self.check_experiment(
            f"sst5_{variant}.jsonnet", TINY_SST, gradients_to_ignore={"pooling.attention_scorer.bias"}
        )
