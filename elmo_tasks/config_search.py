"""Searching a resolved AllenNLP config (nested dicts and lists): what the demo and the reproduction harness
read from configs whose nesting differs between tasks."""

from typing import Any, Dict, Iterator


def dicts_with(value: Any, key: str) -> Iterator[Dict[str, Any]]:
    """Every dict inside ``value`` (nested dicts and lists), outermost first, that has ``key``."""
    if isinstance(value, dict):
        if key in value:
            yield value
        for inner in value.values():
            yield from dicts_with(inner, key)
    elif isinstance(value, list):
        for inner in value:
            yield from dicts_with(inner, key)
