"""The hand-written backward pass of the LSTM time loop against autograd over the same loop."""

from typing import List, Tuple

import pytest
import torch

from elmo_tasks.bilm.lstm import ProjectedLstmLayer
from elmo_tasks.bilm.lstm_time_loop import ProjectedLstmLoop, run_loop


def _inputs(batch_sizes: List[int], rows: int, dim: int = 12, proj: int = 5, scale: float = 1.0, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    total = sum(batch_sizes)

    def rand(*shape: int) -> torch.Tensor:
        return (scale * torch.randn(*shape, generator=generator, dtype=torch.float64)).requires_grad_()

    return (
        rand(2, total, 4 * dim),
        rand(2, proj, 4 * dim),
        rand(2, dim, proj),
        rand(2, rows, proj),
        rand(2, rows, dim),
    )


def _losses(outputs: torch.Tensor, final_h: torch.Tensor, final_c: torch.Tensor) -> torch.Tensor:
    """A loss that weighs every output and both final states differently, so that no gradient path is skipped."""
    generator = torch.Generator().manual_seed(1)
    weights = [torch.randn(t.shape, generator=generator, dtype=t.dtype) for t in (outputs, final_h, final_c)]
    return sum((w * t).sum() for w, t in zip(weights, (outputs, final_h, final_c), strict=True))  # type: ignore[return-value]


def _gradients(use_function: bool, batch_sizes: List[int], rows: int, clips: Tuple[float, float], scale: float):
    pre_gates, w_state, w_projection, h0, c0 = _inputs(batch_sizes, rows, scale=scale)
    if use_function:
        outputs, final_h, final_c = ProjectedLstmLoop.apply(
            pre_gates, w_state, w_projection, h0, c0, batch_sizes, *clips
        )
    else:
        steps, _, (final_h, final_c) = run_loop(pre_gates, batch_sizes, (h0, c0), w_state, w_projection, *clips)
        outputs = torch.cat([values.h for values in steps], dim=1)
    loss = _losses(outputs, final_h, final_c)
    loss.backward()
    return [outputs, final_h, final_c] + [t.grad for t in (pre_gates, w_state, w_projection, h0, c0)]


@pytest.mark.parametrize(
    "batch_sizes, rows",
    [([3, 3, 3], 3), ([4, 3, 3, 1], 4), ([2, 2, 1], 4), ([5], 5)],  # equal lengths, ragged, empty rows, one step
)
@pytest.mark.parametrize("clips, scale", [((3.0, 3.0), 1.0), ((0.4, 0.3), 2.0), ((0.0, 0.0), 1.0)])
def test_hand_written_backward_equals_autograd(batch_sizes, rows, clips, scale):
    expected = _gradients(False, batch_sizes, rows, clips, scale)
    actual = _gradients(True, batch_sizes, rows, clips, scale)
    names = ["outputs", "final h", "final c", "pre-gates", "w_state", "w_projection", "h0", "c0"]
    for name, want, got in zip(names, expected, actual, strict=True):
        assert torch.allclose(got, want, rtol=1e-10, atol=1e-12), name


def test_tight_clips_really_clip():
    """The small clips of the test above cut values, so the clip masks are exercised."""
    pre_gates, w_state, w_projection, h0, c0 = _inputs([4, 3, 3, 1], 4, scale=2.0)
    steps, _, _ = run_loop(pre_gates, [4, 3, 3, 1], (h0, c0), w_state, w_projection, 0.4, 0.3, for_backward=True)
    assert any(not bool(values.c_in_range.all()) for values in steps)
    assert any(not bool(values.h_in_range.all()) for values in steps)


def test_layer_output_is_the_same_with_and_without_gradients():
    torch.manual_seed(0)
    layer = ProjectedLstmLayer(6, 8, 6, 3.0, 3.0)
    inputs = torch.randn(2, 7, 6)
    initial = (torch.zeros(2, 3, 6), torch.zeros(2, 3, 8))
    with torch.no_grad():
        plain, plain_final = layer(inputs, [3, 2, 2], initial)
    trained, trained_final = layer(inputs, [3, 2, 2], initial)
    assert trained.requires_grad
    assert torch.equal(plain, trained.detach())
    for a, b in zip(plain_final, trained_final, strict=True):
        assert torch.equal(a, b.detach())


def test_whole_bilm_gradients_equal_autograd_over_the_plain_loop(monkeypatch):
    """The biLM trained as the language model trains it (dropout, ragged sentences, clipping,
    residual link): every parameter's gradient is the same with the hand-written backward."""
    from elmo_tasks.bilm import BiLM, BilmOptions, batch_to_ids
    from elmo_tasks.bilm import lstm as lstm_module

    options = BilmOptions(
        dim=16,
        projection_dim=8,
        filters=[(1, 4), (2, 4)],
        n_highway=1,
        char_embedding_dim=4,
        cell_clip=0.5,
        proj_clip=0.5,
        use_skip_connections=True,
    )
    ids = batch_to_ids([["The", "cat", "sat", "down"], ["Dogs", "bark"], ["Hi"], ["A", "b", "c", "d", "e", "f"]])

    def gradients() -> dict:
        torch.manual_seed(3)
        model = BiLM(options, dropout=0.2).double()
        torch.manual_seed(4)  # the same dropout masks in both runs
        loss = sum((layer * (i + 1)).sum() for i, layer in enumerate(model(ids).layers))
        loss.backward()
        return {name: p.grad.clone() for name, p in model.named_parameters()}

    ours = gradients()
    monkeypatch.setattr(lstm_module.ProjectedLstmLoop, "apply", _plain_loop)
    reference = gradients()
    assert ours.keys() == reference.keys()
    for name in ours:
        assert torch.allclose(ours[name], reference[name], rtol=1e-9, atol=1e-12), name


def _plain_loop(pre_gates, w_state, w_projection, h0, c0, batch_sizes, cell_clip, proj_clip, low_dtype=None):
    assert low_dtype is None  # float64 here: autocast is off
    steps, _, final = run_loop(pre_gates, batch_sizes, (h0, c0), w_state, w_projection, cell_clip, proj_clip)
    return (torch.cat([values.h for values in steps], dim=1),) + final


def _float32_gradients(low_dtype, batch_sizes: List[int], rows: int):
    """Outputs and gradients of the hand-written loop in float32, its products in ``low_dtype`` (None: float32)."""
    pre_gates, w_state, w_projection, h0, c0 = (t.detach().float().requires_grad_() for t in _inputs(batch_sizes, rows))
    outputs, final_h, final_c = ProjectedLstmLoop.apply(
        pre_gates, w_state, w_projection, h0, c0, batch_sizes, 3.0, 3.0, low_dtype
    )
    _losses(outputs, final_h, final_c).backward()
    return [outputs, final_h, final_c] + [t.grad for t in (pre_gates, w_state, w_projection, h0, c0)]


def test_bfloat16_products_keep_float32_state_and_gradients_close():
    """The autocast path multiplies in bfloat16 (so its numbers differ) but returns float32
    outputs and gradients within bfloat16's rounding of the float32 ones."""
    batch_sizes, rows = [4, 3, 3, 1], 4
    exact = _float32_gradients(None, batch_sizes, rows)
    low = _float32_gradients(torch.bfloat16, batch_sizes, rows)
    names = ["outputs", "final h", "final c", "pre-gates", "w_state", "w_projection", "h0", "c0"]
    for name, want, got in zip(names, exact, low, strict=True):
        assert got.dtype == torch.float32, name
        relative = float(((got - want).norm() / want.norm()).detach())
        assert 0 < relative < 2e-2, f"{name}: relative difference {relative}"


def test_layer_reads_autocast_for_its_products():
    """Under ``torch.autocast('cpu')`` the layer's training path takes the bfloat16 route; outside it, float32."""
    torch.manual_seed(0)
    layer = ProjectedLstmLayer(6, 12, 5, 3.0, 3.0)
    inputs = torch.randn(2, 7, 6)
    initial = (torch.zeros(2, 3, 5), torch.zeros(2, 3, 12))
    plain, _ = layer(inputs, [3, 2, 2], initial)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        lowered, _ = layer(inputs, [3, 2, 2], initial)
    lowered.sum().backward()
    assert lowered.dtype == torch.float32 and layer.w_state.grad.dtype == torch.float32
    assert 0 < float((lowered - plain).detach().abs().max()) < 5e-2
