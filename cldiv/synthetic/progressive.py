"""The 10-D progressive-violation sweep (Section 4, Table 7, Figure 5c) in numbers and tables: which runs
converged at each stored length, which latent coordinates the encoder recovers, and the numbers the
chapter's sentences cite. Sentences are written in the chapter; this module returns values and tables.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Iterable

import numpy as np

from cldiv import budgets
from cldiv.metrics import affine_r2
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.convergence import converged
from cldiv.synthetic.sweeps import summary_rows
from cldiv.synthetic.train import scatter_latents


def runs_by_length(configs: list[SyntheticConfig], records: list[dict], store) -> dict[int, list[dict]]:
    """``records`` (the runs of ``configs``, the chapter's) and, at every other length of
    ``budgets.PROGRESSIVE_CPU_LENGTHS`` at which ``store`` holds every one of the same runs, those:
    iterations -> records."""
    runs = {configs[0].iterations: records}
    for iterations, eval_every in budgets.PROGRESSIVE_CPU_LENGTHS:
        other = [store.load(replace(c, iterations=iterations, eval_every=eval_every)) for c in configs]
        if iterations not in runs and all(other):
            runs[iterations] = other
    return dict(sorted(runs.items()))


def converged_counts_markdown(runs: dict[int, list[dict]]) -> str:
    """Converged runs / runs (``cldiv.synthetic.convergence.converged``) per d_fixed (columns) at each
    training length (rows) of ``runs_by_length``, as a markdown table."""
    ds = sorted({r["config"]["d_fixed"] for group in runs.values() for r in group})
    lines = ["| iterations | " + " | ".join(map(str, ds)) + " |", "|---" * (len(ds) + 1) + "|"]
    for iterations, group in runs.items():
        counts = [[converged(r) for r in group if r["config"]["d_fixed"] == d] for d in ds]
        lines.append(f"| {iterations} | " + " | ".join(f"{sum(c)}/{len(c)}" for c in counts) + " |")
    return "\n".join(lines)


def coordinate_recovery(records: Iterable[dict], k: int) -> dict[tuple[str, int], list[tuple[float, float]]]:
    """(process, d_fixed) -> per run, (R^2 of the fixed coordinates u, R^2 of the free ones v): the affine
    R^2 (``cldiv.metrics.affine_r2``) of each block of z from the stored h at the 400 fixed latents of
    ``scatter_latents``, fitted and scored on those points; nan where the block is empty."""
    z = scatter_latents(k).numpy()
    split: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for record in records:
        d, h = record["config"]["d_fixed"], np.asarray(record["scatter_h"])
        fixed = affine_r2(h, z[:, :d]) if d > 0 else float("nan")
        free = affine_r2(h, z[:, d:]) if d < k else float("nan")
        split.setdefault((record["config"]["process"], d), []).append((fixed, free))
    return split


def coordinate_recovery_markdown(split: dict[tuple[str, int], list[tuple[float, float]]]) -> str:
    """``coordinate_recovery`` as a markdown table, mean ± std over runs."""
    def cell(values: np.ndarray) -> str:
        return "–" if np.isnan(values).all() else f"{np.mean(values):.2f} ± {np.std(values):.2f}"

    lines = ["| process | $d_{\\text{fixed}}$ | $R^2$ of the fixed coordinates $u$ | $R^2$ of the free coordinates $v$ |",
             "|---|---|---|---|"]
    for (process, d), values in sorted(split.items()):
        fixed, free = np.array(values).T
        lines.append(f"| {process} | {d} | {cell(fixed)} | {cell(free)} |")
    return "\n".join(lines)


NAN = float("nan")


def recovery_numbers(records: list[dict], split: dict[tuple[str, int], list[tuple[float, float]]],
                     k: int) -> dict[str, float]:
    """The numbers the chapter's conclusions cite, over the processes of the paper's sign rule (nan
    where no point was run): lowest and highest mean held-out R^2 at d_fixed = 0 (``r2_0_low``,
    ``r2_0_high``) and at 1 (``r2_1_low``, ``r2_1_high``); ``drop``, the lowest at 0 minus the
    highest at 1; the mean R^2 of the fixed coordinates at d_fixed = 1 (``fixed_1_low``/``_high``)
    and for 2 <= d_fixed <= k - 2 (``fixed_middle_low``/``_high``); and the highest R^2 of the free
    coordinates for 1 <= d_fixed <= k - 2 (``free_high``). At the last two points, the mean R^2 over processes
    at d_fixed = k - 1 under the paper's rule (``r2_last_paper``) and the code's fair coin
    (``r2_last_code``), and at d_fixed = k (``r2_k``)."""
    summary = summary_rows("progressive_violation", records)

    def at(d: int, law: str = "paper") -> list[float]:
        return [row[d][0] for (_, rule), row in summary.items() if rule == law and d in row]

    def fixed(ds: range) -> list[float]:
        return [statistics.fmean(v[0] for v in runs) for (_, d), runs in split.items() if d in ds]

    free = [statistics.fmean(v[1] for v in runs) for (_, d), runs in split.items() if 1 <= d <= k - 2]
    numbers = {}
    for name, values in (("r2_0", at(0)), ("r2_1", at(1)), ("fixed_1", fixed(range(1, 2))),
                         ("fixed_middle", fixed(range(2, k - 1)))):
        numbers[f"{name}_low"], numbers[f"{name}_high"] = (min(values), max(values)) if values else (NAN, NAN)
    numbers["drop"] = numbers["r2_0_low"] - numbers["r2_1_high"]
    numbers["free_high"] = max(free) if free else NAN
    for name, values in (("r2_last_paper", at(k - 1)), ("r2_last_code", at(k - 1, "code")), ("r2_k", at(k))):
        numbers[name] = statistics.fmean(values) if values else NAN
    return numbers
