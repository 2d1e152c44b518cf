"""Damaged biLM files (``weights.hdf5``, ``options.json``, ``softmax.npz``) end in one line naming the file.

A copy cut short, a few bytes flipped (in the file's metadata or in a dataset's values), an options
file cut short or of the wrong JSON type, a softmax cut short or damaged: each is a ``BilmError``
subclass whose message names the file and what to do, through the Python API, the ``fast_elmo``
embedder and ``allennlp train`` (where the program ends with that one line, no traceback).
"""

import json
import shutil
from pathlib import Path
from typing import List, Tuple

import h5py
import numpy as np
import pytest
import torch
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder

from elmo_tasks.bilm import OptionsError, WeightFileError, load_bilm
from elmo_tasks.bilm.errors import SoftmaxFileError
from elmo_tasks.bilm.softmax_file import read_softmax, write_softmax
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE, run_allennlp
from tests.uncaught_errors import uncaught_error_line

WEIGHT_BYTES = Path(WEIGHT_FILE).read_bytes()


def _dataset_places() -> List[Tuple[str, int, int]]:
    """``(name, byte offset of its values, byte offset of its object header)`` of every dataset of the
    tests' weight file, from h5py (the header is what the file's group points at)."""
    places = []
    with h5py.File(WEIGHT_FILE, "r") as handle:

        def visit(name: str, item: object) -> None:
            if isinstance(item, h5py.Dataset):
                places.append((name, int(item.id.get_offset()), int(h5py.h5o.get_info(item.id).addr)))

        handle.visititems(visit)
    return sorted(places)


def _written(tmp_path: Path, contents: bytes, name: str = "weights.hdf5") -> str:
    path = tmp_path / name
    path.write_bytes(contents)
    return str(path)


def _one_line(message: str) -> str:
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize("kept", [0.001, 0.05, 0.5, 0.99])
def test_a_weight_file_cut_short_names_the_file(tmp_path, kept):
    path = _written(tmp_path, WEIGHT_BYTES[: int(len(WEIGHT_BYTES) * kept)])
    with pytest.raises(WeightFileError) as refused:
        load_bilm(OPTIONS_FILE, path)
    message = _one_line(str(refused.value))
    assert path in message and "corrupt" in message and "copy or download it again" in message, message


@pytest.mark.parametrize("value, shown", [(b"\xff\xff\xff\xff", "nan"), (b"\x00\x00\x80\x7f", "inf")])
def test_flipped_bytes_in_the_values_that_make_a_non_finite_weight_name_the_dataset_and_place(tmp_path, value, shown):
    name, data_offset, _ = next(place for place in _dataset_places() if place[0] == "CNN_high_1/W_carry")
    damaged = bytearray(WEIGHT_BYTES)
    damaged[data_offset + 4 * 5 : data_offset + 4 * 6] = value  # the sixth value: row 0, column 5
    path = _written(tmp_path, bytes(damaged))
    with pytest.raises(WeightFileError) as refused:
        load_bilm(OPTIONS_FILE, path)
    assert _one_line(str(refused.value)).startswith(
        f"{path}: dataset '{name}' holds {shown} at [0, 5]; expected finite"
    )


def test_a_flipped_exponent_bit_names_the_dataset(tmp_path):
    """The top exponent bit multiplies a weight by 2**128: no trained weight is that large."""
    name, data_offset, _ = next(place for place in _dataset_places() if place[0] == "char_embed")
    damaged = bytearray(WEIGHT_BYTES)
    damaged[data_offset + 3] ^= 0x40  # the first value's top exponent bit (little-endian float32)
    path = _written(tmp_path, bytes(damaged))
    with pytest.raises(WeightFileError, match=rf"dataset '{name}' holds -?[0-9.]+e\+3[0-9] at \[0, 0\]; expected"):
        load_bilm(OPTIONS_FILE, path)


def test_flipped_bytes_anywhere_in_the_metadata_are_a_weight_file_error_or_harmless(tmp_path):
    """Bytes flipped every 97 bytes up to the first dataset's values (superblock, groups, object headers,
    b-trees, heaps): h5py then raises KeyError, RuntimeError, ValueError or AttributeError, which all
    become one WeightFileError; a flip in unused space loads as before."""
    first_values = min(offset for _, offset, _ in _dataset_places())
    outcomes = set()
    for position in range(0, first_values, 97):
        damaged = bytearray(WEIGHT_BYTES)
        for index in range(position, position + 3):
            damaged[index] ^= 0x5A
        path = _written(tmp_path, bytes(damaged))
        try:
            load_bilm(OPTIONS_FILE, path)
        except WeightFileError as refused:
            assert _one_line(str(refused)).startswith((path, f"cannot read {path}")), refused
            outcomes.add("refused")
        else:
            outcomes.add("loaded")
    assert "refused" in outcomes


def test_a_damaged_dataset_header_names_the_dataset(tmp_path):
    name, _, header = next(place for place in _dataset_places() if place[0] == "CNN/W_cnn_3")
    damaged = bytearray(WEIGHT_BYTES)
    damaged[header : header + 8] = b"\xa5" * 8  # the object header's signature and version
    path = _written(tmp_path, bytes(damaged))
    with pytest.raises(WeightFileError) as refused:
        load_bilm(OPTIONS_FILE, path)
    assert _one_line(str(refused.value)).startswith(f"{path}: cannot read dataset '{name}' ("), refused.value
    assert str(refused.value).endswith(
        "the file is corrupt: copy or download it again, or export it again with `allennlp export-bilm`"
    )


@pytest.mark.parametrize(
    "contents, expected",
    [
        ('{"lstm": {"dim": 16,', r"options\.json, line 1: not valid JSON \(Expecting property name enclosed in double"),
        ('{"lstm": {\n  "dim": 16\n', r"options\.json, line 3: not valid JSON \(Expecting ',' delimiter, column 1\)"),
        ("[1, 2]", r"options\.json holds an array instead of a JSON object; expected the ELMo options\.json"),
        (
            '{"lstm": {"dim": 16}, "char_cnn": {}}',
            r"options\.json: missing field 'projection_dim' \(expected the original ELMo",
        ),
        ('{"lstm": {"dim": "wide"}, "char_cnn": {}}', r"options\.json: a field has the wrong type"),
    ],
)
def test_a_broken_options_file_names_the_file_and_line(tmp_path, contents, expected):
    path = tmp_path / "options.json"
    path.write_text(contents, encoding="utf-8")
    with pytest.raises(OptionsError, match=expected) as refused:
        load_bilm(str(path), WEIGHT_FILE)
    _one_line(str(refused.value))


def test_an_options_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "options.json"
    path.write_bytes(b'{"lstm": {"dim": "\xe9"}}')
    with pytest.raises(OptionsError, match=r"options\.json is not UTF-8 text, so not valid JSON; expected the ELMo"):
        load_bilm(str(path), WEIGHT_FILE)


def _softmax(tmp_path: Path) -> Path:
    path = tmp_path / "softmax.npz"
    tokens = ["@@PADDING@@", "@@UNKNOWN@@", "<S>", "</S>"] + [f"word{i}" for i in range(60)]
    write_softmax(str(path), torch.randn(len(tokens), 16), torch.randn(len(tokens)), tokens, "float32")
    return path


@pytest.mark.parametrize("kept", [0, 0.3, 0.9])
def test_a_softmax_cut_short_names_the_file(tmp_path, kept):
    whole = _softmax(tmp_path).read_bytes()
    path = _written(tmp_path, whole[: int(len(whole) * kept)], "cut.npz")
    with pytest.raises(SoftmaxFileError) as refused:
        read_softmax(path)
    message = _one_line(str(refused.value))
    assert message.startswith(f"{path} is not a whole softmax file (") and "export it again" in message, message


def test_a_softmax_with_flipped_bytes_fails_its_checksum(tmp_path):
    path = _softmax(tmp_path)
    damaged = bytearray(path.read_bytes())
    damaged[len(damaged) // 3] ^= 0xFF  # inside the compressed weight: zlib or the zip's CRC-32 notices
    path.write_bytes(bytes(damaged))
    with pytest.raises(SoftmaxFileError, match=r"softmax\.npz is not a whole softmax file \((BadZipFile|error): "):
        read_softmax(str(path))


def test_a_softmax_whose_arrays_do_not_fit_together_says_so(tmp_path):
    path = tmp_path / "softmax.npz"
    np.savez(path, weight=np.zeros((5, 4), np.float32), bias=np.zeros(5, np.float32), tokens=np.array(["a", "b"]))
    with pytest.raises(SoftmaxFileError, match=r"weight of shape \(5, 4\), bias of shape \(5,\) and 2 tokens do not"):
        read_softmax(str(path))
    np.savez(path, weight=np.zeros((5, 4), np.float32))
    with pytest.raises(SoftmaxFileError, match=r"is not a whole softmax file \(KeyError: 'bias is not a file in"):
        read_softmax(str(path))


def test_a_language_model_started_from_an_export_with_a_softmax_cut_short_names_it(tmp_path):
    """``model.pretrained_file`` at an export folder (experiments/bilm_finetune.jsonnet) reads its softmax.npz."""
    from allennlp.data import Vocabulary

    from elmo_tasks.tasks.lm import BilmLanguageModel, export_model

    vocabulary = Vocabulary()
    vocabulary.add_tokens_to_namespace(["<S>", "</S>", "cat", "dog"], "lm_targets")
    export_model(BilmLanguageModel(vocabulary, options_file=OPTIONS_FILE), str(tmp_path / "elmo"))
    softmax = tmp_path / "elmo" / "softmax.npz"
    softmax.write_bytes(softmax.read_bytes()[:200])
    with pytest.raises(SoftmaxFileError) as refused:
        BilmLanguageModel(vocabulary, options_file=OPTIONS_FILE, pretrained_file=str(tmp_path / "elmo"))
    assert _one_line(str(refused.value)).startswith(f"{softmax} is not a whole softmax file (BadZipFile: ")


def test_the_fast_elmo_embedder_refuses_a_weight_file_cut_short(tmp_path):
    path = _written(tmp_path, WEIGHT_BYTES[: len(WEIGHT_BYTES) // 2])
    params = Params({"type": "fast_elmo", "options_file": OPTIONS_FILE, "weight_file": path})
    with pytest.raises(WeightFileError, match="the file is corrupt or not an ELMo weight file"):
        TokenEmbedder.from_params(params)


@pytest.mark.parametrize("broken", ["weights", "options"])
def test_allennlp_train_of_an_elmo_experiment_ends_with_the_files_line(broken, tmp_path, monkeypatch, capsys):
    """ELMO_WEIGHTS cut short, or ELMO_OPTIONS cut short: the model is built after the data is read."""
    if broken == "weights":
        monkeypatch.setenv("ELMO_WEIGHTS", _written(tmp_path, WEIGHT_BYTES[:5000]))
        expected = f"allennlp: error: cannot read {tmp_path / 'weights.hdf5'} as hdf5 ("
    else:
        options = tmp_path / "options.json"
        options.write_text(Path(OPTIONS_FILE).read_text()[:100], encoding="utf-8")
        monkeypatch.setenv("ELMO_OPTIONS", str(options))
        expected = f"allennlp: error: {options}, line "
    overrides = json.dumps({"trainer.num_epochs": 1})
    line = uncaught_error_line(
        capsys,
        lambda: run_allennlp("train", "experiments/sst5_elmo.jsonnet", "-s", str(tmp_path / "run"), "-o", overrides),
    )
    assert line.startswith(expected), line


def test_a_copy_of_the_weights_loads_as_before(tmp_path):
    """The checks refuse nothing sound: the tests' weight file, copied, loads."""
    copy = tmp_path / "weights.hdf5"
    shutil.copy(WEIGHT_FILE, copy)
    assert load_bilm(OPTIONS_FILE, str(copy)).num_layers == 3
