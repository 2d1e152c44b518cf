"""``variational_alternating_lstm``, the SRL recipe's encoder: He et al. (2017)'s dropout, one mask per
sentence and layer on the layer's output, which the next layer and the layer's next step both read
(elmo_tasks/modules/alternating_lstm.py); padding, evaluation mode, AllenNLP's scheme behind the switch,
and an SRL model trained with it."""

import json
from typing import Dict, List, Tuple

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.modules.seq2seq_encoders import StackedAlternatingLstmSeq2SeqEncoder

from elmo_tasks.modules import alternating_lstm
from elmo_tasks.modules.alternating_lstm import VariationalAlternatingLstmEncoder
from elmo_tasks.tasks.srl import SrlElmo
from tests.tasks.hand_built_models import fit, tensor_batch
from tests.tasks.srl.test_srl_model import TRAIN
from tests.tasks.srl.test_srl_recipe import _recipe_config

DROPOUT = 0.5
INPUT, HIDDEN = 5, 12
# Lengths in decreasing order, so that the wrapper's sort by length keeps the rows where they are.
LENGTHS = [6, 4, 2]

#: (the step's input, the state it reads, its output before any dropout) per call of a layer's cell
CellCall = Tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def _encoder(drop_layer_outputs: bool = True, dropout: float = DROPOUT, layers: int = 2):
    torch.manual_seed(0)
    return VariationalAlternatingLstmEncoder(
        INPUT, HIDDEN, layers, recurrent_dropout_probability=dropout, drop_layer_outputs=drop_layer_outputs
    )


CPU = torch.device("cpu")


def _batch(device: torch.device = CPU) -> Tuple[torch.Tensor, torch.Tensor]:
    """Inputs of ``LENGTHS`` words, padded with random vectors too, and their mask."""
    torch.manual_seed(1)
    inputs = torch.randn(len(LENGTHS), max(LENGTHS), INPUT, device=device)
    mask = torch.arange(max(LENGTHS), device=device)[None, :] < torch.tensor(LENGTHS, device=device)[:, None]
    return inputs, mask


def _run_recording_cells(encoder, inputs, mask) -> Tuple[torch.Tensor, List[List[CellCall]]]:
    """The encoder's output, and every call of each layer's cell, in the order the layer made them."""
    calls: List[List[CellCall]] = [[] for _ in encoder._module.lstm_layers]
    handles = []
    for layer, layer_calls in zip(encoder._module.lstm_layers, calls, strict=True):

        def record(_cell, args, output, layer_calls=layer_calls):
            step_input, (state, _memory) = args[0], args[1]
            layer_calls.append((step_input.detach(), state.detach(), output[0].detach()))

        handles.append(layer.cell.register_forward_hook(record))
    try:
        output = encoder(inputs, mask)
    finally:
        for handle in handles:
            handle.remove()
    return output.detach(), calls


def _by_position(layer_calls: List[CellCall], go_forward: bool) -> List[CellCall]:
    """A layer's cell calls indexed by the position they computed (a backward layer starts at the end)."""
    return layer_calls if go_forward else layer_calls[::-1]


def _check_one_mask_per_sentence_and_layer(device: torch.device) -> None:
    encoder = _encoder().to(device).train()
    inputs, mask = _batch(device)
    output, calls = _run_recording_cells(encoder, inputs, mask)
    first, second = (_by_position(calls[i], encoder._module.lstm_layers[i].go_forward) for i in range(2))
    assert encoder._module.lstm_layers[1].go_forward is False  # the second layer runs backwards
    # what each layer emits, per position: layer 0's is what layer 1's cell reads, layer 1's the output
    emitted = [
        torch.stack([step_input for step_input, _, _ in second], dim=1),
        output,
    ]
    masks: List[torch.Tensor] = []
    for layer_index, by_position in enumerate((first, second)):
        undropped = torch.stack([cell_output for _, _, cell_output in by_position], dim=1)
        row_masks: List[torch.Tensor] = []
        for row, length in enumerate(LENGTHS):
            # the units the layer dropped at the first word, to be the same at every word of the sentence
            row_mask = (emitted[layer_index][row, 0] != 0).float() / (1 - DROPOUT)
            row_masks.append(row_mask)
            for position in range(length):
                expected = undropped[row, position] * row_mask
                torch.testing.assert_close(emitted[layer_index][row, position], expected)
            # the state each step reads is what the step before it emitted, dropped out the same way
            order = range(length) if layer_index == 0 else range(length - 1, -1, -1)
            previous = None
            for position in order:
                state_read = by_position[position][1][row]
                if previous is None:
                    assert not state_read.any()  # the zero initial state
                else:
                    torch.testing.assert_close(state_read, emitted[layer_index][row, previous])
                previous = position
        masks.append(torch.stack(row_masks))
    for layer_masks in masks:
        assert (layer_masks == 0).any() and (layer_masks != 0).any()  # some units dropped, some kept
        assert not torch.equal(layer_masks[0], layer_masks[1])  # each sentence its own mask
    assert not torch.equal(masks[0], masks[1])  # each layer its own


def test_one_mask_per_sentence_and_layer_drops_what_the_layer_emits_and_its_next_step_reads():
    _check_one_mask_per_sentence_and_layer(CPU)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU that torch can use here")
def test_on_the_gpu_too():
    _check_one_mask_per_sentence_and_layer(torch.device("cuda:0"))
    encoder = _encoder().eval()
    inputs, mask = _batch()
    with torch.no_grad():
        on_cpu = encoder(inputs, mask)
        on_gpu = encoder.to("cuda:0")(inputs.cuda(), mask.cuda())
    torch.testing.assert_close(on_gpu.cpu(), on_cpu, atol=1e-5, rtol=1e-5)


def test_allennlps_scheme_leaves_what_a_layer_emits_undropped():
    """The switch off: AllenNLP's cell masks the state it reads, and the next layer reads undropped outputs."""
    encoder = _encoder(drop_layer_outputs=False).train()
    inputs, mask = _batch()
    output, calls = _run_recording_cells(encoder, inputs, mask)
    second = _by_position(calls[1], go_forward=False)
    for row, length in enumerate(LENGTHS):
        for position in range(length):
            torch.testing.assert_close(output[row, position], second[position][2][row])


def test_padding_stays_zero_and_never_reaches_a_sentence(monkeypatch):
    encoder = _encoder().train()
    inputs, mask = _batch()
    torch.manual_seed(2)
    output = encoder(inputs, mask)
    noisy = inputs.clone()
    noisy[~mask] = 100.0  # whatever the padded positions hold
    torch.manual_seed(2)  # the same dropout masks
    output_with_noisy_padding = encoder(noisy, mask)
    assert not output[~mask].any() and not output_with_noisy_padding[~mask].any()
    torch.testing.assert_close(output_with_noisy_padding[mask], output[mask])
    # The shortest sentence alone and padded in the batch, with masks that keep every unit (the masks are
    # drawn per batch): the backward layer starts in the padding, and its state must not carry any of it.
    monkeypatch.setattr(alternating_lstm, "get_dropout_mask", lambda _p, like: torch.ones_like(like))
    shortest = len(LENGTHS) - 1
    alone = encoder(inputs[shortest:, : LENGTHS[shortest]], mask[shortest:, : LENGTHS[shortest]])
    padded = encoder(inputs, mask)
    torch.testing.assert_close(padded[shortest, : LENGTHS[shortest]], alone[0])


def test_no_dropout_in_evaluation():
    encoder = _encoder()
    inputs, mask = _batch()
    allennlp = StackedAlternatingLstmSeq2SeqEncoder(INPUT, HIDDEN, 2, recurrent_dropout_probability=DROPOUT)
    allennlp.load_state_dict(encoder.state_dict())  # the same parameters, by the same names
    with torch.no_grad():
        evaluated = [encoder.eval()(inputs, mask) for _ in range(2)]
        torch.manual_seed(3)
        trained = encoder.train()(inputs, mask)
        reference = allennlp.eval()(inputs, mask)
    assert torch.equal(evaluated[0], evaluated[1])
    torch.testing.assert_close(evaluated[0], reference)
    assert not torch.allclose(trained[mask], evaluated[0][mask])  # training does drop out


def test_the_switch_off_is_allennlps_alternating_lstm_in_training_too():
    ours = _encoder(drop_layer_outputs=False).train()
    torch.manual_seed(0)
    allennlp = StackedAlternatingLstmSeq2SeqEncoder(INPUT, HIDDEN, 2, recurrent_dropout_probability=DROPOUT).train()
    ours_state, allennlp_state = ours.state_dict(), allennlp.state_dict()
    assert list(ours_state) == list(allennlp_state)
    assert all(torch.equal(ours_state[name], allennlp_state[name]) for name in ours_state)
    inputs, mask = _batch()
    outputs = []
    for encoder in (ours, allennlp, _encoder(drop_layer_outputs=True).train()):
        torch.manual_seed(4)
        outputs.append(encoder(inputs, mask))
    assert torch.equal(outputs[0], outputs[1])
    assert not torch.allclose(outputs[0][mask], outputs[2][mask])  # He et al.'s differs in training


def test_a_dropout_of_one_or_more_is_refused():
    with pytest.raises(ConfigurationError, match="recurrent_dropout_probability must be in"):
        _encoder(dropout=1.0)


def test_an_initial_state_of_the_wrong_number_of_layers_is_refused():
    encoder = _encoder().train()
    inputs, mask = _batch()
    wrong = torch.zeros(1, len(LENGTHS), HIDDEN)
    with pytest.raises(ConfigurationError, match="expected one per layer"):
        encoder._module(torch.nn.utils.rnn.pack_padded_sequence(inputs, LENGTHS, batch_first=True), (wrong, wrong))


def _recipe_model_and_batch() -> Tuple[SrlElmo, Dict]:
    config = _recipe_config("srl_baseline.jsonnet")
    assert config["model"]["encoder"]["type"] == "variational_alternating_lstm"
    assert config["model"]["encoder"]["drop_layer_outputs"] is True
    reader = DatasetReader.from_params(Params(config["dataset_reader"]))
    instances = list(reader.read(TRAIN))
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(config["model"]))))
    assert isinstance(model, SrlElmo)
    assert isinstance(model.encoder, VariationalAlternatingLstmEncoder)
    return model, tensor_batch(instances, vocab)


def test_training_the_recipes_model_lowers_its_loss():
    model, tensors = _recipe_model_and_batch()
    with torch.no_grad():
        before = model.eval()(**tensors)["loss"].item()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-6)  # the recipe's
    torch.manual_seed(5)
    fit(model.train(), tensors, optimizer, steps=30)
    with torch.no_grad():
        after = model.eval()(**tensors)["loss"].item()
    assert after < 0.8 * before, (before, after)
