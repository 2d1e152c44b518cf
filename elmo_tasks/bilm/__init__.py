"""A PyTorch biLM (ELMo) with no AllenNLP dependency: model, character ids, original weight I/O.

The public names below are imported when first used (PEP 562), not when the package is: ``python -m
elmo_tasks.bilm.embed`` imports this package before any line of ``embed.py`` runs, and importing
torch takes seconds, during which a Ctrl-C or SIGTERM would end the program with a traceback (or
silently) instead of the one line ``embed.py`` prints once it has installed its handlers.
``from elmo_tasks.bilm import BiLM`` works as before, at the cost of torch's import then.
"""

import importlib
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:  # what type checkers and editors see; at run time the names come from __getattr__
    from elmo_tasks.bilm.characters import batch_to_ids, word_to_character_ids
    from elmo_tasks.bilm.errors import BilmError, OptionsError, WeightFileError
    from elmo_tasks.bilm.model import BiLM, BilmOutput
    from elmo_tasks.bilm.options import BilmOptions
    from elmo_tasks.bilm.weights import export_bilm, load_bilm, load_weights, save_weights

#: Each public name and the submodule that defines it.
_HOME_MODULES: Dict[str, str] = {
    "BiLM": "model",
    "BilmOutput": "model",
    "BilmOptions": "options",
    "BilmError": "errors",
    "OptionsError": "errors",
    "WeightFileError": "errors",
    "batch_to_ids": "characters",
    "word_to_character_ids": "characters",
    "load_bilm": "weights",
    "load_weights": "weights",
    "save_weights": "weights",
    "export_bilm": "weights",
}

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


def __getattr__(name: str) -> Any:
    """A public name, imported from its submodule on first use (then kept here: one import)."""
    home = _HOME_MODULES.get(name)
    if home is None:  # a submodule not imported yet, or a name that does not exist: Python's own error
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
