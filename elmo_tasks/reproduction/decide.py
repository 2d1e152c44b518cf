"""The one place that decides what happens to a run: reuse a finished run, skip it, or train it (anew,
from scratch over an old directory, or resuming an interrupted training with ``--recover``).

``training_step`` is the rule for any ``allennlp train`` directory, the task runs' and the fine-tuned
biLM's alike; ``decide`` adds, for a task run, the ways a finished run is reused, and what a raised
epoch cap or patience keeps (``stopping_rule``).
"""

import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Dict, List, Optional

from elmo_tasks.reproduction.plan import Job, Plan, RunPaths
from elmo_tasks.reproduction.records import (
    RECORD_VERSION,
    Record,
    finished_run_record,
    kept_record,
    read_record,
    same_settings,
    twin_record,
)
from elmo_tasks.reproduction.stopping_rule import (
    StoppingRule,
    asked_rule,
    described,
    epochs_trained,
    raised_from,
    reused_rule,
    reused_under,
)
from elmo_tasks.reproduction.task_table import TASKS


class Step(Enum):
    """What to do with a training directory."""

    DONE = "trained already with these settings"
    RESUME = "interrupted with these settings: resume from its checkpoints"
    EXTEND = (
        "trained (or interrupted) under a lower epoch cap or patience, all else the same: continue under the new one"
    )
    RESTART = "made with other settings, forced, or interrupted before its first checkpoint: train from scratch over it"
    TRAIN = "no directory yet: train"

    @property
    def flags(self) -> List[str]:
        """What ``allennlp train`` adds for this step."""
        return {Step.RESUME: ["--recover"], Step.EXTEND: ["--recover"], Step.RESTART: ["-f"]}.get(self, [])


def training_step(run_dir: Path, same: bool, finished: bool) -> Step:
    """``same``: the directory was made with the settings asked for; ``finished``: its training ended."""
    if same and finished:
        return Step.DONE
    if same and any(run_dir.glob("*_state_e*.th")):  # allennlp's checkpoints
        return Step.RESUME
    return Step.RESTART if run_dir.exists() else Step.TRAIN


class Reuse(Enum):
    """Where a reused run's record comes from."""

    RUN_DIR = "its finished run directory"
    RECORD = "its record in the records directory (no run directory)"
    TWIN = "the record of another variant's run that trained the same model"
    RAISED_RULE = "a run that a raised epoch cap or patience would have stopped where it stopped, all else the same"


@dataclass(frozen=True)
class Decision:
    """A run's fate: a ``record`` to reuse (``reuse`` says whence), a training ``step``, or neither (skipped);
    ``old_rule``: the lower stopping rule of a run reused or extended under a raised one."""

    record: Optional[Record] = None
    reuse: Optional[Reuse] = None
    step: Optional[Step] = None
    old_rule: Optional[StoppingRule] = None


def decide(plan: Plan, job: Job, settings: Dict[str, Any]) -> Decision:
    """What to do with ``job``, in this order: reuse its finished run directory, then (once that is gone)
    its kept record, then the record of another variant that trained the very same model, then a run
    that a raised cap or patience would have stopped where it stopped; with ``--reuse-only`` nothing else;
    else evaluate such a run whose record is missing, continue a run trained under a lower cap or patience,
    or take the training step its directory calls for. ``--force`` trains again whatever was there."""
    paths, force = plan.paths(job), plan.args.force
    name = paths.run_dir.name
    if not force:
        record = finished_run_record(paths.run_dir, settings)
        if record is not None:
            return Decision(record, Reuse.RUN_DIR)
        if not paths.run_dir.exists():
            record = kept_record(plan.records_dir, job.task, job.variant, name, settings)
            if record is not None:
                return Decision(record, Reuse.RECORD)
        record = twin_record(plan.records_dir, job.task, job.variant, name, settings)
        if record is not None:
            return Decision(record, Reuse.TWIN)
        same_stop = _stopped_as_the_raised_rule_would(plan, job, settings)
        if same_stop is not None:
            return same_stop
    if plan.args.reuse_only:
        return Decision()
    raised = None if force else _under_a_raised_rule(paths, settings)
    if raised is not None:
        return raised
    return Decision(step=training_step(paths.run_dir, not force and _trained_with(paths, settings), _trained(paths)))


def _stopped_as_the_raised_rule_would(plan: Plan, job: Job, settings: Dict[str, Any]) -> Optional[Decision]:
    """The reuse of the run's record (in its directory, else kept) when that run trained under a lower
    stopping rule, all else as ``settings``, and the rule of ``settings`` would have stopped it there."""
    paths = plan.paths(job)
    record_file = paths.run_dir / "record.json"
    if not (record_file.exists() and (paths.run_dir / "test_metrics.json").exists()):
        record_file = plan.records_dir / job.task / job.variant / f"{paths.run_dir.name}.json"
    if not record_file.exists():
        return None
    record = read_record(record_file)
    if record.get("record_version") != RECORD_VERSION or "trained_as" in record:
        return None
    old_rule = reused_rule(record, settings)
    if old_rule is None:
        return None
    return Decision(reused_under(record, settings, old_rule), Reuse.RAISED_RULE, old_rule=old_rule)


def _under_a_raised_rule(paths: RunPaths, settings: Dict[str, Any]) -> Optional[Decision]:
    """For a run directory trained under a lower stopping rule, all else as ``settings``: evaluate it
    (``Step.DONE``) when its training finished where the rule of ``settings`` would have stopped it too
    (only its evaluation is missing, e.g. one that failed), else continue it (``Step.EXTEND``) when it has
    checkpoints; None otherwise."""
    if not paths.settings_file.exists():
        return None
    checkpoints = any(paths.run_dir.glob("*_state_e*.th"))
    if not (checkpoints or _trained(paths)):
        return None
    old_rule = raised_from(json.loads(paths.settings_file.read_text()), settings)
    if old_rule is None:
        return None
    if _trained(paths) and old_rule.makes_the_same_stop(asked_rule(settings), _epochs_run(paths)):
        return Decision(step=Step.DONE, old_rule=old_rule)
    return Decision(step=Step.EXTEND, old_rule=old_rule) if checkpoints else None


def _epochs_run(paths: RunPaths) -> int:
    """The epochs a finished training ran, from its ``metrics.json`` (``epoch`` counts from 0)."""
    return int(json.loads((paths.run_dir / "metrics.json").read_text()).get("epoch", -1)) + 1


def _trained_with(paths: RunPaths, settings: Dict[str, Any]) -> bool:
    """Whether the directory's latest training command had ``settings``."""
    return paths.settings_file.exists() and same_settings(json.loads(paths.settings_file.read_text()), settings)


def _trained(paths: RunPaths) -> bool:
    # metrics.json comes at the end of training: an archive without it is the best epoch of an interrupted run
    return (paths.run_dir / "model.tar.gz").exists() and (paths.run_dir / "metrics.json").exists()


def reused_label(job: Job, decision: Decision, records_dir: Path) -> str:
    """The progress line's label of a reused run."""
    name = TASKS[job.task].run_name(job.split, job.seed_index)
    label = f"{job.task} {job.variant} {name}"
    if decision.reuse is Reuse.RECORD:
        return f"{label} (from its record in {records_dir}; no run directory)"
    if decision.reuse is Reuse.TWIN and decision.record is not None:
        return f"{label} (trained as {trained_as(decision.record, name)}: the same resolved config and seed)"
    if decision.reuse is Reuse.RAISED_RULE and decision.record is not None and decision.old_rule is not None:
        old, new = decision.old_rule, asked_rule(decision.record)
        epochs = epochs_trained(decision.record)
        why = "by patience" if old.stopped_by_patience(epochs) else "at its cap"
        return (
            f"{label} (stopped {why} after {epochs} epochs under {described(old, new)}: "
            f"the same run under {described(new, old)})"
        )
    return label


def trained_as(twin: Record, name: str) -> str:
    """The run (``variant/name``) that trained a twin's model: the twin's own, or the one it was copied from."""
    return twin.get("trained_as") or f"{twin['variant']}/{name}"
