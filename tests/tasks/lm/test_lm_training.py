"""End to end: train the tiny biLM, export it, load it back, evaluate, fine-tune and resume."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import pytest
import torch

from elmo_tasks.bilm import load_bilm
from elmo_tasks.bilm.characters import batch_to_ids
from tests.tasks.lm.interrupted_run import interrupted_copy

REPO = Path(__file__).resolve().parents[3]
ALLENNLP = str(Path(sys.executable).parent / "allennlp")
# One intra-op thread: on a shared 2-core machine, torch's default thread pool can be slower
# by orders of magnitude when other processes compete for the cores.
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
SENTENCES = [["The", "baker", "sold", "an", "old", "map", "."], ["Mara", "lost", "two", "letters", "!"]]


def _allennlp(*args: str, env=None) -> subprocess.CompletedProcess:
    result = subprocess.run([ALLENNLP, *args], cwd=REPO, env=env or ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def _metrics(run: Path, epoch: int) -> dict:
    return json.loads((run / f"metrics_epoch_{epoch}.json").read_text())


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("lm") / "tiny"
    _allennlp("train", "experiments/bilm_tiny.jsonnet", "-s", str(run))
    return run


@pytest.fixture(scope="module")
def archived_model(trained):
    from allennlp.models.archival import load_archive

    return load_archive(str(trained / "model.tar.gz")).model.eval()


def _activations(bilm) -> list:
    with torch.no_grad():
        return bilm.eval()(batch_to_ids(SENTENCES)).layers


def test_training_lowers_the_loss_and_the_exact_perplexity(trained):
    first, last = _metrics(trained, 0), _metrics(trained, 7)
    assert last["training_loss"] < 0.8 * first["training_loss"]
    vocab_size = len((trained / "vocabulary" / "lm_targets.txt").read_text().split("\n")) - 1
    assert last["validation_ppl_exact"] < first["validation_ppl_exact"]
    assert last["validation_ppl_exact"] < vocab_size / 3
    assert {"ppl_fwd_sampled", "ppl_bwd_sampled", "ppl_sampled", "tokens_per_s"} <= {
        k[len("training_") :] for k in last if k.startswith("training_")
    }
    assert {"ppl_fwd_exact", "ppl_bwd_exact", "ppl_exact"} <= {
        k[len("validation_") :] for k in last if k.startswith("validation_")
    }


def test_untrained_model_exact_perplexity_is_about_the_vocabulary_size(archived_model):
    from allennlp.data import Batch

    from elmo_tasks.tasks.lm import BilmLanguageModel, BilmRawTextReader

    vocab = archived_model.vocab
    torch.manual_seed(1)
    fresh = BilmLanguageModel(vocab, options=archived_model.bilm_options.to_json_dict(), dropout=0.0).eval()
    instances = list(BilmRawTextReader().read(str(REPO / "fixtures" / "lm" / "valid.txt")))
    for instance in instances:
        instance.index_fields(vocab)
    with torch.no_grad():
        fresh(**Batch(instances).as_tensor_dict())
    ppl = fresh.get_metrics()["ppl_exact"]
    predictable = vocab.get_vocab_size("lm_targets") - 1  # padding is never predicted
    assert 0.9 * predictable < ppl < 1.3 * predictable


def test_exported_files_round_trip_exactly(trained, archived_model):
    elmo = trained / "elmo"
    loaded = load_bilm(str(elmo / "options.json"), str(elmo / "weights.hdf5"))
    for ours, theirs in zip(_activations(archived_model.bilm), _activations(loaded), strict=True):
        assert float((ours - theirs).abs().max()) < 1e-6
    assert (elmo / "softmax.npz").exists() and (elmo / "vocabulary" / "lm_targets.txt").exists()


def test_export_command_float16_and_evaluate(trained, archived_model, tmp_path, monkeypatch):
    from allennlp.commands import main

    out = tmp_path / "fp16"
    monkeypatch.setattr(sys, "argv", ["allennlp", "export-bilm", str(trained / "model.tar.gz"), str(out), "--float16"])
    main()
    with h5py.File(out / "weights.hdf5", "r") as handle:
        assert handle["char_embed"].dtype == "float16"
    loaded = load_bilm(str(out / "options.json"), str(out / "weights.hdf5"))
    for ours, theirs in zip(_activations(archived_model.bilm), _activations(loaded), strict=True):
        assert float((ours - theirs).abs().max()) < 2e-2

    metrics_file = tmp_path / "eval.json"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "allennlp",
            "evaluate",
            str(trained / "model.tar.gz"),
            "fixtures/lm/valid.txt",
            "--output-file",
            str(metrics_file),
        ],
    )
    monkeypatch.chdir(REPO)
    main()
    evaluated = json.loads(metrics_file.read_text())
    best = json.loads((trained / "metrics.json").read_text())["best_validation_ppl_exact"]
    assert abs(evaluated["ppl_exact"] - best) < 1e-3 * best


def test_export_command_takes_a_checkpoint_of_a_serialization_dir(trained, archived_model, tmp_path, monkeypatch):
    from allennlp.commands import main

    checkpoint = sorted(trained.glob("model_state_e*.th"))[0]
    out = tmp_path / "checkpoint"
    monkeypatch.setattr(
        sys, "argv", ["allennlp", "export-bilm", str(trained), str(out), "--weights-file", str(checkpoint)]
    )
    main()
    expected = copy.deepcopy(archived_model)
    expected.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    loaded = load_bilm(str(out / "options.json"), str(out / "weights.hdf5"))
    for ours, theirs in zip(_activations(expected.bilm), _activations(loaded), strict=True):
        assert float((ours - theirs).abs().max()) < 1e-6
    final = _activations(archived_model.bilm)  # the best epoch's weights: not this checkpoint's
    assert any(float((a - b).abs().max()) > 1e-4 for a, b in zip(_activations(loaded), final, strict=True))


@pytest.mark.slow  # whole trainings, 15 to 30 s: in `make test-all`, out of the fast suite
def test_finetune_from_exported_hdf5_and_softmax(trained, tmp_path):
    from allennlp.data import Vocabulary

    from elmo_tasks.tasks.lm import BilmLanguageModel

    elmo = trained / "elmo"
    # hdf5 only: the biLM starts from the exported weights, the softmax starts fresh
    vocab = Vocabulary.from_files(str(elmo / "vocabulary"))
    model = BilmLanguageModel(
        vocab, options_file=str(elmo / "options.json"), pretrained_file=str(elmo / "weights.hdf5")
    )
    for ours, theirs in zip(
        _activations(model.bilm),
        _activations(load_bilm(str(elmo / "options.json"), str(elmo / "weights.hdf5"))),
        strict=True,
    ):
        assert torch.equal(ours, theirs)

    # the whole export directory through the fine-tuning config (biLM + softmax + vocabulary)
    run = tmp_path / "ft"
    env = {**ENV, "ELMO_OPTIONS": str(elmo / "options.json"), "ELMO_WEIGHTS": str(elmo)}
    overrides = {
        "vocabulary": {"type": "from_files", "directory": str(elmo / "vocabulary")},
        "model.num_samples": 32,
        "trainer.optimizer.lr": 0.001,
    }
    _allennlp("train", "experiments/bilm_finetune.jsonnet", "-s", str(run), "-o", json.dumps(overrides), env=env)
    start = json.loads((trained / "metrics.json").read_text())["best_validation_ppl_exact"]
    after = _metrics(run, 0)["validation_ppl_exact"]
    assert after < 1.5 * start  # it continued from the trained model (an untrained one is ~75)
    assert (run / "elmo" / "weights.hdf5").exists()


@pytest.mark.slow  # whole trainings, 15 to 30 s: in `make test-all`, out of the fast suite
def test_recover_resumes_an_interrupted_run(trained, tmp_path):
    run = tmp_path / "interrupted"
    interrupted_copy(trained, run, crashed_epoch=7)  # a crash during the last of the 8 epochs
    (run / "best.th").unlink(missing_ok=True)
    finished = {e: (run / f"metrics_epoch_{e}.json").stat().st_mtime_ns for e in range(7)}
    result = _allennlp("train", "experiments/bilm_tiny.jsonnet", "-s", str(run), "--recover")
    assert "Recovering from prior training" in result.stdout + result.stderr
    # the 7 finished epochs are skipped (their metrics untouched), only the last one is trained
    assert finished == {e: (run / f"metrics_epoch_{e}.json").stat().st_mtime_ns for e in range(7)}
    assert (run / "metrics_epoch_7.json").exists() and (run / "elmo" / "weights.hdf5").exists()
