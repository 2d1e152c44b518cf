"""Defaults for the environment variables our jsonnet experiments read with ``std.extVar``.

Jsonnet has no optional external variables, and AllenNLP hands every environment variable to
the config. Importing the plugin (which ``allennlp`` does before it reads a config) fills in
any of these the user did not set, so experiments run out of the box and one variable switches
them to the full data.
"""

import os
from typing import Dict

from elmo_tasks.pretrained import SMALL_BILM_DIR, SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE

DEFAULTS: Dict[str, str] = {
    # "fixtures": the small bundled samples (minutes); "full": the real data under ELMO_TASKS_SHARED_DATA.
    "ELMO_TASKS_DATA": "fixtures",
    "ELMO_TASKS_SHARED_DATA": "../shared/data",
    # The biLM of ELMo experiments: the one we trained and ship, named through the installed package
    # (not a path), so it works from any directory and trained models' configs hold no checkout path.
    "ELMO_OPTIONS": SMALL_OPTIONS_REFERENCE,
    "ELMO_WEIGHTS": SMALL_WEIGHT_REFERENCE,
    "ELMO_TASKS_SEED": "13370",
    # experiments/srl.libsonnet: which SRL benchmark, conll2005 or conll2012
    "ELMO_TASKS_SRL_DATASET": "conll2005",
    # experiments/squad.libsonnet with ELMO_TASKS_DATA=full: the XQuAD cross-validation fold tested, K/N
    "ELMO_TASKS_FOLD": "1/4",
    # experiments/bilm_small_continue.jsonnet: the shuffled corpus and the biLM it starts from
    "BILM_CORPUS": "runs/bilm_corpus",
    "BILM_START": str(SMALL_BILM_DIR),
}


def apply_defaults() -> None:
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
