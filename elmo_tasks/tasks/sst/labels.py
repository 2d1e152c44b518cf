"""The meaning of SST class indices, shared by the reader and the predictor."""

from typing import List

from allennlp.common.checks import ConfigurationError

FINE_GRAINED_NAMES: List[str] = ["very negative", "negative", "neutral", "positive", "very positive"]
BINARY_NAMES: List[str] = ["negative", "positive"]


def to_binary(label: int) -> int:
    """SST-2 class of a 0..4 label: 0-1 -> 0 (negative), 3-4 -> 1 (positive). Neutral has none."""
    if label == 2:
        raise ValueError("neutral (2) phrases have no binary class; the reader drops them")
    return 0 if label < 2 else 1


def class_names(num_classes: int) -> List[str]:
    """Names for a model's classes: 5 -> fine-grained, 2 -> binary."""
    if num_classes == len(FINE_GRAINED_NAMES):
        return FINE_GRAINED_NAMES
    if num_classes == len(BINARY_NAMES):
        return BINARY_NAMES
    raise ConfigurationError(f"SST models have 5 (fine-grained) or 2 (binary) classes, not {num_classes}")
