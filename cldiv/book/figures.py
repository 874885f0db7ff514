"""The chapters' larger figures, one function each, so that a chapter's cell is a single call.

Each function draws from values the chapter has computed (or stored results) and returns the
matplotlib figure; the chapter shows it with its caption. Smaller plots stay in the chapters.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from cldiv.images.augment import REGIME_LABELS, augment_batch, regime_transforms
from cldiv.images.encoders import ENCODER_LABELS
from cldiv.synthetic.cost import encoder_points
from cldiv.synthetic.table1 import COLUMN_TITLES, COLUMNS, column_of
from cldiv.book.plotting import latent_colours, scatter3d, sphere_axes
from cldiv.sphere import restricted_vmf, uniform_sphere, vmf
from cldiv.theory.maps import Map

#: Anchors of the restricted-positives figure: the equator, two mid latitudes, near a pole.
_ANCHORS = torch.tensor([[0.0, 1.0, 0.0], [0.7, 0.0, 0.714], [-0.92, 0.39, 0.0], [0.35, -0.6, -0.72]],
                        dtype=torch.float64)


def restricted_positives(kappa: float, rng: torch.Generator) -> plt.Figure:
    """Positives of four anchors under the vMF, the restricted stated density and the restricted
    sampling rule (d_fixed = 1), and the concentration on K(z) of the two restricted laws."""
    anchors = _ANCHORS / _ANCHORS.norm(dim=1, keepdim=True)
    fig = plt.figure(figsize=(13, 3.6))
    panels = [("vMF: full support", lambda a: vmf(a, kappa, rng)),
              ("restricted, stated density", lambda a: restricted_vmf(a, 1, kappa, rng, exact_density=True)),
              ("restricted, sampling rule", lambda a: restricted_vmf(a, 1, kappa, rng))]
    for i, (title, sampler) in enumerate(panels):
        ax = sphere_axes(fig, (1, 4, i + 1), title)
        scatter3d(ax, uniform_sphere(1500, 3, rng), "0.85", size=1)
        for j, a in enumerate(anchors):
            scatter3d(ax, sampler(a.expand(400, 3)), f"C{j}", size=2)
            scatter3d(ax, a[None], "k", size=25)
    ax = fig.add_subplot(1, 4, 4)
    u = np.linspace(-1, 1, 201)
    ax.plot(u, kappa * (1 - u**2), label=r"stated: $\kappa r^2$")
    ax.plot(u, np.full_like(u, kappa), label=r"sampling rule: $\kappa$")
    ax.set_xlabel(r"height $u = z_1$ of the anchor")
    ax.set_ylabel("von Mises concentration on $K(z)$")
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def _curves(meridians: bool) -> list[np.ndarray]:
    """Circles of constant latitude u, or meridians, on S^2 as (200, 3) arrays in (u, v) order."""
    t = np.linspace(-1, 1, 200) if meridians else np.linspace(0, 2 * np.pi, 200)
    if meridians:
        return [np.stack([t, np.sqrt(1 - t**2) * np.cos(a), np.sqrt(1 - t**2) * np.sin(a)], 1)
                for a in np.linspace(0, 2 * np.pi, 8, endpoint=False)]
    return [np.stack([np.full_like(t, u), np.sqrt(1 - u**2) * np.cos(t), np.sqrt(1 - u**2) * np.sin(t)], 1)
            for u in np.linspace(-0.9, 0.9, 7)]


def draw_fibres(ax, h: Map, *, circles: bool = True) -> None:
    """Draw the images under h of the meridians (orange) and, with ``circles``, the latitude circles (blue)."""
    for curve, colour in [(c, "tab:blue") for c in (_curves(False) if circles else [])] + \
                         [(c, "tab:orange") for c in _curves(True)]:
        p = h(curve)
        ax.plot(p[:, 1], p[:, 2], p[:, 0], color=colour, lw=1)
    ax.view_init(elev=15, azim=-60)


def fibre_maps(maps: Sequence[tuple[str, Map]]) -> plt.Figure:
    """One sphere per (title, map): the images of the latitude circles and the meridians."""
    fig = plt.figure(figsize=(10 * len(maps) / 3, 3.6))
    for i, (title, h) in enumerate(maps):
        draw_fibres(sphere_axes(fig, (1, len(maps), i + 1), title), h)
    fig.tight_layout()
    return fig


def twisted_fibres(twists: Sequence[float], r2: Sequence[float], corrected: Sequence[float],
                   under_diversity: Sequence[float], twist_map: Map, twist: float) -> plt.Figure:
    """Theorem A.5: R^2 of h o m and the change of both losses against the twist, and one twist's meridians."""
    fig = plt.figure(figsize=(12, 3.5))
    ax = fig.add_subplot(1, 3, 1)
    ax.plot(twists, r2, "o-", color="tab:blue", label="$R^2$ of $h\\circ m$")
    ax.axhline(1 / 3, color="0.5", ls="--", lw=1, label="1/3: only $u$ recovered")
    ax.set(xlabel="twist $t$", ylim=(0, 1.05))
    ax.legend(frameon=False)
    ax = fig.add_subplot(1, 3, 2)
    ax.plot(twists, corrected, "o-", color="tab:blue", label="corrected loss")
    ax.plot(twists, under_diversity, "s-", color="tab:red", label="loss under diversity (excess)")
    ax.set(xlabel="twist $t$", ylabel="change of the loss")
    ax.legend(frameon=False)
    draw_fibres(sphere_axes(fig, (1, 3, 3), f"meridians under $m$, t = {twist}"), twist_map, circles=False)
    fig.tight_layout()
    return fig


def excess_over_entropy(lambda_grid, curve, epsilons, excess) -> plt.Figure:
    """Theorem 4.4: the KL excess of h_lambda against lambda, and of smooth perturbations against their size."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    axes[0].plot(lambda_grid, curve, color="tab:blue")
    axes[0].axvline(1.0, color="k", lw=1)
    axes[0].set(xlabel=r"$\lambda$", ylabel="excess over the entropy (KL)", title=r"$h_\lambda$ under diversity")
    eps = np.asarray(epsilons, dtype=float)
    axes[1].loglog(eps, excess, "o-", color="tab:orange", label="smooth perturbation")
    axes[1].loglog(eps, excess[0] * (eps / eps[0]) ** 2, "k--", lw=1, label=r"$\propto \varepsilon^2$")
    axes[1].minorticks_off()
    axes[1].set_xticks(eps, [f"{e:g}" for e in eps])
    axes[1].set(xlabel=r"perturbation size $\varepsilon$", title="random smooth perturbations")
    axes[1].legend(frameon=False)
    fig.tight_layout()
    return fig


def training_curves(records: Sequence[dict], processes: Sequence[str]) -> plt.Figure:
    """Held-out R^2 during training, per process and column of Table 1: mean over seeds, band min to max."""
    fig, axes = plt.subplots(1, len(processes), figsize=(3.0 * len(processes), 2.8), sharey=True, squeeze=False)
    for ax, p in zip(axes[0], processes):
        for j, column in enumerate(COLUMNS):
            runs = [r["curves"] for r in records if r["config"]["process"] == p and column_of(r["config"]) == column]
            if runs:
                it, r2 = np.array(runs[0]["iteration"]), np.array([run["r2"] for run in runs])
                ax.plot(it, r2.mean(0), color=f"C{j}", label=COLUMN_TITLES[column])
                ax.fill_between(it, r2.min(0), r2.max(0), color=f"C{j}", alpha=0.2, linewidth=0)
        ax.set(title=p, xlabel="iteration", ylim=(-0.05, 1.05))
    axes[0][0].set_ylabel("held-out $R^2$")
    axes[0][-1].legend(frameon=False, fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def recovery_maps(records: Sequence[dict], process: str, latents: np.ndarray) -> plt.Figure:
    """The fixed ``latents`` z (left) and, for seed 0 of each column of Table 1 run for ``process``, their
    stored images h(z), coloured by the latent (RGB = (z + 1) / 2)."""
    panels = [(c, r) for c in COLUMNS for r in records
              if r["config"]["process"] == process and column_of(r["config"]) == c and r["config"]["seed"] == 0]
    fig = plt.figure(figsize=(2.8 * (len(panels) + 1), 3.0))
    scatter3d(sphere_axes(fig, (1, len(panels) + 1, 1), "latents z"), latents, latent_colours(latents), size=4)
    for i, (column, record) in enumerate(panels):
        ax = sphere_axes(fig, (1, len(panels) + 1, i + 2), f"{COLUMN_TITLES[column]}\n$R^2$ = {record['metrics']['r2']:.2f}")
        scatter3d(ax, np.array(record["scatter_h"]), latent_colours(latents), size=4)
    fig.tight_layout()
    return fig


def adapted_study_curves(rows: Sequence[tuple[str, object, dict]], processes: Sequence[str]) -> plt.Figure:
    """Held-out R^2 during training of the adapted-budget study's runs (rows: (size label, config,
    record)), one panel per process, one colour per size, one line per seed, against the encoder
    points seen so far (``encoder_points`` times iterations), so that the sizes share an axis."""
    labels = list(dict.fromkeys(label for label, _, _ in rows))
    fig, axes = plt.subplots(1, len(processes), figsize=(4.2 * len(processes), 3.0), sharey=True, squeeze=False)
    for ax, p in zip(axes[0], processes):
        for j, label in enumerate(labels):
            for k, (_, config, record) in enumerate(r for r in rows if r[0] == label and r[1].process == p):
                seen = np.array(record["curves"]["iteration"]) * encoder_points(config)
                ax.plot(seen, record["curves"]["r2"], color=f"C{j}", linewidth=0.9, label=label if k == 0 else None)
        ax.set(title=p, xlabel="encoder points seen", xscale="log", ylim=(-0.05, 1.05))
    axes[0][0].set_ylabel("held-out $R^2$")
    axes[0][-1].legend(frameon=False, fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def augmented_views(images: torch.Tensor, regimes: Sequence[str], rng: torch.Generator, n_views: int = 4) -> plt.Figure:
    """Each image (rows) beside ``n_views`` of its augmentations under every regime (Figure 3's setup)."""
    n = len(images)
    fig, axes = plt.subplots(n, 1 + n_views * len(regimes), figsize=(1.0 * (1 + n_views * len(regimes)), 1.1 * n),
                             squeeze=False)
    for r, regime in enumerate(regimes):
        views = augment_batch(images.repeat_interleave(n_views, 0), regime_transforms(regime), rng)
        for i in range(n):
            for k in range(n_views):
                axes[i, 1 + r * n_views + k].imshow(views[i * n_views + k].permute(1, 2, 0).clamp(0, 1).numpy())
        axes[0, 1 + r * n_views].set_title(REGIME_LABELS[regime], fontsize=9, loc="left")
    for i in range(n):
        axes[i, 0].imshow(images[i].permute(1, 2, 0).numpy())
    axes[0, 0].set_title("image", fontsize=9)
    for ax in axes.flat:
        ax.set_axis_off()
    fig.tight_layout(pad=0.2)
    return fig


def probe_accuracy(accuracy: dict, at_init: dict, published: dict | None, encoders: Sequence[str],
                   regimes: Sequence[str], title: str) -> plt.Figure:
    """Figure 3: bars of the best probe accuracy (%) per encoder and regime, (encoder, regime) ->
    (mean, sd or None); dashes at initialisation; circles for the published means, if given."""
    width = 0.8 / len(regimes)
    fig, ax = plt.subplots(figsize=(1.9 * len(encoders) + 1.5, 3.4))
    for r, regime in enumerate(regimes):
        pos = np.arange(len(encoders)) + (r - (len(regimes) - 1) / 2) * width
        means, sds = zip(*(accuracy[e, regime] for e in encoders))
        ax.bar(pos, means, width * 0.9, yerr=None if None in sds else sds, color=f"C{r}",
               label=f"{REGIME_LABELS[regime]} (measured)")
        ax.scatter(pos, [at_init[e, regime] for e in encoders], marker="_", s=200, color="k", zorder=3,
                   label="at initialisation" if r == 0 else None)
        if published:
            ax.scatter(pos, [published[e, regime][0] for e in encoders], marker="o", facecolors="none",
                       edgecolors=f"C{r}", s=50, zorder=3, label="published" if r == 0 else None)
    ax.set_xticks(np.arange(len(encoders)), [ENCODER_LABELS[e] for e in encoders])
    ax.set(ylabel="linear-probe accuracy (%)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def simclr_curves(records: dict, encoders: Sequence[str], regimes: Sequence[str], seeds: Sequence[int]) -> plt.Figure:
    """Per encoder: SimCLR loss per epoch (top) and probe test accuracy per probe epoch (bottom), one
    colour per regime; the probe at initialisation dotted. records: (encoder, regime, seed) -> record."""
    fig, axes = plt.subplots(2, len(encoders), figsize=(3.3 * len(encoders), 5.0), squeeze=False)
    for j, e in enumerate(encoders):
        for r, regime in enumerate(regimes):
            for s in seeds:
                curve = records[e, regime, s]["curve"]
                axes[0, j].plot(curve["epoch"], curve["loss"], color=f"C{r}",
                                label=REGIME_LABELS[regime] if s == seeds[0] else None)
                axes[1, j].plot(curve["probe_epoch"], 100 * np.array(curve["probe_test_accuracy"]), color=f"C{r}")
        first = records[e, regimes[0], seeds[0]]["curve"]
        axes[1, j].plot(first["probe_epoch"], 100 * np.array(first["init_probe_test_accuracy"]), color="0.4", ls=":",
                        lw=1, label="at init")
        axes[0, j].set(title=ENCODER_LABELS[e], xlabel="SimCLR epoch")
        axes[1, j].set(xlabel="probe epoch")
    axes[0, 0].set_ylabel("NT-Xent (training)")
    axes[1, 0].set_ylabel("probe test accuracy (%)")
    axes[0, 0].legend(fontsize=8)
    axes[1, 0].legend(fontsize=8)
    fig.tight_layout()
    return fig
