"""The GPU check: one command that measures our ELMo against AllenNLP's on whatever device is here.

It prints ONE markdown table, so that a session lent a GPU can paste it into docs/BENCHMARKS.md:

(a) ``elmo-embed``'s batch path (``elmo_tasks.bilm.file_embedder.embed_sentences`` on batches sorted
    by length, outputs copied back to the host) against AllenNLP's ``allennlp.modules.elmo.Elmo``
    (states reset before each batch, so both are stateless), with random weights in the original
    hdf5 layout at the original size (2x4096_512, 2048-filter char CNN, 2 highway) and at the
    shipped size (2x1024_128, 1024 filters, 1 highway): tokens/s and peak device memory in
    float32 and under ``torch.autocast`` with bfloat16 and float16 where the device supports them,
    with the largest difference to that implementation's own float32 output (and, in the float32
    rows, between the two implementations: our layer average against AllenNLP's initial mix,
    which is that average);
(b) one training step (forward, backward, gradient clipping, the config's optimizer) of the NER
    tagger and of ESIM with ELMo, built from ``experiments/ner_elmo.jsonnet`` and
    ``experiments/snli_elmo.jsonnet`` with that same random biLM, once with our ``fast_elmo`` (its
    layer cache off, so every step runs the biLM as a first epoch does) and once with AllenNLP's
    own ``elmo_token_embedder`` (the drop-in switched off); the full-data ESIM's two ELMo mixes (input
    and input encoder's output) only with ours, and both on that ESIM with ELMo at the input only;
(c) the biLM training step of ``experiments/bilm_small.jsonnet`` (sampled softmax, 8,192 samples
    over about 50,000 rows) and of the exact-softmax trainer (``elmo_tasks.bilm.full_softmax_training``),
    tokens/s.

    .venv/bin/python benchmarks/gpu_check.py                          # cuda if available, else cpu
    .venv/bin/python benchmarks/gpu_check.py --device cpu --size tiny # the smoke run the tests do

``--size tiny`` swaps in bilm-tf's tiny test biLM and small batches, so the whole check runs on a
CPU in seconds. The data are the bundled fixtures (no downloads). Every measurement runs a fixed
number of steps after a warm-up, repeated until ``--min-seconds`` have passed (1.5 s at the full
size), and ``--budget-s`` (default 330) skips what would start after it,
so a full GPU run ends within 6 minutes. A measurement that raises is reported in the table
("failed: ..."), and the script then exits with status 1. float32 rows are strict float32: TF32 is
switched off for cuDNN too (torch lets cuDNN's convolutions and RNNs use it by default).
"""

import argparse
import copy
import gc
import itertools
import math
import os
import platform
import sys
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from bench_files import ROOT, save_results, start_like_a_command, training_step, word_batches

FIXTURES = os.path.join(ROOT, "fixtures")
SHIPPED_OPTIONS = os.path.join(ROOT, "elmo_tasks", "pretrained", "bilm_small", "options.json")
TINY_OPTIONS = os.path.join(FIXTURES, "bilm_tf", "options.json")
# Sentences of every part: the bundled biLM training sample, NER's three files, SNLI's training pairs.
LM_TEXT = os.path.join(FIXTURES, "lm", "train.txt")
NER_FILES = [os.path.join(FIXTURES, "ner", name) for name in ("train.txt", "dev.txt", "test.txt")]
SNLI_FILE = os.path.join(FIXTURES, "snli", "train.jsonl")


@dataclass
class Scale:
    """How much each part measures: ``full`` for a GPU, ``tiny`` for a CPU smoke run."""

    bilm_sizes: List[str]  # names in bilm_options()
    task_data: str  # ELMO_TASKS_DATA of the task configs: their model sizes and batch sizes
    embed_sentences: int
    embed_batch: int
    embed_passes: int  # timed passes over the sentences
    warmup: int  # untimed steps (batches) before each measurement
    steps: int  # timed training steps of (b) and (c)
    lm_size: str
    lm_vocab: int  # softmax rows (before padding and unknown), as bilm_small.jsonnet's max_vocab_size
    lm_samples: int
    lm_batch: int
    min_seconds: float = 0.0  # a measurement repeats its timed steps until it has run this long


SCALES: Dict[str, Scale] = {
    "full": Scale(["original", "shipped"], "full", 400, 64, 3, 2, 10, "shipped", 50000, 8192, 64, min_seconds=1.5),
    "tiny": Scale(["tiny"], "fixtures", 32, 8, 1, 1, 2, "tiny", 300, 64, 8),
}


@dataclass
class Row:
    """One line of the table."""

    part: str  # a, b or c
    what: str
    size: str
    elmo: str  # ours or AllenNLP
    precision: str  # float32, or the autocast dtype
    tokens_per_s: Optional[float] = None
    peak_mb: Optional[float] = None  # peak device memory allocated during the measurement
    max_diff: Optional[float] = None
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.note.startswith("failed")


@dataclass
class Run:
    """The device, the time guard and the rows measured so far."""

    device: torch.device
    budget_s: float
    started: float = field(default_factory=time.perf_counter)
    min_seconds: float = 0.0  # see Scale.min_seconds
    rows: List[Row] = field(default_factory=list)

    def out_of_time(self) -> bool:
        return time.perf_counter() - self.started > self.budget_s

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def reset_peak(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)

    def peak_mb(self) -> Optional[float]:
        """Peak device memory allocated since ``reset_peak`` (the model's weights included); None on a CPU,
        where one process's peak memory cannot be split between measurements."""
        return torch.cuda.max_memory_allocated(self.device) / 2**20 if self.device.type == "cuda" else None

    def free(self) -> None:
        """Release what the last measurement left (on a GPU, so that the next one's peak memory is its own;
        on a CPU nothing is measured, and a collection of AllenNLP's large heap takes a second)."""
        if self.device.type == "cuda":
            gc.collect()
            torch.cuda.empty_cache()

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(_line(row), file=sys.stderr, flush=True)

    def measure(self, row: Row, work: Callable[[Row], None]) -> None:
        """Fill ``row`` by ``work``; a measurement past the time guard is skipped, one that raises is
        reported as failed (the other measurements still run)."""
        if self.out_of_time():
            row.note = f"skipped: past --budget-s {self.budget_s:g}"
        else:
            try:
                work(row)
            except Exception as error:  # noqa: BLE001  (any failure is a result of the check)
                row.note = f"failed: {type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
            self.free()
        self.add(row)

    def timed(self, steps: Sequence[Callable[[], int]], warmup: int) -> Tuple[float, Optional[float]]:
        """Tokens/s over ``steps`` (each returns its token count), repeated until ``min_seconds`` have
        passed, after ``warmup`` untimed calls of the first ones, and the peak device memory of the timed
        steps. (On an H200 a single pass took about 0.3 s and rates moved by up to 40% between runs.)"""
        for step in itertools.islice(itertools.cycle(steps), warmup):
            step()
        self.sync()
        self.reset_peak()
        tokens = 0
        start = time.perf_counter()
        while True:
            for step in steps:
                tokens += step()
            self.sync()
            if time.perf_counter() - start >= self.min_seconds:
                return tokens / (time.perf_counter() - start), self.peak_mb()


# ---- the biLMs ------------------------------------------------------------------------------


def bilm_options(size: str) -> Any:
    """The sizes measured: the published original ELMo (BilmOptions' defaults), the biLM we ship,
    and bilm-tf's tiny test biLM with residual connections (AllenNLP's ELMo refuses a biLM without)."""
    from elmo_tasks.bilm import BilmOptions

    if size == "original":
        return BilmOptions()
    if size == "shipped":
        return BilmOptions.from_file(SHIPPED_OPTIONS)
    options = BilmOptions.from_file(TINY_OPTIONS)
    options.use_skip_connections = True
    return options


def write_random_bilm(size: str, directory: str) -> Tuple[str, str]:
    """``options.json`` and ``weights.hdf5`` of a biLM with random weights, in the original layout."""
    from elmo_tasks.bilm import BiLM, save_weights

    torch.manual_seed(0)
    options = bilm_options(size)
    options_file, weight_file = os.path.join(directory, "options.json"), os.path.join(directory, "weights.hdf5")
    options.save(options_file)
    save_weights(BiLM(options), weight_file)
    return options_file, weight_file


def precisions(device: torch.device) -> List[Tuple[str, Optional[torch.dtype], str]]:
    """(label, autocast dtype or None, why it is skipped or '') for float32 and the autocast dtypes."""
    chosen: List[Tuple[str, Optional[torch.dtype], str]] = [("float32", None, "")]
    for name, dtype in (("bfloat16", torch.bfloat16), ("float16", torch.float16)):
        reason = ""
        if device.type == "cuda" and dtype is torch.bfloat16 and not torch.cuda.is_bf16_supported():
            reason = "skipped: this GPU has no bfloat16"
        elif not _autocast_turns_on(device.type, dtype):
            reason = f"skipped: torch has no {name} autocast on {device.type}"
        chosen.append((f"{name} autocast", dtype, reason))
    return chosen


def _autocast_turns_on(device_type: str, dtype: torch.dtype) -> bool:
    """Whether ``torch.autocast(device_type, dtype)`` really runs in ``dtype``: for a dtype it does not
    support on a device, torch only warns and runs in float32, which would pass for a measurement."""
    if not torch.amp.is_autocast_available(device_type):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast(device_type, dtype=dtype):
            return torch.is_autocast_enabled(device_type) and torch.get_autocast_dtype(device_type) == dtype


# ---- (a) embedding --------------------------------------------------------------------------


def read_sentences(count: int) -> List[List[str]]:
    sentences: List[List[str]] = []
    with open(LM_TEXT, encoding="utf-8") as handle:
        for line in handle:
            if line.split():
                sentences.append(line.split())
    return sentences[:count]


def embed_batches(sentences: List[List[str]], batch_size: int) -> List[List[List[str]]]:
    """Batches sorted by length, as ``elmo-embed`` cuts them (each chunk of its file is sorted)."""
    ordered = sorted(sentences, key=len)
    return [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)]


def embed_rows(run: Run, size: str, files: Tuple[str, str], scale: Scale) -> None:
    """Part (a) at one biLM size: both implementations, every precision."""
    from allennlp.modules.elmo import Elmo
    from allennlp.modules.elmo import batch_to_ids as allennlp_ids

    from elmo_tasks.bilm import load_bilm
    from elmo_tasks.bilm.file_embedder import embed_sentences

    device = run.device
    batches = embed_batches(read_sentences(scale.embed_sentences), scale.embed_batch)

    def ours() -> Tuple[torch.nn.Module, Callable[[List[List[str]]], torch.Tensor]]:
        model = load_bilm(*files).to(device).eval()

        def layers(batch: List[List[str]]) -> torch.Tensor:  # (layers, tokens, dim), on the host
            return torch.cat([value.cpu() for value in embed_sentences(model, batch, device)], dim=1)

        return model, layers

    def allennlp() -> Tuple[torch.nn.Module, Callable[[List[List[str]]], torch.Tensor]]:
        model: Any = Elmo(*files, num_output_representations=1, dropout=0.0).to(device).eval()

        def mixed(batch: List[List[str]]) -> torch.Tensor:  # (tokens, dim), on the host
            model._elmo_lstm._elmo_lstm.reset_states()  # stateless, like ours (it is stateful)
            with torch.no_grad():
                output = model(allennlp_ids(batch).to(device))["elmo_representations"][0].cpu()
            return torch.cat([output[row, : len(words)] for row, words in enumerate(batch)])

        return model, mixed

    float32_outputs: Dict[str, torch.Tensor] = {}
    float32_rows: Dict[str, Row] = {}
    for elmo, build in (("ours", ours), ("AllenNLP", allennlp)):
        built: List[Any] = []
        for label, dtype, reason in precisions(device):
            row = Row("a", "embed", size, elmo, label)
            if reason:
                row.note = reason
                run.add(row)
                continue

            # run.measure calls work before the loops move on; the defaults bind this iteration's values
            def work(
                row: Row,
                dtype: Optional[torch.dtype] = dtype,
                elmo: str = elmo,
                build: Callable[[], Any] = build,
                built: List[Any] = built,
            ) -> None:
                if not built:
                    built.append(build())
                embed = built[0][1]
                outputs: Dict[int, torch.Tensor] = {}  # each batch's output (of its last pass)

                def step(index: int) -> Callable[[], int]:
                    def call() -> int:
                        with torch.autocast(device.type, dtype=dtype or torch.float32, enabled=dtype is not None):
                            outputs[index] = embed(batches[index]).float()
                        return sum(len(words) for words in batches[index])

                    return call

                steps = [step(index) for index in range(len(batches))] * scale.embed_passes
                row.tokens_per_s, row.peak_mb = run.timed(steps, scale.warmup)
                output = torch.cat([outputs[index] for index in range(len(batches))], dim=-2)
                if dtype is None:
                    float32_outputs[elmo], float32_rows[elmo] = output, row
                    if elmo == "AllenNLP" and "ours" in float32_outputs:
                        for both in (float32_rows["ours"], row):
                            both.max_diff = _max_diff(float32_outputs["ours"].mean(dim=0), output)
                            both.note = "max diff: our layer average against AllenNLP's mix"
                elif elmo in float32_outputs:
                    row.max_diff = _max_diff(output, float32_outputs[elmo])
                    row.note = "max diff: against its own float32 output"

            run.measure(row, work)
        built.clear()
        run.free()


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


# ---- (b) task training steps ----------------------------------------------------------------


def task_config(experiment: str, data: str, files: Tuple[str, str]) -> Dict[str, Any]:
    """``experiments/<experiment>.jsonnet`` with the given biLM, as ``allennlp train`` would read it."""
    from allennlp.common import Params

    env = {**os.environ, "ELMO_TASKS_DATA": data, "ELMO_OPTIONS": files[0], "ELMO_WEIGHTS": files[1]}
    return Params.from_file(os.path.join(ROOT, "experiments", f"{experiment}.jsonnet"), ext_vars=env).as_dict(
        quiet=True
    )


def elmo_embedder(ours: Dict[str, Any], elmo: str) -> Dict[str, Any]:
    """A config's ELMo embedder ``ours`` as ours (``fast_elmo``, layer cache off) or as AllenNLP's own
    ``elmo_token_embedder`` with the same biLM files and settings."""
    if ours.get("num_output_representations", 1) != 1 and elmo != "ours":
        raise ValueError("AllenNLP's elmo_token_embedder has one output representation")
    if elmo == "ours":
        return {**ours, "cache_size_mb": 0}
    kept = ("options_file", "weight_file", "dropout", "do_layer_norm", "requires_grad")
    return {"type": "elmo_token_embedder", **{key: ours[key] for key in kept if key in ours}}


def allennlp_elmo_served_by_allennlp() -> None:
    """Switch our drop-in off (``ELMO_TASKS_REPLACE_ALLENNLP_ELMO`` may have switched it on)."""
    from elmo_tasks.modules.allennlp_compat import allennlp_elmo_is_replaced, restore_allennlp_elmo

    if allennlp_elmo_is_replaced():
        restore_allennlp_elmo()


def task_instances(experiment: str, config: Dict[str, Any], batch_size: int) -> List[Any]:
    """``batch_size`` distinct instances read by the config's reader from the bundled data (NER's
    three files together hold more distinct sentences than a full-data batch of 64)."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader

    reader = DatasetReader.from_params(Params(copy.deepcopy(config["dataset_reader"])))
    paths = NER_FILES if experiment.startswith("ner") else [SNLI_FILE]
    instances = list(itertools.islice((i for path in paths for i in reader.read(path)), batch_size))
    for instance in instances:
        reader.apply_token_indexers(instance)
    return instances


def batch_size_of(config: Dict[str, Any]) -> int:
    loader = config["data_loader"]
    return int(loader.get("batch_sampler", loader).get("batch_size"))


def task_rows(run: Run, experiment: str, what: str, size: str, files: Tuple[str, str], scale: Scale) -> None:
    """Part (b) for one task config at one biLM size: ours, then AllenNLP's."""
    from allennlp.common import Params
    from allennlp.data import Batch, Vocabulary
    from allennlp.data.fields import TextField

    config = task_config(experiment, scale.task_data, files)
    instances = task_instances(experiment, config, batch_size_of(config))
    vocab = Vocabulary.from_params(Params(copy.deepcopy(config.get("vocabulary", {}))), instances=instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    tokens = sum(len(f.tokens) for i in instances for f in i.fields.values() if isinstance(f, TextField))
    trainer = config["trainer"]
    allennlp_elmo_served_by_allennlp()
    for label, model_base, elmos in task_variants(config, what):
        for elmo in elmos:
            row = Row("b", label, size, elmo, "float32")
            _task_row(run, row, model_base, trainer, vocab, tensors, (len(instances), tokens), scale)


def task_variants(config: Dict[str, Any], what: str) -> List[Tuple[str, Dict[str, Any], Tuple[str, ...]]]:
    """(row label, model config, ELMo implementations) of one task config. AllenNLP's embedder gives one
    ELMo mix, so a model with ELMo at the input and at its encoder's output (the full-data ESIM) is
    measured as it is with ours, and both are compared on the same model with ELMo at the input only."""
    model = config["model"]
    elmo = model["text_field_embedder"]["token_embedders"]["elmo"]
    if elmo.get("num_output_representations", 1) == 1:
        return [(what, model, ("ours", "AllenNLP"))]
    if "elmo_at_output" not in model:
        raise ValueError(f"{what}: {elmo['num_output_representations']} ELMo mixes, but no elmo_at_output to switch")
    input_only = copy.deepcopy(model)
    input_only["elmo_at_output"] = False
    input_only["text_field_embedder"]["token_embedders"]["elmo"]["num_output_representations"] = 1
    return [
        (f"{what}, ELMo at input and output", model, ("ours",)),
        (f"{what}, ELMo at input", input_only, ("ours", "AllenNLP")),
    ]


def _task_row(
    run: Run,
    row: Row,
    model_base: Dict[str, Any],
    trainer: Dict[str, Any],
    vocab: Any,
    tensors: Dict[str, Any],
    batch_counts: Tuple[int, int],
    scale: Scale,
) -> None:
    """Training steps of ``model_base`` with ``row.elmo``'s ELMo embedder on the batch ``tensors`` of
    ``batch_counts`` (instances, tokens), into ``row``."""
    instances, tokens = batch_counts
    from allennlp.common import Params
    from allennlp.models import Model
    from allennlp.nn.util import move_to_device
    from allennlp.training.optimizers import Optimizer

    def work(row: Row) -> None:
        model_config = copy.deepcopy(model_base)
        embedders = model_config["text_field_embedder"]["token_embedders"]
        embedders["elmo"] = elmo_embedder(embedders["elmo"], row.elmo)
        torch.manual_seed(0)
        model: Any = Model.from_params(vocab=vocab, params=Params(model_config)).to(run.device)
        embedder = model.text_field_embedder._token_embedders["elmo"]
        expected = "elmo_tasks." if row.elmo == "ours" else "allennlp."
        if not type(embedder).__module__.startswith(expected):
            raise RuntimeError(f"{row.elmo}: the config built {type(embedder).__module__}.{type(embedder).__name__}")
        model.train()
        parameters = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
        optimizer = Optimizer.from_params(
            model_parameters=parameters, params=Params(copy.deepcopy(trainer["optimizer"]))
        )
        on_device = move_to_device(tensors, run.device)
        losses: List[float] = []

        def step() -> int:
            losses.append(float(training_step(model, optimizer, parameters, trainer.get("grad_norm"), on_device)))
            return tokens

        row.tokens_per_s, row.peak_mb = run.timed([step] * scale.steps, scale.warmup)
        if not all(math.isfinite(loss) for loss in losses):
            raise FloatingPointError(f"a training loss was not finite: {losses}")
        row.note = f"batch of {instances}, {tokens} tokens; first loss {losses[0]:.4f}"

    run.measure(row, work)


# ---- (c) biLM training steps ----------------------------------------------------------------


def lm_batches(scale: Scale) -> Tuple[Any, Dict[str, Any], List[Tuple[Dict[str, Any], int]]]:
    """The vocabulary, the config of ``experiments/bilm_small.jsonnet`` at this scale, and the batches
    (tensors, words) of the timed steps: the bundled text read by the config's reader,
    sorted by length and cut into batches as the bucket sampler does."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary

    env = {**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    config = Params.from_file(os.path.join(ROOT, "experiments", "bilm_small.jsonnet"), ext_vars=env).as_dict(quiet=True)
    config["model"]["options"] = bilm_options(scale.lm_size).to_json_dict()
    config["model"]["num_samples"] = scale.lm_samples
    reader = DatasetReader.from_params(Params(config["dataset_reader"]))
    instances: List[Any] = list(reader.read(LM_TEXT))
    vocab = Vocabulary.from_instances(instances)
    fillers = max(0, scale.lm_vocab + 2 - vocab.get_vocab_size("lm_targets"))
    vocab.add_tokens_to_namespace([f"filler{i}" for i in range(fillers)], "lm_targets")
    needed = scale.lm_batch * scale.steps
    chosen = sorted(itertools.islice(itertools.cycle(instances), needed), key=lambda i: len(i["tokens"].tokens))
    batches = word_batches(reader, chosen, vocab, scale.lm_batch)
    order = torch.randperm(len(batches), generator=torch.Generator().manual_seed(0)).tolist()
    return vocab, config, [batches[i] for i in order]  # mixed lengths, as training sees them


def lm_rows(run: Run, scale: Scale) -> None:
    """Part (c): the sampled-softmax step of the AllenNLP model and the exact-softmax trainer's step."""
    from allennlp.common import Params
    from allennlp.models import Model
    from allennlp.nn.util import get_token_ids_from_text_field_tensors, move_to_device

    from elmo_tasks.bilm.full_softmax_training import Softmax, lm_nll

    prepared: List[Any] = []
    for what in ("biLM train step, sampled softmax", "biLM train step, exact softmax"):
        row = Row("c", what, scale.lm_size, "ours", "float32")

        def work(row: Row, exact: bool = "exact" in what) -> None:
            if not prepared:
                prepared.extend(lm_batches(scale))
            vocab, config, batches = prepared
            torch.manual_seed(0)
            model: Any = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(config["model"])))
            model = model.to(run.device).train()
            optimizer = torch.optim.Adam(model.parameters(), lr=config["trainer"]["optimizer"]["lr"])
            grad_norm = config["trainer"]["grad_norm"]
            tokens = vocab.get_index_to_token_vocabulary("lm_targets")
            softmax = Softmax(model.softmax.weight, model.softmax.bias, [tokens[i] for i in range(len(tokens))])

            def step(tensors: Dict[str, Any], words: int) -> Callable[[], int]:
                def call() -> int:
                    on_device = move_to_device(tensors, run.device)
                    optimizer.zero_grad()
                    if exact:
                        char_ids = next(iter(on_device["tokens"].values()))["elmo_tokens"]
                        targets = get_token_ids_from_text_field_tensors(on_device["targets"])
                        forward, backward = lm_nll(model.bilm, softmax, char_ids, targets, model.top_dropout)
                        loss = 0.5 * (forward.mean() + backward.mean())
                    else:
                        loss = model(**on_device)["loss"]
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
                    optimizer.step()
                    if not math.isfinite(float(loss.detach())):
                        raise FloatingPointError("the training loss was not finite")
                    return words

                return call

            steps = [step(tensors, words) for tensors, words in batches]
            row.tokens_per_s, row.peak_mb = run.timed(steps, scale.warmup)
            rows = model.softmax.weight.shape[0]
            kind = "exact" if exact else f"{model.softmax.num_samples:,} samples"
            row.note = f"batches of {scale.lm_batch}, {rows:,} softmax rows ({kind}); words/s"

        run.measure(row, work)


# ---- the table ------------------------------------------------------------------------------

COLUMNS = ["part", "measurement", "biLM size", "ELMo", "precision", "tokens/s", "peak memory MB", "max diff", "note"]


def _cells(row: Row) -> List[str]:
    rate = f"{row.tokens_per_s:,.0f}" if row.tokens_per_s is not None else "-"
    peak = f"{row.peak_mb:,.0f}" if row.peak_mb is not None else "n/a"
    diff = f"{row.max_diff:.1e}" if row.max_diff is not None else "-"
    return [row.part, row.what, row.size, row.elmo, row.precision, rate, peak, diff, row.note]


def _line(row: Row) -> str:
    return " | ".join(_cells(row))


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            name = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"CPU ({name}), {torch.get_num_threads()} thread(s)"


def table(run: Run, size: str, seconds: float) -> str:
    lines = [
        f"GPU check on {device_name(run.device)}: torch {torch.__version__}, --size {size}, {seconds:.0f} s",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(_cells(row)) + " |" for row in run.rows]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="cuda, cuda:1, cpu")
    parser.add_argument("--size", choices=sorted(SCALES), default="full", help="full (for a GPU) or tiny (smoke run)")
    parser.add_argument("--parts", default="a,b,c", help="which parts to run (default all: a,b,c)")
    parser.add_argument(
        "--bilm-sizes",
        help="biLM sizes of parts a and b, e.g. shipped (default: original,shipped; tiny with --size tiny)",
    )
    parser.add_argument("--budget-s", type=float, default=330.0, help="skip measurements that would start later")
    parser.add_argument(
        "--min-seconds",
        type=float,
        help="repeat each measurement's timed steps for at least this long (default: 1.5 for full, 0 for tiny)",
    )
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: the thread policy, one)")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    import elmo_tasks.plugin  # noqa: F401  (registers the models, readers and fast_elmo)

    start_like_a_command()
    from elmo_tasks.threads import apply_thread_policy

    apply_thread_policy(args.threads)
    device = torch.device(args.device)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: torch sees no CUDA device here; use --device cpu")
    scale, parts = SCALES[args.size], set(args.parts.split(","))
    sizes = args.bilm_sizes.split(",") if args.bilm_sizes else scale.bilm_sizes
    if parts - {"a", "b", "c"} or set(sizes) - {"original", "shipped", "tiny"}:
        parser.error("--parts takes a, b and c; --bilm-sizes takes original, shipped and tiny")
    min_seconds = scale.min_seconds if args.min_seconds is None else args.min_seconds
    run = Run(device, args.budget_s, started, min_seconds=min_seconds)
    with tempfile.TemporaryDirectory() as directory:
        for size in sizes:
            if not parts & {"a", "b"}:
                break
            files = write_random_bilm(size, _folder(directory, size))
            if "a" in parts:
                embed_rows(run, size, files, scale)
            if "b" in parts:
                task_rows(run, "ner_elmo", "NER train step", size, files, scale)
                task_rows(run, "snli_elmo", "ESIM train step", size, files, scale)
        if "c" in parts:
            lm_rows(run, scale)
    seconds = time.perf_counter() - started
    print(table(run, args.size, seconds), flush=True)
    save_results(
        args.json,
        {
            "device": device_name(device),
            "torch": torch.__version__,
            "size": args.size,
            "seconds": round(seconds, 1),
            "rows": [asdict(row) for row in run.rows],
        },
    )
    return 1 if any(row.failed for row in run.rows) else 0


def _folder(parent: str, name: str) -> str:
    path = os.path.join(parent, name)
    os.makedirs(path, exist_ok=True)
    return path


if __name__ == "__main__":
    sys.exit(main())
