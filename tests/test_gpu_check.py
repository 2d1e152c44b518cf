"""benchmarks/gpu_check.py at its tiny size on the CPU: it must work before a GPU is at hand.

The check is run in this process (AllenNLP is already imported by the test session, so this takes
seconds); its rows come back through ``--json`` and its table on stdout.
"""

import importlib.util
import json
import math
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List

import pytest
import torch

from elmo_tasks.modules import allennlp_elmo_replaced
from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def _benchmarks_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """gpu_check imports the scripts beside it, as ``python benchmarks/gpu_check.py`` finds them."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))


def _gpu_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(path: Path) -> List[Dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["rows"]


def test_tiny_cpu_run_measures_every_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # With our drop-in on (as ELMO_TASKS_REPLACE_ALLENNLP_ELMO=1 would leave it), the check must still
    # build AllenNLP's own ELMo for its AllenNLP rows.
    with allennlp_elmo_replaced():
        status = _gpu_check().main(["--device", "cpu", "--size", "tiny", "--json", str(tmp_path / "rows.json")])
    rows = _rows(tmp_path / "rows.json")
    assert status == 0, [row["note"] for row in rows if row["note"].startswith("failed")]
    by_key = {(row["part"], row["what"], row["elmo"], row["precision"]): row for row in rows}
    expected = [
        ("a", "embed", elmo, precision)
        for elmo in ("ours", "AllenNLP")
        for precision in ("float32", "bfloat16 autocast", "float16 autocast")
    ]
    expected += [
        ("b", what, elmo, "float32") for what in ("NER train step", "ESIM train step") for elmo in ("ours", "AllenNLP")
    ]
    expected += [("c", f"biLM train step, {kind} softmax", "ours", "float32") for kind in ("sampled", "exact")]
    assert sorted(by_key) == sorted(expected)
    for key, row in by_key.items():
        if row["note"].startswith("skipped"):  # only float16 autocast may be, and it says why
            assert key[3] == "float16 autocast" and "float16" in row["note"], row
            continue
        assert row["tokens_per_s"] > 0, row
        assert row["peak_mb"] is None, row  # no device memory to report on a CPU
    for elmo in ("ours", "AllenNLP"):
        measured = [by_key[("a", "embed", elmo, p)] for p in ("bfloat16 autocast", "float16 autocast")]
        for row in measured:
            if not row["note"].startswith("skipped"):
                assert math.isfinite(row["max_diff"]) and row["max_diff"] < 0.1, row
    # in float32 our layer average is AllenNLP's initial mix, to float rounding
    for elmo in ("ours", "AllenNLP"):
        assert by_key[("a", "embed", elmo, "float32")]["max_diff"] < 1e-5

    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("GPU check on CPU")
    table = [line for line in out if line.startswith("| ")]
    assert table[0].startswith("| part | measurement |") and len(table) == 1 + len(rows)


def test_time_guard_skips_what_would_start_after_the_budget(tmp_path: Path) -> None:
    status = _gpu_check().main(
        ["--device", "cpu", "--size", "tiny", "--parts", "a", "--budget-s", "0", "--json", str(tmp_path / "r.json")]
    )
    rows = _rows(tmp_path / "r.json")
    assert status == 0 and rows
    assert all(row["tokens_per_s"] is None and row["note"].startswith("skipped") for row in rows)


def test_full_data_esim_with_two_elmo_mixes_is_measured_as_it_is_and_compared_at_the_input(tmp_path: Path) -> None:
    # The full-data ESIM has ELMo at the input and at its encoder's output; AllenNLP's embedder gives one
    # mix, so the comparison is on the same ESIM with ELMo at the input only.
    gpu_check = _gpu_check()
    scale = gpu_check.Scale(["tiny"], "full", 8, 8, 1, 0, 1, "tiny", 300, 64, 8)
    run = gpu_check.Run(gpu_check.torch.device("cpu"), budget_s=600)
    files = gpu_check.write_random_bilm("tiny", str(tmp_path))
    gpu_check.task_rows(run, "snli_elmo", "ESIM train step", "tiny", files, scale)
    assert [(row.what, row.elmo) for row in run.rows] == [
        ("ESIM train step, ELMo at input and output", "ours"),
        ("ESIM train step, ELMo at input", "ours"),
        ("ESIM train step, ELMo at input", "AllenNLP"),
    ]
    assert all(row.tokens_per_s > 0 and "first loss" in row.note for row in run.rows), [r.note for r in run.rows]


def test_a_measurement_repeats_its_steps_until_min_seconds_have_passed() -> None:
    gpu_check = _gpu_check()
    calls: List[int] = []

    def step() -> int:
        calls.append(1)
        time.sleep(0.01)
        return 5

    once = gpu_check.Run(torch.device("cpu"), 60.0)
    rate, _ = once.timed([step, step], warmup=1)
    assert len(calls) == 3 and 0 < rate <= 10 / 0.02  # the warm-up, then one pass of two steps
    calls.clear()
    repeated = gpu_check.Run(torch.device("cpu"), 60.0, min_seconds=0.1)
    started = time.perf_counter()
    rate, _ = repeated.timed([step, step], warmup=0)
    assert time.perf_counter() - started >= 0.1
    assert len(calls) >= 4 and len(calls) % 2 == 0  # whole passes only, more than one
    assert 0 < rate <= 500  # every step sleeps at least 10 ms for its 5 tokens
