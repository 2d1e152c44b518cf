"""Continuing a biLM with the exact softmax in plain PyTorch (the GPU route): the loss equals the
AllenNLP language model's, training lowers it, and the script runs without AllenNLP installed."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from elmo_tasks.bilm import load_weights
from elmo_tasks.bilm.full_softmax_training import (
    Schedule,
    SentenceEncoder,
    Softmax,
    heldout_perplexity,
    lm_nll,
    read_lines,
)
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.options import BilmOptions
from tests.conftest import ROOT

SHIPPED = ROOT / "elmo_tasks" / "pretrained" / "bilm_small"
SENTENCES = ROOT / "fixtures" / "lm" / "train.txt"


def _shipped_bilm() -> BiLM:
    bilm = BiLM(BilmOptions.from_file(str(SHIPPED / "options.json")))
    load_weights(bilm, str(SHIPPED / "weights.hdf5"))
    return bilm.eval()


def test_exact_nll_equals_the_allennlp_language_models_evaluation_loss():
    from allennlp.data import Batch, Vocabulary
    from allennlp.data.tokenizers import WhitespaceTokenizer

    from elmo_tasks.tasks.lm import BilmLanguageModel
    from elmo_tasks.tasks.lm.reader import BilmRawTextReader

    reader = BilmRawTextReader(tokenizer=WhitespaceTokenizer(), text_format="sentence_per_line")
    instances = list(reader.read(str(SENTENCES)))[:12]
    for instance in instances:
        reader.apply_token_indexers(instance)
    vocab = Vocabulary.from_files(str(SHIPPED / "vocabulary"))
    batch = Batch(instances)
    batch.index_instances(vocab)
    model = BilmLanguageModel(vocab, options_file=str(SHIPPED / "options.json"), pretrained_file=str(SHIPPED))
    model.eval()
    with torch.no_grad():
        theirs = model(**batch.as_tensor_dict())

    sentences = [[token.text for token in instance["tokens"].tokens] for instance in instances]
    char_ids, targets = SentenceEncoder(Softmax.load(str(SHIPPED / "softmax.npz")).tokens).encode(sentences)
    with torch.no_grad():
        fwd, bwd = lm_nll(_shipped_bilm(), Softmax.load(str(SHIPPED / "softmax.npz")), char_ids, targets)
    assert fwd.shape == theirs["fwd_nll"].shape
    torch.testing.assert_close(fwd, theirs["fwd_nll"], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(bwd, theirs["bwd_nll"], rtol=1e-5, atol=1e-5)


def test_encoder_targets_unknown_words_and_long_lines():
    tokens = ["@@PADDING@@", "@@UNKNOWN@@", "<S>", "</S>", "the", "cat"]
    encoder = SentenceEncoder(tokens, max_sentence_length=3)
    assert encoder.split("the cat sat on the") == [["the", "cat", "sat"], ["on", "the"]]
    char_ids, targets = encoder.encode([["the", "cat", "sat"], ["on", "the"]])
    assert char_ids.shape == (2, 3, 50)
    assert targets.tolist() == [[2, 4, 5, 1, 3], [2, 1, 4, 3, 0]]
    assert not char_ids[1, 2].any()  # padding token: all zeros


def test_schedule_warms_up_then_decays_to_its_final_fraction():
    schedule = Schedule(peak=1.0, warmup_steps=10, seconds=100.0, final_fraction=0.1)
    assert schedule.rate(0, 0.0) == pytest.approx(0.1)
    assert schedule.rate(9, 0.0) == pytest.approx(1.0)
    assert schedule.rate(50, 50.0) == pytest.approx(0.55)
    assert schedule.rate(99, 100.0) == pytest.approx(0.1)
    assert schedule.rate(99, 500.0) == pytest.approx(0.1)


@pytest.mark.slow  # 20 to 50 s: in `make test-all`, out of the fast suite
def test_script_trains_without_allennlp_lowers_the_loss_and_exports_files_that_load(tmp_path):
    lines = read_lines(str(SENTENCES))[:24]
    text = tmp_path / "train.txt"
    text.write_text("\n".join(lines) + "\n")
    output = tmp_path / "out"
    argv = [
        "--start", str(SHIPPED), "--train", str(text), "--heldout", f"seen={text}", "--output", str(output),
        "--seconds", "12", "--batch-size", "8", "--lr", "3e-3", "--warmup-steps", "1", "--workers", "0",
        "--evaluate-every", "1000", "--device", "cpu", "--dtype", "float32",
    ]  # fmt: skip
    # AllenNLP and spaCy made unimportable: the GPU machine has neither
    code = (
        "import runpy, sys; sys.modules['allennlp'] = None; sys.modules['spacy'] = None; "
        f"sys.argv = ['train_bilm_full_softmax.py'] + {argv!r}; "
        f"runpy.run_path({str(ROOT / 'scripts' / 'train_bilm_full_softmax.py')!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"OMP_NUM_THREADS": "1", "PATH": ""}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in (output / "training_log.jsonl").read_text().splitlines()]
    first, last = records[0], records[-1]
    assert first["step"] == 0 and last["final"] and last["step"] > 0
    assert last["heldout"]["seen"]["mean"] < 0.9 * first["heldout"]["seen"]["mean"]
    assert last["heldout"]["seen"]["tokens"] == first["heldout"]["seen"]["tokens"] > 0

    bilm = BiLM(BilmOptions.from_file(str(output / "options.json")))
    load_weights(bilm, str(output / "weights.hdf5"))
    softmax = Softmax.load(str(output / "softmax.npz"))
    assert softmax.tokens == Softmax.load(str(SHIPPED / "softmax.npz")).tokens
    again = heldout_perplexity(bilm.eval(), softmax, SentenceEncoder(softmax.tokens), lines, torch.device("cpu"))
    assert again["mean"] == pytest.approx(last["heldout"]["seen"]["mean"], rel=1e-4)
    assert not np.allclose(
        softmax.weight.detach().numpy(), Softmax.load(str(SHIPPED / "softmax.npz")).weight.detach().numpy()
    )
