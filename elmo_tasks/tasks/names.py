"""The names a task registers, derived once from the task's name (README, "Registered names").

Every task names its components the same way: the predictor by the task alone (what
``--predictor`` and the demo take), the model ``<task>_model`` and the reader ``<task>_reader``.
The names of earlier versions stay registered in each task's ``names.py``, so configs and
archives written with them keep working (docs/MIGRATING.md).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskNames:
    """The registered names of one task; ``task`` is also the predictor's name."""

    task: str

    @property
    def predictor(self) -> str:
        return self.task

    @property
    def model(self) -> str:
        return f"{self.task}_model"

    @property
    def reader(self) -> str:
        return f"{self.task}_reader"
