"""One subpackage per benchmark, each with the same file roles (docs/CONVENTIONS.md), and ``lm``, the biLM.

Importing this package imports every subpackage in its folder, which registers their names: a new task's
folder needs no line here (docs/CONVENTIONS.md, "Adding a task").
"""

import importlib
import pkgutil


def _import_subpackages() -> None:
    for found in pkgutil.iter_modules(__path__):
        if found.ispkg:
            importlib.import_module(f"{__name__}.{found.name}")


_import_subpackages()
