"""Shared test helpers: paths to fixtures and to the real data (``needs_shared``, docs/DATA.md).

Experiments in tests run with bilm-tf's tiny test biLM (fast); tests/pretrained checks the
shipped default biLM itself.

Every test starts from the same global state and leaves it as it found it (``_isolated_global_state``),
so the suite passes in any order (``make test`` runs it shuffled) and at any thread count.
"""

import logging
import os
import random
import signal
import sys
from pathlib import Path
from typing import Iterator, Optional

import numpy
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
# A suite started in the background (`make test &`, nohup) inherits SIGINT ignored, and so would every
# command a test starts; the tests that stop a command with SIGINT, as a user's Ctrl-C does, need the
# default. A caught signal is reset to the default in a child, an ignored one stays ignored.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
FIXTURES_ROOT = ROOT / "fixtures"
BILM_TF = FIXTURES_ROOT / "bilm_tf"
OPTIONS_FILE = str(BILM_TF / "options.json")
WEIGHT_FILE = str(BILM_TF / "lm_weights.hdf5")
os.environ["ELMO_OPTIONS"], os.environ["ELMO_WEIGHTS"] = OPTIONS_FILE, WEIGHT_FILE
# the team's copy of the real data sits beside the checkout (and in CI); users' default is data/
os.environ.setdefault("ELMO_TASKS_SHARED_DATA", "../shared/data")
# elmo-embed and bilm-perplexity keep freed memory for their next batch, a setting of the whole process
# that is never undone (elmo_tasks.freed_memory); tests run them in this process, which keeps glibc's
# default. tests/test_freed_memory.py runs commands with the commands' default.
os.environ.setdefault("ELMO_TASKS_FREED_MEMORY", "return")

import elmo_tasks.plugin  # noqa: E402,F401  (registers everything, and only that)
from elmo_tasks.command_start import start_command  # noqa: E402

# What every command does at its start (the remaining config defaults, one thread, safe extraction,
# one-line input errors, the drop-in switch), once: tests run commands and models in this process.
start_command()

# The real data the tests read: ELMO_TASKS_SHARED_DATA (a relative path from the root, as the experiments
# take it), and the folder that holds it, for the tests that name files as SHARED / "data" / ...
SHARED_DATA = (ROOT / os.environ["ELMO_TASKS_SHARED_DATA"]).resolve()
SHARED = SHARED_DATA.parent

needs_shared = pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason=f"no real data at ELMO_TASKS_SHARED_DATA={os.environ['ELMO_TASKS_SHARED_DATA']}"
)

# torch's global generator at the start of every test (tests that need other numbers seed it themselves).
TEST_TORCH_SEED = 0


@pytest.fixture(autouse=True)
def _isolated_global_state() -> Iterator[None]:
    """Restores, after each test, the process-wide state that tests or the code they run change.

    torch's thread count (``elmo-embed`` and ``bilm-probe`` set it, every command's start too, and a
    model test's float noise depends on it), the environment (the harness's tests, commands' defaults),
    the working directory and ``sys.path`` (AllenNLP's plugin loading appends the working directory),
    ``sys.excepthook`` (``allennlp train`` and the input-error tests replace it), the random generators
    (torch's is also seeded, so no test depends on the tests before it; the ``random`` and numpy seeds
    are pytest-randomly's), the logging setup that ``allennlp train`` replaces (it clears the root
    logger's handlers and adds its own, a file in the test's folder) and AllenNLP's registered names.
    """
    from allennlp.common.registrable import Registrable
    from allennlp.common.tqdm import logger as tqdm_logger

    threads = torch.get_num_threads()
    environment, cwd = dict(os.environ), os.getcwd()
    path, excepthook = list(sys.path), sys.excepthook
    torch_rng, python_rng, numpy_rng = torch.get_rng_state(), random.getstate(), numpy.random.get_state()
    root = logging.getLogger()
    root_level, root_handlers = root.level, _own_handlers(root)
    tqdm_handlers = _own_handlers(tqdm_logger)
    params_logger = logging.getLogger("allennlp.common.params")
    params_logger_disabled = params_logger.disabled
    registered = {base: dict(names) for base, names in Registrable._registry.items()}
    torch.manual_seed(TEST_TORCH_SEED)
    yield
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    if dict(os.environ) != environment:
        os.environ.clear()
        os.environ.update(environment)
    os.chdir(cwd)
    sys.path[:], sys.excepthook = path, excepthook
    torch.set_rng_state(torch_rng)
    random.setstate(python_rng)
    numpy.random.set_state(numpy_rng)
    root.setLevel(root_level)
    _restore_handlers(root, root_handlers)
    _restore_handlers(tqdm_logger, tqdm_handlers)
    params_logger.disabled = params_logger_disabled
    # Names registered before the test get their classes back (the ELMo drop-in swaps one); names a
    # test's first import registered stay, since the module stays imported.
    for base, names in registered.items():
        Registrable._registry[base].update(names)


def _own_handlers(logger: logging.Logger) -> list:
    """The logger's handlers, less pytest's capture handlers (pytest adds and removes those per phase)."""
    return [handler for handler in logger.handlers if not type(handler).__module__.startswith("_pytest")]


def _restore_handlers(logger: logging.Logger, saved: list) -> None:
    """Puts back the ``saved`` handlers, removing (and closing) any the test added."""
    for handler in _own_handlers(logger):
        if handler not in saved:
            logger.removeHandler(handler)
            handler.close()
    for handler in saved:
        if handler not in logger.handlers:
            logger.addHandler(handler)


def run_allennlp(*args: str, cwd: Optional[Path] = None) -> None:
    """Run an `allennlp` command in this process from the repo root (or ``cwd``), on the bundled fixtures.

    Config paths (fixtures/..., experiments/...) are relative to the repo root, as for users.
    """
    from unittest import mock

    from allennlp.commands import main

    from elmo_tasks.reproduction.allennlp_runs import logging_kept

    previous = os.getcwd()
    os.chdir(cwd or ROOT)
    try:
        with (
            mock.patch.object(sys, "argv", ["allennlp", *args]),
            mock.patch.dict(os.environ, {"ELMO_TASKS_DATA": "fixtures"}),
            logging_kept(),  # a module-scoped fixture's run would otherwise leave its handlers to later tests
        ):
            main(prog="allennlp")
    finally:
        os.chdir(previous)


def experiment_config(experiment: str, data: str, **extra_env: str) -> dict:
    """``experiments/<experiment>.jsonnet`` as a dict, with fixed stand-in values for the biLM
    files and the seed, so two variants of a task can be compared key by key."""
    from allennlp.common import Params

    env = {
        "ELMO_TASKS_DATA": data,
        "ELMO_TASKS_SHARED_DATA": "../shared/data",
        "ELMO_OPTIONS": "o.json",
        "ELMO_WEIGHTS": "w.hdf5",
        "ELMO_TASKS_SEED": "1",
        **extra_env,
    }
    return Params.from_file(str(ROOT / "experiments" / f"{experiment}.jsonnet"), ext_vars=env).as_dict()


def untrained_archive(experiment: str, directory: Path) -> Path:
    """``directory/model.tar.gz``: the model of ``experiments/<experiment>.jsonnet`` as built (not
    trained) on the first fixture sentences, archived as ``allennlp train`` does; in seconds, for
    tests of what commands do with their inputs."""
    import json

    import torch
    from allennlp.common import Params
    from allennlp.common.meta import Meta
    from allennlp.models.archival import CONFIG_NAME, META_NAME, archive_model

    from tests.tasks.experiment_case import build_fixture_model

    previous = os.getcwd()
    os.chdir(ROOT)  # the configs' data paths are relative to the repo root
    try:
        env = {**os.environ, "ELMO_TASKS_DATA": "fixtures"}
        config = Params.from_file(str(ROOT / "experiments" / f"{experiment}.jsonnet"), ext_vars=env).as_dict(quiet=True)
        model, vocab = build_fixture_model(f"{experiment}.jsonnet")
    finally:
        os.chdir(previous)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CONFIG_NAME).write_text(json.dumps(config), encoding="utf-8")
    vocab.save_to_files(str(directory / "vocabulary"))
    torch.save(model.state_dict(), directory / "best.th")
    Meta.new().to_file(directory / META_NAME)
    return Path(archive_model(directory))


@pytest.fixture(scope="session")
def browser():
    """Headless system Chromium under Playwright (nothing downloaded: ``executable_path``), one for the
    session: the demo's tests and the spaCy pictures' share it, as Playwright's sync API refuses to start a
    second one while one runs."""
    from playwright.sync_api import sync_playwright

    from tests.browser import chromium_path

    executable = chromium_path()
    playwright = sync_playwright().start()
    launched = playwright.chromium.launch(executable_path=executable, headless=True)
    yield launched
    launched.close()
    playwright.stop()
