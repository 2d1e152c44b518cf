"""State dicts in the names of AllenNLP's own ELMo (``elmo_token_embedder``, ``Elmo``), read and written.

An archive trained with AllenNLP's ELMo holds the same biLM arrays as the hdf5 file, in
AllenNLP's module layout (gates reordered, the forget bias +1 folded in, highway carry gates
negated, transposed matrices). Reading, they are turned back into the hdf5 datasets, from which
``elmo_tasks.bilm.weights`` builds our biLM's tensors, so no layout is described twice.

Writing (the drop-in, so that its archives load in plain AllenNLP): :func:`save_under_allennlp_names`
is a state-dict post-hook that replaces our biLM's keys with the ones AllenNLP's ``Elmo``,
``_ElmoBiLm``, ``_ElmoCharacterEncoder`` and ``ElmoLstm`` give the same arrays
(:func:`allennlp_bilm_state`, the inverse of :func:`allennlp_bilm_arrays`), and renames the
mixes and the projection as AllenNLP's modules name them.
"""

from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

from elmo_tasks.bilm.characters import word_to_character_ids
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.weights import bilm_state_from_arrays, weight_arrays

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


def allennlp_bilm_state(arrays: Dict[str, np.ndarray], options: BilmOptions) -> Dict[str, np.ndarray]:
    """AllenNLP's biLM tensors (keys relative to its ``Elmo``) from the hdf5 datasets: the inverse of
    :func:`allennlp_bilm_arrays`."""
    embedding = arrays["char_embed"]  # AllenNLP adds a zero row for id 0 (padding), as we do
    state = {_CHARS + "_char_embedding_weights": np.concatenate([np.zeros_like(embedding[:1]), embedding])}
    for i in range(len(options.filters)):
        state[f"{_CHARS}char_conv_{i}.weight"] = arrays[f"CNN/W_cnn_{i}"][0].transpose(2, 1, 0)
        state[f"{_CHARS}char_conv_{i}.bias"] = arrays[f"CNN/b_cnn_{i}"]
    for k in range(options.n_highway):  # one Linear: [W_transform^T; -W_carry^T]
        transform, carry = arrays[f"CNN_high_{k}/W_transform"], arrays[f"CNN_high_{k}/W_carry"]
        state[f"{_CHARS}_highways._layers.{k}.weight"] = np.concatenate([transform.T, -carry.T])
        state[f"{_CHARS}_highways._layers.{k}.bias"] = np.concatenate(
            [arrays[f"CNN_high_{k}/b_transform"], -arrays[f"CNN_high_{k}/b_carry"]]
        )
    if options.n_filters != options.projection_dim:
        state[_CHARS + "_projection.weight"] = arrays["CNN_proj/W_proj"].T
        state[_CHARS + "_projection.bias"] = arrays["CNN_proj/b_proj"]
    cell, width = options.dim, options.projection_dim  # every layer's input is projection_dim wide
    for layer in range(options.n_layers):
        for direction, name in enumerate(("forward", "backward")):
            prefix = f"{_LSTM}{name}_layer_{layer}."
            source = f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell/"
            stacked = arrays[source + "W_0"].T  # (4 * cell, input + projection)
            bias = arrays[source + "B"].copy()
            bias[2 * cell : 3 * cell] += 1.0  # AllenNLP folds TensorFlow's run-time forget bias in
            state[prefix + "input_linearity.weight"] = _swap_middle_gates(stacked[:, :width], cell)
            state[prefix + "state_linearity.weight"] = _swap_middle_gates(stacked[:, width:], cell)
            state[prefix + "state_linearity.bias"] = _swap_middle_gates(bias, cell)
            state[prefix + "state_projection.weight"] = arrays[source + "W_P_0"].T
    return {key: np.ascontiguousarray(value) for key, value in state.items()}


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


def cached_word_vectors(bilm: BiLM, words: Sequence[str]) -> torch.Tensor:
    """The token layer of each of ``words``, in order: what AllenNLP keeps as ``_word_embedding`` for
    ``vocab_to_cache`` (it computes the rows once, from the same character CNN, highway and projection)."""
    chars = bilm.options.max_characters_per_token
    device = bilm.token_encoder.char_embedding.device
    ids = torch.tensor([word_to_character_ids(word, chars) for word in words], dtype=torch.long, device=device)
    with torch.no_grad():
        pieces = [bilm.token_encoder.encode_words(chunk) for chunk in ids.reshape(-1, chars).split(1024)]
    return torch.cat(pieces) if pieces else bilm.token_encoder.encode_words(ids.reshape(0, chars))


def save_under_allennlp_names(
    module: Any,
    state: Dict[str, Any],
    prefix: str,
    local_metadata: Any,
    elmo_prefix: str = "",
    cached_words: Optional[List[str]] = None,
) -> None:
    """State-dict post-hook of an ELMo module of ours (``ElmoMixes``): its keys as AllenNLP's module names them.

    ``elmo_prefix`` is where AllenNLP keeps its ``Elmo`` inside the module (``"_elmo."`` in its
    ``ElmoTokenEmbedder``, ``""`` for ``Elmo`` itself); ``cached_words`` the ``vocab_to_cache`` words,
    whose vectors AllenNLP keeps as a parameter. Loading takes either naming
    (``ElmoMixes._read_allennlp_keys``), so these state dicts load into ours and into AllenNLP's.
    """
    ours, theirs = prefix + "bilm.", prefix + elmo_prefix + ALLENNLP_BILM
    own_keys = [key for key in state if key.startswith(ours)]
    if isinstance(module.bilm, BiLM) and own_keys:
        like = state[own_keys[0]]
        for key in own_keys:
            del state[key]
        converted = {
            name: torch.from_numpy(array)
            for name, array in allennlp_bilm_state(weight_arrays(module.bilm), module.bilm.options).items()
        }
        if cached_words is not None:  # AllenNLP lists them between its character encoder and its LSTMs
            items = list(converted.items())
            split = sum(1 for name in converted if name.startswith(_CHARS))
            vectors = (ALLENNLP_WORD_CACHE, cached_word_vectors(module.bilm, cached_words))
            converted = dict(items[:split] + [vectors] + items[split:])
        for name, tensor in converted.items():
            state[prefix + elmo_prefix + name] = tensor.to(like.device, like.dtype)
    else:  # a custom biLM module (``Elmo(module=...)``) keeps its own names, under AllenNLP's attribute
        for key in own_keys:
            state[theirs + key[len(ours) :]] = state.pop(key)
    for key in [key for key in state if key.startswith(prefix + "scalar_mix_")]:
        state[prefix + elmo_prefix + key[len(prefix) :]] = state.pop(key)
    for key in [key for key in state if key.startswith(prefix + "projection.")]:
        state[prefix + "_" + key[len(prefix) :]] = state.pop(key)
