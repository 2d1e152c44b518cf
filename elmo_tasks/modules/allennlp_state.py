"""Reading state dicts written by AllenNLP's own ELMo (``elmo_token_embedder``, ``Elmo``).

An archive trained with AllenNLP's ELMo holds the same biLM arrays as the hdf5 file, in
AllenNLP's module layout (gates reordered, the forget bias +1 folded in, highway carry gates
negated, transposed matrices). Here they are turned back into the hdf5 datasets, from which
``elmo_tasks.bilm.weights`` builds our biLM's tensors, so no layout is described twice.
"""

from typing import Dict

import numpy as np
import torch

from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.weights import bilm_state_from_arrays

#: Where AllenNLP's biLM sits inside ``Elmo`` (``ElmoTokenEmbedder`` adds ``_elmo.`` in front).
ALLENNLP_BILM = "_elmo_lstm."
_CHARS = ALLENNLP_BILM + "_token_embedder."
_LSTM = ALLENNLP_BILM + "_elmo_lstm."
#: AllenNLP's cached word vectors (``vocab_to_cache``): derived data, rebuilt by us from the weights.
ALLENNLP_WORD_CACHE = ALLENNLP_BILM + "_word_embedding.weight"


def _swap_middle_gates(matrix: np.ndarray, cell: int) -> np.ndarray:
    """PyTorch's (i, f, j, o) gate blocks <-> TensorFlow's (i, j, f, o): the swap is its own inverse."""
    out = matrix.copy()
    out[cell : 2 * cell], out[2 * cell : 3 * cell] = matrix[2 * cell : 3 * cell], matrix[cell : 2 * cell]
    return out


def allennlp_bilm_arrays(state: Dict[str, torch.Tensor], options: BilmOptions) -> Dict[str, np.ndarray]:
    """The hdf5 datasets of the biLM inside an AllenNLP ``Elmo`` state dict (keys relative to it)."""

    def array(key: str) -> np.ndarray:
        return state[key].detach().float().cpu().numpy()

    arrays = {"char_embed": array(_CHARS + "_char_embedding_weights")[1:]}
    for i in range(len(options.filters)):
        arrays[f"CNN/W_cnn_{i}"] = array(f"{_CHARS}char_conv_{i}.weight").transpose(2, 1, 0)[np.newaxis]
        arrays[f"CNN/b_cnn_{i}"] = array(f"{_CHARS}char_conv_{i}.bias")
    f = options.n_filters
    for k in range(options.n_highway):  # one Linear: [W_transform^T; -W_carry^T]
        weight, bias = array(f"{_CHARS}_highways._layers.{k}.weight"), array(f"{_CHARS}_highways._layers.{k}.bias")
        arrays[f"CNN_high_{k}/W_transform"] = weight[:f].T.copy()
        arrays[f"CNN_high_{k}/W_carry"] = -weight[f:].T
        arrays[f"CNN_high_{k}/b_transform"] = bias[:f]
        arrays[f"CNN_high_{k}/b_carry"] = -bias[f:]
    if f != options.projection_dim:
        arrays["CNN_proj/W_proj"] = array(_CHARS + "_projection.weight").T.copy()
        arrays["CNN_proj/b_proj"] = array(_CHARS + "_projection.bias")
    cell = options.dim
    for layer in range(options.n_layers):
        for direction, name in enumerate(("forward", "backward")):
            prefix = f"{_LSTM}{name}_layer_{layer}."
            inputs = _swap_middle_gates(array(prefix + "input_linearity.weight"), cell)
            recurrent = _swap_middle_gates(array(prefix + "state_linearity.weight"), cell)
            bias = _swap_middle_gates(array(prefix + "state_linearity.bias"), cell)
            bias[2 * cell : 3 * cell] -= 1.0  # AllenNLP folds TensorFlow's run-time forget bias in
            target = f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell/"
            arrays[target + "W_0"] = np.concatenate([inputs, recurrent], axis=1).T.copy()
            arrays[target + "B"] = bias
            arrays[target + "W_P_0"] = array(prefix + "state_projection.weight").T.copy()
    return arrays


def is_allennlp_bilm_state(state: Dict[str, torch.Tensor], prefix: str) -> bool:
    return any(key.startswith(prefix + ALLENNLP_BILM) for key in state)


def convert_allennlp_state(
    state: Dict[str, torch.Tensor], prefix: str, options: BilmOptions, bilm_name: str = "bilm."
) -> int:
    """Rewrite, in place, the AllenNLP biLM keys under ``prefix`` as our biLM's keys.

    Returns how many AllenNLP keys were consumed (the cached word vectors are dropped: we
    rebuild them from the weights).
    """
    relative = {key[len(prefix) :]: value for key, value in state.items() if key.startswith(prefix + ALLENNLP_BILM)}
    ours = bilm_state_from_arrays(allennlp_bilm_arrays(relative, options), options)
    for key in relative:
        del state[prefix + key]
    for name, tensor in ours.items():
        state[prefix + bilm_name + name] = tensor
    return len(relative)
