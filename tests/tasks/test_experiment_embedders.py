"""Every experiment sizes each embedding by the vocabulary namespace its indexer fills.

A character embedding left on the default ``tokens`` namespace got one row per word instead of one per
character: it worked while the word vocabulary was the larger one, initialised its rows at a scale set
by the word count, and failed with an index error once rare words were folded into the unknown word.
"""

import os

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenCharactersEncoder

from tests.conftest import ROOT

EXPERIMENTS = sorted(p.name for p in (ROOT / "experiments").glob("*.jsonnet") if not p.name.startswith("bilm_"))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_character_embeddings_have_one_row_per_character(experiment, monkeypatch):
    monkeypatch.chdir(ROOT)
    env = {**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    params = Params.from_file(str(ROOT / "experiments" / experiment), ext_vars=env)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))[:20]
    vocab = Vocabulary.from_params(params.pop("vocabulary", Params({})), instances=instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    encoders = [module for module in model.modules() if isinstance(module, TokenCharactersEncoder)]
    for encoder in encoders:
        rows = encoder._embedding._module.num_embeddings
        assert rows == vocab.get_vocab_size("token_characters"), (
            f"{experiment}: the character embedding has {rows} rows for "
            f"{vocab.get_vocab_size('token_characters')} characters; set its vocab_namespace to 'token_characters'"
        )
