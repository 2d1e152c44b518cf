"""The reproduction harness of the paper's benchmarks (``scripts/reproduce.py``): baseline vs. ELMo on the
six tasks, several seeds, run records and the report generated from them (docs/RESULTS.md).

Modules, one concern each: ``specs`` (what a task is made of), ``task_table`` (the budgets and variants
the tasks' specs share, and ``TASKS``, read from each task's ``elmo_tasks/tasks/<task>/spec.py``), ``notes``
(what the report says about a task, its spec's ``report``), ``plan`` (the runs an invocation asks for and
each run's settings), ``configs`` (what settings resolve to), ``decide`` (reuse, skip, train, resume),
``one_run``, ``finetune`` and ``allennlp_runs`` (running allennlp), ``locks``, ``devices``, ``word_vectors``,
``training_time``, ``records``, ``report*`` and ``plots``, ``diagnose`` (a few SNLI steps), ``shipping`` and
``model_card`` (``--ship``: a recorded run as a shipped model, elmo_tasks/pretrained/TASK) and ``cli``.

The AllenNLP plugin imports none of it when it is imported. The tasks' specs are written with ``specs``,
``task_table`` and ``notes`` (which import nothing else of the harness but ``allennlp_runs``), so a command that looks
up a task (its archive's commands, its demo page) imports those four and no more: importing this package
does not import the command line.
"""

from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    """``scripts/reproduce.py`` (:func:`elmo_tasks.reproduction.cli.main`), imported when it runs."""
    # first: the dependencies' FutureWarnings that users cannot act on stay silent, as in our commands
    import elmo_tasks.warnings_filter  # noqa: F401,I001
    from elmo_tasks.reproduction.cli import main as run_harness

    return run_harness(argv)


__all__ = ["main"]
