"""The device a run's archive is scored on: the one AllenNLP's trainer trained it on.

AllenNLP's trainer takes the first GPU when torch sees one and the config names no ``cuda_device``, but
``allennlp evaluate`` scores on the CPU unless it is given ``--cuda-device``: without this, a GPU machine
would train on its GPU and score the test sets on its CPU.
"""

import json
from pathlib import Path
from typing import Any, List


def _device_id(device: Any) -> int:
    """A config's device as ``allennlp evaluate`` takes it: -1 for the CPU, else the GPU's id."""
    if isinstance(device, int):
        return device
    text = str(device)
    if text == "cpu":
        return -1
    if text.startswith("cuda"):
        return int(text.partition(":")[2] or 0)
    raise ValueError(f"cuda_device {device!r}: expected an integer (-1: the CPU), 'cpu' or 'cuda:N'")


def training_device(config: dict) -> int:
    """Where the trainer of ``config`` (a resolved config) runs: its ``trainer.cuda_device`` when set (the
    user's choice wins), the first of ``distributed.cuda_devices`` for a distributed run, else the first
    GPU when torch sees one (AllenNLP's default), else -1 (the CPU)."""
    chosen = config.get("trainer", {}).get("cuda_device")
    if chosen is not None:
        return _device_id(chosen)
    distributed = config.get("distributed", {}).get("cuda_devices")
    if distributed:
        return _device_id(distributed[0])
    import torch

    return 0 if torch.cuda.is_available() and torch.cuda.device_count() > 0 else -1


def evaluation_flags(run_dir: Path) -> List[str]:
    """``allennlp evaluate``'s device flag for the archive in ``run_dir``: none on the CPU (its default)."""
    device = training_device(json.loads((run_dir / "config.json").read_text(encoding="utf-8")))
    return [] if device < 0 else ["--cuda-device", str(device)]
