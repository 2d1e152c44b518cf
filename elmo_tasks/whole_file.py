"""Output files that are never left half-written: written under a hidden temporary name beside the
destination (``.NAME.*.partial``) and renamed onto it only when complete. A rename within a folder is
atomic, so the destination holds its old content or the whole new one, whatever stops the writer;
a killed process may leave a ``.partial`` file behind, never a truncated ``NAME``."""

import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Optional, Type, Union


class WholeFile:
    """``with WholeFile(path) as partial:`` write ``partial``; at the end of the block it replaces
    ``path`` (through a symlink: the file the link points to), or is removed if the block raised.

    The temporary file is made when the object is built, so an unwritable folder raises ``OSError``
    there, before any work is done."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.final = Path(os.path.realpath(path))
        descriptor, name = tempfile.mkstemp(prefix=f".{self.final.name}.", suffix=".partial", dir=self.final.parent)
        os.close(descriptor)
        self.partial = Path(name)

    def __enter__(self) -> Path:
        return self.partial

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        error: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        try:
            if kind is None:
                os.chmod(self.partial, _new_file_mode())
                os.replace(self.partial, self.final)
        finally:
            self.partial.unlink(missing_ok=True)


def _new_file_mode() -> int:
    """The permissions a plain ``open(path, "w")`` would give (``mkstemp`` makes files private)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
