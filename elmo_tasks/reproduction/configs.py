"""What a run's settings resolve to: its environment, data files, resolved config and the biLM it reads.

Two runs with the same resolved config (less its seeds), data, environment and biLM weights train the
same model; the fingerprints here are how records say so.
"""

import hashlib
import json
import os
from typing import Any, Dict, List, Optional

from elmo_tasks.reproduction.allennlp_runs import ROOT, RunFailed
from elmo_tasks.reproduction.shown_paths import DATA_ROOT_SHOWN, data_root, with_data_root_named
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.tasks.official_files import found_data_path

# Set in the caller's environment, these change a run, so the recorded commands show them.
PASSED_ON = ("ELMO_OPTIONS", "ELMO_WEIGHTS", "OMP_NUM_THREADS", "ELMO_TASKS_SRL_DATASET", "ELMO_TASKS_FOLD")
# Of those, the ones that make a finished run unusable for another invocation (another biLM).
IDENTIFYING = ("ELMO_OPTIONS", "ELMO_WEIGHTS")
# What a run's config sets besides what it trains: its seeds (a run's seed is part of its name, not its settings).
SEED_KEYS = ("random_seed", "numpy_seed", "pytorch_seed")


def run_env(data: str, seed: int, extra: Dict[str, str]) -> Dict[str, str]:
    """The environment variables a run's commands get (and show): the passed-on ones, ``extra``, data and seed."""
    passed = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    return {**passed, **extra, "ELMO_TASKS_DATA": data, "ELMO_TASKS_SEED": str(seed)}


def data_paths(task: str, env: Dict[str, str]) -> Dict[str, str]:
    """The libsonnet's ``data`` (train, validation, test... files), evaluated with every environment
    variable as an external variable (as allennlp passes them), the run's settings in ``env`` and,
    for variables still unset, the plugin's defaults (elmo_tasks/config_defaults.py)."""
    import _jsonnet

    from elmo_tasks.config_defaults import DEFAULTS

    ext_vars = {**DEFAULTS, **os.environ, **env}
    snippet = f"(import '{TASKS[task].libsonnet}').data"
    return json.loads(_jsonnet.evaluate_snippet("reproduce.py", snippet, ext_vars=ext_vars, jpathdir=[str(ROOT)]))


def missing_data_files(task: str, env: Dict[str, str]) -> List[str]:
    """The files (or folders) of the libsonnet's ``data`` that do not exist, seen from the repository
    root, where the runs' commands start, in any form the readers accept (plain or ``.gz``, CoNLL-2012's
    per-document folders); path suffixes (``#train``, ``#sample=P``) are not part of a name."""
    paths = {path.split("#")[0] for path in data_paths(task, env).values() if isinstance(path, str) and path}
    return sorted(path for path in paths if found_data_path(str(ROOT / path)) is None)


def files_to_evaluate(task: str, env: Dict[str, str]) -> Dict[str, str]:
    """``name -> file`` of every ``test*`` entry of the libsonnet's ``data``."""
    return {name: path for name, path in data_paths(task, env).items() if name.startswith("test")}


def resolved_config(config: str, data: str, overrides: Dict[str, Any], env: Dict[str, str]) -> Dict[str, Any]:
    """The config that `allennlp train CONFIG -o OVERRIDES` resolves today (what it writes to config.json),
    for seed 0."""
    from allennlp.common import Params

    from elmo_tasks.config_defaults import DEFAULTS

    ext_vars = {**DEFAULTS, **os.environ, **run_env(data, 0, env)}
    try:
        params = Params.from_file(str(ROOT / config), params_overrides=json.dumps(overrides), ext_vars=ext_vars)
    except Exception as error:  # a missing file, a jsonnet error, an override of a wrong type: this run fails
        raise RunFailed(f"cannot resolve {config} with overrides {json.dumps(overrides)}: {error}") from error
    return params.as_dict(quiet=True)


def config_value(config: str, data: str, dotted: str) -> Any:
    """One value of an experiment config (e.g. ``trainer.num_epochs``), evaluated for a data mode."""
    node = resolved_config(config, data, {}, {})
    for part in dotted.split("."):
        node = node[part]
    return node


def config_fingerprint(config: Dict[str, Any], root: Optional[str] = None) -> str:
    """The start of the sha256 of a resolved config without its seeds: two runs with the same fingerprint
    train the same model whatever their seeds; an edit to a config file changes it. Its paths in the data
    folder count from that folder (``paths_from_data_root``)."""
    unseeded = {key: value for key, value in config.items() if key not in SEED_KEYS}
    named = with_data_root_named(json.dumps(unseeded, sort_keys=True, ensure_ascii=False), root)
    return hashlib.sha256(named.encode("utf-8")).hexdigest()[:16]


def paths_from_data_root(value: Any, root: Optional[str] = None) -> Any:
    """``value`` (a config, or any JSON value) with its paths in the data folder (``root``, default
    ELMO_TASKS_SHARED_DATA; or the committed records' ``.../shared/data``) written from
    ``$ELMO_TASKS_SHARED_DATA``, as the cards show them (:func:`shown_paths.with_data_root_named`).

    Where a reader keeps the data is not part of what a run trains: without this, the committed records,
    made with the data at ``../shared/data``, would be other runs for a reader whose data lies elsewhere
    (or who gives the same folder as an absolute path), and the harness would train them all again."""
    return json.loads(with_data_root_named(json.dumps(value, ensure_ascii=False), root))


def in_data_root(path: str) -> str:
    """The file that a path written from ``$ELMO_TASKS_SHARED_DATA`` names here; any other path as it is."""
    if path.startswith(DATA_ROOT_SHOWN):
        return data_root().rstrip("/") + "/" + path[len(DATA_ROOT_SHOWN) :]
    return path


def bilm_weights_sha256() -> str:
    """The start of the sha256 of the weights file ELMo runs read (ELMO_WEIGHTS or the shipped biLM).

    The shipped biLM is replaced in place when a better one is trained, under the same name, so a
    record names its biLM by content: a finished ELMo run is reused only with the same weights.
    """
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.config_defaults import DEFAULTS

    path = resolve_bilm_file(os.environ.get("ELMO_WEIGHTS", DEFAULTS["ELMO_WEIGHTS"]))
    if not os.path.isfile(path):
        raise RunFailed(f"ELMO_WEIGHTS names {path}, which is not a file: set it to a biLM's weights.hdf5")
    digest = hashlib.sha256()
    with open(path, "rb") as weights:
        for block in iter(lambda: weights.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]
