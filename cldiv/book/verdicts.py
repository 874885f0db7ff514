"""Verdicts of the reproduction scorecard: when a published number and ours agree, and which runs count.

Verdict rules (``VERDICTS``):

- a *cell* (one published number) **agrees** when |ours - published| <= max(tolerance of the
  metric, 2 published sd, 2 sd of ours over seeds); ``TOLERANCE`` holds the per-metric floors;
- **reproduced**: every cell was run and agrees (for a theorem: every check holds);
- **partly**: some cells were not run yet but all that were agree, or at least half agree;
- **not reproduced**: fewer than half of the cells that were run agree;
- **measured**: run, but there are no published numbers to compare with;
- **not yet run**: no result of the claim is in the store (for a theorem: its chapter does not
  exist yet).

Which runs count. A cell of the synthetic benchmark (column x process, ``cldiv.synthetic.table1.COLUMNS``)
is the set of its runs at the paper's protocol (``SyntheticConfig`` defaults for every field that
is neither a cell field nor a budget field); seeds are pooled. If several budgets were run, the
paper's budget wins, then the one with the most iterations, then the most seeds. Runs of the
authors' code variants (another learning rate, generator variant, MLP order, ...) do not count
here: the chapters show them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from cldiv.book.store import ResultStore

VERDICTS = ("reproduced", "partly", "not reproduced", "measured", "not yet run")

# ----------------------------------------------------------------------------- verdict rules

#: Agreement floor per metric (absolute): R^2, MCC, APE (code convention), final loss, accuracy (%).
TOLERANCE = {"r2": 0.05, "mcc": 0.10, "ape_code": 0.02, "final_loss": 0.05, "accuracy": 3.0}
METRIC_LABELS = {"r2": "R²", "mcc": "MCC", "ape_code": "APE", "final_loss": "loss"}


def verdict_rules() -> str:
    """The verdict rules in words, with the tolerances of ``TOLERANCE`` (shown under the table)."""
    floors = ", ".join(f"{METRIC_LABELS.get(m, m)} {v:g}" + (" points" if m == "accuracy" else "")
                       for m, v in TOLERANCE.items())
    return (f"A published number and ours agree when they differ by at most the larger of a tolerance "
            f"({floors}) and twice either standard deviation over runs. "
            "Reproduced: every published number was run and agrees. Partly: some were not run yet and all "
            "run ones agree, or at least half agree. Not reproduced: fewer than half agree. Measured: run, "
            "with no published numbers to compare. Not yet run: nothing in the store yet (for a theorem: "
            "its chapter does not exist yet).")


def cell_agrees(ours: Sequence[float], published: tuple[float, float], metric: str) -> bool:
    """|mean(ours) - published mean| <= max(tolerance, 2 published sd, 2 sd of ours)."""
    mean = statistics.fmean(ours)
    spread = statistics.stdev(ours) if len(ours) > 1 else 0.0
    return abs(mean - published[0]) <= max(TOLERANCE[metric], 2 * published[1], 2 * spread)


def claim_verdict(n_cells: int, n_run: int, n_agree: int) -> str:
    """The verdict of a claim with ``n_cells`` published cells, ``n_run`` run, ``n_agree`` agreeing."""
    if n_run == 0:
        return "not yet run"
    if n_agree == n_run == n_cells:
        return "reproduced"
    if n_agree == n_run or 2 * n_agree >= n_run:
        return "partly"
    return "not reproduced"


@dataclass(frozen=True)
class Assessment:
    """What a claim's check returns: verdict, budget it was run at, key numbers (paper, ours)."""

    verdict: str
    budget: str = "—"
    paper: str = "—"
    ours: str = "—"

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(map(repr, VERDICTS))}; got {self.verdict!r}")


class Tally:
    """Counts of a claim's published cells: how many were run, how many agree."""

    def __init__(self) -> None:
        self.n_cells = self.n_run = self.n_agree = 0

    def add(self, ours: list[float], published: tuple[float, float] | None, metric: str) -> None:
        if published is None:
            return
        self.n_cells += 1
        if ours:
            self.n_run += 1
            self.n_agree += cell_agrees(ours, published, metric)

    @property
    def verdict(self) -> str:
        return claim_verdict(self.n_cells, self.n_run, self.n_agree)

    @property
    def cells(self) -> str:
        return f"{self.n_agree}/{self.n_run} cells agree" + (
            f", {self.n_cells - self.n_run} not run" if self.n_run < self.n_cells else "")


# ----------------------------------------------------------------------------- which runs count

#: Named budgets, most preferred first: a cell uses the runs of the first budget that has any.
BUDGET_PREFERENCE = ("paper", "cpu", "smoke")

Cells = dict  # key of a cell -> (budget name, records of its seeds)


def find_runs(store: ResultStore, configs: Callable[[str], Iterable[tuple[tuple, object]]]) -> Cells:
    """The stored runs of every cell of a claim, at the most preferred budget that has any.

    ``configs(budget)`` yields (cell key, config) for every run of the claim under a named budget,
    built by the same functions the chapters use (``cldiv.synthetic.table1.cell_config``,
    ``cldiv.synthetic.sweeps.sweep_configs``, ``cldiv.images.simclr.simclr_configs``), so a result counts exactly
    when it is one of the book's runs. Records are read with ``store.load`` (validated against
    their config).
    """
    found: Cells = {}
    for budget in BUDGET_PREFERENCE:
        runs: dict[tuple, list[dict]] = {}
        for key, config in configs(budget):
            record = store.load(config)
            if record is not None:
                runs.setdefault(key, []).append(record)
        for key, records in runs.items():
            found.setdefault(key, (budget, records))
    return found


def metric_values(runs: list[dict], metric: str, loss_negatives: int = 2000) -> list[float]:
    """Our values of ``metric``, one per seed.

    The final loss depends on the number of negatives M (it contains about log M), so it is only
    compared at the M the published number was measured with (the paper's 2000 unless said):
    ``loss_m<M>`` (evaluated with 2000 anchors and M negatives whatever the training budget,
    ``cldiv.synthetic.train``) where it exists, else the final loss of a run trained with M negatives;
    runs at other budgets give no loss value.
    """
    if metric != "final_loss":
        return [float(r["metrics"][metric]) for r in runs if metric in r["metrics"]]
    values = []
    for run in runs:
        if f"loss_m{loss_negatives}" in run["metrics"]:
            values.append(float(run["metrics"][f"loss_m{loss_negatives}"]))
        elif "final_loss" in run["metrics"] and run["config"]["n_negatives"] == loss_negatives:
            values.append(float(run["metrics"]["final_loss"]))
    return values


def seed_count(counts: set[int]) -> str:
    lo, hi = min(counts), max(counts)
    return f"{lo} seed{'s' * (lo > 1)}" if lo == hi else f"{lo}–{hi} seeds"


def describe_budget(cells: Iterable[tuple[str, list[dict]]]) -> str:
    """The budgets behind a claim's cells, e.g. 'cpu: 2000 it × batch 1024; 400 it × 16 anchors ×
    32 negatives, 5 seeds' (one part per named budget, distinct training shapes within it)."""
    shapes: dict[str, set[str]] = {}
    seeds: dict[str, set[int]] = {}
    for budget, runs in cells:
        config = runs[0]["config"]
        if "iterations" in config:  # synthetic
            batch = (f"batch {config['batch_size']}" if config["batch_size"] == config["n_negatives"]
                     else f"{config['batch_size']} anchors × {config['n_negatives']} negatives")
            shape = f"{config['iterations']} it × {batch}"
        else:  # SimCLR
            shape = f"{config['epochs']} epochs, {config.get('n_train') or 50000} images"
        shapes.setdefault(budget, set()).add(shape)
        seeds.setdefault(budget, set()).add(len(runs))
    parts = [f"{budget}: " + "; ".join(sorted(shapes[budget], key=lambda x: -int(x.split()[0])))
             + f", {seed_count(seeds[budget])}" for budget in BUDGET_PREFERENCE if budget in shapes]
    return " | ".join(parts) or "—"


def format_metric(x: float, metric: str) -> str:
    return f"{x:.3f}" if metric == "ape_code" else f"{x:.2f}"
