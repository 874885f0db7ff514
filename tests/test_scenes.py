"""The generated cluttered scenes (cldiv/images/scenes.py)."""

import pytest
import torch

from cldiv.images.data import load_images
from cldiv.images.shapes import SHAPE_NAMES
from cldiv.images.scenes import (
    DISTRACTORS,
    SCENE_LATENT_NAMES,
    SCENE_LATENT_RANGES,
    render_scenes,
    sample_scene_latents,
    scenes_dataset,
)


def test_scenes_are_deterministic_for_a_seed_with_latents_in_their_ranges():
    a, b, c = scenes_dataset(300, 5), scenes_dataset(300, 5), scenes_dataset(300, 6)
    assert torch.equal(a.images, b.images) and torch.equal(a.latents, b.latents) and not torch.equal(a.images, c.images)
    assert a.images.dtype == torch.uint8 and a.images.shape == (300, 3, 32, 32) and a.class_names == SHAPE_NAMES
    assert len(SCENE_LATENT_NAMES) == 11 + 4 * DISTRACTORS == a.latents.shape[1]
    for j, (low, high) in enumerate(SCENE_LATENT_RANGES.values()):
        assert low <= a.latents[:, j].min() and a.latents[:, j].max() <= high
    train, test = load_images("scenes", "train", 50), load_images("scenes", "test", 50)
    assert train.name == "scenes" and not torch.equal(train.images, test.images)


def test_the_class_is_the_silhouette_and_the_nuisances_change_the_pixels_not_the_shape():
    _, latents = sample_scene_latents(1, 0)
    latents[0, SCENE_LATENT_NAMES.index("light_strength")] = 0.0
    for i in range(DISTRACTORS):  # clutter out of the picture
        latents[0, SCENE_LATENT_NAMES.index(f"disc_size_{i}")] = 0.0
    image = lambda label, **changes: render_scenes(
        torch.tensor([label]), _with(latents, **changes))[0].float()
    star, plus = SHAPE_NAMES.index("star"), SHAPE_NAMES.index("plus")
    by_class = (image(star) - image(plus)).abs().mean()
    assert by_class > 1  # the class changes the image ...
    recoloured = image(star, hue=(latents[0, 4].item() + 0.5) % 1.0, background_hue=0.1)
    assert (recoloured - image(star)).abs().mean() > 5 * by_class  # ... far less than colour does
    light = image(star, light_strength=0.5, light_angle=0.0)  # brighter to the right (x grows with the column)
    assert (light - image(star))[:, :, 24:].mean() > 0 > (light - image(star))[:, :, :8].mean()


def _with(latents, **changes):
    out = latents.clone()
    for name, value in changes.items():
        out[0, SCENE_LATENT_NAMES.index(name)] = value
    return out


def test_bad_scene_latents_are_rejected():
    with pytest.raises(ValueError, match="latents"):
        render_scenes(torch.tensor([0]), torch.zeros(1, 5))
    with pytest.raises(ValueError, match="n must be"):
        scenes_dataset(-1)
