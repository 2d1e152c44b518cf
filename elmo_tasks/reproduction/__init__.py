"""The reproduction harness of the paper's benchmarks (``scripts/reproduce.py``): baseline vs. ELMo on the
six tasks, several seeds, run records and the report generated from them (docs/RESULTS.md).

Modules, one concern each: ``specs`` (what a task is made of) and ``tasks`` (the six tasks, their
budgets and variants), ``notes`` (what the report says about them, from ``task_notes.toml``), ``plan``
(the runs an invocation asks for and each run's settings), ``configs`` (what settings resolve to),
``decide`` (reuse, skip, train, resume), ``runner``, ``finetune`` and ``commands`` (running allennlp),
``records``, ``report*`` and ``plots``, ``diagnose`` (a few SNLI steps), ``shipping`` and ``model_card``
(``--ship``: a recorded run as a shipped model, elmo_tasks/pretrained/TASK) and ``cli``.

The AllenNLP plugin never imports this package: it is for the command line and the tests.
"""

from elmo_tasks.reproduction.cli import main

__all__ = ["main"]
