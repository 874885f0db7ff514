"""Linear evaluation of frozen features (paper Section 5, Figure 3): the linear probe and,
where the latents are known, per-factor latent recovery.

The probe is multinomial logistic regression on the frozen features, trained by SGD (the
paper's protocol: lr 0.1, momentum 0.9, 100 epochs, batch 256), evaluated on the test split
after every epoch. The paper reports the *best* test accuracy over probe epochs (model
selection on the test set, which is optimistic); this module returns the final-epoch accuracy as
well, and the whole curve.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

__all__ = ["ProbeResult", "latent_r2", "linear_probe"]


@dataclass(frozen=True)
class ProbeResult:
    """Test accuracy after each probe epoch (``curve``), its maximum and its last value."""

    curve: list[float]
    best: float
    best_epoch: int
    final: float


def linear_probe(
    train_features: torch.Tensor, train_labels: torch.Tensor,
    test_features: torch.Tensor, test_labels: torch.Tensor,
    *, n_classes: int, epochs: int = 100, lr: float = 0.1, momentum: float = 0.9,
    batch_size: int = 256, seed: int = 0, standardize: bool = False,
) -> ProbeResult:
    """Train a linear classifier W f + b on frozen features by SGD with cross-entropy.

    train_features: (n, d); train_labels: (n,) in [0, n_classes); test_*: likewise.
    Epoch e (1-based) of ``curve`` is the test accuracy after e passes over the shuffled
    training features. Deterministic for ``seed`` on a given device.
    """
    if epochs < 1 or batch_size < 1:
        raise ValueError(f"epochs and batch_size must be positive integers; got {epochs}, {batch_size}")
    if standardize:
        mean, std = train_features.mean(0), train_features.std(0).clamp(min=1e-8)
        train_features, test_features = (train_features - mean) / std, (test_features - mean) / std
    device = train_features.device
    rng = torch.Generator().manual_seed(seed)
    probe = torch.nn.Linear(train_features.shape[1], n_classes).to(device)
    with torch.no_grad():  # seeded initialisation (PyTorch's default law)
        bound = 1 / train_features.shape[1] ** 0.5
        probe.weight.copy_((torch.rand(probe.weight.shape, generator=rng) * 2 - 1) * bound)
        probe.bias.copy_((torch.rand(probe.bias.shape, generator=rng) * 2 - 1) * bound)
    optimiser = torch.optim.SGD(probe.parameters(), lr=lr, momentum=momentum)
    n = train_features.shape[0]
    curve = []
    for _ in range(epochs):
        order = torch.randperm(n, generator=rng).to(device)
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            loss = F.cross_entropy(probe(train_features[idx]), train_labels[idx])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        with torch.no_grad():
            curve.append(float((probe(test_features).argmax(1) == test_labels).float().mean()))
    best_epoch = max(range(epochs), key=lambda e: curve[e])
    return ProbeResult(curve, curve[best_epoch], best_epoch + 1, curve[-1])


def latent_r2(
    train_features: torch.Tensor, train_latents: torch.Tensor,
    test_features: torch.Tensor, test_latents: torch.Tensor, names: tuple[str, ...],
) -> dict[str, float]:
    """Held-out affine R^2 from features to each latent factor separately (Appendix D).

    For factor j, an affine regression c_j ≈ w·f + b is fitted on the training features and
    scored on the test features, so R^2 is 1 when the factor is a linear function of the
    representation and about 0 (or below, held out) when the representation discards it.
    Least squares decouples over outputs, so one multi-output fit gives, column by column,
    exactly ``cldiv.metrics.affine_r2(train_features, train_latents[:, [j]], test_features=...,
    test_latents=test_latents[:, [j]])`` (tested) at a sixth of the cost.
    """
    if train_latents.shape[1] != len(names):
        raise ValueError(f"names must name the {train_latents.shape[1]} latent columns; got {names}")
    x, y = train_features.double().cpu().numpy(), train_latents.double().cpu().numpy()
    regression = LinearRegression().fit(x, y)
    scores = r2_score(test_latents.double().cpu().numpy(),
                      regression.predict(test_features.double().cpu().numpy()), multioutput="raw_values")
    return {name: float(score) for name, score in zip(names, scores)}
