"""A raised epoch cap or patience keeps the training already done.

A run trains until validation has not improved for ``trainer.patience`` epochs, or until its cap
``trainer.num_epochs``: its stopping rule. Neither changes what an epoch does, so when a budget raises
either one and nothing else changes, the epochs a run trained under the old rule are the first epochs of
the run the new rule asks for:

- a run whose stop the new rule makes too (it stopped by patience, and the patience is the same; or it
  reached its cap, and the cap is the same) is the run the new rule asks for, and its record is reused;
- any other run, or one interrupted, continues from its last checkpoint with ``allennlp train --recover``,
  as an interrupted run resumes (the data order of the added epochs comes from the resumed process's
  seeds, as in any resumed run; AllenNLP keeps the count of epochs without improvement, not the patience,
  in its checkpoints, so the new patience applies from there).

This holds only while no part of training depends on the cap: a learning-rate schedule that spreads over
``num_epochs`` (a slanted triangle, a warm-up, a polynomial decay) would have been a different schedule.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.allennlp_runs import RunFailed

CAP = "trainer.num_epochs"
PATIENCE = "trainer.patience"
# Learning-rate schedules that do not read num_epochs (None: no schedule).
CAP_FREE_SCHEDULES = (None, "constant", "exponential", "reduce_lr_on_plateau", "step", "multi_step")


@dataclass(frozen=True)
class StoppingRule:
    """When a run stops: after ``cap`` epochs, or after ``patience`` epochs without improvement (None:
    no early stopping, or the config file's patience where the overrides do not set one)."""

    cap: int
    patience: Optional[int]

    def stops_no_later_than(self, other: "StoppingRule") -> bool:
        patience_no_later = other.patience is None or (self.patience is not None and self.patience <= other.patience)
        return self.cap <= other.cap and patience_no_later

    def stopped_by_patience(self, epochs: int) -> bool:
        """Whether a finished run that trained ``epochs`` under this rule stopped before its cap."""
        return 0 < epochs < self.cap

    def makes_the_same_stop(self, other: "StoppingRule", epochs: int) -> bool:
        """Whether a run that trained ``epochs`` under this rule would stop there under ``other`` (which
        stops no earlier): the limit that stopped it is unchanged."""
        if self.stopped_by_patience(epochs):
            return other.patience == self.patience
        return other.cap == self.cap


def described(rule: StoppingRule, other: StoppingRule) -> str:
    """``rule`` where it differs from ``other``: "a cap of 15", "patience 3", "a cap of 15 and patience 3"."""
    parts = [f"a cap of {rule.cap}"] if rule.cap != other.cap else []
    if rule.patience != other.patience:
        parts.append("no patience" if rule.patience is None else f"patience {rule.patience}")
    return " and ".join(parts)


def _rule(overrides: Dict[str, Any]) -> Optional[StoppingRule]:
    cap, patience = overrides.get(CAP), overrides.get(PATIENCE)
    if not isinstance(cap, int) or not (patience is None or isinstance(patience, int)):
        return None
    return StoppingRule(cap, patience)


def _without_rule(overrides: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in overrides.items() if key not in (CAP, PATIENCE)}


def raised_from(previous: Dict[str, Any], settings: Dict[str, Any]) -> Optional[StoppingRule]:
    """The stopping rule ``previous`` (a record or a run's saved settings) was made with, when it differs
    from ``settings`` by a raised cap or patience alone and its training did not depend on the cap; else
    None."""
    old_overrides, new_overrides = previous.get("overrides", {}), settings["overrides"]
    old, new = _rule(old_overrides), _rule(new_overrides)
    if old is None or new is None or old == new or not old.stops_no_later_than(new):
        return None
    if (PATIENCE in old_overrides) != (PATIENCE in new_overrides):  # one of them is the config file's
        return None
    unchanged = (key for key in settings if key not in ("overrides", "config_sha256"))
    if any(previous.get(key) != settings[key] for key in unchanged):
        return None
    # today's overrides with the previous rule must give the previous run's config: then the two configs
    # differ by the overridden rule only (the other overrides may be written otherwise, e.g. a setting
    # moved between the experiment file and the budget, as long as they resolve the same)
    with_old_rule = {
        **_without_rule(new_overrides),
        **{key: old_overrides[key] for key in (CAP, PATIENCE) if key in old_overrides},
    }
    try:
        config = configs.resolved_config(settings["config"], settings["data"], with_old_rule, settings["env"])
    except RunFailed:
        return None
    if configs.config_fingerprint(config) != previous.get("config_sha256"):
        return None
    schedule = config.get("trainer", {}).get("learning_rate_scheduler")
    return old if (schedule or {}).get("type") in CAP_FREE_SCHEDULES else None


def epochs_trained(record: Dict[str, Any]) -> int:
    """How many epochs a finished run trained: one validation per epoch."""
    return len(record.get("validation_curve") or [])


def asked_rule(settings: Dict[str, Any]) -> StoppingRule:
    """The stopping rule of ``settings`` (whose overrides set a cap, as every budget's do)."""
    rule = _rule(settings["overrides"])
    if rule is None:
        raise ValueError(f"no epoch cap among the overrides {settings['overrides']}")
    return rule


def reused_rule(record: Dict[str, Any], settings: Dict[str, Any]) -> Optional[StoppingRule]:
    """The lower rule a finished run trained under, all else as ``settings``, when the rule of ``settings``
    would have stopped it where it stopped: then it is the run ``settings`` ask for; else None."""
    old = raised_from(record, settings)
    if old is None or not old.makes_the_same_stop(asked_rule(settings), epochs_trained(record)):
        return None
    return old


def raised_fields(first: StoppingRule, settings: Dict[str, Any]) -> Dict[str, Optional[int]]:
    """What a record says of the rule its run first trained under, where ``settings`` raised it."""
    asked = asked_rule(settings)
    fields: Dict[str, Optional[int]] = {}
    if first.cap != asked.cap:
        fields["epoch_cap_raised_from"] = first.cap
    if PATIENCE in settings["overrides"] and first.patience != asked.patience:
        fields["patience_raised_from"] = first.patience
    return fields


def reused_under(record: Dict[str, Any], settings: Dict[str, Any], old: StoppingRule) -> Dict[str, Any]:
    """The record of a run that stopped under ``old`` where ``settings`` would stop it, as their run."""
    return {**record, **settings, **raised_fields(old, settings)}


# In a run directory: the rule it first trained under, once a raised rule continued it (``allennlp train -f``
# removes the directory, and the file with it, when the run is trained again from scratch).
FIRST_RULE_FILE = "stopping_rule_raised_from.json"
FIRST_CAP_FILE = "epoch_cap_raised_from.json"  # the cap alone, as directories continued before kept it


def open_for_more_epochs(run_dir: Path, settings: Dict[str, Any], old: StoppingRule) -> None:
    """Makes a run directory that trained under ``old`` go on under the rule of ``settings`` with
    ``--recover``: allennlp resumes only under the config it saved, so the saved cap and patience are
    raised; the files of the finished training go, so that an interruption now reads as an interrupted
    run, not a finished one."""
    if not (run_dir / FIRST_RULE_FILE).exists():
        first = first_rule(run_dir) or old
        (run_dir / FIRST_RULE_FILE).write_text(json.dumps({"cap": first.cap, "patience": first.patience}))
    config_file = run_dir / "config.json"
    config = json.loads(config_file.read_text())
    config["trainer"]["num_epochs"] = settings["overrides"][CAP]
    if PATIENCE in settings["overrides"]:
        config["trainer"]["patience"] = settings["overrides"][PATIENCE]
    config_file.write_text(json.dumps(config, indent=4))
    for name in ("metrics.json", "model.tar.gz", "record.json"):
        (run_dir / name).unlink(missing_ok=True)
    for metrics_file in run_dir.glob("test*_metrics.json"):
        metrics_file.unlink()


def first_rule(run_dir: Path) -> Optional[StoppingRule]:
    """The rule a run directory first trained under, if a raised rule has continued it since."""
    if (run_dir / FIRST_RULE_FILE).exists():
        return StoppingRule(**json.loads((run_dir / FIRST_RULE_FILE).read_text()))
    if (run_dir / FIRST_CAP_FILE).exists():  # only the cap was raised then: the saved patience is the first one
        config = json.loads((run_dir / "config.json").read_text())
        return StoppingRule(json.loads((run_dir / FIRST_CAP_FILE).read_text()), config["trainer"].get("patience"))
    return None
