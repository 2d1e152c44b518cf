"""Every experiment's model, and the biLM on its own, give on a GPU what they give on the CPU (issue 55.5).

Each task's ELMo experiment (its fixture config: the ELMo embedder and its layer cache, the padded RNNs,
the biLM's time-loop LSTM, the CRF and Viterbi decoding, span extraction and antecedent scoring) runs one
batch in evaluation mode on the CPU and on the first GPU: the loss, every tensor output and the decoded
predictions must agree; then one training step on the GPU must give finite gradients, all on the GPU.
Skipped where torch sees no GPU (the CI and the project's own machines); run them where one is at hand.
"""

import copy
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Instance, Vocabulary
from allennlp.models import Model
from allennlp.nn.util import move_to_device

from tests.conftest import OPTIONS_FILE, ROOT, WEIGHT_FILE

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU that torch can use here")

GPU = torch.device("cuda:0")
# float32 on a GPU sums in other orders than on a CPU (cuDNN's RNNs, reductions)
TOLERANCE = 1e-4
TASKS = ["snli", "squad", "srl", "coref", "ner", "sst5"]


@pytest.fixture(autouse=True)
def _float32_without_tf32() -> Iterator[None]:
    """On Ampere and later GPUs cuDNN's convolutions and RNNs may use TF32 (a 10-bit mantissa) by default,
    which moves SQuAD's logits by ~1e-4 (seen on an H200); the comparison with the CPU is of float32."""
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def _model_and_batch(task: str, size: int = 4) -> Tuple[Model, Dict[str, Any]]:
    """The task's ELMo experiment at its fixture size, and a tensor batch of its first training instances."""
    import os

    params = Params.from_file(
        str(ROOT / "experiments" / f"{task}_elmo.jsonnet"), ext_vars={**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    )
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances: List[Instance] = list(reader.read(str(ROOT / params.pop("train_data_path"))))[:size]
    vocab = Vocabulary.from_params(params.pop("vocabulary", Params({})), instances=instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    batch = Batch(instances)
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict()


def _assert_close(cpu: Any, gpu: Any, where: str) -> None:
    if isinstance(cpu, torch.Tensor):
        assert gpu.device.type == "cuda", where
        if cpu.is_floating_point():
            torch.testing.assert_close(gpu.cpu(), cpu, atol=TOLERANCE, rtol=TOLERANCE, msg=where)
        else:
            assert torch.equal(gpu.cpu(), cpu), where
    elif isinstance(cpu, dict):
        for key in cpu:
            _assert_close(cpu[key], gpu[key], f"{where}.{key}")


@pytest.mark.parametrize("task", TASKS)
def test_the_elmo_experiment_gives_on_the_gpu_what_it_gives_on_the_cpu(task):
    torch.manual_seed(0)
    model, tensors = _model_and_batch(task)
    model.eval()
    on_gpu = copy.deepcopy(model).to(GPU)
    with torch.no_grad():
        cpu_output = model(**tensors)
        gpu_output = on_gpu(**move_to_device(tensors, GPU))
        again = on_gpu(**move_to_device(tensors, GPU))  # the frozen biLM's layer cache, filled by the first pass
    _assert_close(cpu_output, gpu_output, task)
    _assert_close(cpu_output, again, f"{task} (cached layers)")
    readable_cpu = model.make_output_human_readable(dict(cpu_output))
    readable_gpu = on_gpu.make_output_human_readable(dict(gpu_output))
    for key, value in readable_cpu.items():
        if not isinstance(value, torch.Tensor):  # tags, spans, clusters, labels, answers
            assert readable_gpu[key] == value, f"{task}: {key}"
    assert model.get_metrics(reset=True).keys() == on_gpu.get_metrics(reset=True).keys()


@pytest.mark.parametrize("task", TASKS)
def test_a_training_step_on_the_gpu_gives_finite_gradients_on_the_gpu(task):
    torch.manual_seed(0)
    model, tensors = _model_and_batch(task)
    model.to(GPU).train()
    loss = model(**move_to_device(tensors, GPU))["loss"]
    loss.backward()
    trained = [(name, p) for name, p in model.named_parameters() if p.requires_grad and p.grad is not None]
    assert trained, task
    for name, parameter in trained:
        assert parameter.grad.device.type == "cuda" and torch.isfinite(parameter.grad).all(), f"{task}: {name}"


def test_the_bilm_gives_on_the_gpu_what_it_gives_on_the_cpu():
    from elmo_tasks.bilm import batch_to_ids, load_bilm

    sentences = [["The", "cat", "sat", "."], ["A", "much", "longer", "sentence", "than", "the", "first", "."]]
    ids = batch_to_ids(sentences)
    bilm = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    with torch.no_grad():
        cpu = bilm(ids)
        gpu = copy.deepcopy(bilm).to(GPU)(ids.to(GPU))
    for layer, (on_cpu, on_gpu) in enumerate(zip(cpu.layers, gpu.layers, strict=True)):
        torch.testing.assert_close(on_gpu.cpu(), on_cpu, atol=TOLERANCE, rtol=TOLERANCE, msg=f"layer {layer}")


def test_elmo_embed_gives_on_the_gpu_what_it_gives_on_the_cpu(tmp_path):
    """The file embedder's batch path copies each batch off the GPU in one piece: same layers, on the host."""
    import h5py

    from elmo_tasks.bilm import load_bilm
    from elmo_tasks.bilm.file_embedder import OutputMode, embed_file, embed_sentences

    sentences = [["The", "cat", "sat", "."], ["A", "much", "longer", "sentence", "than", "the", "first", "."], ["x"]]
    bilm = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    on_gpu = copy.deepcopy(bilm).to(GPU)
    cpu_layers = embed_sentences(bilm, sentences, torch.device("cpu"))
    gpu_layers = embed_sentences(on_gpu, sentences, GPU)
    for words, on_cpu, from_gpu in zip(sentences, cpu_layers, gpu_layers, strict=True):
        assert from_gpu.device.type == "cpu" and from_gpu.shape == on_cpu.shape == (3, len(words), on_cpu.shape[-1])
        torch.testing.assert_close(from_gpu, on_cpu, atol=TOLERANCE, rtol=TOLERANCE)
    text = tmp_path / "in.txt"
    text.write_text("\n".join(" ".join(words) for words in sentences) + "\n", encoding="utf-8")
    for device, model, name in ((torch.device("cpu"), bilm, "cpu.hdf5"), (GPU, on_gpu, "gpu.hdf5")):
        embed_file(
            model, str(text), str(tmp_path / name), OutputMode("all"), batch_size=2, device=device, progress=False
        )
    with h5py.File(tmp_path / "cpu.hdf5") as cpu_file, h5py.File(tmp_path / "gpu.hdf5") as gpu_file:
        for index in range(len(sentences)):
            torch.testing.assert_close(
                torch.from_numpy(gpu_file[str(index)][()]),
                torch.from_numpy(cpu_file[str(index)][()]),
                atol=TOLERANCE,
                rtol=TOLERANCE,
            )
