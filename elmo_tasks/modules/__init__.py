"""AllenNLP glue around the biLM: the ELMo token embedder, the ``Elmo`` module, the drop-in switch."""

import os

from elmo_tasks.modules.allennlp_compat import (
    ENVIRONMENT_VARIABLE,
    AllenNlpElmoTokenEmbedder,
    allennlp_elmo_replaced,
    replace_allennlp_elmo,
    restore_allennlp_elmo,
)
from elmo_tasks.modules.elmo import Elmo
from elmo_tasks.modules.elmo_token_embedder import (
    ElmoTokenEmbedder,
    elmo_at_output,
    find_elmo_embedder,
)

__all__ = [
    "ElmoTokenEmbedder",
    "Elmo",
    "AllenNlpElmoTokenEmbedder",
    "elmo_at_output",
    "find_elmo_embedder",
    "replace_allennlp_elmo",
    "restore_allennlp_elmo",
    "allennlp_elmo_replaced",
]

if os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() in ("1", "true", "yes"):
    replace_allennlp_elmo()
