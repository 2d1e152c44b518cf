"""A PyTorch biLM (ELMo) with no AllenNLP dependency: model, character ids, original weight I/O."""

from elmo_tasks.bilm.characters import batch_to_ids, word_to_character_ids
from elmo_tasks.bilm.errors import BilmError, OptionsError, WeightFileError
from elmo_tasks.bilm.model import BiLM, BilmOutput
from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.weights import export_bilm, load_bilm, load_weights, save_weights

__all__ = [
    "BiLM",
    "BilmOutput",
    "BilmOptions",
    "BilmError",
    "OptionsError",
    "WeightFileError",
    "batch_to_ids",
    "word_to_character_ids",
    "load_bilm",
    "load_weights",
    "save_weights",
    "export_bilm",
]
