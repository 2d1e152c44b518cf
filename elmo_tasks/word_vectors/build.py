"""One call that gives a GloVe-format vectors file for a corpus: reused when already built, else trained.

:func:`build_word_vectors` is what ``allennlp build-word-vectors`` and the reproduction harness call.
Nothing is lost on an interruption: the vectors are written beside the output under a hidden temporary
name (``.OUTPUT.*.partial``) and renamed into place when complete, and the record, written last, is what
makes a build reusable. Nothing is built twice at once: a second build of the same output waits for the
first under a lock, then reuses its vectors.
"""

import datetime
import logging
import os
import platform
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from elmo_tasks.atomic_files import WholeFile, unwritable_folder_errno, write_failure
from elmo_tasks.build_lock import build_lock
from elmo_tasks.word_vectors.corpus import check_corpus_path
from elmo_tasks.word_vectors.errors import WordVectorsError
from elmo_tasks.word_vectors.glove_format import write_glove_file
from elmo_tasks.word_vectors.options import WordVectorOptions
from elmo_tasks.word_vectors.record import (
    RECORD_FORMAT,
    file_sha256,
    mismatch,
    read_record,
    record_path,
    write_record,
)

if TYPE_CHECKING:
    from elmo_tasks.word_vectors.train import TrainedVectors

logger = logging.getLogger(__name__)

GLOVE_FORMAT_NAME = "GloVe text: a word then its values per line, separated by single spaces, no header"


def build_word_vectors(
    corpus: Path,
    output: Path,
    options: Optional[WordVectorOptions] = None,
    report: Optional[Callable[[str], None]] = None,
    force: bool = False,
) -> Dict[str, Any]:
    """Vectors trained on ``corpus`` written to ``output`` in the GloVe text format (``.gz``: compressed);
    returns the build's record (see :mod:`elmo_tasks.word_vectors.record`) with ``reused`` added: True when
    ``output`` and its record already matched the corpus's sha256 and ``options``, and nothing was trained.

    ``force`` rebuilds even then. ``report`` gets progress lines (default: this module's logger).
    Raises WordVectorsError (or its CorpusError) for a corpus or output path that cannot be used.
    """
    corpus, output = Path(corpus), Path(output)
    options = options or WordVectorOptions()
    report = report or logger.info
    check_corpus_path(corpus)
    _check_output_path(output, corpus)
    with build_lock(lock_path(output), f"the word vectors {output}", report):
        return _reuse_or_build(corpus, output, options, report, force)


def lock_path(output: Path) -> Path:
    """The lock (``.OUTPUT.lock`` beside it) under which one process at a time checks and builds ``output``:
    a second ``build-word-vectors`` to the same file waits for the first, then reuses its vectors."""
    final = Path(os.path.realpath(output))  # one lock for every path to the file, as WholeFile writes it
    return final.with_name(f".{final.name}.lock")


def _reuse_or_build(
    corpus: Path, output: Path, options: WordVectorOptions, report: Callable[[str], None], force: bool
) -> Dict[str, Any]:
    corpus_sha256 = file_sha256(corpus)
    if not force:
        record = read_record(output)
        why = mismatch(record, corpus_sha256, options, output)
        if not why:
            assert record is not None  # mismatch() is empty only for a record
            report(f"reusing {output}: its record {record_path(output).name} matches the corpus and options")
            return {**record, "reused": True}
        if output.exists() or record is not None:
            report(f"rebuilding {output}: {why}")

    from elmo_tasks.word_vectors.train import train_word_vectors

    trained = train_word_vectors(corpus, options, report)
    start = time.perf_counter()
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        record_path(output).unlink(missing_ok=True)  # the old record no longer describes what will be there
        with WholeFile(output) as partial:
            write_glove_file(partial, trained.words, trained.vectors, options.decimals, compress=_compressed(output))
    except OSError as error:  # a full disk, a read-only folder: one line, the earlier vectors as they were
        kept = f"{output} keeps its earlier content" if output.exists() else f"nothing was written to {output}"
        raise WordVectorsError(f"{write_failure(output, error.errno or 0)} ({kept})") from None
    record = _build_record(corpus, corpus_sha256, output, options, trained, time.perf_counter() - start)
    try:
        write_record(output, record)
    except OSError as error:
        raise WordVectorsError(
            f"{write_failure(record_path(output), error.errno or 0)} (the vectors in {output} are whole, but "
            "without their record the next run trains them again)"
        ) from None
    return {**record, "reused": False}


def _build_record(
    corpus: Path,
    corpus_sha256: str,
    output: Path,
    options: WordVectorOptions,
    trained: "TrainedVectors",
    writing_seconds: float,
) -> Dict[str, Any]:
    """What :func:`elmo_tasks.word_vectors.record.mismatch` later compares, and how the vectors were made."""
    import gensim

    return {
        "record_format": RECORD_FORMAT,
        "command": options.command_line(str(corpus), str(output)),
        "options": options.as_dict(),
        "algorithm": options.algorithm,
        "architecture": options.architecture,
        "dim": options.dim,
        "vocabulary_size": len(trained.words),
        "corpus": str(corpus),
        "corpus_sha256": corpus_sha256,
        "corpus_sentences": trained.sentences,
        "corpus_tokens": trained.tokens,
        "output": str(output),
        "output_format": GLOVE_FORMAT_NAME,
        "output_sha256": file_sha256(output),
        "gensim_version": gensim.__version__,
        "python_version": platform.python_version(),
        "training_seconds": round(trained.seconds, 2),
        "writing_seconds": round(writing_seconds, 2),
        "built_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _compressed(output: Path) -> bool:
    return output.suffix.lower() == ".gz"


def _check_output_path(output: Path, corpus: Path) -> None:
    """Raises WordVectorsError when writing ``output`` is impossible or would destroy the corpus."""
    if output.is_dir():
        raise WordVectorsError(f"the output {output} is a folder; expected the path of the vectors file to write")
    if output.exists() and os.path.samefile(output, corpus):
        raise WordVectorsError(
            f"the output {output} is the corpus {corpus} (the same file, maybe through a link); "
            "writing it would destroy the corpus: give another output path"
        )
    existing = output.parent.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise WordVectorsError(f"cannot write {output}: {existing} is a file, not a folder")
    code = unwritable_folder_errno(existing)
    if code is not None:
        raise WordVectorsError(f"{write_failure(output, code)} (checked in {existing} before any training)")
