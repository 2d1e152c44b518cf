"""Our biLM against the original TensorFlow implementation's recorded outputs."""

import json

import h5py
import numpy as np
import torch

from elmo_tasks.bilm import batch_to_ids, load_bilm
from tests.conftest import BILM_TF, OPTIONS_FILE, WEIGHT_FILE


def _reference_batches():
    with open(BILM_TF / "lm_embeddings_sentences.json") as handle:
        streams = json.load(handle)
    for i in range(10):
        batch = [streams[k][i].strip().split() for k in range(3)]
        expected = []
        for k in range(3):
            with h5py.File(BILM_TF / f"lm_embeddings_{k}.hdf5", "r") as f:
                halves = f[str(i)][...]
            expected.append(np.concatenate([halves[0], halves[1]], axis=-1))
        yield batch, expected


def test_stateful_replay_matches_bilm_tf_within_1e5():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE, stateful=True).eval()
    worst = 0.0
    with torch.no_grad():
        for batch, expected in _reference_batches():
            top = model(batch_to_ids(batch)).layers[-1]
            for k, sentence in enumerate(batch):
                worst = max(worst, float(np.abs(top[k, : len(sentence)].numpy() - expected[k]).max()))
    assert worst < 1e-5


def test_stateless_mode_does_not_match_the_stateful_reference():
    """Guards the test above: without carried states batch 1 onward differs."""
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    batches = list(_reference_batches())
    batch, expected = batches[1]
    with torch.no_grad():
        top = model(batch_to_ids(batch)).layers[-1]
    assert float(np.abs(top[0, : len(batch[0])].numpy() - expected[0]).max()) > 1e-3


def test_a_row_missing_from_a_smaller_batch_keeps_its_state_and_reset_clears_all():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE, stateful=True).eval()
    batches = list(_reference_batches())
    with torch.no_grad():
        model(batch_to_ids(batches[0][0]))
        third_row_state = [(h[:, 2].clone(), c[:, 2].clone()) for h, c in model.carried_states()]
        model(torch.ones(2, 5, 50, dtype=torch.long))  # a batch of two rows
        for (h, c), (h3, c3) in zip(model.carried_states(), third_row_state, strict=True):
            assert torch.equal(h[:, 2], h3) and torch.equal(c[:, 2], c3)
        # replaying from a reset gives the reference again
        model.reset_states()
        for batch, expected in batches[:3]:
            top = model(batch_to_ids(batch)).layers[-1]
            assert np.abs(top[2, : len(batch[2])].numpy() - expected[2]).max() < 1e-5
