"""The SQuAD model (BiDAF + self-attention): train/save/load, span decoding, long passages, one biLM pass
per passage, the answers' text, pinned numbers."""

from typing import List, Optional

import pytest
import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import Instance, Vocabulary
from allennlp.modules.seq2seq_encoders import GruSeq2SeqEncoder, Seq2SeqEncoder
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from elmo_tasks.tasks.squad.model import BidafSelfAttention
from elmo_tasks.tasks.squad.reader import SquadV1Reader
from elmo_tasks.tasks.squad.spans import best_spans
from tests.conftest import FIXTURES_ROOT
from tests.tasks.experiment_case import BaselineAndElmoModelCase
from tests.tasks.hand_built_models import fit, tensor_batch, token_indexers, words_and_elmo
from tests.tasks.pinned_outputs import CASES, check_pinned

DEV = FIXTURES_ROOT / "squad" / "dev.json"
PASSAGES = [
    "The Panthers beat the Denver Broncos in Santa Clara in February 2016.",
    "Warsaw is the capital of Poland and lies on the Vistula river.",
]
QUESTIONS = [
    ("Who lost the game?", 0, "Denver Broncos"),
    ("Where was the game?", 0, "Santa Clara"),
    ("What is the capital of Poland?", 1, "Warsaw"),
    ("Which river runs through Warsaw?", 1, "Vistula"),
    ("When was the game?", 0, "February 2016"),
]

# Both attentions add their bias to every similarity a softmax then normalises (over the question,
# over the passage after a max, over the passage for self-attention): a softmax ignores a shared
# shift, so these biases' true gradient is exactly zero (what is computed is float noise or 0).
ZERO_GRADIENT = {"bi_attention._bias", "self_attention._bias"}
# Overrides that shrink experiments/squad_*.jsonnet for ModelTestCase: one key per size (the fixture
# sizes are already small), one epoch on the development sample.
TINY_SQUAD = {
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 6,
    "model.phrase_layer.hidden_size": 6,
    "model.attention_dim": 8,
    "train_data_path": "fixtures/squad/dev.json",
    "trainer.num_epochs": 1,
}


class TestSquadModelCase(BaselineAndElmoModelCase):
    """AllenNLP's model checks on the real SQuAD configs, shrunk, trained on the development sample."""

    task = "squad"
    overrides = TINY_SQUAD
    gradients_to_ignore = ZERO_GRADIENT


def _instances(elmo: bool) -> List[Instance]:
    reader = SquadV1Reader(token_indexers=token_indexers(elmo))
    instances = []
    for i, (q, p, a) in enumerate(QUESTIONS):
        instance = reader.text_to_instance(q, PASSAGES[p], f"q{i}", [PASSAGES[p].index(a)], [a])
        assert instance is not None  # None only for an answer beyond a passage cap, and there is none
        instances.append(instance)
    return instances


def _model(
    vocab: Vocabulary, elmo: bool, dropout: float = 0.0, hidden: int = 6, elmo_at_output: Optional[bool] = None
) -> BidafSelfAttention:
    """With ELMo (``elmo``) at the input, and at the output too unless ``elmo_at_output`` says otherwise."""
    text_field_embedder = words_and_elmo(vocab, 5, elmo)
    gru: Lazy[Seq2SeqEncoder] = Lazy(
        GruSeq2SeqEncoder, constructor_extras={"hidden_size": hidden, "bidirectional": True}
    )
    return BidafSelfAttention.from_partial_objects(
        vocab=vocab,
        text_field_embedder=text_field_embedder,
        phrase_layer=gru,
        residual_encoder=gru,
        span_start_encoder=gru,
        span_end_encoder=gru,
        attention_dim=8,
        elmo_at_output=elmo if elmo_at_output is None else elmo_at_output,
        dropout=dropout,
    )


def test_best_span_is_the_brute_force_argmax_within_the_length_limit():
    torch.manual_seed(0)
    lengths = [9, 30, 4]
    mask = torch.zeros(3, 30, dtype=torch.bool)
    for row, n in enumerate(lengths):
        mask[row, :n] = True
    start = torch.log_softmax(torch.randn(3, 30).masked_fill(~mask, -1e9), -1)
    end = torch.log_softmax(torch.randn(3, 30).masked_fill(~mask, -1e9), -1)
    spans, log_probs = best_spans(start, end, mask, max_span_length=5)
    for row, n in enumerate(lengths):
        candidates = [(start[row, i] + end[row, j], i, j) for i in range(n) for j in range(i, min(n, i + 5))]
        best = max(candidates)
        assert spans[row].tolist() == [best[1], best[2]]
        assert log_probs[row].item() == pytest.approx(best[0].item())


def test_best_span_hand_worked():
    # p(start) = [.1, .6, .3], p(end) = [.5, .1, .4]; end >= start: (1,2) .24 is the best of all;
    # one-token spans only: (0,0) .05, (1,1) .06, (2,2) .12
    start, end = torch.tensor([[0.1, 0.6, 0.3]]).log(), torch.tensor([[0.5, 0.1, 0.4]]).log()
    spans, log_probs = best_spans(start, end, torch.ones(1, 3, dtype=torch.bool), max_span_length=17)
    assert spans.tolist() == [[1, 2]] and log_probs.exp().item() == pytest.approx(0.24)
    spans, log_probs = best_spans(start, end, torch.ones(1, 3, dtype=torch.bool), max_span_length=1)
    assert spans.tolist() == [[2, 2]] and log_probs.exp().item() == pytest.approx(0.12)


def test_elmo_at_output_needs_two_representations():
    vocab = Vocabulary.from_instances(_instances(elmo=False))
    with pytest.raises(ConfigurationError, match="squad_model: elmo_at_output=true needs a 'fast_elmo'"):
        _model(vocab, elmo=False, elmo_at_output=True)


def test_learns_the_training_questions():
    torch.manual_seed(1)
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=False, hidden=12)
    tensors = tensor_batch(instances, vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    model.get_metrics(reset=True)
    fit(model, tensors, optimizer, steps=60)
    model.get_metrics(reset=True)
    model.eval()
    output = model.make_output_human_readable(model(**tensors))
    assert output["best_span_str"] == [answer for _, _, answer in QUESTIONS]
    assert model.get_metrics()["em"] == 1.0


@pytest.mark.parametrize("elmo", [False, True])
def test_shared_passages_are_encoded_once_and_give_the_same_answers(elmo):
    torch.manual_seed(2)
    instances = _instances(elmo)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo).eval()
    seen_rows = []
    model.phrase_layer.register_forward_hook(lambda module, args, out: seen_rows.append(args[0].size(0)))
    together = model.make_output_human_readable(model(**tensor_batch(instances, vocab)))
    assert seen_rows == [5, 2]  # the questions, then the two distinct passages
    for index, instance in enumerate(instances):
        alone = model.make_output_human_readable(model(**tensor_batch([instance], vocab)))
        length = len(instance["passage"].tokens)
        for key in ("span_start_probs", "span_end_probs"):
            assert torch.allclose(together[key][index, :length], alone[key][0, :length], atol=1e-5)
        assert together["best_span_str"][index] == alone["best_span_str"][0]


def test_human_readable_answers_are_the_passage_text_of_the_best_spans():
    instances = _instances(elmo=False)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=False).eval()
    output = model(**tensor_batch(instances, vocab))
    assert "best_span_str" not in output  # forward gives tensors (and the metadata they are read with)
    readable = model.make_output_human_readable(output)
    assert readable["question_id"] == [f"q{i}" for i in range(len(QUESTIONS))]
    for row, (start, end) in enumerate(readable["best_span"].tolist()):
        passage = PASSAGES[QUESTIONS[row][1]]
        tokens = instances[row]["passage"].tokens
        char_start, char_end = tokens[start].idx, tokens[end].idx_end
        assert readable["answer_offsets"][row] == (char_start, char_end)
        assert readable["best_span_str"][row] == passage[char_start:char_end]
    # One instance through AllenNLP's forward_on_instance (what predictors call) gives one answer.
    single = model.forward_on_instance(instances[0])
    assert single["best_span_str"] == readable["best_span_str"][0] and single["question_id"] == "q0"


@pytest.mark.parametrize("case", sorted(CASES["squad"]))
def test_outputs_and_gradients_are_the_pinned_ones(case):
    """The numbers the model computed before ELMo at the output became explicit (tests/tasks/pinned_outputs.py)."""
    check_pinned("squad", case)


def test_frozen_bilm_runs_once_per_distinct_passage_per_epoch():
    instances = _instances(elmo=True)
    vocab = Vocabulary.from_instances(instances)
    model = _model(vocab, elmo=True)
    bilm = model._elmo_at_output.elmo.bilm
    rows_through_bilm = []
    bilm.register_forward_hook(lambda module, args, out: rows_through_bilm.append(args[0].size(0)))
    tensors = tensor_batch(instances, vocab)
    model(**tensors)
    assert sum(rows_through_bilm) == 5 + 2  # five distinct questions, two distinct passages
    model(**tensors)  # a second epoch: everything comes from the cache
    assert sum(rows_through_bilm) == 7


class LargestTensor(TorchDispatchMode):
    """Records the size of the largest tensor any operation produces while active."""

    def __init__(self) -> None:
        super().__init__()
        self.largest_bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for value in tree_leaves(result):
            if isinstance(value, torch.Tensor):
                self.largest_bytes = max(self.largest_bytes, value.numel() * value.element_size())
        return result


def test_long_passage_memory_grows_only_with_the_attention_matrix():
    torch.manual_seed(3)
    words = ("the river flows north through the old city past the bridge and the market " * 200).split()[:2100]
    passage = " ".join(words) + " Warsaw is the capital."
    reader = SquadV1Reader()
    instance = reader.text_to_instance("What is the capital?", passage)
    length = len(instance["passage"].tokens)
    assert length > 2000
    vocab = Vocabulary.from_instances([instance])
    model = _model(vocab, elmo=False).eval()
    with torch.no_grad(), LargestTensor() as watch:
        output = model(**tensor_batch([instance], vocab))
    largest = watch.largest_bytes
    output = model.make_output_human_readable(output)
    attention_matrix = length * length * 4  # one float32 passage x passage matrix
    assert largest == attention_matrix  # the self-attention scores themselves, nothing larger
    start, end = output["best_span"][0].tolist()
    assert 0 <= start <= end < min(length, start + 17)
    assert passage[slice(*output["answer_offsets"][0])] == output["best_span_str"][0]
