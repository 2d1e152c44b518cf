"""AllenNLP glue around the biLM: the ELMo token embedder, the ``Elmo`` module, the drop-in switch;
and the ``padded_lstm``/``padded_gru`` encoders the experiments' RNNs run on (padded_rnn.py), the
NER recipe's ``stacked_bilstm`` (stacked_bilstm.py) and the SRL recipe's ``variational_alternating_lstm``
(alternating_lstm.py).

``from elmo_tasks.modules import Elmo, batch_to_ids`` replaces ``from allennlp.modules.elmo import
Elmo, batch_to_ids`` (the same character ids). Importing this package registers names and changes
nothing else: ``ELMO_TASKS_REPLACE_ALLENNLP_ELMO`` switches the drop-in on where a command starts
(:func:`elmo_tasks.command_start.start_command` calls ``apply_environment_switch``, allennlp_compat.py).
"""

from elmo_tasks.bilm import batch_to_ids
from elmo_tasks.modules.allennlp_compat import (
    ENVIRONMENT_VARIABLE,
    AllenNlpElmoTokenEmbedder,
    allennlp_elmo_replaced,
    apply_environment_switch,
    replace_allennlp_elmo,
    restore_allennlp_elmo,
)
from elmo_tasks.modules.alternating_lstm import VariationalAlternatingLstmEncoder
from elmo_tasks.modules.elmo import Elmo
from elmo_tasks.modules.elmo_at_output import ElmoAtOutput
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder, find_elmo_embedder
from elmo_tasks.modules.padded_rnn import PaddedGruEncoder, PaddedLstmEncoder, PaddedRnnEncoder
from elmo_tasks.modules.stacked_bilstm import StackedBiLstmEncoder

__all__ = [
    "ElmoTokenEmbedder",
    "Elmo",
    "batch_to_ids",
    "AllenNlpElmoTokenEmbedder",
    "ENVIRONMENT_VARIABLE",
    "apply_environment_switch",
    "ElmoAtOutput",
    "find_elmo_embedder",
    "replace_allennlp_elmo",
    "restore_allennlp_elmo",
    "allennlp_elmo_replaced",
    "PaddedRnnEncoder",
    "PaddedLstmEncoder",
    "PaddedGruEncoder",
    "StackedBiLstmEncoder",
    "VariationalAlternatingLstmEncoder",
]
