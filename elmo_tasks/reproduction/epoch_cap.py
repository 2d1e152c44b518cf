"""A raised epoch cap keeps the training already done.

A run trains until validation has not improved for ``trainer.patience`` epochs, or until its cap
``trainer.num_epochs``. When a budget's cap is raised and nothing else changes:

- a run that stopped by patience before the old cap is the run the new cap asks for (the cap was never
  reached, so it changed nothing), and its record is reused;
- a run that reached the old cap, or was interrupted before it, continues from its last checkpoint with
  ``allennlp train --recover``, as an interrupted run resumes (the data order of the added epochs comes
  from the resumed process's seeds, as in any resumed run).

This holds only while no part of training depends on the cap: a learning-rate schedule that spreads over
``num_epochs`` (a slanted triangle, a warm-up, a polynomial decay) would have been a different schedule.
"""

import json
from pathlib import Path
from typing import Any, Dict, Optional

from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.commands import RunFailed

CAP = "trainer.num_epochs"
# Learning-rate schedules that do not read num_epochs (None: no schedule).
CAP_FREE_SCHEDULES = (None, "constant", "exponential", "reduce_lr_on_plateau", "step", "multi_step")


def raised_from(previous: Dict[str, Any], settings: Dict[str, Any]) -> Optional[int]:
    """The lower cap ``previous`` (a record or a run's saved settings) was made with, when it differs from
    ``settings`` by that cap alone and its training did not depend on the cap; else None."""
    old, new = previous.get("overrides", {}).get(CAP), settings["overrides"].get(CAP)
    if not (isinstance(old, int) and isinstance(new, int) and old < new):
        return None
    if _without_cap(previous.get("overrides", {})) != _without_cap(settings["overrides"]):
        return None
    unchanged = (key for key in settings if key not in ("overrides", "config_sha256"))
    if any(previous.get(key) != settings[key] for key in unchanged):
        return None
    # the config files must still give the previous run's config under its own overrides: then the two
    # configs differ by the overridden cap only
    try:
        config = configs.resolved_config(previous["config"], previous["data"], previous["overrides"], previous["env"])
    except RunFailed:
        return None
    if configs.config_fingerprint(config) != previous.get("config_sha256"):
        return None
    schedule = config.get("trainer", {}).get("learning_rate_scheduler")
    return old if (schedule or {}).get("type") in CAP_FREE_SCHEDULES else None


def _without_cap(overrides: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in overrides.items() if key != CAP}


def epochs_trained(record: Dict[str, Any]) -> int:
    """How many epochs a finished run trained: one validation per epoch."""
    return len(record.get("validation_curve") or [])


def stopped_early(record: Dict[str, Any], cap: int) -> bool:
    """Whether a finished run under ``cap`` stopped by patience before reaching it."""
    return 0 < epochs_trained(record) < cap


def cap_stopped_under(record: Dict[str, Any], settings: Dict[str, Any]) -> Optional[int]:
    """The lower cap a finished run stopped by patience before, all else as ``settings``: then it is the
    run ``settings`` ask for; else None."""
    old_cap = raised_from(record, settings)
    return old_cap if old_cap is not None and stopped_early(record, old_cap) else None


def reused_under(record: Dict[str, Any], settings: Dict[str, Any], old_cap: int) -> Dict[str, Any]:
    """The record of a run that stopped early under ``old_cap``, as the run ``settings`` ask for."""
    return {**record, **settings, "epoch_cap_raised_from": old_cap}


# In a run directory: the cap it first trained under, once a raised cap continued it (``allennlp train -f``
# removes the directory, and the file with it, when the run is trained again from scratch).
FIRST_CAP_FILE = "epoch_cap_raised_from.json"


def open_for_more_epochs(run_dir: Path, cap: int, old_cap: int) -> None:
    """Makes a run directory that trained to ``old_cap`` continue to ``cap`` under ``--recover``:
    allennlp resumes only under the config it saved, so the saved cap is raised; the files of the
    finished training go, so that an interruption now reads as an interrupted run, not a finished one."""
    first_cap_file = run_dir / FIRST_CAP_FILE
    if not first_cap_file.exists():
        first_cap_file.write_text(json.dumps(old_cap))
    config_file = run_dir / "config.json"
    config = json.loads(config_file.read_text())
    config["trainer"]["num_epochs"] = cap
    config_file.write_text(json.dumps(config, indent=4))
    for name in ("metrics.json", "model.tar.gz", "record.json"):
        (run_dir / name).unlink(missing_ok=True)
    for metrics_file in run_dir.glob("test*_metrics.json"):
        metrics_file.unlink()


def first_cap(run_dir: Path) -> Optional[int]:
    """The cap a run directory first trained under, if a raised cap has continued it since."""
    first_cap_file = run_dir / FIRST_CAP_FILE
    return json.loads(first_cap_file.read_text()) if first_cap_file.exists() else None
