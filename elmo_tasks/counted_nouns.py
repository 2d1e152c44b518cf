"""Counts in messages, with their nouns in the right number: "1 empty line", "4 empty lines".

No AllenNLP import: the biLM's plain PyTorch command uses it too.
"""

from typing import Optional


def counted(count: int, singular: str, plural: Optional[str] = None, grouped: bool = False) -> str:
    """``count`` and the noun that goes with it (``plural`` defaults to ``singular + "s"``);
    ``grouped`` writes thousands separators (``1,234``)."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {singular if count == 1 else (plural or singular + 's')}"
