"""An earlier biLM export in the output folder, for the fault tests that check a failed export leaves it as it was."""

from pathlib import Path
from typing import Dict

# Its files and their bytes (not a loadable biLM: only whether they are kept is checked).
EARLIER_EXPORT = {"options.json": b'{"earlier": "options"}', "weights.hdf5": b"earlier weights" * 100}


def write_earlier_export(folder: Path) -> None:
    """Makes ``folder`` with the earlier export's files in it."""
    folder.mkdir()
    for name, content in EARLIER_EXPORT.items():
        (folder / name).write_bytes(content)


def earlier_export_files(folder: Path) -> Dict[str, bytes]:
    """The bytes of the earlier export's files now in ``folder`` (a missing one fails the test)."""
    return {name: (folder / name).read_bytes() for name in EARLIER_EXPORT}
