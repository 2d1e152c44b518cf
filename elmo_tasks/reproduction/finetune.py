"""The biLM fine-tuned on a task's training text (the paper's appendix), made once per recipe and read by
every seed of the ``elmo_finetuned_bilm`` variant."""

import importlib
import json
import os
from pathlib import Path
from typing import Any, Dict

from elmo_tasks.build_lock import build_lock
from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.allennlp_runs import ALLENNLP, RunFailed, run_allennlp, say, shown
from elmo_tasks.reproduction.decide import Step, training_step
from elmo_tasks.reproduction.plan import Plan
from elmo_tasks.reproduction.task_table import TASKS


def prepare_finetuned_bilm(plan: Plan, task: str, recipe: Dict[str, Any], sha: str) -> str:
    """Fine-tunes the start biLM on the task's training text, unless this recipe already made
    ``<runs-dir>/<task>/bilm_finetuned/run/elmo/``; an interrupted fine-tuning resumes. The texts are the
    sentences of the recipe's data paths, written by the module that the task's ``lm_text`` names (e.g.
    elmo_tasks/tasks/snli/lm_text.py); the start biLM's softmax and vocabulary are kept when its folder has
    them (the shipped one does); while another process fine-tunes it, waits, then reuses it. Returns the
    fine-tuning command, for the records of the runs that read it."""
    directory = plan.finetuned_bilm_dir(task)
    with build_lock(directory / "build.lock", f"the fine-tuned biLM {directory}", report=say):
        return _fine_tune(plan, task, recipe, sha, directory)


def _fine_tune(plan: Plan, task: str, recipe: Dict[str, Any], sha: str, directory: Path) -> str:
    run_dir, recipe_file, command_file = directory / "run", directory / "recipe.json", directory / "command.txt"
    wanted = {**recipe, "start_bilm_weights_sha256": sha}
    same = recipe_file.exists() and json.loads(recipe_file.read_text()) == wanted
    step = training_step(run_dir, same, finished=(run_dir / "elmo" / "weights.hdf5").exists())
    if step is Step.DONE:
        say(f"{directory}: fine-tuned biLM made already, reusing it")
        return command_file.read_text().strip()
    texts = _write_texts(task, recipe, directory)
    train = [
        ALLENNLP,
        "train",
        recipe["config"],
        "-s",
        str(run_dir),
        "-o",
        json.dumps(_overrides(recipe, texts), sort_keys=True),
    ]
    train += step.flags
    recipe_file.write_text(json.dumps(wanted, indent=2))
    env = configs.run_env(plan.data(task), recipe["seed"], {})
    run_allennlp(env, train, directory / "train.log", plan.args.in_process)
    if not (run_dir / "elmo" / "weights.hdf5").exists():
        raise RunFailed(f"the biLM fine-tuning in {run_dir} exported no biLM; see {directory / 'train.log'}")
    command_file.write_text(shown(env, train) + "\n")
    return shown(env, train)


def _write_texts(task: str, recipe: Dict[str, Any], directory: Path) -> Dict[str, Path]:
    """One sentence a line, of the recipe's training (``text``) and validation files."""
    module = TASKS[task].lm_text
    if module is None:
        raise RunFailed(f"{task} names no lm_text module to write its training text for the biLM fine-tuning")
    write_lm_text = importlib.import_module(module).write_lm_text
    texts = {name: directory / f"{name}.txt" for name in ("text", "validation_text")}
    for name, path in texts.items():
        counts = write_lm_text(configs.in_data_root(recipe[name]), path)
        described = ", ".join(f"{count} {what}" for what, count in counts.items())
        say(f"{path}: {described} of {recipe[name]}")
    return texts


def _overrides(recipe: Dict[str, Any], texts: Dict[str, Path]) -> Dict[str, Any]:
    """The fine-tuning's data, the recipe's overrides, and the start biLM's softmax and vocabulary if it has them."""
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.config_defaults import DEFAULTS

    start = Path(resolve_bilm_file(os.environ.get("ELMO_WEIGHTS", DEFAULTS["ELMO_WEIGHTS"]))).parent
    overrides: Dict[str, Any] = {
        "train_data_path": str(texts["text"]),
        "validation_data_path": str(texts["validation_text"]),
        **recipe["overrides"],
    }
    if (start / "softmax.npz").exists() and (start / "vocabulary").is_dir():
        vocabulary = {"type": "from_files", "directory": str(start / "vocabulary")}
        overrides.update({"model.pretrained_file": str(start), "vocabulary": vocabulary})
    return overrides
