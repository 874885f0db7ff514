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
- ``monte_carlo_infonce``: the finite-M loss minus log M from ``cldiv.losses``, with a standard
  error, to watch the limit being approached;
- the maps the theory chapters evaluate (orthogonal maps, h_lambda, fibre rotations, smooth
  perturbations, compositions, maps that differ from an isometry on a null set or on a
  hemisphere) and the steps of the proof of Theorem 4.4 (inner-product distortion, Procrustes
  recovery of the orthogonal matrix, the model conditional q_h).

Coordinates: z = (u, v) with u = z_1 (the coordinate the restricted conditional keeps,
d_fixed = 1 as in the paper's experiments) and v = (z_2, z_3), |v| = r = sqrt(1 - u^2).
All maps take and return numpy arrays of shape (..., 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from scipy.linalg import orthogonal_procrustes
from scipy.optimize import minimize_scalar
from scipy.special import ive, logsumexp
from scipy.stats import special_ortho_group

from cldiv.losses import info_nce, support_corrected_info_nce
from cldiv.quadrature import circle_rule, gauss_legendre, polar_rule, sphere_rule
from cldiv.sphere import (
    log_vmf_normaliser,
    mean_resultant_length,
    restricted_vmf,
    uniform_on_fibre,
    uniform_sphere,
    vmf,
)

__all__ = [
    "CONDITIONALS",
    "NEGATIVES",
    "METHODS",
    "LOG_SPHERE_AREA",
    "MEAN_LOG_FIBRE_LENGTH",
    "identity_cross_entropy",
    "vmf_entropy",
    "restricted_entropy",
    "AxialMap",
    "FibreScaling",
    "FibreRotation",
    "h_lambda",
    "RigidFibreMotion",
    "FibreCollapse",
    "Orthogonal",
    "random_orthogonal",
    "SmoothPerturbation",
    "Composition",
    "compose",
    "IsometryOffNullSet",
    "HemisphereReflection",
    "AsymptoticObjective",
    "asymptotic_objective",
    "alignment_uniformity_bound",
    "witness_alignment_slope",
    "minimise_witness",
    "log_partition",
    "log_model_conditional",
    "inner_product_distortion",
    "recover_orthogonal",
    "MonteCarloEstimate",
    "monte_carlo_infonce",
]

Map = Callable[[np.ndarray], np.ndarray]

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


# ----------------------------------------------------------------------------- validation


def _check_positive(name: str, value: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return x


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")


def _check_setting(conditional: str, negatives: str) -> None:
    _check_choice("conditional", conditional, CONDITIONALS)
    _check_choice("negatives", negatives, NEGATIVES)
    if negatives == "fibre" and conditional != "restricted":
        raise ValueError(
            "negatives='fibre' (support-corrected InfoNCE) needs conditional='restricted': "
            "the fibre K(z) is defined by the restricted conditional; got conditional='vmf'"
        )


def _check_resolution(resolution: int, minimum: int = 4) -> int:
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < minimum:
        raise ValueError(f"resolution must be an integer >= {minimum}; got {resolution!r}")
    return int(resolution)


def _apply(h: Map, z: np.ndarray) -> np.ndarray:
    out = np.asarray(h(z), dtype=np.float64)
    if out.shape != z.shape:
        raise ValueError(f"h must map arrays of shape (..., 3) to the same shape; got {z.shape} -> {out.shape}")
    return out


# ----------------------------------------------------------------------------- closed forms


def identity_cross_entropy(kappa: float, tau: float | np.ndarray, k: int = 3) -> float | np.ndarray:
    """E_z H(P_{Z~|z}, Q_{I,z}) for h = identity and a vMF positive (Theorem 3.3).

    q_I(z~|z) = C_k(1/tau) e^{z.z~/tau} is itself a vMF, so
    H = -E[z.z~]/tau - log C_k(1/tau) = -A_k(kappa)/tau - log C_k(1/tau). Vectorised over tau;
    as a function of tau it is minimised at tau = 1/kappa, where it equals ``vmf_entropy``.
    """
    kappa = _check_positive("kappa", kappa)
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
    kappa = _check_positive("kappa", kappa)
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
    kappa = _check_positive("kappa", kappa)
    u, w = gauss_legendre(_check_resolution(resolution))
    c = _fibre_concentration(kappa, u, exact_density)
    per_fibre = np.log(ive(0, c)) + c - c * _bessel_ratio(c)
    return float(MEAN_LOG_FIBRE_LENGTH + 0.5 * w @ per_fibre)


# ----------------------------------------------------------------------------- maps


def _split(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u = z_1, the angle phi of v = (z_2, z_3), and r = |v|."""
    return z[..., 0], np.arctan2(z[..., 2], z[..., 1]), np.hypot(z[..., 1], z[..., 2])


class AxialMap:
    """A map that acts fibre-wise: h(u, v) = (f(u), rho(u) R(alpha(u)) v / |v|), rho = sqrt(1 - f^2).

    Each circle K(z) of height u goes to the circle of height f(u), rotated by alpha(u).
    Subclasses define ``height`` (f) and optionally ``angle`` (alpha), both vectorised in u.
    For such maps ``asymptotic_objective(..., method="axial")`` reduces every integral to
    one-dimensional ones with Bessel functions.
    """

    def height(self, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def angle(self, u: np.ndarray) -> np.ndarray:
        return np.zeros_like(u)

    def __call__(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        u, phi, _ = _split(z)
        f = self.height(u)
        rho = np.sqrt(np.clip(1.0 - f**2, 0.0, None))
        turned = phi + self.angle(u)
        return np.stack([f, rho * np.cos(turned), rho * np.sin(turned)], axis=-1)


@dataclass(frozen=True)
class FibreScaling(AxialMap):
    """The witness family of Theorem 4.5: h_lambda(u, v) = (u, lambda v) / sqrt(u^2 + lambda^2 |v|^2).

    lambda = 1 is the identity; lambda < 1 pulls every fibre K(z) towards the poles u = +-1
    (shrinks the varying part v), lambda > 1 pushes it towards the equator. A diffeomorphism of
    S^2 for every lambda > 0, never an isometry unless lambda = 1.
    """

    lam: float

    def __post_init__(self) -> None:
        _check_positive("lam (lambda of h_lambda)", self.lam)

    def height(self, u: np.ndarray) -> np.ndarray:
        return u / np.sqrt(u**2 + self.lam**2 * (1.0 - u**2))


def h_lambda(lam: float) -> FibreScaling:
    """h_lambda of Theorem 4.5 (see ``FibreScaling``)."""
    return FibreScaling(lam)


@dataclass(frozen=True)
class FibreRotation(AxialMap):
    """m(u, v) = (u, R(twist * u) v): rotate each fibre K(z) by an angle proportional to u (Thm A.5).

    m preserves the uniform measure (it rotates each fibre within itself) and the restricted
    conditional (z and z~ on the same fibre turn together, so z.z~ is unchanged), yet it is not
    linear for twist != 0: h o m has the loss of h under the support-corrected objective.
    """

    twist: float

    def __post_init__(self) -> None:
        if not math.isfinite(float(self.twist)):
            raise ValueError(f"twist (radians per unit of u) must be a finite number; got {self.twist!r}")

    def height(self, u: np.ndarray) -> np.ndarray:
        return u

    def angle(self, u: np.ndarray) -> np.ndarray:
        return self.twist * u


@dataclass(frozen=True)
class RigidFibreMotion:
    """h(z) = Rot(axis, twist * u) z: each fibre K(z) moved rigidly by a rotation that depends on u.

    Inner products within a fibre are preserved, so the support-corrected loss (which only
    compares points of the same fibre) is that of the identity; but fibres of different heights
    are moved differently, may overlap, and h is neither linear nor measure preserving.
    axis: a 3-vector (normalised here); axis = e1 gives ``FibreRotation``.
    """

    twist: float
    axis: tuple = (0.0, 0.0, 1.0)

    def __post_init__(self) -> None:
        axis = np.asarray(self.axis, dtype=np.float64)
        if axis.shape != (3,) or not np.all(np.isfinite(axis)) or np.linalg.norm(axis) == 0:
            raise ValueError(f"axis must be a non-zero finite 3-vector; got {self.axis!r}")
        if not math.isfinite(float(self.twist)):
            raise ValueError(f"twist (radians per unit of u) must be a finite number; got {self.twist!r}")
        object.__setattr__(self, "axis", tuple(axis / np.linalg.norm(axis)))

    def __call__(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        a = np.asarray(self.axis)
        angle = (self.twist * z[..., 0])[..., None]
        # Rodrigues: z cos + (a x z) sin + a (a.z)(1 - cos)
        return z * np.cos(angle) + np.cross(a, z) * np.sin(angle) + a * (z @ a)[..., None] * (1.0 - np.cos(angle))


@dataclass(frozen=True)
class FibreCollapse:
    """h(u, v) = (u, r cos(2 pi turns u), r sin(2 pi turns u)): every fibre K(z) goes to one point.

    The image is a spiral from pole to pole. Restricted positives share u, so alignment is
    perfect (h(z~) = h(z)); the height u is uniform (Archimedes) and, as ``turns`` grows, the
    azimuth becomes uniform too, so h pushes P_Z towards the uniform law: the objective
    approaches ``alignment_uniformity_bound`` (Section 4.2, a degenerate minimiser under violation).
    """

    turns: float

    def __post_init__(self) -> None:
        if not (math.isfinite(float(self.turns)) and self.turns >= 0):
            raise ValueError(f"turns must be a finite number >= 0; got {self.turns!r}")

    def __call__(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        u = z[..., 0]
        r = np.sqrt(np.clip(1.0 - u**2, 0.0, None))
        angle = 2.0 * np.pi * self.turns * u
        return np.stack([u, r * np.cos(angle), r * np.sin(angle)], axis=-1)


@dataclass(frozen=True, eq=False)
class Orthogonal:
    """h(z) = A z with A in O(3): the identifiability class of Theorem 4.4. A: (3, 3)."""

    matrix: np.ndarray

    def __post_init__(self) -> None:
        a = np.asarray(self.matrix, dtype=np.float64)
        if a.shape != (3, 3) or not np.allclose(a.T @ a, np.eye(3), atol=1e-10):
            raise ValueError("matrix must be a (3, 3) orthogonal matrix (A^T A = I)")
        object.__setattr__(self, "matrix", a)

    def __call__(self, z: np.ndarray) -> np.ndarray:
        return np.asarray(z, dtype=np.float64) @ self.matrix.T


def random_orthogonal(seed: int, *, reflection: bool = False) -> Orthogonal:
    """A Haar-random rotation (det +1), or rotation times a reflection (det -1) if ``reflection``."""
    a = special_ortho_group.rvs(3, random_state=seed)
    if reflection:
        a = a @ np.diag([-1.0, 1.0, 1.0])
    return Orthogonal(a)


@dataclass(frozen=True, eq=False)
class SmoothPerturbation:
    """h(z) = normalise(z + epsilon delta(z)), delta a fixed random smooth field.

    delta(z) = B sin(W z + b) / sqrt(n_features) with W, B standard normal and b uniform on
    [0, 2 pi) (random Fourier features, drawn from ``seed``). Smooth, and a diffeomorphism for
    small epsilon; not an isometry for epsilon != 0.
    """

    epsilon: float
    seed: int = 0
    n_features: int = 16

    def __post_init__(self) -> None:
        if not (math.isfinite(float(self.epsilon)) and self.epsilon >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0; got {self.epsilon!r}")
        rng = np.random.default_rng(self.seed)
        object.__setattr__(self, "_w", rng.standard_normal((self.n_features, 3)))
        object.__setattr__(self, "_b", rng.uniform(0.0, 2.0 * np.pi, self.n_features))
        object.__setattr__(self, "_out", rng.standard_normal((3, self.n_features)) / math.sqrt(self.n_features))

    def __call__(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        x = z + self.epsilon * (np.sin(z @ self._w.T + self._b) @ self._out.T)
        return x / np.linalg.norm(x, axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class Composition:
    """(maps[0] o maps[1] o ... o maps[-1])(z): the last map is applied first."""

    maps: tuple

    def __call__(self, z: np.ndarray) -> np.ndarray:
        for h in reversed(self.maps):
            z = h(z)
        return z


def compose(*maps: Map) -> Composition:
    """compose(f, g)(z) = f(g(z))."""
    if not maps:
        raise ValueError("compose needs at least one map; got none")
    return Composition(tuple(maps))


@dataclass(frozen=True, eq=False)
class IsometryOffNullSet:
    """h(z) = A z except on the equator {z_3 = 0} (a null set), which goes to the north pole.

    Discontinuous and not injective, yet equal to the isometry A almost everywhere, so it
    preserves z.z~ for almost all pairs: the probabilistic Mazur-Ulam theorem covers it.
    """

    matrix: np.ndarray

    def __call__(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        on_null_set = (z[..., 2] == 0.0)[..., None]
        return np.where(on_null_set, np.array([0.0, 0.0, 1.0]), z @ np.asarray(self.matrix).T)


@dataclass(frozen=True)
class HemisphereReflection:
    """h(z) = z on the upper hemisphere z_3 >= 0, (-z_1, z_2, z_3) on the lower one.

    An isometry on each half and a bijection that preserves the uniform measure, but pairs that
    straddle the equator (half of all pairs) have h(z).h(z~) != z.z~: distances are preserved on
    a set of positive measure, not almost everywhere, and h is no isometry.
    """

    def __call__(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        sign = np.where(z[..., 2] >= 0.0, 1.0, -1.0)
        return np.stack([sign * z[..., 0], z[..., 1], z[..., 2]], axis=-1)


# ----------------------------------------------------------------------------- the objective


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
    hz = _apply(h, z)
    u, phi, r = _split(z)
    angles, _ = circle_rule(2 * n)
    alignment = np.empty(len(z))
    log_mass = np.empty(len(z))
    for start in range(0, len(z), _CHUNK):
        block = slice(start, start + _CHUNK)
        h_anchor = hz[block][:, None, :]
        if conditional == "vmf" or negatives == "sphere":
            nodes, w, weights = polar_rule(z[block], n)
            dots = (h_anchor * _apply(h, nodes)).sum(-1)
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
            dots = (h_anchor * _apply(h, circle)).sum(-1)
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
    kappa = _check_positive("kappa", kappa)
    tau = _check_positive("tau", tau)
    _check_setting(conditional, negatives)
    _check_choice("method", method, METHODS)
    if method == "auto":
        method = "axial" if isinstance(h, AxialMap) else "sphere"
    if method == "axial" and not isinstance(h, AxialMap):
        raise ValueError(f"method='axial' needs an AxialMap (a fibre-wise map); got {type(h).__name__}")
    n = _check_resolution(_DEFAULT_RESOLUTION[method] if resolution is None else resolution)
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
    tau = _check_positive("tau", tau)
    b = 1.0 / tau
    return float(-b + LOG_SPHERE_AREA + b + math.log(-math.expm1(-2.0 * b) / 2.0) - math.log(b))


def witness_alignment_slope(kappa: float, *, exact_density: bool = True, resolution: int = 96) -> float:
    """d/dlambda alignment(h_lambda) at lambda = 1 under the restricted positive (Theorem 4.5).

    alignment(h_lambda) = E_u[(u^2 + lambda^2 r^2 R(c)) / (u^2 + lambda^2 r^2)] with R = I_1/I_0 the
    mean cosine on the fibre; differentiating at lambda = 1 gives E_u[2 u^2 r^2 (R(c) - 1)] < 0,
    because ||v|| = ||v~|| on K(z) makes R(c) < 1 the only loss of alignment.
    """
    kappa = _check_positive("kappa", kappa)
    u, w = gauss_legendre(_check_resolution(resolution))
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


# ----------------------------------------------------------------------------- the proof of Theorem 4.4


def log_partition(h: Map, z: np.ndarray, tau: float, *, resolution: int = 24) -> np.ndarray:
    """log int_{S^2} e^{h(z).h(z')/tau} dsigma(z') for each anchor, by a polar rule around z. (n,)."""
    tau = _check_positive("tau", tau)
    z = np.asarray(z, dtype=np.float64)
    nodes, _, weights = polar_rule(z, _check_resolution(resolution))
    dots = (_apply(h, z)[:, None, :] * _apply(h, nodes)).sum(-1)
    return logsumexp(dots / tau, b=weights, axis=1)


def log_model_conditional(
    h: Map, z: np.ndarray, z_tilde: np.ndarray, tau: float, *, resolution: int = 24
) -> np.ndarray:
    """log q_h(z~|z) = h(z).h(z~)/tau - log int e^{h(z).h(z')/tau} dsigma(z') (Theorem 3.3). (n,).

    Compare with the vMF log-density log C_3(kappa) + kappa z.z~: the cross-entropy is minimal
    iff the two agree almost surely, which forces kappa tau = 1 and h(z).h(z~) = z.z~ (Thm 4.4).
    """
    z = np.asarray(z, dtype=np.float64)
    dots = (_apply(h, z) * _apply(h, np.asarray(z_tilde, dtype=np.float64))).sum(-1)
    return dots / tau - log_partition(h, z, tau, resolution=resolution)


def inner_product_distortion(h: Map, z: np.ndarray, z_other: np.ndarray) -> np.ndarray:
    """|h(z).h(z') - z.z'| per pair; on the sphere |h(z) - h(z')|^2 = 2 - 2 h(z).h(z'), so this is
    zero iff h preserves the distance of the pair. z, z_other: (n, 3) -> (n,)."""
    z = np.asarray(z, dtype=np.float64)
    z_other = np.asarray(z_other, dtype=np.float64)
    return np.abs((_apply(h, z) * _apply(h, z_other)).sum(-1) - (z * z_other).sum(-1))


def recover_orthogonal(z: np.ndarray, hz: np.ndarray) -> tuple[np.ndarray, float]:
    """Orthogonal A minimising sum |A z_i - h(z_i)|^2 (``scipy.linalg.orthogonal_procrustes``).

    Returns (A, root-mean-square residual |A z_i - h(z_i)|). A residual of zero means h = A z on
    the sample: the last step of the proof of Theorem 4.4. z, hz: (n, 3).
    """
    z = np.asarray(z, dtype=np.float64)
    hz = np.asarray(hz, dtype=np.float64)
    if z.ndim != 2 or z.shape != hz.shape:
        raise ValueError(f"z and hz must both have shape (n, d); got {z.shape} and {hz.shape}")
    r, _ = orthogonal_procrustes(z, hz)  # minimises |z R - hz|_F, so A = R^T
    residual = float(np.sqrt(np.mean(np.sum((z @ r - hz) ** 2, axis=1))))
    return r.T, residual


# ----------------------------------------------------------------------------- Monte Carlo


@dataclass(frozen=True)
class MonteCarloEstimate:
    """Mean of (InfoNCE loss - log M) over independent batches and its standard error."""

    mean: float
    standard_error: float
    n_negatives: int


def monte_carlo_infonce(
    h: Map,
    kappa: float,
    tau: float,
    n_negatives: int,
    *,
    conditional: str = "vmf",
    negatives: str = "sphere",
    exact_density: bool = True,
    n_anchors: int = 500,
    n_repeats: int = 10,
    seed: int = 0,
) -> MonteCarloEstimate:
    """Finite-M InfoNCE of the map h, minus log M: converges to ``infonce_limit`` (Thms 3.3, A.4).

    Each of ``n_repeats`` batches draws ``n_anchors`` uniform anchors, their positives (vMF or
    restricted), and M = ``n_negatives`` negatives: uniform on the sphere and shared by the
    batch (``cldiv.losses.info_nce``), or uniform on each anchor's fibre
    (``cldiv.losses.support_corrected_info_nce``). The standard error is over batches, so it
    accounts for the negatives a batch shares. Computed in float64 from ``seed``.
    """
    kappa = _check_positive("kappa", kappa)
    tau = _check_positive("tau", tau)
    _check_setting(conditional, negatives)
    for name, value, minimum in (("n_negatives", n_negatives, 1), ("n_anchors", n_anchors, 1), ("n_repeats", n_repeats, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    gen = torch.Generator().manual_seed(seed)

    def embed(points: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(_apply(h, points.numpy()))

    losses = np.empty(n_repeats)
    for i in range(n_repeats):  # independent batches, not points
        z = uniform_sphere(n_anchors, 3, gen, dtype=torch.float64)
        if conditional == "vmf":
            z_tilde = vmf(z, kappa, gen)
        else:
            z_tilde = restricted_vmf(z, 1, kappa, gen, exact_density=exact_density)
        if negatives == "sphere":
            neg = uniform_sphere(n_negatives, 3, gen, dtype=torch.float64)
            loss = info_nce(embed(z), embed(z_tilde), embed(neg), tau)
        else:
            neg = uniform_on_fibre(z, 1, n_negatives, gen)
            loss = support_corrected_info_nce(embed(z), embed(z_tilde), embed(neg), tau)
        losses[i] = float(loss) - math.log(n_negatives)
    return MonteCarloEstimate(
        mean=float(losses.mean()),
        standard_error=float(losses.std(ddof=1) / math.sqrt(n_repeats)),
        n_negatives=int(n_negatives),
    )
