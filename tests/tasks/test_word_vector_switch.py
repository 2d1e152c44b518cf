"""ELMO_TASKS_WORD_VECTORS: one switch gives every task experiment pretrained word vectors.

Without the variable the resolved configs are those of the recorded runs (so their records stay
valid); with it, the word embedding starts from the file, and words seen only in the evaluation
data keep their pretrained vectors.
"""

import json
import os
from pathlib import Path
from typing import Dict

import _jsonnet
import numpy as np
import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive

from elmo_tasks.config_defaults import DEFAULTS
from elmo_tasks.experiments import LIBRARY
from tests.conftest import FIXTURES_ROOT, ROOT

# the paper's recipe per task: vectors fine-tuned (NER, SRL) or kept fixed
TRAINABLE_WITH_VECTORS = {"ner": True, "srl": True, "coref": False, "snli": False, "squad": False, "sst5": False}


def _resolved(experiment: str, vectors: str = "", data: str = "fixtures") -> Dict:
    env = {**DEFAULTS, "ELMO_TASKS_DATA": data, "ELMO_TASKS_WORD_VECTORS": vectors}
    return json.loads(
        _jsonnet.evaluate_file(str(ROOT / "experiments" / experiment), ext_vars=env, jpathdir=[str(LIBRARY)])
    )


@pytest.mark.parametrize("task", sorted(TRAINABLE_WITH_VECTORS))
@pytest.mark.parametrize("variant", ["baseline", "elmo"])
def test_the_switch_sets_the_embedding_the_vocabulary_and_nothing_else(task, variant):
    plain = _resolved(f"{task}_{variant}.jsonnet", data="full")
    switched = _resolved(f"{task}_{variant}.jsonnet", vectors="/data/vectors.txt", data="full")
    embedder = switched["model"]["text_field_embedder"]["token_embedders"]["tokens"]
    assert embedder["pretrained_file"] == "/data/vectors.txt"
    assert embedder["trainable"] is TRAINABLE_WITH_VECTORS[task]
    assert "pretrained_file" not in plain["model"]["text_field_embedder"]["token_embedders"]["tokens"]
    assert switched["datasets_for_vocab_creation"] == ["train", "validation", "test"]
    assert switched["vocabulary"] == {
        "pretrained_files": {"tokens": "/data/vectors.txt"},
        "only_include_pretrained_words": True,
    }
    assert plain.get("datasets_for_vocab_creation") in (["train"], None) and "test_data_path" not in plain
    changed = {key for key in set(plain) | set(switched) if plain.get(key) != switched.get(key)}
    assert changed <= {
        "model",
        "vocabulary",
        "datasets_for_vocab_creation",
        "test_data_path",
        "dataset_reader",
        "validation_dataset_reader",
    }


def _write_vectors(path: Path, words, dim: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    vectors = {word: rng.standard_normal(dim).round(4) for word in words}
    with open(path, "w", encoding="utf-8") as out:
        for word, vector in vectors.items():
            out.write(word + " " + " ".join(f"{value:.4f}" for value in vector) + "\n")
    return vectors


def _words(conll_file: Path):
    return {line.split()[0].lower() for line in conll_file.read_text().splitlines() if line.strip()}


@pytest.mark.slow
def test_ner_trains_with_vectors_and_keeps_them_for_words_seen_only_in_test(tmp_path, monkeypatch):
    train_words = _words(FIXTURES_ROOT / "ner" / "train.txt")
    test_only = sorted(
        _words(FIXTURES_ROOT / "ner" / "test.txt") - train_words - _words(FIXTURES_ROOT / "ner" / "dev.txt")
    )
    assert test_only, "the fixture's test file should have words of its own"
    vectors = _write_vectors(tmp_path / "vectors.txt", sorted(train_words)[::2] + test_only, dim=50)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ELMO_TASKS_WORD_VECTORS", str(tmp_path / "vectors.txt"))
    os.environ.setdefault("ELMO_TASKS_DATA", "fixtures")
    train_model_from_file(
        str(ROOT / "experiments" / "ner_baseline.jsonnet"),
        str(tmp_path / "run"),
        overrides=json.dumps({"trainer.num_epochs": 1}),
    )
    model = load_archive(str(tmp_path / "run" / "model.tar.gz")).model
    vocab = model.vocab.get_token_to_index_vocabulary("tokens")
    assert set(vocab) - {"@@PADDING@@", "@@UNKNOWN@@"} == set(vectors)  # only words with a vector
    weight = model.text_field_embedder.token_embedder_tokens.weight.detach().numpy()
    for word in test_only:  # never trained on: exactly the file's vector
        np.testing.assert_allclose(weight[vocab[word]], vectors[word], atol=1e-6)
