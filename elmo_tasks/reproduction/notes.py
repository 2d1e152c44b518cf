"""What the report says about each task besides its numbers, read from ``task_notes.toml`` beside this file.

Prose lives in that file rather than in the task specs, so that the specs hold only what the runs use.
"""

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

NOTES_FILE = Path(__file__).with_name("task_notes.toml")


@dataclass(frozen=True)
class TaskNotes:
    """A task's section title and its notes, each keyed by the budget whose runs it describes."""

    title: str
    trained_on: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    diagnosis_notes: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, str] = field(default_factory=dict)  # what holds a budget's absolute number down
    sample_efficiency_data: str = "the training file"

    def note(self, budget: Optional[str]) -> Optional[str]:
        return self.notes.get(budget or "")

    def diagnosis_note(self, budget: Optional[str]) -> Optional[str]:
        return self.diagnosis_notes.get(budget or "")


@functools.cache
def _notes_file() -> Dict[str, Any]:
    with open(NOTES_FILE, "rb") as handle:
        return tomllib.load(handle)


def task_notes(task: str) -> TaskNotes:
    """The notes of ``task`` (a key of ``TASKS``)."""
    return TaskNotes(**_notes_file()[task])


def shipped_bilm_names() -> Dict[str, str]:
    """The shipped biLMs by the start of their weights' sha256 (what run records hold)."""
    return dict(_notes_file()["shipped_bilms"])
