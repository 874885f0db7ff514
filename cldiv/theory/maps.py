"""The recovery maps h : S^2 -> S^2 that the theory chapters evaluate (Sections 3-4).

Orthogonal maps (the minimisers of Theorem 4.4), h_lambda (the witness of Theorem 4.5), fibre
rotations (the non-uniqueness of Theorem A.5), smooth perturbations, compositions, and maps that
differ from an isometry on a null set or on a hemisphere. ``AxialMap`` is the family that acts
fibre-wise, for which ``cldiv.theory.objective`` has a one-dimensional quadrature route.

Coordinates: z = (u, v) with u = z_1 (the coordinate the restricted conditional keeps,
d_fixed = 1 as in the paper's experiments) and v = (z_2, z_3), |v| = r = sqrt(1 - u^2).
All maps take and return numpy arrays of shape (..., 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.stats import special_ortho_group

from cldiv.config import positive_number

Map = Callable[[np.ndarray], np.ndarray]


def apply_map(h: Map, z: np.ndarray) -> np.ndarray:
    """h(z) as float64, checked to have the shape of z."""
    out = np.asarray(h(z), dtype=np.float64)
    if out.shape != z.shape:
        raise ValueError(f"h must map arrays of shape (..., 3) to the same shape; got {z.shape} -> {out.shape}")
    return out


def fibre_coordinates(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        u, phi, _ = fibre_coordinates(z)
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
        positive_number("lam (lambda of h_lambda)", self.lam)

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
