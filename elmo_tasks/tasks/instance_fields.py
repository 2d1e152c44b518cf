"""An instance's fields as the classes the reader built them with.

``instance[key]`` is a plain ``Field`` to a type checker, which then knows none of what a
``TextField``, ``ListField`` or ``MetadataField`` holds (token indexers, fields, metadata keys).
These give the fields with their classes, and fail on the spot where one is not of its class.
"""

from typing import List, Type, TypeVar

from allennlp.data import Field, Instance
from allennlp.data.fields import ListField

FieldClass = TypeVar("FieldClass", bound=Field)


def field_of(instance: Instance, key: str, kind: Type[FieldClass]) -> FieldClass:
    """``instance[key]``, which must be a ``kind`` (a reader built the instance, so it is one)."""
    return _checked(instance[key], key, kind)


def items_of(instance: Instance, key: str, kind: Type[FieldClass]) -> List[FieldClass]:
    """The fields of ``instance[key]``, a ``ListField`` of ``kind`` fields."""
    return [_checked(item, key, kind) for item in field_of(instance, key, ListField).field_list]


def _checked(field: Field, key: str, kind: Type[FieldClass]) -> FieldClass:
    if not isinstance(field, kind):
        raise TypeError(f"the instance's field {key!r} holds a {type(field).__name__}, expected a {kind.__name__}")
    return field
