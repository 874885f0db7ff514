"""Generative processes g: Z -> X (Section 3, Algorithms 1-5; Section 4, Table 7).

Each process is a frozen ``torch.nn.Module``: its random weights are drawn once, from an
explicit ``torch.Generator`` seeded by ``seed``, and stored as float32 buffers, so
``g.parameters()`` is empty and nothing in g is trained. Every module has ``latent_dim``
(k, for Z = S^{k-1}), ``output_dim`` (the dimension of X) and an exact ``inverse``
(least squares for the linear maps), which the tests use to check injectivity.

Processes on S^2 (Table 1): ``Identity`` (Alg. 1), ``Linear`` (Alg. 2), ``Spiral``
(Alg. 3), ``Patches`` (Alg. 4), ``InvertibleMLP`` (Alg. 5). Processes on S^9 -> R^70
(Section 4, progressive violation): ``InjectiveLinear`` and ``Monomial``.

Where the paper and the authors' code differ, ``variant="paper"`` follows the paper and
``variant="code"`` the code (``Linear``/``InjectiveLinear`` and ``Patches``; the other
processes are the same in both).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from cldiv.config import check_choice

Tensor = torch.Tensor

VARIANTS = ("paper", "code")
SYNTHETIC_PROCESSES = ("identity", "linear", "spiral", "patches", "invertible_mlp")
GENERATORS = SYNTHETIC_PROCESSES + ("injective_linear", "monomial")

_MIN_SINGULAR_VALUE = 1e-3  # a drawn W with a smaller singular value is redrawn


def _check_last_dim(x: Tensor, expected: int, what: str) -> None:
    if x.ndim < 1 or x.shape[-1] != expected:
        raise ValueError(
            f"{what} must have last dimension {expected}; got shape {tuple(x.shape)}"
        )


def rotate_first_plane(x: Tensor, angle: Tensor) -> Tensor:
    """Rotate (x_1, x_2) counter-clockwise by ``angle`` (one per point), keep the other coordinates.

    x: (n, d), angle: (n,). Returns (n, d).
    """
    c, s = torch.cos(angle), torch.sin(angle)
    x1, x2 = x[..., 0], x[..., 1]
    return torch.cat([torch.stack((c * x1 - s * x2, s * x1 + c * x2), dim=-1), x[..., 2:]], dim=-1)


class Identity(nn.Module):
    """Identity (Alg. 1): x = z. z: (n, k) -> x: (n, k)."""

    def __init__(self, latent_dim: int = 3) -> None:
        super().__init__()
        if latent_dim < 1:
            raise ValueError(f"latent_dim must be >= 1; got {latent_dim}")
        self.latent_dim = latent_dim
        self.output_dim = latent_dim

    def forward(self, z: Tensor) -> Tensor:
        _check_last_dim(z, self.latent_dim, "z")
        return z

    def inverse(self, x: Tensor) -> Tensor:
        _check_last_dim(x, self.output_dim, "x")
        return x


class InjectiveLinear(nn.Module):
    """Injective affine map x = W z + b, W of full column rank. z: (n, k) -> x: (n, d).

    ``variant="paper"``: W has N(0, 1) entries and b = 0 (a linear map, Section 3).
    ``variant="code"``: W = [diag(U(0,1)^k); N(0,1)^{(d-k) x k}] and b is the default
    ``nn.Linear`` bias, U(-1/sqrt(k), 1/sqrt(k)) (the authors' ``InjectiveLinearDecoder``).
    W is redrawn while its smallest singular value is below 1e-3.
    """

    def __init__(
        self, latent_dim: int, output_dim: int, *, seed: int = 0, variant: str = "paper"
    ) -> None:
        super().__init__()
        check_choice("variant", variant, VARIANTS)
        if not 1 <= latent_dim <= output_dim:
            raise ValueError(
                "need 1 <= latent_dim <= output_dim for an injective map; "
                f"got latent_dim={latent_dim}, output_dim={output_dim}"
            )
        self.latent_dim, self.output_dim, self.variant = latent_dim, output_dim, variant
        generator = torch.Generator().manual_seed(seed)
        weight = self._draw_weight(generator)
        while torch.linalg.svdvals(weight).min() < _MIN_SINGULAR_VALUE:
            weight = self._draw_weight(generator)
        if variant == "code":
            bound = 1.0 / math.sqrt(latent_dim)
            bias = torch.rand(output_dim, generator=generator, dtype=torch.float32)
            bias = (2 * bias - 1) * bound
        else:
            bias = torch.zeros(output_dim, dtype=torch.float32)
        self.register_buffer("weight", weight)  # (d, k)
        self.register_buffer("bias", bias)  # (d,)

    def _draw_weight(self, generator: torch.Generator) -> Tensor:
        k, d = self.latent_dim, self.output_dim
        if self.variant == "paper":
            return torch.randn(d, k, generator=generator, dtype=torch.float32)
        top = torch.diag(torch.rand(k, generator=generator, dtype=torch.float32))
        rest = torch.randn(d - k, k, generator=generator, dtype=torch.float32)
        return torch.cat((top, rest))

    def forward(self, z: Tensor) -> Tensor:
        _check_last_dim(z, self.latent_dim, "z")
        return z @ self.weight.T + self.bias

    def inverse(self, x: Tensor) -> Tensor:
        """Least squares: z = W^+ (x - b). x: (n, d) -> (n, k)."""
        _check_last_dim(x, self.output_dim, "x")
        return (x - self.bias) @ torch.linalg.pinv(self.weight).T


class Linear(InjectiveLinear):
    """Linear (Alg. 2): x = W z from S^2 to R^7, W in R^{7x3} of full rank.

    The 3 -> 7 instance of ``InjectiveLinear``; ``variant="code"`` makes it affine.
    """

    def __init__(self, *, seed: int = 0, variant: str = "paper") -> None:
        super().__init__(3, 7, seed=seed, variant=variant)


class Spiral(nn.Module):
    """Spiral (Alg. 3): rotate (z_1, z_2) by theta = n pi z_3, keep z_3. (n, 3) -> (n, 3).

    A norm-preserving bijection of S^2; the inverse rotates by -n pi x_3 (x_3 = z_3).
    """

    def __init__(self, n: float = 2.0) -> None:
        super().__init__()
        self.latent_dim = self.output_dim = 3
        self.n = n

    def forward(self, z: Tensor) -> Tensor:
        _check_last_dim(z, 3, "z")
        return rotate_first_plane(z, self.n * math.pi * z[..., 2])

    def inverse(self, x: Tensor) -> Tensor:
        _check_last_dim(x, 3, "x")
        return rotate_first_plane(x, -self.n * math.pi * x[..., 2])


class Patches(nn.Module):
    """Patches (Alg. 4): x = P(R_y(pi/2) P(z)), P a piecewise rotation. (n, 3) -> (n, 3).

    P rotates (z_1, z_2) by an angle that depends on the latitude band of z_3 (K bands):
    ``variant="paper"``: band k = floor((z_3 + 1) K / 2), clamped to K - 1, angle
    -pi / max(1, K - k); ``variant="code"``: band k = ceil(|z_3| K) - 1 (|z_3| in the
    k-th of K equal bins of [0, 1], right-closed), angle +pi / max(1, K - k), i.e.
    pi/4, pi/3, pi/2, pi for K = 4, and the output is clamped to [-1, 1].
    At exactly z_3 = 0 (probability zero, but reachable with hand-made inputs such as
    z = (1, 0, 0)) the right-closed bins leave |z_3| in none of them: the authors'
    ``torch.bucketize`` then gives bucket -1 and the angle pi / 5, which is no band's angle; we
    put it in the first band (pi / 4), so that P has exactly K angles.
    Norm-preserving but discontinuous at band edges. P keeps z_3, so the band is read
    off the output and ``inverse`` undoes the three steps in reverse order.
    """

    def __init__(self, n_bands: int = 4, variant: str = "paper") -> None:
        super().__init__()
        check_choice("variant", variant, VARIANTS)
        if n_bands < 1:
            raise ValueError(f"n_bands must be >= 1; got {n_bands}")
        self.latent_dim = self.output_dim = 3
        self.n_bands, self.variant = n_bands, variant
        c, s = math.cos(math.pi / 2), math.sin(math.pi / 2)
        tilt = torch.tensor([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]], dtype=torch.float32)
        self.register_buffer("tilt", tilt)  # R_y(pi/2)

    def band_angle(self, z3: Tensor) -> Tensor:
        """Rotation angle of the latitude band of each z_3. z3: (n,) -> (n,)."""
        K = self.n_bands
        if self.variant == "paper":
            band = torch.floor((z3 + 1) * K / 2)
            sign = -1.0
        else:
            band = torch.ceil(z3.abs() * K) - 1
            sign = 1.0
        band = band.clamp(0, K - 1)  # so max(1, K - k) = K - k
        return sign * math.pi / (K - band)

    def _piecewise_rotation(self, x: Tensor, direction: float) -> Tensor:
        return rotate_first_plane(x, direction * self.band_angle(x[..., 2]))

    def forward(self, z: Tensor) -> Tensor:
        _check_last_dim(z, 3, "z")
        x = self._piecewise_rotation(z, 1.0)
        x = self._piecewise_rotation(x @ self.tilt.T, 1.0)
        return x.clamp(-1.0, 1.0) if self.variant == "code" else x

    def inverse(self, x: Tensor) -> Tensor:
        _check_last_dim(x, 3, "x")
        y = self._piecewise_rotation(x, -1.0) @ self.tilt
        return self._piecewise_rotation(y, -1.0)


class InvertibleMLP(nn.Module):
    """Invertible MLP (Alg. 5): Hyvarinen-Morioka mixing. z: (n, k) -> x: (n, k).

    x = W_L s(... s(W_1 z)), s = LeakyReLU(negative_slope) between layers (not after
    the last), no bias. Each W_l has U(-1, 1) entries with columns scaled to unit norm
    and is redrawn until its 2-norm condition number is <= ``cond_threshold``, the
    ``cond_quantile`` quantile (sorted draw number floor(q * n_draws)) of the condition
    numbers of ``n_threshold_draws`` such matrices, all drawn from the same generator.
    """

    def __init__(
        self,
        latent_dim: int = 3,
        *,
        seed: int = 0,
        n_layers: int = 3,
        negative_slope: float = 0.2,
        cond_quantile: float = 0.25,
        n_threshold_draws: int = 10_000,
    ) -> None:
        super().__init__()
        if latent_dim < 1 or n_layers < 1:
            raise ValueError(
                f"latent_dim and n_layers must be >= 1; got {latent_dim}, {n_layers}"
            )
        if not 0.0 < cond_quantile < 1.0:
            raise ValueError(f"cond_quantile must be in (0, 1); got {cond_quantile}")
        self.latent_dim = self.output_dim = latent_dim
        self.negative_slope = negative_slope
        generator = torch.Generator().manual_seed(seed)
        draws = self._draw(generator, n_threshold_draws)
        conds = torch.linalg.cond(draws.double()).sort().values
        self.cond_threshold = conds[int(n_threshold_draws * cond_quantile)].item()
        layers = []
        for _ in range(n_layers):
            weight = self._draw(generator, 1)[0]
            while torch.linalg.cond(weight.double()) > self.cond_threshold:
                weight = self._draw(generator, 1)[0]
            layers.append(weight)
        self.register_buffer("weights", torch.stack(layers))  # (n_layers, k, k)

    def _draw(self, generator: torch.Generator, n: int) -> Tensor:
        """n matrices (n, k, k) with U(-1, 1) entries and unit-norm columns."""
        k = self.latent_dim
        w = 2 * torch.rand(n, k, k, generator=generator, dtype=torch.float32) - 1
        return w / w.norm(dim=1, keepdim=True)

    def forward(self, z: Tensor) -> Tensor:
        _check_last_dim(z, self.latent_dim, "z")
        x = z
        for i, weight in enumerate(self.weights):
            if i > 0:
                x = nn.functional.leaky_relu(x, self.negative_slope)
            x = x @ weight.T
        return x

    def inverse(self, x: Tensor) -> Tensor:
        _check_last_dim(x, self.output_dim, "x")
        z = x
        for i, weight in reversed(list(enumerate(self.weights))):
            z = torch.linalg.solve(weight, z.unsqueeze(-1)).squeeze(-1)
            if i > 0:
                z = torch.where(z >= 0, z, z / self.negative_slope)
        return z


class Monomial(nn.Module):
    """Monomial embedding (Section 4): each z_i raised to powers 1..max_degree.

    z: (n, k) -> x: (n, k * max_degree), ordered (z_1, z_1^2, ..., z_1^D, z_2, ...) as
    in the authors' code; S^9 -> R^70 for k = 10, D = 7. ``inverse`` reads off the
    power-1 entries.
    """

    def __init__(self, latent_dim: int, max_degree: int = 7) -> None:
        super().__init__()
        if latent_dim < 1 or max_degree < 1:
            raise ValueError(
                f"latent_dim and max_degree must be >= 1; got {latent_dim}, {max_degree}"
            )
        self.latent_dim, self.max_degree = latent_dim, max_degree
        self.output_dim = latent_dim * max_degree
        self.register_buffer("powers", torch.arange(1, max_degree + 1, dtype=torch.float32))

    def forward(self, z: Tensor) -> Tensor:
        _check_last_dim(z, self.latent_dim, "z")
        return (z.unsqueeze(-1) ** self.powers).flatten(-2)

    def inverse(self, x: Tensor) -> Tensor:
        _check_last_dim(x, self.output_dim, "x")
        return x.unflatten(-1, (self.latent_dim, self.max_degree))[..., 0]


def make_generator(
    name: str,
    *,
    seed: int = 0,
    latent_dim: int = 3,
    variant: str = "paper",
    **kwargs,
) -> nn.Module:
    """The generative process ``name`` on S^{latent_dim - 1}, frozen and seeded.

    ``name`` is one of ``GENERATORS``. The processes of Table 1 live on S^2, so
    "linear", "spiral", "patches" and "invertible_mlp" need latent_dim = 3 ("identity"
    takes any). "injective_linear" and "monomial" map to R^{7 * latent_dim}
    (S^9 -> R^70 for latent_dim = 10). ``variant`` ("paper" or "code") matters for
    "linear", "injective_linear" and "patches"; ``seed`` for the random processes
    ("linear", "injective_linear", "invertible_mlp"). ``kwargs`` go to the class
    (e.g. ``n`` for "spiral", ``n_bands`` for "patches").
    """
    check_choice("process", name, GENERATORS)
    check_choice("variant", variant, VARIANTS)
    if name in SYNTHETIC_PROCESSES and name != "identity" and latent_dim != 3:
        raise ValueError(
            f"latent_dim must be 3 for process {name!r} (a process on S^2); got {latent_dim}"
        )
    if name == "identity":
        return Identity(latent_dim, **kwargs)
    if name == "linear":
        return Linear(seed=seed, variant=variant, **kwargs)
    if name == "spiral":
        return Spiral(**kwargs)
    if name == "patches":
        return Patches(variant=variant, **kwargs)
    if name == "invertible_mlp":
        return InvertibleMLP(latent_dim, seed=seed, **kwargs)
    if name == "injective_linear":
        return InjectiveLinear(
            latent_dim, 7 * latent_dim, seed=seed, variant=variant, **kwargs
        )
    return Monomial(latent_dim, **kwargs)
