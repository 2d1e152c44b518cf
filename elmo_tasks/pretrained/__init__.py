"""The biLM that ships with elmo-tasks: trained by us on public English text (see its MODEL_CARD.md).

Published ELMo weights cannot be downloaded here, so experiments default to this one. It is in
the original format (options.json + hdf5, float16 storage restored to float32 on load) and is
found next to this file, so the defaults work from any working directory.
"""
from pathlib import Path

SMALL_BILM_DIR = Path(__file__).resolve().parent / "bilm_small"
SMALL_OPTIONS_FILE = str(SMALL_BILM_DIR / "options.json")
SMALL_WEIGHT_FILE = str(SMALL_BILM_DIR / "weights.hdf5")
