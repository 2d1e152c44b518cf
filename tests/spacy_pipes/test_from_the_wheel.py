"""The spaCy components as a user who installs the wheel meets them (issue 57): the wheel of this
checkout, built with no network, installed alone into a fresh virtual environment, used from a folder
outside the checkout with no import of ours first.

The environment gets its dependencies from the Python running the tests through a ``.pth`` file that
lists that Python's site-packages as a plain path: a path line adds the folder to ``sys.path`` after the
environment's own site-packages and does not process the ``.pth`` files inside it, so our editable
install there (its import finder) stays off, and the environment's copy of elmo_tasks comes first.
The tests check that it does: a checkout that leaks in fails them.

Covered: ``elmo_ner`` on the shipped NER model (``elmo_tasks:pretrained/ner``), whose entities equal
``elmo-tasks predict`` with the ``ner`` predictor on the same words, and ``elmo`` on the shipped biLM;
both through ``nlp.to_disk`` / ``spacy.load`` and ``nlp.pipe(n_process=2)``. ``elmo_srl``,
``elmo_coref`` and ``elmo_sst`` join when their tasks ship a model (elmo_tasks/pretrained).
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
from pathlib import Path
from typing import Any, Dict, List

import numpy
import pytest
import spacy

from tests.conftest import ROOT
from tests.spacy_pipes.conftest import TEXTS
from tests.spacy_pipes.test_pipeline_use import FACTORIES

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

#: The user's program, run in the new environment: ``argv[1]`` the texts (JSON), ``argv[2]`` a folder for
#: the saved pipeline, ``argv[3]`` the file it writes what it found to.
USERS_PROGRAM = r"""
import importlib.metadata, json, sys
import spacy

texts, saved, found_file = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
nlp = spacy.blank("en")
nlp.add_pipe("elmo_ner", config={"model": "elmo_tasks:pretrained/ner"})
nlp.add_pipe("elmo")

def annotations(doc):
    return {
        "words": [token.text for token in doc if not token.is_space],
        "ents": [[ent.start_char, ent.end_char, ent.label_] for ent in doc.ents],
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


def _user_environment() -> Dict[str, str]:
    """This process's environment as a user's shell has it: none of our variables, no PYTHONPATH, one
    torch thread per process (two trainings share this machine's two cores)."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ELMO_TASKS_", "PYTHON")) and key != "VIRTUAL_ENV"
    }
    return {**environment, "OMP_NUM_THREADS": "1", "PYTHONNOUSERSITE": "1"}


def _run(command: List[str], cwd: Path) -> None:
    """``command`` run to its end; the test fails with the end of its output unless it exits 0."""
    done = subprocess.run(
        command, cwd=cwd, env=_user_environment(), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


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


@pytest.fixture(scope="module")
def users_program(environment, outside) -> Dict[str, Any]:
    """What :data:`USERS_PROGRAM` found, run in the new environment."""
    found_file = outside / "found.json"
    arguments = [json.dumps(WHEEL_TEXTS), str(outside / "pipeline"), str(found_file)]
    _run([str(environment), "-c", USERS_PROGRAM, *arguments], outside)
    return json.loads(found_file.read_text(encoding="utf-8"))


def _installed_in(path: str, python: Path) -> bool:
    """Whether ``path`` lies in the virtual environment of ``python`` (its ``bin/python``)."""
    return Path(path).resolve().is_relative_to(python.parent.parent.resolve())


def test_the_wheel_holds_the_package_and_its_data(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for needed in [
            "elmo_tasks/pretrained/ner/model.tar.gz",  # the shipped NER model, with its card and record
            "elmo_tasks/pretrained/ner/MODEL_CARD.md",
            "elmo_tasks/pretrained/ner/shipped.json",
            "elmo_tasks/pretrained/bilm_small/options.json",  # the small biLM the NER model names
            "elmo_tasks/pretrained/bilm_small/weights.hdf5",
            "elmo_tasks/pretrained/bilm_small/pos_tagger.npz",
            "elmo_tasks/experiments/common.libsonnet",  # the jsonnet blocks the experiments import
            "elmo_tasks/reproduction/paper_recipe/ner.toml",
            "elmo_tasks/demo/static/demo.js",
        ]:
            assert needed in names
        assert sorted(set(_checkout_package_files()) - names) == []  # every file of the package, data included
        shipped_ner = archive.read("elmo_tasks/pretrained/ner/model.tar.gz")
        [entry_points_file] = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        entry_points = configparser.ConfigParser()
        entry_points.read_string(archive.read(entry_points_file).decode("utf-8"))
    expected_ner = (ROOT / "elmo_tasks/pretrained/ner/model.tar.gz").read_bytes()
    assert hashlib.sha256(shipped_ner).hexdigest() == hashlib.sha256(expected_ner).hexdigest()
    assert dict(entry_points["spacy_factories"]) == FACTORIES
    assert entry_points["console_scripts"]["elmo-tasks"] == "elmo_tasks.__main__:main"


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


def test_a_saved_pipeline_loads_and_gives_the_same(users_program, outside):
    config = (outside / "pipeline" / "config.cfg").read_text(encoding="utf-8")
    assert f'model = "{SHIPPED_NER}"' in config  # the model's name, not a path of the environment
    assert users_program["loaded_pipes"] == ["elmo_ner", "elmo"]
    _assert_same(users_program["loaded"], users_program["one_at_a_time"])


def test_two_worker_processes_give_the_same(users_program):
    _assert_same(users_program["two_processes"], users_program["one_at_a_time"])


def _assert_same(found: List[Dict[str, Any]], expected: List[Dict[str, Any]]) -> None:
    """The same words and entities; ELMo equal but for the last bits, which depend on the batch."""
    assert [doc["words"] for doc in found] == [doc["words"] for doc in expected]
    assert _entities(found) == _entities(expected)
    for doc, expected_doc in zip(found, expected, strict=True):
        numpy.testing.assert_allclose(doc["tensor"], expected_doc["tensor"], atol=1e-5)


def test_the_entities_are_elmo_tasks_predicts_on_the_same_words(users_program, environment, outside):
    inputs, outputs = outside / "sentences.jsonl", outside / "predicted.jsonl"
    inputs.write_text("".join(json.dumps({"sentence": text}) + "\n" for text in WHEEL_TEXTS), encoding="utf-8")
    command = [str(environment.parent / "elmo-tasks"), "predict", SHIPPED_NER, str(inputs)]
    _run([*command, "--predictor", "ner", "--output-file", str(outputs), "--silent"], outside)
    predicted = [json.loads(line) for line in outputs.read_text(encoding="utf-8").splitlines()]
    assert [output["words"] for output in predicted] == [doc["words"] for doc in users_program["one_at_a_time"]]
    expected = [[[e["char_start"], e["char_end"], e["type"]] for e in output["entities"]] for output in predicted]
    assert _entities(users_program["one_at_a_time"]) == expected
    assert sum(map(len, expected)) >= 5  # the comparison compares something


def test_elmo_from_the_wheel_equals_elmo_from_the_checkout(users_program):
    """The installed package's shipped biLM is the checkout's: the same vectors, token by token."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    for text, found in zip(WHEEL_TEXTS, users_program["one_at_a_time"], strict=True):
        doc = nlp(text)
        assert doc.tensor.shape == (len(doc), 256)
        numpy.testing.assert_allclose(found["tensor"], doc.tensor, atol=1e-5)
