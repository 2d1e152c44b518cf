"""The recurrent loop of a projected LSTM layer, with a hand-written backward pass for training.

Autograd differentiates the loop one small operation at a time: every step's slices of the
gate matrix get zero-filled full-size gradients, and the two weight gradients are built from
one small matrix product per step (``rows x 128`` by ``rows x 4096``) added up step by step.
``ProjectedLstmLoop`` computes the same forward values with the same operations, keeps what
the backward pass needs, and in its backward pass runs only the two products per step that
carry the gradient back in time; both weight gradients are then one large product each over
all steps. The gradients equal autograd's up to float rounding (tests/bilm/test_lstm_time_loop.py).

Under ``torch.autocast("cpu", dtype=torch.bfloat16)`` (the biLM trainer's ``autocast`` option)
the matrix products of the loop and of its backward pass take bfloat16 inputs, which CPUs with
AMX or AVX-512 BF16 multiply several times faster, while the state, the gates and every
gradient stay float32: ``product_dtype`` is read once per call and the loop casts explicitly,
so nothing depends on which operations autocast happens to lower.
"""

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import torch

# autograd's own fused derivative kernels (not public PyTorch: the adapter says what it relies on)
from elmo_tasks.bilm.torch_private import sigmoid_backward, tanh_backward

LstmState = Tuple[torch.Tensor, torch.Tensor]  # (h: (2, rows, proj), c: (2, rows, dim))


@dataclass
class StepValues:
    """One time step of both directions: what the next step and the backward pass need."""

    h: torch.Tensor  # (2, rows, proj), after clipping
    c: torch.Tensor  # (2, rows, dim), after clipping
    gates: torch.Tensor  # sigmoid of all four gate blocks (the second block is unused)
    new_input: torch.Tensor  # tanh of the second gate block
    tanh_c: torch.Tensor
    cell_output: torch.Tensor  # output gate * tanh(c): the projection's input
    c_in_range: Optional[torch.Tensor]  # where the cell clip let the gradient through
    h_in_range: Optional[torch.Tensor]


def product_dtype() -> Optional[torch.dtype]:
    """The dtype of the loop's matrix products: autocast's CPU dtype when it is on, else None (float32)."""
    if torch.is_autocast_enabled("cpu"):
        return torch.get_autocast_dtype("cpu")
    return None


def _times(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``left @ right`` multiplied in ``right``'s dtype (the weights, cast once), returned in ``left``'s."""
    if left.dtype == right.dtype:
        return torch.bmm(left, right)
    return torch.bmm(left.to(right.dtype), right).to(left.dtype)


def lstm_step(
    step_pre_gates: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    w_state: torch.Tensor,
    w_projection: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
    for_backward: bool,
) -> StepValues:
    """One step for the ``rows`` rows of ``h``/``c``; gates in (input, new input, forget, output) order.

    ``for_backward`` also records where the clips let the gradient through (``clamp``'s rule).
    """
    dim = w_projection.shape[1]
    if w_state.dtype == h.dtype:
        gates = torch.baddbmm(step_pre_gates, h, w_state)
    else:
        gates = step_pre_gates + _times(h, w_state)
    sig = torch.sigmoid(gates)
    new_input = torch.tanh(gates[..., dim : 2 * dim])
    c = sig[..., 2 * dim : 3 * dim] * c + sig[..., :dim] * new_input
    c_in_range = None
    if cell_clip:
        if for_backward:
            c_in_range = c.abs() <= cell_clip
        c = c.clamp(-cell_clip, cell_clip)
    tanh_c = torch.tanh(c)
    cell_output = sig[..., 3 * dim :] * tanh_c
    h = _times(cell_output, w_projection)
    h_in_range = None
    if proj_clip:
        if for_backward:
            h_in_range = h.abs() <= proj_clip
        h = h.clamp(-proj_clip, proj_clip)
    return StepValues(h, c, sig, new_input, tanh_c, cell_output, c_in_range, h_in_range)


def run_loop(
    pre_gates: torch.Tensor,
    batch_sizes: Sequence[int],
    initial: LstmState,
    w_state: torch.Tensor,
    w_projection: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
    for_backward: bool = False,
) -> Tuple[List[StepValues], List[LstmState], LstmState]:
    """Run every step; return each step's values, the state each step started from, and the
    final state of every row (sorted order; rows without tokens keep their initial state)."""
    h, c = initial
    batch = h.shape[1]
    steps: List[StepValues] = []
    previous: List[LstmState] = []
    finished_h: List[torch.Tensor] = []
    finished_c: List[torch.Tensor] = []
    if batch_sizes[0] < batch:
        finished_h.append(h[:, batch_sizes[0] :])
        finished_c.append(c[:, batch_sizes[0] :])
    # One split up front: slicing per step would make autograd zero a full-size gradient each step.
    step_pre_gates = pre_gates.split(list(batch_sizes), dim=1)
    for step, rows in enumerate(batch_sizes):
        h, c = h[:, :rows], c[:, :rows]
        previous.append((h, c))
        values = lstm_step(step_pre_gates[step], h, c, w_state, w_projection, cell_clip, proj_clip, for_backward)
        steps.append(values)
        h, c = values.h, values.c
        following = batch_sizes[step + 1] if step + 1 < len(batch_sizes) else 0
        if following < rows:
            finished_h.append(h[:, following:])
            finished_c.append(c[:, following:])
    final = (torch.cat(finished_h[::-1], dim=1), torch.cat(finished_c[::-1], dim=1))
    return steps, previous, final


class ProjectedLstmLoop(torch.autograd.Function):
    """``(pre_gates, w_state, w_projection, h0, c0) -> (packed outputs, final h, final c)``."""

    @staticmethod
    def forward(  # autograd.Function's forward takes the context first
        ctx: Any,
        pre_gates: torch.Tensor,
        w_state: torch.Tensor,
        w_projection: torch.Tensor,
        h0: torch.Tensor,
        c0: torch.Tensor,
        batch_sizes: List[int],
        cell_clip: Optional[float],
        proj_clip: Optional[float],
        low_dtype: Optional[torch.dtype] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        ctx.pre_gates_dtype = pre_gates.dtype
        with torch.autocast("cpu", enabled=False):
            w_state_used, w_projection_used = w_state, w_projection
            if low_dtype is not None:
                w_state_used, w_projection_used = w_state.to(low_dtype), w_projection.to(low_dtype)
            steps, previous, (final_h, final_c) = run_loop(
                pre_gates,  # kept in autocast's dtype: each step adds its slice to a float32 product
                batch_sizes,
                (h0, c0),
                w_state_used,
                w_projection_used,
                cell_clip,
                proj_clip,
                for_backward=True,
            )
        ctx.steps = steps
        ctx.previous = previous
        ctx.batch_sizes = batch_sizes
        ctx.save_for_backward(w_state_used, w_projection_used)
        return torch.cat([values.h for values in steps], dim=1), final_h, final_c

    @staticmethod
    def backward(  # one gradient per forward input, None for the constants
        ctx: Any, grad_outputs: torch.Tensor, grad_final_h: torch.Tensor, grad_final_c: torch.Tensor
    ) -> Tuple[Optional[torch.Tensor], ...]:
        with torch.autocast("cpu", enabled=False):
            grads = ProjectedLstmLoop._backward(ctx, grad_outputs, grad_final_h, grad_final_c)
        return (*grads, None, None, None, None)

    @staticmethod
    def _backward(
        ctx: Any, grad_outputs: torch.Tensor, grad_final_h: torch.Tensor, grad_final_c: torch.Tensor
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor], Optional[torch.Tensor], torch.Tensor, torch.Tensor]:
        w_state, w_projection = ctx.saved_tensors
        steps: List[StepValues] = ctx.steps
        previous: List[LstmState] = ctx.previous
        batch_sizes: List[int] = ctx.batch_sizes
        dim = w_projection.shape[1]
        # running gradients of the state each row holds: a row that ends at step t starts with its final-state gradient
        grad_h = grad_final_h.clone()
        grad_c = grad_final_c.clone()
        # a contiguous copy: BLAS multiplies by it about twice as fast as by the transposed view
        w_state_t = w_state.transpose(1, 2).contiguous()
        w_projection_t = w_projection.transpose(1, 2)
        grad_outputs_per_step = grad_outputs.split(batch_sizes, dim=1)
        # every step writes its gate gradients straight into the packed result (no per-step copies)
        packed_grad_gates = grad_outputs.new_empty(2, grad_outputs.shape[1], 4 * dim)
        step_grad_gates = packed_grad_gates.split(batch_sizes, dim=1)
        grad_h_raw: List[torch.Tensor] = []
        for step in range(len(batch_sizes) - 1, -1, -1):
            rows = batch_sizes[step]
            values = steps[step]
            dh = grad_h[:, :rows] + grad_outputs_per_step[step]
            if values.h_in_range is not None:
                dh = dh * values.h_in_range
            grad_h_raw.append(dh)
            d_cell_output = _times(dh, w_projection_t)
            sig = values.gates
            input_gate, forget_gate, output_gate = sig[..., :dim], sig[..., 2 * dim : 3 * dim], sig[..., 3 * dim :]
            dc = grad_c[:, :rows] + tanh_backward(d_cell_output * output_gate, values.tanh_c)
            if values.c_in_range is not None:
                dc = dc * values.c_in_range
            d_gates = step_grad_gates[step]
            sigmoid_backward(dc * values.new_input, input_gate, grad_input=d_gates[..., :dim])
            tanh_backward(dc * input_gate, values.new_input, grad_input=d_gates[..., dim : 2 * dim])
            sigmoid_backward(dc * previous[step][1], forget_gate, grad_input=d_gates[..., 2 * dim : 3 * dim])
            sigmoid_backward(d_cell_output * values.tanh_c, output_gate, grad_input=d_gates[..., 3 * dim :])
            grad_h[:, :rows] = _times(d_gates, w_state_t)
            grad_c[:, :rows] = dc * forget_gate
        grad_h_raw.reverse()
        grad_w_state = grad_w_projection = None
        # the gate gradients in the dtype pre_gates came in (autocast's, or float32), cast once
        packed_grad_gates = packed_grad_gates.to(ctx.pre_gates_dtype)
        if ctx.needs_input_grad[1]:
            states = torch.cat([h for h, _ in previous], dim=1).transpose(1, 2)
            grad_w_state = _times(states, packed_grad_gates.to(w_state.dtype))
        if ctx.needs_input_grad[2]:
            cell_outputs = torch.cat([values.cell_output for values in steps], dim=1)
            grad_w_projection = _times(cell_outputs.transpose(1, 2), torch.cat(grad_h_raw, dim=1).to(w_state.dtype))
        return packed_grad_gates, grad_w_state, grad_w_projection, grad_h, grad_c
