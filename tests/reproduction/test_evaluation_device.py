"""The harness scores an archive on the device it was trained on (issue 55.5): the first GPU when torch
sees one and the config names none, the config's own ``cuda_device`` when it names one, the CPU otherwise."""

import json

import pytest
import torch

from elmo_tasks.reproduction.devices import evaluation_flags, training_device


@pytest.fixture
def gpus(monkeypatch):
    """Sets how many GPUs torch reports."""

    def seen(count: int) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: count)

    return seen


def test_on_a_gpu_machine_the_archive_is_scored_on_the_first_gpu(gpus, tmp_path):
    gpus(2)
    (tmp_path / "config.json").write_text(json.dumps({"trainer": {"num_epochs": 1}}))
    assert evaluation_flags(tmp_path) == ["--cuda-device", "0"]


def test_on_a_cpu_machine_the_command_is_as_before(gpus, tmp_path):
    gpus(0)
    (tmp_path / "config.json").write_text(json.dumps({"trainer": {"num_epochs": 1}}))
    assert evaluation_flags(tmp_path) == []


@pytest.mark.parametrize(
    "config, expected",
    [
        ({"trainer": {"cuda_device": -1}}, -1),  # the user asked for the CPU on a GPU machine
        ({"trainer": {"cuda_device": 1}}, 1),
        ({"trainer": {"cuda_device": "cuda:1"}}, 1),
        ({"trainer": {"cuda_device": "cpu"}}, -1),
        ({"trainer": {}, "distributed": {"cuda_devices": [2, 3]}}, 2),
    ],
)
def test_the_users_cuda_device_wins(gpus, config, expected):
    gpus(4)
    assert training_device(config) == expected


def test_a_device_of_another_form_is_refused_with_what_is_expected():
    with pytest.raises(ValueError, match="expected an integer"):
        training_device({"trainer": {"cuda_device": "tpu"}})
