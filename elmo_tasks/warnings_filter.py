"""Silences the FutureWarnings that our dependencies' own code raises on every run, which users cannot act on.

AllenNLP 2.10.1 runs here on torch 2.x: importing it imports fairscale, whose module code calls
torch APIs that torch now deprecates, and AllenNLP's trainer calls ``torch.cuda.amp.autocast`` at
every batch. Each warning names a line inside those packages; nothing in a user's config or code
changes it, so it only hides the messages that matter. :mod:`elmo_tasks.plugin` imports this module
first, before anything imports AllenNLP.

Each filter names the module the warning is attributed to, its category and the start of its
message, so every other warning, including other FutureWarnings of the same packages, still shows.
``torch.jit.script``'s warning is attributed to torch's own module whoever calls it; Python shows a
warning once per line, and fairscale's call comes first in every run, so a user's own call of
``torch.jit.script`` would not have shown it either.
"""

import warnings
from typing import Tuple

# (module regex, message regex): the warnings this module silences, all FutureWarnings.
DEPENDENCY_FUTURE_WARNINGS: Tuple[Tuple[str, str], ...] = (
    # fairscale.experimental.nn.offload, at import (AllenNLP imports fairscale)
    (r"fairscale\.experimental\.nn\.offload\Z", r"`torch\.cuda\.amp\.custom_(fwd|bwd)\(args\.\.\.\)` is deprecated"),
    # fairscale.experimental.nn.sync_batchnorm calls torch.jit.script at import
    (r"torch\.jit\._script\Z", r"`torch\.jit\.script` is deprecated"),
    # AllenNLP's GradientDescentTrainer, at every training and validation batch
    (r"allennlp\.training\.gradient_descent_trainer\Z", r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated"),
)


def silence_dependency_warnings() -> None:
    """Adds one ``ignore`` filter per entry of :data:`DEPENDENCY_FUTURE_WARNINGS` (idempotent)."""
    for module, message in DEPENDENCY_FUTURE_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=FutureWarning, module=module)


silence_dependency_warnings()
