"""The biLM that ships with elmo-tasks: trained by us on public English text (see its MODEL_CARD.md).

Published ELMo weights cannot be downloaded here, so experiments default to this one. It is in
the original format (options.json + hdf5, float16 storage restored to float32 on load).

Configs name it by package reference (``SMALL_OPTIONS_REFERENCE``, see
:mod:`elmo_tasks.bilm.references`), not by path, so a trained model's ``config.json`` holds no
path of the checkout it was trained in. The ``*_FILE`` constants are the files' absolute paths
in this installation, for Python code.
"""

from pathlib import Path

from elmo_tasks.bilm.references import resolve_bilm_file  # noqa: F401  (re-exported)

SMALL_OPTIONS_REFERENCE = "elmo_tasks:pretrained/bilm_small/options.json"
SMALL_WEIGHT_REFERENCE = "elmo_tasks:pretrained/bilm_small/weights.hdf5"

SMALL_BILM_DIR = Path(__file__).resolve().parent / "bilm_small"
SMALL_OPTIONS_FILE = str(SMALL_BILM_DIR / "options.json")
SMALL_WEIGHT_FILE = str(SMALL_BILM_DIR / "weights.hdf5")
