"""Quadrature rules on the circle and on the sphere S^2 (used by ``cldiv.theory``).

The asymptotic objectives of Theorems 3.3, 4.5 and A.4 are integrals over S^2 (anchors) of
integrals over S^2 or over a circle K(z) (positives, negatives). Their integrands are smooth
(analytic for the maps the book studies), so product rules converge exponentially fast:

- ``gauss_legendre(n, a, b)``: n-node Gauss-Legendre rule on [a, b], exact for polynomials of
  degree <= 2n - 1 (``numpy.polynomial.legendre.leggauss``).
- ``circle_rule(n)``: the trapezoid rule on [0, 2 pi), exact for trigonometric polynomials of
  degree <= n - 1 and spectrally accurate for smooth periodic integrands.
- ``sphere_rule(n)``: Gauss-Legendre in cos(theta) (n nodes) x trapezoid in phi (2n nodes),
  exact for spherical harmonics of degree <= 2n - 1; weights sum to 4 pi (surface measure).
- ``polar_rule(poles, n)``: the same product rule rotated so that its pole sits at each given
  point. Around an anchor z it resolves integrands peaked at z, such as e^{kappa z.z~}.

No Lebedev rule is in scipy; accuracy is therefore *measured*, by comparing two resolutions
(``cldiv.theory`` reports that difference as the quadrature error).
"""

from __future__ import annotations

import numpy as np

from cldiv.config import integer_at_least

__all__ = ["gauss_legendre", "circle_rule", "sphere_rule", "tangent_frame", "polar_rule"]


def gauss_legendre(n: int, a: float = -1.0, b: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [a, b]: sum_j w_j f(x_j) ~ int_a^b f(x) dx. (n,), (n,)."""
    integer_at_least("n (number of quadrature nodes)", n, 1)
    if not (np.isfinite(a) and np.isfinite(b) and a < b):
        raise ValueError(f"the interval [a, b] must be finite with a < b; got a={a!r}, b={b!r}")
    x, w = np.polynomial.legendre.leggauss(int(n))
    half = 0.5 * (b - a)
    return a + half * (x + 1.0), half * w


def circle_rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid rule on [0, 2 pi): angles 2 pi j / n and equal weights 2 pi / n. (n,), (n,)."""
    integer_at_least("n (number of quadrature nodes)", n, 1)
    return 2.0 * np.pi * np.arange(n) / n, np.full(n, 2.0 * np.pi / n)


def sphere_rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Product rule on S^2: points (2 n^2, 3) and surface-measure weights (2 n^2,), sum 4 pi.

    Gauss-Legendre in w = cos(theta) (n nodes) x trapezoid in phi (2n nodes), with the pole on
    the third axis: sum_j w_j f(p_j) ~ int_{S^2} f dsigma, exact for spherical harmonics of
    degree <= 2n - 1.
    """
    w, w_weights = gauss_legendre(n)
    phi, phi_weights = circle_rule(2 * n)
    s = np.sqrt(1.0 - w**2)
    points = np.stack(
        [
            np.outer(s, np.cos(phi)).ravel(),
            np.outer(s, np.sin(phi)).ravel(),
            np.repeat(w, 2 * n),
        ],
        axis=1,
    )
    return points, np.outer(w_weights, phi_weights).ravel()


def tangent_frame(poles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal tangent vectors (e1, e2) at each unit vector p: (n, 3) -> (n, 3), (n, 3).

    (e1, e2, p) is a right-handed orthonormal basis; e1 is the normalised projection of the
    coordinate axis least aligned with p.
    """
    p = np.asarray(poles, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"poles must have shape (n, 3); got {p.shape}")
    helper = np.zeros_like(p)
    helper[np.arange(len(p)), np.argmin(np.abs(p), axis=1)] = 1.0
    e1 = helper - (helper * p).sum(1, keepdims=True) * p
    e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
    return e1, np.cross(p, e1)


def polar_rule(poles: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sphere_rule(n)`` rotated to have its pole at each row of ``poles``.

    Nodes z' = w p + sqrt(1 - w^2) (cos psi e1 + sin psi e2) with Gauss-Legendre w and
    trapezoid psi (2n nodes). Returns nodes (n_poles, 2 n^2, 3), the cosines w = p.z' of the
    nodes (2 n^2,) and surface-measure weights (2 n^2,) (the same for every pole). Weighting
    by g(w_j) integrates a density that depends on z' only through p.z' (a vMF around p).
    """
    e1, e2 = tangent_frame(poles)
    p = np.asarray(poles, dtype=np.float64)
    w, w_weights = gauss_legendre(n)
    psi, psi_weights = circle_rule(2 * n)
    w_nodes = np.repeat(w, 2 * n)
    s = np.sqrt(1.0 - w_nodes**2)
    cos_psi, sin_psi = np.tile(np.cos(psi), n), np.tile(np.sin(psi), n)
    nodes = (
        w_nodes[None, :, None] * p[:, None, :]
        + (s * cos_psi)[None, :, None] * e1[:, None, :]
        + (s * sin_psi)[None, :, None] * e2[:, None, :]
    )
    return nodes, w_nodes, np.outer(w_weights, psi_weights).ravel()
