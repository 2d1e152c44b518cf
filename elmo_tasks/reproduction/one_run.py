"""One run: reused, skipped, or trained (under a lock), evaluated on every test file and recorded."""

import datetime
import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from elmo_tasks.config_defaults import DEFAULTS
from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.allennlp_runs import ALLENNLP, ROOT, RunFailed, git_commit, run_allennlp, say, shown
from elmo_tasks.reproduction.decide import Decision, Reuse, Step, decide, reused_label, trained_as
from elmo_tasks.reproduction.devices import evaluation_flags
from elmo_tasks.reproduction.finetune import prepare_finetuned_bilm
from elmo_tasks.reproduction.locks import run_lock
from elmo_tasks.reproduction.plan import Job, Plan, RunPaths
from elmo_tasks.reproduction.progress import Progress
from elmo_tasks.reproduction.records import Record, build_record, save_record, save_run_record
from elmo_tasks.reproduction.stopping_rule import StoppingRule, first_rule, open_for_more_epochs, raised_fields
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.reproduction.training_time import seconds_spent, timed_sitting
from elmo_tasks.reproduction.word_vectors import prepare_word_vectors
from elmo_tasks.tasks.official_files import where_to_get

# What a training step prints about the run directory it finds.
STEP_MESSAGES = {
    Step.DONE: "trained already, evaluating",
    Step.RESUME: "interrupted, resuming (--recover)",
    Step.EXTEND: "trained under a lower epoch cap or patience, continuing from its last checkpoint (--recover)",
    Step.RESTART: "made with other settings, forced, or interrupted before its first checkpoint: training from scratch",
}


def run_one(plan: Plan, job: Job, progress: Progress) -> Optional[Record]:
    """Reuses, skips or trains (then evaluates and records) one run, as ``decide`` says; raises RunFailed."""
    settings = plan.settings(job.task, plan.variants(job.task)[job.variant], job.split)
    decision = decide(plan, job, settings)
    if decision.step is not None:
        progress.start(_label(job))
        with run_lock(plan.paths(job).lock):
            decision = decide(plan, job, settings)  # again, holding the run: another process may have finished it
            if decision.step is not None:
                record = _train_and_evaluate(plan, job, settings, decision.step, decision.old_rule)
                progress.finished()
                return save_run_record(record, plan.paths(job).run_dir, plan.records_dir, plan.budget)
    return _reuse(plan, job, decision, progress)


def _label(job: Job) -> str:
    return f"{job.task} {job.variant} {TASKS[job.task].run_name(job.split, job.seed_index)}"


def _reuse(plan: Plan, job: Job, decision: Decision, progress: Progress) -> Optional[Record]:
    """Records a reused run where it belongs (a twin under this variant's name); nothing for a skipped one."""
    if decision.record is None:
        progress.skipped(_label(job))
        return None
    progress.reused(reused_label(job, decision, plan.records_dir))
    paths = plan.paths(job)
    if decision.reuse is Reuse.RUN_DIR or (decision.reuse is Reuse.RAISED_RULE and paths.run_dir.exists()):
        return save_run_record(decision.record, paths.run_dir, plan.records_dir, plan.budget)
    if decision.reuse is Reuse.RAISED_RULE:
        return save_record(decision.record, plan.records_dir)
    if decision.reuse is Reuse.TWIN:
        twin = {
            **decision.record,
            "variant": job.variant,
            "trained_as": trained_as(decision.record, paths.run_dir.name),
        }
        return save_record(twin, plan.records_dir)
    return decision.record


def _train_and_evaluate(
    plan: Plan, job: Job, settings: Dict[str, Any], step: Step, old_rule: Optional[StoppingRule] = None
) -> Record:
    """Trains as ``step`` says (after making the fine-tuned biLM the run reads, if any), evaluates,
    records; ``old_rule``: the lower stopping rule a run trained under that ``Step.EXTEND`` continues, or
    that ``Step.DONE`` evaluates because the raised rule would have stopped it where it stopped."""
    paths = plan.paths(job)
    seed = plan.args.seed_base + job.seed_index
    env = configs.run_env(settings["data"], seed, settings["env"])
    _check_data(job.task, env)  # before the word vectors or a fine-tuned biLM are built for it
    commands, built = [], {}
    if "word_vectors" in settings:
        built = {"word_vectors_built": prepare_word_vectors(settings["word_vectors"])}
        commands.append(built["word_vectors_built"]["command"])
    if "bilm_finetuning" in settings:
        recipe, start_sha = settings["bilm_finetuning"], settings["bilm_weights_sha256"]
        commands.append(prepare_finetuned_bilm(plan, job.task, recipe, start_sha))
    train, train_seconds = _train(plan, paths, env, settings, step, old_rule)
    commands.append(shown(env, train))
    commit = git_commit()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    evaluations, evaluate_seconds = _evaluate(plan, job.task, paths.run_dir, env)
    base = {
        "commands": commands + evaluations,
        "train_seconds": round(train_seconds, 1),
        "evaluate_seconds": round(evaluate_seconds, 1),
        "evaluated_at": started,
        **built,
        **commit,
    }
    # a run continued under a raised rule keeps its first rule in its directory; one evaluated as it
    # stopped (Step.DONE under a raised rule that makes the same stop) has it from the decision
    first = first_rule(paths.run_dir) or old_rule
    if first is not None:
        base.update(raised_fields(first, settings))
    return build_record(job.task, job.variant, job.seed_index, seed, paths.run_dir, settings, base)


def _check_data(task: str, env: Dict[str, str]) -> None:
    missing = configs.missing_data_files(task, env)
    if missing:
        root = {**os.environ, **env}.get("ELMO_TASKS_SHARED_DATA", DEFAULTS["ELMO_TASKS_SHARED_DATA"])
        lines = "".join(f"\n      {path}: how to get it: {where_to_get(path)}" for path in missing)
        raise RunFailed(
            f"{task}'s data is missing (from {ROOT}; ELMO_TASKS_SHARED_DATA={root}): put the files there, plain or "
            f".gz, or set ELMO_TASKS_SHARED_DATA to the folder that holds them; before any training:{lines}"
        )


def _train(
    plan: Plan,
    paths: RunPaths,
    env: Dict[str, str],
    settings: Dict[str, Any],
    step: Step,
    old_rule: Optional[StoppingRule],
) -> Tuple[List[str], float]:
    """The training command (as run, with its flags) and the run's whole training time so far."""
    train = [ALLENNLP, "train", settings["config"], "-s", str(paths.run_dir)]
    if settings["overrides"]:
        train += ["-o", json.dumps(settings["overrides"], sort_keys=True)]
    if step in STEP_MESSAGES:
        say(f"{paths.run_dir}: {STEP_MESSAGES[step]}")
    if step is Step.DONE:
        return train, seconds_spent(paths.spent_file)
    train += step.flags
    if step is Step.EXTEND and old_rule is not None:
        open_for_more_epochs(paths.run_dir, settings, old_rule)
    paths.run_dir.parent.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text(json.dumps(settings, indent=2))
    with timed_sitting(paths.spent_file, restart=step in (Step.RESTART, Step.TRAIN)):
        run_allennlp(env, train, paths.beside(".train.log"), plan.args.in_process)
    return train, seconds_spent(paths.spent_file)


def _evaluate(plan: Plan, task: str, run_dir: Path, env: Dict[str, str]) -> Tuple[List[str], float]:
    """Scores the run's archive on every test file of the task; the commands and their wall time."""
    commands, seconds = [], 0.0
    for test_name, path in configs.files_to_evaluate(task, env).items():
        output = str(run_dir / f"{test_name}_metrics.json")
        evaluate = [ALLENNLP, "evaluate", str(run_dir / "model.tar.gz"), path, "--output-file", output]
        evaluate += evaluation_flags(run_dir)  # the GPU it trained on, if any
        seconds += run_allennlp(env, evaluate, run_dir / f"evaluate_{test_name}.log", plan.args.in_process)
        commands.append(shown(env, evaluate))
    return commands, seconds
