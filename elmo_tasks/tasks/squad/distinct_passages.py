"""Rows of a batch that hold the same passage (questions on one passage): found once, so the model
embeds and encodes each distinct passage once per batch."""

from typing import Dict, List, Tuple

import torch
from allennlp.data import TextFieldTensors


def _flat_tensors(text: TextFieldTensors) -> List[torch.Tensor]:
    return [tensor for indexer in text.values() for tensor in indexer.values()]


def distinct_rows(text: TextFieldTensors) -> Tuple[List[int], List[int]]:
    """The first row of each distinct text in a batch, and for every row the position of its
    text in that list (rows are equal when all their index tensors are equal)."""
    tensors = [tensor.detach().cpu().reshape(tensor.size(0), -1) for tensor in _flat_tensors(text)]
    first_rows: List[int] = []
    row_to_distinct: List[int] = []
    seen: Dict[bytes, int] = {}
    for row in range(tensors[0].size(0)):
        key = b"|".join(tensor[row].numpy().tobytes() for tensor in tensors)
        if key not in seen:
            seen[key] = len(first_rows)
            first_rows.append(row)
        row_to_distinct.append(seen[key])
    return first_rows, row_to_distinct


def select_rows(text: TextFieldTensors, index: torch.Tensor) -> TextFieldTensors:
    return {
        name: {key: tensor.index_select(0, index) for key, tensor in indexer.items()} for name, indexer in text.items()
    }
