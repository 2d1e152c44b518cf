"""What a reproduction task is made of, as frozen dataclasses: its budgets, analysis variants and splits.

Each task's :class:`TaskSpec` is the ``reproduction`` of its spec (``elmo_tasks/tasks/<task>/spec.py``), built
from the budgets and variants every task shares (:mod:`elmo_tasks.reproduction.task_table`), beside what the
report says about it (:mod:`elmo_tasks.reproduction.notes`).
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH as ELMO
from elmo_tasks.word_vectors.options import WordVectorOptions

# `allennlp train -o` overrides: dotted keys of the config, values as JSON gives them (lists, not tuples,
# so that they compare equal to the overrides a record read back holds).
Overrides = Mapping[str, Any]


@dataclass(frozen=True)
class WordVectorRecipe:
    """Static word vectors that the harness trains (``allennlp build-word-vectors``) for a budget's runs: on
    ``corpus`` (one sentence a line, tokens separated by spaces), into ``directory`` (both relative to the
    repository, so that records made in any checkout agree), with ``options``, whose size and case are set
    per task to those of its word embedding (elmo_tasks/reproduction/word_vectors.py)."""

    corpus: str = "runs/bilm_corpus/train.txt"  # scripts/build_bilm_corpus.py: the biLM's text, held-out files left out
    directory: str = "runs/word_vectors"
    options: WordVectorOptions = WordVectorOptions()


@dataclass(frozen=True)
class Budget:
    """How big a task's runs are: data mode, overrides, extra environment variables and seeds.

    For a task with sample-efficiency runs, the shares of the training data they train on and the
    overrides of each share (more epochs for a small share, so that it gets comparable updates).
    """

    data: str  # ELMO_TASKS_DATA: "fixtures", "full" (the official files) or "substitutes"
    overrides: Overrides
    seeds: int
    env: Mapping[str, str] = field(default_factory=dict)
    sample_shares: Tuple[float, ...] = (0.01, 0.1)
    sample_overrides: Mapping[float, Overrides] = field(default_factory=dict)
    word_vectors: Optional[WordVectorRecipe] = None  # vectors the harness builds (else env may name a file)
    # Variants (e.g. ``elmo``) whose ELMo reads the biLM first fine-tuned on the task's training text, as the
    # paper's best model of the task did (appendix A.1: SNLI); the fine-tuning is a step of their runs.
    finetuned_bilm_variants: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Analysis:
    """A variant of one of the task's configs (``elmo`` unless ``config`` names another), run with
    ``--analyses`` or named by ``--variants``: a row of the paper's Table 2 (``layers``) or 3 (``placement``),
    or a ``diagnosis`` variant (of ELMo, or of the baseline: e.g. without the budget's word vectors)."""

    table: str
    label: str
    overrides: Overrides = field(default_factory=dict)
    # Fixed layer weights, sized by the biLM that ELMO_OPTIONS names when the run is planned.
    fixed_layer_weights: Optional[Callable[[], List[int]]] = None
    epochs_factor: Optional[float] = None  # times the budget's trainer.num_epochs
    bilm_finetuning: bool = False  # ELMo reads a biLM first fine-tuned on the task's training text
    config: str = "elmo"  # the key of the task's ``configs`` that the variant varies
    # False: no word vectors, whatever the budget builds or names (the word embedding learned from the
    # training data alone), to measure what the budget's vectors add.
    reads_word_vectors: bool = True


@dataclass(frozen=True)
class Split:
    """Cross-validation folds chosen by an environment variable; runs of other folds than the default
    are named ``<label><K>of<N>-seed<k>``."""

    env: str
    default: str
    all: Tuple[str, ...]
    label: str


@dataclass(frozen=True)
class SampleEfficiency:
    """The paper's Figure 1 runs (``--sample-efficiency``): baseline and ELMo on shares of the training file."""

    env: Mapping[str, str] = field(default_factory=dict)
    full_runs_included: bool = False  # the full runs train on the same data: they are the 100% point


@dataclass(frozen=True)
class Variant:
    """One config that a task's runs train: ``baseline``, ``elmo``, an analysis or a share of the data."""

    name: str
    config: str
    overrides: Overrides = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    analysis: Optional[Analysis] = None
    train_share: Optional[float] = None  # a deterministic share of the training file (``#sample=P``)


@dataclass(frozen=True)
class Table1Row:
    """A task's row of the paper's Table 1: its number (the order of the report, the harness and the demo),
    the task's name there, the metric of its scores (``allennlp evaluate``'s key, and the name the report
    gives it) and the paper's (baseline, ELMo) scores."""

    row: int
    name: str
    metric: Tuple[str, str]
    paper: Tuple[float, float]


@dataclass(frozen=True)
class TaskSpec:
    """One benchmark of the paper: its configs, metric, the paper's numbers, budgets and variants."""

    name: str  # as the report names it
    libsonnet: str  # whose ``data`` names the test files
    configs: Mapping[str, str]  # "baseline" and "elmo"
    metric: str  # the key of `allennlp evaluate`'s metrics
    metric_name: str
    paper: Mapping[str, float]  # Table 1: "baseline" and "elmo"
    elmo_at: str  # where ELMo goes in our config (the analysis tables' row label)
    budgets: Mapping[str, Budget]
    scale: float = 100.0  # metric -> the number reported
    also_report: Mapping[str, str] = field(default_factory=dict)  # metric key -> label
    analyses: Mapping[str, Analysis] = field(default_factory=dict)
    split: Optional[Split] = None
    bilm_finetuning: Mapping[str, Overrides] = field(default_factory=dict)  # per budget, for bilm_finetune.jsonnet
    lm_text: Optional[str] = None  # the module whose write_lm_text gives the fine-tuning text
    sample_efficiency: Optional[SampleEfficiency] = None
    # The paper's Table 2 (which layers) and Table 3 (where ELMo goes) numbers, development sets, by column.
    paper_layers: Mapping[str, float] = field(default_factory=dict)
    paper_placement: Mapping[str, float] = field(default_factory=dict)

    @property
    def default_split(self) -> Optional[str]:
        return self.split.default if self.split else None

    def run_name(self, split: Optional[str], k: int) -> str:
        """``seed<k>``, or ``fold<K>of<N>-seed<k>`` for a run on another split than the default."""
        if self.split is None or split in (None, self.split.default):
            return f"seed{k}"
        return f"{self.split.label}{split.replace('/', 'of')}-seed{k}"

    def variants(self, budget: str, analyses: bool, sample_efficiency: bool = False) -> Dict[str, Variant]:
        """Baseline and ELMo, plus the analyses and the budget's sample-efficiency runs when asked."""
        found = {name: Variant(name, config) for name, config in self.configs.items()}
        if analyses:
            for name, analysis in self.analyses.items():
                overrides = dict(analysis.overrides)
                if analysis.fixed_layer_weights is not None:
                    overrides[f"{ELMO}.fixed_layer_weights"] = analysis.fixed_layer_weights()
                found[name] = Variant(name, self.configs[analysis.config], overrides, analysis=analysis)
        if sample_efficiency and self.sample_efficiency is not None:
            found.update(self._sample_variants(self.budgets[budget], self.sample_efficiency.env))
        return found

    def _sample_variants(self, budget: Budget, env: Mapping[str, str]) -> Dict[str, Variant]:
        found = {}
        for share in budget.sample_shares:
            overrides = budget.sample_overrides.get(share, {})
            for name, config in self.configs.items():
                found[f"{name}_sample{share}"] = Variant(
                    f"{name}_sample{share}", config, overrides, env, train_share=share
                )
        return found
