"""Sampling on the unit sphere S^{k-1} (Section 1 and Section 4.2 of the paper).

Every sampler takes an explicit ``torch.Generator`` so that a run is reproducible from
its seed; none touches the global random state.

- ``uniform_sphere``: the marginal P_Z (uniform on S^{k-1}).
- ``vmf``: the von Mises-Fisher conditional p(z~|z) = C_k(kappa) exp(kappa z.z~),
  sampled with Wood's (1994) rejection algorithm, vectorised.
- ``restricted_vmf``: the restricted conditional of Section 4.2: the first ``d_fixed``
  coordinates u are kept, v moves on the sub-sphere K(z) of radius r = sqrt(1 - |u|^2).
- ``uniform_on_fibre``: uniform points on K(z), the negatives of the support-corrected
  loss (Section 4.3, Eq. 7).
- ``grouped_uniform_sphere``: uniform points in groups that share u (one K(z) per group),
  for the cheap estimator of the support-corrected loss (``SyntheticConfig.anchor_groups``).
- ``mean_resultant_length`` and ``log_vmf_normaliser``: the closed forms A_k and log C_k.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import ive

Tensor = torch.Tensor


def _check_kappa(kappa: float | Tensor) -> None:
    if isinstance(kappa, Tensor):
        if not bool(torch.isfinite(kappa).all() and (kappa > 0).all()):
            raise ValueError("kappa must be finite and > 0 everywhere; got a tensor that is not")
    elif not (isinstance(kappa, (int, float)) and math.isfinite(kappa) and kappa > 0):
        raise ValueError(f"kappa must be a finite number > 0; got {kappa!r}")


def uniform_sphere(
    n: int,
    k: int,
    generator: torch.Generator | None = None,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Tensor:
    """n points uniform on S^{k-1}: normalised standard Gaussians. Returns (n, k)."""
    if k < 1:
        raise ValueError(f"k (the ambient dimension) must be >= 1; got {k}")
    x = torch.randn(n, k, generator=generator, dtype=torch.float64, device=device)
    return (x / x.norm(dim=1, keepdim=True)).to(dtype)


def _symmetric_beta(n: int, k: int, generator, device) -> Tensor:
    """n draws of Beta((k-1)/2, (k-1)/2), float64.

    If g ~ N(0, I_k) then t = g_1/|g| has density prop. to (1-t^2)^{(k-3)/2}, so
    (1+t)/2 ~ Beta((k-1)/2, (k-1)/2). Unlike torch.distributions.Beta this accepts a
    generator.
    """
    g = torch.randn(n, k, generator=generator, dtype=torch.float64, device=device)
    return 0.5 * (1.0 + g[:, 0] / g.norm(dim=1))


def _vmf_cosines(n: int, k: int, kappa: Tensor, generator, device) -> Tensor:
    """Wood's rejection sampler for w = mu.z~ under vMF(mu, kappa) on S^{k-1}, k >= 2.

    kappa: (n,) float64 concentrations. Stable forms:
    b = (k-1)/(2 kappa + sqrt(4 kappa^2 + (k-1)^2)) and 1 - w = 2 b Z / (1 - (1-b) Z),
    so nothing cancels for kappa up to 1e4 and beyond.
    Returns (w, 1 - w) in float64, each of shape (n,).
    """
    d = k - 1.0
    b = d / (2.0 * kappa + torch.sqrt(4.0 * kappa**2 + d**2))
    x0 = (1.0 - b) / (1.0 + b)
    c = kappa * x0 + d * torch.log1p(-x0 * x0)
    w = torch.empty(n, dtype=torch.float64, device=device)
    one_minus_w = torch.empty_like(w)
    pending = torch.arange(n, device=device)
    while pending.numel() > 0:
        m = pending.numel()
        bp, x0p, cp, kp = b[pending], x0[pending], c[pending], kappa[pending]
        beta = _symmetric_beta(m, k, generator, device)
        denom = 1.0 - (1.0 - bp) * beta
        cand = (1.0 - (1.0 + bp) * beta) / denom
        cand_1m = 2.0 * bp * beta / denom
        log_u = torch.rand(m, generator=generator, dtype=torch.float64, device=device).log()
        accept = kp * cand + d * torch.log1p(-x0p * cand) - cp >= log_u
        w[pending[accept]] = cand[accept]
        one_minus_w[pending[accept]] = cand_1m[accept]
        pending = pending[~accept]
    return w, one_minus_w


def vmf(mu: Tensor, kappa: float | Tensor, generator: torch.Generator | None = None) -> Tensor:
    """One sample of vMF(mu_i, kappa_i) on S^{k-1} for each row of mu: (n, k) -> (n, k).

    Density C_k(kappa) exp(kappa mu.z~) (Section 1); kappa is a number or an (n,) tensor.
    z~ = w mu + sqrt(1 - w^2) t with w from Wood's algorithm and t uniform on the unit
    sphere orthogonal to mu.
    For k = 1 the 'sphere' is {-1, 1} and z~ = mu with probability sigmoid(2 kappa).

    mu is renormalised in float64 first: a mean direction that is a unit vector only to float32
    precision would make t - (t.mu) mu not quite orthogonal to mu, and on S^1, where the
    orthogonal part can be tiny, normalising t would magnify that error (points up to 0.09 off
    the circle in 10^6 draws). The authors' sampler has the same flaw.
    """
    _check_kappa(kappa)
    if mu.ndim != 2:
        raise ValueError(f"mu must have shape (n, k); got {tuple(mu.shape)}")
    n, k = mu.shape
    mu64 = mu.to(torch.float64)
    mu64 = mu64 / mu64.norm(dim=1, keepdim=True)
    kappa = torch.as_tensor(kappa, dtype=torch.float64, device=mu.device).expand(n)
    if k == 1:
        keep = torch.rand(n, generator=generator, dtype=torch.float64, device=mu.device)
        sign = torch.where(keep < torch.sigmoid(2.0 * kappa), 1.0, -1.0)
        return (sign[:, None] * mu64).to(mu.dtype)
    w, one_minus_w = _vmf_cosines(n, k, kappa, generator, mu.device)
    t = torch.randn(n, k, generator=generator, dtype=torch.float64, device=mu.device)
    t = t - (t * mu64).sum(1, keepdim=True) * mu64
    t = t / t.norm(dim=1, keepdim=True)
    sin = torch.sqrt(one_minus_w * (1.0 + w))
    return (w[:, None] * mu64 + sin[:, None] * t).to(mu.dtype)


def _split(z: Tensor, d_fixed: int) -> tuple[Tensor, Tensor, Tensor]:
    """z = (u, v) with u the first d_fixed coordinates; r = |v| = sqrt(1 - |u|^2)."""
    k = z.shape[1]
    if not 0 <= d_fixed <= k:
        raise ValueError(f"d_fixed must be an integer in 0..{k} (k = {k}); got {d_fixed}")
    u, v = z[:, :d_fixed], z[:, d_fixed:]
    return u, v, v.norm(dim=1, keepdim=True)


def restricted_vmf(
    z: Tensor,
    d_fixed: int,
    kappa: float,
    generator: torch.Generator | None = None,
    *,
    exact_density: bool = False,
    fair_sign: bool = False,
) -> Tensor:
    """Positives of the restricted conditional (Section 4.2): (n, k) -> (n, k).

    u~ = u exactly; v~ = r * vMF_{S^{l-1}}(v / r, kappa) with l = k - d_fixed: the paper's
    sampling rule, also the authors' code. That rule has density prop. to
    exp(kappa (v/r).(v~/r)) on K(z), which equals the stated density exp(kappa z.z~) only
    when r = 1; ``exact_density=True`` samples the stated density instead (concentration
    kappa r^2 on the unit sub-sphere). d_fixed = 0 is the full vMF; d_fixed = k gives
    z~ = z. Anchors with r = 0 (measure zero) keep v~ = v = 0.

    With one free coordinate (l = 1) the sub-sphere is the two points +-v, and the three rules
    differ most (``free_sign_keep_probability``): the vMF on S^0 keeps the sign with probability
    sigmoid(2 kappa), the stated density with sigmoid(2 kappa r^2), and the authors' code
    (``sample_conditional_10d_fixed``) flips a fair coin whatever kappa: ``fair_sign=True``.
    """
    _check_kappa(kappa)
    u, v, r = _split(z, d_fixed)
    if v.shape[1] == 0:
        return z.clone()
    if fair_sign and v.shape[1] == 1:
        coin = torch.rand(v.shape[0], 1, generator=generator, device=z.device) < 0.5
        return torch.cat([u, torch.where(coin, v, -v)], dim=1)
    tiny = torch.finfo(z.dtype).tiny
    direction = v / r.clamp_min(tiny)
    concentration = kappa * r[:, 0].to(torch.float64) ** 2 if exact_density else kappa
    if exact_density:
        concentration = concentration.clamp_min(1e-12)
    v_new = r * vmf(direction, concentration, generator)
    return torch.cat([u, v_new], dim=1)


def free_sign_keep_probability(kappa: float, k: int, rule: str) -> float:
    """Probability that a positive keeps the sign of the one free coordinate (d_fixed = k - 1),
    averaged over uniform anchors on S^{k-1}: ``rule`` "paper" (vMF on S^0: sigmoid(2 kappa)),
    "density" (the stated density e^{kappa z.z~} on the two points +-v: sigmoid(2 kappa v^2), with
    v^2 = z_k^2 ~ Beta(1/2, (k-1)/2) for uniform z) or "code" (the authors' fair coin: 1/2)."""
    from scipy import integrate, special, stats

    _check_kappa(kappa)
    if rule == "paper":
        return float(special.expit(2 * kappa))
    if rule == "code":
        return 0.5
    if rule == "density":
        law = stats.beta(0.5, (k - 1) / 2)
        return float(integrate.quad(lambda t: special.expit(2 * kappa * t) * law.pdf(t), 0, 1, limit=200)[0])
    raise ValueError(f"rule must be one of 'paper', 'density', 'code'; got {rule!r}")


def uniform_on_fibre(
    z: Tensor, d_fixed: int, m: int, generator: torch.Generator | None = None
) -> Tensor:
    """m uniform points on K(z) = {z~ on the sphere : u~ = u} per anchor: (n, k) -> (n, m, k).

    These are the negatives of the support-corrected InfoNCE (Section 4.3, Eq. 7):
    they share the anchor's u, and v~ = r * (uniform on S^{l-1}).
    """
    u, v, r = _split(z, d_fixed)
    n, l = v.shape
    if l == 0:
        return z[:, None, :].expand(n, m, z.shape[1]).clone()
    directions = uniform_sphere(n * m, l, generator, dtype=z.dtype, device=z.device)
    v_new = r[:, None, :] * directions.view(n, m, l)
    return torch.cat([u[:, None, :].expand(n, m, u.shape[1]), v_new], dim=2)


def grouped_uniform_sphere(
    n: int,
    k: int,
    d_fixed: int,
    groups: int,
    generator: torch.Generator | None = None,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> tuple[Tensor, Tensor]:
    """n uniform points on S^{k-1} in ``groups`` groups of n/groups consecutive rows that share u.

    Each group draws one point c_g uniform on the sphere and keeps its u = c_g[:d_fixed]; each
    member keeps that u and takes v = r * (uniform on S^{l-1}), r = sqrt(1 - |u|^2). Under the
    uniform law v given u is uniform on the sub-sphere K(z) of radius r (rotations of the v
    coordinates fix u and move K(z) transitively), so every row is marginally uniform on
    S^{k-1}; only rows of one group are dependent (they share u). Returns
    (z (n, k), centres (groups, k)), centres[g] a point of group g's K(z).
    """
    if groups < 1 or n % groups:
        raise ValueError(f"groups must be a positive divisor of n = {n}; got {groups}")
    centres = uniform_sphere(groups, k, generator, dtype=torch.float64, device=device)
    u, _, r = _split(centres, d_fixed)
    l = k - d_fixed
    size = n // groups
    if l == 0:
        z = centres.repeat_interleave(size, dim=0)
    else:
        directions = uniform_sphere(n, l, generator, dtype=torch.float64, device=device).view(groups, size, l)
        v = r[:, None, :] * directions
        z = torch.cat([u[:, None, :].expand(groups, size, d_fixed), v], dim=2).reshape(n, k)
    return z.to(dtype), centres.to(dtype)


def mean_resultant_length(k: int, kappa: float | np.ndarray) -> float | np.ndarray:
    """A_k(kappa) = E[z.z~] = I_{k/2}(kappa) / I_{k/2-1}(kappa) (Section 1).

    Uses exponentially scaled Bessel functions (scipy.special.ive) so large kappa does
    not overflow; for k = 3 this equals coth(kappa) - 1/kappa.
    """
    return ive(k / 2, kappa) / ive(k / 2 - 1, kappa)


def log_vmf_normaliser(k: int, kappa: float | np.ndarray) -> float | np.ndarray:
    """log C_k(kappa), C_k = kappa^{k/2-1} / ((2 pi)^{k/2} I_{k/2-1}(kappa)) (Section 1).

    Density w.r.t. the surface measure of S^{k-1}; log I_nu(x) = log ive(nu, x) + x.
    """
    kappa = np.asarray(kappa, dtype=np.float64)
    nu = k / 2 - 1
    out = nu * np.log(kappa) - (k / 2) * np.log(2 * np.pi) - (np.log(ive(nu, kappa)) + kappa)
    return out[()] if out.ndim == 0 else out
