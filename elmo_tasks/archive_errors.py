"""One line for a model archive that cannot be loaded: truncated, corrupt, or not a model archive at all.

AllenNLP's ``load_archive`` (``allennlp predict``, ``allennlp evaluate``, ``Predictor.from_path``, our
commands) ends with whatever its failing step raised, as a traceback: ``EOFError: Compressed file
ended before the end-of-stream marker was reached`` for a truncated ``model.tar.gz``,
``tarfile.ReadError`` for a file that is no gzip, ``FileNotFoundError`` naming a temporary folder for
an archive without ``config.json``, torch's ``PytorchStreamReader failed ...`` for broken weights,
``UnicodeDecodeError`` for a broken vocabulary.

:func:`archive_problem` reads the archive without extracting it (a ``.tar.gz`` as a stream, every
member to its end, so the gzip checksum covers the whole file; a serialization folder file by file)
and says in one line, naming the archive, what is wrong with it and what to do; None when it finds
nothing wrong, so that a failure that is not the archive's keeps its traceback. It costs one read
of the archive and runs only after a load failed. :func:`load_model_archive` is ``load_archive`` with
that line as an :class:`ArchiveFileError`, for our commands; :mod:`elmo_tasks.input_errors` gives
the same line for AllenNLP's own commands.
"""

import json
import os
import tarfile
import tempfile
import zipfile
import zlib
from typing import IO, TYPE_CHECKING, Any, Dict, List, Optional, Union, cast

from elmo_tasks.vocabulary_files import VocabularyFileError, check_vocabulary_files, vocabulary_folder_problem

if TYPE_CHECKING:
    from allennlp.models.archival import Archive

PathLike = Union[str, "os.PathLike[str]"]

CONFIG_FILE = "config.json"  # allennlp.models.archival.CONFIG_NAME
ARCHIVE_WEIGHTS = "weights.th"  # the weights inside a model.tar.gz (allennlp.models.archival._WEIGHTS_NAME)
FOLDER_WEIGHTS = "best.th"  # a serialization folder's best weights (allennlp.models.model._DEFAULT_WEIGHTS)
VOCABULARY_FOLDER = "vocabulary"
ARCHIVE_EXPECTED = "a model.tar.gz written by `allennlp train` (or its serialization folder)"
REMEDY = "copy or download it again, or re-create it (`allennlp train`, or archive_model on its serialization folder)"
# Members of an exported biLM (`allennlp export-bilm`): such a folder or tar is no model archive.
BILM_FILES = ("options.json", "weights.hdf5")
# Reading a member to its end checks the gzip stream; members up to this size stay in memory.
_KEPT_IN_MEMORY = 64 * 1024 * 1024


class ArchiveFileError(ValueError):
    """A model archive (``model.tar.gz`` or serialization folder) that cannot be loaded; the one-line
    message names it, says what is wrong and what to do."""


def load_model_archive(archive_file: str, **load_arguments: Any) -> "Archive":
    """``allennlp.models.archival.load_archive(archive_file, **load_arguments)``; raises
    :class:`ArchiveFileError` with :func:`archive_problem`'s line when the load fails because of the
    archive (or of ``weights_file``), and the original error otherwise."""
    from allennlp.models.archival import load_archive

    try:
        return load_archive(archive_file, **load_arguments)
    except Exception as error:  # noqa: BLE001  (told apart by reading the archive)
        problem = archive_problem(archive_file, load_arguments.get("weights_file"), error)
        if problem is None:
            raise
        raise ArchiveFileError(problem) from None


def archive_problem(
    archive_file: PathLike, weights_file: Optional[str] = None, error: Optional[BaseException] = None
) -> Optional[str]:
    """What is wrong with ``archive_file`` (and ``weights_file``, the weights asked for in place of the
    archive's), in one line; None if nothing is (or it is a URL, which AllenNLP's cache fetched).
    ``error``: what the load raised, which tells weights that do not fit the model from a sound archive."""
    from elmo_tasks.pretrained.catalogue import PretrainedModelError, archive_path

    try:
        path = archive_path(os.fspath(archive_file))  # a shipped model's name: its archive
    except PretrainedModelError as unknown:
        return str(unknown)
    if "://" in path:
        return None
    try:
        if not os.path.exists(path):
            return f"{path} does not exist; expected {ARCHIVE_EXPECTED}"
        if os.path.isdir(path):
            problem = _folder_problem(path, needs_weights=weights_file is None)
        else:
            problem = _file_problem(path, needs_weights=weights_file is None)
        if problem is None and weights_file:
            problem = _weights_file_problem(weights_file)
    except OSError as failure:  # unreadable (permissions, a disk error)
        return f"cannot read {path}: {failure.strerror or failure}; expected {ARCHIVE_EXPECTED}"
    if problem is None and error is not None:
        problem = _weights_mismatch(path, error)
    return problem


def _file_problem(path: str, needs_weights: bool) -> Optional[str]:
    """A ``model.tar.gz``: gzip, read to its end, with the members a model archive has."""
    with open(path, "rb") as handle:
        head = handle.read(8)
    if not head.startswith(b"\x1f\x8b"):
        return f"{path} {_what_it_is(path, head)}; expected {ARCHIVE_EXPECTED}"
    kept: Dict[str, bytes] = {}
    names: List[str] = []
    weights_problem: Optional[str] = None
    member_name = "its first member"
    try:
        with tarfile.open(path, "r:gz") as archive:
            for member in archive:
                member_name = f"member {member.name!r}"
                names.append(member.name.rstrip("/"))
                if not member.isfile():
                    continue
                contents = archive.extractfile(member)
                assert contents is not None  # a regular file
                if member.name == ARCHIVE_WEIGHTS:
                    weights_problem = _torch_file_problem(contents, f"{path}, member {ARCHIVE_WEIGHTS}")
                elif member.name == CONFIG_FILE or member.name.startswith(VOCABULARY_FOLDER + "/"):
                    kept[member.name] = contents.read()
                else:
                    _read_to_end(contents)
            member_name = "the end of the archive"
            _read_to_end(cast(IO[bytes], archive.fileobj))  # to the gzip stream's end, where its checksum is checked
    except EOFError:
        return (
            f"{path} is truncated: its data ends inside {member_name} (an incomplete copy or download); "
            f"expected {ARCHIVE_EXPECTED}: {REMEDY}"
        )
    except (tarfile.TarError, zlib.error, OSError) as failure:  # OSError: gzip's BadGzipFile (CRC check failed)
        return f"{path} is corrupt ({_reason(failure)}, reading {member_name}); expected {ARCHIVE_EXPECTED}: {REMEDY}"
    where = f"{path}, member"
    if CONFIG_FILE not in kept:
        return _not_a_model_archive(path, names)
    config_problem = _config_problem(f"{where} {CONFIG_FILE}", kept[CONFIG_FILE])
    if config_problem is not None:
        return config_problem
    if needs_weights and ARCHIVE_WEIGHTS not in names:
        return f"{path} holds no {ARCHIVE_WEIGHTS} (the trained weights); expected {ARCHIVE_EXPECTED}: {REMEDY}"
    if weights_problem is not None:
        return weights_problem
    if VOCABULARY_FOLDER not in names:
        return f"{path} holds no {VOCABULARY_FOLDER}/ folder; expected {ARCHIVE_EXPECTED}: {REMEDY}"
    prefix = VOCABULARY_FOLDER + "/"
    vocabulary = {
        name[len(prefix) :]: contents
        for name, contents in kept.items()
        if name.startswith(prefix) and "/" not in name[len(prefix) :] and not name[len(prefix) :].startswith(".")
    }
    try:
        check_vocabulary_files(f"{where} {VOCABULARY_FOLDER}", vocabulary)
    except VocabularyFileError as failure:
        return str(failure)
    return None


def _folder_problem(path: str, needs_weights: bool) -> Optional[str]:
    """A serialization folder: ``config.json``, ``best.th`` (or ``weights.th``) and ``vocabulary/``."""
    config_path = os.path.join(path, CONFIG_FILE)
    if not os.path.isfile(config_path):
        return _not_a_model_archive(path, sorted(os.listdir(path)))
    with open(config_path, "rb") as handle:
        config_problem = _config_problem(config_path, handle.read())
    if config_problem is not None:
        return config_problem
    if needs_weights:
        weights = [os.path.join(path, name) for name in (ARCHIVE_WEIGHTS, FOLDER_WEIGHTS)]
        present = [weights_path for weights_path in weights if os.path.isfile(weights_path)]
        if not present:
            return (
                f"{path} holds neither {ARCHIVE_WEIGHTS} nor {FOLDER_WEIGHTS} (the trained weights: is the training "
                f"finished?); expected {ARCHIVE_EXPECTED}"
            )
        problem = _weights_file_problem(present[0])
        if problem is not None:
            return problem
    return vocabulary_folder_problem(os.path.join(path, VOCABULARY_FOLDER))


def _not_a_model_archive(path: str, names: List[str]) -> str:
    """The line for an archive or folder without ``config.json``, saying what it seems to hold instead."""
    if all(name in names for name in BILM_FILES):
        return (
            f"{path} holds an exported biLM ({', '.join(BILM_FILES)}), not a trained model; expected "
            f"{ARCHIVE_EXPECTED}; a biLM's files go to --options-file and --weight-file (or ELMO_OPTIONS and "
            "ELMO_WEIGHTS)"
        )
    nested = sorted(name for name in names if name.endswith("/" + CONFIG_FILE))
    if nested:
        folder = nested[0][: -len(CONFIG_FILE) - 1]
        return (
            f"{path} holds {nested[0]} inside the folder {folder}/, but AllenNLP reads {CONFIG_FILE} at the top of "
            f"the archive; expected {ARCHIVE_EXPECTED}: archive the folder's contents, e.g. "
            f"`tar -C {folder} -czf model.tar.gz .`"
        )
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "") if names else "nothing"
    return (
        f"{path} holds no {CONFIG_FILE} (it holds {shown}), so it is not a model archive; expected {ARCHIVE_EXPECTED}"
    )


def _config_problem(where: str, contents: bytes) -> Optional[str]:
    """``config.json`` must be a UTF-8 JSON object naming its model's type."""
    try:
        config = json.loads(contents.decode("utf-8"))
    except UnicodeDecodeError:
        return f"{where} is not UTF-8 text; expected the JSON config `allennlp train` writes: {REMEDY}"
    except json.JSONDecodeError as failure:
        return (
            f"{where}, line {failure.lineno}: not valid JSON ({failure.msg}, column {failure.colno}); expected "
            f"the JSON config `allennlp train` writes: {REMEDY}"
        )
    model = config.get("model") if isinstance(config, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("type"), str):
        return f'{where} names no model type (no "model": {{"type": ...}}); expected the config of a trained model'
    return None


def _weights_file_problem(weights_path: str) -> Optional[str]:
    """A weights file (``best.th``, ``weights.th``, ``model_state_e9.th``) must be a whole torch file."""
    if not os.path.isfile(weights_path):
        return f"{weights_path} does not exist; expected the weights of the archive's model (e.g. best.th)"
    with open(weights_path, "rb") as handle:
        return _torch_file_problem(handle, weights_path)


def _torch_file_problem(contents: IO[bytes], where: str) -> Optional[str]:
    """``torch.save`` writes a zip archive: one that zipfile reads, with every member's CRC right.
    Reads ``contents`` to its end (for a tar member: so that the gzip stream is checked too)."""
    with tempfile.SpooledTemporaryFile(max_size=_KEPT_IN_MEMORY) as copy:
        while True:
            block = contents.read(1 << 20)
            if not block:
                break
            copy.write(block)
        copy.seek(0)
        if not zipfile.is_zipfile(copy):
            return (
                f"{where} is not a whole torch weights file (no zip directory at its end: truncated, or not written "
                f"by torch.save); {REMEDY}"
            )
        copy.seek(0)
        try:
            with zipfile.ZipFile(copy) as weights:
                broken = weights.testzip()
        except Exception as failure:  # noqa: BLE001  (zipfile on damaged data: BadZipFile, ValueError, zlib.error, ...)
            return f"{where} is corrupt ({_reason(failure)}); {REMEDY}"
    if broken is not None:
        return f"{where} is corrupt (the checksum of its part {broken!r} is wrong); {REMEDY}"
    return None


def _weights_mismatch(path: str, error: BaseException) -> Optional[str]:
    """The line for weights that do not fit the model that ``config.json`` and ``vocabulary/`` build
    (torch's or AllenNLP's state-dict error), e.g. a vocabulary file cut short or from another run."""
    message = str(error)
    if not isinstance(error, RuntimeError) or not message.startswith(
        ("Error(s) in loading state_dict", "Error loading")
    ):
        return None
    details = [line.strip() for line in message.splitlines()[1:] if line.strip()]
    first = details[0] if details else message.splitlines()[0]
    return (
        f"{path}: its weights do not fit the model its {CONFIG_FILE} and {VOCABULARY_FOLDER}/ build ({first}); its "
        f"files do not belong together (a vocabulary file cut short or replaced?): {REMEDY}"
    )


def _what_it_is(path: str, head: bytes) -> str:
    """What a file that is no gzip seems to be, for the message: ``is ...``."""
    if head.startswith(b"\x89HDF"):
        return "is an hdf5 file (a biLM's weights.hdf5? those go to --weight-file or ELMO_WEIGHTS), not a model archive"
    if head.startswith(b"PK"):
        return (
            "is a zip file (a torch weights file such as best.th? give its serialization folder), not a model archive"
        )
    if not head:
        return "is empty"
    try:
        with tarfile.open(path, "r:"):
            return (
                "is an uncompressed tar, where AllenNLP reads a gzip-compressed one (compress it: gzip -c FILE > "
                "model.tar.gz)"
            )
    except (tarfile.TarError, OSError, EOFError):
        return "is neither a gzip-compressed nor a plain tar"


def _read_to_end(contents: IO[bytes]) -> None:
    while contents.read(1 << 20):
        pass


def _reason(failure: BaseException) -> str:
    """An exception as ``Type: message``, on one line."""
    text = " ".join(str(failure).split())
    return f"{type(failure).__name__}: {text}" if text else type(failure).__name__
