"""The augmentation regimes of the SimCLR experiment (paper Section 5, Figure 3), batched.

In the paper's image experiment the augmentations *are* the positive conditional
P(x~ | x): the broader they are, the closer the sampling comes to the diversity condition
(Definition 3.1); restricting them restricts the support of the positives. Three regimes:

- ``"all"``: RandomResizedCrop(32, scale 0.08-1), horizontal flip (p 0.5),
  ColorJitter(0.8, 0.8, 0.8, 0.2) applied with p 0.8, RandomGrayscale(p 0.2),
  GaussianBlur(3, sigma 0.1-2) always, RandomErasing(p 1, scale 0.02-0.33, ratio 0.3-3.3, value 0);
- ``"crop"``: "Crop only";
- ``"no_crop"``: "All w/o crop".

``variant="paper"`` reads the regime names literally: Crop only is RandomResizedCrop alone and
All w/o crop is the other five. ``variant="code"`` is the authors' code, which treats cutout
as spatial: Crop only is crop + erasing, All w/o crop is flip, jitter, grayscale and blur
(no erasing). In ``"all"`` the code also draws the order of the six transforms at random once
per run; here the order is always the one listed above.

:func:`regime_transforms` returns the regime as a list of ``torchvision.transforms.v2``
transforms: the specification, and a per-image reference. :func:`augment_batch` applies such a
list to a whole batch (n, 3, H, W) of float images in [0, 1] on any device, with independent
random parameters per image (a v2 transform applied to a batched tensor draws *one* set of
parameters for the whole batch, which is not SimCLR). Each batched kernel reproduces the
matching ``torchvision.transforms.v2.functional`` kernel for given parameters (tested), and
its parameters are drawn from the same laws as the v2 transform's.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torchvision.transforms import v2

from cldiv.images import REGIMES

__all__ = ["REGIMES", "REGIME_VARIANTS", "REGIME_LABELS", "augment_batch", "regime_transforms"]

REGIME_VARIANTS = ("paper", "code")
REGIME_LABELS = {"all": "All", "crop": "Crop only", "no_crop": "All w/o crop"}

_GRAY = (0.2989, 0.587, 0.114)  # torchvision's rgb_to_grayscale weights


def _all_transforms(size: int) -> dict[str, v2.Transform]:
    return {
        "crop": v2.RandomResizedCrop(size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), antialias=True),
        "flip": v2.RandomHorizontalFlip(p=0.5),
        "jitter": v2.RandomApply([v2.ColorJitter(0.8, 0.8, 0.8, 0.2)], p=0.8),
        "gray": v2.RandomGrayscale(p=0.2),
        "blur": v2.GaussianBlur(kernel_size=3, sigma=(0.1, 2.0)),
        "erase": v2.RandomErasing(p=1.0, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0),
    }


_REGIME_NAMES = {
    "paper": {"all": ("crop", "flip", "jitter", "gray", "blur", "erase"),
              "crop": ("crop",),
              "no_crop": ("flip", "jitter", "gray", "blur", "erase")},
    "code": {"all": ("crop", "flip", "jitter", "gray", "blur", "erase"),
             "crop": ("crop", "erase"),
             "no_crop": ("flip", "jitter", "gray", "blur")},
}


def regime_transforms(regime: str, variant: str = "paper", size: int = 32) -> list[v2.Transform]:
    """The v2 transforms of ``regime`` ("all", "crop", "no_crop") in the order applied."""
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}; got {regime!r}")
    if variant not in REGIME_VARIANTS:
        raise ValueError(f"variant must be one of {REGIME_VARIANTS}; got {variant!r}")
    table = _all_transforms(size)
    return [table[name] for name in _REGIME_NAMES[variant][regime]]


# --- batched kernels: per-image parameters, the v2 functional semantics --------------------


def _uniform(n: int, low: float, high: float, rng: torch.Generator) -> torch.Tensor:
    return low + (high - low) * torch.rand(n, generator=rng)


def _per_image(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return t.to(device=x.device, dtype=x.dtype).view(-1, *([1] * (x.dim() - 1)))


def grayscale(x: torch.Tensor) -> torch.Tensor:
    """(n, 3, H, W) -> (n, 1, H, W) luminance with torchvision's weights."""
    w = torch.tensor(_GRAY, device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
    return (x * w).sum(1, keepdim=True)


def adjust_brightness(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    return (x * _per_image(factor, x)).clamp(0, 1)


def adjust_contrast(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    mean = grayscale(x).mean(dim=(1, 2, 3), keepdim=True)
    f = _per_image(factor, x)
    return (f * x + (1 - f) * mean).clamp(0, 1)


def adjust_saturation(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    f = _per_image(factor, x)
    return (f * x + (1 - f) * grayscale(x)).clamp(0, 1)


def adjust_hue(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """Rotate the HSV hue of each image by its factor (in turns, |factor| <= 0.5)."""
    r, g, b = x.unbind(1)
    maxc, _ = x.max(1)
    minc, _ = x.min(1)
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    cr_div = torch.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_div, (maxc - g) / cr_div, (maxc - b) / cr_div
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    h = torch.remainder(h + _per_image(factor, h), 1.0)
    # HSV -> RGB
    i = torch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(torch.int64) % 6
    v = maxc
    p = (v * (1.0 - s)).clamp(0, 1)
    q = (v * (1.0 - s * f)).clamp(0, 1)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0, 1)
    mask = i.unsqueeze(1) == torch.arange(6, device=x.device).view(1, -1, 1, 1)  # (n, 6, H, W)
    a1 = torch.stack((v, q, p, p, t, v), dim=1)
    a2 = torch.stack((t, v, v, q, p, p), dim=1)
    a3 = torch.stack((p, p, t, v, v, q), dim=1)
    return torch.stack([(mask * a).sum(1) for a in (a1, a2, a3)], dim=1).to(x.dtype)


def resized_crop(x: torch.Tensor, top: torch.Tensor, left: torch.Tensor, height: torch.Tensor,
                 width: torch.Tensor, size: int) -> torch.Tensor:
    """Crop box (top, left, height, width) of each image, resized bilinearly to size x size.

    Output pixel u of the box of width w samples input column left + (u + 1/2) w / size - 1/2,
    clamped to the box (half-pixel centres and edge clamping, as ``F.resized_crop``; boxes here are never larger than the image, so
    the resize never downsamples and antialiasing has no effect).
    """
    n, _, H, W = x.shape
    u = (torch.arange(size, device=x.device, dtype=x.dtype) + 0.5) / size  # (size,)
    def axis(start, length, full):
        start, length = start.to(x.device, x.dtype)[:, None], length.to(x.device, x.dtype)[:, None]
        src = (start + u * length - 0.5).clamp(min=start, max=start + length - 1)  # pixel index
        return (2 * src + 1) / full - 1  # normalised coordinates, align_corners=False
    gx = axis(left, width, W)[:, None, :].expand(n, size, size)
    gy = axis(top, height, H)[:, :, None].expand(n, size, size)
    grid = torch.stack((gx, gy), dim=-1)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def gaussian_blur(x: torch.Tensor, kernel_size: int, sigma: torch.Tensor) -> torch.Tensor:
    """Separable Gaussian blur with one sigma per image, reflect padding (as ``F.gaussian_blur``)."""
    n, c, H, W = x.shape
    half = (kernel_size - 1) * 0.5
    t = torch.linspace(-half, half, kernel_size, device=x.device, dtype=x.dtype)
    k = torch.exp(-0.5 * (t[None] / sigma.to(x.device, x.dtype)[:, None]) ** 2)
    k = (k / k.sum(1, keepdim=True)).repeat_interleave(c, 0)  # (n c, k)
    pad = kernel_size // 2
    y = F.pad(x.reshape(1, n * c, H, W), (pad, pad, pad, pad), mode="reflect")
    y = F.conv2d(y, k[:, None, None, :], groups=n * c)
    y = F.conv2d(y, k[:, None, :, None], groups=n * c)
    return y.reshape(n, c, H, W)


def erase(x: torch.Tensor, top: torch.Tensor, left: torch.Tensor, height: torch.Tensor,
          width: torch.Tensor, value: float) -> torch.Tensor:
    """Set the box (top, left, height, width) of each image to ``value`` (height 0: unchanged)."""
    n, _, H, W = x.shape
    rows = torch.arange(H, device=x.device)[None, :, None]
    cols = torch.arange(W, device=x.device)[None, None, :]
    t, l, h, w = (v.to(x.device)[:, None, None] for v in (top, left, height, width))
    inside = (rows >= t) & (rows < t + h) & (cols >= l) & (cols < l + w)
    return x.masked_fill(inside[:, None], value)


def _first_valid(ok: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row of (n, attempts) booleans: whether any is True and the index of the first."""
    found = ok.any(1)
    return found, ok.to(torch.int64).argmax(1)


def _candidate_sides(n: int, H: int, W: int, scale, ratio, rng: torch.Generator):
    """10 candidate boxes per image, as torchvision draws them: area fraction uniform in ``scale``,
    log aspect ratio uniform in log ``ratio``. Returns the (n, 10) rounded sides
    sqrt(area * aspect) and sqrt(area / aspect)."""
    target = H * W * _uniform(n * 10, *scale, rng).view(n, 10)
    aspect = torch.exp(_uniform(n * 10, math.log(ratio[0]), math.log(ratio[1]), rng)).view(n, 10)
    return torch.sqrt(target * aspect).round(), torch.sqrt(target / aspect).round()


def _sample_crop_boxes(n: int, H: int, W: int, scale, ratio, rng: torch.Generator):
    """RandomResizedCrop's box law (10 attempts, then a central fallback), per image."""
    w, h = _candidate_sides(n, H, W, scale, ratio, rng)
    found, k = _first_valid((w > 0) & (w <= W) & (h > 0) & (h <= H))
    w = w.gather(1, k[:, None]).squeeze(1).long()
    h = h.gather(1, k[:, None]).squeeze(1).long()
    in_ratio = W / H
    if in_ratio < min(ratio):
        fw, fh = W, int(round(W / min(ratio)))
    elif in_ratio > max(ratio):
        fw, fh = int(round(H * max(ratio))), H
    else:
        fw, fh = W, H
    w = torch.where(found, w, fw)
    h = torch.where(found, h, fh)
    top = (torch.rand(n, generator=rng) * (H - h + 1)).floor().long()
    left = (torch.rand(n, generator=rng) * (W - w + 1)).floor().long()
    top = torch.where(found, top, (H - h) // 2)
    left = torch.where(found, left, (W - w) // 2)
    return top, left, h, w


def _sample_erase_boxes(n: int, H: int, W: int, scale, ratio, rng: torch.Generator):
    """RandomErasing's box law (10 attempts; none valid: nothing erased), per image."""
    h, w = _candidate_sides(n, H, W, scale, ratio, rng)
    found, k = _first_valid((h < H) & (w < W))
    h = torch.where(found, h.gather(1, k[:, None]).squeeze(1), 0).long()
    w = torch.where(found, w.gather(1, k[:, None]).squeeze(1), 0).long()
    top = (torch.rand(n, generator=rng) * (H - h + 1)).floor().long()
    left = (torch.rand(n, generator=rng) * (W - w + 1)).floor().long()
    return top, left, h, w


def _where_apply(mask: torch.Tensor, x: torch.Tensor, fn) -> torch.Tensor:
    idx = mask.nonzero().squeeze(1).to(x.device)
    if idx.numel() == 0:
        return x
    out = x.clone()
    out[idx] = fn(x[idx], idx.cpu())
    return out


def _color_jitter(x: torch.Tensor, jitter: v2.ColorJitter, rng: torch.Generator) -> torch.Tensor:
    n = x.shape[0]
    factors = [
        None if rng_range is None else _uniform(n, float(rng_range[0]), float(rng_range[1]), rng)
        for rng_range in (jitter.brightness, jitter.contrast, jitter.saturation, jitter.hue)
    ]
    kernels = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
    order = torch.rand(n, 4, generator=rng).argsort(1)  # a random permutation per image
    for step in range(4):
        for fn_id in range(4):
            if factors[fn_id] is None:
                continue
            mask = order[:, step] == fn_id
            x = _where_apply(mask, x, lambda xs, idx, f=factors[fn_id], k=kernels[fn_id]: k(xs, f[idx]))
    return x


def augment_batch(x: torch.Tensor, transforms: list[v2.Transform], rng: torch.Generator) -> torch.Tensor:
    """Apply ``transforms`` (from :func:`regime_transforms`) to each image of ``x`` independently.

    x: (n, 3, H, W) float in [0, 1] on any device; parameters are drawn on the CPU from ``rng``
    (so a run is deterministic for a seed on every device), the pixels are computed on x's device.
    """
    if x.dim() != 4 or x.shape[1] != 3:
        raise ValueError(f"x must have shape (n, 3, H, W); got {tuple(x.shape)}")
    n, _, H, W = x.shape
    for t in transforms:
        if isinstance(t, v2.RandomResizedCrop):
            box = _sample_crop_boxes(n, H, W, t.scale, t.ratio, rng)
            x = resized_crop(x, *box, size=t.size[0])
        elif isinstance(t, v2.RandomHorizontalFlip):
            x = torch.where(_per_image(torch.rand(n, generator=rng) < t.p, x).bool(), x.flip(-1), x)
        elif isinstance(t, v2.RandomApply) and len(t.transforms) == 1 and isinstance(t.transforms[0], v2.ColorJitter):
            mask = torch.rand(n, generator=rng) < t.p
            x = _where_apply(mask, x, lambda xs, idx: _color_jitter(xs, t.transforms[0], rng))
        elif isinstance(t, v2.RandomGrayscale):
            mask = _per_image(torch.rand(n, generator=rng) < t.p, x).bool()
            x = torch.where(mask, grayscale(x).expand_as(x), x)
        elif isinstance(t, v2.GaussianBlur):
            x = gaussian_blur(x, t.kernel_size[0], _uniform(n, t.sigma[0], t.sigma[1], rng))
        elif isinstance(t, v2.RandomErasing):
            mask = torch.rand(n, generator=rng) < t.p
            top, left, h, w = _sample_erase_boxes(n, H, W, t.scale, t.ratio, rng)
            h = torch.where(mask, h, 0)
            x = erase(x, top, left, h, w, float(t.value[0] if isinstance(t.value, (list, tuple)) else t.value))
        else:
            raise ValueError(f"transforms may only contain the regime transforms of regime_transforms(); got {t!r}")
    return x
