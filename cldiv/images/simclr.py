"""SimCLR on images (paper Section 5, Figure 3): config, NT-Xent, training, evaluation.

The image experiment asks whether the paper's synthetic findings carry over: augmentations
are the positive conditional P(x~ | x), so restricting them (Crop only, All w/o crop) restricts
the support of the positives -- diversity (Definition 3.1) is violated more -- and encoders of
more inductive bias (ResNet-18 > ViT > MLP) should lose less. Protocol (the paper; where the authors' code differs,
the cifar10 chapter says so): randomly initialised encoder with 512-d normalised output, no projection
head; each batch of B images gives two views; NT-Xent (:func:`nt_xent`) with tau = 0.5 over
the 2B x 2B similarity matrix; Adam (lr 3e-4, weight decay 1e-4, no schedule), batch 2000,
200 epochs; then a linear probe on frozen features (``cldiv.images.probe``).

Views: ``views="one_augmented"`` is the authors' protocol, view 1 the un-augmented image and
view 2 its augmentation; ``"two_augmented"`` is standard SimCLR (both views augmented
independently). Both views go through the encoder as one batch of 2B images.

Evaluation: the encoder's features of the (un-augmented) training and test images, computed
with the encoder in eval mode (``probe_mode="eval"``); ``"train"`` reproduces the authors'
code, which left the encoder in train mode (BatchNorm on batch statistics, dropout active).
On the generated image set (``cldiv.images.data``) the per-factor latent R^2 is measured as well,
and both are also measured at initialisation, the baseline that training has to beat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from tqdm import tqdm

from cldiv import budgets
from cldiv.images import DATASETS, HEADLINE_DATASET, IMAGE_ENCODERS, REGIMES
from cldiv.images.augment import REGIME_VARIANTS, augment_batch, regime_transforms
from cldiv.config import added_field, check_choice, check_positive, check_range
from cldiv.images.encoders import STEMS, make_image_encoder, parameter_count
from cldiv.images.data import load_images
from cldiv.images.probe import latent_r2, linear_probe
from cldiv.runs.states import Checkpoints, continued_from, latest_state, machines_so_far, save_state

__all__ = ["BUDGET_CHOICES", "SimCLRConfig", "budget_choice_configs", "build_encoder", "nt_xent", "run_simclr", "simclr_configs", "train_simclr"]

VIEWS = ("one_augmented", "two_augmented")
PROBE_MODES = ("eval", "train")


@dataclass(frozen=True)
class SimCLRConfig:
    """One SimCLR run and its linear evaluation (Section 5). Defaults are the paper's protocol.

    width, depth: encoder size (see ``cldiv.images.encoders.make_image_encoder``; the paper's
    sizes are ``cldiv.budgets.PAPER_IMAGE_SIZES``); resnet_stem: the ResNet's stem ("imagenet", the
    authors' torchvision ResNet-18, or "cifar"). n_train / n_test: images used (None: the whole split,
    50,000 / 10,000). data_seed fixes the subset (CIFAR-10) or the generated images (shapes);
    seed fixes the initialisation, the batches and the augmentations.
    """

    kind: ClassVar[str] = "simclr"

    dataset: str = "cifar10"
    encoder: str = "resnet18"
    width: int = 64
    depth: int = 2
    resnet_stem: str = added_field("imagenet")
    out_dim: int = 512
    regime: str = "all"
    regime_variant: str = "paper"
    views: str = "one_augmented"
    tau: float = 0.5
    lr: float = 3e-4
    weight_decay: float = 1e-4
    batch_size: int = 2000
    epochs: int = 200
    n_train: int | None = None
    n_test: int | None = None
    probe_epochs: int = 100
    probe_lr: float = 0.1
    probe_batch_size: int = 256
    probe_mode: str = "eval"
    probe_standardize: bool = False
    data_seed: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice("dataset", self.dataset, DATASETS)
        check_choice("encoder", self.encoder, IMAGE_ENCODERS)
        check_choice("resnet_stem", self.resnet_stem, STEMS)
        check_choice("regime", self.regime, REGIMES)
        check_choice("regime_variant", self.regime_variant, REGIME_VARIANTS)
        check_choice("views", self.views, VIEWS)
        check_choice("probe_mode", self.probe_mode, PROBE_MODES)
        if not isinstance(self.probe_standardize, bool):
            raise ValueError(f"probe_standardize must be True or False; got {self.probe_standardize!r}")
        for name in ("width", "depth", "out_dim", "batch_size", "epochs", "probe_epochs", "probe_batch_size"):
            check_positive(name, getattr(self, name), integer=True)
        if self.batch_size < 2:
            raise ValueError(f"batch_size must be >= 2 (NT-Xent needs negatives); got {self.batch_size}")
        for name in ("n_train", "n_test"):
            if getattr(self, name) is not None:
                check_positive(name, getattr(self, name), integer=True)
        if self.encoder == "vit" and self.width % max(1, self.width // 64):
            raise ValueError(f"width must be a multiple of 64 (or below 64) for the ViT; got {self.width}")
        for name in ("tau", "lr", "probe_lr"):
            check_positive(name, getattr(self, name))
        check_range("weight_decay", self.weight_decay, 0.0, 1.0)
        check_range("data_seed", self.data_seed, 0, 2**62, integer=True)
        check_range("seed", self.seed, 0, 2**62, integer=True)


def simclr_configs(
    budget: str, *, dataset: str = HEADLINE_DATASET, encoders=IMAGE_ENCODERS, regimes=REGIMES,
    seeds=(0,), **overrides: Any,
) -> list[SimCLRConfig]:
    """The grid encoder x regime x seed of a named budget; ``overrides`` (e.g. epochs=5) win,
    and None-valued overrides are ignored (so a chapter can pass 'use the budget's value')."""
    extra = {k: v for k, v in overrides.items() if v is not None}
    known = set(SimCLRConfig.__dataclass_fields__)
    unknown = sorted(set(extra) - known)
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown}; allowed: {sorted(known)}")
    if isinstance(encoders, str) or isinstance(regimes, str):
        raise ValueError("encoders and regimes must be lists of names, e.g. ['resnet18', 'mlp']")
    for e in encoders:
        check_choice("encoder", e, IMAGE_ENCODERS)
    spec = budgets.budget("simclr", budget)
    return [
        SimCLRConfig(**{"dataset": dataset, "encoder": e, "regime": r, "seed": s, **spec.fields(e), **extra})
        for e in encoders for r in regimes for s in seeds
    ]


#: The choices behind the cpu budget, each undone in one run of an encoder's All cell (seed 0):
#: (encoder, what the run changes, config overrides, or a function of the budget's config giving them).
BUDGET_CHOICES = (
    ("resnet18", "hues over 0.8 of the colour circle, grey levels in [0, 0.6] (shapes)", {"dataset": "shapes"}),
    ("resnet18", "background grey levels in [0, 0.6] (shapes_narrow_hue)", {"dataset": "shapes_narrow_hue"}),
    ("resnet18", "the ImageNet stem of the authors' ResNet-18", {"resnet_stem": "imagenet"}),
    ("resnet18", "the paper's learning rate, 3e-4", {"lr": 3e-4}),
    ("vit", "the ResNet's learning rate, 2e-3", {"lr": 2e-3}),
    ("vit", "twice the width and the layers (towards the paper's 384 x 6)",
     lambda base: {"width": 2 * base.width, "depth": 2 * base.depth}),
    ("mlp", "the ResNet's learning rate, 2e-3", {"lr": 2e-3}),
    ("mlp", "both views augmented (standard SimCLR)", {"views": "two_augmented"}),
    *((e, "half the epochs (an earlier cpu budget)", lambda base: {"epochs": base.epochs // 2})
      for e in ("resnet18", "vit", "mlp")),
)


def budget_choice_configs(budget: str = "cpu", dataset: str = HEADLINE_DATASET) -> list[tuple[str, str, SimCLRConfig]]:
    """(encoder, label, config): per encoder of BUDGET_CHOICES its All cell at seed 0 ("the
    budget"), then one run per choice that the budget's own settings do not already make (a
    budget with the ImageNet stem has no stem row)."""
    rows = []
    for encoder in dict.fromkeys(e for e, _, _ in BUDGET_CHOICES):
        (base,) = simclr_configs(budget, dataset=dataset, encoders=[encoder], regimes=["all"], seeds=[0])
        variants = [(label, replace(base, **(changes(base) if callable(changes) else changes)))
                    for e, label, changes in BUDGET_CHOICES if e == encoder]
        rows += [(encoder, "the budget", base)] + [(encoder, label, c) for label, c in variants if c != base]
    return rows


def build_encoder(config: SimCLRConfig) -> torch.nn.Module:
    """The config's encoder, freshly initialised from torch's global generator."""
    return make_image_encoder(config.encoder, config.width, config.depth, config.out_dim, config.resnet_stem)


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, tau: float) -> torch.Tensor:
    """NT-Xent (SimCLR's InfoNCE) over the 2B x 2B similarity matrix.

    With z = (z1; z2) the 2B unit-norm embeddings and s_ij = z_i·z_j / tau, each of the 2B
    embeddings is an anchor whose positive is its partner view p(i) (i +- B) and whose 2B - 2
    negatives are all the other embeddings:

        loss = 1/(2B) sum_i -log( e^{s_i,p(i)} / sum_{k != i} e^{s_ik} ),

    the InfoNCE loss of the paper (Section 1) with the positive in the denominator and M = 2B - 2
    negatives drawn from the batch. z1, z2: (B, d) unit vectors, row b of each from image b.
    """
    if z1.shape != z2.shape or z1.dim() != 2:
        raise ValueError(f"z1 and z2 must both have shape (B, d); got {tuple(z1.shape)} and {tuple(z2.shape)}")
    if not tau > 0:
        raise ValueError(f"tau must be > 0; got {tau!r}")
    b = z1.shape[0]
    z = torch.cat([z1, z2])
    sim = (z @ z.T / tau).float()
    sim = sim.masked_fill(torch.eye(2 * b, dtype=torch.bool, device=z.device), float("-inf"))
    targets = torch.cat([torch.arange(b, 2 * b), torch.arange(b)]).to(z.device)
    return F.cross_entropy(sim, targets)


def _features(encoder: torch.nn.Module, images, device, train_mode: bool, batch: int = 1000) -> torch.Tensor:
    encoder.train(train_mode)
    out = []
    with torch.no_grad():
        for start in range(0, len(images), batch):
            x = images.float_images(slice(start, start + batch), device)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=x.is_cuda):
                out.append(encoder(x).float())
    return torch.cat(out)


def _evaluate(config: SimCLRConfig, encoder, train, test, device) -> dict[str, Any]:
    """Probe accuracy (best and final epoch, curve) and per-latent R^2 of the current encoder."""
    train_mode = config.probe_mode == "train"
    f_train = _features(encoder, train, device, train_mode)
    f_test = _features(encoder, test, device, train_mode)
    probe = linear_probe(f_train, train.labels.to(device), f_test, test.labels.to(device),
                         n_classes=len(train.class_names), epochs=config.probe_epochs,
                         lr=config.probe_lr, batch_size=config.probe_batch_size, seed=config.seed,
                         standardize=config.probe_standardize)
    out: dict[str, Any] = {"probe_best": probe.best, "probe_best_epoch": probe.best_epoch,
                           "probe_final": probe.final, "probe_curve": probe.curve}
    if train.latents is not None:
        r2 = latent_r2(f_train.cpu(), train.latents, f_test.cpu(), test.latents, train.latent_names)
        out["latent_r2"] = r2
    return out


def train_simclr(config: SimCLRConfig, train, device: str | torch.device, *, progress: bool = False):
    """Train an encoder with SimCLR on ``train`` (an ``ImageDataset``); returns (encoder, losses, timing).

    losses: the mean NT-Xent of each epoch; timing: ``train_seconds`` (a continued run's included).
    Deterministic for ``config.seed`` on a given device and thread count. With ``$CLDIV_STATES`` set,
    the run continues a saved shorter run (``timing.continued_from``) and keeps its own final state
    (``cldiv.runs.states``).
    """
    torch.manual_seed(config.seed)  # the encoder's initialisation; then dropout
    encoder = build_encoder(config).to(device)
    rng = torch.Generator().manual_seed(config.seed + 1)  # batches and augmentations
    transforms = regime_transforms(config.regime, config.regime_variant)
    optimiser = torch.optim.Adam(encoder.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    n = len(train)
    losses, first, earlier_seconds, timing = [], 0, 0.0, {}
    saved = latest_state(config, "epochs")
    if saved is not None:
        encoder.load_state_dict(saved["model"])
        optimiser.load_state_dict(saved["optimizer"])
        rng.set_state(saved["data"])
        torch.set_rng_state(saved["global"])
        losses, first, earlier_seconds = saved["losses"], saved["config"]["epochs"], saved["train_seconds"]
        timing["continued_from"] = continued_from(saved, "epochs")
    machines = machines_so_far(saved, device)
    start = time.perf_counter()

    def state() -> dict[str, Any]:
        return {"model": encoder.state_dict(), "optimizer": optimiser.state_dict(), "data": rng.get_state(),
                "global": torch.get_rng_state(), "losses": losses, "machines": machines,
                "train_seconds": earlier_seconds + time.perf_counter() - start}

    checkpoints = Checkpoints(config, "epochs")
    bar = tqdm(range(first, config.epochs), disable=None if progress else True, desc="SimCLR epochs", leave=False)
    for epoch in bar:
        encoder.train()
        order = torch.randperm(n, generator=rng)
        total, count = 0.0, 0
        for begin in range(0, n, config.batch_size):
            idx = order[begin:begin + config.batch_size]
            if len(idx) < 2:
                continue
            x = train.float_images(idx, device)
            view1 = x if config.views == "one_augmented" else augment_batch(x, transforms, rng)
            view2 = augment_batch(x, transforms, rng)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=x.is_cuda):
                z = encoder(torch.cat([view1, view2]))
            loss = nt_xent(z[: len(idx)], z[len(idx):], config.tau)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total, count = total + loss.item() * len(idx), count + len(idx)
        losses.append(total / count)
        bar.set_postfix(nt_xent=f"{losses[-1]:.4f}")
        checkpoints.offer(epoch + 1, state)
    final = state()
    seconds = final["train_seconds"]
    save_state(config, "epochs", final)
    checkpoints.close(saved)
    return encoder, losses, {"train_seconds": round(seconds, 3), **timing}


def run_simclr(
    config: SimCLRConfig, *, data_root: str | Path = "~/.cache/cldiv/data", download: bool = False,
    device: str | None = None, progress: bool = False,
) -> tuple[dict, str]:
    """Train and evaluate one config; returns (result for the store, device name).

    The result holds ``metrics`` (probe accuracy best/final, latent R^2 per factor and its mean,
    the same at initialisation, the final NT-Xent, the parameter count, throughput) and
    ``curve`` (NT-Xent per epoch, probe test accuracy per probe epoch, after training and at
    initialisation).
    """
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    train = load_images(config.dataset, "train", config.n_train, seed=config.data_seed,
                        data_root=data_root, download=download)
    test = load_images(config.dataset, "test", config.n_test, seed=config.data_seed,
                       data_root=data_root, download=download)
    torch.manual_seed(config.seed)
    init_encoder = build_encoder(config).to(device)
    init = _evaluate(config, init_encoder, train, test, device)
    encoder, losses, timing = train_simclr(config, train, device, progress=progress)
    final = _evaluate(config, encoder, train, test, device)
    metrics: dict[str, Any] = {
        "probe_best": final["probe_best"], "probe_final": final["probe_final"],
        "probe_best_epoch": final["probe_best_epoch"],
        "init_probe_best": init["probe_best"], "init_probe_final": init["probe_final"],
        "final_loss": losses[-1], "parameters": parameter_count(encoder),
        "train_images_per_s": len(train) * config.epochs / timing["train_seconds"],
    }
    if "latent_r2" in final:
        metrics["latent_r2"] = final["latent_r2"]
        metrics["latent_r2_mean"] = sum(final["latent_r2"].values()) / len(final["latent_r2"])
        metrics["init_latent_r2"] = init["latent_r2"]
        metrics["init_latent_r2_mean"] = sum(init["latent_r2"].values()) / len(init["latent_r2"])
    curve = {"epoch": list(range(1, config.epochs + 1)), "loss": losses,
             "probe_epoch": list(range(1, config.probe_epochs + 1)),
             "probe_test_accuracy": final["probe_curve"], "init_probe_test_accuracy": init["probe_curve"]}
    return {"metrics": metrics, "curve": curve, "timing": timing}, str(device)
