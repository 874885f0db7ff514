"""Encoders f: X -> Z of the synthetic benchmark (Section 3), composed with g into h = f ∘ g.

- ``MLPEncoder`` -- the "low inductive bias" encoder: hidden widths [128, 256, 256, 256, 128],
  each block Linear + BatchNorm + ReLU (``order="linear_bn_relu"``, the paper) or
  Linear -> ReLU -> BatchNorm1d (``order="linear_relu_bn"``, the authors' code), then a
  Linear layer to k = 3 and L2 normalisation.
- ``LinearInverseEncoder`` -- the inverse encoder of Identity and Linear: one Linear layer,
  then normalisation.
- ``SpiralInverseEncoder`` -- a small MLP (3-64-32-1) predicts the rotation control c; the
  encoder rotates (x_1, x_2) by -n pi c and outputs normalise(x_1', x_2', c).
- ``PatchesInverseEncoder`` -- the soft inverse of Patches: bucket weights w = softmax(MLP
  3-64-32-K), z-predictor tanh(MLP 3-32-16-1); apply sum_k w_k R(-theta_k), then R_y(-pi/2),
  then the soft inverse again, replace the third coordinate by the prediction, normalise.

The Invertible MLP process has no inverse encoder (Table 1: N/A); ``make_encoder`` says so.

Precision. Every encoder normalises its output in float32 (cast up before the L2
normalisation), so that under bf16 autocast (``SyntheticConfig.precision="bf16"``) the outputs are
unit vectors to float32 precision (``cldiv.losses.full``): the loss divides their inner products by tau.

Batch statistics. The paper's code calls the encoder three times per step (anchors, positives,
negatives), so each BatchNorm layer normalises each of the three batches with its own
statistics. ``MLPEncoder.forward(x, segments=S)`` does the same work in one call: x holds S
equal batches stacked along dim 0, every Linear layer is one matmul over all of them, and every
BatchNorm layer normalises each batch with its own statistics and updates its running
statistics S times in order, exactly as S separate calls would. In the paper's order the Linear
layer before a BatchNorm has no bias: BatchNorm subtracts the batch mean, so such a bias never
changes the output and its gradient is exactly zero.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from cldiv.synthetic.generators import rotate_first_plane
from cldiv.losses import full

Tensor = torch.Tensor

MLP_HIDDEN = (128, 256, 256, 256, 128)
MLP_ORDERS = ("linear_bn_relu", "linear_relu_bn")


def _segment_batch_norm(x: Tensor, bn: nn.BatchNorm1d, segments: int) -> Tensor:
    """Training-mode BatchNorm of S stacked batches, each with its own statistics. x: (S * n, C).

    Each segment is a contiguous row block, normalised by PyTorch's own batch norm (which also
    updates the running statistics, segment after segment, exactly as S separate calls do).
    """
    if segments == 1:
        return bn(x)
    return torch.cat([
        F.batch_norm(chunk, bn.running_mean, bn.running_var, bn.weight, bn.bias, True, bn.momentum, bn.eps)
        for chunk in x.chunk(segments)
    ])


class MLPEncoder(nn.Module):
    """The MLP encoder of Section 3: (n, input_dim) -> (n, output_dim) unit vectors.

    ``order="linear_bn_relu"`` (paper): Linear (no bias, see the module docstring) ->
    BatchNorm1d -> ReLU per hidden block; ``order="linear_relu_bn"`` (authors' code):
    Linear (with bias) -> ReLU -> BatchNorm1d. Then Linear to ``output_dim`` and L2
    normalisation. ``forward(x, segments=S)``: in training mode x is S stacked batches of
    equal size, each normalised with its own BatchNorm statistics; in eval mode BatchNorm
    uses the running statistics and ``segments`` does not matter.
    """

    def __init__(
        self,
        input_dim: int = 3,
        output_dim: int = 3,
        hidden: tuple[int, ...] = MLP_HIDDEN,
        order: str = "linear_bn_relu",
    ) -> None:
        super().__init__()
        if order not in MLP_ORDERS:
            raise ValueError(f"order must be one of {MLP_ORDERS}; got {order!r}")
        self.order = order
        self.input_dim, self.output_dim = input_dim, output_dim
        widths = (input_dim, *hidden)
        bias = order == "linear_relu_bn"
        self.linears = nn.ModuleList(nn.Linear(a, b, bias=bias) for a, b in zip(widths, widths[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(b) for b in hidden)
        self.head = nn.Linear(widths[-1], output_dim)

    def forward(self, x: Tensor, segments: int = 1) -> Tensor:
        if x.shape[0] % segments:
            raise ValueError(f"x has {x.shape[0]} rows, not divisible into segments={segments}")
        h = x
        for linear, bn in zip(self.linears, self.norms):
            h = linear(h)
            if self.order == "linear_bn_relu":
                h = (_segment_batch_norm(h, bn, segments) if self.training else bn(h)).relu_()
            else:
                h = F.relu(h)
                h = _segment_batch_norm(h, bn, segments) if self.training else bn(h)
        return F.normalize(full(self.head(h)), dim=-1)


class LinearInverseEncoder(nn.Module):
    """Inverse encoder of Identity and Linear: normalise(W x + b). (n, d) -> (n, k)."""

    def __init__(self, input_dim: int, output_dim: int = 3) -> None:
        super().__init__()
        self.linear = nn.Linear(input_dim, output_dim)

    def forward(self, x: Tensor, segments: int = 1) -> Tensor:
        return F.normalize(full(self.linear(x)), dim=-1)


def _small_mlp(widths: tuple[int, ...]) -> nn.Sequential:
    """Linear-ReLU layers with the given widths, no activation after the last Linear."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        if i > 0:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(a, b))
    return nn.Sequential(*layers)


class SpiralInverseEncoder(nn.Module):
    """Parametric inverse of Spiral (Section 3): (n, 3) -> (n, 3).

    c = MLP_{3-64-32-1}(x) estimates z_3 (the rotation control); (x_1, x_2) is rotated by
    -n pi c and the output is normalise(x_1', x_2', c). With c = x_3 this is exactly g^{-1}.
    """

    def __init__(self, n: float = 2.0) -> None:
        super().__init__()
        self.n = n
        self.control = _small_mlp((3, 64, 32, 1))

    def forward(self, x: Tensor, segments: int = 1) -> Tensor:
        c = self.control(x)  # (n, 1)
        xy = rotate_first_plane(x[..., :2], -self.n * math.pi * c[..., 0])
        return F.normalize(full(torch.cat([xy, c], dim=-1)), dim=-1)


class PatchesInverseEncoder(nn.Module):
    """Soft parametric inverse of Patches (Section 3): (n, 3) -> (n, 3).

    w = softmax(MLP_{3-64-32-K}(x)) weighs the K band rotations, c = tanh(MLP_{3-32-16-1}(x))
    predicts z_3. The encoder applies S(x) = sum_k w_k R(-theta_k) x (rotation of (x_1, x_2)),
    then R_y(-pi/2), then S again with the same weights, replaces the third coordinate by c
    and normalises. theta_k are the band angles of the generator variant: -pi/(K-k) for
    ``variant="paper"``, +pi/(K-k) for ``variant="code"`` (the bucket order is learned, so
    only the set of angles matters).
    """

    def __init__(self, n_bands: int = 4, variant: str = "paper") -> None:
        super().__init__()
        if variant not in ("paper", "code"):
            raise ValueError(f"variant must be one of 'paper', 'code'; got {variant!r}")
        sign = -1.0 if variant == "paper" else 1.0
        angles = torch.tensor([sign * math.pi / max(1, n_bands - k) for k in range(n_bands)])
        self.register_buffer("angles", angles)  # theta_k, (K,)
        tilt_inv = torch.tensor([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
        self.register_buffer("tilt_inv", tilt_inv)  # R_y(-pi/2)
        self.buckets = _small_mlp((3, 64, 32, n_bands))
        self.z_predictor = _small_mlp((3, 32, 16, 1))

    def _soft_inverse(self, x: Tensor, weights: Tensor) -> Tensor:
        # sum_k w_k R(-theta_k) x = R applied with cos/sin averaged over the bands
        c = weights @ torch.cos(-self.angles)  # (n,)
        s = weights @ torch.sin(-self.angles)
        x1, x2 = x[..., 0], x[..., 1]
        return torch.stack((c * x1 - s * x2, s * x1 + c * x2, x[..., 2]), dim=-1)

    def forward(self, x: Tensor, segments: int = 1) -> Tensor:
        weights = torch.softmax(self.buckets(x), dim=-1)
        c = torch.tanh(self.z_predictor(x))
        y = self._soft_inverse(x, weights) @ self.tilt_inv.T
        y = self._soft_inverse(y, weights)
        return F.normalize(full(torch.cat([y[..., :2], c], dim=-1)), dim=-1)


INVERSE_ENCODERS = ("identity", "linear", "spiral", "patches")


def make_encoder(
    kind: str, process: str, generator: nn.Module, *, order: str = "linear_bn_relu",
    hidden: tuple[int, ...] = MLP_HIDDEN,
) -> nn.Module:
    """The encoder f for process g: ``kind`` "mlp" or "inverse" (Section 3, Encoders).

    ``generator`` is the process g (its ``output_dim`` sets the input width; the Spiral and
    Patches inverse encoders read its ``n``, ``n_bands`` and ``variant``). ``hidden``: the
    MLP's hidden widths (Section 4's 10-D MLP: [512, 1024, 1024, 512, 256, 128, 64, 32]).
    """
    if kind == "mlp":
        return MLPEncoder(generator.output_dim, generator.latent_dim, hidden=tuple(hidden), order=order)
    if kind != "inverse":
        raise ValueError(f"encoder must be one of 'mlp', 'inverse'; got {kind!r}")
    if process not in INVERSE_ENCODERS:
        raise ValueError(
            f"encoder='inverse' exists for process in {INVERSE_ENCODERS}; got {process!r} "
            "(the paper has no inverse encoder for it: N/A in Table 1)"
        )
    if process in ("identity", "linear"):
        return LinearInverseEncoder(generator.output_dim, generator.latent_dim)
    if process == "spiral":
        return SpiralInverseEncoder(n=generator.n)
    return PatchesInverseEncoder(n_bands=generator.n_bands, variant=generator.variant)


class Recovery(nn.Module):
    """h = f ∘ g with g frozen: (n, k) latents -> (n, k) unit vectors."""

    def __init__(self, generator: nn.Module, encoder: nn.Module) -> None:
        super().__init__()
        self.generator = generator.requires_grad_(False)
        self.encoder = encoder

    def forward(self, z: Tensor, segments: int = 1) -> Tensor:
        with torch.no_grad():
            x = self.generator(z)
        return self.encoder(x, segments=segments)
