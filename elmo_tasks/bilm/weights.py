"""Reading and writing the original ELMo hdf5 weight layout (bilm-tf's dataset names and shapes: see ``_entries``).

The file stores TensorFlow layouts: ``x @ W`` matrices, conv kernels as ``(1, width, in,
out)`` and LSTM input and recurrent weights stacked in one ``W_0``. Its forget-gate bias lacks
the +1 TensorFlow adds at run time; our LSTM adds it at run time too, so files round-trip
bit for bit.
"""

import os
from typing import Any, Dict, Iterator, Optional, Tuple

import numpy as np
import torch

from elmo_tasks.atomic_files import FirstWriteFailure
from elmo_tasks.bilm.errors import WeightFileError
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.references import resolve_bilm_file

_LSTM = "RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell/"

# Trained biLM weights stay far below this (the shipped biLM's and bilm-tf's test model's stay below 3); a value
# above it is a flipped exponent bit, which a file without checksums (hdf5's default) shows only this way.
MAX_PLAUSIBLE_WEIGHT = 1e6
_WEIGHTS_REMEDY = "copy or download it again, or export it again with `allennlp export-bilm`"


def load_bilm(options_file: str, weight_file: Optional[str], stateful: bool = False, dropout: float = 0.0) -> BiLM:
    """Build a biLM from ``options.json`` and load ``weight_file`` into it (random if ``None``)."""
    options = BilmOptions.from_file(options_file)
    model = BiLM(options, stateful=stateful, dropout=dropout)
    if weight_file is not None:
        load_weights(model, weight_file, options_source=options_file)
    return model


def _entries(options: BilmOptions) -> Iterator[Tuple[str, Tuple[int, ...]]]:
    """Every dataset the options imply, with its expected shape."""
    p, d = options.projection_dim, options.dim
    yield "char_embed", (options.n_characters - 1, options.char_embedding_dim)
    for i, (width, count) in enumerate(options.filters):
        yield f"CNN/W_cnn_{i}", (1, width, options.char_embedding_dim, count)
        yield f"CNN/b_cnn_{i}", (count,)
    f = options.n_filters
    for k in range(options.n_highway):
        for name in ("transform", "carry"):
            yield f"CNN_high_{k}/W_{name}", (f, f)
            yield f"CNN_high_{k}/b_{name}", (f,)
    if f != p:
        yield "CNN_proj/W_proj", (f, p)
        yield "CNN_proj/b_proj", (p,)
    for direction in range(2):
        for layer in range(options.n_layers):
            prefix = _LSTM.format(d=direction, l=layer)
            yield prefix + "W_0", (p + p, 4 * d)
            yield prefix + "B", (4 * d,)
            yield prefix + "W_P_0", (d, p)


def _open(path: str, mode: str):  # h5py is imported lazily: only file I/O needs it
    import h5py

    return h5py.File(path, mode)


def read_weight_arrays(path: str, options: BilmOptions, options_source: str = "the options") -> Dict[str, np.ndarray]:
    """Read and shape-check every dataset; errors name the dataset and both shapes."""
    path = resolve_bilm_file(path)  # an elmo_tasks: package reference, or a path
    if not os.path.isfile(path):
        raise WeightFileError(f"weight file not found: {path}")
    try:
        handle = _open(path, "r")
    except OSError as err:
        raise WeightFileError(
            f"cannot read {path} as hdf5 ({_one_line(err)}); the file is corrupt or not an ELMo weight file: "
            f"{_WEIGHTS_REMEDY}"
        ) from None
    arrays: Dict[str, np.ndarray] = {}
    with handle:
        for name, shape in _entries(options):
            try:
                arrays[name] = _read_dataset(handle, path, name, shape, options_source)
            except WeightFileError:
                raise
            except (OSError, KeyError, RuntimeError, ValueError, TypeError, AttributeError) as err:
                # what h5py raises for damaged metadata (a flipped bit in a header, a truncated file)
                raise WeightFileError(
                    f"{path}: cannot read dataset '{name}' ({type(err).__name__}: {_one_line(err)}); the file is "
                    f"corrupt: {_WEIGHTS_REMEDY}"
                ) from None
    return arrays


def _read_dataset(handle: Any, path: str, name: str, shape: Tuple[int, ...], options_source: str) -> np.ndarray:
    """Dataset ``name`` of the open file as float32, checked: present, of ``shape``, finite and plausible."""
    if name not in handle:
        raise WeightFileError(
            f"{path} has no dataset '{name}', which {options_source} implies; "
            "is this the weight file that belongs to these options?"
        )
    dataset = handle[name]
    found = tuple(dataset.shape)
    if found != shape:
        raise WeightFileError(
            f"{path}: dataset '{name}' has shape {found} but {options_source} expects {shape}; "
            "the options and the weight file do not belong together"
        )
    array = np.asarray(dataset[...], dtype=np.float32)
    # max and min are NaN when a value is: no comparison holds then (and no temporary array is made)
    if array.size and not (array.max() <= MAX_PLAUSIBLE_WEIGHT and array.min() >= -MAX_PLAUSIBLE_WEIGHT):
        implausible = ~np.isfinite(array) | (np.abs(array) > MAX_PLAUSIBLE_WEIGHT)
        index = tuple(int(i) for i in np.argwhere(implausible)[0])
        raise WeightFileError(
            f"{path}: dataset '{name}' holds {array[index]!r} at {list(index)}; expected finite weights below "
            f"{MAX_PLAUSIBLE_WEIGHT:g} in size, so the file is corrupt (a damaged copy): {_WEIGHTS_REMEDY}"
        )
    return array


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def load_weights(model: BiLM, path: str, options_source: str = "the options") -> None:
    """Copy the hdf5 weights at ``path`` into ``model`` (checked against its options first)."""
    arrays = read_weight_arrays(path, model.options, options_source)
    with torch.no_grad():
        for name, target in _our_tensors(model).items():
            target.copy_(torch.from_numpy(_file_to_ours(name, arrays, model.options)).to(target.device, target.dtype))
    model.weight_file = path


def bilm_state_from_arrays(arrays: Dict[str, np.ndarray], options: BilmOptions) -> Dict[str, torch.Tensor]:
    """A ``BiLM`` state dict built from the hdf5 datasets (e.g. converted from another layout)."""
    with torch.device("meta"):  # parameter names only, nothing allocated
        names = [name for name, _ in BiLM(options).named_parameters()]
    state = {name: torch.from_numpy(np.ascontiguousarray(_file_to_ours(name, arrays, options))) for name in names}
    embedding = state["token_encoder.char_embedding"]  # the file has no row for id 0 (padding)
    state["token_encoder.char_embedding"] = torch.cat([embedding.new_zeros(1, embedding.shape[1]), embedding])
    return state


def weight_arrays(model: BiLM) -> Dict[str, np.ndarray]:
    """The model's weights as the hdf5 datasets of the original layout (float32)."""
    ours = {name: t.detach().float().cpu().numpy() for name, t in _our_tensors(model).items()}
    arrays: Dict[str, np.ndarray] = {}
    for name, _ in _entries(model.options):
        arrays[name] = _ours_to_file(name, ours, model.options)
    return arrays


def save_weights(model: BiLM, path: str, dtype: str = "float32") -> None:
    """Write ``model`` in the original layout (``dtype='float16'`` halves the file)."""
    try:
        raw = FirstWriteFailure(path)
    except OSError as err:
        raise WeightFileError(f"cannot write {path} ({err})") from None
    # through FirstWriteFailure: on a full disk HDF5 would retry its cached writes at every close,
    # printing a traceback each time; the first failed write is raised (an OSError with its errno)
    import h5py  # lazily, as in _open

    try:
        with raw, h5py.File(raw, "w") as handle:
            for name, array in weight_arrays(model).items():
                if raw.failure is not None:
                    break
                handle.create_dataset(name, data=array.astype(dtype))
    except (OSError, RuntimeError):
        if raw.failure is None:
            raise
    if raw.failure is not None:
        raise raw.failure


def export_bilm(model: BiLM, directory: str, dtype: str = "float32") -> Tuple[str, str]:
    """Write ``options.json`` and ``weights.hdf5`` into ``directory``; returns both paths."""
    os.makedirs(directory, exist_ok=True)
    options_path, weights_path = os.path.join(directory, "options.json"), os.path.join(directory, "weights.hdf5")
    model.options.save(options_path)
    save_weights(model, weights_path, dtype=dtype)
    return options_path, weights_path


def _our_tensors(model: BiLM) -> Dict[str, torch.Tensor]:
    """Our parameters under stable names (each maps to one or two file datasets)."""
    tensors = {name: param.data for name, param in model.named_parameters()}
    tensors["token_encoder.char_embedding"] = tensors["token_encoder.char_embedding"][1:]  # row 0 is padding
    return tensors


def _lstm_names(name: str) -> Tuple[int, int, str]:
    """'RNN_1/RNN/MultiRNNCell/Cell0/LSTMCell/W_0' -> (direction 1, layer 0, 'W_0')."""
    parts = name.split("/")
    return int(parts[0][4:]), int(parts[3][4:]), parts[-1]


def _file_to_ours(ours_name: str, arrays: Dict[str, np.ndarray], options: BilmOptions) -> np.ndarray:
    """Build our tensor ``ours_name`` from the file's datasets."""
    if ours_name == "token_encoder.char_embedding":
        return arrays["char_embed"]
    part = ours_name.split(".")
    if part[1] == "convolutions":  # file (1, width, in, out) -> torch (out, in, width)
        i = int(part[2])
        return arrays[f"CNN/W_cnn_{i}"][0].transpose(2, 1, 0) if part[3] == "weight" else arrays[f"CNN/b_cnn_{i}"]
    if part[1] == "highway":  # our (n_highway, ...) stacks of x @ W matrices
        kind, what = part[2].split("_")  # w_transform -> (w, transform)
        prefix = "W" if kind == "w" else "b"
        return np.stack([arrays[f"CNN_high_{k}/{prefix}_{what}"] for k in range(options.n_highway)])
    if part[1] == "projection":
        return arrays["CNN_proj/W_proj"].T if part[2] == "weight" else arrays["CNN_proj/b_proj"]
    layer, what = int(part[1]), part[2]
    p = options.projection_dim
    per_direction = []
    for direction in range(2):
        prefix = _LSTM.format(d=direction, l=layer)
        if what == "w_input":
            per_direction.append(arrays[prefix + "W_0"][:p])
        elif what == "w_state":
            per_direction.append(arrays[prefix + "W_0"][p:])
        elif what == "bias":
            per_direction.append(arrays[prefix + "B"])
        else:
            per_direction.append(arrays[prefix + "W_P_0"])
    return np.stack(per_direction)


def _ours_to_file(file_name: str, ours: Dict[str, np.ndarray], options: BilmOptions) -> np.ndarray:
    """Build the file's dataset ``file_name`` from our tensors."""
    if file_name == "char_embed":
        return ours["token_encoder.char_embedding"]
    if file_name.startswith("CNN/"):
        kind, i = file_name[4], file_name.rsplit("_", 1)[1]
        if kind == "W":
            return ours[f"token_encoder.convolutions.{i}.weight"].transpose(2, 1, 0)[np.newaxis]
        return ours[f"token_encoder.convolutions.{i}.bias"]
    if file_name.startswith("CNN_high_"):
        group, name = file_name.split("/")
        k = int(group[len("CNN_high_") :])
        kind, what = name.split("_")
        return ours[f"token_encoder.highway.{kind.lower()}_{what}"][k]
    if file_name == "CNN_proj/W_proj":
        return ours["token_encoder.projection.weight"].T
    if file_name == "CNN_proj/b_proj":
        return ours["token_encoder.projection.bias"]
    direction, layer, what = _lstm_names(file_name)
    if what == "W_0":
        return np.concatenate([ours[f"layers.{layer}.w_input"][direction], ours[f"layers.{layer}.w_state"][direction]])
    if what == "B":
        return ours[f"layers.{layer}.bias"][direction]
    return ours[f"layers.{layer}.w_projection"][direction]
