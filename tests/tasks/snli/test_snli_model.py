"""ESIM: output shapes, ELMo-at-output wiring, configuration errors, and that it learns."""
from typing import List

import pytest
import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.modules import FeedForward
from allennlp.modules.seq2seq_encoders import LstmSeq2SeqEncoder
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding
from allennlp.nn import Activation
from allennlp.nn.util import masked_mean

from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder
from elmo_tasks.tasks.snli.model import EsimElmo
from elmo_tasks.tasks.snli.reader import SnliJsonlReader
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE

H = 8  # hidden size of both BiLSTMs
PAIRS = [
    ("A man plays a guitar on stage.", "A man performs music.", "entailment"),
    ("Two dogs run in the snow.", "The cats are asleep.", "contradiction"),
    ("A woman reads a book.", "A woman reads a novel for school.", "neutral"),
    ("Kids play soccer in a park.", "Children are outside.", "entailment"),
]


def _instances(elmo: bool) -> List[Instance]:
    indexers = {"tokens": SingleIdTokenIndexer(lowercase_tokens=True)}
    if elmo:
        indexers["elmo"] = ELMoTokenCharactersIndexer()
    reader = SnliJsonlReader(token_indexers=indexers)
    return [reader.text_to_instance(p, h, label) for p, h, label in PAIRS]


def _model(vocab: Vocabulary, elmo: bool, elmo_at_output: bool, dropout: float = 0.5) -> EsimElmo:
    embedders = {"tokens": Embedding(embedding_dim=6, vocab_namespace="tokens", vocab=vocab)}
    if elmo:
        embedders["elmo"] = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, dropout=0.0, num_output_representations=2)
    embedder = BasicTextFieldEmbedder(embedders)
    return EsimElmo.from_partial_objects(
        vocab=vocab,
        text_field_embedder=embedder,
        encoder=Lazy(LstmSeq2SeqEncoder, constructor_extras={"hidden_size": H, "bidirectional": True}),
        projection_feedforward=FeedForward(8 * H, 1, H, Activation.by_name("relu")()),
        inference_encoder=LstmSeq2SeqEncoder(H, H, bidirectional=True),
        output_feedforward=Lazy(FeedForward, constructor_extras={
            "num_layers": 1, "hidden_dims": H, "activations": Activation.by_name("tanh")()}),
        elmo_at_output=elmo_at_output,
        dropout=dropout,
    )


def _batch(instances: List[Instance], vocab: Vocabulary):
    batch = Batch(instances)
    batch.index_instances(vocab)
    return batch.as_tensor_dict()


@pytest.mark.parametrize("elmo", [False, True])
def test_forward_shapes_and_readable_output(elmo):
    instances = _instances(elmo)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=elmo, elmo_at_output=elmo).eval()
    output = model(**_batch(instances, vocab))
    assert output["logits"].shape == (4, 3)
    assert torch.allclose(output["probs"].sum(-1), torch.ones(4))
    assert output["loss"].dim() == 0 and output["loss"].item() > 0
    readable = model.make_output_human_readable(output)
    for row, label, probs in zip(output["probs"], readable["label"], readable["label_probs"]):
        assert set(probs) == {"entailment", "neutral", "contradiction"}
        assert label == max(probs, key=probs.get)
        assert probs[label] == pytest.approx(row.max().item())
    assert 0.0 <= model.get_metrics(reset=True)["accuracy"] <= 1.0


def test_elmo_at_output_uses_the_second_mix_of_each_sentence():
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True).eval()
    elmo = model._elmo
    assert model.output_feedforward.get_input_dim() == 4 * (2 * H + elmo.get_output_dim())
    # Make the two mixes clearly different, so reading the wrong one would show.
    with torch.no_grad():
        elmo.scalar_mix_0.scalar_parameters[0].fill_(5.0)
        elmo.scalar_mix_1.scalar_parameters[2].fill_(5.0)
        elmo.scalar_mix_1.gamma.fill_(3.0)
    pooled = {}

    def keep_input(module, inputs, output) -> None:  # returns None: the output is left alone
        pooled["x"] = inputs[0]

    model.output_feedforward.register_forward_hook(keep_input)
    tensors = _batch(instances, vocab)
    model(**tensors)
    elmo(tensors["hypothesis"]["elmo"]["elmo_tokens"])
    hyp_mix0, hyp_mix1 = elmo.take_representations()
    hyp_mask = (tensors["hypothesis"]["elmo"]["elmo_tokens"] > 0).any(-1)
    width = 2 * H + elmo.get_output_dim()
    # pooled = [mean_p, max_p, mean_h, max_h], each = [composition (2H); ELMo mix 1].
    mean_h_elmo = pooled["x"][:, 2 * width + 2 * H: 3 * width]
    expected = masked_mean(hyp_mix1, hyp_mask.unsqueeze(-1), dim=1)
    assert torch.allclose(mean_h_elmo, expected, atol=1e-5)
    assert not torch.allclose(mean_h_elmo, masked_mean(hyp_mix0, hyp_mask.unsqueeze(-1), dim=1), atol=1e-3)


def test_output_mix_gets_gradients():
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True, elmo_at_output=True)
    model(**_batch(instances, vocab))["loss"].backward()
    for k in (0, 1):
        grads = [p.grad for p in getattr(model._elmo, f"scalar_mix_{k}").scalar_parameters]
        assert all(g is not None for g in grads) and any(g.abs().sum() > 0 for g in grads)


def test_elmo_at_output_without_two_mixes_is_a_clear_error():
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    with pytest.raises(ConfigurationError, match="num_output_representations >= 2"):
        _model(vocab, elmo=False, elmo_at_output=True)


def test_loss_decreases_on_a_tiny_batch():
    torch.manual_seed(0)
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=False, elmo_at_output=False, dropout=0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    tensors = _batch(instances, vocab)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = model(**tensors)["loss"]
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]
    assert model.get_metrics()["accuracy"] > 0.5
