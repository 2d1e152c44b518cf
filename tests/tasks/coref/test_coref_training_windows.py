"""Lee et al.'s random training windows (``training_windows.py``): a window is the reader's instance of those
sentences, a new window is drawn each epoch, the same ones for the same seed, and only training batches are
cropped."""

import os
import random
from typing import Any, Dict, List, Tuple

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.data.fields import MetadataField, TextField

from elmo_tasks.tasks.coref.conll import read_conll_documents
from elmo_tasks.tasks.coref.names import WINDOW_COLLATOR
from elmo_tasks.tasks.coref.reader import Conll2012CorefReader
from elmo_tasks.tasks.coref.training_windows import RandomWindowCollator, random_window, sentence_window
from elmo_tasks.tasks.instance_fields import field_of, items_of
from tests.conftest import ROOT
from tests.tasks.hand_built_models import token_indexers

TRAIN = str(ROOT / "fixtures" / "coref" / "train.gold_conll")


def _reader() -> Conll2012CorefReader:
    return Conll2012CorefReader(token_indexers=token_indexers(elmo=False, lowercase_tokens=False), max_span_width=4)


def _tensors(instances: List[Instance], vocab: Vocabulary) -> Dict:
    batch = Batch(instances)
    batch.index_instances(vocab)
    return batch.as_tensor_dict()


def _same_cluster(labels: torch.Tensor) -> torch.Tensor:
    """Which pairs of spans share a gold cluster: what the loss reads of the labels (their numbers do not matter)."""
    return (labels.unsqueeze(0) == labels.unsqueeze(1)) & (labels >= 0).unsqueeze(0)


@pytest.fixture(scope="module")
def documents() -> Tuple[List[Instance], Vocabulary]:
    reader = _reader()
    instances = list(reader.read(TRAIN))
    for instance in instances:
        reader.apply_token_indexers(instance)
    return instances, Vocabulary.from_instances(instances)


def test_a_window_is_the_readers_instance_of_its_sentences(documents):
    """Every window of every fixture document against the reader's instance of the same sentences, their
    speakers and the clusters inside them: the same words, candidate spans, gold links and speakers."""
    instances, vocab = documents
    reader = _reader()
    checked = 0
    for instance, document in zip(instances, read_conll_documents(TRAIN), strict=True):
        num_sentences = len(document.sentences)
        for count in (1, 2, num_sentences - 1):
            for first in range(num_sentences - count + 1):
                window = sentence_window(instance, first, count)
                begin = sum(len(sentence) for sentence in document.sentences[:first])
                end = begin + sum(len(sentence) for sentence in document.sentences[first : first + count])
                clusters = [
                    [(start - begin, end_ - begin) for start, end_ in cluster if begin <= start and end_ < end]
                    for cluster in document.clusters
                ]
                clusters = [cluster for cluster in clusters if cluster]
                expected = reader.text_to_instance(
                    document.sentences[first : first + count],
                    document.speakers[first : first + count],
                    document.genre,
                    document.name,
                    clusters,
                )
                reader.apply_token_indexers(expected)
                found, wanted = _tensors([window], vocab), _tensors([expected], vocab)
                assert torch.equal(found["text"]["tokens"]["tokens"], wanted["text"]["tokens"]["tokens"])
                assert torch.equal(found["spans"], wanted["spans"])
                assert torch.equal(_same_cluster(found["span_labels"][0]), _same_cluster(wanted["span_labels"][0]))
                speakers = found["speaker_ids"][0]
                wanted_speakers = wanted["speaker_ids"][0]
                assert torch.equal(speakers.unsqueeze(0) == speakers.unsqueeze(1), _same_cluster(wanted_speakers))
                metadata = field_of(window, "metadata", MetadataField).metadata
                assert metadata["clusters"] == field_of(expected, "metadata", MetadataField).metadata["clusters"]
                assert metadata["sentences"] == document.sentences[first : first + count]
                assert metadata["name"] == f"{document.name} [sentences {first}-{first + count - 1}]"
                checked += 1
    assert checked > 50


def test_a_window_that_does_not_fit_is_an_error(documents):
    instances, _ = documents
    with pytest.raises(ValueError, match="does not fit 5 sentences"):
        sentence_window(instances[0], 4, 2)


def test_short_documents_are_left_whole_and_long_ones_get_windows_of_the_limit(documents):
    instances, _ = documents
    assert random_window(instances[0], 5) is instances[0]
    random.seed(3)
    sizes = {len(items_of(random_window(instances[0], 2), "text", TextField)) for _ in range(20)}
    assert sizes == {2}


def _names_of_epochs(collate_fn: Dict, seed: int, epochs: int) -> List[List[str]]:
    """The windows (document names with their sentences) of ``epochs`` epochs of a training loader."""
    random.seed(seed)
    torch.manual_seed(seed)
    params = Params({"batch_size": 1, "shuffle": True, "collate_fn": dict(collate_fn)})  # Params pops its dict
    loader = MultiProcessDataLoader.from_params(params, reader=_reader(), data_path=TRAIN)
    loader.index_with(Vocabulary.from_instances(loader.iter_instances()))
    return [sorted(_document_name(batch) for batch in loader) for _ in range(epochs)]


def _document_name(batch: Dict[str, Any]) -> str:
    """The name of a one-document batch's document (its metadata, a list of one dict)."""
    return batch["metadata"][0]["name"]


def test_each_epoch_draws_new_windows_and_a_seed_the_same_ones():
    collate_fn = {"type": WINDOW_COLLATOR, "max_sentences": 2}
    epochs = _names_of_epochs(collate_fn, seed=7, epochs=4)
    assert all(len(names) == 6 and all("[sentences" in name for name in names) for names in epochs)
    assert len({tuple(names) for names in epochs}) > 1  # six documents of 4 to 6 sentences: new windows
    assert _names_of_epochs(collate_fn, seed=7, epochs=4) == epochs
    assert _names_of_epochs(collate_fn, seed=8, epochs=4) != epochs


def test_the_vocabulary_has_the_words_outside_the_windows():
    """The loader builds the vocabulary from whole documents: the collator crops only batches."""
    params = Params({"batch_size": 1, "collate_fn": {"type": WINDOW_COLLATOR, "max_sentences": 1}})
    loader = MultiProcessDataLoader.from_params(params, reader=_reader(), data_path=TRAIN)
    vocab = Vocabulary.from_instances(loader.iter_instances())
    words = {word for document in read_conll_documents(TRAIN) for sentence in document.sentences for word in sentence}
    assert words <= set(vocab.get_token_to_index_vocabulary("tokens"))


@pytest.mark.parametrize("max_sentences", [0, -1, 1.5, True])
def test_a_window_length_that_is_not_a_positive_integer_is_refused(max_sentences):
    with pytest.raises(ConfigurationError, match=f"{WINDOW_COLLATOR}: max_sentences must be a positive integer"):
        RandomWindowCollator(max_sentences)


def _config(mode: str) -> Dict:
    env = {**os.environ, "ELMO_TASKS_DATA": mode}
    return Params.from_file(str(ROOT / "experiments" / "coref_elmo.jsonnet"), ext_vars=env).as_dict()


def test_the_recipe_crops_training_documents_only_and_the_other_modes_cut_them_into_pieces():
    full = _config("full")
    assert "max_sentences" not in full["dataset_reader"] and "max_sentences" not in full["validation_dataset_reader"]
    assert full["data_loader"]["collate_fn"] == {"type": WINDOW_COLLATOR, "max_sentences": 50}
    assert "collate_fn" not in full["validation_data_loader"]
    for mode in ("substitutes", "fixtures"):
        config = _config(mode)
        assert config["dataset_reader"]["max_sentences"] == 50, mode
        assert "collate_fn" not in config["data_loader"], mode
