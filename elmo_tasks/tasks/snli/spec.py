"""SNLI's spec (ESIM): what the harness runs, what the report says about it, its demo page and what the
commands say of its archives (elmo_tasks/tasks/registry.py)."""

from dataclasses import replace
from typing import Dict, Tuple

from elmo_tasks.demo.task_pages import DemoPage, FormField
from elmo_tasks.reproduction.notes import TaskNotes
from elmo_tasks.reproduction.specs import Overrides, SampleEfficiency, Table1Row
from elmo_tasks.reproduction.task_table import (
    ELMO_DIAGNOSIS,
    FINETUNING,
    GLOVE_840B,
    INPUT_AND_OUTPUT,
    INPUT_ONLY,
    SMOKE_SAMPLED,
    benchmark_spec,
    mini_budget,
    paper_budget,
    until_converged,
)
from elmo_tasks.tasks.snli.names import NAMES

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
# output, which both budgets' ELMo config is (the `elmo_input_output` analysis equals it and reuses its
# runs); `elmo_input_only` takes the output mix away and keeps the 0.5 dropout on the attention's output
# that the paper has with ELMo.
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

SPEC = benchmark_spec(
    NAMES.task,
    Table1Row(2, "SNLI", metric=("accuracy", "accuracy"), paper=(88.0, 88.7)),
    elmo_at="input and output",
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
    paper_layers={"top layer only": 89.1, "all layers, lambda = 1": 89.3, "all layers, lambda = 0.001": 89.5},
    paper_placement={"input only": 88.9, "input and output": 89.5, "output only": 88.7},
    report=TaskNotes(
        title="SNLI (ESIM), test accuracy",
        trained_on={
            "mini": "SNLI dev minus a held-out tenth (8.9k pairs)",
            "paper": "SNLI dev minus a tenth",
        },
        limits={
            "mini": (
                "Data first: 8.9k training pairs, 1.6% of the 550k the paper trained on, and 100-unit LSTMs instead of "
                "300."
            ),
        },
        notes={
            "mini": (
                "Trained on SNLI dev minus a held-out tenth (model selection on that tenth); the full SNLI training "
                "set was not available, so absolute numbers are not comparable with the paper's."
            ),
        },
        diagnosis_notes={
            "mini": (
                "until 2026-11-30 the mini budget's ELMo was at the input only (test 63.38 ± 0.48 over 3 seeds, 1.09 "
                "above the baseline). At the paper's place, the input and the input "
                "encoder's output, with 0.5 dropout on the attention's output as the paper has with it (the config "
                "now), the same 3 seeds reach 67.97 ± 0.11 on test (68.91 ± 1.17 on the held-out tenth). The gain is "
                "the output mix's, not that dropout's: ELMo at the input only with the dropout (Table 3's input-only "
                "column, one seed) scored 62.56 on the held-out tenth and 62.24 on test, below the input-only config "
                "without it. An earlier reading that the output mix did not help (one seed: 62.22 on test) came from "
                "a wrong placement: the output mix joined the inference composition's output, after the attention. "
                "ELMo's own dropout on top of ESIM's input dropout made ELMo trail the baseline with an earlier biLM, "
                "and costs here too: at the paper's place with it, 3 seeds reached 60.76 ± 5.42 on the held-out "
                "tenth (64.32, 54.52, 63.44) against the config's 68.91 ± 1.17. It learns more slowly: seeds 0 and 2 "
                "were still rising at their 20th and last epoch, and the patience of 3 stopped seed 1 at epoch 16. "
                "The config has none. Layer norm on the biLM layers, at the paper's place (seed 0): 68.61 on the "
                "held-out tenth and 66.99 on test, against 67.84 and 67.84 for seed 0 of the config, within the "
                "config's spread over seeds. Twice the epochs (40, seed 0, at the paper's place) changes nothing "
                "here: the patience of 3 ends the run at epoch 13, as it ends the config's, and it scored seed 0's "
                "67.84 on both. The biLM first fine-tuned on the training pairs (the paper's best SNLI model, "
                "appendix A.1; seed 0, at the paper's place): 68.50 on the held-out tenth and 68.10 on test, against "
                "67.84 and 67.84 for seed 0 of the config (+0.66 and +0.26, the paper's +0.6 on dev), but within the "
                "config's spread over seeds (68.91 ± 1.17), so one seed does not show a gain."
            ),
        },
        sample_efficiency_data="the training pairs, sampled by premise",
    ),
    demo=DemoPage(
        "Textual entailment (SNLI)",
        "the probabilities of entailment, neutral and contradiction",
        [
            FormField("premise", "Premise", "A man plays a guitar on stage ."),
            FormField("hypothesis", "Hypothesis", "A man performs music ."),
        ],
    ),
    archive_holds="an SNLI model",
    archive_command="evaluate",
)
