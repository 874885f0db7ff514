"""A generated image set in which invariance has to be learned: textured objects in cluttered, lit scenes.

On the plain ``shapes`` set (``cldiv.images.data``) one flat-coloured object sits on a flat
background, so even a randomly initialised encoder's features separate the ten shapes linearly,
and contrastive training has nothing left to add. Here the class is again the object's shape
(``cldiv.images.shapes.SHAPE_NAMES``), and everything else varies and is recorded as a latent:

- the object: centre (x, y), size, rotation, hue over the whole colour circle, and a stripe
  texture of random orientation and frequency in the object's own frame;
- the background: another hue, with a grating of random orientation;
- clutter: ``DISTRACTORS`` discs of random position, size and hue behind the object;
- lighting: a linear brightness gradient of random direction and strength over the whole image.

Colour, texture, clutter and light carry no information about the class, and they dominate the
pixels: a linear probe on random features has to find the silhouette under them. The augmentations
of Figure 3 are exactly invariances to such nuisances (colour jitter and grayscale to hue and light,
crops to position and size), so which of them a regime uses decides which latents its
representation keeps -- measured per latent by held-out R^2 (``cldiv.images.probe.latent_r2``).

Every latent is drawn independently and uniformly (``SCENE_LATENT_RANGES``); an image is a
deterministic, anti-aliased function of (class, latents), so the set is fixed by its seed.
"""

from __future__ import annotations

import math

import torch

from cldiv.images.shapes import (
    SHAPE_NAMES,
    ImageDataset,
    check_n_seed,
    hsv_to_rgb,
    rendered_dataset,
    shape_sdf,
)

#: Discs of clutter behind the object.
DISTRACTORS = 3

_OBJECT = {"x": (-0.35, 0.35), "y": (-0.35, 0.35), "size": (0.4, 0.65), "rotation": (-math.pi / 6, math.pi / 6),
           "hue": (0.0, 1.0), "texture_angle": (0.0, math.pi), "texture_frequency": (1.0, 3.0)}
_SCENE = {"background_hue": (0.0, 1.0), "background_angle": (0.0, math.pi),
          "light_angle": (0.0, 2 * math.pi), "light_strength": (0.0, 0.5)}
_CLUTTER = {f"{name}_{i}": span for i in range(DISTRACTORS)
            for name, span in (("disc_x", (-0.9, 0.9)), ("disc_y", (-0.9, 0.9)), ("disc_size", (0.1, 0.3)),
                               ("disc_hue", (0.0, 1.0)))}
#: Uniform ranges of every latent; positions and sizes in image coordinates ([-1, 1] spans the image).
SCENE_LATENT_RANGES = {**_OBJECT, **_SCENE, **_CLUTTER}
SCENE_LATENT_NAMES = tuple(SCENE_LATENT_RANGES)


def sample_scene_latents(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Classes (n,) uniform over the shapes and latents (n, k) uniform on SCENE_LATENT_RANGES."""
    check_n_seed(n, seed)
    rng = torch.Generator().manual_seed(seed)
    labels = torch.randint(len(SHAPE_NAMES), (n,), generator=rng)
    low, high = (torch.tensor([span[i] for span in SCENE_LATENT_RANGES.values()]) for i in (0, 1))
    return labels, low + (high - low) * torch.rand(n, len(SCENE_LATENT_NAMES), generator=rng)


def _coverage(sdf: torch.Tensor, pixel: float) -> torch.Tensor:
    """Anti-aliased coverage from a signed distance in image units (a one-pixel ramp)."""
    return (0.5 - sdf / pixel).clamp(0, 1)


def render_scenes(labels: torch.Tensor, latents: torch.Tensor, size: int = 32) -> torch.Tensor:
    """Render (n,) classes and (n, k) latents to (n, 3, size, size) uint8 scenes (module docstring)."""
    labels = torch.as_tensor(labels)
    latents = torch.as_tensor(latents, dtype=torch.float32)
    if latents.dim() != 2 or latents.shape[1] != len(SCENE_LATENT_NAMES) or labels.shape != latents.shape[:1]:
        raise ValueError(f"labels must be (n,) and latents (n, {len(SCENE_LATENT_NAMES)}); "
                         f"got {tuple(labels.shape)} and {tuple(latents.shape)}")
    c = {name: latents[:, i, None, None] for i, name in enumerate(SCENE_LATENT_NAMES)}
    n, pixel = labels.shape[0], 2.0 / size
    coords = (torch.arange(size, dtype=torch.float32) + 0.5) / size * 2 - 1
    gy, gx = torch.meshgrid(-coords, coords, indexing="ij")  # y up

    def colour(hue: torch.Tensor, saturation: float, value: float) -> torch.Tensor:
        return hsv_to_rgb(hue.reshape(-1), saturation, value)[:, :, None, None]  # (n, 3, 1, 1)

    grating = 0.75 + 0.25 * torch.sin(2 * math.pi * 2.5 * (gx * torch.cos(c["background_angle"])
                                                            + gy * torch.sin(c["background_angle"])))
    image = colour(c["background_hue"], 0.5, 0.7) * grating[:, None]
    for i in range(DISTRACTORS):
        disc = torch.sqrt((gx - c[f"disc_x_{i}"]) ** 2 + (gy - c[f"disc_y_{i}"]) ** 2) - c[f"disc_size_{i}"]
        alpha = _coverage(disc, pixel)[:, None]
        image = alpha * colour(c[f"disc_hue_{i}"], 0.7, 0.8) + (1 - alpha) * image

    dx, dy = gx - c["x"], gy - c["y"]
    cos, sin = torch.cos(c["rotation"]), torch.sin(c["rotation"])
    qx, qy = (cos * dx + sin * dy) / c["size"], (-sin * dx + cos * dy) / c["size"]
    sdf = torch.empty(n, size, size)
    for shape in range(len(SHAPE_NAMES)):
        idx = (labels == shape).nonzero().squeeze(1)
        if idx.numel():
            sdf[idx] = shape_sdf(shape, qx[idx], qy[idx]) * c["size"][idx]
    stripes = 0.6 + 0.4 * (0.5 + 0.5 * torch.sin(2 * math.pi * c["texture_frequency"]
                                                 * (qx * torch.cos(c["texture_angle"]) + qy * torch.sin(c["texture_angle"]))))
    alpha = _coverage(sdf, pixel)[:, None]
    image = alpha * colour(c["hue"], 0.85, 0.95) * stripes[:, None] + (1 - alpha) * image

    light = 1 + c["light_strength"] * (gx * torch.cos(c["light_angle"]) + gy * torch.sin(c["light_angle"]))
    return (image * light[:, None] * 255).round_().clamp_(0, 255).to(torch.uint8)


def scenes_dataset(n: int, seed: int = 0) -> ImageDataset:
    """``n`` generated scenes with their classes and latents, deterministic for ``seed``."""
    return rendered_dataset("scenes", *sample_scene_latents(n, seed), render_scenes, SCENE_LATENT_NAMES)
