"""Finite-M InfoNCE of a map h, minus log M: the losses that approach the limits of Theorems 3.3 and A.4."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from cldiv.config import integer_at_least, positive_number
from cldiv.losses import info_nce, support_corrected_info_nce
from cldiv.sphere import restricted_vmf, uniform_on_fibre, uniform_sphere, vmf
from cldiv.theory.maps import Map, apply_map
from cldiv.theory.objective import check_setting


@dataclass(frozen=True)
class MonteCarloEstimate:
    """Mean of (InfoNCE loss - log M) over independent batches and its standard error."""

    mean: float
    standard_error: float
    n_negatives: int


def monte_carlo_infonce(h: Map, kappa: float, tau: float, n_negatives: int, *, conditional: str = "vmf",
                        negatives: str = "sphere", exact_density: bool = True, n_anchors: int = 500,
                        n_repeats: int = 10, seed: int = 0) -> MonteCarloEstimate:
    """Finite-M InfoNCE of the map h, minus log M: converges to ``infonce_limit`` (Thms 3.3, A.4).

    Each of ``n_repeats`` batches draws ``n_anchors`` uniform anchors, their positives (vMF or
    restricted), and M = ``n_negatives`` negatives: uniform on the sphere and shared by the
    batch (``cldiv.losses.info_nce``), or uniform on each anchor's fibre
    (``cldiv.losses.support_corrected_info_nce``). The standard error is over batches, so it
    accounts for the negatives a batch shares. Computed in float64 from ``seed``.
    """
    kappa = positive_number("kappa", kappa)
    tau = positive_number("tau", tau)
    check_setting(conditional, negatives)
    for name, value, minimum in (("n_negatives", n_negatives, 1), ("n_anchors", n_anchors, 1), ("n_repeats", n_repeats, 2)):
        integer_at_least(name, value, minimum)
    gen = torch.Generator().manual_seed(seed)

    def embed(points: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(apply_map(h, points.numpy()))

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
