"""The pieces of the paper's SRL recipe (appendix A.5, He et al. 2017) that the `full` configs add: the
tag sequence's summed loss, the orthogonal tag projection and zero LSTM biases but the forget gate's,
and the recipe's model and trainer trained, saved and reloaded by AllenNLP's model checks."""

import json
import os
from pathlib import Path

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.nn.util import sequence_cross_entropy_with_logits

from elmo_tasks.tasks.srl import SrlElmo
from tests.conftest import ROOT
from tests.tasks.experiment_case import ExperimentModelTestCase, write_tiny_config
from tests.tasks.srl.test_srl_model import TINY_SRL, _model_without_data

# The full configs' LSTM stack shrunk to two layers: one of each direction.
TINY_RECIPE = {**TINY_SRL, "model.encoder.num_layers": 2}


def _recipe_config(experiment: str) -> dict:
    """``experiments/<experiment>`` as `full` mode resolves it (the paper's recipe), shrunk."""
    env = {**os.environ, "ELMO_TASKS_DATA": "full"}
    return Params.from_file(str(ROOT / "experiments" / experiment), json.dumps(TINY_RECIPE), ext_vars=env).as_dict()


def _tags_vocabulary() -> Vocabulary:
    vocab = Vocabulary(non_padded_namespaces=[])
    for tag in ["O", "B-A0", "I-A0", "B-V"]:
        vocab.add_token_to_namespace(tag, "srl_roles")
    return vocab


@pytest.mark.parametrize("sentence_loss", ["sum", "mean"])
def test_the_loss_sums_or_averages_each_sentences_word_losses_then_averages_the_batch(sentence_loss):
    model = _model_without_data(_tags_vocabulary())
    model.sentence_loss = sentence_loss
    torch.manual_seed(0)
    logits = torch.randn(3, 5, model.num_tags)
    tags = torch.randint(0, model.num_tags, (3, 5))
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]], dtype=torch.bool)
    word_losses = -torch.log_softmax(logits, -1).gather(-1, tags.unsqueeze(-1)).squeeze(-1)
    per_sentence = [word_losses[row, : int(mask[row].sum())] for row in range(3)]
    if sentence_loss == "sum":  # the negative log-likelihood of each sentence's tag sequence
        expected = torch.stack([losses.sum() for losses in per_sentence]).mean()
    else:  # AllenNLP's sequence_cross_entropy_with_logits, as before
        expected = torch.stack([losses.mean() for losses in per_sentence]).mean()
        assert torch.equal(model.tag_loss(logits, tags, mask), sequence_cross_entropy_with_logits(logits, tags, mask))
    assert torch.allclose(model.tag_loss(logits, tags, mask), expected)


def test_an_unknown_sentence_loss_is_refused():
    params = _recipe_config("srl_baseline.jsonnet")["model"]
    params["sentence_loss"] = "median"
    with pytest.raises(ConfigurationError, match="sentence_loss must be one of mean, sum"):
        Model.from_params(vocab=_tags_vocabulary(), params=Params(params))


def test_the_recipes_tag_projection_is_orthogonal_and_only_forget_gate_biases_are_not_zero():
    """A.5: the final dense layer and all LSTM cells orthogonal, forget-gate biases 1, every other 0."""
    config = _recipe_config("srl_baseline.jsonnet")
    reader = DatasetReader.from_params(Params(config["dataset_reader"]))
    vocab = Vocabulary.from_instances(reader.read(str(ROOT / "fixtures" / "srl" / "conll2005_train.txt")))
    hidden = config["model"]["encoder"]["hidden_size"]
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=Params(config["model"]))
    assert isinstance(model, SrlElmo)
    weight = model.tag_projection._module.weight  # (tags, encoder width)
    # orthonormal columns (here more tags than encoder units) or rows
    gram = weight.t() @ weight if weight.size(0) >= weight.size(1) else weight @ weight.t()
    assert torch.allclose(gram, torch.eye(gram.size(0)), atol=1e-5)
    assert not model.tag_projection._module.bias.any()
    for name, parameter in model.encoder.named_parameters():
        if name.endswith("input_linearity.bias"):
            assert not parameter.any(), name
        elif name.endswith("state_linearity.bias"):  # gates: input, forget, memory, output, highway
            forget = torch.zeros_like(parameter)
            forget[hidden : 2 * hidden] = 1.0
            assert torch.equal(parameter, forget), name


class TestSrlRecipeModelCase(ExperimentModelTestCase):
    """The `full` configs' model and trainer (the paper's recipe), shrunk, on the fixture data."""

    @pytest.mark.parametrize("variant", ["baseline", "elmo"])
    def test_train_save_load_and_batch_consistency(self, variant: str) -> None:
        experiment = f"srl_{variant}.jsonnet"
        recipe = _recipe_config(experiment)
        assert recipe["model"]["sentence_loss"] == "sum"
        recipe["trainer"]["num_epochs"] = 2
        param_file = write_tiny_config(
            experiment, {"model": recipe["model"], "trainer": recipe["trainer"]}, Path(self.TEST_DIR)
        )
        self.set_up_model(Path(param_file), json.loads(Path(param_file).read_text())["validation_data_path"], seed=0)
        self.ensure_model_can_train_save_and_load(param_file)
        self.ensure_batch_predictions_are_consistent()
