"""``model.tar.gz`` written whole: AllenNLP's ``archive_model`` through a temporary file renamed into place.

AllenNLP 2.10's ``archive_model`` (called by ``allennlp train`` when training ends, and when a stopped
training archives its best epoch) writes ``model.tar.gz`` in place. A full disk, a kill or a Ctrl-C
while it writes leaves a truncated archive beside the run's ``metrics.json``, which looks like a
finished run: the reproduction harness evaluates it, and fails, every time it is run again. Through
:class:`elmo_tasks.atomic_files.WholeFile` the archive is the earlier one or the whole new one, and a
write that fails ends with one line naming the path and the errno (:class:`ArchiveWriteError`, printed
as one line by :mod:`elmo_tasks.input_errors`).

:func:`install_whole_archives` is called where a command starts (:mod:`elmo_tasks.command_start`).
"""

import functools
import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Union

from elmo_tasks.atomic_files import WholeFile, write_failure

# the attribute our replacement carries, so that installing twice changes nothing
_WHOLE_MARK = "_elmo_tasks_whole_archive"


class ArchiveWriteError(Exception):
    """A model archive could not be written (a full disk, a read-only folder); the message says which,
    with the errno, and whether an earlier archive there is unchanged."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.errno = code


def _archive_file(serialization_dir: Union[str, os.PathLike], archive_path: Optional[Union[str, os.PathLike]]) -> Path:
    """Where ``archive_model`` writes, by AllenNLP's rule: ``archive_path`` (``model.tar.gz`` inside it if it
    is a folder), else ``model.tar.gz`` in the serialization folder."""
    if archive_path is None:
        return Path(serialization_dir) / "model.tar.gz"
    if os.path.isdir(archive_path):
        return Path(archive_path) / "model.tar.gz"
    return Path(archive_path)


def whole_archive_model(original: Callable[..., str]) -> Callable[..., str]:
    """``original`` (AllenNLP's ``archive_model``, same arguments) writing through a temporary file."""

    @functools.wraps(original)
    def archive_model(
        serialization_dir: Union[str, os.PathLike],
        weights: Optional[str] = None,
        archive_path: Optional[Union[str, os.PathLike]] = None,
        include_in_archive: Optional[List[str]] = None,
    ) -> str:
        final = _archive_file(serialization_dir, archive_path)
        earlier = final.exists()
        passed: Any = {} if weights is None else {"weights": weights}
        try:
            with WholeFile(final) as partial:
                original(serialization_dir, archive_path=str(partial), include_in_archive=include_in_archive, **passed)
        except OSError as error:
            if error.errno is None:
                raise
            state = f"an earlier {final.name} there is unchanged" if earlier else f"nothing was written to {final}"
            raise ArchiveWriteError(f"{write_failure(final, error.errno)} ({state})", error.errno) from None
        return str(final)

    setattr(archive_model, _WHOLE_MARK, True)
    return archive_model


def install_whole_archives() -> None:
    """Replaces ``archive_model`` in AllenNLP's archival module and in ``allennlp train``'s namespace (which
    imported it by name); idempotent."""
    from allennlp.commands import train
    from allennlp.models import archival

    if getattr(archival.archive_model, _WHOLE_MARK, False):
        return
    replacement = whole_archive_model(archival.archive_model)
    archival.archive_model = replacement
    train.archive_model = replacement  # train imported the name itself
