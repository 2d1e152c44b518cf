"""Distributed training (torch DDP through AllenNLP's `distributed` block) with 2 CPU gloo workers.

* the raw-text reader's sharding: across 2 ranks, with and without data-loader workers, every
  sentence is read exactly once per epoch;
* one DDP step on 2 workers gives the averaged gradient of the single-process step on the same
  sentences (same samples of the sampled softmax);
* a real 2-worker `allennlp train` of the tiny biLM: the perplexities and token counts are summed
  over the workers (every training and validation token counted once), the exact perplexity
  equals `allennlp evaluate` of the archive, and `--recover` resumes it;
* the NER tagger with `fast_elmo` trains on 2 workers: both report the same span F1 (counts summed
  over the workers), equal to `allennlp evaluate` of the archive, and the same trained scalar mixes.
"""

import json
import math
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, cast

import pytest
import torch
from allennlp.data import Instance
from allennlp.data.fields import TextField
from allennlp.training.callbacks import TrainerCallback

from tests.conftest import FIXTURES_ROOT, run_allennlp
from tests.tasks.lm.interrupted_run import interrupted_copy

TRAIN = str(FIXTURES_ROOT / "lm" / "train.txt")
VALID = str(FIXTURES_ROOT / "lm" / "valid.txt")
TWO_CPU_WORKERS = {"distributed": {"cuda_devices": [-1, -1]}}
TINY_OPTIONS = {
    "lstm": {
        "dim": 32,
        "projection_dim": 16,
        "n_layers": 2,
        "cell_clip": 3,
        "proj_clip": 3,
        "use_skip_connections": True,
    },
    "char_cnn": {
        "activation": "relu",
        "embedding": {"dim": 4},
        "filters": [[1, 8], [2, 8], [3, 16]],
        "n_highway": 1,
        "n_characters": 262,
        "max_characters_per_token": 50,
    },
}


def _reader(**kwargs):
    from elmo_tasks.tasks.lm import BilmRawTextReader

    return BilmRawTextReader(max_sentence_length=40, **kwargs)


def _sentence(instance: Instance) -> str:
    """The instance's tokens as one line: what tells the sentences read apart."""
    return " ".join(str(token) for token in cast(TextField, instance["tokens"]).tokens)


def _sentence_counts(instances) -> Counter:
    return Counter(_sentence(instance) for instance in instances)


def _read_one_epoch(rank: int, loader_workers: int, port: int, out_dir: str) -> None:
    """What this rank's data loader yields in one epoch, written to ``out_dir/rank<N>.json``."""
    import torch.distributed as dist
    from allennlp.data.data_loaders import MultiProcessDataLoader

    import elmo_tasks.plugin  # noqa: F401

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=2, rank=rank)
    try:
        loader = MultiProcessDataLoader(_reader(), TRAIN, batch_size=8, num_workers=loader_workers)
        sentences = [_sentence(instance) for instance in loader.iter_instances()]
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w", encoding="utf-8") as out:
            json.dump(sentences, out)
    finally:
        dist.destroy_process_group()


@pytest.mark.slow  # two spawned processes importing AllenNLP: slow on a loaded 2-core machine
@pytest.mark.parametrize("loader_workers", [0, 2])
def test_every_sentence_is_read_once_across_ranks_and_loader_workers(loader_workers, tmp_path):
    from allennlp.common.util import find_open_port

    torch.multiprocessing.spawn(
        _read_one_epoch, args=(loader_workers, find_open_port(), str(tmp_path)), nprocs=2, join=True
    )
    per_rank = [json.loads((tmp_path / f"rank{rank}.json").read_text(encoding="utf-8")) for rank in range(2)]
    expected = _sentence_counts(_reader().read(TRAIN))
    assert Counter(per_rank[0]) + Counter(per_rank[1]) == expected  # nothing read twice, nothing skipped
    assert abs(len(per_rank[0]) - len(per_rank[1])) <= 1  # balanced shards
    assert sum(expected.values()) == 400


def _ddp_step(rank: int, sentences, vocab_dir: str, port: int, out_dir: str) -> None:
    """One training step on this rank's sentences inside torch DDP (as AllenNLP's trainer wraps it)."""
    import torch.distributed as dist
    from allennlp.data import Batch, Vocabulary
    from allennlp.nn.parallel import TorchDdpAccelerator

    import elmo_tasks.plugin  # noqa: F401
    from elmo_tasks.tasks.lm import BilmLanguageModel

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=2, rank=rank)
    try:
        model, tensors = _model_and_batch(sentences[rank], Vocabulary.from_files(vocab_dir), BilmLanguageModel, Batch)
        model, wrapped = TorchDdpAccelerator(local_rank=rank, world_size=2, cuda_device=-1).wrap_model(model)
        torch.manual_seed(5)  # the same sampled-softmax draw on every worker
        wrapped.model(**tensors)["loss"].backward()
        metrics = model.get_metrics()  # summed over both workers
        if rank == 0:
            torch.save(
                {"grads": {n: p.grad for n, p in model.named_parameters()}, "metrics": metrics},
                os.path.join(out_dir, "ddp.pt"),
            )
    finally:
        dist.destroy_process_group()


def _model_and_batch(sentences, vocab, model_class, batch_class):
    torch.manual_seed(0)  # the same initial weights everywhere
    model = model_class(vocab, options=TINY_OPTIONS, dropout=0.0, num_samples=32).train()
    reader = _reader()
    instances = [reader.text_to_instance(s.split()) for s in sentences]
    for instance in instances:
        reader.apply_token_indexers(instance)
    batch = batch_class(instances)
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict()


@pytest.mark.slow  # two spawned processes importing AllenNLP
def test_ddp_gradient_is_the_single_process_gradient(tmp_path):
    from allennlp.common.util import find_open_port
    from allennlp.data import Batch, Vocabulary

    from elmo_tasks.tasks.lm import BilmLanguageModel

    # two shards with the same number of tokens, so the mean of the workers' mean losses is the
    # mean loss over all sentences, and the averaged gradient is the full batch's gradient
    with open(TRAIN, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip()]
    by_length: dict = {}
    pairs = []
    for line in lines:
        length = len(line.split())
        if length in by_length:
            pairs.append((by_length.pop(length), line))
        else:
            by_length[length] = line
        if len(pairs) == 4:
            break
    shards = [[a for a, _ in pairs], [b for _, b in pairs]]
    vocab = Vocabulary.from_instances(_reader().read(TRAIN))
    vocab.save_to_files(str(tmp_path / "vocabulary"))
    torch.multiprocessing.spawn(
        _ddp_step, args=(shards, str(tmp_path / "vocabulary"), find_open_port(), str(tmp_path)), nprocs=2, join=True
    )
    ddp = torch.load(tmp_path / "ddp.pt")

    model, tensors = _model_and_batch(
        shards[0] + shards[1], Vocabulary.from_files(str(tmp_path / "vocabulary")), BilmLanguageModel, Batch
    )
    torch.manual_seed(5)
    model(**tensors)["loss"].backward()
    for name, parameter in model.named_parameters():
        assert torch.allclose(ddp["grads"][name], parameter.grad, atol=1e-6, rtol=1e-4), name
    single = model.get_metrics()
    assert (
        ddp["metrics"]["tokens_sampled"]
        == single["tokens_sampled"]
        == sum(len(s.split()) + 1 for s in shards[0] + shards[1])
    )
    for key in ("ppl_fwd_sampled", "ppl_bwd_sampled", "ppl_sampled"):
        assert abs(ddp["metrics"][key] - single[key]) < 1e-4 * single[key], key


def _tokens_scored(path: str) -> int:
    """Tokens each direction predicts over one pass of ``path``: the words plus one boundary per sentence."""
    return sum(len(instance["tokens"].tokens) + 1 for instance in _reader().read(path))


@pytest.fixture(scope="module")
def two_worker_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("ddp") / "bilm"
    overrides = {**TWO_CPU_WORKERS, "trainer.num_epochs": 2, "data_loader.num_workers": 1}
    run_allennlp("train", "experiments/bilm_tiny.jsonnet", "-s", str(run), "-o", json.dumps(overrides))
    return run


@pytest.mark.slow
def test_two_worker_biLM_counts_every_token_once_and_matches_evaluate(two_worker_run, tmp_path):
    metrics = [json.loads((two_worker_run / f"metrics_epoch_{e}.json").read_text()) for e in range(2)]
    for epoch in metrics:
        assert epoch["training_tokens_sampled"] == _tokens_scored(TRAIN)
        assert epoch["validation_tokens_exact"] == _tokens_scored(VALID)
    # the validation perplexity gathered from both workers is the one a single process computes
    evaluated = tmp_path / "eval.json"
    run_allennlp("evaluate", str(two_worker_run / "model.tar.gz"), VALID, "--output-file", str(evaluated))
    single = json.loads(evaluated.read_text())
    best = json.loads((two_worker_run / "metrics.json").read_text())
    assert abs(best["best_validation_ppl_exact"] - single["ppl_exact"]) < 1e-4 * single["ppl_exact"]
    assert (two_worker_run / "elmo" / "softmax.npz").exists()  # the export callback ran once, on rank 0


@pytest.mark.slow
def test_two_worker_recover_resumes(two_worker_run, tmp_path):
    run = tmp_path / "interrupted"
    # a crash during epoch 1 (the last), with best.th still holding epoch 0's weights
    interrupted_copy(two_worker_run, run, crashed_epoch=1)
    shutil.copy(run / "model_state_e1_b0.th", run / "best.th")
    first = (run / "metrics_epoch_0.json").read_text()
    overrides = {**TWO_CPU_WORKERS, "trainer.num_epochs": 2, "data_loader.num_workers": 1}
    run_allennlp("train", "experiments/bilm_tiny.jsonnet", "-s", str(run), "-o", json.dumps(overrides), "--recover")
    assert (run / "metrics_epoch_0.json").read_text() == first  # epoch 0 was not trained again
    resumed = json.loads((run / "metrics_epoch_1.json").read_text())
    assert resumed["epoch"] == 1 and resumed["training_tokens_sampled"] == _tokens_scored(TRAIN)
    assert (run / "elmo" / "weights.hdf5").exists()


@TrainerCallback.register("record_every_worker")
class RecordEveryWorker(TrainerCallback):
    """Each worker's epoch metrics and scalar-mix weights, in ``worker<rank>.json`` after every epoch.

    AllenNLP writes rank 0's metrics only; this shows that the other worker computed the same.
    (Not in ``on_end``: there rank 0 alone has reloaded the best epoch's weights.)
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self.epochs: List[Dict[str, Any]] = []

    def on_epoch(self, trainer, metrics: Dict[str, Any], epoch: int, is_primary: bool = True, **kwargs) -> None:
        mixes = {n: p.detach().tolist() for n, p in trainer.model.named_parameters() if "scalar_mix" in n}
        self.epochs.append({"metrics": dict(metrics), "mixes": mixes})  # the trainer reuses its dict
        path = Path(self.serialization_dir) / f"worker{torch.distributed.get_rank()}.json"
        path.write_text(json.dumps(self.epochs), encoding="utf-8")


def _shared_metrics(metrics: Dict[str, Any]) -> Dict[str, float]:
    """The span metrics and losses: what every worker must report alike (not memory or durations)."""
    return {
        k: v
        for k, v in metrics.items()
        if k.startswith(("training_", "validation_")) and ("-" in k or k.endswith("loss"))
    }


@pytest.mark.slow
def test_ner_with_fast_elmo_trains_on_two_workers(tmp_path):
    run = tmp_path / "ner"
    # the tagger must predict entities on the fixtures for the F1 check to mean something: with the
    # config's lr 0.001 it predicted none after 2 epochs or after 8 (F1 0)
    overrides = {
        **TWO_CPU_WORKERS,
        "trainer.num_epochs": 8,
        "trainer.optimizer.lr": 0.01,
        "trainer.callbacks": [{"type": "record_every_worker"}],
        "model.decode_during_training": True,  # training span counts too, summed over the workers
    }
    arguments = ["-s", str(run), "-o", json.dumps(overrides), "--include-package", __name__]  # the callback
    run_allennlp("train", "experiments/ner_elmo.jsonnet", *arguments)
    workers = [json.loads((run / f"worker{rank}.json").read_text(encoding="utf-8")) for rank in range(2)]
    assert [len(epochs) for epochs in workers] == [8, 8]  # both trained to the end
    for first, second in zip(*workers, strict=True):
        shared = _shared_metrics(first["metrics"])
        assert "validation_f1-measure-overall" in shared and "training_f1-measure-overall" in shared
        assert all(math.isfinite(v) for v in shared.values()), shared
        assert shared == _shared_metrics(second["metrics"])  # the span counts were summed over the workers
        assert first["mixes"] and first["mixes"] == second["mixes"]  # DDP kept the scalar mixes in sync
    assert workers[0][1]["metrics"]["training_loss"] < workers[0][0]["metrics"]["training_loss"]
    # the mixing weights start at zero and were trained
    assert any(w != 0 for n, ws in workers[0][-1]["mixes"].items() if "scalar_parameters" in n for w in ws)

    # the validation F1 gathered from both workers is the one a single process computes
    evaluated = tmp_path / "eval.json"
    run_allennlp("evaluate", str(run / "model.tar.gz"), "fixtures/ner/dev.txt", "--output-file", str(evaluated))
    single = json.loads(evaluated.read_text())
    best = json.loads((run / "metrics.json").read_text())
    spans = [key for key in single if "-" in key]  # overall and per type
    assert "f1-measure-overall" in spans and single["f1-measure-overall"] > 0  # not trivially equal
    for key in spans:
        assert best[f"best_validation_{key}"] == pytest.approx(single[key], abs=1e-9), key
