"""Predict the props of whole sentences with a trained model, keeping every predicate of a
sentence in the same batch (so ELMo's biLM runs once per sentence)."""

from typing import Iterable, Iterator, List, Tuple

from allennlp.data import DatasetReader
from allennlp.models import Model

from elmo_tasks.tasks.srl.props import PropsSentence
from elmo_tasks.tasks.srl.reader import SrlSentence


def predict_sentences(
    model: Model, reader: DatasetReader, sentences: Iterable[SrlSentence], batch_size: int = 64
) -> Iterator[Tuple[SrlSentence, PropsSentence]]:
    """(input sentence, predicted props) in input order; the predicted props keep the input's
    target column and predict one column per target. Batches hold whole sentences, up to
    ``batch_size`` predicates (a sentence with more predicates gets a batch of its own)."""
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
    instances = []
    for sentence in sentences:
        for position in sentence.props.predicate_positions:
            instance = reader.text_to_instance(sentence.words, position)
            reader.apply_token_indexers(instance)
            instances.append(instance)
    outputs = model.forward_on_instances(instances) if instances else []
    cursor = 0
    for sentence in sentences:
        columns = []
        for _position in sentence.props.predicate_positions:
            columns.append(list(outputs[cursor]["props"]))
            cursor += 1
        yield sentence, PropsSentence(list(sentence.props.targets), columns, sentence.props.line)
