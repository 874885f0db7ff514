import pytest
import torch
from torchvision.transforms import v2
from torchvision.transforms.v2 import functional as TF

from cldiv.images import augment as A
from cldiv.images.data import shapes_dataset




@pytest.fixture(scope="module")
def images():
    x = shapes_dataset(32, 3).float_images()
    return (0.9 * x + 0.1 * torch.rand(x.shape, generator=torch.Generator().manual_seed(0))).clamp(0, 1)


def _names(transforms):
    return [type(t).__name__ if not isinstance(t, v2.RandomApply) else type(t.transforms[0]).__name__
            for t in transforms]


def test_each_regime_is_the_specified_transform_list():
    all_six = ["RandomResizedCrop", "RandomHorizontalFlip", "ColorJitter", "RandomGrayscale",
               "GaussianBlur", "RandomErasing"]
    assert _names(A.regime_transforms("all")) == all_six
    assert _names(A.regime_transforms("crop")) == ["RandomResizedCrop"]
    assert _names(A.regime_transforms("no_crop")) == all_six[1:]
    # the authors' code counts cutout as spatial
    assert _names(A.regime_transforms("all", "code")) == all_six
    assert _names(A.regime_transforms("crop", "code")) == ["RandomResizedCrop", "RandomErasing"]
    assert _names(A.regime_transforms("no_crop", "code")) == all_six[1:5]


def test_regime_transforms_carry_the_papers_parameters():
    crop, flip, jitter, gray, blur, erase = A.regime_transforms("all")
    assert crop.size == (32, 32) and crop.scale == (0.08, 1.0)
    assert flip.p == 0.5
    assert jitter.p == 0.8
    cj = jitter.transforms[0]
    assert [tuple(round(v, 6) for v in r) for r in (cj.brightness, cj.contrast, cj.saturation)] == [(0.2, 1.8)] * 3
    assert tuple(cj.hue) == (-0.2, 0.2)
    assert gray.p == 0.2
    assert blur.kernel_size == (3, 3) and list(blur.sigma) == [0.1, 2.0]
    assert erase.p == 1.0 and erase.scale == (0.02, 0.33) and erase.ratio == (0.3, 3.3) and erase.value == [0.0]


def test_unknown_regime_or_variant_is_rejected():
    with pytest.raises(ValueError, match="regime must be one of 'all', 'crop', 'no_crop'|regime must be one of"):
        A.regime_transforms("rotate")
    with pytest.raises(ValueError, match="variant must be one of"):
        A.regime_transforms("all", "kornia")


def test_batched_colour_kernels_match_torchvision_functional(images):
    g = torch.Generator().manual_seed(1)
    f = 0.2 + 1.6 * torch.rand(len(images), generator=g)
    h = -0.2 + 0.4 * torch.rand(len(images), generator=g)
    pairs = [(A.adjust_brightness, TF.adjust_brightness, f), (A.adjust_contrast, TF.adjust_contrast, f),
             (A.adjust_saturation, TF.adjust_saturation, f), (A.adjust_hue, TF.adjust_hue, h)]
    for mine, reference, factors in pairs:
        out = mine(images, factors)
        expected = torch.stack([reference(img, float(k)) for img, k in zip(images, factors)])
        torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)


def test_batched_geometric_kernels_match_torchvision_functional(images):
    g = torch.Generator().manual_seed(2)
    n = len(images)
    top, left = torch.randint(0, 12, (n,), generator=g), torch.randint(0, 12, (n,), generator=g)
    h, w = torch.randint(3, 21, (n,), generator=g), torch.randint(3, 21, (n,), generator=g)
    out = A.resized_crop(images, top, left, h, w, 32)
    expected = torch.stack([TF.resized_crop(img, int(t), int(l), int(hh), int(ww), [32, 32], antialias=True)
                            for img, t, l, hh, ww in zip(images, top, left, h, w)])
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)
    out = A.erase(images, top, left, h, w, 0.0)
    expected = torch.stack([TF.erase(img, int(t), int(l), int(hh), int(ww), torch.tensor(0.0))
                            for img, t, l, hh, ww in zip(images, top, left, h, w)])
    assert torch.equal(out, expected)
    sigma = 0.1 + 1.9 * torch.rand(n, generator=g)
    out = A.gaussian_blur(images, 3, sigma)
    expected = torch.stack([TF.gaussian_blur(img, [3, 3], [float(s)] * 2) for img, s in zip(images, sigma)])
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)


def test_crop_boxes_follow_random_resized_crop_law():
    top, left, h, w = A._sample_crop_boxes(4000, 32, 32, (0.08, 1.0), (3 / 4, 4 / 3), torch.Generator().manual_seed(0))
    assert (top >= 0).all() and (left >= 0).all() and (top + h <= 32).all() and (left + w <= 32).all()
    area = (h * w).float() / 1024
    assert area.min() >= 0.06 and area.max() <= 1.0
    torch.manual_seed(0)
    crop, image = A.regime_transforms("crop")[0], torch.zeros(3, 32, 32)
    reference = torch.tensor([(lambda p: p["height"] * p["width"] / 1024)(crop.make_params([image]))
                              for _ in range(4000)])
    assert abs(area.mean() - reference.mean()) < 0.02  # standard error about 0.004 each
    assert abs(area.std() - reference.std()) < 0.02


def test_augmentations_are_drawn_independently_per_image_and_are_seeded(images):
    same = images[:1].expand(16, -1, -1, -1).contiguous()
    for regime in A.REGIMES:
        t = A.regime_transforms(regime)
        a = A.augment_batch(same, t, torch.Generator().manual_seed(7))
        b = A.augment_batch(same, t, torch.Generator().manual_seed(7))
        assert torch.equal(a, b), regime
        assert len({tuple(v.flatten()[:200].tolist()) for v in a}) > 8, regime
        assert a.shape == same.shape and a.min() >= 0 and a.max() <= 1 + 1e-6


def test_augment_batch_rejects_unknown_transforms(images):
    with pytest.raises(ValueError, match="transforms may only contain"):
        A.augment_batch(images, [v2.RandomRotation(10)], torch.Generator())
