"""The asymptotic InfoNCE objective on S^2, in closed form and by quadrature (Sections 3-4).

As the number M of negatives grows, InfoNCE minus log M converges to an integral that no
longer depends on sampling (Theorem 3.3; Theorems A.3 and A.4 for the restricted conditional).
For a recovery map h : S^2 -> S^2, temperature tau and an anchor z ~ P_Z (uniform):

    objective(h) = -alignment(h) / tau + uniformity(h),                                   (*)
    alignment(h)  = E_z E_{z~|z} [ h(z).h(z~) ],
    uniformity(h) = E_z log int_S e^{h(z).h(z')/tau} dsigma(z'),

where S is the sphere S^2 (standard InfoNCE, uniform negatives) or the fibre K(z) = {z~ : u~ = u}
(support-corrected InfoNCE, Eqs. 7-8, negatives uniform on K(z)) and sigma its surface measure
(arc length on K(z)). With a vMF positive, (*) is the cross-entropy E_z H(P_{Z~|z}, Q_{h,z}) of
Theorem 3.3; with the restricted positive and fibre negatives it is E_z H(P^K, Q^K) of Theorem A.4.
The InfoNCE limits are

    L_CL - log M -> (*) - log|S^2|          (negatives uniform on the sphere, |S^2| = 4 pi),
    L^K  - log M -> (*) - E_z log|K(z)|     (negatives uniform on K(z), E log 2 pi r = log 4 pi - 1).

What this module provides:

- closed forms: ``identity_cross_entropy`` (h = identity, vMF positive), ``vmf_entropy`` (the
  minimum of any cross-entropy with that positive) and ``restricted_entropy`` (its analogue on
  the fibres);
- ``asymptotic_objective(h, ...)`` for any map h, by one of two routes: ``method="sphere"``, a
  product rule on S^2 x S^2 (outer rule over anchors, inner rule rotated to each anchor), for
  arbitrary vectorised h; ``method="axial"``, one-dimensional Gauss-Legendre integrals with
  Bessel functions, exact up to quadrature for maps that act fibre-wise (``AxialMap``: h_lambda
  of Theorem 4.5, the fibre rotations of Theorem A.5). Each result carries its quadrature error,
  measured as the change between two resolutions;
- ``alignment_uniformity_bound``, ``witness_alignment_slope`` and ``minimise_witness``: the
  pieces of the proof of Theorem 4.5 (the witness h_lambda beats every orthogonal map).

The maps live in ``cldiv.theory.maps``, the steps of the proof of Theorem 4.4 in
``cldiv.theory.proof``, and the finite-M losses that approach these limits in
``cldiv.theory.monte_carlo``.

Coordinates as in ``cldiv.theory.maps``: z = (u, v), u = z_1, v = (z_2, z_3).
"""

from __future__ import annotations


from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import ive, logsumexp

from cldiv.config import check_choice, integer_at_least, positive_number
from cldiv.sphere import log_vmf_normaliser, mean_resultant_length
from cldiv.theory.maps import AxialMap, FibreScaling, Map, apply_map, fibre_coordinates
from cldiv.theory.quadrature import circle_rule, gauss_legendre, polar_rule, sphere_rule

#: Positive conditionals: the full vMF (diversity holds) or the restricted one (Section 4.2).
CONDITIONALS = ("vmf", "restricted")
#: Negative laws: uniform on the sphere (InfoNCE) or on the fibre K(z) (support-corrected).
NEGATIVES = ("sphere", "fibre")
#: Quadrature routes of ``asymptotic_objective``.
METHODS = ("auto", "axial", "sphere")
#: log |S^2| = log 4 pi.
LOG_SPHERE_AREA = math.log(4.0 * math.pi)
#: E_z log |K(z)| = E_u log(2 pi sqrt(1 - u^2)) = log 4 pi - 1 for u uniform on [-1, 1].
MEAN_LOG_FIBRE_LENGTH = LOG_SPHERE_AREA - 1.0

_DEFAULT_RESOLUTION = {"axial": 96, "sphere": 20}
_CHUNK = 128  # anchors per block in the S^2 x S^2 product rule


def check_setting(conditional: str, negatives: str) -> None:
    """The positive conditional and the negatives' law, checked together."""
    check_choice("conditional", conditional, CONDITIONALS)
    check_choice("negatives", negatives, NEGATIVES)
    if negatives == "fibre" and conditional != "restricted":
        raise ValueError(
            "negatives='fibre' (support-corrected InfoNCE) needs conditional='restricted': "
            "the fibre K(z) is defined by the restricted conditional; got conditional='vmf'"
        )


def check_resolution(resolution: int, minimum: int = 4) -> int:
    return integer_at_least("resolution", resolution, minimum)


def identity_cross_entropy(kappa: float, tau: float | np.ndarray, k: int = 3) -> float | np.ndarray:
    """E_z H(P_{Z~|z}, Q_{I,z}) for h = identity and a vMF positive (Theorem 3.3).

    q_I(z~|z) = C_k(1/tau) e^{z.z~/tau} is itself a vMF, so
    H = -E[z.z~]/tau - log C_k(1/tau) = -A_k(kappa)/tau - log C_k(1/tau). Vectorised over tau;
    as a function of tau it is minimised at tau = 1/kappa, where it equals ``vmf_entropy``.
    """
    kappa = positive_number("kappa", kappa)
    tau = np.asarray(tau, dtype=np.float64)
    if not np.all(np.isfinite(tau) & (tau > 0)):
        raise ValueError(f"tau must be finite and > 0 everywhere; got {tau!r}")
    out = -mean_resultant_length(k, kappa) / tau - log_vmf_normaliser(k, 1.0 / tau)
    return out[()] if np.ndim(out) == 0 else out


def vmf_entropy(kappa: float, k: int = 3) -> float:
    """Entropy of vMF(kappa) on S^{k-1} w.r.t. surface measure: -log C_k(kappa) - kappa A_k(kappa).

    Gibbs' inequality: every cross-entropy E_z H(P, Q_h) is >= this, with equality iff
    q_h = p almost surely (the first step of the proof of Theorem 4.4).
    """
    kappa = positive_number("kappa", kappa)
    return float(-log_vmf_normaliser(k, kappa) - kappa * mean_resultant_length(k, kappa))


def _fibre_concentration(kappa: float, u: np.ndarray, exact_density: bool) -> np.ndarray:
    """Concentration of the restricted positive on the unit circle v/r: kappa r^2 (the stated
    density e^{kappa z.z~} on K(z)) or kappa (the paper's sampling rule)."""
    return kappa * (1.0 - u**2) if exact_density else np.full_like(u, kappa)


def _bessel_ratio(c: np.ndarray) -> np.ndarray:
    """E[cos Delta] under a von Mises law of concentration c: I_1(c) / I_0(c)."""
    return ive(1, c) / ive(0, c)


def restricted_entropy(kappa: float, *, exact_density: bool = True, resolution: int = 96) -> float:
    """E_z H(P^K_z) w.r.t. arc length on K(z), the minimum of E_z H(P^K, Q^K_h) (Theorem A.4).

    On K(z) the restricted positive is a von Mises law of concentration c (``exact_density``:
    c = kappa r^2, else kappa) on a circle of radius r, with entropy log(2 pi r I_0(c)) - c I_1(c)/I_0(c).
    The mean over u ~ U[-1, 1] uses E log 2 pi r = log 4 pi - 1 and Gauss-Legendre for the rest.
    """
    kappa = positive_number("kappa", kappa)
    u, w = gauss_legendre(check_resolution(resolution))
    c = _fibre_concentration(kappa, u, exact_density)
    per_fibre = np.log(ive(0, c)) + c - c * _bessel_ratio(c)
    return float(MEAN_LOG_FIBRE_LENGTH + 0.5 * w @ per_fibre)



@dataclass(frozen=True)
class AsymptoticObjective:
    """The value of (*) in the module docstring, with its parts and its quadrature error.

    value = -alignment / tau + uniformity; ``error`` = |value at resolution n - value at 3n/4|;
    ``infonce_limit`` = lim_{M -> inf} (loss - log M) for the matching negatives.
    """

    value: float
    alignment: float
    uniformity: float
    error: float
    infonce_limit: float

    @property
    def error_bound(self) -> float:
        """The quadrature error rounded up to a power of ten (at least 1e-13), for printing."""
        return 10.0 ** math.ceil(math.log10(max(self.error, 1e-13)))

    def summary(self) -> str:
        """One line: value, alignment, uniformity (4 decimals) and the error bound."""
        return (
            f"{self.value:.4f} (alignment {self.alignment:.4f}, uniformity {self.uniformity:.4f}, "
            f"quadrature error < {self.error_bound:.0e})"
        )


def _axial_terms(h: AxialMap, kappa, tau, conditional, negatives, exact_density, n) -> tuple[float, float]:
    """(alignment, uniformity) of a fibre-wise map by 1-D Gauss-Legendre in u (and u').

    With f = h.height, rho = sqrt(1 - f^2), alpha = h.angle:
    h(z).h(z') = f f' + rho rho' cos(phi - phi' + alpha - alpha'), and the phi-integrals are
    Bessel functions: int e^{b cos D} dD = 2 pi I_0(b), int e^{b cos D} cos(D + beta) dD =
    2 pi I_1(b) cos(beta).
    """
    u, wu = gauss_legendre(n)
    mean_u = wu / 2.0  # u ~ U[-1, 1] under the uniform marginal (Archimedes)
    f = h.height(u)
    rho = np.sqrt(np.clip(1.0 - f**2, 0.0, None))
    r = np.sqrt(1.0 - u**2)
    if conditional == "restricted":
        c = _fibre_concentration(kappa, u, exact_density)
        alignment = mean_u @ (f**2 + rho**2 * _bessel_ratio(c))
    else:  # vMF: E h(z).h(z~) with density C_3(kappa) e^{kappa(u u~ + r r~ cos D)}
        b = kappa * np.outer(r, r)
        beta = h.angle(u)[:, None] - h.angle(u)[None, :]
        scale = kappa / (-math.expm1(-2.0 * kappa)) * np.exp(kappa * (np.outer(u, u) + np.outer(r, r) - 1.0))
        inner = scale * (np.outer(f, f) * ive(0, b) + np.outer(rho, rho) * np.cos(beta) * ive(1, b))
        alignment = mean_u @ (inner @ wu)
    if negatives == "fibre":  # log int_K e^{h.h'/tau} ds = log 2 pi r + 1/tau + log ive(0, rho^2/tau)
        uniformity = MEAN_LOG_FIBRE_LENGTH + mean_u @ (1.0 / tau + np.log(ive(0, rho**2 / tau)))
    else:  # log int_{S^2} = log 2 pi + log int du' e^{(f f' + rho rho')/tau} ive(0, rho rho'/tau)
        b = np.outer(rho, rho) / tau
        log_inner = logsumexp(np.outer(f, f) / tau + b, b=wu[None, :] * ive(0, b), axis=1)
        uniformity = math.log(2.0 * math.pi) + mean_u @ log_inner
    return float(alignment), float(uniformity)


def _sphere_terms(h: Map, kappa, tau, conditional, negatives, exact_density, n) -> tuple[float, float]:
    """(alignment, uniformity) of any map by product rules on S^2 x S^2 (or S^2 x K(z)).

    Outer rule over anchors: ``sphere_rule(n)`` with its pole on the u axis. Inner rules: a
    ``polar_rule`` centred at each anchor (vMF positive, weight C_3(kappa) e^{kappa w}; sphere
    negatives, unweighted) or the trapezoid rule on the circle K(z) (restricted positive, von
    Mises weights; fibre negatives, uniform weights). Anchors are processed in blocks.
    """
    z, wz = sphere_rule(n)
    z = z[:, [2, 0, 1]]  # pole on the first (u) axis, so the rule is Gauss-Legendre in u
    mean_z = wz / (4.0 * math.pi)
    hz = apply_map(h, z)
    u, phi, r = fibre_coordinates(z)
    angles, _ = circle_rule(2 * n)
    alignment = np.empty(len(z))
    log_mass = np.empty(len(z))
    for start in range(0, len(z), _CHUNK):
        block = slice(start, start + _CHUNK)
        h_anchor = hz[block][:, None, :]
        if conditional == "vmf" or negatives == "sphere":
            nodes, w, weights = polar_rule(z[block], n)
            dots = (h_anchor * apply_map(h, nodes)).sum(-1)
            if conditional == "vmf":
                density = kappa / (2.0 * math.pi * -math.expm1(-2.0 * kappa)) * np.exp(kappa * (w - 1.0))
                alignment[block] = dots @ (weights * density)
            if negatives == "sphere":
                log_mass[block] = logsumexp(dots / tau, b=weights, axis=1)
        if conditional == "restricted":
            turned = phi[block][:, None] + angles[None, :]
            rb = r[block][:, None]
            circle = np.stack(
                [np.broadcast_to(u[block][:, None], turned.shape), rb * np.cos(turned), rb * np.sin(turned)], axis=-1
            )
            dots = (h_anchor * apply_map(h, circle)).sum(-1)
            c = _fibre_concentration(kappa, u[block], exact_density)[:, None]
            von_mises = np.exp(c * (np.cos(angles)[None, :] - 1.0)) / (len(angles) * ive(0, c))
            alignment[block] = (dots * von_mises).sum(1)
            if negatives == "fibre":  # log of the mean over K(z); E log|K(z)| is added exactly
                log_mass[block] = logsumexp(dots / tau, axis=1) - math.log(len(angles))
    uniformity = mean_z @ log_mass + (MEAN_LOG_FIBRE_LENGTH if negatives == "fibre" else 0.0)
    return float(mean_z @ alignment), float(uniformity)


def asymptotic_objective(
    h: Map,
    kappa: float,
    tau: float,
    *,
    conditional: str = "vmf",
    negatives: str = "sphere",
    exact_density: bool = True,
    method: str = "auto",
    resolution: int | None = None,
) -> AsymptoticObjective:
    """The M -> infinity limit of InfoNCE for the recovery map h (Theorems 3.3, A.3, A.4).

    Args:
        h: vectorised map (..., 3) -> (..., 3) of S^2 into itself.
        kappa: concentration of the positive (> 0).
        tau: temperature (> 0).
        conditional: ``"vmf"`` (full support, diversity holds) or ``"restricted"`` (u = z_1 kept,
            Section 4.2).
        negatives: ``"sphere"`` (InfoNCE) or ``"fibre"`` (support-corrected, needs ``"restricted"``).
        exact_density: restricted positive with the stated density e^{kappa z.z~} on K(z)
            (True, the theorems' setting) or the paper's sampling rule (False).
        method: ``"axial"`` (1-D integrals, ``AxialMap`` only), ``"sphere"`` (product rule on
            S^2 x S^2, any h), or ``"auto"`` (axial when possible).
        resolution: Gauss-Legendre nodes per polar variable (default 96 axial, 20 sphere).

    Returns:
        ``AsymptoticObjective`` with value, alignment, uniformity, quadrature error, InfoNCE limit.
    """
    kappa = positive_number("kappa", kappa)
    tau = positive_number("tau", tau)
    check_setting(conditional, negatives)
    check_choice("method", method, METHODS)
    if method == "auto":
        method = "axial" if isinstance(h, AxialMap) else "sphere"
    if method == "axial" and not isinstance(h, AxialMap):
        raise ValueError(f"method='axial' needs an AxialMap (a fibre-wise map); got {type(h).__name__}")
    n = check_resolution(_DEFAULT_RESOLUTION[method] if resolution is None else resolution)
    terms = _axial_terms if method == "axial" else _sphere_terms
    fine = terms(h, kappa, tau, conditional, negatives, bool(exact_density), n)
    coarse = terms(h, kappa, tau, conditional, negatives, bool(exact_density), (3 * n) // 4)
    value, coarse_value = -fine[0] / tau + fine[1], -coarse[0] / tau + coarse[1]
    offset = LOG_SPHERE_AREA if negatives == "sphere" else MEAN_LOG_FIBRE_LENGTH
    return AsymptoticObjective(
        value=value,
        alignment=fine[0],
        uniformity=fine[1],
        error=abs(value - coarse_value),
        infonce_limit=value - offset,
    )


def alignment_uniformity_bound(tau: float) -> float:
    """Smallest value of (*) with sphere negatives over all maps and all conditionals on S^2.

    alignment <= 1, and the uniformity is smallest when h pushes P_Z to the uniform law
    (Wang & Isola 2020, Thm 1), where it equals log(4 pi sinh(1/tau) tau). Hence
    (*) >= -1/tau + log(4 pi sinh(1/tau) tau). Under diversity the bound is out of reach (perfect
    alignment would force h constant); under the restricted conditional maps that collapse each
    fibre and spread the heights uniformly approach it (``FibreCollapse``).
    """
    tau = positive_number("tau", tau)
    b = 1.0 / tau
    return float(-b + LOG_SPHERE_AREA + b + math.log(-math.expm1(-2.0 * b) / 2.0) - math.log(b))


def witness_alignment_slope(kappa: float, *, exact_density: bool = True, resolution: int = 96) -> float:
    """d/dlambda alignment(h_lambda) at lambda = 1 under the restricted positive (Theorem 4.5).

    alignment(h_lambda) = E_u[(u^2 + lambda^2 r^2 R(c)) / (u^2 + lambda^2 r^2)] with R = I_1/I_0 the
    mean cosine on the fibre; differentiating at lambda = 1 gives E_u[2 u^2 r^2 (R(c) - 1)] < 0,
    because ||v|| = ||v~|| on K(z) makes R(c) < 1 the only loss of alignment.
    """
    kappa = positive_number("kappa", kappa)
    u, w = gauss_legendre(check_resolution(resolution))
    c = _fibre_concentration(kappa, u, exact_density)
    return float(0.5 * w @ (2.0 * u**2 * (1.0 - u**2) * (_bessel_ratio(c) - 1.0)))


def minimise_witness(
    kappa: float,
    tau: float,
    *,
    conditional: str = "restricted",
    negatives: str = "sphere",
    exact_density: bool = True,
    bounds: tuple[float, float] = (0.05, 3.0),
    resolution: int | None = None,
) -> tuple[float, AsymptoticObjective]:
    """argmin over lambda in ``bounds`` of the objective of h_lambda (bounded Brent search).

    Returns (lambda*, objective at lambda*). Under the restricted positive with sphere negatives
    lambda* < 1 (Theorem 4.5); with fibre negatives and the stated density lambda* = 1 (Thm 4.6).
    """
    lo, hi = bounds
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ValueError(f"bounds must satisfy 0 < low < high < inf; got {bounds!r}")
    kwargs = dict(conditional=conditional, negatives=negatives, exact_density=exact_density, resolution=resolution)
    result = minimize_scalar(
        lambda lam: asymptotic_objective(FibreScaling(lam), kappa, tau, **kwargs).value,
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-7},
    )
    lam = float(result.x)
    return lam, asymptotic_objective(FibreScaling(lam), kappa, tau, **kwargs)
