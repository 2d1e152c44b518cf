"""allennlp-models 2.10.1 beside our plugin: making it importable, and the list of registered names.

Most AllenNLP users have allennlp-models installed, and ``allennlp`` imports every module of it
before the plugins listed in ``.allennlp_plugins``: a name we register that AllenNLP or
allennlp-models registers too stops every command (``ConfigurationError: Cannot register ...``).
``tests/allennlp_registrations.tsv`` lists every name both register, so the fast tests check
ours without installing anything. Regenerate it (installs with pip, see below) with

    .venv/bin/python -m tests.allennlp_models_support --write

``install_allennlp_models`` puts the allennlp-models 2.10.1 wheel into a folder with
``pip install --no-deps --target`` (our virtualenv already has AllenNLP, torch, nltk, spaCy),
plus the small pure-Python packages that its modules import when they are loaded
(``LOAD_TIME_REQUIREMENTS``: without any of them ``allennlp`` logs "Plugin allennlp_models
could not be loaded" and silently skips every module after the one that failed, so a
collision there would go unseen). ``datasets``, which allennlp-models also requires, is only
imported inside functions and is not installed.
"""

import argparse
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
REGISTRATIONS_FILE = Path(__file__).resolve().parent / "allennlp_registrations.tsv"

ALLENNLP_MODELS = "allennlp-models==2.10.1"
LOAD_TIME_REQUIREMENTS = (
    "conllu==4.4.2",  # allennlp_models.structured_prediction (the version allennlp-models pins)
    "word2number==1.1",  # allennlp_models.rc
    "ftfy==6.3.1",  # allennlp_models.generation
    "wcwidth",  # ftfy
    "py-rouge==1.1",  # allennlp_models.rc.tools (the version allennlp-models pins)
    "setuptools<81",  # py-rouge imports pkg_resources, which newer setuptools no longer has
)
#: Set to a folder (or several, separated like PATH) where these are already installed to skip pip.
PATH_VARIABLE = "ELMO_TASKS_ALLENNLP_MODELS_PATH"
#: Set to a checkout of allennlp-models v2.10.1 (``git clone --branch v2.10.1``) to run its own config tests
#: (``tests/training_config_test.py`` with ``test_fixtures/`` and ``training_config/``, which the wheel lacks).
SOURCE_VARIABLE = "ELMO_TASKS_ALLENNLP_MODELS_SOURCE"

# (source, registry, name, registered class); registry and class as "module.QualifiedName"
Registration = Tuple[str, str, str, str]


def install_allennlp_models(target: Path) -> Optional[str]:
    """Install allennlp-models 2.10.1 and its load-time requirements into ``target``.

    Returns None on success, else why it failed (pip's last lines), so that a test can skip
    with the reason where PyPI cannot be reached.
    """
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target)]
    command += [ALLENNLP_MODELS, *LOAD_TIME_REQUIREMENTS]
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "pip install timed out after 600 s"
    if completed.returncode != 0:
        lines = (completed.stderr or completed.stdout).strip().splitlines()
        return "pip install failed: " + " | ".join(lines[-3:])
    return None


def environment_with(python_path: str) -> Dict[str, str]:
    """``os.environ`` with ``python_path`` in front of ``PYTHONPATH`` and one thread."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env["PYTHONPATH"] = os.pathsep.join(part for part in (python_path, env.get("PYTHONPATH", "")) if part)
    return env


def _qualified(something: type) -> str:
    return f"{something.__module__}.{something.__qualname__}"


def current_registrations() -> Set[Tuple[str, str, str]]:
    """(registry, name, class) of every name registered in this process."""
    from allennlp.common.registrable import Registrable

    return {
        (_qualified(base), name, _qualified(registered))
        for base, names in Registrable._registry.items()
        for name, (registered, _constructor) in names.items()
    }


def import_allennlp_like_the_cli() -> None:
    """Every AllenNLP module ``allennlp`` itself imports before it reads plugins."""
    from allennlp.common.util import import_module_and_submodules

    import_module_and_submodules("allennlp", exclude={"allennlp.sanity_checks", "allennlp.tools"})


def import_every_module(package_name: str) -> Dict[str, str]:
    """Import every module of a package one by one; returns ``{module: error}`` for those that fail."""
    package = importlib.import_module(package_name)
    failures: Dict[str, str] = {}
    for info in pkgutil.walk_packages(package.__path__, package_name + "."):
        try:
            importlib.import_module(info.name)
        except Exception as error:  # noqa: BLE001  (reported, not hidden)
            failures[info.name] = f"{type(error).__name__}: {error}"
    return failures


def snapshot() -> dict:
    """AllenNLP's registrations, then allennlp-models' (run where allennlp_models is importable)."""
    import_allennlp_like_the_cli()
    core = current_registrations()
    failures = import_every_module("allennlp_models")
    models = current_registrations() - core
    return {"allennlp": sorted(core), "allennlp_models": sorted(models), "failures": failures}


def read_registrations(path: Path = REGISTRATIONS_FILE) -> List[Registration]:
    """The rows of the registrations file (comment lines start with ``#``)."""
    rows = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            source, registry, name, registered = line.split("\t")
            rows.append((source, registry, name, registered))
    return rows


def write_registrations(data: dict, path: Path = REGISTRATIONS_FILE) -> None:
    import allennlp

    header = [
        f"# Every name registered by AllenNLP {allennlp.__version__} (all its modules, as `allennlp` imports them)",
        f"# and by {ALLENNLP_MODELS} (every module), one per line: source, registry, name, registered class.",
        "# Written by `.venv/bin/python -m tests.allennlp_models_support --write` (see that module); read by",
        "# tests/test_allennlp_models_coexistence.py, which checks that none of our names is among them.",
    ]
    rows = [("allennlp", *row) for row in data["allennlp"]] + [
        ("allennlp-models", *row) for row in data["allennlp_models"]
    ]
    path.write_text("\n".join(header + ["\t".join(row) for row in rows]) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help=f"install and rewrite {REGISTRATIONS_FILE.name}")
    action.add_argument("--snapshot", action="store_true", help="print the registrations as JSON (internal)")
    args = parser.parse_args()
    if args.snapshot:
        print(json.dumps(snapshot()))
        return
    with tempfile.TemporaryDirectory() as folder:
        python_path = os.environ.get(PATH_VARIABLE) or folder
        if not os.environ.get(PATH_VARIABLE):
            problem = install_allennlp_models(Path(folder))
            if problem:
                sys.exit(problem)
        completed = subprocess.run(
            [sys.executable, "-m", "tests.allennlp_models_support", "--snapshot"],
            cwd=tempfile.gettempdir(),  # no .allennlp_plugins there: our plugin stays out
            env=environment_with(os.pathsep.join([python_path, str(ROOT)])),
            capture_output=True,
            text=True,
            check=True,
        )
    data = json.loads(completed.stdout.strip().splitlines()[-1])
    if data["failures"]:
        sys.exit(f"modules of allennlp-models failed to import, the list would be incomplete: {data['failures']}")
    if any(registered.startswith("elmo_tasks.") for _, _, registered in data["allennlp"] + data["allennlp_models"]):
        sys.exit("our plugin was loaded while listing the others' registrations")
    write_registrations(data)
    print(
        f"wrote {REGISTRATIONS_FILE}: {len(data['allennlp'])} AllenNLP and "
        f"{len(data['allennlp_models'])} allennlp-models registrations"
    )


if __name__ == "__main__":
    main()
