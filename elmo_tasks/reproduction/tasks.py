"""The six benchmarks that ``scripts/reproduce.py`` runs, their budgets, variants and the paper's numbers.

Budgets: ``smoke`` (the bundled fixtures, a few batches: every step of a run, in minutes, run by the
test suite), ``mini`` (the real data, cut to what a 2-core CPU trains in minutes to an hour per run:
what docs/RESULTS.md reports), ``recipe`` (the experiment configs as they are, which follow the paper's
recipe, with the mini budget's word vectors in place of the paper's; 3 seeds: for tasks whose recipe a
CPU trains in hours) and ``paper`` (the experiment configs as they are, for a user with GPUs).
A new task joins with one entry in ``TASKS``; what the report says about it goes in ``task_notes.toml``.
"""

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH as ELMO
from elmo_tasks.config_defaults import MIXING_WEIGHTS_REGEX, token_layer_only, top_layer_only
from elmo_tasks.reproduction.commands import from_caller
from elmo_tasks.reproduction.specs import (
    Analysis,
    Budget,
    Overrides,
    SampleEfficiency,
    Split,
    TaskSpec,
    WordVectorRecipe,
)

BUDGETS = ("smoke", "mini", "recipe", "paper")


def _penalty(alpha: float) -> Dict[str, Any]:
    """The paper's lambda: an L2 penalty on the ELMo mixing weights."""
    return {"model.regularizer.regexes": [[MIXING_WEIGHTS_REGEX, {"type": "l2", "alpha": alpha}]]}


# The paper's Table 2: which biLM layers, and how they are mixed.
LAYER_ANALYSES = {
    "elmo_lambda1": Analysis("layers", "all layers, lambda = 1", _penalty(1.0)),
    "elmo_lambda0.001": Analysis("layers", "all layers, lambda = 0.001", _penalty(0.001)),
    "elmo_top_layer": Analysis("layers", "top layer only", fixed_layer_weights=top_layer_only),
    "elmo_token_layer": Analysis("layers", "token layer only", fixed_layer_weights=token_layer_only),
}
# The paper's Table 3: where ELMo goes.
INPUT_ONLY = {
    "elmo_input_only": Analysis(
        "placement", "input only", {"model.elmo_at_output": False, f"{ELMO}.num_output_representations": 1}
    )
}
INPUT_AND_OUTPUT = {
    "elmo_input_output": Analysis(
        "placement", "input and output", {"model.elmo_at_output": True, f"{ELMO}.num_output_representations": 2}
    )
}
# Why ELMo hurt on SNLI and NER: ELMo's own dropout on top of the task model's input dropout (the earlier
# configs), layer norm on the biLM layers, twice the epochs, a biLM fine-tuned on the training text.
ELMO_DIAGNOSIS = {
    "elmo_with_elmo_dropout": Analysis(
        "diagnosis", "ELMo's own dropout 0.5 too (the earlier config)", {f"{ELMO}.dropout": 0.5}
    ),
    "elmo_layer_norm": Analysis("diagnosis", "layer norm on the biLM layers", {f"{ELMO}.do_layer_norm": True}),
    "elmo_longer": Analysis("diagnosis", "twice the epochs", epochs_factor=2),
    "elmo_finetuned_bilm": Analysis("diagnosis", "biLM fine-tuned on the training text", bilm_finetuning=True),
}

# Smoke: every step of a run (train, archive, evaluate, record) on the fixtures, in seconds.
SMOKE = Budget("fixtures", {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 4}, seeds=1)
# The paper's recipe: its word vectors and, where an experiment cut them for 2 CPU cores, the
# epochs, patience and sizes of the paper (or of allennlp-models' config where the paper gives
# none; docs/PAPER.md, "Hyperparameter audit"). The GloVe files are read from ELMO_TASKS_GLOVE_DIR.
GLOVE_DIR = Path(from_caller(os.environ.get("ELMO_TASKS_GLOVE_DIR", "glove")))  # read at import: rebased here


def paper_budget(vectors: str, overrides: Overrides, env: Optional[Dict[str, str]] = None, **sampling: Any) -> Budget:
    """The paper's data by their official names, the paper's ``vectors`` from GLOVE_DIR, 5 seeds; ``env``:
    more variables of the runs; ``sampling``: the sample shares and their overrides."""
    return Budget(
        "full", overrides, seeds=5, env={"ELMO_TASKS_WORD_VECTORS": str(GLOVE_DIR / vectors), **(env or {})}, **sampling
    )


# The mini budget's word vectors: word2vec on the biLM's corpus, built by the harness (docs/WORD_VECTORS.md).
MINI_WORD_VECTORS = WordVectorRecipe()


def mini_budget(overrides: Overrides, **sampling: Any) -> Budget:
    """The real data with the substitutes of docs/DATA.md where the paper's training sets are not at hand
    (``ELMO_TASKS_DATA=substitutes``), ``overrides`` cutting it to a 2-core CPU, 3 seeds, our word vectors;
    ``sampling``: the budget's env, sample shares and their overrides."""
    return Budget("substitutes", overrides, seeds=3, word_vectors=MINI_WORD_VECTORS, **sampling)


def recipe_budget() -> Budget:
    """The real data and the experiment config unchanged (the paper's recipe), 3 seeds, with the word
    vectors the mini budget builds in place of the paper's, which are not available here."""
    return Budget("full", {}, seeds=3, word_vectors=MINI_WORD_VECTORS)


def task_spec(
    key: str,
    name: str,
    metric: str,
    metric_name: str,
    paper: Tuple[float, float],
    elmo_at: str,
    mini: Budget,
    full: Budget,
    smoke: Budget = SMOKE,
    recipe: Optional[Budget] = None,
    **optional: Any,
) -> TaskSpec:
    """A task whose experiments follow the repository's naming, ``elmo_tasks/experiments/KEY.libsonnet``
    and its ``experiments/KEY_baseline.jsonnet`` and ``experiments/KEY_elmo.jsonnet``: ``paper`` is
    Table 1's (baseline, ELMo), ``mini`` and ``full`` the ``mini`` and ``paper`` budgets, ``recipe``
    the ``recipe`` budget where the task has one, ``optional`` TaskSpec's fields with defaults."""
    budgets = {"smoke": smoke, "mini": mini, "paper": full, **({"recipe": recipe} if recipe else {})}
    return TaskSpec(
        name=name,
        libsonnet=f"elmo_tasks/experiments/{key}.libsonnet",
        configs={variant: f"experiments/{key}_{variant}.jsonnet" for variant in ("baseline", "elmo")},
        metric=metric,
        metric_name=metric_name,
        paper={"baseline": paper[0], "elmo": paper[1]},
        elmo_at=elmo_at,
        budgets=budgets,
        **optional,
    )


GLOVE_840B = "glove.840B.300d.txt"
# Overrides of experiments/bilm_finetune.jsonnet per budget (the paper fine-tuned for one epoch).
FINETUNING = {
    "smoke": {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 2},
    "mini": {"trainer.num_epochs": 3},
    "paper": {"trainer.num_epochs": 1},
}


def until_converged(max_epochs: int, patience: int) -> Overrides:
    """Trains until validation has not improved for ``patience`` epochs, for at most ``max_epochs``: a mini
    run that is still improving at its cap has its best epoch last, which the report marks (‡)."""
    return {"trainer.num_epochs": max_epochs, "trainer.patience": patience}


# The smoke budget of a task with sample-efficiency runs: one share, half of the fixtures.
SMOKE_SAMPLED = replace(SMOKE, sample_shares=(0.5,))

# The committed records' settings (Clark and Gardner's own sizes), where the recipe has appendix A.4's
# GRUs of 90, linear layers of 180 and batches of 45, and whole passages in training.
SQUAD_MINI = {
    "data_loader.batch_sampler.batch_size": 32,
    "dataset_reader.passage_length_limit": 400,
    "model.attention_dim": 200,
    "model.phrase_layer.hidden_size": 100,
    "model.residual_encoder.hidden_size": 100,
    "model.span_end_encoder.hidden_size": 100,
    "model.span_start_encoder.hidden_size": 100,
    **until_converged(40, 5),
}
SQUAD = task_spec(
    "squad",
    name="SQuAD",
    metric="f1",
    metric_name="F1",
    also_report={"em": "exact match"},
    paper=(81.1, 85.8),
    elmo_at="input and output",
    analyses=INPUT_ONLY,
    split=Split("ELMO_TASKS_FOLD", "1/4", ("1/4", "2/4", "3/4", "4/4"), "fold"),
    mini=mini_budget(SQUAD_MINI),
    full=paper_budget(GLOVE_840B, {}),
)
SNLI_MINI = {
    "model.encoder.hidden_size": 100,
    "model.inference_encoder.hidden_size": 100,
    "model.output_feedforward.hidden_dims": 100,
    "model.projection_feedforward.hidden_dims": 100,
    # The committed records' settings, where the recipe (appendix A.3) keeps the word vectors fixed, clips
    # the gradient norm at 5 and starts the LSTMs' forget-gate biases at 1 (allennlp-models'). ELMo's part
    # of the recipe is set in `full` mode only (elmo_tasks/experiments/snli.libsonnet).
    "model.initializer.regexes": [
        [".*_feedforward.*weight", {"type": "xavier_uniform"}],
        [".*_feedforward.*bias", {"type": "zero"}],
        ["output_logit.weight", {"type": "xavier_uniform"}],
        ["output_logit.bias", {"type": "zero"}],
        [r"^(encoder|inference_encoder)\..*weight_ih.*", {"type": "xavier_uniform"}],
        [r"^(encoder|inference_encoder)\..*weight_hh.*", {"type": "orthogonal"}],
        [r"^(encoder|inference_encoder)\..*bias.*", {"type": "zero"}],
    ],
    "model.text_field_embedder.token_embedders.tokens.trainable": True,
    "trainer.grad_norm": 10,
    **until_converged(20, 3),
}
# The paper's Table 3 for SNLI. Its ELMo (appendix A.3) is at the input and at the input encoder's
# output, which the `paper` budget's ELMo config is, and the mini budget's, as its records, at the input
# only: each budget's other placement is an analysis (the one equal to its ELMo config reuses its runs).
# With ELMo at the output the output mix goes into the attention, whose output the paper drops out at 0.5.
SNLI_PLACEMENT = {
    **INPUT_ONLY,
    "elmo_input_output": replace(
        INPUT_AND_OUTPUT["elmo_input_output"],
        overrides={**INPUT_AND_OUTPUT["elmo_input_output"].overrides, "model.attention_dropout": 0.5},
    ),
}


def snli_share_overrides(shares: Tuple[float, ...]) -> Dict[float, Overrides]:
    """Each share's cap, patience and learning-rate halving in the full runs' updates, not epochs.

    A share of the pairs makes an epoch that much shorter (the full runs, ``SNLI_MINI``: 20 epochs of
    ~280 batches, patience 3, the rate halved after each epoch without a better validation accuracy). Counted in a
    10% run's epochs, patience 3 stopped it on its starting plateau at chance, and halving the rate
    after each flat epoch of 28 batches left it too small to ever leave that plateau.
    """
    return {
        share: {
            **until_converged(
                round(SNLI_MINI["trainer.num_epochs"] / share), round(SNLI_MINI["trainer.patience"] / share)
            ),
            "trainer.learning_rate_scheduler.patience": round(1 / share) - 1,
        }
        for share in shares
    }


# SNLI 1.0's 550,152 training pairs in the paper recipe's batches of 32.
SNLI_PAPER_EPOCH_BATCHES = -(-550_152 // 32)


def snli_paper_share_overrides(shares: Tuple[float, ...]) -> Dict[float, Overrides]:
    """The paper budget's shares, each epoch as many batches as a full epoch (cycling over the sample).

    Scaling the epochs instead, as the mini budget does, would validate on all of dev after every
    17 batches of the 0.1% share; a full epoch of updates keeps the recipe's patience (5 epochs) and its
    halving of the rate after each epoch without a better validation accuracy, both counted in updates.
    """
    return {share: {"data_loader.batches_per_epoch": SNLI_PAPER_EPOCH_BATCHES} for share in shares}


SNLI_PAPER_SHARES = (0.001, 0.01, 0.1)
SNLI = task_spec(
    "snli",
    name="SNLI",
    metric="accuracy",
    metric_name="accuracy",
    paper=(88.0, 88.7),
    elmo_at="input; the paper: input and output",
    analyses={**SNLI_PLACEMENT, **ELMO_DIAGNOSIS},
    bilm_finetuning=FINETUNING,
    lm_text="elmo_tasks.tasks.snli.lm_text",  # each premise once, every hypothesis
    # The training pairs sampled by premise; the full runs train on the same pairs: the 100% point.
    sample_efficiency=SampleEfficiency(full_runs_included=True),
    smoke=SMOKE_SAMPLED,
    mini=mini_budget(SNLI_MINI, sample_shares=(0.1, 0.3), sample_overrides=snli_share_overrides((0.1, 0.3))),
    full=paper_budget(
        GLOVE_840B,
        {},
        sample_shares=SNLI_PAPER_SHARES,
        sample_overrides=snli_paper_share_overrides(SNLI_PAPER_SHARES),
        # the paper's best SNLI model read a biLM fine-tuned on SNLI's training text (appendix A.1)
        finetuned_bilm_variants=("elmo",),
    ),
)
SRL_MINI = {
    "model.encoder.hidden_size": 100,
    "model.encoder.num_layers": 4,
    # the committed records' initialisation (the recipe's: an orthogonal tag projection, zero LSTM input biases)
    "model.initializer.regexes": [
        ["tag_projection.*weight", {"type": "xavier_uniform"}],
        ["tag_projection.*bias", {"type": "zero"}],
    ],
    # at 3 epochs the baseline had not left its starting plateau; at 10 its best epoch was still the last;
    # at 40, with word vectors, one baseline seed's best epoch was its 40th
    **until_converged(60, 4),
}
SRL = task_spec(
    "srl",
    name="SRL",
    metric="f1-measure-overall",
    metric_name="F1",
    paper=(81.4, 84.6),
    elmo_at="input",
    # CoNLL-2005 train, sampled by sentence.
    sample_efficiency=SampleEfficiency(env={"ELMO_TASKS_SRL_DATASET": "conll2005"}),
    smoke=SMOKE_SAMPLED,
    # CoNLL-2005 train has ~1,135 batches of 80 predicates: 10% is ~113 an epoch, 1% ~11 (each epoch also
    # validates on all of devel). 10%: the full runs' patience 4 (at caps of 8 and 30 epochs its best epoch
    # was the last). 1%: patience 20, as 4 epochs of 11 batches is 44 updates and the 1% curves have
    # flat stretches of 4 epochs and swing by up to 9 points from one epoch to the next.
    mini=mini_budget(
        SRL_MINI,
        env={"ELMO_TASKS_SRL_DATASET": "conll2012"},
        sample_shares=(0.01, 0.1),
        sample_overrides={0.01: until_converged(150, 20), 0.1: {"trainer.num_epochs": 30}},
    ),
    # the paper's Table 1 benchmark: CoNLL-2012 (CoNLL-2005 stays the experiment file's default)
    full=paper_budget("glove.6B.100d.txt", {}, env={"ELMO_TASKS_SRL_DATASET": "conll2012"}),
)
COREF_MINI = {
    "model.antecedent_feedforward.hidden_dims": 100,
    # the committed records' BiLSTM (torch's LSTM, without the recipe's recurrent dropout), and CPU: 100 units
    # where the recipe has 200
    "model.context_layer": {"type": "lstm", "bidirectional": True, "hidden_size": 100, "num_layers": 1},
    "model.initializer.regexes": [  # the committed records' (for torch's LSTM)
        [".*_feedforward.*weight", {"type": "xavier_normal"}],
        [".*scorer.*weight", {"type": "xavier_normal"}],
        [".*weight_ih.*", {"type": "xavier_normal"}],
        [".*weight_hh.*", {"type": "orthogonal"}],
    ],
    # CPU: 50 antecedents where the recipe has Lee et al.'s 250
    "model.max_antecedents": 50,
    "model.mention_feedforward.hidden_dims": 100,
    # the committed records' schedule: x 0.997 an epoch, which is the recipe's x 0.999 every 100 updates at
    # this data's ~310 documents or pieces an epoch
    "trainer.learning_rate_scheduler": {"type": "exponential", "gamma": 0.997},
    # at 4 epochs every run's best epoch was its last; at 15, with word vectors, the baseline's still was.
    # Patience 5: the dev F1 of ~34 documents moves 1 to 2 points from epoch to epoch, and patience 3 had
    # stopped an ELMo run 3 epochs after a jump, with the next epochs climbing back (50.9, 51.4, 52.4)
    **until_converged(30, 5),
}
COREF = task_spec(
    "coref",
    name="Coref",
    metric="coref_f1",
    metric_name="average F1",
    also_report={"muc_f1": "MUC F1", "bcub_f1": "B-cubed F1", "ceafe_f1": "CEAF-phi4 F1"},
    paper=(67.2, 70.4),
    elmo_at="input",
    mini=mini_budget(COREF_MINI),
    # Lee et al. also concatenate Turian's 50-d vectors: one file here
    full=paper_budget(GLOVE_840B, {}),
)
# Whole epochs of eng.train (220 batches of 64). At 20 epochs the baseline's eng.testa F1 was still
# rising, ELMo's had levelled off from about epoch 10; at 30 some runs' best epoch was still the last.
NER_MINI = {"model.encoder.hidden_sizes": [100, 100], **until_converged(60, 8)}
NER = task_spec(
    "ner",
    name="NER",
    metric="f1-measure-overall",
    metric_name="F1",
    paper=(90.15, 92.22),
    elmo_at="input, lambda 0.1",
    analyses={**LAYER_ANALYSES, **ELMO_DIAGNOSIS},
    # eng.train's sentences (eng.testa's for the validation perplexity)
    bilm_finetuning={**FINETUNING, "mini": {"trainer.num_epochs": 2}, "recipe": FINETUNING["paper"]},
    lm_text="elmo_tasks.tasks.ner.lm_text",
    mini=mini_budget(NER_MINI),
    recipe=recipe_budget(),  # 1.3 to 4 min per epoch on one thread: hours per run (docs/PAPER.md, NER)
    # GloVe's 50-d vectors in place of Senna's, as allennlp-models does
    full=paper_budget("glove.6B.50d.txt", {}),
)
SST5_MINI = {
    # CPU: the sentences only, where the recipe trains on every phrase of 4+ tokens (~10x the instances)
    "dataset_reader.phrases": "roots",
    "model.encoder.hidden_size": 100,
    # CPU: one ReLU layer of 200 in the head, where the recipe has two (1200, 600)
    "model.feedforward.activations": ["relu"],
    "model.feedforward.dropout": [0.2],
    "model.feedforward.hidden_dims": [200],
    "model.feedforward.num_layers": 1,
    "model.integrator.hidden_size": 100,
    "model.pre_encode_feedforward.hidden_dims": [100],
    # the committed records' setting (allennlp-models' rate), where the recipe has the paper's 1e-4
    "trainer.optimizer.lr": 0.001,
    # with word vectors at a cap of 20 epochs, one baseline seed's best epoch was its 19th
    **until_converged(30, 4),
}
SST5 = task_spec(
    "sst5",
    name="SST-5",
    metric="accuracy",
    metric_name="accuracy",
    paper=(51.4, 54.7),
    elmo_at="input and output, lambda 0.001",  # its Table 2 row's lambda = 0.001 column is this model
    analyses={**LAYER_ANALYSES, **INPUT_ONLY},
    mini=mini_budget(SST5_MINI),
    full=paper_budget(GLOVE_840B, {}),
)

# In the report's order.
TASKS: Dict[str, TaskSpec] = {"squad": SQUAD, "snli": SNLI, "srl": SRL, "coref": COREF, "ner": NER, "sst5": SST5}

# The paper's Table 2 and 3 numbers (development sets) for the tasks it reports them on.
PAPER_LAYER_TABLE = {
    "SQuAD": {"top layer only": 84.7, "all layers, lambda = 1": 85.0, "all layers, lambda = 0.001": 85.2},
    "SNLI": {"top layer only": 89.1, "all layers, lambda = 1": 89.3, "all layers, lambda = 0.001": 89.5},
    "SRL": {"top layer only": 84.1, "all layers, lambda = 1": 84.6, "all layers, lambda = 0.001": 84.8},
}
PAPER_PLACEMENT_TABLE = {
    "SQuAD": {"input only": 85.1, "input and output": 85.6, "output only": 84.8},
    "SNLI": {"input only": 88.9, "input and output": 89.5, "output only": 88.7},
    "SRL": {"input only": 84.7, "input and output": 84.3, "output only": 80.9},
}
