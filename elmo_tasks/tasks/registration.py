"""Registering a task's model under the names of its ``names.py`` (README, "Registered names")."""

from typing import Callable, Type, TypeVar

from allennlp.models import Model

from elmo_tasks.tasks.names import TaskNames

ModelClass = TypeVar("ModelClass", bound=Type[Model])


def register_task_model(names: TaskNames, old_name: str) -> Callable[[ModelClass], ModelClass]:
    """Registers a task's model as ``<task>_model`` and under its earlier name, both built by
    ``from_partial_objects`` (the constructor that derives the input sizes from the embedder), and
    makes the task's predictor its default predictor: one place that does it alike for every task."""

    def register(model_class: ModelClass) -> ModelClass:
        for name in (names.model, old_name):
            Model.register(name, constructor="from_partial_objects")(model_class)
        model_class.default_predictor = names.predictor
        return model_class

    return register
