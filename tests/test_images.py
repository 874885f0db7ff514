import math

import pytest
import torch

from cldiv.images.data import (
    LATENT_NAMES, LATENT_RANGES, DatasetUnavailableError, load_cifar10, load_images,
    render_shapes, shapes_dataset,
)
from cldiv.images.shapes import SHAPE_NAMES




def test_generated_images_are_deterministic_for_a_seed():
    a, b, c = shapes_dataset(300, 5), shapes_dataset(300, 5), shapes_dataset(300, 6)
    assert torch.equal(a.images, b.images) and torch.equal(a.labels, b.labels) and torch.equal(a.latents, b.latents)
    assert not torch.equal(a.images, c.images)


def test_generated_images_have_the_documented_types_shapes_and_latent_ranges():
    data = shapes_dataset(2000, 0)
    assert data.images.dtype == torch.uint8 and data.images.shape == (2000, 3, 32, 32)
    assert data.labels.dtype == torch.long and set(data.labels.tolist()) == set(range(len(SHAPE_NAMES)))
    assert data.latents.shape == (2000, len(LATENT_NAMES))
    for j, name in enumerate(LATENT_NAMES):
        low, high = LATENT_RANGES[name]
        assert low <= data.latents[:, j].min() and data.latents[:, j].max() <= high


def test_the_narrow_hue_set_differs_from_shapes_only_in_hue_and_the_colour_jitter_spans_its_hues():
    from cldiv.images.augment import regime_transforms
    from cldiv.images.data import NARROW_HUE_RANGES

    wide, narrow = load_images("shapes", "train", 500), load_images("shapes_narrow_hue", "train", 500)
    hue = LATENT_NAMES.index("hue")
    others = [j for j in range(len(LATENT_NAMES)) if j != hue]
    assert torch.equal(wide.labels, narrow.labels) and torch.equal(wide.latents[:, others], narrow.latents[:, others])
    low, high = NARROW_HUE_RANGES["hue"]
    assert low <= narrow.latents[:, hue].min() and narrow.latents[:, hue].max() <= high
    assert narrow.latents[:, hue].max() - narrow.latents[:, hue].min() > 0.1  # not a constant
    (jitter,) = [t for t in regime_transforms("all") if hasattr(t, "transforms")][0].transforms
    # any two of the set's hues are closer than the largest hue shift of All's colour jitter
    assert high - low < jitter.hue[1]


def test_the_fixed_background_set_is_the_narrow_hue_set_on_one_grey_level_and_drops_that_latent():
    from cldiv.images.data import FIXED_BACKGROUND_RANGES

    narrow, fixed = load_images("shapes_narrow_hue", "train", 300), load_images("shapes_fixed_background", "train", 300)
    background = LATENT_NAMES.index("background")
    assert fixed.latent_names == tuple(k for k in LATENT_NAMES if k != "background")
    assert torch.equal(narrow.labels, fixed.labels)
    assert torch.equal(narrow.latents[:, [j for j in range(len(LATENT_NAMES)) if j != background]], fixed.latents)
    grey = round(255 * FIXED_BACKGROUND_RANGES["background"][0])
    assert torch.all(fixed.images[:, :, 0, 0] == grey)  # the corners lie outside every object
    assert not torch.equal(narrow.images, fixed.images)
    with pytest.raises(ValueError, match="name must be one of 'shapes', 'shapes_narrow_hue'"):
        shapes_dataset(10, 0, "shapes_wide")


def test_train_and_test_splits_are_different_images():
    train, test = load_images("shapes", "train", 200), load_images("shapes", "test", 200)
    assert not torch.equal(train.images, test.images)
    assert len(train) == 200 and train.class_names == SHAPE_NAMES


def test_rendering_follows_the_latents():
    # a centred plus at rotation 0 is mirror-symmetric; the corner shows the background grey
    latents = torch.tensor([[0.0, 0.0, 0.5, 0.0, 0.3, 0.4]])
    image = render_shapes(torch.tensor([SHAPE_NAMES.index("plus")]), latents)[0]
    assert torch.equal(image, image.flip(-1)) and torch.equal(image, image.flip(-2))
    assert image[:, 0, 0].tolist() == [round(0.4 * 255)] * 3
    # moving the object right moves its centre of mass right; x is measured with y up
    right = render_shapes(torch.tensor([0]), torch.tensor([[0.3, 0.0, 0.5, 0.0, 0.3, 0.0]]))[0]
    cols = right.float().sum((0, 1))
    assert (cols * torch.arange(32)).sum() / cols.sum() > 18


def test_bad_latents_are_rejected():
    with pytest.raises(ValueError, match="latents"):
        render_shapes(torch.tensor([0]), torch.zeros(1, 5))
    with pytest.raises(ValueError, match="dataset must be one of 'cifar10', 'shapes'|dataset must be one of"):
        load_images("mnist", "train")
    with pytest.raises(ValueError, match="split must be one of"):
        load_images("shapes", "val")


def _image_statistics(data):
    """Simple per-image statistics: the object's centroid, sqrt(area) per class, the hue of its
    mean colour, the border grey level, and the orientation of its principal axis."""
    x = data.float_images()
    background = x[:, :, 0, :].mean((1, 2))  # top row: background unless the object touches it
    mask = ((x - x[:, :, :1, :1]).abs().sum(1) > 0.05).float()  # (n, 32, 32)
    coords = (torch.arange(32) + 0.5) / 16 - 1
    area = mask.sum((1, 2))
    cx = (mask * coords).sum((1, 2)) / area
    cy = (mask * -coords[:, None]).sum((1, 2)) / area
    colour = (x * mask[:, None]).sum((2, 3)) / area[:, None]
    r, g, b = colour.unbind(1)
    hue = torch.atan2(3**0.5 * (g - b), 2 * r - g - b) / (2 * math.pi) % 1.0
    dx, dy = coords - cx[:, None, None], -coords[:, None] - cy[:, None, None]
    mxx, myy, mxy = ((mask * dx * dx).sum((1, 2)), (mask * dy * dy).sum((1, 2)), (mask * dx * dy).sum((1, 2)))
    orientation = 0.5 * torch.atan2(2 * mxy, mxx - myy)
    size_by_class = torch.nn.functional.one_hot(data.labels, 10) * area.sqrt()[:, None]
    return {"x": cx[:, None], "y": cy[:, None], "size": size_by_class, "hue": hue[:, None],
            "background": background[:, None]}, orientation


def test_latents_are_recoverable_by_supervised_linear_regression_on_image_statistics():
    """Each latent but rotation is an affine function of one simple image statistic (fitted on
    one set, scored on another); the rotation of ellipses is their principal-axis angle."""
    from cldiv.metrics import affine_r2

    fit, held_out = shapes_dataset(3000, 10), shapes_dataset(1000, 11)
    (stats_fit, _), (stats_test, orientation) = _image_statistics(fit), _image_statistics(held_out)
    for j, name in enumerate(["x", "y", "size", "hue", "background"]):
        col = LATENT_NAMES.index(name)
        r2 = affine_r2(stats_fit[name], fit.latents[:, [col]],
                       test_features=stats_test[name], test_latents=held_out.latents[:, [col]])
        assert r2 > 0.9, (name, r2)
    ellipses = held_out.labels == SHAPE_NAMES.index("ellipse")
    error = (orientation[ellipses] - held_out.latents[ellipses, LATENT_NAMES.index("rotation")]).abs()
    assert error.median() < 0.05, error.median()


def test_cifar10_without_the_data_fails_with_instructions(tmp_path):
    with pytest.raises(DatasetUnavailableError) as error:
        load_cifar10(tmp_path)
    message = str(error.value)
    assert str(tmp_path) in message and "download=True" in message and "shapes" in message
    with pytest.raises(ValueError, match="CIFAR-10 is not in"):  # also a ValueError, for the CLI
        load_images("cifar10", "train", 100, data_root=tmp_path)
