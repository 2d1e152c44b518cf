"""Output files that are never left half-written: written under a hidden temporary name beside the
destination (``.NAME.*.partial``) and renamed onto it only when complete. A rename within a folder is
atomic, so the destination holds its old content or the whole new one, whatever stops the writer;
a killed process may leave a ``.partial`` file behind, never a truncated ``NAME``. A folder of files
that belong together (an exported biLM) is written the same way by :class:`WholeFolder`."""

import errno
import io
import itertools
import os
import re
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Iterator, List, Optional, Tuple, Type, Union

# how HDF5 reports a failed system call inside an h5py error's text
_HDF5_ERRNO = re.compile(r"errno = (\d+)")


class _WrittenAside:
    """What :class:`WholeFile` and :class:`WholeFolder` share: the block writes into ``partial``; if it ran
    to its end, ``partial`` is put in place of ``final``; whatever is left of it is removed either way."""

    final: Path
    partial: Path

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
                self._put_in_place()
        finally:
            self._remove_partial()

    def _put_in_place(self) -> None:
        raise NotImplementedError

    def _remove_partial(self) -> None:
        raise NotImplementedError


class WholeFile(_WrittenAside):
    """``with WholeFile(path) as partial:`` write ``partial``; at the end of the block it replaces
    ``path`` (through a symlink: the file the link points to), or is removed if the block raised.

    The temporary file is made when the object is built, so an unwritable folder raises ``OSError``
    there, before any work is done."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.final = Path(os.path.realpath(path))
        descriptor, name = tempfile.mkstemp(prefix=f".{self.final.name}.", suffix=".partial", dir=self.final.parent)
        os.close(descriptor)
        self.partial = Path(name)
        _note_partial(self.final, self.partial)

    def _put_in_place(self) -> None:
        os.chmod(self.partial, _new_file_mode())
        os.replace(self.partial, self.final)

    def _remove_partial(self) -> None:
        self.partial.unlink(missing_ok=True)


# For each file a WholeFile of this process was made for (the latest one): its number in the count of
# them all and the identity (device, inode) of its temporary file, which the file there has once that
# temporary file was renamed onto it. What lets a command's stop line tell whether its output is complete.
_whole_file_count = itertools.count(1)
_written_as: Dict[Path, Tuple[int, int, int]] = {}


def _note_partial(final: Path, partial: Path) -> None:
    status = os.stat(partial)
    _written_as[final] = (next(_whole_file_count), status.st_dev, status.st_ino)


class OutputsPutInPlace:
    """Which of ``paths`` now hold the file a :class:`WholeFile` of this process, made after this object,
    wrote and renamed into place.

    For a command's stop line (:mod:`elmo_tasks.stopping`): a Ctrl-C or SIGTERM can arrive in the instant
    after an output was renamed into place, and the line must then say that output is complete, not that
    it was not written. The answer is what is on disk, the file's identity, so no instant of the rename
    can make it wrong."""

    def __init__(self, *paths: Union[str, Path]) -> None:
        self._real_paths = {str(path): Path(os.path.realpath(path)) for path in paths}
        self._since = next(_whole_file_count)

    def put_in_place(self) -> List[str]:
        """The paths (as given, in that order) that hold what this process wrote for them."""
        return [path for path, real in self._real_paths.items() if self._holds_ours(real)]

    def _holds_ours(self, real: Path) -> bool:
        number, device, inode = _written_as.get(real, (0, -1, -1))
        if number <= self._since:  # noted before this object: an earlier command's
            return False
        try:
            status = os.stat(real)
        except FileNotFoundError:
            return False
        return (status.st_dev, status.st_ino) == (device, inode)


class WholeFolder(_WrittenAside):
    """``with WholeFolder(directory) as partial:`` write the files into the folder ``partial``; at the end
    of the block they replace the entries of the same names in ``directory`` (which is created if it does
    not exist), or ``partial`` is removed if the block raised.

    ``partial`` is a hidden folder (``.NAME.*.partial``), so nothing in ``directory`` changes while the
    files are written: a killed writer leaves at most that folder behind. When ``directory`` does not
    exist, ``partial`` lies beside it and is renamed onto it, one atomic step; otherwise it lies inside
    it and its entries are renamed in one by one (a subfolder: the old one renamed aside first, then
    removed) with SIGINT and SIGTERM held until the last is in, so a Ctrl-C never leaves half an old and
    half a new set. (Only SIGKILL or a crash inside those few renames can.) The partial folder is made
    when the object is built, so an unwritable place raises ``OSError`` there, before any work is done."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.final = Path(os.path.realpath(path))
        self.final.parent.mkdir(parents=True, exist_ok=True)
        inside = self.final if self.final.is_dir() else self.final.parent
        self.partial = Path(tempfile.mkdtemp(prefix=f".{self.final.name}.", suffix=".partial", dir=inside))

    def _put_in_place(self) -> None:
        with stopping_signals_held():
            self._move_in()

    def _remove_partial(self) -> None:
        shutil.rmtree(self.partial, ignore_errors=True)

    def _move_in(self) -> None:
        if self.partial.parent != self.final:  # made beside a folder that did not exist
            os.chmod(self.partial, 0o777 & ~_umask())  # mkdtemp makes the folder private
            os.rename(self.partial, self.final)
            return
        for entry in sorted(os.listdir(self.partial)):  # partial lies inside final
            new, old = self.partial / entry, self.final / entry
            if new.is_dir() and not new.is_symlink() and old.is_dir() and not old.is_symlink():
                os.rename(old, self.partial / f".old.{entry}")  # removed with the partial folder
            os.replace(new, old)


@contextmanager
def stopping_signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait (the kernel keeps them pending) until the block has run, then arrive."""
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _new_file_mode() -> int:
    """The permissions a plain ``open(path, "w")`` would give (``mkstemp`` makes files private)."""
    return 0o666 & ~_umask()


class FirstWriteFailure(io.RawIOBase):
    """A binary file that keeps the first failed write's error and accepts (drops) every write after it.

    For h5py (``h5py.File(FirstWriteFailure(path), "w")``): when the disk fills, HDF5 retries its
    cached writes at every close and object release, printing a traceback each time and at worst
    crashing the interpreter. Once one write has failed the output is lost anyway, so the later
    writes are dropped, h5py closes quietly, and the caller reports ``failure`` once.
    """

    def __init__(self, path: Union[str, Path]) -> None:
        self._file = open(path, "w+b", buffering=0)  # noqa: SIM115  (closed by close())
        self.failure: Optional[OSError] = None

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._file.readinto(buffer)

    def write(self, data: Any) -> int:
        size = memoryview(data).nbytes
        if self.failure is None:
            try:
                written = self._file.write(data)
                return size if written is None else written
            except OSError as error:
                self.failure = error
        return size

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def truncate(self, size: Optional[int] = None) -> int:
        if self.failure is None:
            try:
                return self._file.truncate(size)
            except OSError as error:
                self.failure = error
        return self._file.tell() if size is None else size

    def flush(self) -> None:
        pass  # unbuffered: every write reached the system already

    def close(self) -> None:
        self._file.close()
        super().close()


def failed_write_errno(error: BaseException) -> Optional[int]:
    """The ``errno`` of a failed write: an ``OSError``'s own, or the one HDF5 reports inside the text
    of an h5py error (a full disk surfaces as ``RuntimeError: ... errno = 28 ...`` when h5py flushes);
    ``None`` for any other error."""
    if isinstance(error, OSError) and error.errno is not None:
        return error.errno
    if isinstance(error, (OSError, RuntimeError)):
        found = _HDF5_ERRNO.search(str(error))
        if found:
            return int(found.group(1))
    return None


def unwritable_folder_errno(folder: Union[str, Path]) -> Optional[int]:
    """Why nothing could be written in the existing ``folder``, found before any work starts: ``EROFS``
    when its file system is mounted read-only (``os.access`` would only say "no permission"),
    ``EACCES`` when we may not write in it, ``None`` when writing there can go ahead."""
    if os.statvfs(folder).f_flag & os.ST_RDONLY:
        return errno.EROFS
    if not os.access(folder, os.W_OK | os.X_OK):
        return errno.EACCES
    return None


def write_failure(path: Union[str, Path], code: int) -> str:
    """One line on a write to ``path`` that failed with ``code``: the path, the errno, what to do."""
    name = errno.errorcode.get(code, str(code))
    advice = {
        errno.ENOSPC: "free some space there or write to another folder",
        errno.EDQUOT: "free some space there or write to another folder",
        errno.EROFS: "that file system is read-only: write to another folder",
        errno.EACCES: "you may not write there: write to another folder",
        errno.EPERM: "you may not write there: write to another folder",
        errno.ENOENT: "its folder does not exist: create the folder first",
        errno.ENOTDIR: "a part of that path is a file, not a folder",
    }.get(code, "check the folder and the disk")
    return f"cannot write {path}: {os.strerror(code)} ({name}); {advice}"
