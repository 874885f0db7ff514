"""What the synthetic runs cost: encoder points a training step and the hours a set of runs is projected to take.

A run's cost is dominated by the encoder's forward and backward passes, so it scales with the points
the encoder sees a step (``encoder_points``); ``projected_hours`` and ``projected_hours_by_points``
extrapolate stored wall times to runs not yet made.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Iterable

import numpy as np

from cldiv.synthetic.config import SyntheticConfig


def projected_hours(configs: Iterable[SyntheticConfig], records: Iterable[dict], workers: int = 2) -> dict | None:
    """Wall time of ``configs`` on ``workers`` one-thread processes, projected from stored runs.

    Each config's iterations times the median wall seconds per iteration (evaluations included)
    of the one-thread ``records`` of its shape (encoder, loss, precision, batch, negatives),
    spread evenly over the workers. Returns {"hours", "runs" (measured), "cpus" (their CPUs)},
    or None if some shape has no measured run.
    """
    def shape(config: dict) -> tuple:
        return tuple(config.get(f, "fp32" if f == "precision" else None)
                     for f in ("encoder", "loss", "precision", "batch_size", "n_negatives"))

    measured: dict[tuple, list[float]] = {}
    cpus = set()
    for record in records:
        if record["provenance"].get("threads") == 1 and record["provenance"]["device"] == "cpu":
            per_iteration = record["provenance"]["wall_time_s"] / record["config"]["iterations"]
            measured.setdefault(shape(record["config"]), []).append(per_iteration)
            cpus.add(record["provenance"]["device_name"])
    seconds = 0.0
    for config in configs:
        times = measured.get(shape(asdict(config)))
        if not times:
            return None
        seconds += config.iterations * float(np.median(times))
    return {"hours": seconds / workers / 3600, "runs": sum(map(len, measured.values())), "cpus": sorted(cpus)}


def encoder_points(config: dict | SyntheticConfig) -> int:
    """Latent points the encoder maps in one training step: N anchors, N positives and the negatives,
    M shared by all anchors (InfoNCE), N M (support-corrected, each anchor its own M) or G M (G
    anchor groups sharing their negatives)."""
    get = config.get if isinstance(config, dict) else lambda k: getattr(config, k)
    n, m, groups = get("batch_size"), get("n_negatives"), get("anchor_groups") or 0
    negatives = m if get("loss") == "infonce" else (groups or n) * m
    return 2 * n + negatives


def projected_hours_by_points(configs: Iterable[SyntheticConfig], records: Iterable[dict]) -> dict | None:
    """Wall time of ``configs`` on one one-thread process, projected by encoder points (``encoder_points``).

    Seconds per encoder point: the median over the one-thread float32 MLP runs of the most points per
    step measured (a step's fixed costs weigh least there). For shapes no CPU can run, such as the
    adapted cells at N = M = 2000 (4 million points a step). Returns {"hours", "runs", "cpus"} or None.
    """
    measured = [r for r in records if r["provenance"].get("threads") == 1 and r["provenance"]["device"] == "cpu"
                and r["config"]["encoder"] == "mlp" and r["config"].get("precision", "fp32") == "fp32"
                and r["config"].get("latent_dim", 3) == 3]
    if not measured:
        return None
    most = max(map(encoder_points, (r["config"] for r in measured)))
    measured = [r for r in measured if encoder_points(r["config"]) == most]
    per_point = float(np.median([r["provenance"]["wall_time_s"] / (r["config"]["iterations"] * most) for r in measured]))
    seconds = sum(c.iterations * encoder_points(c) * per_point for c in configs)
    return {"hours": seconds / 3600, "runs": len(measured), "cpus": sorted({r["provenance"]["device_name"] for r in measured})}


def paper_projection_markdown(configs: list[SyntheticConfig], records: list[dict]) -> str:
    """``projected_hours`` of ``configs`` per CPU that has stored one-thread runs (``provenance.device_name``),
    as a markdown table: CPU, runs, hours on two one-thread workers, stored runs it is projected from."""
    lines = ["| CPU | runs | hours on two one-thread workers | projected from stored runs |", "|---|---|---|---|"]
    for cpu in sorted({r["provenance"]["device_name"] for r in records}):
        projection = projected_hours(configs, [r for r in records if r["provenance"]["device_name"] == cpu])
        if projection is not None:
            lines.append(f"| {cpu} | {len(configs)} | {projection['hours']:.1f} | {projection['runs']} |")
    return "\n".join(lines)


def points_projection_markdown(sizes: dict[str, list[SyntheticConfig]], records: list[dict]) -> str:
    """``projected_hours_by_points`` of each named set of runs of one shape (``sizes``: name -> configs; a
    shape already shown is left out), as a markdown table: name, anchors × negatives, encoder points a step,
    iterations, runs, hours on one core."""
    lines = ["| runs | anchors × negatives | points a step | iterations | runs | hours on one core |",
             "|---|---|---|---|---|---|"]
    shown = set()
    for name, configs in sizes.items():
        first = configs[0]
        shape = (first.batch_size, first.n_negatives, first.iterations)
        projection = projected_hours_by_points(configs, records)
        if projection is not None and shape not in shown:
            shown.add(shape)
            lines.append(f"| {name} | {first.batch_size} × {first.n_negatives} | {encoder_points(first):,} | "
                         f"{first.iterations} | {len(configs)} | {projection['hours']:,.1f} |")
    return "\n".join(lines)
