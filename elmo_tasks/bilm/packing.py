"""Length-sorted "packed" layout shared by the forward and backward LSTMs.

Rows are sorted by length (longest first) and stored time-major: step ``t`` holds the first
``batch_sizes[t]`` sorted rows. The backward LM reads each sentence reversed, which in this
layout is only a different gather index, so both directions run in lock-step over the same
schedule and no LSTM work is spent on padding.
"""

from dataclasses import dataclass
from typing import List

import torch


@dataclass
class PackedLayout:
    forward_index: torch.Tensor  # (total,) positions into the flattened (batch * time) grid
    backward_index: torch.Tensor  # (total,) the same for the reversed sentences
    batch_sizes: List[int]  # rows still running at each step
    sorted_rows: torch.Tensor  # (batch,) original row of each sorted slot
    lengths: List[int]  # sorted lengths

    @property
    def total(self) -> int:
        return int(self.forward_index.shape[0])


def packed_layout(mask: torch.Tensor) -> PackedLayout:
    """Build the layout for a left-aligned ``mask`` ``(batch, time)``."""
    batch, time = mask.shape
    lengths = mask.sum(dim=1)
    sorted_lengths, sorted_rows = torch.sort(lengths, descending=True, stable=True)
    lengths_list: List[int] = sorted_lengths.tolist()
    longest = lengths_list[0] if lengths_list else 0
    steps = torch.arange(longest, device=mask.device)
    # active[t, r]: sorted row r still runs at step t. Row-major over (t, r) is the packed order.
    active = steps.unsqueeze(1) < sorted_lengths.unsqueeze(0)
    step_of, slot_of = active.nonzero(as_tuple=True)
    row_of = sorted_rows[slot_of]
    forward_index = row_of * time + step_of
    backward_index = row_of * time + (sorted_lengths[slot_of] - 1 - step_of)
    batch_sizes = active.sum(dim=1).tolist()
    return PackedLayout(forward_index, backward_index, batch_sizes, sorted_rows, lengths_list)
