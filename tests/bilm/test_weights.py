"""Loading and exporting the original hdf5 layout, and the errors for bad files."""

import json
import shutil

import h5py
import numpy as np
import pytest
import torch

from elmo_tasks.bilm import BiLM, BilmOptions, OptionsError, WeightFileError, batch_to_ids, export_bilm, load_bilm
from elmo_tasks.bilm.weights import weight_arrays
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE


def test_export_round_trips_every_dataset_exactly(tmp_path):
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE)
    options_path, weights_path = export_bilm(model, str(tmp_path))
    with h5py.File(WEIGHT_FILE, "r") as original, h5py.File(weights_path, "r") as exported:
        names = []
        original.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        for name in names:
            assert np.array_equal(original[name][...], exported[name][...]), name
    reloaded = load_bilm(options_path, weights_path).eval()
    ids = batch_to_ids([["round", "trip", "."]])
    with torch.no_grad():
        a, b = model.eval()(ids), reloaded(ids)
    assert all(torch.equal(x, y) for x, y in zip(a.layers, b.layers, strict=True))


def test_float16_export_loads_back_as_float32(tmp_path):
    model = BiLM(BilmOptions(dim=16, projection_dim=8, filters=[(1, 4), (2, 4)], n_highway=1, char_embedding_dim=4))
    options_path, weights_path = export_bilm(model, str(tmp_path), dtype="float16")
    with h5py.File(weights_path, "r") as f:
        assert f["char_embed"].dtype == np.float16
    reloaded = load_bilm(options_path, weights_path)
    assert reloaded.token_encoder.char_embedding.dtype == torch.float32
    assert torch.allclose(reloaded.layers[0].w_state, model.layers[0].w_state, atol=1e-3)


def test_missing_weight_file():
    with pytest.raises(WeightFileError, match="weight file not found: .*nope.hdf5"):
        load_bilm(OPTIONS_FILE, "nope.hdf5")


def test_corrupt_weight_file(tmp_path):
    bad = tmp_path / "weights.hdf5"
    bad.write_bytes(b"this is not hdf5" * 10)
    with pytest.raises(WeightFileError, match="corrupt or not an ELMo weight file"):
        load_bilm(OPTIONS_FILE, str(bad))


def test_options_that_disagree_with_the_weights_name_dataset_and_shapes(tmp_path):
    with open(OPTIONS_FILE) as handle:
        options = json.load(handle)
    options["lstm"]["dim"] = 128
    wrong = tmp_path / "options.json"
    wrong.write_text(json.dumps(options))
    with pytest.raises(WeightFileError) as err:
        load_bilm(str(wrong), WEIGHT_FILE)
    message = str(err.value)
    assert "RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0" in message
    assert "(32, 256)" in message and "(32, 512)" in message


def test_missing_dataset_is_named(tmp_path):
    copy = tmp_path / "weights.hdf5"
    shutil.copy(WEIGHT_FILE, copy)
    with h5py.File(copy, "a") as f:
        del f["CNN_proj/W_proj"]
    with pytest.raises(WeightFileError, match="no dataset 'CNN_proj/W_proj'"):
        load_bilm(OPTIONS_FILE, str(copy))


def test_bad_options_files(tmp_path):
    with pytest.raises(OptionsError, match="not found"):
        BilmOptions.from_file(str(tmp_path / "missing.json"))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(OptionsError, match="not valid JSON"):
        BilmOptions.from_file(str(broken))
    incomplete = tmp_path / "incomplete.json"
    incomplete.write_text(json.dumps({"lstm": {"dim": 4}}))
    with pytest.raises(OptionsError, match="missing field"):
        BilmOptions.from_file(str(incomplete))


def test_forget_bias_is_added_at_run_time_like_tensorflow():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE)
    with h5py.File(WEIGHT_FILE, "r") as f:
        stored = f["RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/B"][...]
    assert np.array_equal(weight_arrays(model)["RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/B"], stored)
    shift = model.layers[1].forget_shift
    assert shift[128:192].eq(1).all() and shift[:128].eq(0).all() and shift[192:].eq(0).all()
