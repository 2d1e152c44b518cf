"""The task experiments take their shared blocks from elmo_tasks/experiments/common.libsonnet, and Python code spells
the experiments' shared names as common.libsonnet does.

A block copied into a task instead drifts away from the others unnoticed (a character embedding without
its ``vocab_namespace`` was a real bug in two tasks), so the first test evaluates every task with a
common.libsonnet whose shared functions tag what they return, and requires the tag on every task's trainer
and loaders. The others tie the names that configs, elmo_tasks/reproduction/task_table.py and tests must agree on
(where the ELMo embedder sits, the mixing-weight regex, one-layer weights sized by the biLM) to one
definition. Resolving a config takes milliseconds; nothing here trains.
"""

import json
import re
from pathlib import Path
from typing import Any, Dict, Tuple

import _jsonnet
import pytest

from elmo_tasks.config_defaults import (
    DEFAULTS,
    ELMO_EMBEDDER_PATH,
    MIXING_WEIGHTS_REGEX,
    bilm_layer_count,
    token_layer_only,
    top_layer_only,
)
from elmo_tasks.experiments import LIBRARY
from elmo_tasks.modules import ElmoTokenEmbedder
from elmo_tasks.reproduction.task_table import TASKS as REPRODUCED_TASKS
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE

EXPERIMENTS = LIBRARY  # the blocks the experiments import (elmo_tasks/experiments)
TASKS = ["coref", "ner", "snli", "squad", "srl", "sst5"]
COMMON = EXPERIMENTS / "common.libsonnet"
TAG = "shared_block_from_common"

# common.libsonnet with each shared function's result tagged. The signatures repeat common.libsonnet's: a
# change there makes this evaluation fail with jsonnet's message, and this wrapper is updated with it.
TAGGING = """
+ {
  trainer(optimizer, num_epochs, patience, validation_metric, grad_norm=null)::
    super.trainer(optimizer, num_epochs, patience, validation_metric, grad_norm) + { %(tag)s: 'trainer' },
  bucket_loaders(batch_size, validation_batch_size=batch_size, sorting_keys=null)::
    local loaders = super.bucket_loaders(batch_size, validation_batch_size, sorting_keys);
    { [name]: loaders[name] + { %(tag)s: 'bucket_loaders' } for name in std.objectFields(loaders) },
  unbucketed_loaders(batch_size)::
    local loaders = super.unbucketed_loaders(batch_size);
    { [name]: loaders[name] + { %(tag)s: 'unbucketed_loaders' } for name in std.objectFields(loaders) },
}
""" % {"tag": TAG}


def _env(data: str) -> Dict[str, str]:
    return {
        **DEFAULTS,
        "ELMO_OPTIONS": "o.json",
        "ELMO_WEIGHTS": "w.hdf5",
        "ELMO_TASKS_SEED": "1",
        "ELMO_TASKS_DATA": data,
    }


def _evaluate(snippet: str, data: str, tagged: bool = False) -> Any:
    def imports(directory: str, name: str) -> Tuple[str, bytes]:
        path = Path(directory) / name  # the experiments import each other by name
        text = path.read_text(encoding="utf-8")
        if tagged and path.resolve() == COMMON.resolve():
            text = f"({text})\n{TAGGING}"
        return str(path), text.encode("utf-8")

    return json.loads(
        _jsonnet.evaluate_snippet(
            str(EXPERIMENTS / "snippet.jsonnet"), snippet, ext_vars=_env(data), import_callback=imports
        )
    )


def _task_config(task: str, elmo: bool, data: str, tagged: bool = False) -> Dict[str, Any]:
    return _evaluate(f"(import '{task}.libsonnet').config(elmo={str(elmo).lower()})", data, tagged)


def _without_tags(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_tags(item) for key, item in value.items() if key != TAG}
    if isinstance(value, list):
        return [_without_tags(item) for item in value]
    return value


def _at(config: Dict[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        config = config[key]
    return config


@pytest.mark.parametrize("data", ["fixtures", "full"])
@pytest.mark.parametrize("elmo", [False, True])
@pytest.mark.parametrize("task", TASKS)
def test_every_task_takes_its_trainer_and_loaders_from_common(task, elmo, data):
    tagged = _task_config(task, elmo, data, tagged=True)
    assert tagged["trainer"].get(TAG) == "trainer", f"{task}.libsonnet: write the trainer as common.trainer(...)"
    loaders = {tagged["data_loader"].get(TAG), tagged["validation_data_loader"].get(TAG)}
    assert len(loaders) == 1 and loaders <= {"bucket_loaders", "unbucketed_loaders"}, (
        f"{task}.libsonnet: take data_loader and validation_data_loader from common.bucket_loaders(...) "
        "or common.unbucketed_loaders(...)"
    )
    # The tags are all the wrapper changes: the tagged evaluation is the task's config plus tags.
    assert _without_tags(tagged) == _task_config(task, elmo, data)


def test_the_trainer_block_leaves_out_what_is_not_given():
    trainer = _evaluate("(import 'common.libsonnet').trainer({ type: 'adam', lr: 0.1 }, 3, null, '+f1')", "fixtures")
    assert trainer == {
        "optimizer": {"type": "adam", "lr": 0.1},
        "num_epochs": 3,
        "patience": None,
        "validation_metric": "+f1",
    }
    loaders = _evaluate("(import 'common.libsonnet').bucket_loaders(8, sorting_keys=['tokens'])", "fixtures")
    assert loaders["validation_data_loader"] == {
        "batch_sampler": {"type": "bucket", "batch_size": 8, "sorting_keys": ["tokens"]}
    }


def test_python_spells_the_shared_names_as_common_libsonnet():
    common = _evaluate("local c = import 'common.libsonnet'; [c.elmo_embedder_path, c.mixing_weights_regex]", "full")
    assert common == [ELMO_EMBEDDER_PATH, MIXING_WEIGHTS_REGEX]


@pytest.mark.parametrize("data", ["fixtures", "full"])
@pytest.mark.parametrize("task", TASKS)
def test_the_elmo_embedder_sits_where_the_overrides_expect_it(task, data):
    """The reproduction's analysis variants (elmo_tasks/reproduction/task_table.py) override keys under it."""
    elmo = _task_config(task, True, data)
    embedder = _at(elmo, ELMO_EMBEDDER_PATH)
    assert embedder["type"] == "fast_elmo"
    assert elmo["dataset_reader"]["token_indexers"][ELMO_EMBEDDER_PATH.rsplit(".", 1)[1]]["type"] == "elmo_characters"
    with pytest.raises(KeyError):
        _at(_task_config(task, False, data), ELMO_EMBEDDER_PATH)
    regexes = [regex for regex, _ in elmo["model"].get("regularizer", {}).get("regexes", [])]
    assert regexes[:1] in ([], [MIXING_WEIGHTS_REGEX])
    # Table 2's lambda variants replace the whole list, so a task that has them penalises nothing else
    # (SNLI's recipe also penalises its weight matrices, appendix A.3, and has none of them)
    analyses = REPRODUCED_TASKS[task].analyses.values()
    if any("model.regularizer.regexes" in analysis.overrides for analysis in analyses):
        assert regexes[1:] == []


def test_the_mixing_weight_regex_matches_the_mixing_weights_only():
    embedder = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, dropout=0.0, num_output_representations=2)
    matched = {name for name, _ in embedder.named_parameters() if re.search(MIXING_WEIGHTS_REGEX, name)}
    assert matched == {f"scalar_mix_{k}.scalar_parameters.{j}" for k in range(2) for j in range(3)}


def test_one_layer_weights_have_one_weight_per_biLM_layer(tmp_path, monkeypatch):
    assert bilm_layer_count(OPTIONS_FILE) == 3  # 2 LSTM layers + the token layer
    assert (top_layer_only(OPTIONS_FILE), token_layer_only(OPTIONS_FILE)) == ([0, 0, 1], [1, 0, 0])
    options = json.loads(Path(OPTIONS_FILE).read_text())
    options["lstm"]["n_layers"] = 4
    deeper = tmp_path / "options.json"
    deeper.write_text(json.dumps(options))
    monkeypatch.setenv("ELMO_OPTIONS", str(deeper))  # the biLM the experiments read
    assert (top_layer_only(), token_layer_only()) == ([0, 0, 0, 0, 1], [1, 0, 0, 0, 0])
    # fast_elmo accepts them for the biLM they were sized for
    top = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, dropout=0.0, fixed_layer_weights=top_layer_only(OPTIONS_FILE))
    assert top.scalar_mix_0.scalar_parameters[2].item() == 0.0 and not top.scalar_mix_0.gamma.requires_grad


def test_the_analysis_variants_override_the_experiments_elmo_embedder(monkeypatch):
    """Each override under the ELMo embedder lands in the ``elmo`` config's embedder, its mixing-weight
    penalty uses the configs' regex, and one-layer weights have one weight per layer of the shipped biLM
    (the one reproduce.py runs unless ELMO_OPTIONS names another)."""
    monkeypatch.setenv("ELMO_OPTIONS", DEFAULTS["ELMO_OPTIONS"])
    checked = 0
    for task, spec in REPRODUCED_TASKS.items():
        elmo = _task_config(task, True, "full")
        for name in spec.analyses:
            for key, value in spec.variants("paper", analyses=True)[name].overrides.items():
                if key.startswith(ELMO_EMBEDDER_PATH + "."):
                    assert _at(elmo, ELMO_EMBEDDER_PATH)["type"] == "fast_elmo", (task, name, key)
                    checked += 1
                if key.endswith(".fixed_layer_weights"):
                    assert value in (top_layer_only(), token_layer_only()), (task, name, value)
                if key == "model.regularizer.regexes":
                    assert [regex for regex, _ in value] == [MIXING_WEIGHTS_REGEX], (task, name)
    assert checked > 0
