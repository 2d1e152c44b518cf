"""What the benchmarks share: the JSON their worker subprocesses read and the options that start a
worker, the ``--json`` results file, and the ``allennlp`` processes they time. Imported by the scripts
beside it (run as ``python benchmarks/NAME.py``)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

# The repository, where the benchmarks run their commands, and the ``allennlp`` of this environment.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLENNLP = os.path.join(os.path.dirname(sys.executable), "allennlp")
# Brown's news section of the real data (docs/DATA.md: ELMO_TASKS_SHARED_DATA, default data/ in the checkout)
BROWN_NEWS = os.path.join(ROOT, os.environ.get("ELMO_TASKS_SHARED_DATA", "data"), "lm/books/brown/brown_news_a-c.txt")


def data_file(path: str) -> str:
    """``--data``'s type: a file that is there (the defaults lie in the data folder, which may be elsewhere)."""
    if not os.path.exists(path):
        raise argparse.ArgumentTypeError(
            f"no file {path}: pass --data FILE, or set ELMO_TASKS_SHARED_DATA to the data folder (docs/DATA.md)"
        )
    return path


def add_alternation_options(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark that alternates two ways of running on the first sentences of a file."""
    parser.add_argument(
        "--data", type=data_file, default=BROWN_NEWS, help="whitespace-tokenized sentences, one per line"
    )
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3, help="how many times the two ways alternate")


def start_like_a_command() -> None:
    """What a command of the measured checkout does at its start (the config defaults the experiments
    read, the thread policy): checkouts since 2026-11-29 do it in ``elmo_tasks.command_start``, earlier
    ones when the plugin was imported (then there is nothing to do)."""
    import elmo_tasks

    # not an import attempt: the editable install's finder would find this checkout's module for an older one
    if not os.path.exists(os.path.join(os.path.dirname(elmo_tasks.__file__), "command_start.py")):
        return
    from elmo_tasks.command_start import start_command

    start_command()


def add_checkout_options(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark that times a checkout's training steps on the real data: which checkout,
    its torch threads, ``--json`` and ``--profile``."""
    parser.add_argument("--code-root", default=ROOT, help="the checkout whose elmo_tasks is measured")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", help="append the result as one json line to this file")
    parser.add_argument("--profile", action="store_true", help="print torch.profiler's top operators")


def run_on_checkout(code_root: str) -> None:
    """Makes this process import ``elmo_tasks`` from the checkout at ``code_root``: unless ``PYTHONPATH``
    already starts with it, the same command is run again in its place (``os.execve``) with
    ``PYTHONPATH=code_root``, which puts that checkout ahead of the installed one (the editable
    install's finder comes after the path entries)."""
    wanted = os.path.abspath(code_root)
    if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] == wanted:
        return
    earlier = os.environ.get("PYTHONPATH")
    environment = {**os.environ, "PYTHONPATH": wanted if not earlier else os.pathsep.join([wanted, earlier])}
    os.execve(sys.executable, [sys.executable, *sys.argv], environment)


def check_imported_from(code_root: str) -> None:
    """Exits unless ``elmo_tasks`` came from the checkout at ``code_root``."""
    import elmo_tasks

    if not os.path.abspath(elmo_tasks.__file__).startswith(os.path.abspath(code_root)):
        sys.exit(f"elmo_tasks was imported from {elmo_tasks.__file__}, not from {code_root}")


def import_checkout(code_root: str, threads: int, timed: str) -> None:
    """Imports the plugin of the checkout at ``code_root`` ahead of any other, starts it as its commands
    start, on ``threads`` torch threads; exits unless ``ELMO_TASKS_DATA=full`` (what it times, ``timed``,
    is real data), and when the plugin came from elsewhere."""
    if os.environ.get("ELMO_TASKS_DATA") != "full":
        sys.exit(f"set ELMO_TASKS_DATA=full (and ELMO_TASKS_SHARED_DATA to the data folder): it times real {timed}")
    run_on_checkout(code_root)
    os.environ["ELMO_TASKS_WORD_VECTORS"] = ""
    import torch

    torch.set_num_threads(threads)
    import elmo_tasks.plugin  # noqa: F401  (registers the readers and models of that checkout)

    start_like_a_command()
    check_imported_from(code_root)


def training_step(model: Any, optimizer: Any, parameters: Sequence[Any], grad_norm: Optional[float], batch: Any) -> Any:
    """One update as AllenNLP's trainer makes it: the loss with the model's regularization penalty, the
    gradient norm clipped at ``grad_norm`` when the config sets one; the loss (a tensor, detached)."""
    import torch

    optimizer.zero_grad()
    loss = model(**batch)["loss"]
    penalty = model.get_regularization_penalty()
    if penalty is not None:
        loss = loss + penalty
    loss.backward()
    if grad_norm:
        torch.nn.utils.clip_grad_norm_([p for _, p in parameters], grad_norm)
    optimizer.step()
    return loss.detach()


def word_batches(
    reader: Any, instances: Sequence[Any], vocab: Any, batch_size: int
) -> List[Tuple[Dict[str, Any], int]]:
    """``instances`` cut in their order into batches of ``batch_size``, indexed by ``reader``'s token
    indexers and ``vocab``: each batch's tensors and its count of words (its ``tokens`` fields')."""
    from allennlp.data import Batch

    batches = []
    for start in range(0, len(instances), batch_size):
        chunk = instances[start : start + batch_size]
        for instance in chunk:
            reader.apply_token_indexers(instance)
        batch = Batch(chunk)
        batch.index_instances(vocab)
        batches.append((batch.as_tensor_dict(), sum(len(instance["tokens"].tokens) for instance in chunk)))
    return batches


@contextmanager
def json_temp_file(payload: object) -> Iterator[str]:
    """The path of a temporary JSON file holding ``payload`` (for the worker subprocesses to read),
    removed on leaving the block."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(payload, handle)
    try:
        yield handle.name
    finally:
        os.remove(handle.name)


def save_results(json_path: Optional[str], results: object) -> None:
    """Writes ``results`` as indented JSON to ``json_path`` (the ``--json`` option), if one is given."""
    if json_path:
        with open(json_path, "w") as handle:
            json.dump(results, handle, indent=2)


def append_result(json_path: Optional[str], result: Dict[str, Any]) -> None:
    """Prints ``result`` as one JSON line, and appends that line to ``json_path`` (``--json``), if given."""
    print(json.dumps(result))
    if json_path:
        with open(json_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(result) + "\n")


def print_profile(steps: Callable[[], None]) -> None:
    """torch.profiler's top operators by their own CPU time over ``steps`` (``--profile``)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        steps()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


def report_steps(
    args: argparse.Namespace, result: Dict[str, Any], step: Callable[[Any], Any], profiled: Sequence[Any]
) -> None:
    """Prints and appends ``result`` (``append_result``, ``args.json``); with ``args.profile``, torch.profiler's
    top operators over ``step`` on each of ``profiled``."""
    append_result(args.json, result)
    if args.profile:

        def steps() -> None:
            for item in profiled:
                step(item)

        print_profile(steps)


def report_rows(
    rows: Iterable[Dict[str, Any]], describe: Callable[[Dict[str, Any]], str], json_path: Optional[str]
) -> List[Dict[str, Any]]:
    """Prints each row's line as soon as it is measured (``rows`` may be a generator, so a long
    benchmark shows its progress), then writes all of them to ``json_path`` (``--json``), if given."""
    measured = []
    for row in rows:
        measured.append(row)
        print(describe(row), flush=True)
    save_results(json_path, measured)
    return measured


def environment_without_thread_settings() -> Dict[str, str]:
    """This process's environment less ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS``: a command started
    with it runs at its own thread defaults, as a user's would."""
    return {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def add_worker_options(parser: argparse.ArgumentParser, workers: Sequence[str]) -> None:
    """The hidden options that :func:`run_worker` starts a worker with (``workers``: the ``--worker``
    choices); the script also needs ``--batch-size`` and ``--threads``."""
    parser.add_argument("--worker", choices=workers, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--sentences-file", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)


def run_worker(
    script: str, worker: str, model_dir: str, sentences_file: str, args: argparse.Namespace, output: str
) -> dict:
    """Runs ``script --worker WORKER`` on the model in ``model_dir`` and the JSON ``sentences_file``
    with the run's ``--batch-size`` and ``--threads``, in a process of its own (so that its peak
    memory and threads are its own); returns the JSON object the worker prints last."""
    command = [sys.executable, script, "--worker", worker, "--model-dir", model_dir, "--sentences-file", sentences_file]
    command += ["--batch-size", str(args.batch_size), "--threads", str(args.threads), "--output", output]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])
