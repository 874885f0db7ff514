"""Contrastive losses: InfoNCE (Section 1) and support-corrected InfoNCE (Section 4.3).

Both losses are cross-entropies of a softmax over similarity logits in which the positive sits
at index 0; they differ only in which negatives enter the logits. One private helper turns
logits into the loss, and ``torch.nn.functional.cross_entropy`` evaluates it through a
log-sum-exp, so the losses stay finite in float32 even for small temperatures.

Embeddings are expected to be L2-normalised encoder outputs h(z) (the losses do not normalise).

Both losses run in float32 whatever the autocast context (``SyntheticConfig.precision="bf16"``
puts the encoder's matrix products in bfloat16): the logits are inner products divided by tau
(3.3x at tau = 0.3) that enter a log-sum-exp over thousands of negatives, and bfloat16's 8-bit
mantissa (relative error 4e-3) would perturb each logit by about 1e-2 and the loss by more than the
differences between the paper's cells.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["full", "info_nce", "support_corrected_info_nce"]


def full(x: torch.Tensor) -> torch.Tensor:
    """x in float32 if it is in a 16-bit float type (bf16 autocast output), else unchanged (float64 stays)."""
    return x.float() if x.dtype in (torch.bfloat16, torch.float16) else x


def _check_tau(tau: float) -> None:
    tau_value = float(tau)
    if not tau_value > 0.0 or tau_value == float("inf"):
        raise ValueError(f"tau must be a finite positive temperature (tau > 0); got {tau!r}")


def _check_anchor_positive(anchor: torch.Tensor, positive: torch.Tensor) -> None:
    if anchor.dim() != 2:
        raise ValueError(f"anchor must have shape (N, d); got shape {tuple(anchor.shape)}")
    if positive.shape != anchor.shape:
        raise ValueError(
            f"positive must have the shape of anchor {tuple(anchor.shape)}; "
            f"got {tuple(positive.shape)}"
        )


def _check_shared_negatives(negatives: torch.Tensor, name: str, dim: int) -> None:
    if negatives.dim() != 2 or negatives.shape[1] != dim:
        raise ValueError(f"{name} must have shape (M, {dim}); got shape {tuple(negatives.shape)}")


def _loss_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Mean over anchors of -log softmax(logits)[:, 0]; logits: (N, 1 + M), positive first."""
    targets = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
    return F.cross_entropy(logits, targets)


# Rows of the (N, M) logit matrix handled at once by ``info_nce``'s forward pass: a block of
# _BLOCK_ELEMENTS float32 logits (1 MiB) stays in cache between the ops that use it. The blocks
# are written into one (N, M) matrix of softmax weights, which the backward pass needs.
_BLOCK_ELEMENTS = 1 << 18


class _SharedNegativeInfoNCE(torch.autograd.Function):
    """InfoNCE with shared negatives, computed over row blocks of the logit matrix.

    With q_n = a_n / tau, s_n = q_n·p_n and S = q nᵀ, loss = mean_n (lse_n - s_n), where
    lse_n = log(e^{s_n} + sum_j e^{S_nj}). With the softmax weights P = e^{S - lse} (kept
    from the forward pass) and w = e^{s - lse}:

        d loss / d q_n = ((w_n - 1) p_n + sum_j P_nj n_j) / N,
        d loss / d p_n = (w_n - 1) q_n / N,       d loss / d n_j = sum_n P_nj q_n / N.

    The same maths as a cross-entropy over the concatenated logits [s, S], without the
    (N, 1 + M) copy, its copy divided by tau, or a separate gradient matrix; each block of S
    is exponentiated once, in cache. For d = 3 the products are taken in the transposed
    layout ((d, M) @ (M, B) rather than (B, M) @ (M, d)), several times faster in BLAS.
    """

    @staticmethod
    def forward(ctx, anchor, positive, negatives, tau):
        q = anchor / tau
        positive_logits = (q * positive).sum(dim=1)  # s, (N,)
        negatives_t = negatives.T.contiguous()  # (d, M)
        weights = torch.empty(q.shape[0], negatives.shape[0], dtype=q.dtype, device=q.device)
        lse = torch.empty_like(positive_logits)
        block = max(1, _BLOCK_ELEMENTS // max(1, negatives.shape[0]))
        for start in range(0, q.shape[0], block):
            stop = start + block
            logits = torch.mm(q[start:stop], negatives_t, out=weights[start:stop])  # S, (B, M)
            peak = torch.maximum(logits.amax(dim=1), positive_logits[start:stop]).unsqueeze(1)
            total = logits.sub_(peak).exp_().sum(dim=1, keepdim=True)
            total += (positive_logits[start:stop, None] - peak).exp_()
            logits.div_(total)  # P
            lse[start:stop] = (peak + total.log_()).squeeze(1)
        ctx.save_for_backward(q, positive, negatives_t, positive_logits, lse, weights)
        ctx.tau = tau
        return (lse - positive_logits).mean()

    @staticmethod
    def backward(ctx, grad):
        q, positive, negatives_t, positive_logits, lse, weights = ctx.saved_tensors
        scale = grad / q.shape[0]
        grad_q = torch.mm(negatives_t, weights.T).T  # sum_j P_nj n_j, (N, d)
        grad_negatives = torch.mm(q.T, weights).T  # sum_n P_nj q_n, (M, d)
        positive_weight = (positive_logits - lse).exp_().sub_(1).unsqueeze(1)  # w - 1, (N, 1)
        grad_q = grad_q.addcmul(positive_weight, positive).mul_(scale / ctx.tau)
        return grad_q, positive_weight * q * scale, grad_negatives * scale, None


def info_nce(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    negatives: torch.Tensor,
    tau: float,
) -> torch.Tensor:
    """InfoNCE with a batch of negatives shared by all anchors (paper Section 1).

    For anchor a_n = h(z_n), positive p_n = h(z~_n) and negatives n_1..n_M = h(z_i^-),

        loss_n = -log( e^{a_n·p_n/tau} / ( e^{a_n·p_n/tau} + sum_i e^{a_n·n_i/tau} ) ),

    i.e. the positive is included in the log-sum-exp, and the result is the mean over the
    N anchors. This matches the paper's L_CL(h; tau, M) with the negatives drawn once per
    batch and shared by every anchor (the authors' code uses a fresh batch of uniform points).
    With M uniform negatives, loss - log M converges to the cross-entropy of Theorem 3.3.
    Evaluated block by block (``_SharedNegativeInfoNCE``): the exponentials are taken one row block
    at a time, in cache, but the (N, M) softmax weights are kept for the backward pass, so memory
    is O(N M) -- one float matrix, with no further N x M copies (logits, scaled logits, gradient).

    Args:
        anchor: (N, d) anchor embeddings.
        positive: (N, d) positive embeddings, row n paired with anchor row n.
        negatives: (M, d) negative embeddings shared by all anchors.
        tau: temperature, > 0.

    Returns:
        Scalar tensor, the mean loss over anchors (differentiable).
    """
    _check_tau(tau)
    _check_anchor_positive(anchor, positive)
    _check_shared_negatives(negatives, "negatives", anchor.shape[1])
    with torch.autocast(anchor.device.type, enabled=False):  # float32 logits, see the module docstring
        return _SharedNegativeInfoNCE.apply(full(anchor), full(positive), full(negatives), float(tau))


def support_corrected_info_nce(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    own_negatives: torch.Tensor,
    tau: float,
    shared_negatives: torch.Tensor | None = None,
) -> torch.Tensor:
    """Support-corrected InfoNCE with per-anchor negatives (paper Section 4.3, Eqs. 7-8).

    When positives are restricted to the sub-sphere K(z) = {z~ : u~ = u} (diversity violated),
    the model conditional is normalised over K(z) instead of the whole sphere: each anchor's
    negatives are its own, drawn uniformly on K(z). Per anchor n,

        loss_n = -log( e^{a_n·p_n/tau} / ( e^{a_n·p_n/tau}
                        + sum_j e^{a_n·s_j/tau} + sum_i e^{a_n·o_{n,i}/tau} ) ),

    with own negatives o_{n,i} (anchor-specific) and optional shared negatives s_j (common to
    all anchors); the result is the mean over anchors. With only own negatives on K(z) this is
    the corrected loss of Theorem 4.6, under which every h ∈ O(k) is a global minimiser when
    kappa = 1/tau. Supplying shared uniform negatives as well gives the constraint-ratio
    mixture of Section 4 (a fraction rho of the negatives on K(z), the rest on the sphere).
    Which points are passed is the caller's business; this function only scores them.

    Memory: the own-negative logits are a batched product (N, M_own), costing O(N M_own d)
    input memory, the O(N(M+1)) the paper notes for this diagnostic loss.

    Args:
        anchor: (N, d) anchor embeddings.
        positive: (N, d) positive embeddings.
        own_negatives: (N, M_own, d) negatives of each anchor (row n belongs to anchor n).
        tau: temperature, > 0.
        shared_negatives: optional (M_shared, d) negatives shared by all anchors.

    Returns:
        Scalar tensor, the mean loss over anchors (differentiable).
    """
    _check_tau(tau)
    _check_anchor_positive(anchor, positive)
    n_anchors, dim = anchor.shape
    if own_negatives.dim() != 3 or own_negatives.shape[0] != n_anchors or own_negatives.shape[2] != dim:
        raise ValueError(
            f"own_negatives must have shape (N={n_anchors}, M_own, d={dim}); "
            f"got shape {tuple(own_negatives.shape)}"
        )
    if shared_negatives is not None:
        _check_shared_negatives(shared_negatives, "shared_negatives", dim)
    with torch.autocast(anchor.device.type, enabled=False):  # float32 logits, see the module docstring
        anchor, positive, own_negatives = full(anchor), full(positive), full(own_negatives)
        logits = [(anchor * positive).sum(dim=1, keepdim=True)]  # (N, 1)
        if shared_negatives is not None:
            logits.append(anchor @ full(shared_negatives).T)  # (N, M_shared)
        logits.append(torch.bmm(own_negatives, anchor.unsqueeze(2)).squeeze(2))  # (N, M_own)
        return _loss_from_logits(torch.cat(logits, dim=1) / tau)
