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

LstmState = Tuple[torch.Tensor, torch.Tensor]  # (h: (2, rows, proj), c: (2, rows, dim))


class ProjectedLstmLayer(nn.Module):
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
        h, c = initial
        batch = h.shape[1]
        outputs: List[torch.Tensor] = []
        finished_h: List[torch.Tensor] = []
        finished_c: List[torch.Tensor] = []
        if batch_sizes and batch_sizes[0] < batch:  # rows without any token keep their state
            finished_h.append(h[:, batch_sizes[0] :])
            finished_c.append(c[:, batch_sizes[0] :])
        dim = self.cell_dim
        # One split up front: slicing per step would make autograd zero a full-size gradient each step.
        step_gates = pre_gates.split(batch_sizes, dim=1)
        for step, rows in enumerate(batch_sizes):
            h, c = h[:, :rows], c[:, :rows]
            gates = torch.baddbmm(step_gates[step], h, self.w_state)
            sig = torch.sigmoid(gates)
            c = sig[..., 2 * dim : 3 * dim] * c + sig[..., :dim] * torch.tanh(gates[..., dim : 2 * dim])
            if self.cell_clip:
                c = c.clamp(-self.cell_clip, self.cell_clip)
            h = torch.bmm(sig[..., 3 * dim :] * torch.tanh(c), self.w_projection)
            if self.proj_clip:
                h = h.clamp(-self.proj_clip, self.proj_clip)
            outputs.append(h)
            following = batch_sizes[step + 1] if step + 1 < len(batch_sizes) else 0
            if following < rows:
                finished_h.append(h[:, following:])
                finished_c.append(c[:, following:])
        final = (torch.cat(finished_h[::-1], dim=1), torch.cat(finished_c[::-1], dim=1))
        return torch.cat(outputs, dim=1), final
