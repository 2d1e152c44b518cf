"""Defaults for the environment variables our jsonnet experiments read with ``std.extVar``.

Jsonnet has no optional external variables, and AllenNLP hands every environment variable to
the config. :func:`apply_defaults` fills in any of these the user did not set, so experiments run
out of the box and one variable switches them to the full data. Every command calls it at its
start, before it reads a config (:func:`elmo_tasks.command_start.start_command`, which
``allennlp train/evaluate/predict`` run too); importing the plugin does not. Python code that
evaluates an experiment itself calls ``apply_defaults()`` first (or ``start_command()``, for
everything a command gets).

It also holds what Python code must spell as the experiments do (elmo_tasks/experiments/common.libsonnet
defines the same names; tests/test_experiment_configs_shared_blocks.py checks that they agree).
"""

import logging
import os
from pathlib import Path
from typing import Dict, List, Optional

from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.references import PACKAGE_ROOT
from elmo_tasks.pretrained import SMALL_BILM_DIR, SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE

DEFAULTS: Dict[str, str] = {
    # "fixtures": the small bundled samples (minutes); "full": the paper's data by their official names under
    # ELMO_TASKS_SHARED_DATA; "substitutes": the real data with docs/DATA.md's substitutes (the mini budget).
    "ELMO_TASKS_DATA": "fixtures",
    # a folder of the checkout that git ignores (docs/DATA.md), relative to where allennlp runs
    "ELMO_TASKS_SHARED_DATA": "data",
    # the bundled samples of ELMO_TASKS_DATA=fixtures; apply_defaults() names the checkout's by absolute
    # path when allennlp runs from another directory (fixtures_folder)
    "ELMO_TASKS_FIXTURES": "fixtures",
    # The biLM of ELMo experiments: the one we trained and ship, named through the installed package
    # (not a path), so it works from any directory and trained models' configs hold no checkout path.
    "ELMO_OPTIONS": SMALL_OPTIONS_REFERENCE,
    "ELMO_WEIGHTS": SMALL_WEIGHT_REFERENCE,
    "ELMO_TASKS_SEED": "13370",
    # elmo_tasks/experiments/srl.libsonnet: which SRL benchmark, conll2005 or conll2012
    "ELMO_TASKS_SRL_DATASET": "conll2005",
    # elmo_tasks/experiments/squad.libsonnet with ELMO_TASKS_DATA=full: the XQuAD cross-validation fold tested, K/N
    "ELMO_TASKS_FOLD": "1/4",
    # every task experiment: a GloVe-format word-vector file for the word embedding, or "" for none
    # (common.libsonnet: word_vectors; README, "Word vectors")
    "ELMO_TASKS_WORD_VECTORS": "",
    # experiments/bilm_small_continue.jsonnet: the shuffled corpus and the biLM it starts from
    "BILM_CORPUS": "runs/bilm_corpus",
    "BILM_START": str(SMALL_BILM_DIR),
}


def fixtures_folder() -> str:
    """Where the experiments read the bundled samples: ``fixtures`` from the checkout's root (what records
    and tests name), else the checkout's ``fixtures`` by absolute path, so that an experiment run from
    another directory, or copied out of the checkout, still finds them."""
    checkout = PACKAGE_ROOT.parent / "fixtures"
    here = Path("fixtures")
    if checkout.is_dir() and not (here.is_dir() and here.resolve() == checkout.resolve()):
        return str(checkout)
    return DEFAULTS["ELMO_TASKS_FIXTURES"]


def apply_defaults() -> None:
    """Sets each variable of :data:`DEFAULTS` the environment lacks (a value the user set stays); warns when
    the full data's folder is missing, which the readers would report later without saying what to do."""
    os.environ.setdefault("ELMO_TASKS_FIXTURES", fixtures_folder())
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
    data_root = os.environ["ELMO_TASKS_SHARED_DATA"]
    mode = os.environ["ELMO_TASKS_DATA"]
    if mode in ("full", "substitutes") and not os.path.isdir(data_root):
        # the readers would stop later with "file data/... not found", which does not say what to do
        logging.getLogger(__name__).warning(
            "ELMO_TASKS_DATA=%s reads the real data from ELMO_TASKS_SHARED_DATA=%s, which is not a folder "
            "(from %s): put the data there or set ELMO_TASKS_SHARED_DATA to where it is (docs/DATA.md)",
            mode,
            data_root,
            os.getcwd(),
        )


# Where every task experiment has its ELMo embedder, as a dotted key of `allennlp train -o` overrides
# (common.libsonnet: elmo_embedder_path).
ELMO_EMBEDDER_PATH = "model.text_field_embedder.token_embedders.elmo"
# The ELMo mixing weights (scalar_mix_K.scalar_parameters.J, not gamma) that the paper's lambda
# penalises, as a regularizer regex (common.libsonnet: mixing_weights_regex).
MIXING_WEIGHTS_REGEX = ".*scalar_mix.*scalar_parameters.*"


def bilm_layer_count(options_file: Optional[str] = None) -> int:
    """How many layers ELMo mixes: the biLM's LSTM layers plus its token layer (3 for the shipped biLM).

    ``options_file`` defaults to the biLM the experiments read (ELMO_OPTIONS, else the shipped one), so
    weights written for it (``fixed_layer_weights``) have the length that biLM needs.
    """
    return BilmOptions.from_file(options_file or os.environ.get("ELMO_OPTIONS", DEFAULTS["ELMO_OPTIONS"])).n_layers + 1


def top_layer_only(options_file: Optional[str] = None) -> List[int]:
    """``fixed_layer_weights`` that keep only the biLM's top layer: ``[0, 0, 1]`` for a 2-layer biLM."""
    return [0] * (bilm_layer_count(options_file) - 1) + [1]


def token_layer_only(options_file: Optional[str] = None) -> List[int]:
    """``fixed_layer_weights`` that keep only the token (character CNN) layer: ``[1, 0, 0]`` for a 2-layer biLM."""
    return [1] + [0] * (bilm_layer_count(options_file) - 1)
