"""Figures shared by the chapters (matplotlib): points on the sphere coloured by latent."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch


def _numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def latent_colours(z) -> np.ndarray:
    """RGB colour of each latent z in S^2: (z + 1) / 2, so nearby latents look alike. (n, 3)."""
    return np.clip((_numpy(z)[:, :3] + 1.0) / 2.0, 0.0, 1.0)


def first_three_principal_components(x) -> np.ndarray:
    """Project (n, d) points to their first three principal axes (for d > 3 outputs)."""
    x = _numpy(x)
    if x.shape[1] <= 3:
        return x
    centred = x - x.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt[:3].T


def sphere_axes(fig: plt.Figure, position, title: str = "") -> plt.Axes:
    """A 3-D axes with equal aspect, no panes, and a title."""
    ax = fig.add_subplot(*position, projection="3d")
    ax.set_box_aspect((1, 1, 1), zoom=1.35)
    ax.set_axis_off()
    ax.set_title(title, fontsize=10)
    return ax


def scatter3d(ax: plt.Axes, points, colours, size: float = 2.0) -> None:
    """Scatter (n, >=3) points (projected to 3-D if needed) with per-point colours."""
    p = first_three_principal_components(points)
    ax.scatter(p[:, 0], p[:, 1], p[:, 2], c=colours, s=size, depthshade=False, linewidths=0)
    ax.view_init(elev=20, azim=35)
