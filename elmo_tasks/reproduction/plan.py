"""The settings of one invocation: which runs it asks for, and the data, overrides, environment and
biLM each run gets (what makes two runs of the same variant and seed the same run)."""

import argparse
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional

from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.allennlp_runs import ROOT
from elmo_tasks.reproduction.specs import Variant
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.reproduction.word_vectors import VECTORS_VARIABLE, vectors_settings

FINETUNE_CONFIG = "experiments/bilm_finetune.jsonnet"


class Job(NamedTuple):
    """One run an invocation asks for."""

    task: str
    variant: str
    seed_index: int
    split: Optional[str]


@dataclass(frozen=True)
class RunPaths:
    """Where a run trains, and the files kept beside its directory (allennlp wants a new directory)."""

    run_dir: Path

    def beside(self, suffix: str) -> Path:
        return self.run_dir.parent / f"{self.run_dir.name}{suffix}"

    @property
    def settings_file(self) -> Path:  # the settings of the latest training command
        return self.beside(".settings.json")

    @property
    def spent_file(self) -> Path:  # the wall time of every training command of the run
        return self.beside(".train_seconds.json")

    @property
    def lock(self) -> Path:
        return self.beside(".lock")


class Plan:
    """The settings of one invocation (parsed arguments): runs, paths and each run's settings."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.budget: str = args.budget
        # The commands run from the repository's root; paths given relative to the caller's directory stay there.
        self.runs_dir = _absolute(args.runs_dir) if args.runs_dir else ROOT / "runs" / self.budget
        kept = self.budget in ("mini", "recipe", "paper")  # their records are committed
        default_records = ROOT / "docs" / "results" / "records" / self.budget if kept else self.runs_dir / "records"
        self.records_dir = _absolute(args.records_dir) if args.records_dir else default_records
        # the committed report only from the committed records: a comparison kept elsewhere reports beside its runs
        committed = self.budget == "mini" and self.records_dir == default_records
        default_results = ROOT / "docs" / "RESULTS.md" if committed else self.runs_dir / "RESULTS.md"
        self.results = _absolute(args.results) if args.results else default_results

    def data(self, task: str) -> str:
        return TASKS[task].budgets[self.budget].data

    def seeds(self, task: str) -> int:
        return self.args.seeds if self.args.seeds is not None else TASKS[task].budgets[self.budget].seeds

    def splits(self, task: str) -> List[Optional[str]]:
        split = TASKS[task].split
        if split is None or not self.args.splits:
            return [TASKS[task].default_split]
        return list(split.all) if self.args.splits == ["all"] else self.args.splits

    def variants(self, task: str) -> Dict[str, Variant]:
        """Baseline and ELMo, the analyses with ``--analyses``, the shares with ``--sample-efficiency``, and
        any other variant that ``--variants`` names (naming one is asking for it)."""
        found = TASKS[task].variants(self.budget, self.args.analyses, self.args.sample_efficiency)
        if self.args.variants and not set(self.args.variants) <= set(found):
            every = TASKS[task].variants(self.budget, analyses=True, sample_efficiency=True)
            found.update({name: every[name] for name in self.args.variants if name in every})
        return found

    def jobs(self, tasks: List[str]) -> List[Job]:
        """Every run the invocation asks for, in running order."""
        args = self.args
        return [
            Job(task, name, k, split)
            for task in tasks
            for split in self.splits(task)
            for k in range(self.seeds(task))
            for name, variant in self.variants(task).items()
            if (not args.variants or name in args.variants)
            and (not args.only_seeds or k in args.only_seeds)
            and not (variant.analysis and args.analysis_seeds is not None and k >= args.analysis_seeds)
        ]

    def paths(self, job: Job) -> RunPaths:
        return RunPaths(self.runs_dir / job.task / job.variant / TASKS[job.task].run_name(job.split, job.seed_index))

    def overrides(self, task: str, variant: Variant) -> Dict[str, Any]:
        merged = {**TASKS[task].budgets[self.budget].overrides, **variant.overrides, **self.args.overrides}
        if variant.analysis is not None and variant.analysis.epochs_factor is not None:  # e.g. twice the epochs
            base_epochs = merged.get("trainer.num_epochs")
            if base_epochs is None:
                base_epochs = configs.config_value(variant.config, self.data(task), "trainer.num_epochs")
            merged["trainer.num_epochs"] = int(base_epochs * variant.analysis.epochs_factor)
        return merged

    def env(self, task: str, split: Optional[str], variant: Variant) -> Dict[str, str]:
        from elmo_tasks.config_defaults import DEFAULTS

        # Only a biLM other than the default identifies a run (the plugin writes its defaults into os.environ).
        env = {
            name: os.environ[name]
            for name in configs.IDENTIFYING
            if os.environ.get(name, DEFAULTS[name]) != DEFAULTS[name]
        }
        env.update(TASKS[task].budgets[self.budget].env)
        vectors = self.word_vectors(task) if reads_word_vectors(variant) else None
        if vectors is not None:  # the budget's own vectors, built before the first run that reads them
            env[VECTORS_VARIABLE] = vectors["file"]
        env.update(variant.env)
        if not reads_word_vectors(variant):  # none, whatever the budget (the paper's GloVe) or the caller names
            env[VECTORS_VARIABLE] = ""
        if self.reads_finetuned_bilm(task, variant):  # the biLM this invocation makes
            export = from_root(self.finetuned_bilm_dir(task) / "run" / "elmo")
            env.update(ELMO_OPTIONS=str(export / "options.json"), ELMO_WEIGHTS=str(export / "weights.hdf5"))
        folds = TASKS[task].split
        if folds is not None and split is not None and split != folds.default:  # the default needs no variable
            env[folds.env] = split
        return env

    def settings(self, task: str, variant: Variant, split: Optional[str]) -> Dict[str, Any]:
        """What makes two runs of the same variant and seed the same run."""
        settings: Dict[str, Any] = {
            "config": variant.config,
            "data": self.data(task),
            "overrides": self.overrides(task, variant),
            "env": self.env(task, split, variant),
        }
        vectors = self.word_vectors(task) if reads_word_vectors(variant) else None
        if vectors is not None:
            settings["word_vectors"] = vectors
        if variant.config == TASKS[task].configs["elmo"]:  # baselines read no biLM
            settings["bilm_weights_sha256"] = configs.bilm_weights_sha256()
        if self.reads_finetuned_bilm(task, variant):  # made from that biLM by this recipe
            settings["bilm_finetuning"] = self.finetuning_recipe(task)
        if variant.train_share is not None:  # a deterministic share of the training file (the task reader's suffix)
            train = configs.data_paths(task, configs.run_env(settings["data"], 0, settings["env"]))["train"]
            settings["overrides"]["train_data_path"] = f"{train}#sample={variant.train_share}"
            settings["train_share"] = variant.train_share
        # The config's content, so that a run made before an edit to its config (or a file it imports) is not reused.
        config = configs.resolved_config(settings["config"], settings["data"], settings["overrides"], settings["env"])
        settings["config_sha256"] = configs.config_fingerprint(config)
        return settings

    def word_vectors(self, task: str) -> Optional[Dict[str, Any]]:
        """The settings of the word vectors the budget builds for ``task``, sized for the budget's and
        ``--overrides``' config (``--word-vector-algorithm`` replaces the budget's algorithm), or None when
        it builds none."""
        budget = TASKS[task].budgets[self.budget]
        recipe = budget.word_vectors
        if recipe is None:
            return None
        if self.args.word_vector_algorithm:
            recipe = replace(recipe, options=replace(recipe.options, algorithm=self.args.word_vector_algorithm))
        return vectors_settings(recipe, task, self.data(task), {**budget.overrides, **self.args.overrides})

    def reads_finetuned_bilm(self, task: str, variant: Variant) -> bool:
        """Whether the variant's ELMo reads the task's fine-tuned biLM: an analysis that asks for it, or a
        variant the budget fine-tunes for (the paper budget's SNLI ELMo, as the paper's best model)."""
        if variant.analysis is not None and variant.analysis.bilm_finetuning:
            return True
        return variant.name in TASKS[task].budgets[self.budget].finetuned_bilm_variants

    def finetuned_bilm_dir(self, task: str) -> Path:
        return self.runs_dir / task / "bilm_finetuned"

    def finetuning_recipe(self, task: str) -> Dict[str, Any]:
        """How the task's fine-tuned biLM is made: config, overrides, texts (the budget's training and
        validation files), seed; the start biLM is the run's ``bilm_weights_sha256``."""
        paths = configs.data_paths(task, configs.run_env(self.data(task), 0, {}))
        return {
            "config": FINETUNE_CONFIG,
            "overrides": dict(TASKS[task].bilm_finetuning[self.budget]),
            "text": configs.paths_from_data_root(paths["train"]),  # a setting: wherever the data lies
            "validation_text": configs.paths_from_data_root(paths["validation"]),
            "seed": self.args.seed_base,
        }


def reads_word_vectors(variant: Variant) -> bool:
    """Whether ``variant``'s runs read the budget's word vectors: all but an analysis that measures the
    model without them (``Analysis.reads_word_vectors``)."""
    return variant.analysis is None or variant.analysis.reads_word_vectors


def _absolute(path: str) -> Path:
    return Path(os.path.abspath(path))  # abspath, not resolve: a run directory may be a link


def from_root(path: Path) -> Path:
    """``path`` relative to the repository when it lies inside it (commands run from its root), so that
    records name the same files in every checkout; else as it is."""
    try:
        return Path(os.path.abspath(path)).relative_to(ROOT)  # abspath, not resolve: runs/ may be a link
    except ValueError:
        return path
