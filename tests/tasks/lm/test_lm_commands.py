"""`allennlp bilm-perplexity`: the same numbers as `allennlp evaluate`, float16 files, clear errors."""

import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from allennlp.commands import main

from tests.conftest import FIXTURES_ROOT, ROOT, run_allennlp

VALID = str(FIXTURES_ROOT / "lm" / "valid.txt")
# the tiny recipe reads one sentence per line, cut at 40 tokens: score the text the same way
AS_TRAINED = ["--text-format", "sentence_per_line", "--max-sentence-length", "40"]
LINE = re.compile(r"^perplexity forward (\S+) backward (\S+) mean (\S+) tokens (\d+)$")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("bilm_ppl") / "tiny"
    run_allennlp("train", "experiments/bilm_tiny.jsonnet", "-s", str(run), "-o", json.dumps({"trainer.num_epochs": 2}))
    return run


def _perplexity(capsys, monkeypatch, elmo, *extra):
    """Run the command in this process; returns (exit code, stdout, stderr)."""
    argv = ["allennlp", "bilm-perplexity", VALID, "--no-progress", *AS_TRAINED]
    if elmo is not None:
        argv += ["--options-file", str(elmo / "options.json"), "--weight-file", str(elmo / "weights.hdf5")]
    monkeypatch.setattr(sys, "argv", argv + [str(e) for e in extra])
    monkeypatch.chdir(ROOT)
    code = 0
    try:
        main(prog="allennlp")
    except SystemExit as exit_:
        code = exit_.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def _numbers(stdout: str):
    match = LINE.match(stdout.strip().split("\n")[-1])
    assert match, stdout
    return [float(match.group(i)) for i in (1, 2, 3)], int(match.group(4))


def test_same_numbers_as_allennlp_evaluate(trained, tmp_path, capsys, monkeypatch):
    metrics_file = tmp_path / "eval.json"
    run_allennlp("evaluate", str(trained / "model.tar.gz"), VALID, "--output-file", str(metrics_file))
    evaluated = json.loads(metrics_file.read_text())
    capsys.readouterr()
    code, out, err = _perplexity(capsys, monkeypatch, trained / "elmo")
    assert code == 0, err
    (forward, backward, mean), tokens = _numbers(out)
    for ours, theirs in ((forward, "ppl_fwd_exact"), (backward, "ppl_bwd_exact"), (mean, "ppl_exact")):
        assert abs(ours - evaluated[theirs]) < 1e-4 * evaluated[theirs], (ours, theirs, evaluated)
    # valid.txt: 60 sentences of 670 words; each direction scores the words plus one boundary per sentence
    assert tokens == 670 + 60
    # stateless sentences: batching cannot change a number
    code, out_one, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--batch-size", "1", "--threads", "1")
    assert code == 0, err
    assert _numbers(out_one) == _numbers(out)


def test_worker_processes_give_the_same_numbers(trained, capsys, monkeypatch):
    """Batches scored by 3 forked workers are summed in batch order: the same line as one process."""
    code, one, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--batch-size", "8", "--workers", "1")
    assert code == 0, err
    code, three, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--batch-size", "8", "--workers", "3")
    assert code == 0, err
    assert three.strip().split("\n")[-1] == one.strip().split("\n")[-1]
    code, _, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--workers", "2", "--threads", "2")
    assert code == 2 and "each worker process runs one thread" in err


def test_the_word_cache_leaves_the_numbers_as_they_are(trained, capsys, monkeypatch):
    """The default keeps encoded words' vectors (elmo_tasks.bilm.seen_words); without it, the same line."""
    code, cached, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--batch-size", "8")
    assert code == 0, err
    code, plain, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--batch-size", "8", "--word-cache-mb", "0")
    assert code == 0, err
    (cached_numbers, cached_tokens), (plain_numbers, plain_tokens) = _numbers(cached), _numbers(plain)
    assert cached_tokens == plain_tokens
    for with_cache, without in zip(cached_numbers, plain_numbers, strict=True):
        assert abs(with_cache - without) <= 1e-3, (cached, plain)


def test_float16_softmax_and_weights_load(trained, tmp_path, capsys, monkeypatch):
    half = tmp_path / "fp16"
    run_allennlp("export-bilm", str(trained / "model.tar.gz"), str(half), "--float16")
    with np.load(half / "softmax.npz") as data:
        assert data["weight"].dtype == np.float16
    capsys.readouterr()
    code, out16, err = _perplexity(capsys, monkeypatch, half)
    assert code == 0, err
    code, out32, err = _perplexity(capsys, monkeypatch, trained / "elmo")
    (f16, b16, m16), n16 = _numbers(out16)
    (f32, b32, m32), n32 = _numbers(out32)
    assert n16 == n32 and abs(m16 - m32) < 0.01 * m32 and abs(f16 - f32) < 0.01 * f32


def _edited_softmax(trained, tmp_path, edit) -> Path:
    """``tmp_path/softmax.npz``: the trained model's softmax with ``edit`` applied to its arrays."""
    with np.load(trained / "elmo" / "softmax.npz") as data:
        arrays = dict(data)
    edit(arrays)
    np.savez(tmp_path / "softmax.npz", **arrays)
    return tmp_path / "softmax.npz"


def _perplexity_with_softmax(capsys, monkeypatch, trained, softmax: Path):
    """``bilm-perplexity`` of the trained biLM with another softmax file and the trained vocabulary."""
    vocabulary = trained / "elmo" / "vocabulary"
    return _perplexity(capsys, monkeypatch, trained / "elmo", "--softmax-file", softmax, "--vocab-file", vocabulary)


def test_a_softmax_of_another_width_is_refused(trained, tmp_path, capsys, monkeypatch):
    def edit(arrays):
        arrays["weight"] = np.concatenate([arrays["weight"], arrays["weight"]], axis=1)

    code, _, err = _perplexity_with_softmax(capsys, monkeypatch, trained, _edited_softmax(trained, tmp_path, edit))
    assert code == 2
    assert "softmax weight has shape" in err and "projection_dim 16" in err and "belongs to another biLM" in err


def test_a_vocabulary_that_does_not_match_the_softmax_is_refused(trained, tmp_path, capsys, monkeypatch):
    vocab = tmp_path / "vocabulary"
    shutil.copytree(trained / "elmo" / "vocabulary", vocab)
    lines = (vocab / "lm_targets.txt").read_text(encoding="utf-8").split("\n")
    (vocab / "lm_targets.txt").write_text("\n".join(lines[:-3] + lines[-2:]), encoding="utf-8")  # one row fewer
    code, _, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--vocab-file", vocab)
    assert code == 2 and re.search(r"has \d+ entries .* but the softmax .* has \d+ rows", err), err
    lines[5], lines[6] = lines[6], lines[5]  # same size, two rows swapped
    (vocab / "lm_targets.txt").write_text("\n".join(lines), encoding="utf-8")
    code, _, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--vocab-file", vocab / "lm_targets.txt")
    assert code == 2 and "differs from the tokens stored in" in err and "at row 6" in err, err


def test_a_stored_token_list_one_row_short_is_one_line(trained, tmp_path, capsys, monkeypatch):
    """The tokens stored beside the softmax end a row early: named as such, not a StopIteration."""

    def edit(arrays):
        arrays["tokens"] = arrays["tokens"][:-1]

    with np.load(trained / "elmo" / "softmax.npz") as data:
        rows = len(data["weight"])
    code, _, err = _perplexity_with_softmax(capsys, monkeypatch, trained, _edited_softmax(trained, tmp_path, edit))
    assert code == 2 and f"at row {rows - 1}" in err and "the end of the stored list" in err, err


def test_a_softmax_cut_short_and_a_vocabulary_not_in_utf8_are_one_line_each(trained, tmp_path, capsys, monkeypatch):
    whole = (trained / "elmo" / "softmax.npz").read_bytes()
    (tmp_path / "softmax.npz").write_bytes(whole[: len(whole) // 2])
    arguments = ["--softmax-file", tmp_path / "softmax.npz", "--vocab-file", trained / "elmo" / "vocabulary"]
    code, _, err = _perplexity(capsys, monkeypatch, trained / "elmo", *arguments)
    assert code == 2 and err.startswith(f"bilm-perplexity: error: {tmp_path / 'softmax.npz'} is not a whole softmax")
    assert len(err.strip().splitlines()) == 1 and "BadZipFile" in err, err

    vocab = tmp_path / "vocabulary"
    shutil.copytree(trained / "elmo" / "vocabulary", vocab)
    lines = (vocab / "lm_targets.txt").read_bytes().split(b"\n")
    lines[3] = b"caf\xe9"  # Latin-1, not UTF-8
    (vocab / "lm_targets.txt").write_bytes(b"\n".join(lines))
    code, _, err = _perplexity(capsys, monkeypatch, trained / "elmo", "--vocab-file", vocab)
    assert code == 2 and f"{vocab / 'lm_targets.txt'}, line 4: bytes that are not UTF-8" in err, err
    assert len(err.strip().splitlines()) == 1


def test_shipped_folder_without_softmax_says_what_to_pass(tmp_path, capsys, monkeypatch):
    from elmo_tasks.bilm import perplexity as bilm_perplexity  # the command's run; AllenNLP's registers it
    from elmo_tasks.pretrained import SMALL_BILM_DIR

    shipped = tmp_path / "bilm_small"
    shipped.mkdir()
    for name in ("options.json", "weights.hdf5"):
        shutil.copy(SMALL_BILM_DIR / name, shipped / name)
    monkeypatch.setattr(bilm_perplexity, "SMALL_BILM_DIR", shipped)
    monkeypatch.setattr(bilm_perplexity, "SMALL_OPTIONS_FILE", str(shipped / "options.json"))
    monkeypatch.setattr(bilm_perplexity, "SMALL_WEIGHT_FILE", str(shipped / "weights.hdf5"))
    code, _, err = _perplexity(capsys, monkeypatch, None)
    assert code == 2 and "has no softmax.npz yet" in err and "--softmax-file" in err and "export-bilm" in err
