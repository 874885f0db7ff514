"""The drawing primitives of the generated image sets: ten shapes as signed distance functions, hues,
and the container every image set shares (``ImageDataset``). ``cldiv.images.data`` renders one
object on a plain background with them, ``cldiv.images.scenes`` textured objects in cluttered scenes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

SHAPE_NAMES = ("square", "triangle", "pentagon", "star", "plus", "ellipse",
               "half_disc", "l_shape", "crescent", "arrow")


@dataclass(frozen=True)
class ImageDataset:
    """Images with labels and (if known) latents.

    images: (n, 3, H, W) uint8; labels: (n,) int64 in [0, n_classes); latents: (n, k) float32
    or None; class_names, latent_names: what the labels and latent columns mean.
    """

    name: str
    images: torch.Tensor
    labels: torch.Tensor
    class_names: tuple[str, ...]
    latents: torch.Tensor | None = None
    latent_names: tuple[str, ...] = ()

    def __len__(self) -> int:
        return self.images.shape[0]

    def subset(self, index: torch.Tensor) -> "ImageDataset":
        """The rows ``index`` (a 1-D index or boolean tensor) of every field."""
        return ImageDataset(
            self.name, self.images[index], self.labels[index], self.class_names,
            None if self.latents is None else self.latents[index], self.latent_names,
        )

    def float_images(self, index: torch.Tensor | slice = slice(None), device: str | torch.device = "cpu") -> torch.Tensor:
        """Images ``index`` as float32 in [0, 1] on ``device``: (m, 3, H, W)."""
        return self.images[index].to(device).float().div_(255.0)


def check_n_seed(n: int, seed: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer; got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63); got {seed!r}")


def _box(px: torch.Tensor, py: torch.Tensor, half_w: float, half_h: float, cx: float = 0.0, cy: float = 0.0) -> torch.Tensor:
    """Signed distance to an axis-aligned box (exact)."""
    dx = (px - cx).abs() - half_w
    dy = (py - cy).abs() - half_h
    outside = torch.sqrt(dx.clamp(min=0) ** 2 + dy.clamp(min=0) ** 2)
    return outside + torch.maximum(dx, dy).clamp(max=0)


def _regular_polygon(px: torch.Tensor, py: torch.Tensor, n_sides: int, apothem: float) -> torch.Tensor:
    """Signed distance (exact inside, a lower bound outside) to a regular n-gon with a vertex up."""
    d = None
    for i in range(n_sides):
        angle = math.pi / 2 + math.pi / n_sides + 2 * math.pi * i / n_sides  # edge normals
        e = px * math.cos(angle) + py * math.sin(angle) - apothem
        d = e if d is None else torch.maximum(d, e)
    return d


def shape_sdf(shape: int, px: torch.Tensor, py: torch.Tensor) -> torch.Tensor:
    """Signed distance (negative inside) of unit-size shape ``shape`` at shape coordinates (px, py)."""
    name = SHAPE_NAMES[shape]
    r = torch.sqrt(px**2 + py**2)
    if name == "square":
        return _box(px, py, 0.75, 0.75)
    if name == "triangle":
        return _regular_polygon(px, py, 3, 0.5)
    if name == "pentagon":
        return _regular_polygon(px, py, 5, 0.8)
    if name == "star":
        phi = torch.atan2(py, px) - math.pi / 2
        return (r - 0.68 * (1 + 0.4 * torch.cos(5 * phi))) * 0.7
    if name == "plus":
        return torch.minimum(_box(px, py, 0.95, 0.3), _box(px, py, 0.3, 0.95))
    if name == "ellipse":
        return (torch.sqrt((px / 1.0) ** 2 + (py / 0.5) ** 2) - 1.0) * 0.5
    if name == "half_disc":
        return torch.maximum(r - 1.0, -(py + 0.3))
    if name == "l_shape":
        return torch.minimum(_box(px, py, 0.3, 0.9, -0.5, 0.0), _box(px, py, 0.8, 0.3, 0.0, -0.6))
    if name == "crescent":
        inner = torch.sqrt((px - 0.45) ** 2 + (py - 0.2) ** 2) - 0.75
        return torch.maximum(r - 0.95, -inner)
    if name == "arrow":
        head = torch.maximum(torch.maximum(-(px - 0.1), 0.6 * px + 0.8 * py - 0.5), 0.6 * px - 0.8 * py - 0.5)
        return torch.minimum(head, _box(px, py, 0.5, 0.2, -0.4, 0.0))
    raise AssertionError(name)


def hsv_to_rgb(h: torch.Tensor, s: float, v: float) -> torch.Tensor:
    """(n,) hues in [0, 1) -> (n, 3) RGB for fixed saturation and value."""
    k = (torch.tensor([5.0, 3.0, 1.0]) + 6 * h[:, None]) % 6
    return v - v * s * torch.clamp(torch.minimum(k, 4 - k), 0, 1)


def rendered_dataset(name: str, labels: torch.Tensor, latents: torch.Tensor, render, latent_names: tuple[str, ...],
                     chunk: int = 4096) -> ImageDataset:
    """A generated ImageDataset: ``render(labels, latents)`` applied ``chunk`` images at a time."""
    images = torch.empty(len(labels), 3, 32, 32, dtype=torch.uint8)
    for start in range(0, len(labels), chunk):
        images[start:start + chunk] = render(labels[start:start + chunk], latents[start:start + chunk])
    return ImageDataset(name, images, labels, SHAPE_NAMES, latents, latent_names)
