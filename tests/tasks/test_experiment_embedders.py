"""Every experiment sizes each embedding by the vocabulary namespace its indexer fills.

A character embedding left on the default ``tokens`` namespace got one row per word instead of one per
character: it worked while the word vocabulary was the larger one, initialised its rows at a scale set
by the word count, and failed with an index error once rare words were folded into the unknown word.
"""

import pytest
from allennlp.modules.token_embedders import TokenCharactersEncoder

from tests.conftest import ROOT
from tests.tasks.experiment_case import build_fixture_model

EXPERIMENTS = sorted(p.name for p in (ROOT / "experiments").glob("*.jsonnet") if not p.name.startswith("bilm_"))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_character_embeddings_have_one_row_per_character(experiment, monkeypatch):
    monkeypatch.chdir(ROOT)
    model, vocab = build_fixture_model(experiment)
    encoders = [module for module in model.modules() if isinstance(module, TokenCharactersEncoder)]
    for encoder in encoders:
        rows = encoder._embedding._module.num_embeddings
        assert rows == vocab.get_vocab_size("token_characters"), (
            f"{experiment}: the character embedding has {rows} rows for "
            f"{vocab.get_vocab_size('token_characters')} characters; set its vocab_namespace to 'token_characters'"
        )
