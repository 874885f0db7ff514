"""The image chapter's tables: the encoders' sizes, the budget's choices undone, the runs, the accuracy per cell,
the latents each representation keeps, and the paper's claims on the published means. Each function returns a
markdown table; the chapter writes the sentences around it.

Records are keyed (encoder, regime, seed) as the chapter holds them; ``labels`` names encoders and regimes.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Mapping, Sequence

from cldiv.images.claims import LEARNING_MARGIN, learning_gain, published_differences
from cldiv.images.encoders import parameter_count
from cldiv.images.simclr import SimCLRConfig, build_encoder

#: The paper's encoders as its code builds them (width x depth, parameters): torchvision's ResNet-18, a ViT of
#: width 384 and 6 layers, an MLP of three hidden layers of 2048.
PAPER_ENCODER_SIZES = {"resnet18": "64 × 2, 11.2M", "vit": "384 × 6, 10.9M", "mlp": "2048 × 3, 15.7M"}

Records = Mapping[tuple[str, str, int], dict]


def _gain(metrics: Mapping) -> float:
    return 100 * (metrics["probe_best"] - metrics["init_probe_best"])


def encoder_sizes_markdown(sizes: Sequence[tuple[str, int, int, int]], labels: Mapping[str, str]) -> str:
    """Per encoder (encoder, width, depth, parameters): its size beside the paper's (``PAPER_ENCODER_SIZES``)."""
    lines = ["| encoder | width × depth | parameters | the paper's |", "|---|---|---|---|"]
    lines += [f"| {labels[e]} | {w} × {d} | {n:,} | {PAPER_ENCODER_SIZES[e]} |" for e, w, d, n in sizes]
    return "\n".join(lines)


def choices_markdown(metrics: Mapping[tuple[str, str], Mapping], labels: Mapping[str, str]) -> str:
    """The budget's choices undone, one run each ((encoder, choice) -> metrics): the probe accuracy after SimCLR
    and at initialisation, the gain, and how much of the object's hue the features keep (held-out R^2)."""
    lines = ["| encoder | run | probe (%) | at init (%) | gain (points) | hue $R^2$ |", "|---|---|---|---|---|---|"]
    for (encoder, label), m in metrics.items():
        hue = m.get("latent_r2", {}).get("hue")
        lines.append(f"| {labels[encoder]} | {label} | {100 * m['probe_best']:.1f} | {100 * m['init_probe_best']:.1f} | "
                     f"{_gain(m):+.1f} | {'—' if hue is None else f'{hue:.2f}'} |")
    return "\n".join(lines)


def background_numbers(metrics: Mapping[tuple[str, str], Mapping]) -> dict[str, float]:
    """The ResNet runs on the sets whose background grey level varies (their latents include "background")
    against the budget's own run: how many there are (``varied``), how many gain less from SimCLR than the
    budget's run while their features keep the grey level at held-out R^2 >= 0.5 (``shortcut``), and the
    budget's gain (``base_gain``; nan without it)."""
    base = metrics.get(("resnet18", "the budget"))
    varied = [m for (encoder, _), m in metrics.items() if encoder == "resnet18" and "background" in m["latent_r2"]]
    if base is None:
        return {"varied": len(varied), "shortcut": 0, "base_gain": float("nan")}
    return {"varied": len(varied), "base_gain": _gain(base),
            "shortcut": sum(_gain(m) < _gain(base) and m["latent_r2"]["background"] >= 0.5 for m in varied)}


def size_runs(choices: Sequence[tuple[str, str, SimCLRConfig]], metrics: Mapping[tuple[str, str], Mapping],
              encoder: str) -> list[tuple[str, int, Mapping]]:
    """The runs of ``choices`` (``budget_choice_configs``: encoder, label, config) of ``encoder`` that differ from
    its budget run in width and depth only: (width × depth, parameters, metrics), smallest first."""
    base = next((c for e, label, c in choices if e == encoder and label == "the budget"), None)
    runs = [(f"{c.width} × {c.depth}", parameter_count(build_encoder(c)), metrics[encoder, label])
            for e, label, c in choices
            if e == encoder and base and replace(c, width=base.width, depth=base.depth) == base]
    return sorted(runs, key=lambda row: row[1])


def size_numbers(runs: Sequence[tuple[str, int, Mapping]]) -> dict[str, float]:
    """One run per size of one encoder's *All* cell (size, parameters, metrics), smallest first: how many learn
    (a gain of at least LEARNING_MARGIN points over the probe at initialisation; ``learn``), the sizes
    (``sizes``) and the largest size's parameters (``largest``)."""
    learns = [learning_gain([100 * m["probe_best"]], [100 * m["init_probe_best"]])[2] for _, _, m in runs]
    return {"learn": sum(learns), "sizes": len(runs), "largest": runs[-1][1] if runs else 0, "margin": LEARNING_MARGIN}


def sizes_markdown(runs: Sequence[tuple[str, int, Mapping]]) -> str:
    """``size_numbers``' runs as a markdown table: size, parameters, gain, hue R^2."""
    lines = ["| width × depth | parameters | gain (points) | hue $R^2$ |", "|---|---|---|---|"]
    for size, n, m in runs:
        hue = m.get("latent_r2", {}).get("hue")
        lines.append(f"| {size} | {n:,} | {_gain(m):+.1f} | {'—' if hue is None else f'{hue:.2f}'} |")
    return "\n".join(lines)


def runs_markdown(records: Records, labels: Mapping[str, str]) -> str:
    """Every run: best and final probe accuracy, the probe at initialisation, the final NT-Xent."""
    lines = ["| encoder | regime | seed | probe best (%) | final (%) | at init (%) | NT-Xent |", "|---|---|---|---|---|---|---|"]
    for (encoder, regime, seed), record in records.items():
        m = record["metrics"]
        lines.append(f"| {labels[encoder]} | {labels[regime]} | {seed} | {100 * m['probe_best']:.1f} | "
                     f"{100 * m['probe_final']:.1f} | {100 * m['init_probe_best']:.1f} | {m['final_loss']:.3f} |")
    return "\n".join(lines)


def _mean(records: Records, encoder: str, regime: str, key: str) -> float:
    return statistics.fmean(r["metrics"][key] for (e, g, _), r in records.items() if (e, g) == (encoder, regime))


def accuracy_markdown(records: Records, encoders: Sequence[str], regimes: Sequence[str], labels: Mapping[str, str],
                      marks: Mapping[tuple[str, str], str], published: Mapping | None = None) -> str:
    """Mean best / final probe accuracy (%) per regime (rows) and encoder (columns), each cell followed by its
    mark (``marks``: ‡ trained longer, † not converged) and, with ``published`` (Figure 3's (mean, sd) per cell),
    the published best in brackets."""
    lines = ["| regime | " + " | ".join(labels[e] for e in encoders) + " |", "|---" * (len(encoders) + 1) + "|"]
    for regime in regimes:
        cells = []
        for e in encoders:
            cell = f"{100 * _mean(records, e, regime, 'probe_best'):.1f} / {100 * _mean(records, e, regime, 'probe_final'):.1f}"
            cells.append(cell + marks.get((e, regime), "") + (f" [{published[e, regime][0]:.1f}]" if published else ""))
        lines.append(f"| {labels[regime]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def latents_markdown(records: Records, encoders: Sequence[str], regimes: Sequence[str], latents: Sequence[str],
                     labels: Mapping[str, str]) -> str:
    """Held-out affine R^2 from the features to each generated latent, after SimCLR with the value at
    initialisation in brackets, mean over seeds, per encoder and regime; and the mean over latents."""
    lines = ["| encoder | regime | " + " | ".join(latents) + " | mean |", "|---" * (len(latents) + 3) + "|"]
    for e in encoders:
        for regime in regimes:
            runs = [r["metrics"] for (en, g, _), r in records.items() if (en, g) == (e, regime)]
            cells = [f"{statistics.fmean(m['latent_r2'][n] for m in runs):.2f} "
                     f"({statistics.fmean(m['init_latent_r2'][n] for m in runs):.2f})" for n in latents]
            mean = statistics.fmean(m["latent_r2_mean"] for m in runs)
            lines.append(f"| {labels[e]} | {labels[regime]} | " + " | ".join(cells) + f" | {mean:.2f} |")
    return "\n".join(lines)


def published_differences_markdown(means: Mapping[tuple[str, str], float], encoders: Sequence[str],
                                   regimes: Sequence[str], labels: Mapping[str, str]) -> str:
    """The claims' differences (``cldiv.images.claims.published_differences``) on the published means."""
    lines = ["| difference | published (points) |", "|---|---|"]
    lines += [f"| {label} | {value:+.1f} |" for label, value in published_differences(means, encoders, regimes, labels).items()]
    return "\n".join(lines)
