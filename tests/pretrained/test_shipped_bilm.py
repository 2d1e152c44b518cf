"""The small biLM that ships with elmo-tasks: size, storage, defaults, and that it loads everywhere."""

import json
import re
import sys

import h5py
import numpy as np
import pytest
import torch
from allennlp.commands import main
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder

from elmo_tasks.bilm import batch_to_ids, load_bilm
from elmo_tasks.config_defaults import DEFAULTS
from elmo_tasks.pretrained import (
    SMALL_BILM_DIR,
    SMALL_OPTIONS_FILE,
    SMALL_OPTIONS_REFERENCE,
    SMALL_WEIGHT_FILE,
    SMALL_WEIGHT_REFERENCE,
)
from tests.conftest import SHARED, needs_shared

SENTENCES = [["The", "bank", "raised", "its", "rates", "."], ["They", "sat", "on", "the", "river", "bank", "."]]


def test_files_are_small_float16_and_restored_to_float32():
    size = sum(p.stat().st_size for p in SMALL_BILM_DIR.rglob("*") if p.is_file())
    assert size <= 30 * 10**6  # weights, softmax and vocabulary together
    with h5py.File(SMALL_WEIGHT_FILE, "r") as handle:
        assert handle["char_embed"].dtype == np.float16
    bilm = load_bilm(SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE)
    assert all(p.dtype == torch.float32 for p in bilm.parameters())
    with open(SMALL_OPTIONS_FILE) as handle:
        options = json.load(handle)
    assert options["lstm"]["projection_dim"] * 2 == bilm.output_dim


def test_it_is_the_default_of_experiments_embedder_and_command():
    assert (DEFAULTS["ELMO_OPTIONS"], DEFAULTS["ELMO_WEIGHTS"]) == (SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE)
    embedder = TokenEmbedder.from_params(Params({"type": "fast_elmo", "dropout": 0.0}))
    reference = load_bilm(SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE).eval()
    embedder.eval()
    with torch.no_grad():
        ids = batch_to_ids(SENTENCES)
        mixed = embedder(ids)
        layers = reference(ids).layers
    # a fresh scalar mix weights the layers equally, with gamma 1
    expected = sum(layer for layer in layers) / len(layers)
    assert torch.allclose(mixed, expected, atol=1e-5)
    # context matters: "bank" differs between the two sentences in the top layer
    top = layers[-1]
    assert float((top[0, 1] - top[1, 5]).norm()) > 0.1 * float(top[0, 1].norm())


def test_elmo_embed_uses_it_by_default(tmp_path, monkeypatch):
    source, output = tmp_path / "in.txt", tmp_path / "out.hdf5"
    source.write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["allennlp", "elmo-embed", str(source), str(output), "--top", "--no-progress"])
    main(prog="allennlp")
    reference = load_bilm(SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE).eval()
    with torch.no_grad():
        top = reference(batch_to_ids(SENTENCES)).layers[-1]
    with h5py.File(output, "r") as handle:
        for i, sentence in enumerate(SENTENCES):
            assert np.allclose(handle[str(i)][...], top[i, : len(sentence)].numpy(), atol=1e-5)


def test_model_card_reports_the_measured_perplexities():
    card = (SMALL_BILM_DIR / "MODEL_CARD.md").read_text(encoding="utf-8")
    measured = json.loads((SMALL_BILM_DIR / "heldout_metrics.json").read_text())
    for stage in ("this_bilm", "stage4", "stage3", "stage2"):
        for name, metrics in measured[stage].items():
            for key in ("forward", "backward", "mean"):
                assert f"{metrics[key]:.1f}" in card, (stage, name, key)
    for name, metrics in measured["stage1"].items():
        assert f"{metrics['ppl_exact']:.1f}" in card, name
    assert "allennlp bilm-perplexity" in card


@needs_shared
def test_bilm_perplexity_gives_the_model_cards_news_number(tmp_path, capsys, monkeypatch):
    news = tmp_path / "news300.txt"
    lines = (SHARED / "data" / "lm" / "news" / "test_00.txt").read_bytes().splitlines(keepends=True)[:300]
    news.write_bytes(b"".join(lines))
    monkeypatch.setattr(sys, "argv", ["allennlp", "bilm-perplexity", str(news), "--threads", "1", "--no-progress"])
    main(prog="allennlp")
    last = capsys.readouterr().out.strip().splitlines()[-1]
    found = re.match(r"perplexity forward (\S+) backward (\S+) mean (\S+) tokens (\d+)", last)
    expected = json.loads((SMALL_BILM_DIR / "heldout_metrics.json").read_text())["this_bilm"]["news300"]
    assert found is not None, last
    assert [float(x) for x in found.groups()[:3]] == pytest.approx(
        [expected["forward"], expected["backward"], expected["mean"]], abs=0.01
    )
    assert int(found.group(4)) == expected["tokens"]


def test_elmo_embed_wants_both_biLM_files_or_neither(tmp_path, monkeypatch, capsys):
    source = tmp_path / "in.txt"
    source.write_text("Hello world\n", encoding="utf-8")
    monkeypatch.setattr(
        sys,
        "argv",
        ["allennlp", "elmo-embed", str(source), str(tmp_path / "out.hdf5"), "--options-file", SMALL_OPTIONS_FILE],
    )
    with pytest.raises(SystemExit) as exit_:
        main(prog="allennlp")
    assert exit_.value.code != 0
    assert "give both --options-file and --weight-file, or neither" in capsys.readouterr().err
    assert not (tmp_path / "out.hdf5").exists()
