"""Starting the language model from files that do not fit: each mistake gets a clear error."""

from pathlib import Path

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from elmo_tasks.bilm import BiLM, BilmOptions, WeightFileError
from elmo_tasks.tasks.lm import BilmLanguageModel, export_model

REPO = Path(__file__).resolve().parents[3]
TF_OPTIONS = str(REPO / "fixtures" / "bilm_tf" / "options.json")
TF_WEIGHTS = str(REPO / "fixtures" / "bilm_tf" / "lm_weights.hdf5")


def _vocab(words) -> Vocabulary:
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["<S>", "</S>", *words], "lm_targets")
    return vocab


def _options(**lstm) -> dict:
    data = BilmOptions.from_file(TF_OPTIONS).to_json_dict()
    data["lstm"].update(lstm)
    return data


def test_inline_options_must_agree_with_the_options_file():
    with pytest.raises(ConfigurationError, match=r"lstm\.dim: 128 \(config\) != 64 \(file\)"):
        BilmLanguageModel(_vocab(["a"]), options=_options(dim=128), options_file=TF_OPTIONS)
    model = BilmLanguageModel(_vocab(["a"]), options=_options(), options_file=TF_OPTIONS, pretrained_file=TF_WEIGHTS)
    assert model.bilm.options.dim == 64


def test_weights_that_do_not_fit_the_options_are_refused(tmp_path):
    other = tmp_path / "options.json"
    BilmOptions.from_json_dict(_options(projection_dim=8)).save(str(other))
    with pytest.raises(WeightFileError, match="shape"):
        BilmLanguageModel(_vocab(["a"]), options_file=str(other), pretrained_file=TF_WEIGHTS)


def test_softmax_from_another_vocabulary_is_refused(tmp_path):
    trained = BilmLanguageModel(_vocab(["cat", "dog"]), options_file=TF_OPTIONS)
    export_model(trained, str(tmp_path / "elmo"))
    with pytest.raises(ConfigurationError, match=r"different vocabulary.*'dog' vs 'cow'.*from_files"):
        BilmLanguageModel(_vocab(["cat", "cow"]), options_file=TF_OPTIONS, pretrained_file=str(tmp_path / "elmo"))
    same = BilmLanguageModel(
        Vocabulary.from_files(str(tmp_path / "elmo" / "vocabulary")),
        options_file=TF_OPTIONS,
        pretrained_file=str(tmp_path / "elmo"),
    )
    assert (same.softmax.weight == trained.softmax.weight).all()


def test_missing_sizes_and_missing_boundary_tokens():
    with pytest.raises(ConfigurationError, match="needs `options`"):
        BilmLanguageModel(_vocab(["a"]))
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["a"], "lm_targets")
    with pytest.raises(ConfigurationError, match="lacks <S>"):
        BilmLanguageModel(vocab, options_file=TF_OPTIONS)


def test_export_finds_the_one_bilm(tmp_path):
    with pytest.raises(ConfigurationError, match="no biLM"):
        export_model(torch.nn.Linear(2, 2), str(tmp_path))  # e.g. a model without ELMo
    assert isinstance(BilmLanguageModel(_vocab(["a"]), options_file=TF_OPTIONS).bilm, BiLM)


def test_config_mistakes_are_configuration_errors(tmp_path):
    with pytest.raises(ConfigurationError, match="sampler must be one of"):
        BilmLanguageModel(_vocab(["a"]), options_file=TF_OPTIONS, sampler="zipf")
    with pytest.raises(ConfigurationError, match="num_samples must be a positive integer, got 0"):
        BilmLanguageModel(_vocab(["a"]), options_file=TF_OPTIONS, num_samples=0)
    from elmo_tasks.tasks.lm import ExportBilmCallback

    with pytest.raises(ConfigurationError, match="dtype must be one of"):
        ExportBilmCallback(str(tmp_path), dtype="int8")


def test_an_unknown_autocast_dtype_is_refused():
    with pytest.raises(ConfigurationError, match=r"autocast is 'float16'; use one of \['bfloat16'\]"):
        BilmLanguageModel(_vocab(["a"]), options_file=TF_OPTIONS, autocast="float16")
