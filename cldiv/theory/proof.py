"""The steps of the proof of Theorem 4.4 (identifiability under diversity), made computable.

The cross-entropy is minimal iff the model conditional q_h equals the vMF positive almost surely
(``log_model_conditional``); that forces h(z).h(z~) = z.z~, i.e. h preserves distances
(``inner_product_distortion``); a probabilistic Mazur-Ulam theorem then makes h an isometry,
h = A z with A orthogonal, recovered here by Procrustes (``recover_orthogonal``).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import orthogonal_procrustes
from scipy.special import logsumexp

from cldiv.config import positive_number
from cldiv.theory.maps import Map, apply_map
from cldiv.theory.objective import check_resolution
from cldiv.theory.quadrature import polar_rule


def log_partition(h: Map, z: np.ndarray, tau: float, *, resolution: int = 24) -> np.ndarray:
    """log int_{S^2} e^{h(z).h(z')/tau} dsigma(z') for each anchor, by a polar rule around z. (n,)."""
    tau = positive_number("tau", tau)
    z = np.asarray(z, dtype=np.float64)
    nodes, _, weights = polar_rule(z, check_resolution(resolution))
    dots = (apply_map(h, z)[:, None, :] * apply_map(h, nodes)).sum(-1)
    return logsumexp(dots / tau, b=weights, axis=1)


def log_model_conditional(
    h: Map, z: np.ndarray, z_tilde: np.ndarray, tau: float, *, resolution: int = 24
) -> np.ndarray:
    """log q_h(z~|z) = h(z).h(z~)/tau - log int e^{h(z).h(z')/tau} dsigma(z') (Theorem 3.3). (n,).

    Compare with the vMF log-density log C_3(kappa) + kappa z.z~: the cross-entropy is minimal
    iff the two agree almost surely, which forces kappa tau = 1 and h(z).h(z~) = z.z~ (Thm 4.4).
    """
    z = np.asarray(z, dtype=np.float64)
    dots = (apply_map(h, z) * apply_map(h, np.asarray(z_tilde, dtype=np.float64))).sum(-1)
    return dots / tau - log_partition(h, z, tau, resolution=resolution)


def inner_product_distortion(h: Map, z: np.ndarray, z_other: np.ndarray) -> np.ndarray:
    """|h(z).h(z') - z.z'| per pair; on the sphere |h(z) - h(z')|^2 = 2 - 2 h(z).h(z'), so this is
    zero iff h preserves the distance of the pair. z, z_other: (n, 3) -> (n,)."""
    z = np.asarray(z, dtype=np.float64)
    z_other = np.asarray(z_other, dtype=np.float64)
    return np.abs((apply_map(h, z) * apply_map(h, z_other)).sum(-1) - (z * z_other).sum(-1))


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
