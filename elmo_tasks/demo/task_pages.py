"""The tasks the demo can show: which predictor each model uses, its page name and its form.

Each task's page is part of its spec (``demo`` in ``elmo_tasks/tasks/<task>/spec.py``, a :class:`DemoPage`),
read through the task registry (:mod:`elmo_tasks.tasks.registry`), so a new task folder gets its page with
no change here. A model archive says its model type; each of our models names its ``default_predictor``,
and that predictor is the task (the same mapping ``elmo_tasks.commands.command_paths`` uses for its
messages). The form of a task page has one field per input key of the predictor, in the order of an
``allennlp predict`` line, prefilled with an example a reader can change.
"""

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

from elmo_tasks.tasks.registry import TaskList, TaskView


@dataclass(frozen=True)
class FormField:
    """One input key of a predictor, as the page's form shows it."""

    key: str
    label: str
    example: str
    #: a textarea (several lines) rather than a one-line input
    multiline: bool = False
    #: optional keys are left out of the request when empty (SRL's ``verbs``)
    optional: bool = False
    #: "text" (sent as a string) or "indices" (comma-separated integers, sent as a JSON list)
    kind: str = "text"


@dataclass(frozen=True)
class DemoPage:
    """What a task's spec says about its page: its title, what the page draws and the form's fields."""

    title: str
    what_it_shows: str
    fields: Sequence[FormField]


@dataclass(frozen=True)
class DemoTask:
    """A task: its default page name, title, predictor and form."""

    name: str
    title: str
    predictor: str
    what_it_shows: str
    fields: List[FormField]

    def example(self) -> Dict[str, str]:
        """The prefilled input, as a JSON object (optional fields left out)."""
        return {field.key: field.example for field in self.fields if not field.optional}


_PAGES: TaskView[DemoTask] = TaskView(
    lambda spec: DemoTask(spec.key, spec.demo.title, spec.key, spec.demo.what_it_shows, list(spec.demo.fields))
)
#: Every task's page, by its predictor (the task's key, which is also the page's default name).
TASK_BY_PREDICTOR: Mapping[str, DemoTask] = _PAGES
#: The same pages in the tasks' order.
TASKS: Sequence[DemoTask] = TaskList(_PAGES)


def task_of_predictor(predictor: Optional[str]) -> Optional[DemoTask]:
    """The task whose predictor is ``predictor`` (a model's ``default_predictor``), or None."""
    return TASK_BY_PREDICTOR.get(predictor or "")
