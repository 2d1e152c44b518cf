"""Predict the props of whole sentences with a trained model, keeping every predicate of a
sentence in the same batch where it fits (so ELMo's biLM runs once per sentence).

Memory: the model sees one copy of the sentence per predicate, so a batch costs memory in
proportion to its predicates times its padded length, and so does each predicate's indexed
instance (ELMo's character ids of every token: about 2 KB per token). :func:`predict_predicates`
therefore builds the instances one pass at a time, passes of at most ``TOKENS_PER_BATCH``
predicates x padded tokens, and drops them after the pass. A long sentence's predicates take
several passes (its biLM layers come from ``fast_elmo``'s layer cache after the first), and memory
no longer grows with the square of the sentence's length.
"""

from typing import Any, Dict, Iterable, Iterator, List, Sequence, Tuple

from allennlp.data import DatasetReader
from allennlp.models import Model

from elmo_tasks.tasks.input_limits import TOKENS_PER_BATCH, bounded_batches
from elmo_tasks.tasks.srl.props import PropsSentence
from elmo_tasks.tasks.srl.reader import SrlSentence


def predict_predicates(
    model: Model,
    reader: DatasetReader,
    predicates: Sequence[Tuple[Sequence[str], int]],
    tokens_per_batch: int = TOKENS_PER_BATCH,
) -> Iterator[Dict[str, Any]]:
    """The model's output (``tags``, ``props``, ``description``, ...) for each ``(words, predicate
    position)``, in order; see the module docstring for the passes."""
    for batch in bounded_batches(predicates, lambda predicate: len(predicate[0]), tokens_per_batch):
        instances = []
        for words, position in batch:
            instance = reader.text_to_instance(list(words), position)
            reader.apply_token_indexers(instance)
            instances.append(instance)
        yield from model.forward_on_instances(instances)


def predict_sentences(
    model: Model, reader: DatasetReader, sentences: Iterable[SrlSentence], batch_size: int = 64
) -> Iterator[Tuple[SrlSentence, PropsSentence]]:
    """(input sentence, predicted props) in input order; the predicted props keep the input's
    target column and predict one column per target. Batches hold whole sentences, up to
    ``batch_size`` predicates (a sentence with more predicates gets a batch of its own), and each
    goes through the model in passes of at most ``TOKENS_PER_BATCH`` predicates x padded tokens."""
    pending: List[SrlSentence] = []
    pending_predicates = 0
    for sentence in sentences:
        count = len(sentence.props.predicate_positions)
        if pending and pending_predicates + count > batch_size:
            yield from _predict_batch(model, reader, pending)
            pending, pending_predicates = [], 0
        pending.append(sentence)
        pending_predicates += count
    if pending:
        yield from _predict_batch(model, reader, pending)


def _predict_batch(
    model: Model, reader: DatasetReader, sentences: List[SrlSentence]
) -> Iterator[Tuple[SrlSentence, PropsSentence]]:
    predicates = [
        (sentence.words, position) for sentence in sentences for position in sentence.props.predicate_positions
    ]
    outputs = predict_predicates(model, reader, predicates)
    for sentence in sentences:
        columns = [list(next(outputs)["props"]) for _position in sentence.props.predicate_positions]
        yield sentence, PropsSentence(list(sentence.props.targets), columns, sentence.props.line)
