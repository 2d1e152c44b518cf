"""What `scripts/reproduce.py` runs: the six benchmarks, their budgets, variants and the paper's numbers.

A *budget* names how big a run is: ``smoke`` (the bundled fixtures, one epoch: minutes for every
task, run by the test suite), ``mini`` (the real data, cut to what this project's 2-core CPU
machine trains in minutes to an hour per run: what docs/RESULTS.md reports) and ``paper`` (the
experiment configs as they are: the paper's recipes where the data exists, for a user with GPUs).
A budget gives the data mode, config overrides (dotted keys, as `allennlp train -o`), extra
environment variables and the default number of seeds.

A *variant* is a config of a task: ``baseline`` and ``elmo`` are the experiment files; the
analysis variants (the paper's Tables 2 and 3) are the ``elmo`` file plus overrides, and run only
with ``--analyses``. With ``--sample-efficiency``, a task with a ``sample_efficiency`` entry also
trains ``baseline_sample<P>`` and ``elmo_sample<P>`` on a deterministic share P of its training
file (the path suffix ``#sample=P``) for each share its budget lists (the paper's Figure 1); the
budget's ``sample_overrides`` give a share more epochs, so that a small share still gets a
comparable number of updates (the paper trained every share to convergence).

A task's ``notes`` (its setup and what its runs showed) and ``diagnosis_notes`` (what its diagnosis
variants showed) are keyed by the budget whose runs they describe: a report shows only the notes of
its own budget, so the conclusions drawn from the ``mini`` runs never appear beside ``smoke`` numbers.
"""

from typing import Any, Dict, Optional

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH as _ELMO
from elmo_tasks.config_defaults import MIXING_WEIGHTS_REGEX as _MIX_PENALTY
from elmo_tasks.config_defaults import token_layer_only, top_layer_only

# The overrides of the paper's Table 2 (which biLM layers, how they are mixed) for a task whose ELMo
# embedder sits at ELMO_EMBEDDER_PATH; the layer weights fit the biLM that ELMO_OPTIONS names.


def _penalty(alpha: float) -> Dict[str, Any]:
    return {"model.regularizer.regexes": [[_MIX_PENALTY, {"type": "l2", "alpha": alpha}]]}


LAYER_ANALYSES: Dict[str, Dict[str, Any]] = {
    "elmo_lambda1": {"table": "layers", "label": "all layers, lambda = 1", "overrides": _penalty(1.0)},
    "elmo_lambda0.001": {"table": "layers", "label": "all layers, lambda = 0.001", "overrides": _penalty(0.001)},
    "elmo_top_layer": {
        "table": "layers",
        "label": "top layer only",
        "overrides": {f"{_ELMO}.fixed_layer_weights": top_layer_only()},
    },
    "elmo_token_layer": {
        "table": "layers",
        "label": "token layer only",
        "overrides": {f"{_ELMO}.fixed_layer_weights": token_layer_only()},
    },
}
INPUT_ONLY = {
    "elmo_input_only": {
        "table": "placement",
        "label": "input only",
        "overrides": {"model.elmo_at_output": False, f"{_ELMO}.num_output_representations": 1},
    }
}
INPUT_AND_OUTPUT = {
    "elmo_input_output": {
        "table": "placement",
        "label": "input and output",
        "overrides": {"model.elmo_at_output": True, f"{_ELMO}.num_output_representations": 2},
    }
}
# Why ELMo hurt on a task (the stronger-biLM issue: SNLI, then NER): ELMo variants trained like the
# ``elmo`` file but with ELMo's own dropout 0.5 as well (the earlier configs: the task model already
# drops out its whole embedded input, so ELMo was dropped out twice; the configs now set ELMo's own
# dropout to 0, which the diagnosis found best), with layer norm on the biLM layers, twice the epochs
# (``epochs_factor`` multiplies the budget's ``trainer.num_epochs``), or a biLM first fine-tuned on the
# task's training text as the paper's appendix did (``bilm_finetuning``: the task's ``bilm_finetuning``
# entry gives the recipe per budget; scripts/reproduce.py fine-tunes once and every seed reads that biLM).
ELMO_DIAGNOSIS = {
    "elmo_with_elmo_dropout": {
        "table": "diagnosis",
        "label": "ELMo's own dropout 0.5 too (the earlier config)",
        "overrides": {f"{_ELMO}.dropout": 0.5},
    },
    "elmo_layer_norm": {
        "table": "diagnosis",
        "label": "layer norm on the biLM layers",
        "overrides": {f"{_ELMO}.do_layer_norm": True},
    },
    "elmo_longer": {"table": "diagnosis", "label": "twice the epochs", "epochs_factor": 2},
    "elmo_finetuned_bilm": {
        "table": "diagnosis",
        "label": "biLM fine-tuned on the training text",
        "bilm_finetuning": True,
    },
}
# Smoke: every path of a run (train, archive, evaluate, record) on the fixtures, in seconds.
SMOKE = {"data": "fixtures", "overrides": {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 4}, "seeds": 1}
PAPER = {"data": "full", "overrides": {}, "seeds": 5}

TASKS: Dict[str, Dict[str, Any]] = {
    "squad": {
        "name": "SQuAD",
        "title": "SQuAD v1.1 (BiDAF + self-attention), F1 on XQuAD English (SQuAD v1.1 dev questions), "
        "held-out test fold ELMO_TASKS_FOLD (default 1/4)",
        "metric_name": "F1",
        "libsonnet": "experiments/squad.libsonnet",
        "configs": {"baseline": "experiments/squad_baseline.jsonnet", "elmo": "experiments/squad_elmo.jsonnet"},
        "metric": "f1",
        "scale": 100.0,
        "also_report": {"em": "exact match"},
        "paper": {"baseline": 81.1, "elmo": 85.8},
        "elmo_at": "input and output",
        "analyses": INPUT_ONLY,
        # Cross-validation: runs of other folds than the default are named fold<K>of<N>-seed<k>.
        "split": {"env": "ELMO_TASKS_FOLD", "default": "1/4", "all": ["1/4", "2/4", "3/4", "4/4"], "label": "fold"},
        "budgets": {
            "smoke": SMOKE,
            "mini": {"data": "full", "overrides": {"trainer.num_epochs": 20, "trainer.patience": None}, "seeds": 3},
            "paper": PAPER,
        },
        "trained_on": {
            "mini": "XQuAD English split by article: train on 2 of 4 folds (~600 questions), select on 1, test on 1",
            "paper": "XQuAD English split by article (the official SQuAD files with -o, see squad.libsonnet)",
        },
        "notes": {
            "mini": "Cross-validation by article over the 1,190 XQuAD English questions (SQuAD v1.1 dev): about 600 "
            "training questions instead of about 87,600 and one gold answer instead of three, no GloVe; absolute "
            "numbers are not comparable with the paper's. One test fold per run (ELMO_TASKS_FOLD=K/4, default 1/4). "
            "Without GloVe, about 25% of a test fold's tokens are outside the word vocabulary, so they share the "
            "unknown-word vector, which training never updates (fold 3 of 4; NER, where that was 11%, maps train "
            "singletons to it instead). Replacing it by zeros in earlier baseline runs (seed 0, made before the "
            "character-embedding fix) moved validation F1 from 10.55 to 9.97 on fold 3 and from 8.95 to 7.22 on fold "
            "4; the ELMo runs read the same word vector beside ELMo, whose character-based input has no unknown "
            "words. NER's remedy does not carry over: a passage is counted once per question, so only 272 training "
            "word types occur once."
        },
    },
    "snli": {
        "name": "SNLI",
        "title": "SNLI (ESIM), test accuracy",
        "metric_name": "accuracy",
        "libsonnet": "experiments/snli.libsonnet",
        "configs": {"baseline": "experiments/snli_baseline.jsonnet", "elmo": "experiments/snli_elmo.jsonnet"},
        "metric": "accuracy",
        "scale": 100.0,
        "paper": {"baseline": 88.0, "elmo": 88.7},
        "elmo_at": "input; the paper: input and output",
        "analyses": {**INPUT_AND_OUTPUT, **ELMO_DIAGNOSIS},
        # experiments/bilm_finetune.jsonnet overrides for the elmo_finetuned_bilm variant, per budget; the
        # text is the budget's training pairs, the validation text its validation pairs (the paper: one epoch)
        "bilm_finetuning": {
            "smoke": {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 2},
            "mini": {"trainer.num_epochs": 3},
            "paper": {"trainer.num_epochs": 1},
        },
        "lm_text": "elmo_tasks.tasks.snli.lm_text",  # writes that text (each premise once, every hypothesis)
        # The paper's Figure 1: the training pairs sampled by premise (snli reader's '#sample=P'); the
        # full runs train on the same pairs, so they are the 100% point.
        "sample_efficiency": {},
        "full_runs_in_sample_efficiency": True,
        "sample_efficiency_data": "the training pairs, sampled by premise",
        "budgets": {
            "smoke": {**SMOKE, "sample_shares": [0.5]},
            "mini": {
                "data": "full",
                "overrides": {
                    "model.encoder.hidden_size": 100,
                    "model.inference_encoder.hidden_size": 100,
                    "model.output_feedforward.hidden_dims": 100,
                    "model.projection_feedforward.hidden_dims": 100,
                    "trainer.num_epochs": 8,
                    "trainer.patience": None,
                },
                "seeds": 3,
                "sample_shares": [0.1, 0.3],
                # about as many updates as the full runs (8 epochs of ~280 batches of 32 pairs)
                "sample_overrides": {0.1: {"trainer.num_epochs": 40}, 0.3: {"trainer.num_epochs": 20}},
            },
            "paper": {**PAPER, "sample_shares": [0.001, 0.01, 0.1]},
        },
        "trained_on": {"mini": "SNLI dev minus a held-out tenth (8.9k pairs)", "paper": "SNLI dev minus a tenth"},
        "diagnosis_notes": {
            "mini": "the cause was ELMo's own dropout on top of ESIM's input dropout (the earlier config): without it "
            "ELMo leads the baseline on the held-out tenth and on test over three seeds, and the config now has none. "
            "On that config, layer norm, twice the epochs and the biLM fine-tuned on the training pairs (one seed "
            "each) stayed within a seed's noise of it, and ELMo at the output too (three seeds, Table 3) was no "
            "better than it, so the config keeps the simpler recipe (ELMo at the input only, no layer norm, the "
            "shipped biLM)."
        },
        "notes": {
            "mini": "Trained on SNLI dev minus a held-out tenth (model selection on that tenth); the full SNLI "
            "training set was not available, so absolute numbers are not comparable with the paper's."
        },
    },
    "srl": {
        "name": "SRL",
        "title": "SRL (He et al. 2017), srl-eval F1 on CoNLL-2012 test (ELMO_TASKS_SRL_DATASET=conll2005: "
        "CoNLL-2005 test WSJ and Brown)",
        "metric_name": "F1",
        "libsonnet": "experiments/srl.libsonnet",
        "configs": {"baseline": "experiments/srl_baseline.jsonnet", "elmo": "experiments/srl_elmo.jsonnet"},
        "metric": "f1-measure-overall",
        "scale": 100.0,
        "paper": {"baseline": 81.4, "elmo": 84.6},
        "elmo_at": "input",
        "analyses": {},
        # The paper's Figure 1: CoNLL-2005 train, sampled by sentence (srl reader's '#sample=P').
        "sample_efficiency": {"env": {"ELMO_TASKS_SRL_DATASET": "conll2005"}},
        "sample_efficiency_data": "CoNLL-2005 train, sampled by sentence; tested on test WSJ",
        "budgets": {
            "smoke": {**SMOKE, "sample_shares": [0.5]},
            "mini": {
                "data": "full",
                "sample_shares": [0.01, 0.1],
                # more epochs for fewer sentences (the CoNLL-2012 runs: 10 epochs of ~270 batches, the config's own
                # count: at 3 the baseline had not left its starting plateau); CoNLL-2005 train has
                # ~1,135 batches of 80 predicates: 10% is ~113 an epoch (8 epochs: ~900 updates), 1% ~11 (30: ~330,
                # each epoch also validating on all of devel).
                "sample_overrides": {0.01: {"trainer.num_epochs": 30}, 0.1: {"trainer.num_epochs": 8}},
                "env": {"ELMO_TASKS_SRL_DATASET": "conll2012"},
                "overrides": {
                    "model.encoder.hidden_size": 100,
                    "model.encoder.num_layers": 4,
                    "trainer.num_epochs": 10,
                    "trainer.patience": None,
                },
                "seeds": 3,
            },
            "paper": PAPER,
        },
        "trained_on": {
            "mini": "CoNLL-2012 dev minus a held-out tenth of its documents",
            "paper": "CoNLL-2005 train (WSJ 02-21)",
        },
        "notes": {
            "mini": "The paper reports CoNLL-2012; CoNLL-2012 here trains on its dev set split by document (its "
            "training split is not available) and is tested on its test set. CoNLL-2005 comes from the "
            "sample-efficiency runs (`--sample-efficiency`: 1% and 10% of train, selected on devel), tested on test "
            "WSJ (their Test column and the sample-efficiency table) and test Brown (`test_brown` below). A 4-layer, "
            "100-unit model instead of 8 x 300, no GloVe and far fewer epochs than the paper (see "
            "experiments/srl.libsonnet)."
        },
    },
    "coref": {
        "name": "Coref",
        "title": "CoNLL-2012 coreference (Lee et al. 2017), test average F1 of MUC, B-cubed, CEAF-phi4",
        "metric_name": "average F1",
        "libsonnet": "experiments/coref.libsonnet",
        "configs": {"baseline": "experiments/coref_baseline.jsonnet", "elmo": "experiments/coref_elmo.jsonnet"},
        "metric": "coref_f1",
        "scale": 100.0,
        "also_report": {"muc_f1": "MUC F1", "bcub_f1": "B-cubed F1", "ceafe_f1": "CEAF-phi4 F1"},
        "paper": {"baseline": 67.2, "elmo": 70.4},
        "elmo_at": "input",
        "analyses": {},
        "budgets": {
            "smoke": SMOKE,
            "mini": {
                "data": "full",
                "overrides": {
                    "model.antecedent_feedforward.hidden_dims": 100,
                    "model.context_layer.hidden_size": 100,
                    "model.mention_feedforward.hidden_dims": 100,
                    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 100,
                    "trainer.num_epochs": 4,
                    "trainer.patience": None,
                },
                "seeds": 3,
            },
            "paper": PAPER,
        },
        "trained_on": {
            "mini": "CoNLL-2012 dev minus a held-out tenth of its documents (~310 documents)",
            "paper": "CoNLL-2012 dev minus a held-out tenth of its documents",
        },
        "notes": {
            "mini": "Trained on CoNLL-2012 dev minus a held-out tenth of its documents (model selection there): 343 "
            "instead of 2,802 training documents, no GloVe, K = 50 antecedents and far fewer steps, so absolute "
            "numbers are not comparable with the paper's (see experiments/coref.libsonnet)."
        },
    },
    "ner": {
        "name": "NER",
        "title": "CoNLL-2003 NER (BiLSTM-CRF), eng.testb span F1",
        "metric_name": "F1",
        "libsonnet": "experiments/ner.libsonnet",
        "configs": {"baseline": "experiments/ner_baseline.jsonnet", "elmo": "experiments/ner_elmo.jsonnet"},
        "metric": "f1-measure-overall",
        "scale": 100.0,
        "paper": {"baseline": 90.15, "elmo": 92.22},
        "elmo_at": "input, lambda 0.1",
        "analyses": {**LAYER_ANALYSES, **ELMO_DIAGNOSIS},
        # The elmo_finetuned_bilm variant: the biLM fine-tuned on eng.train's sentences (eng.testa's for its
        # validation perplexity) with experiments/bilm_finetune.jsonnet and these overrides, per budget.
        "bilm_finetuning": {
            "smoke": {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 2},
            "mini": {"trainer.num_epochs": 2},
            "paper": {"trainer.num_epochs": 1},
        },
        "lm_text": "elmo_tasks.tasks.ner.lm_text",
        "budgets": {
            "smoke": SMOKE,
            "mini": {
                "data": "full",
                "overrides": {
                    # whole epochs of eng.train (220 batches of 64), not the old 60 batches an epoch. At 20
                    # epochs the baseline's eng.testa F1 was still rising (0.2 to 1 point an epoch on its last
                    # five), ELMo's had levelled off from about epoch 10: 30 epochs let the baseline converge too
                    "model.encoder.hidden_size": 100,
                    "trainer.num_epochs": 30,
                    "trainer.patience": None,
                },
                "seeds": 3,
            },
            "paper": PAPER,
        },
        "trained_on": {"mini": "eng.train (14,041 sentences), 30 epochs", "paper": "eng.train"},
        "diagnosis_notes": {
            "mini": "two config changes made ELMo lead. (1) ELMo's own dropout on top of the tagger's input dropout "
            "dropped ELMo out twice (the row 'ELMo's own dropout 0.5 too': 90.21 on eng.testa against 90.83 for the "
            "same seed without it); the config now has none. (2) The unknown-word vector: with every eng.train word "
            "in the vocabulary it was never trained, and the 11% of eng.testb tokens unseen in training (7.5% of "
            "eng.testa) were tagged from its random initial values. Test F1 then spread over 5 points across seeds "
            "(baseline 76.84 to 81.96) and ELMo did not lead on eng.testb (79.58 ± 2.48 against 79.73 ± 2.62, 3 seeds "
            "each). With the words seen once in eng.train mapped to it, so that training updates it (the config now), "
            "both rose and the spread shrank, ELMo's most (Table 1). Rows marked † predate change (2)."
        },
        "notes": {
            "mini": "Trained on eng.train, model selection on eng.testa; no pretrained word vectors (GloVe is not "
            "available here; words seen once in eng.train share the trained unknown-word vector) and fewer epochs "
            "than the paper (see experiments/ner.libsonnet)."
        },
    },
    "sst5": {
        "name": "SST-5",
        "title": "SST-5 (biattentive classification network), test root accuracy",
        "metric_name": "accuracy",
        "libsonnet": "experiments/sst5.libsonnet",
        "configs": {"baseline": "experiments/sst5_baseline.jsonnet", "elmo": "experiments/sst5_elmo.jsonnet"},
        "metric": "accuracy",
        "scale": 100.0,
        "paper": {"baseline": 51.4, "elmo": 54.7},
        "elmo_at": "input and output, lambda 0.001",  # its Table 2 row's lambda = 0.001 column is this model
        "analyses": {**LAYER_ANALYSES, **INPUT_ONLY},
        "budgets": {
            "smoke": SMOKE,
            "mini": {
                "data": "full",
                "overrides": {
                    "dataset_reader.phrases": "roots",
                    "model.encoder.hidden_size": 100,
                    "model.feedforward.hidden_dims": [200],
                    "model.integrator.hidden_size": 100,
                    "model.pre_encode_feedforward.hidden_dims": [100],
                    "trainer.num_epochs": 8,
                    "trainer.patience": None,
                },
                "seeds": 3,
            },
            "paper": PAPER,
        },
        "trained_on": {"mini": "SST train roots (8,544 sentences)", "paper": "SST train, all phrases"},
        "notes": {
            "mini": "Selected on dev roots; no GloVe (trainable embeddings) and smaller/shorter training than the "
            "paper (see experiments/sst5.libsonnet). The config trains on all distinct phrases of train.txt, as the "
            "paper did; the mini budget trains on sentences only (`dataset_reader.phrases: roots`)."
        },
    },
}

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
BUDGETS = ("smoke", "mini", "paper")

# The shipped biLMs by the start of their weights' sha256 (what run records hold), for the report.
BILM_NAMES = {
    "e309e129aa32eec2": "the stage-2 shipped biLM (held-out perplexity 313 Wikipedia, 372 news; see its model card)",
    "555c6764f6f2cab4": "the stage-3 shipped biLM (held-out perplexity 211 Wikipedia, 136 news; see its model card)",
}


def run_name(task: str, split: Optional[str], k: int) -> str:
    """``seed<k>``, or ``fold<K>of<N>-seed<k>`` for a run on another split than the task's default."""
    spec = TASKS[task].get("split")
    if spec is None or split in (None, spec["default"]):
        return f"seed{k}"
    return f"{spec['label']}{split.replace('/', 'of')}-seed{k}"


def default_split(task: str) -> Optional[str]:
    spec = TASKS[task].get("split")
    return spec["default"] if spec else None


def variants(
    task: str, analyses: bool, budget: Optional[str] = None, sample_efficiency: bool = False
) -> Dict[str, Dict[str, Any]]:
    """``variant -> {"config": file, "overrides": {...}, ...}``: baseline and elmo, plus the analyses
    and the sample-efficiency runs of ``budget`` (``train_share``: the path suffix to add)."""
    spec = TASKS[task]
    found: Dict[str, Dict[str, Any]] = {name: {"config": path} for name, path in spec["configs"].items()}
    if analyses:
        for name, analysis in spec["analyses"].items():
            found[name] = {"config": spec["configs"]["elmo"], **analysis}
    if sample_efficiency and "sample_efficiency" in spec:
        budget_spec = spec["budgets"][budget or "paper"]
        for share in budget_spec.get("sample_shares", [0.01, 0.1]):
            overrides = budget_spec.get("sample_overrides", {}).get(share, {})
            for name, path in spec["configs"].items():
                found[f"{name}_sample{share}"] = {
                    "config": path,
                    "train_share": share,
                    **spec["sample_efficiency"],
                    **({"overrides": overrides} if overrides else {}),
                }
    return found
