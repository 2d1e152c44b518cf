"""The spaCy components as a user who installs the wheel meets them (issue 57): the wheel of this
checkout, built with no network, installed alone into a fresh virtual environment, used from a folder
outside the checkout with no import of ours first.

The environment gets its dependencies from the Python running the tests through a ``.pth`` file that
lists that Python's site-packages as a plain path: a path line adds the folder to ``sys.path`` after the
environment's own site-packages and does not process the ``.pth`` files inside it, so our editable
install there (its import finder) stays off, and the environment's copy of elmo_tasks comes first.
The tests check that it does: a checkout that leaks in fails them.

Covered: every shipped model that has a component. The installed package lists its shipped models
(its catalogue, elmo_tasks/pretrained/catalogue.py) and says which component takes each
(elmo_tasks/spacy_pipes/archives.py); the user's program adds each such component with
``config={"model": "elmo_tasks:pretrained/TASK"}``, then ``elmo`` on the shipped biLM. What each sets
(entities; SRL frames as ``doc.spans`` groups and ``doc._.elmo_srl``; coreference clusters as groups and
``doc._.elmo_coref``; SST-5 ``doc.cats``) must equal the installed ``elmo-tasks predict`` with the task's
predictor on the same words, and stay the same through ``nlp.to_disk`` / ``spacy.load`` and
``nlp.pipe(n_process=2)``. A task that ships a model joins with no edit here; a component whose task
ships none yet is skipped, saying so.

The regular run sees the package's own catalogue. Setting ``ELMO_TASKS_TEST_TINY_CATALOGUE=1`` runs the
tests a second time on a temporary catalogue (``ELMO_TASKS_PRETRAINED_ROOT``, passed into the user's
environment by these tests alone): the shipped NER model beside untrained SRL, coreference, SST-5 and SNLI
models built from the fixtures (tests/spacy_pipes/conftest.py's, which name the tiny test biLM of the
checkout by path), so every component's path is checked before its task ships a model, and a task with
no component (SNLI) is left out.
"""

import configparser
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy
import pytest
import spacy
from allennlp.data.dataset_readers.dataset_utils.span_utils import bio_tags_to_spans

from elmo_tasks.bilm.references import PACKAGE_ROOT
from elmo_tasks.pretrained.catalogue import (
    ARCHIVE_FILE,
    CARD_FILE,
    ROOT_VARIABLE,
    SHIPPED_FILE,
    ShippedModel,
    shipped_models,
)
from elmo_tasks.spacy_pipes.archives import COMPONENTS
from tests.conftest import ROOT
from tests.spacy_pipes.conftest import FACTORIES, TEXTS

pytestmark = pytest.mark.slow

#: What setuptools reads to build the wheel (``long_description = file: README.md``). The wheel is built
#: from a copy of them, so that no ``build/`` or ``*.egg-info`` is left in the checkout and no stale
#: ``build/lib`` of an earlier build slips into the wheel.
WHEEL_SOURCES = ("setup.cfg", "pyproject.toml", "README.md", "elmo_tasks")
#: Loading the models twice and forking two workers on a loaded 2-core machine.
COMMAND_TIMEOUT_S = 900
SHIPPED_NER = "elmo_tasks:pretrained/ner"
#: The shared texts (whitespace tokens among them) and one with entities of every CoNLL-2003 type.
WHEEL_TEXTS = [*TEXTS, "Angela Merkel flew from Berlin to Paris for talks with the European Commission on Monday."]
#: Set (to anything) to run the tests on the tiny catalogue too (the module's docstring).
TINY_CATALOGUE_VARIABLE = "ELMO_TASKS_TEST_TINY_CATALOGUE"
#: The tiny catalogue's untrained models: folder (the task's name, as shipping names it) -> (the experiment
#: built, the task's title). Beside them, a copy of the shipped NER model.
TINY_MODELS = {
    "srl": ("srl_elmo", "SRL"),
    "coref": ("coref_elmo", "Coreference"),
    "sst5": ("sst5_elmo", "SST-5"),
    "snli": ("snli_elmo", "SNLI"),  # no component takes it
}
#: Each component's task predictor -> the input key ``elmo-tasks predict`` reads the text from, and the
#: output key of the words it read.
PREDICTOR_KEYS = {
    "ner": ("sentence", "words"),
    "srl": ("sentence", "words"),
    "coref": ("document", "document"),
    "sst5": ("sentence", "tokens"),
}

#: What the installed package lists: a line of JSON, each shipped model's name, predictor and the
#: component that takes it (null where none does).
LISTING_PROGRAM = r"""
import json
from elmo_tasks.pretrained.catalogue import shipped_models
from elmo_tasks.spacy_pipes.archives import COMPONENTS

print(json.dumps([
    {
        "reference": model.reference,
        "predictor": model.facts["predictor"],
        "component": COMPONENTS.get(model.facts["predictor"]),
    }
    for model in shipped_models()
]))
"""

#: The user's program, run in the new environment: ``argv[1]`` the texts (JSON), ``argv[2]`` the components
#: to add and their models (JSON ``[[component, model], ...]``), ``argv[3]`` a folder for the saved
#: pipeline, ``argv[4]`` the file it writes what it found to.
USERS_PROGRAM = r"""
import importlib.metadata, json, sys
import spacy

texts, components, saved, found_file = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
nlp = spacy.blank("en")
for component, model in components:
    nlp.add_pipe(component, config={"model": model})
nlp.add_pipe("elmo")

def annotations(doc):
    words = [token for token in doc if not token.is_space]
    return {
        "words": [token.text for token in words],
        "word_indices": [token.i for token in words],
        "ents": [[ent.start_char, ent.end_char, ent.label_] for ent in doc.ents],
        "spans": {key: [[span.start, span.end, span.label_] for span in group] for key, group in doc.spans.items()},
        "span_attrs": {key: group.attrs for key, group in doc.spans.items()},
        "srl": doc._.get("elmo_srl"),
        "coref": doc._.get("elmo_coref"),
        "cats": doc.cats,
        "tensor": doc.tensor.tolist(),
    }

one_at_a_time = [annotations(nlp(text)) for text in texts]
nlp.to_disk(saved)
loaded = spacy.load(saved)
distribution = importlib.metadata.distribution("elmo-tasks")
found = {
    "one_at_a_time": one_at_a_time,
    "loaded": [annotations(doc) for doc in loaded.pipe(texts)],
    "loaded_pipes": loaded.pipe_names,
    "two_processes": [annotations(doc) for doc in nlp.pipe(texts, batch_size=2, n_process=2)],
    "package": sys.modules["elmo_tasks"].__file__,
    "modules": sorted(
        module.__file__ for name, module in list(sys.modules.items())
        if name.split(".")[0] == "elmo_tasks" and getattr(module, "__file__", None)
    ),
    "distribution": str(distribution.locate_file("")),
    "factories": {
        point.name: [point.value, str(point.dist.locate_file(""))]
        for point in importlib.metadata.entry_points(group="spacy_factories")
    },
}
with open(found_file, "w", encoding="utf-8") as out:
    json.dump(found, out)
"""


@dataclass(frozen=True)
class Catalogue:
    """The shipped models the user's environment sees: the package's own (``root`` None), or a test's folder."""

    name: str
    root: Optional[Path]

    def variables(self) -> Dict[str, str]:
        """What the user's environment needs to see it."""
        return {} if self.root is None else {ROOT_VARIABLE: str(self.root)}

    def models_here(self) -> List[ShippedModel]:
        """Its models, as the checkout's catalogue code reads them."""
        return shipped_models(self.root if self.root is not None else PACKAGE_ROOT / "pretrained")


def _user_environment(catalogue: Optional[Catalogue] = None) -> Dict[str, str]:
    """This process's environment as a user's shell has it: none of our variables, no PYTHONPATH, one
    torch thread per process (two trainings share this machine's two cores); a test's catalogue only
    where ``catalogue`` names one."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ELMO_TASKS_", "PYTHON")) and key != "VIRTUAL_ENV"
    }
    chosen = catalogue.variables() if catalogue is not None else {}
    return {**environment, **chosen, "OMP_NUM_THREADS": "1", "PYTHONNOUSERSITE": "1"}


def _run(command: List[str], cwd: Path, catalogue: Optional[Catalogue] = None) -> str:
    """``command``'s standard output; the test fails with the end of its output unless it exits 0."""
    done = subprocess.run(
        command,
        cwd=cwd,
        env=_user_environment(catalogue),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def _checkout_package_files() -> List[str]:
    """Every file of the package in the checkout, as the wheel names it (caches and hidden files apart,
    e.g. the ``vocabulary/.lock`` AllenNLP leaves)."""
    files = []
    for path in sorted((ROOT / "elmo_tasks").rglob("*")):
        relative = path.relative_to(ROOT)
        hidden = any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
        if path.is_file() and not hidden and path.suffix != ".pyc":
            files.append(relative.as_posix())
    return files


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of this checkout, built offline from a copy of :data:`WHEEL_SOURCES`."""
    source, built = tmp_path_factory.mktemp("wheel_source"), tmp_path_factory.mktemp("wheel")
    for name in WHEEL_SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(built), "."], source)
    [found] = built.glob("elmo_tasks-*.whl")
    return found


@pytest.fixture(scope="module")
def environment(wheel, tmp_path_factory) -> Path:
    """A new virtual environment holding the wheel alone (its ``bin/python``), with this Python's
    site-packages on its path for the dependencies."""
    folder = tmp_path_factory.mktemp("env") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(folder)], folder.parent)
    python = folder / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
    _run([*pip, "install", "--no-deps", "--no-index", str(wheel)], folder.parent)
    [site_packages] = folder.glob("lib/python*/site-packages")
    dependencies = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (site_packages / "elmo_tasks_test_dependencies.pth").write_text("\n".join(dependencies) + "\n", encoding="utf-8")
    return python


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    """A folder outside the checkout to run the user's commands in."""
    folder = tmp_path_factory.mktemp("outside")
    assert not folder.resolve().is_relative_to(ROOT)
    return folder


@pytest.fixture(
    scope="module",
    params=[
        "shipped",
        pytest.param(
            "tiny",
            marks=pytest.mark.skipif(
                not os.environ.get(TINY_CATALOGUE_VARIABLE), reason=f"set {TINY_CATALOGUE_VARIABLE}=1 to run"
            ),
        ),
    ],
)
def catalogue(request, archive, tmp_path_factory) -> Catalogue:
    """The package's shipped models, or (``tiny``) a temporary catalogue of :data:`TINY_MODELS`."""
    if request.param == "shipped":
        return Catalogue("shipped", None)
    root = tmp_path_factory.mktemp("catalogue")
    shutil.copytree(PACKAGE_ROOT / "pretrained" / "ner", root / "ner")
    for name, (experiment, title) in TINY_MODELS.items():
        (root / name).mkdir()
        shutil.copy2(archive(experiment), root / name / ARCHIVE_FILE)
        facts = {"name": name, "task": name, "task_title": title, "predictor": name}
        (root / name / SHIPPED_FILE).write_text(json.dumps(facts), encoding="utf-8")
    return Catalogue("tiny", root)


@pytest.fixture(scope="module")
def work(outside, catalogue) -> Path:
    """The user's folder for this catalogue's run, outside the checkout."""
    folder = outside / catalogue.name
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def listed(environment, work, catalogue) -> List[Dict[str, Any]]:
    """The shipped models the installed package lists (:data:`LISTING_PROGRAM`)."""
    return json.loads(_run([str(environment), "-c", LISTING_PROGRAM], work, catalogue).splitlines()[-1])


@pytest.fixture(scope="module")
def components(listed) -> Dict[str, str]:
    """component -> the shipped model it runs: every listed model that a component takes."""
    chosen: Dict[str, str] = {}
    for model in listed:
        component = model["component"]
        if component is not None:
            assert component not in chosen, f"two shipped models for {component}: {chosen[component]}, {model}"
            chosen[component] = model["reference"]
    return chosen


@pytest.fixture(scope="module")
def users_program(environment, work, catalogue, components) -> Dict[str, Any]:
    """What :data:`USERS_PROGRAM` found, run in the new environment."""
    found_file = work / "found.json"
    pipes = json.dumps([[component, model] for component, model in components.items()])
    arguments = [json.dumps(WHEEL_TEXTS), pipes, str(work / "pipeline"), str(found_file)]
    _run([str(environment), "-c", USERS_PROGRAM, *arguments], work, catalogue)
    return json.loads(found_file.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def predicted(environment, work, catalogue, components, users_program) -> Callable[[str], List[Dict[str, Any]]]:
    """``predicted(component)``: the installed ``elmo-tasks predict`` of the model ``component`` runs, one
    output per text of :data:`WHEEL_TEXTS`, on the words the component saw (checked); the test is skipped
    where no shipped model is for ``component``."""
    outputs: Dict[str, List[Dict[str, Any]]] = {}

    def predict(component: str) -> List[Dict[str, Any]]:
        if component not in components:
            pytest.skip(f"no shipped model of the {catalogue.name} catalogue is for {component}")
        if component not in outputs:
            [predictor] = [name for name, taken_by in COMPONENTS.items() if taken_by == component]
            input_key, words_key = PREDICTOR_KEYS[predictor]
            inputs, predictions = work / f"{predictor}_input.jsonl", work / f"{predictor}_predicted.jsonl"
            lines = "".join(json.dumps({input_key: text}) + "\n" for text in WHEEL_TEXTS)
            inputs.write_text(lines, encoding="utf-8")
            command = [str(environment.parent / "elmo-tasks"), "predict", components[component], str(inputs)]
            _run([*command, "--predictor", predictor, "--output-file", str(predictions), "--silent"], work, catalogue)
            found = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
            assert [output[words_key] for output in found] == [doc["words"] for doc in users_program["one_at_a_time"]]
            outputs[component] = found
        return outputs[component]

    return predict


def _installed_in(path: str, python: Path) -> bool:
    """Whether ``path`` lies in the virtual environment of ``python`` (its ``bin/python``)."""
    return Path(path).resolve().is_relative_to(python.parent.parent.resolve())


def test_the_wheel_holds_the_package_and_its_data(wheel):
    models = shipped_models(PACKAGE_ROOT / "pretrained")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for needed in [
            "elmo_tasks/pretrained/bilm_small/options.json",  # the small biLM the shipped models name
            "elmo_tasks/pretrained/bilm_small/weights.hdf5",
            "elmo_tasks/pretrained/bilm_small/pos_tagger.npz",
            "elmo_tasks/experiments/common.libsonnet",  # the jsonnet blocks the experiments import
            "elmo_tasks/reproduction/paper_recipe/ner.toml",
            "elmo_tasks/demo/static/demo.js",
            *(f"elmo_tasks/pretrained/{m.name}/{file}" for m in models for file in (CARD_FILE, SHIPPED_FILE)),
        ]:
            assert needed in names
        assert sorted(set(_checkout_package_files()) - names) == []  # every file of the package, data included
        shipped = {m.name: archive.read(f"elmo_tasks/pretrained/{m.name}/{ARCHIVE_FILE}") for m in models}
        [entry_points_file] = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        entry_points = configparser.ConfigParser()
        entry_points.read_string(archive.read(entry_points_file).decode("utf-8"))
    assert "ner" in shipped
    for model in models:  # the shipped models, byte for byte
        assert hashlib.sha256(shipped[model.name]).digest() == hashlib.sha256(model.archive.read_bytes()).digest()
    assert dict(entry_points["spacy_factories"]) == FACTORIES
    assert entry_points["console_scripts"]["elmo-tasks"] == "elmo_tasks.__main__:main"


def test_every_component_of_a_task_has_its_predictor_compared():
    assert set(PREDICTOR_KEYS) == set(COMPONENTS) and set(COMPONENTS.values()) == set(FACTORIES) - {"elmo"}


def test_the_user_gets_every_listed_model_with_a_component(listed, components, users_program, catalogue):
    expected = [(m.reference, COMPONENTS.get(m.facts["predictor"])) for m in catalogue.models_here()]
    assert [(model["reference"], model["component"]) for model in listed] == expected
    assert components.get("elmo_ner") == SHIPPED_NER
    if catalogue.root is not None:  # every component, and SNLI, which none takes, left out
        assert set(components) == set(COMPONENTS.values())
        assert ["elmo_tasks:pretrained/snli", None] in [[m["reference"], m["component"]] for m in listed]
    assert users_program["loaded_pipes"] == [*components, "elmo"]


def test_the_package_comes_from_the_new_environment_not_the_checkout(users_program, environment):
    assert _installed_in(users_program["package"], environment), users_program["package"]
    leaked = [path for path in users_program["modules"] if not _installed_in(path, environment)]
    assert leaked == [] and len(users_program["modules"]) > 10
    assert _installed_in(users_program["distribution"], environment), users_program["distribution"]
    factories = users_program["factories"]
    assert {name: factories[name][0] for name in FACTORIES} == FACTORIES
    assert all(_installed_in(factories[name][1], environment) for name in FACTORIES), factories
    script = environment.parent / "elmo-tasks"
    assert script.read_text(encoding="utf-8").splitlines()[0] == f"#!{environment}"


def _entities(found: List[Dict[str, Any]]) -> List[List[List[Any]]]:
    return [doc["ents"] for doc in found]


def test_the_shipped_ner_model_finds_entities(users_program):
    labels = {label for doc in _entities(users_program["one_at_a_time"]) for _, _, label in doc}
    assert labels >= {"PER", "LOC", "ORG"}, labels


def test_a_saved_pipeline_loads_and_gives_the_same(users_program, components, work):
    config = (work / "pipeline" / "config.cfg").read_text(encoding="utf-8")
    for model in components.values():
        assert f'model = "{model}"' in config  # the model's name, not a path of the environment
    _assert_same(users_program["loaded"], users_program["one_at_a_time"])


def test_two_worker_processes_give_the_same(users_program):
    _assert_same(users_program["two_processes"], users_program["one_at_a_time"])


def _assert_same(found: List[Dict[str, Any]], expected: List[Dict[str, Any]]) -> None:
    """The same words and annotations; class probabilities and ELMo equal but for the last bits, which
    depend on the batch."""
    exact = ("words", "ents", "spans", "span_attrs", "srl", "coref")
    assert [{key: doc[key] for key in exact} for doc in found] == [{key: doc[key] for key in exact} for doc in expected]
    for doc, expected_doc in zip(found, expected, strict=True):
        assert list(doc["cats"]) == list(expected_doc["cats"])
        assert doc["cats"] == pytest.approx(expected_doc["cats"], abs=1e-6)
        numpy.testing.assert_allclose(doc["tensor"], expected_doc["tensor"], atol=1e-5)


def test_the_entities_are_what_elmo_tasks_predicts(users_program, predicted):
    outputs = predicted("elmo_ner")
    expected = [[[e["char_start"], e["char_end"], e["type"]] for e in output["entities"]] for output in outputs]
    assert _entities(users_program["one_at_a_time"]) == expected
    assert sum(map(len, expected)) >= 5  # the comparison compares something


def test_the_srl_frames_are_what_elmo_tasks_predicts(users_program, predicted):
    outputs = predicted("elmo_srl")
    for doc, output in zip(users_program["one_at_a_time"], outputs, strict=True):
        token_index = doc["word_indices"]  # the Doc's token index of each word the predictor saw
        frames = []
        for frame in output["verbs"]:
            roles = sorted(bio_tags_to_spans(frame["tags"]), key=lambda role: role[1])
            frames.append(
                {
                    "predicate": token_index[frame["index"]],
                    "verb": frame["verb"],
                    "arguments": [[label, token_index[start], token_index[end] + 1] for label, (start, end) in roles],
                    "description": frame["description"],
                }
            )
        assert doc["srl"] == frames
        groups = {key: spans for key, spans in doc["spans"].items() if key.startswith("srl_")}
        assert groups == {
            f"srl_{k}": [[start, end, label] for label, start, end in frame["arguments"]]
            for k, frame in enumerate(frames)
        }
        assert [doc["span_attrs"][f"srl_{k}"] for k in range(len(frames))] == [
            {"predicate": frame["predicate"], "verb": frame["verb"]} for frame in frames
        ]
    assert any(len(frame["arguments"]) > 1 for doc in users_program["one_at_a_time"] for frame in doc["srl"])


def test_the_coreference_clusters_are_what_elmo_tasks_predicts(users_program, predicted):
    outputs = predicted("elmo_coref")
    for doc, output in zip(users_program["one_at_a_time"], outputs, strict=True):
        token_index = doc["word_indices"]
        clusters = [
            [[token_index[start], token_index[end] + 1] for start, end in cluster] for cluster in output["clusters"]
        ]
        assert doc["coref"] == clusters
        groups = {key: spans for key, spans in doc["spans"].items() if key.startswith("coref_")}
        assert groups == {
            f"coref_{k}": [[start, end, str(k)] for start, end in cluster] for k, cluster in enumerate(clusters)
        }
        every_mention = sorted([start, end, str(k)] for k, cluster in enumerate(clusters) for start, end in cluster)
        assert sorted(doc["spans"]["coref"]) == every_mention
    assert any(doc["coref"] for doc in users_program["one_at_a_time"])


def test_the_sentiment_is_what_elmo_tasks_predicts(users_program, predicted):
    outputs = predicted("elmo_sst")
    for doc, output in zip(users_program["one_at_a_time"], outputs, strict=True):
        cats, expected = doc["cats"], output["label_probs"]
        assert list(cats) == list(expected) and cats == pytest.approx(expected, abs=1e-6)
        assert max(cats, key=cats.get) == output["label"]


def test_elmo_from_the_wheel_equals_elmo_from_the_checkout(users_program):
    """The installed package's shipped biLM is the checkout's: the same vectors, token by token."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    for text, found in zip(WHEEL_TEXTS, users_program["one_at_a_time"], strict=True):
        doc = nlp(text)
        assert doc.tensor.shape == (len(doc), 256)
        numpy.testing.assert_allclose(found["tensor"], doc.tensor, atol=1e-5)
