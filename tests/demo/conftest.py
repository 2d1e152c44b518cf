"""The demo's test fixtures: six tiny ELMo archives trained on the bundled fixtures, once per session,
one demo server on 127.0.0.1 serving them (plus an untrained SST-5 baseline, for the page of a model
without ELMo), and headless Chromium driven by Playwright.

The archives are trained for one epoch on a few fixture examples with shrunk sizes (about 10 s of
CPU for the six): the tests check what the demo draws, not how good the models are. The browser is
the system Chromium (Debian's ``chromium`` package, which ``.ci/run`` installs); Playwright only
drives it, and downloads nothing. Without it the browser tests are skipped, except on CI, where
they fail.
"""

import json
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from elmo_tasks.demo.app import create_app
from elmo_tasks.demo.bilm_neighbours import BilmNeighbours, load_neighbours, spacy_tokenizer
from elmo_tasks.demo.loaded_models import LoadedModel, load_models
from elmo_tasks.demo.server import DemoServer
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE, run_allennlp, untrained_archive
from tests.tasks.snli.test_snli_model import TINY_SNLI
from tests.tasks.sst.test_sst_model import TINY_SST

# task -> (experiment, overrides): one epoch on a few fixture examples, tiny widths.
TINY_RUNS = {
    "ner": (
        "ner_elmo",
        {
            "model.encoder.hidden_sizes": [8, 8],
            "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
            "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": 8,
            "dataset_reader.max_instances": 16,
            "validation_data_path": "fixtures/ner/train.txt",  # every tag of the 16 sentences is known
        },
    ),
    "srl": ("srl_elmo", {"model.encoder.hidden_size": 8, "dataset_reader.max_instances": 16}),
    "coref": ("coref_elmo", {"dataset_reader.max_instances": 2, "validation_dataset_reader.max_instances": 1}),
    "squad": ("squad_elmo", {"dataset_reader.max_instances": 8, "validation_dataset_reader.max_instances": 4}),
    # the model tests' shrunk sizes (their epochs are overridden below)
    "snli": ("snli_elmo", TINY_SNLI),
    "sst5": ("sst5_elmo", TINY_SST),
}
TASK_NAMES = list(TINY_RUNS)
BASELINE = "sst5_baseline"


@pytest.fixture(scope="session")
def demo_archives(tmp_path_factory) -> Dict[str, Path]:
    """task -> model.tar.gz of a tiny run (its folder has ``metrics.json``), and the untrained baseline."""
    root = tmp_path_factory.mktemp("demo_runs")
    archives = {}
    for task, (experiment, overrides) in TINY_RUNS.items():
        run = root / task
        settings = json.dumps({**overrides, "trainer.num_epochs": 1})
        run_allennlp("train", f"experiments/{experiment}.jsonnet", "-s", str(run), "-o", settings)
        archives[task] = run / "model.tar.gz"
    archives[BASELINE] = untrained_archive(BASELINE, root / BASELINE)
    return archives


@pytest.fixture(scope="session")
def demo_models(demo_archives) -> List[LoadedModel]:
    """The six task models (named after their tasks) and the baseline (named with NAME=ARCHIVE)."""
    arguments = [str(demo_archives[task]) for task in TASK_NAMES] + [f"{BASELINE}={demo_archives[BASELINE]}"]
    return load_models(arguments)


@pytest.fixture(scope="session")
def neighbours() -> BilmNeighbours:
    """The biLM page's neighbours with bilm-tf's tiny test biLM, over the bundled corpus."""
    return load_neighbours(OPTIONS_FILE, WEIGHT_FILE)


@pytest.fixture(scope="session")
def demo_url(demo_models, neighbours) -> Iterator[str]:
    """A demo server on a free port of 127.0.0.1, serving every model and the biLM page."""
    server = DemoServer("127.0.0.1", 0)
    server.start(create_app(demo_models, neighbours, spacy_tokenizer()))
    yield server.url
    server.stop()


@pytest.fixture()
def page(browser):
    """A fresh page; any script error on it fails the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    errors: List[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, errors
