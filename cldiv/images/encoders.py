"""The three image encoders of the SimCLR experiment (paper Section 5, Figure 3).

Each maps (n, 3, 32, 32) images to (n, out_dim) unit vectors f(x) = e(x) / ||e(x)||, the
L2-normalised output the paper's setting assumes (Section 1). They span the paper's axis of
inductive bias:

- :class:`ResNetEncoder` ("high"): a ResNet with BasicBlocks. At ``width=64,
  blocks=(2, 2, 2, 2), stem="imagenet"`` it is torchvision's ResNet-18 with its ImageNet stem
  (7x7 convolution, stride 2, then 3x3 max-pool) and the fc layer removed -- the authors'
  encoder, 11.2M parameters, 512 features. Other widths end in a Linear to ``out_dim``.
- :class:`ViTEncoder` ("medium"): a pre-norm Vision Transformer on 4x4 patches with a class
  token and learned position embeddings; the paper's size is width 384, 6 layers, 6 heads,
  MLP 1536, head Linear(384 -> 512) (10.7M parameters).
- :class:`MLPEncoder` ("low"): the flattened image through ``depth`` hidden layers
  Linear -> BatchNorm -> GELU -> Dropout(0.1), then Linear to ``out_dim``; the paper's size is
  3072 -> 2048 x 3 -> 512 (15.7M parameters).

Width and depth are parameters so CPU runs can shrink them (:func:`make_image_encoder`).
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from cldiv.images import IMAGE_ENCODERS

__all__ = ["IMAGE_ENCODERS", "ENCODER_LABELS", "MLPEncoder", "ResNetEncoder", "ViTEncoder",
           "make_image_encoder", "parameter_count"]

ENCODER_LABELS = {"resnet18": "ResNet-18", "vit": "ViT", "mlp": "MLP"}
STEMS = ("imagenet", "cifar")


class _BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout else nn.Identity()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNetEncoder(nn.Module):
    """ResNet with BasicBlocks; stages of width w, 2w, 4w, 8w; global average pool; normalise."""

    def __init__(self, width: int = 64, blocks: tuple[int, ...] = (2, 2, 2, 2),
                 stem: str = "imagenet", out_dim: int = 512):
        super().__init__()
        if stem not in STEMS:
            raise ValueError(f"stem must be one of {STEMS}; got {stem!r}")
        if stem == "imagenet":
            self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width),
                                      nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        else:  # the usual CIFAR stem: 3x3 convolution, no pooling
            self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width),
                                      nn.ReLU(inplace=True))
        layers, cin = [], width
        for stage, n_blocks in enumerate(blocks):
            cout = width * 2**stage
            for b in range(n_blocks):
                layers.append(_BasicBlock(cin, cout, 2 if (b == 0 and stage > 0) else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.head = nn.Identity() if cin == out_dim else nn.Linear(cin, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.layers(self.stem(x)).mean(dim=(2, 3))
        return F.normalize(self.head(h), dim=1)


class ViTEncoder(nn.Module):
    """Vision Transformer: 4x4 patches -> tokens, class token, pre-norm blocks, Linear head, normalise."""

    def __init__(self, width: int = 384, depth: int = 6, heads: int = 6, mlp_dim: int = 1536,
                 patch: int = 4, image_size: int = 32, out_dim: int = 512):
        super().__init__()
        if width % heads:
            raise ValueError(f"width must be divisible by heads; got width={width}, heads={heads}")
        if image_size % patch:
            raise ValueError(f"image_size must be divisible by patch; got {image_size} and {patch}")
        self.patch_embed = nn.Conv2d(3, width, patch, patch)
        n_tokens = (image_size // patch) ** 2 + 1
        self.cls_token = nn.Parameter(torch.zeros(1, 1, width))
        self.pos_embed = nn.Parameter(torch.randn(1, n_tokens, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, heads, mlp_dim, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2)  # (n, patches, width)
        tokens = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), tokens], dim=1) + self.pos_embed
        h = self.norm(self.blocks(tokens))[:, 0]
        return F.normalize(self.head(h), dim=1)


class MLPEncoder(nn.Module):
    """Flattened pixels -> depth x (Linear, BatchNorm, GELU, Dropout) -> Linear -> normalise."""

    def __init__(self, width: int = 2048, depth: int = 3, in_dim: int = 3 * 32 * 32,
                 out_dim: int = 512, dropout: float = 0.1):
        super().__init__()
        layers, cin = [], in_dim
        for _ in range(depth):
            layers += [nn.Linear(cin, width), nn.BatchNorm1d(width), nn.GELU(), nn.Dropout(dropout)]
            cin = width
        layers.append(nn.Linear(cin, out_dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.net(x.flatten(1)), dim=1)


def make_image_encoder(name: str, width: int, depth: int, out_dim: int = 512, stem: str = "imagenet") -> nn.Module:
    """Encoder ``name`` at a given width and depth.

    resnet18: width = channels of the first stage (64 in the paper), depth = blocks per stage
    (2 in the paper), stem one of STEMS (the authors' "imagenet" stem leaves 8x8 maps of a 32x32
    image; "cifar" keeps 32x32); vit: width = token width (384), depth = layers (6), heads =
    width / 64 (at least 1), MLP 4 x width; mlp: width = hidden units (2048), depth = hidden layers (3).
    ``stem`` is ignored by the ViT and the MLP.
    """
    if name not in IMAGE_ENCODERS:
        raise ValueError(f"encoder must be one of {IMAGE_ENCODERS}; got {name!r}")
    if name == "resnet18":
        return ResNetEncoder(width, (depth,) * 4, stem, out_dim)
    if name == "vit":
        return ViTEncoder(width, depth, max(1, width // 64), 4 * width, 4, 32, out_dim)
    return MLPEncoder(width, depth, 3 * 32 * 32, out_dim)


def parameter_count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
