"""coref_model: train/save/load on the configs, learning a document, chunked ELMo, clusters, names."""

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.models import Model

from elmo_tasks.tasks.coref import names
from elmo_tasks.tasks.coref.antecedents import clusters_from_antecedents
from elmo_tasks.tasks.coref.model import CorefElmo
from elmo_tasks.tasks.coref.reader import Conll2012CorefReader
from elmo_tasks.tasks.coref.span_representations import embed_sentences
from tests.conftest import FIXTURES_ROOT, OPTIONS_FILE, WEIGHT_FILE
from tests.tasks.experiment_case import BaselineAndElmoModelCase
from tests.tasks.hand_built_models import fit, tensor_batch, token_indexers, words_and_elmo_config

TRAIN = str(FIXTURES_ROOT / "coref" / "train.gold_conll")
# The head-finding attention's bias shifts every token's logit of a span alike, and a softmax ignores
# a shared shift: its true gradient is exactly zero (what is computed is float noise or 0).
ZERO_GRADIENT = {"attentive_span_extractor._global_attention._module.bias"}
# Overrides that shrink experiments/coref_*.jsonnet for ModelTestCase: one key per size.
TINY_COREF = {
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.context_layer.hidden_size": 8,
    "model.mention_feedforward.hidden_dims": 8,
    "model.antecedent_feedforward.hidden_dims": 8,
    "model.feature_size": 4,
    "trainer.num_epochs": 1,
}


class TestCorefModelCase(BaselineAndElmoModelCase):
    """AllenNLP's model checks on the real coreference configs, shrunk to 8-d layers."""

    task = "coref"
    overrides = TINY_COREF
    gradients_to_ignore = ZERO_GRADIENT


def _instances(elmo: bool, max_span_width: int = 4):
    reader = Conll2012CorefReader(
        token_indexers=token_indexers(elmo, lowercase_tokens=False), max_span_width=max_span_width
    )
    instances = list(reader.read(TRAIN))
    for instance in instances:
        reader.apply_token_indexers(instance)
    return instances


def small_coref_model(vocab: Vocabulary, elmo: bool, **overrides) -> CorefElmo:
    config = {
        "type": names.MODEL,
        "text_field_embedder": {"token_embedders": words_and_elmo_config(elmo)},
        "context_layer": {"type": "lstm", "hidden_size": 16, "bidirectional": True},
        "mention_feedforward": {"num_layers": 1, "hidden_dims": 16, "activations": "relu"},
        "antecedent_feedforward": {"num_layers": 1, "hidden_dims": 16, "activations": "relu"},
        "feature_size": 8,
        "max_span_width": 4,
        "lexical_dropout": 0.0,
        "max_antecedents": 20,
        **overrides,
    }
    model = Model.from_params(vocab=vocab, params=Params(config))
    assert isinstance(model, CorefElmo)
    return model


@pytest.mark.slow  # about 12 s of CPU, 40 s on a loaded machine
def test_learns_the_clusters_of_a_document():
    """Trained on one document, the model finds some of its gold clusters (chance gives about 0 F1).

    All spans per word are kept here: with lambda = 0.4 a freshly initialised model keeps almost
    no gold mention of so short a document, and pruned spans get no gradient (as in Lee et al.).
    """
    torch.manual_seed(0)
    instances = _instances(elmo=False)[:1]
    vocab = Vocabulary.from_instances(instances)
    model = small_coref_model(vocab, elmo=False, spans_per_word=1.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)
    tensors = tensor_batch(instances, vocab)
    losses = fit(model, tensors, optimizer, steps=220)
    model.get_metrics(reset=True)
    model.eval()
    with torch.no_grad():
        model(**tensors)
    metrics = model.get_metrics(reset=True)
    assert losses[-1] < 0.01 * losses[0]
    assert metrics["muc_precision"] == 1.0 and metrics["coref_f1"] > 0.3


def test_sentences_embedded_in_chunks_equal_one_pass():
    instances = _instances(elmo=True)[:1]
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(1)
    whole = small_coref_model(vocab, elmo=True, sentences_per_embedding_batch=64).eval()
    chunked = small_coref_model(vocab, elmo=True, sentences_per_embedding_batch=2).eval()
    chunked.load_state_dict(whole.state_dict())
    tensors = tensor_batch(instances, vocab)
    with torch.no_grad():
        embedded_whole = embed_sentences(whole.text_field_embedder, tensors["text"], 64)
        embedded_chunked = embed_sentences(chunked.text_field_embedder, tensors["text"], 2)
    assert embedded_whole.shape[1] == 5
    assert torch.allclose(embedded_whole, embedded_chunked, atol=1e-6)
    # the model embeds its sentences_per_embedding_batch at a time: 5 sentences in 1 pass, or in 3
    passes = {}
    for name, model in (("whole", whole), ("chunked", chunked)):
        embedder = model.text_field_embedder
        embedder.register_forward_hook(lambda *_, name=name: passes.update({name: passes.get(name, 0) + 1}))
    with torch.no_grad():
        outputs = [model(**tensors) for model in (whole, chunked)]
    assert passes == {"whole": 1, "chunked": 3}
    assert torch.equal(outputs[0]["top_spans"], outputs[1]["top_spans"])
    assert outputs[0]["clusters"] == outputs[1]["clusters"]


def test_outputs_pruning_antecedents_and_readable_clusters():
    instances = _instances(elmo=False)[:2]
    vocab = Vocabulary.from_instances(instances)
    model = small_coref_model(vocab, elmo=False, max_antecedents=3).eval()
    with torch.no_grad():
        output = model(**tensor_batch(instances, vocab))
    lengths = [sum(len(s) for s in i["metadata"].metadata["sentences"]) for i in instances]
    kept = [int(torch.tensor(0.4 * n).ceil()) for n in lengths]
    assert output["top_spans"].shape[:2] == (2, max(kept))
    assert output["antecedent_indices"].shape[2] == 3
    # the spans kept for each document are in document order
    for b, k in enumerate(kept):
        starts = output["top_spans"][b, :k].tolist()
        assert starts == sorted(starts)
    readable = model.make_output_human_readable(output)
    for tokens, clusters, strings in zip(
        readable["document"], readable["clusters"], readable["cluster_strings"], strict=True
    ):
        assert [[" ".join(tokens[s : e + 1]) for s, e in c] for c in clusters] == strings
    metrics = model.get_metrics(reset=True)
    assert metrics["kept_spans_per_doc"] == pytest.approx(sum(kept) / 2)
    assert metrics["antecedent_pairs_per_doc"] == pytest.approx(sum(sum(min(i, 3) for i in range(k)) for k in kept) / 2)


def test_clusters_follow_antecedent_links():
    spans = torch.tensor([[0, 0], [2, 3], [5, 5], [7, 8]])
    antecedents = torch.tensor([[0, 0], [0, 0], [1, 0], [2, 1]])  # offsets 1 and 2 back
    predicted = torch.tensor([-1, -1, 1, 0])  # span 2 -> span 0; span 3 -> span 2
    assert clusters_from_antecedents(spans, antecedents, predicted, keep=4) == [[(0, 0), (5, 5), (7, 8)]]


def test_stateful_elmo_is_a_configuration_error():
    from allennlp.common.checks import ConfigurationError

    instances = _instances(elmo=False)[:1]
    vocab = Vocabulary.from_instances(instances)
    embedders = {
        "elmo": {"type": "fast_elmo", "options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE, "stateful": True}
    }
    with pytest.raises(ConfigurationError, match="stateless"):
        small_coref_model(vocab, elmo=False, text_field_embedder={"token_embedders": embedders})


def test_a_wrong_width_in_the_config_says_to_leave_it_out():
    from allennlp.common.checks import ConfigurationError

    vocab = Vocabulary.from_instances(_instances(elmo=False)[:1])
    context = {"type": "lstm", "input_size": 99, "hidden_size": 16, "bidirectional": True}
    with pytest.raises(ConfigurationError, match=r"context_layer's input_size \(leave it out.*got 16 and 99"):
        small_coref_model(vocab, elmo=False, context_layer=context)
    # the span width: 2 x 32 BiLSTM states + 8-d width embedding + 16-d head attention = 88
    mention = {"input_dim": 90, "num_layers": 1, "hidden_dims": 16, "activations": "relu"}
    with pytest.raises(ConfigurationError, match=r"span width must match the mention_feedforward's.*got 88 and 90"):
        small_coref_model(vocab, elmo=False, mention_feedforward=mention)
