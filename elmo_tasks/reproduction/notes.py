"""What the report says about each task besides its numbers: a :class:`TaskNotes` in each task's spec.

Each task's notes are ``report`` in its spec (``elmo_tasks/tasks/<task>/spec.py``), beside what its runs use,
so that a task is one file; the report reads them here by the task's key.
"""

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional

from elmo_tasks.tasks.registry import TaskView


@dataclass(frozen=True)
class TaskNotes:
    """A task's section title and its notes, each keyed by the budget whose runs it describes: a report shows
    only what its own budget's records say. ``diagnosis_notes`` say what the diagnosis variants
    (``--analyses``) showed, shown only where the report holds those runs."""

    title: str
    trained_on: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    diagnosis_notes: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, str] = field(default_factory=dict)  # what holds a budget's absolute number down
    sample_efficiency_data: str = "the training file"  # what the sample-efficiency runs train on

    def note(self, budget: Optional[str]) -> Optional[str]:
        return self.notes.get(budget or "")

    def diagnosis_note(self, budget: Optional[str]) -> Optional[str]:
        return self.diagnosis_notes.get(budget or "")


NOTES: Mapping[str, TaskNotes] = TaskView(lambda spec: spec.report)

# The shipped biLMs by the start of their weights' sha256 (what run records hold), as Table 1 names them.
SHIPPED_BILMS = {
    "e309e129aa32eec2": "the stage-2 shipped biLM (held-out perplexity 313 Wikipedia, 372 news; see its model card)",
    "555c6764f6f2cab4": "the stage-3 shipped biLM (held-out perplexity 211 Wikipedia, 136 news; see its model card)",
    "d8cea640858b0f59": "the stage-4 shipped biLM (held-out perplexity 178 Wikipedia, 109 news; see its model card)",
    "5df1ddf7527e6744": "the stage-5 shipped biLM (held-out perplexity 111 Wikipedia, 67 news; see its model card)",
}


def task_notes(task: str) -> TaskNotes:
    """The notes of ``task`` (a key of ``TASKS``)."""
    return NOTES[task]


def shipped_bilm_names() -> Dict[str, str]:
    """The shipped biLMs by the start of their weights' sha256 (what run records hold)."""
    return dict(SHIPPED_BILMS)
