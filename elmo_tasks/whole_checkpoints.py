"""Checkpoints that ``allennlp train --recover`` can always resume from, whatever stopped the run.

AllenNLP 2.10's ``Checkpointer.save_checkpoint`` writes ``model_state_eN_bM.th`` and then
``training_state_eN_bM.th`` with ``torch.save``, in place, and skips a file that already exists;
``find_latest_checkpoint`` (what ``--recover`` loads) takes the newest ``model_state_*`` there is. A stop
while a checkpoint is written leaves a file cut short or a model state without its training state,
and ``--recover`` then fails to load that newest pair until a user deletes it by hand. Two guards:

- SIGINT and SIGTERM (``allennlp train`` turns SIGTERM into ``SigTermReceived``; the reproduction harness
  stops its runs with it) wait while a checkpoint is written: their handlers are swapped for ones that
  only note the signal, and once both files are whole the earlier handlers come back and each noted
  signal is raised again, so the run stops exactly as it would have, one checkpoint later.
- A SIGKILL or a power cut cannot be made to wait, so what it leaves is found when the run resumes:
  ``find_latest_checkpoint`` returns the newest checkpoint whose two files are whole zip files (every
  member's checksum right) and moves each newer file aside, ``NAME.cut-short`` (not whole) or
  ``NAME.unpaired`` (whole, but its other half is cut short or missing), never deleting one, so that
  AllenNLP trains that epoch again and writes it instead of skipping the file. One warning line names
  the files moved and the checkpoint it resumes from.

And one gap of AllenNLP's own order: at the end of an epoch it saves the checkpoint and only then the best
model's ``best.th``. A stop between the two (deferred signals end with the checkpoint) left a checkpoint
whose metric tracker says its epoch is the best while ``best.th`` is missing (the first epoch: ``--recover``
then trained on and failed to archive, "best.th does not exist") or holds an earlier epoch (archived as
the best model without a word). When ``--recover`` resumes at the end of an epoch that its tracker says was
the best, that epoch's ``best.th`` is written again from the restored state, whole, as AllenNLP would
have written it (the moving average's weights where there is one).

:func:`install_whole_checkpoints` is called where a command starts (:mod:`elmo_tasks.command_start`).
"""

import functools
import logging
import os
import signal
import threading
import zipfile
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional, Tuple

from elmo_tasks.counted_nouns import counted

logger = logging.getLogger(__name__)

# the attribute our replacements carry, so that installing twice changes nothing
_WHOLE_MARK = "_elmo_tasks_whole_checkpoint"
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# what a checkpoint file moved aside is named after: its own name and one of these
CUT_SHORT = ".cut-short"  # not a whole torch file: a kill or power cut while it was written
UNPAIRED = ".unpaired"  # whole, but the other file of its checkpoint is cut short or missing

CheckpointPaths = Tuple[str, str]  # (model state, training state), as AllenNLP returns them


@contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM noted inside the block and raised again, in arrival order, once it ends.

    Only the main thread may set signal handlers; elsewhere (where Python would not run a handler
    either) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: List[signal.Signals] = []

    def note(signum: int, _frame: Any) -> None:
        arrived.append(signal.Signals(signum))

    earlier = {signum: signal.signal(signum, note) for signum in DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in earlier.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)


def whole_save_checkpoint(original: Callable[..., None]) -> Callable[..., None]:
    """``original`` (AllenNLP's ``Checkpointer.save_checkpoint``) with SIGINT and SIGTERM deferred."""

    @functools.wraps(original)
    def save_checkpoint(self: Any, trainer: Any) -> None:
        with signals_deferred():
            original(self, trainer)

    setattr(save_checkpoint, _WHOLE_MARK, True)
    return save_checkpoint


def is_whole_torch_file(path: str) -> bool:
    """Whether ``path`` is a whole file of ``torch.save``: a zip archive that zipfile opens, every member's
    checksum right. Reads the whole file: a power cut can leave a file of the right length whose end is
    zeros, which only the checksums show. A missing file is not whole; one we may not read raises
    ``OSError``, as loading it would."""
    try:
        contents = open(path, "rb")  # noqa: SIM115  (closed below, whatever zipfile raises)
    except FileNotFoundError:
        return False
    with contents:
        try:
            with zipfile.ZipFile(contents) as archive:
                return archive.testzip() is None
        except Exception:  # noqa: BLE001  (damaged zip data raises BadZipFile, EOFError, zlib.error, ValueError, ...)
            return False


def whole_latest_checkpoint(original: Callable[[Any], Optional[CheckpointPaths]]) -> Callable[..., Any]:
    """``original`` (AllenNLP's ``Checkpointer.find_latest_checkpoint``), asked again after moving its answer
    aside until both files of its answer are whole (or it has none); the files newer than the answer are
    moved aside (module docstring), with one warning line."""

    @functools.wraps(original)
    def find_latest_checkpoint(self: Any) -> Optional[CheckpointPaths]:
        moved: List[Tuple[str, str]] = []
        latest = original(self)
        while latest is not None:
            model_state, training_state = latest
            model_whole, training_whole = is_whole_torch_file(model_state), is_whole_torch_file(training_state)
            if model_whole and training_whole:
                break
            moved.extend(_moved_aside(model_state, model_whole))
            moved.extend(_moved_aside(training_state, training_whole))
            latest = original(self)
        moved.extend(_training_states_newer_than(self, latest))
        if moved:
            logger.warning(_resume_line(self, moved, latest))
        return latest

    setattr(find_latest_checkpoint, _WHOLE_MARK, True)
    return find_latest_checkpoint


def _moved_aside(path: str, whole: bool) -> List[Tuple[str, str]]:
    """``path`` renamed to ``path.cut-short`` (not ``whole``) or ``path.unpaired`` (or ``.1``, ``.2``... after
    that, never onto an earlier one): ``[(path, new name)]``, or ``[]`` when there is no such file (it
    never was written, or another worker of a distributed run moved it first)."""
    base = path + (UNPAIRED if whole else CUT_SHORT)
    aside, number = base, 0
    while os.path.lexists(aside):
        number += 1
        aside = f"{base}.{number}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return []
    return [(path, aside)]


def _training_states_newer_than(checkpointer: Any, latest: Optional[CheckpointPaths]) -> List[Tuple[str, str]]:
    """Training states with no model state, newer than ``latest``, moved aside: AllenNLP looks for
    checkpoints by their model state alone, and would later skip writing a training state of that name."""
    folder = checkpointer._serialization_dir
    if not os.path.isdir(folder):  # nothing saved yet
        return []
    newest_kept = (-1, -1) if latest is None else checkpointer._parse_model_state_path(latest[0])
    moved: List[Tuple[str, str]] = []
    for name in sorted(os.listdir(folder)):
        point = checkpointer._parse_training_state_path(name)
        if point is None or point <= newest_kept:
            continue
        path = checkpointer._training_state_path(*point)
        if os.path.basename(path) == name and not os.path.exists(checkpointer._model_state_path(*point)):
            moved.extend(_moved_aside(path, is_whole_torch_file(path)))
    return moved


def _resume_line(checkpointer: Any, moved: List[Tuple[str, str]], latest: Optional[CheckpointPaths]) -> str:
    """The warning: which files were moved aside, why, and where training goes on from."""
    files = ", ".join(f"{os.path.basename(path)} to {os.path.basename(aside)}" for path, aside in moved)
    if latest is None:
        resumed = "no whole checkpoint is left there, so training starts from the first epoch"
    else:
        epochs, batches = checkpointer._parse_model_state_path(latest[0])
        within = f" and {counted(batches, 'batch', 'batches')} of the next" if batches else ""
        resumed = (
            f"resuming from {os.path.basename(latest[0])} and {os.path.basename(latest[1])} "
            f"(after {counted(epochs, 'epoch')}{within}); what came after it is trained again"
        )
    return (
        f"checkpoints in {checkpointer._serialization_dir} were not written whole (a kill or a power cut while "
        f"they were written): moved {files} ({CUT_SHORT}: the file is cut short; {UNPAIRED}: whole, but the other "
        f"file of its checkpoint is cut short or missing); {resumed}"
    )


def best_model_of_restored_epoch(original: Callable[[Any], None]) -> Callable[[Any], None]:
    """``original`` (``GradientDescentTrainer._maybe_restore_checkpoint``), then the restored epoch's
    ``best.th`` where its metric tracker says that epoch was the best (see the module's docstring)."""

    @functools.wraps(original)
    def _maybe_restore_checkpoint(self: Any) -> None:
        from elmo_tasks.allennlp_internals import resumed_at_the_end_of_its_best_epoch

        original(self)
        if resumed_at_the_end_of_its_best_epoch(self):
            _write_best_model(self)

    setattr(_maybe_restore_checkpoint, _WHOLE_MARK, True)
    return _maybe_restore_checkpoint


def _write_best_model(trainer: Any) -> None:
    """The trainer's ``best.th`` from its model as it is now, written whole (a new file renamed into place)."""
    from elmo_tasks.allennlp_internals import best_model_file, save_best_model_state, set_best_model_file

    path = best_model_file(trainer)
    partial = path + ".partial"
    with signals_deferred():
        save_best_model_state(trainer, partial)
        os.replace(partial, path)
    set_best_model_file(trainer, path)


def install_whole_checkpoints() -> None:
    """Replaces ``Checkpointer.save_checkpoint`` and ``find_latest_checkpoint`` (subclasses that do not
    override them included) and ``GradientDescentTrainer._maybe_restore_checkpoint``; idempotent."""
    from allennlp.training.checkpointer import Checkpointer
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer

    if not getattr(GradientDescentTrainer._maybe_restore_checkpoint, _WHOLE_MARK, False):
        GradientDescentTrainer._maybe_restore_checkpoint = best_model_of_restored_epoch(  # type: ignore[method-assign,assignment]
            GradientDescentTrainer._maybe_restore_checkpoint
        )

    if not getattr(Checkpointer.save_checkpoint, _WHOLE_MARK, False):
        Checkpointer.save_checkpoint = whole_save_checkpoint(  # type: ignore[method-assign]
            Checkpointer.save_checkpoint
        )
    if not getattr(Checkpointer.find_latest_checkpoint, _WHOLE_MARK, False):
        Checkpointer.find_latest_checkpoint = whole_latest_checkpoint(  # type: ignore[method-assign]
            Checkpointer.find_latest_checkpoint
        )
