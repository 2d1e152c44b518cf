"""The biLM's contextual layers: LSTMs with a projection, clipping and an optional residual.

One ``ProjectedLstmLayer`` holds the weights of BOTH directions (stacked on a leading axis of
size 2) so that the forward and backward LMs advance together with batched matmuls: half the
Python steps, larger GEMMs. The input half of each gate matrix is applied to all time steps
at once before the loop; only the recurrent half runs step by step.

The cell follows TensorFlow's ``LSTMCell(num_proj, cell_clip, proj_clip)`` used by bilm-tf:
gates in (input, new input, forget, output) order, and like TensorFlow the forget bias of 1 is
added at run time, so ``bias`` holds exactly what the hdf5 file holds.
"""

from typing import List, Optional, Tuple

import torch
from torch import nn

from elmo_tasks.bilm.lstm_time_loop import LstmState, ProjectedLstmLoop, product_dtype, run_loop

__all__ = ["LstmState", "ProjectedLstmLayer"]


class ProjectedLstmLayer(nn.Module):
    forget_shift: torch.Tensor  # a buffer (not saved): 1 on the forget gate, added at run time

    def __init__(
        self, input_dim: int, cell_dim: int, projection_dim: int, cell_clip: Optional[float], proj_clip: Optional[float]
    ) -> None:
        super().__init__()
        self.cell_dim = cell_dim
        self.projection_dim = projection_dim
        self.cell_clip = cell_clip
        self.proj_clip = proj_clip
        self.w_input = nn.Parameter(torch.empty(2, input_dim, 4 * cell_dim))
        self.w_state = nn.Parameter(torch.empty(2, projection_dim, 4 * cell_dim))
        self.bias = nn.Parameter(torch.zeros(2, 4 * cell_dim))
        self.w_projection = nn.Parameter(torch.empty(2, cell_dim, projection_dim))
        forget_shift = torch.zeros(4 * cell_dim)
        forget_shift[2 * cell_dim : 3 * cell_dim] = 1.0
        self.register_buffer("forget_shift", forget_shift, persistent=False)
        bound = (1.0 / cell_dim) ** 0.5
        for w in (self.w_input, self.w_state, self.w_projection):
            nn.init.uniform_(w, -bound, bound)

    def forward(
        self, inputs: torch.Tensor, batch_sizes: List[int], initial: LstmState
    ) -> Tuple[torch.Tensor, LstmState]:
        """Run both directions over packed ``inputs`` ``(2, total, input_dim)``.

        ``initial`` holds the starting states of the sorted rows ``(2, batch, ...)``. Returns the
        packed outputs ``(2, total, projection_dim)`` and each row's final state (sorted order).
        """
        pre_gates = torch.baddbmm((self.bias + self.forget_shift).unsqueeze(1), inputs, self.w_input)
        h0, c0 = initial
        if not batch_sizes:  # no tokens at all: every row keeps its state
            return pre_gates.new_zeros(2, 0, self.projection_dim), (h0, c0)
        clips = (self.cell_clip, self.proj_clip)
        if torch.is_grad_enabled() and any(t.requires_grad for t in (pre_gates, self.w_state, self.w_projection)):
            outputs, final_h, final_c = ProjectedLstmLoop.apply(
                pre_gates, self.w_state, self.w_projection, h0, c0, list(batch_sizes), *clips, product_dtype()
            )
            return outputs, (final_h, final_c)
        steps, _, final = run_loop(pre_gates, batch_sizes, initial, self.w_state, self.w_projection, *clips)
        return torch.cat([values.h for values in steps], dim=1), final
