"""`allennlp elmo-embed` end to end: output equals the Python API; bad input fails clearly."""

import json

import h5py
import numpy as np
import pytest
import torch

from elmo_tasks.bilm import batch_to_ids, load_bilm
from tests.conftest import BILM_TF, OPTIONS_FILE, WEIGHT_FILE

LINES = [
    "The cat sat on the mat .",
    "Hello world",
    "A much longer sentence , with more tokens than the others .",
    "Hello world",
]


def _api_layers(sentences):
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    with torch.no_grad():
        out = model(batch_to_ids(sentences))
    return [torch.stack([layer[i, : len(s)] for layer in out.layers]).numpy() for i, s in enumerate(sentences)]


@pytest.fixture()
def input_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_all_top_average_and_mix_equal_the_python_api(run, tmp_path, input_file):
    expected = _api_layers([line.split() for line in LINES])
    modes = {
        "all": lambda x: x,
        "top": lambda x: x[-1],
        "average": lambda x: x.mean(0),
        "mix": lambda x: 0.2 * x[0] + 0.3 * x[1] + 0.5 * x[2],
    }
    for mode, reduce in modes.items():
        out = tmp_path / f"{mode}.hdf5"
        flag = ["--mix", "0.2,0.3,0.5"] if mode == "mix" else [f"--{mode}"]
        run(input_file, out, *flag, "--batch-size", "3")
        with h5py.File(out, "r") as f:
            assert sorted(k for k in f if k != "sentence_to_index") == ["0", "1", "2", "3"]
            for i in range(len(LINES)):
                assert np.allclose(f[str(i)][...], reduce(expected[i]), atol=1e-6), (mode, i)
            index = json.loads(f["sentence_to_index"][0])
    assert index["Hello world"] == "1" and index[LINES[2]] == "2"
    with h5py.File(tmp_path / "all.hdf5", "r") as f:
        assert f["2"].shape == (3, len(LINES[2].split()), 32)


def test_tokenize_uses_spacy_rules(run, tmp_path):
    path = tmp_path / "raw.txt"
    path.write_text("Don't stop, ok?\n", encoding="utf-8")
    run(path, tmp_path / "out.hdf5", "--top", "--tokenize")
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        assert f["0"].shape == (6, 32)  # Do n't stop , ok ?


def test_stateful_replays_the_reference_streams(run, tmp_path):
    streams = json.loads((BILM_TF / "lm_embeddings_sentences.json").read_text())
    path = tmp_path / "streams.txt"
    # batch i = sentence i of each stream: interleave the three streams
    path.write_text("\n".join(streams[k][i].strip() for i in range(10) for k in range(3)) + "\n", encoding="utf-8")
    run(path, tmp_path / "out.hdf5", "--top", "--stateful", "--batch-size", "3")
    worst = 0.0
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        for i in range(10):
            for k in range(3):
                with h5py.File(BILM_TF / f"lm_embeddings_{k}.hdf5", "r") as ref:
                    halves = ref[str(i)][...]
                worst = max(worst, float(np.abs(f[str(3 * i + k)][...] - np.concatenate(halves, axis=-1)).max()))
    assert worst < 1e-5


def test_empty_line_fails_with_its_line_number_and_leaves_no_output(run, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("one\n\nthree\n", encoding="utf-8")
    done = run(path, tmp_path / "out.hdf5", check=False)
    assert done.returncode != 0 and "line 2: empty line" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out.hdf5").exists()


def test_undecodable_bytes_fail_with_the_line_number(run, tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"fine\nalso fine\nbad \xff\xfe bytes\n")
    done = run(path, tmp_path / "out.hdf5", check=False)
    assert done.returncode != 0 and "line 3: bytes that are not UTF-8" in done.stderr


def test_unwritable_output_and_bad_weights_fail_clearly(run, tmp_path, input_file):
    done = run(input_file, tmp_path / "no" / "such" / "dir" / "out.hdf5", check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "out.hdf5: No such file or directory (ENOENT); its folder does not exist" in done.stderr
    done = run(input_file, tmp_path / "o.hdf5", check=False, weight_file=tmp_path / "missing.hdf5")
    assert done.returncode != 0 and "weight file not found" in done.stderr and "Traceback" not in done.stderr


def test_mix_weights_must_match_the_layers(run, tmp_path, input_file):
    done = run(input_file, tmp_path / "out.hdf5", "--mix", "0.5,0.5", check=False)
    assert done.returncode != 0 and "--mix needs 3" in done.stderr
