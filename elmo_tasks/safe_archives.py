"""Extracting tar archives (``model.tar.gz``) without letting a member get out of the extraction folder.

AllenNLP 2.10.1 extracts a model archive with a plain ``tarfile.extractall``: a member named
``../../x.txt`` or ``/abs/x.txt``, a symbolic or hard link to a path outside, or a path that runs
through such a link writes (or overwrites) a file outside the folder, and a device or FIFO member
is created as one. :func:`extract_archive_safely` reads every member's header first and refuses the
archive before anything is written, with one line naming the archive and the member
(:class:`UnsafeArchiveError`), then extracts with Python's ``data`` filter as a second guard.

:func:`install_safe_extraction` (called where a command starts, :mod:`elmo_tasks.command_start`) puts
that check into AllenNLP's two extractions: ``allennlp.models.archival.extracted_archive``
(``load_archive``, so ``allennlp predict/evaluate``, ``Predictor.from_path`` and our commands) and
the check that ``cached_path`` runs before it extracts (``cached_path(..., extract_archive=True)``).
It also makes an uncaught :class:`UnsafeArchiveError` end a command with its one line instead of a
traceback.
No AllenNLP import at module level: the installer imports what it patches.
"""

import contextlib
import importlib
import logging
import os
import shutil
import tarfile
import tempfile
from types import ModuleType
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Literal, Optional, Sequence, Tuple, Union

logger = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]
ReadMode = Literal["r:*", "r:gz"]  # any compression, or gzip alone (as AllenNLP reads model archives)
MemberPath = Tuple[str, ...]  # a member's path inside the archive, as its folder names and its own name

REMEDY = (
    "this archive is unsafe or corrupt: extract nothing from it, and re-create it from trusted files "
    "(a model archive: `allennlp train`, or `archive_model` on its serialization folder)"
)

# the attribute our replacements carry, so that installing twice changes nothing
_INSTALLED_MARK = "_elmo_tasks_safe_extraction"

# "module.name" -> the function it held before install_safe_extraction replaced it (for the tests)
_REPLACED: Dict[str, Callable[..., Any]] = {}

_SPECIAL_KINDS = {
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO (named pipe)",
}


class UnsafeArchiveError(ValueError):
    """An archive with a member that would land outside the extraction folder, or is no file, folder or
    link; the one-line message names the archive and the member."""


class AdapterMismatchError(RuntimeError):
    """AllenNLP or cached-path no longer has the function :func:`install_safe_extraction` replaces."""


def extract_archive_safely(archive_file: PathLike, destination: PathLike, mode: ReadMode = "r:*") -> None:
    """Extracts ``archive_file`` into the folder ``destination``; raises :class:`UnsafeArchiveError`,
    before writing anything, when any member could get out of it (:func:`refuse_unsafe_members`)."""
    with tarfile.open(archive_file, mode) as archive:
        refuse_unsafe_members(archive, os.fspath(archive_file), os.fspath(destination))
        _extract_with_data_filter(archive, os.fspath(archive_file), os.fspath(destination))
        # extraction stops at the last member; reading on to the end checks a gzip archive's checksum,
        # so damage that still decompresses is refused instead of loading wrong weights
        compressed = archive.fileobj
        while compressed is not None and compressed.read(1 << 20):
            pass


def refuse_unsafe_members(archive: tarfile.TarFile, archive_name: str, destination: Optional[str] = None) -> None:
    """Raises :class:`UnsafeArchiveError` for the first member, in archive order, that is no regular
    file, folder, symbolic or hard link; whose path is absolute, leaves the folder (``..``) or runs
    through a symbolic link of the archive; or that is a link to a path outside the folder.

    Works on the names alone (nothing is extracted), so it holds for a fresh ``destination``: a path
    may pass through a link only as its last step, and every link stays inside, so no chain of links
    leads out. ``destination`` only goes into the message."""
    members = archive.getmembers()
    symlinks = frozenset(
        path for path in (_lexical_path(member.name) for member in members if member.issym()) if path is not None
    )

    def refuse(member: tarfile.TarInfo, reason: str) -> UnsafeArchiveError:
        return UnsafeArchiveError(
            f"{_shown(archive_name)}: refusing to extract member {member.name!r}: {reason}; {REMEDY}"
        )

    outside = "outside the extraction folder" + (f" {_shown(destination)}" if destination else "")
    for member in members:
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            kind = _SPECIAL_KINDS.get(member.type, f"of tar type {member.type!r}")
            raise refuse(member, f"it is {kind}, not a file, folder or link")
        if member.name.startswith("/"):
            raise refuse(member, f"its path is absolute: it would be written {outside}")
        path = _lexical_path(member.name)
        if path is None:
            raise refuse(member, f"it would be written {outside}")
        if not path and not member.isdir():
            raise refuse(member, "its path is the extraction folder itself")
        through = _symlink_on_the_way(_steps(member.name)[:-1], symlinks)
        if through is not None:
            raise refuse(member, f"its path runs through the symbolic link {through!r}, which could lead {outside}")
        if member.issym() or member.islnk():
            kind = "symbolic" if member.issym() else "hard"
            # a symbolic link's target is relative to the link's folder, a hard link's to the archive's root
            start = path[:-1] if member.issym() else ()
            target = None if member.linkname.startswith("/") else _lexical_path(member.linkname, start)
            if target is None:
                raise refuse(member, f"it is a {kind} link to {member.linkname!r}, {outside}")
            through = _symlink_on_the_way(_steps(member.linkname, start)[:-1], symlinks)
            if through is not None:
                raise refuse(
                    member,
                    f"it is a {kind} link whose target {member.linkname!r} runs through the symbolic link "
                    f"{through!r}, which could lead {outside}",
                )


def install_safe_extraction() -> None:
    """Makes AllenNLP's archive extractions refuse unsafe archives; idempotent (the refusal's one line
    at the end of a command comes from :mod:`elmo_tasks.input_errors`). Raises :class:`AdapterMismatchError`
    if AllenNLP or cached-path lack what is replaced (another version than the pinned ones), rather than
    leave an extraction unguarded."""
    from allennlp.models import archival

    _replace(archival, "extracted_archive", safe_extracted_archive)
    # cached_path's extraction calls the check_tarfile of its own module's namespace
    _replace(importlib.import_module("cached_path._cached_path"), "check_tarfile", refuse_unsafe_tarfile)


@contextlib.contextmanager
def safe_extracted_archive(resolved_archive_file: PathLike, cleanup: bool = True) -> Iterator[str]:
    """``allennlp.models.archival.extracted_archive`` (same arguments, same temporary folder, same
    clean-up) extracting with :func:`extract_archive_safely`. A refused archive also removes the folder,
    which AllenNLP's ``load_archive`` (``cleanup=False``) would otherwise leave behind."""
    tempdir = tempfile.mkdtemp()
    extracted = False
    try:
        logger.info(f"extracting archive file {resolved_archive_file} to temp dir {tempdir}")
        extract_archive_safely(resolved_archive_file, tempdir, mode="r:gz")
        extracted = True
        yield tempdir
    finally:
        if cleanup or not extracted:
            shutil.rmtree(tempdir, ignore_errors=True)


def refuse_unsafe_tarfile(tar_file: tarfile.TarFile) -> None:
    """cached-path's ``check_tarfile`` (run on an archive just before it extracts it), as
    :func:`refuse_unsafe_members`: cached-path's own check compares paths as strings (``../pathtestX``
    passes) and does not follow links through one another. Also sets the ``data`` filter on it."""
    refuse_unsafe_members(tar_file, os.fsdecode(tar_file.name) if tar_file.name else "tar archive")
    if hasattr(tarfile, "data_filter"):
        tar_file.extraction_filter = tarfile.data_filter  # used by the extractall that follows


def _extract_with_data_filter(archive: tarfile.TarFile, archive_name: str, destination: str) -> None:
    """Python's ``data`` filter (3.11.4+) where there is one: it also drops set-user-id bits and the like,
    and would catch, with the same one line, anything :func:`refuse_unsafe_members` let through."""
    if not hasattr(tarfile, "data_filter"):
        archive.extractall(destination)
        return
    try:
        archive.extractall(destination, filter="data")
    except tarfile.FilterError as error:
        name = error.tarinfo.name if error.tarinfo is not None else "?"
        raise UnsafeArchiveError(
            f"{_shown(archive_name)}: refusing to extract member {name!r}: {error}; {REMEDY}"
        ) from None


def _steps(name: str, start: MemberPath = ()) -> Sequence[str]:
    """The folder steps of ``name`` from ``start``, as walked: ``..`` kept, empty and ``.`` parts dropped."""
    return list(start) + [part for part in name.split("/") if part not in ("", ".")]


def _lexical_path(name: str, start: MemberPath = ()) -> Optional[MemberPath]:
    """``name`` (relative to ``start``) with its ``..`` worked out on the names alone; None when a ``..``
    would climb above the archive's root."""
    path: List[str] = list(start)
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not path:
                return None
            path.pop()
        else:
            path.append(part)
    return tuple(path)


def _symlink_on_the_way(steps: Sequence[str], symlinks: FrozenSet[MemberPath]) -> Optional[str]:
    """The first symbolic link of the archive that walking ``steps`` passes through, or None: past a link
    a ``..`` or a name means something else than the names say."""
    path: List[str] = []
    for step in steps:
        if step == "..":
            if path:
                path.pop()
            continue
        path.append(step)
        if tuple(path) in symlinks:
            return "/".join(path)
    return None


def _shown(text: str) -> str:
    """``text`` as is, or quoted with its escapes when it holds a line break or another control character,
    so that the message stays one line."""
    return text if text.isprintable() else repr(text)


def _replace(module: ModuleType, name: str, replacement: Callable[..., Any]) -> None:
    current = getattr(module, name, None)
    if current is None:
        raise AdapterMismatchError(
            f"{module.__name__}.{name} is missing, so elmo_tasks cannot make its archive extraction safe; "
            f"this AllenNLP or cached-path is not the version elmo_tasks/safe_archives.py was written for "
            f"(allennlp 2.10.1, cached-path 1.1.6): install those, or update elmo_tasks/safe_archives.py"
        )
    if getattr(current, _INSTALLED_MARK, False):
        return
    _REPLACED[f"{module.__name__}.{name}"] = current
    setattr(replacement, _INSTALLED_MARK, True)
    setattr(module, name, replacement)
