"""scripts/bilm_learning_curve.py: tokens seen per checkpoint, counted from the run's epoch metrics."""

import importlib.util
import json

import pytest

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("bilm_learning_curve", ROOT / "scripts" / "bilm_learning_curve.py")
curve = importlib.util.module_from_spec(spec)
spec.loader.exec_module(curve)


def _epoch(run_dir, epoch: int, **metrics) -> None:
    (run_dir / f"metrics_epoch_{epoch}.json").write_text(json.dumps(metrics))


def test_tokens_seen_prefers_the_logged_count_and_falls_back_to_rate_times_time(tmp_path):
    # A distributed run logs every epoch's token count over all workers: the counts are summed.
    _epoch(tmp_path, 0, training_duration="0:10:00", training_tokens_per_s=500.0, training_tokens_sampled=301000.0)
    _epoch(tmp_path, 1, training_duration="0:15:00", training_tokens_per_s=1000.0, training_tokens_sampled=299000.0)
    assert curve.tokens_seen(tmp_path, 1) == 301000
    assert curve.tokens_seen(tmp_path, 2) == 600000
    # Without counts: each epoch's rate x its own time (the duration is cumulative): 500 x 600 + 1000 x 300.
    _epoch(tmp_path, 0, training_duration="0:10:00", training_tokens_per_s=500.0)
    _epoch(tmp_path, 1, training_duration="0:15:00", training_tokens_per_s=1000.0)
    assert curve.tokens_seen(tmp_path, 2) == 600000
    with pytest.raises(FileNotFoundError, match="metrics_epoch_2.json is missing"):
        curve.tokens_seen(tmp_path, 3)


def test_a_full_softmax_runs_training_log_is_its_curve(tmp_path):
    log = tmp_path / "training_log.jsonl"
    records = [
        {"start": "shipped", "step": 0, "heldout": {"news300": {"mean": 109.3}}},
        {"step": 439, "tokens": 5000, "train_loss": 4.9, "heldout": {"news300": {"mean": 89.4}}},
        {"step": 900, "tokens": 9000, "heldout": {"news300": {"mean": 81.0}}, "final": True},
    ]
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    points = curve.curve_from_training_log(log, tokens_before=1000)
    assert [p["checkpoint"] for p in points] == ["step 0", "step 439", "step 900 (final)"]
    assert [p["tokens_seen"] for p in points] == [1000, 6000, 10000]
    assert [p["perplexity"]["news300"]["mean"] for p in points] == [109.3, 89.4, 81.0]
