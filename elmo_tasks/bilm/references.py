"""Package references to biLM files: ``elmo_tasks:<path inside the package>``.

A config that names the shipped biLM as ``elmo_tasks:pretrained/bilm_small/options.json`` holds
no path of the machine it was written on; the reference is resolved through whichever elmo_tasks
is installed where it is read (a checkout moved, re-cloned or copied elsewhere works the same).
Every reader of biLM files (options, weights) accepts one in place of a path.
"""

from pathlib import Path

from elmo_tasks.bilm.errors import BilmError

PACKAGE_REFERENCE_PREFIX = "elmo_tasks:"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the elmo_tasks package this code was imported from


class BilmReferenceError(BilmError):
    """An ``elmo_tasks:`` reference that names no file of the installed package."""


def is_package_reference(path: str) -> bool:
    return str(path).startswith(PACKAGE_REFERENCE_PREFIX)


def resolve_bilm_file(path: str) -> str:
    """The file ``path`` names: a package reference becomes that file of the installed elmo_tasks;
    anything else is returned unchanged (a plain path)."""
    if not is_package_reference(path):
        return path
    resolved = (PACKAGE_ROOT / str(path)[len(PACKAGE_REFERENCE_PREFIX) :]).resolve()
    if PACKAGE_ROOT not in resolved.parents:
        raise BilmReferenceError(f"{path}: a package reference must name a file inside elmo_tasks ({PACKAGE_ROOT})")
    if not resolved.is_file():
        raise BilmReferenceError(
            f"{path}: no such file in the installed elmo_tasks package ({resolved}); the shipped biLM is "
            "elmo_tasks:pretrained/bilm_small/options.json with elmo_tasks:pretrained/bilm_small/weights.hdf5"
        )
    return str(resolved)
