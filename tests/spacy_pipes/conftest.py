"""What the spaCy components' tests share: untrained task archives built once per session (in seconds,
from the fixtures and the tiny test biLM, as tests/conftest.py's ``untrained_archive`` builds them),
the task predictors on them, and a blank English pipeline per component.

Untrained models predict nonsense, but varied nonsense (entities of every type, overlapping mentions),
which is what the tests compare: the components' outputs with the predictors' on the same words.
"""

from pathlib import Path
from typing import Callable, Dict

import pytest
import spacy
import torch
from allennlp.predictors import Predictor

from tests.conftest import untrained_archive

#: Every component, as the package's ``spacy_factories`` entry points name its factory (setup.cfg).
FACTORIES = {
    "elmo": "elmo_tasks.spacy_pipes.elmo:make_elmo",
    "elmo_ner": "elmo_tasks.spacy_pipes.ner:make_elmo_ner",
    "elmo_srl": "elmo_tasks.spacy_pipes.srl:make_elmo_srl",
    "elmo_coref": "elmo_tasks.spacy_pipes.coref:make_elmo_coref",
    "elmo_sst": "elmo_tasks.spacy_pipes.sst:make_elmo_sst",
}

#: component -> (the experiment whose untrained model it runs, the task predictor)
TASKS = {
    "elmo_ner": ("ner_elmo", "ner"),
    "elmo_srl": ("srl_elmo", "srl"),
    "elmo_coref": ("coref_elmo", "coref"),
    "elmo_sst": ("sst5_elmo", "sst5"),
}

#: The seed each untrained model is built with: one whose nonsense has something in it (entities, roles,
#: a cluster), so that comparing it compares something.
SEEDS = {"ner_elmo": 1}

TEXTS = [
    "Marta Velkin visited Port Elby on Monday. She met John Smith there, and he liked her.",
    "Shares of Pellon Group fell.",
    "The cat chased the mouse  across the\n\nkitchen, and the dog barked!",
    "A gorgeous, witty film.",
]


@pytest.fixture(scope="session")
def archive(tmp_path_factory) -> Callable[[str], Path]:
    """``archive(experiment)``: that experiment's untrained ``model.tar.gz``, built on first use."""
    built: Dict[str, Path] = {}

    def build(experiment: str) -> Path:
        if experiment not in built:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(SEEDS.get(experiment, 0))
                built[experiment] = untrained_archive(experiment, tmp_path_factory.mktemp(experiment))
        return built[experiment]

    return build


@pytest.fixture(scope="session")
def predictor(archive) -> Callable[[str], Predictor]:
    """``predictor(component)``: the task predictor on the archive the component's tests use."""
    loaded: Dict[str, Predictor] = {}

    def load(component: str) -> Predictor:
        if component not in loaded:
            experiment, name = TASKS[component]
            loaded[component] = Predictor.from_path(str(archive(experiment)), name)
        return loaded[component]

    return load


@pytest.fixture(scope="session")
def blank_with(archive) -> Callable[..., spacy.language.Language]:
    """``blank_with(component, sentencizer=False)``: ``spacy.blank("en")`` with the component on its test
    archive (after a sentencizer, if asked), built once per session."""
    built: Dict[tuple, spacy.language.Language] = {}

    def build(component: str, sentencizer: bool = False) -> spacy.language.Language:
        if (component, sentencizer) not in built:
            nlp = spacy.blank("en")
            if sentencizer:
                nlp.add_pipe("sentencizer")
            nlp.add_pipe(component, config={"model": str(archive(TASKS[component][0]))})
            built[component, sentencizer] = nlp
        return built[component, sentencizer]

    return build
