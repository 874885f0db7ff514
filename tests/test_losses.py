"""Tests for cldiv.losses (paper Section 1 and Section 4.3, Eqs. 7-8)."""

from __future__ import annotations

import math

import pytest
import torch

from cldiv import losses
from cldiv.losses import info_nce, support_corrected_info_nce


def unit(shape: tuple[int, ...], seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Uniform points on the sphere: a normalised seeded standard normal along the last axis."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=dtype)
    return x / x.norm(dim=-1, keepdim=True)


def dot(a: torch.Tensor, b: torch.Tensor) -> float:
    return sum(float(a[i]) * float(b[i]) for i in range(len(a)))


def info_nce_loop(anchor, positive, negatives, tau) -> float:
    """Direct transcription of the Section 1 formula, one anchor at a time."""
    losses = []
    for a, p in zip(anchor, positive):
        numerator = math.exp(dot(a, p) / tau)
        denominator = numerator + sum(math.exp(dot(a, n) / tau) for n in negatives)
        losses.append(-math.log(numerator / denominator))
    return sum(losses) / len(losses)


def support_corrected_loop(anchor, positive, own_negatives, tau, shared_negatives=()) -> float:
    """Eqs. 7-8 transcribed directly: anchor n sees the shared negatives and its own."""
    losses = []
    for a, p, own in zip(anchor, positive, own_negatives):
        numerator = math.exp(dot(a, p) / tau)
        denominator = numerator + sum(math.exp(dot(a, n) / tau) for n in list(shared_negatives) + list(own))
        losses.append(-math.log(numerator / denominator))
    return sum(losses) / len(losses)


# ---- agreement with the formulas ---------------------------------------------------------


def test_info_nce_matches_direct_loop():
    anchor, positive, negatives = unit((5, 3), 0), unit((5, 3), 1), unit((4, 3), 2)
    loss = info_nce(anchor, positive, negatives, tau=0.3)
    assert loss.shape == ()
    assert float(loss) == pytest.approx(info_nce_loop(anchor, positive, negatives, 0.3), abs=1e-6)


def test_support_corrected_matches_direct_loop_with_own_negatives_only():
    anchor, positive, own = unit((5, 3), 3), unit((5, 3), 4), unit((5, 6, 3), 5)
    loss = support_corrected_info_nce(anchor, positive, own, tau=0.5)
    assert float(loss) == pytest.approx(support_corrected_loop(anchor, positive, own, 0.5), abs=1e-6)


def test_support_corrected_matches_direct_loop_with_shared_and_own_negatives():
    anchor, positive = unit((4, 3), 6), unit((4, 3), 7)
    own, shared = unit((4, 2, 3), 8), unit((5, 3), 9)
    loss = support_corrected_info_nce(anchor, positive, own, tau=0.3, shared_negatives=shared)
    expected = support_corrected_loop(anchor, positive, own, 0.3, shared_negatives=shared)
    assert float(loss) == pytest.approx(expected, abs=1e-6)


def test_support_corrected_with_shared_negatives_broadcast_per_anchor_equals_info_nce():
    anchor, positive, negatives = unit((6, 3), 10), unit((6, 3), 11), unit((8, 3), 12)
    own = negatives.unsqueeze(0).expand(6, -1, -1)
    assert float(support_corrected_info_nce(anchor, positive, own, tau=0.2)) == pytest.approx(
        float(info_nce(anchor, positive, negatives, tau=0.2)), abs=1e-12
    )


def test_support_corrected_own_negatives_are_per_anchor():
    """Changing anchor 0's own negatives changes only anchor 0's term."""
    anchor, positive, own = unit((3, 3), 13), unit((3, 3), 14), unit((3, 4, 3), 15)
    changed = own.clone()
    changed[0] = unit((4, 3), 16)
    for n in (1, 2):
        assert float(support_corrected_info_nce(anchor[n : n + 1], positive[n : n + 1], own[n : n + 1], 0.3)) == (
            pytest.approx(float(support_corrected_info_nce(anchor[n : n + 1], positive[n : n + 1], changed[n : n + 1], 0.3)))
        )
    assert float(support_corrected_info_nce(anchor, positive, own, 0.3)) != pytest.approx(
        float(support_corrected_info_nce(anchor, positive, changed, 0.3))
    )


def test_info_nce_equals_log_of_one_plus_m_when_all_logits_are_zero():
    anchor = torch.zeros(4, 3, dtype=torch.float64)  # every similarity is 0
    loss = info_nce(anchor, unit((4, 3), 17), unit((7, 3), 41), tau=0.3)
    assert float(loss) == pytest.approx(math.log(1 + 7), abs=1e-12)


# ---- numerics ----------------------------------------------------------------------------


def test_losses_are_finite_for_small_tau_in_float32():
    anchor = unit((64, 3), 18, dtype=torch.float32)
    positive = anchor.clone()  # logit 1/tau = 100: e^100 overflows float32
    negatives = unit((128, 3), 19, dtype=torch.float32)
    own = unit((64, 16, 3), 20, dtype=torch.float32)
    assert torch.isfinite(info_nce(anchor, positive, negatives, tau=0.01))
    assert torch.isfinite(support_corrected_info_nce(anchor, positive, own, tau=0.01, shared_negatives=negatives))


def test_gradient_flows_to_all_inputs():
    anchor = unit((5, 3), 21).requires_grad_()
    positive = unit((5, 3), 22).requires_grad_()
    own = unit((5, 4, 3), 23).requires_grad_()
    shared = unit((6, 3), 24).requires_grad_()
    support_corrected_info_nce(anchor, positive, own, 0.3, shared_negatives=shared).backward()
    for tensor in (anchor, positive, own, shared):
        assert tensor.grad is not None and torch.isfinite(tensor.grad).all() and tensor.grad.abs().sum() > 0

    anchor.grad = None
    negatives = unit((6, 3), 25).requires_grad_()
    info_nce(anchor, positive, negatives, 0.3).backward()
    assert anchor.grad is not None and negatives.grad is not None and negatives.grad.abs().sum() > 0


@pytest.mark.parametrize("block_elements", [4, 1 << 18])  # several row blocks, or one
def test_info_nce_gradient_matches_finite_differences(monkeypatch, block_elements):
    monkeypatch.setattr(losses, "_BLOCK_ELEMENTS", block_elements)
    inputs = tuple(unit(shape, seed).requires_grad_() for shape, seed in [((5, 3), 26), ((5, 3), 27), ((4, 3), 28)])
    assert torch.autograd.gradcheck(lambda a, p, n: info_nce(a, p, n, 0.5), inputs)


def test_info_nce_equals_cross_entropy_over_concatenated_logits_with_its_gradients(monkeypatch):
    """The blocked evaluation computes, in float32, what a cross-entropy over [a·p, a nᵀ]/tau does."""
    monkeypatch.setattr(losses, "_BLOCK_ELEMENTS", 3 * 64)  # 3 anchors per block, last block short
    ours = [unit(shape, seed, torch.float32).requires_grad_() for shape, seed in [((20, 3), 50), ((20, 3), 51), ((64, 3), 52)]]
    plain = [t.detach().clone().requires_grad_() for t in ours]
    info_nce(*ours, tau=0.1).backward()
    a, p, n = plain
    logits = torch.cat([(a * p).sum(1, keepdim=True), a @ n.T], dim=1) / 0.1
    torch.nn.functional.cross_entropy(logits, torch.zeros(20, dtype=torch.long)).backward()
    for mine, reference in zip(ours, plain):
        torch.testing.assert_close(mine.grad, reference.grad, rtol=1e-5, atol=1e-6)


# ---- validation --------------------------------------------------------------------------


@pytest.mark.parametrize("tau", [0.0, -0.1, float("nan")])
def test_non_positive_tau_raises(tau):
    anchor, negatives, own = unit((2, 3), 29), unit((3, 3), 30), unit((2, 3, 3), 31)
    with pytest.raises(ValueError, match="tau"):
        info_nce(anchor, anchor, negatives, tau)
    with pytest.raises(ValueError, match="tau"):
        support_corrected_info_nce(anchor, anchor, own, tau)


def test_bad_shapes_raise_naming_parameter():
    anchor = unit((2, 3), 32)
    with pytest.raises(ValueError, match="positive"):
        info_nce(anchor, unit((3, 3), 33), unit((3, 3), 34), 0.3)
    with pytest.raises(ValueError, match="negatives"):
        info_nce(anchor, anchor, unit((3, 4), 35), 0.3)
    with pytest.raises(ValueError, match="own_negatives"):
        support_corrected_info_nce(anchor, anchor, unit((3, 4, 3), 36), 0.3)
    with pytest.raises(ValueError, match="own_negatives"):
        support_corrected_info_nce(anchor, anchor, unit((4, 3), 37), 0.3)
    with pytest.raises(ValueError, match="shared_negatives"):
        support_corrected_info_nce(anchor, anchor, unit((2, 4, 3), 38), 0.3, shared_negatives=unit((5, 2), 39))
    with pytest.raises(ValueError, match="anchor"):
        info_nce(anchor[0], anchor[0], unit((3, 3), 40), 0.3)
