"""``allennlp pretrained-models`` (``elmo-tasks pretrained-models``): the task models shipped with elmo-tasks.

One line per model (its name, task, variant, budget and seed, its validation and test metric, its size
and storage, its card), then their total against the budget (elmo_tasks/pretrained/catalogue.py); with
none shipped yet, one line saying how to ship one.
"""

import argparse

from elmo_tasks.commands.registration import register_command
from elmo_tasks.pretrained.catalogue import listing_lines, shipped_models

DESCRIPTION = """List the task models shipped with elmo-tasks: each loads by its name wherever an archive
path goes (`elmo-tasks predict elmo_tasks:pretrained/ner input.jsonl --predictor ner`,
`Predictor.from_path("elmo_tasks:pretrained/ner")`, `elmo-tasks elmo-demo`). Each line gives the
name, the task, the run it comes from, its validation and test metric, its size and its model card
(docs/PRETRAINED.md)."""
SUMMARY = "List the shipped task models (elmo_tasks:pretrained/TASK)."


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    return parser


def run(args: argparse.Namespace) -> None:
    for line in listing_lines(shipped_models()):
        print(line)


PretrainedModels = register_command("pretrained-models", DESCRIPTION, SUMMARY, add_arguments, run)
