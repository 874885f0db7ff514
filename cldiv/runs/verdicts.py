"""Verdicts of the reproduction scorecard: when a published number and ours agree, and which runs count.

Verdict rules (``VERDICTS``):

- a *cell* (one published number) **agrees** when our mean over seeds and the published mean
  differ by at most the metric's ``FLOOR`` (a difference nobody would care about), or when a
  Welch two-sample t-test of the two means (ours: mean, sd, n seeds; published: mean, sd over
  ``PUBLISHED_RUNS`` = 5 runs) does not reject equality at level ``SIGNIFICANCE`` = 0.05. With
  a single run of ours there is no sd to test with: then it agrees within the floor or two
  published sd. Our own spread never widens the rule: a noisy cell of ours does not agree
  with anything;
- a cell that has not converged (``cldiv.synthetic.convergence.settled``: its runs trained twice
  as long moved its mean, or, where those are not stored, some run was still moving) is **not
  converged**: it neither agrees nor disagrees;
- **reproduced**: every cell was run, converged and agrees (for a theorem: every check holds);
- **partly**: some cells were not run or not converged yet but all compared ones agree, or at
  least half of the compared cells agree;
- **not reproduced**: fewer than half of the compared cells agree;
- **not converged**: cells were run, but none has converged;
- **measured**: run, but there are no published numbers to compare with;
- **not yet run**: no result of the claim is in the store (for a theorem: its chapter does not
  exist yet).

Which runs count. A cell of the synthetic benchmark (column x process, ``cldiv.synthetic.table1.COLUMNS``)
is the set of its runs at the paper's protocol (``SyntheticConfig`` defaults for every field that
is neither a cell field nor a budget field); seeds are pooled. If several budgets were run, the
paper's budget wins, then the one with the most iterations, then the most seeds. A cell whose runs
have not converged is taken at the shortest stored length at which it has (``settle``: its runs
trained ever longer, as ``cldiv.runs.doubling`` doubles them), marked ‡. Runs of the
authors' code variants (another learning rate, generator variant, MLP order, ...) do not count
here: the chapters show them.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from scipy.stats import ttest_ind_from_stats

from cldiv.runs.store import ResultStore

VERDICTS = ("reproduced", "partly", "not reproduced", "not converged", "measured", "not yet run")

# ----------------------------------------------------------------------------- verdict rules

#: Differences nobody would care about, per metric (absolute): R^2, MCC, APE (code convention),
#: final loss, accuracy (percentage points).
FLOOR = {"r2": 0.02, "mcc": 0.05, "ape_code": 0.005, "final_loss": 0.02, "accuracy": 1.0}
#: Runs behind each published mean and sd (the paper's 5), and the level of the Welch test.
PUBLISHED_RUNS = 5
SIGNIFICANCE = 0.05
METRIC_LABELS = {"r2": "R²", "mcc": "MCC", "ape_code": "APE", "final_loss": "loss"}


def verdict_rules() -> str:
    """The verdict rules in words, with the floors of ``FLOOR`` (shown under the table)."""
    floors = ", ".join(f"{METRIC_LABELS.get(m, m)} {v:g}" + (" points" if m == "accuracy" else "")
                       for m, v in FLOOR.items())
    return (f"A published number and ours agree when they differ by at most a floor ({floors}) or when a "
            f"Welch t-test of the two means (ours over our seeds, the paper's over its {PUBLISHED_RUNS} runs) "
            f"does not reject equality at level {SIGNIFICANCE:g}; with a single run of ours, when they differ "
            "by at most the floor or two published standard deviations. A mean over processes (Figure 5a's bars, "
            "published without sd) counts one value per seed: the mean of that seed's runs. A cell that has not converged is not "
            "compared: where its runs were also trained twice as long, when that moved its mean held-out R² (or "
            "may have), else when some run's held-out R² moved by more than 0.02, or its loss still fell, over "
            "the last quarter of training. Reproduced: every published number was run, converged and "
            "agrees. Partly: some were not run or not converged and all compared ones agree, or at least half "
            "agree. Not reproduced: fewer than half agree. Not converged: nothing compared yet because no run "
            "has converged. Measured: run, with no published numbers to compare. Not yet run: nothing in the "
            "store yet (for a theorem: its chapter does not exist yet).")


def cell_agrees(ours: Sequence[float], published: tuple[float, float], metric: str,
                runs: int = PUBLISHED_RUNS, significance: float = SIGNIFICANCE) -> bool:
    """Whether our runs' mean agrees with a published mean (module docstring): within FLOOR, or
    not significantly different by Welch's t-test; a single run of ours: within FLOOR or 2 published sd.
    ``published`` is (mean, sd) over ``runs`` runs (the paper's, or another cell of ours); the test
    is at level ``significance``."""
    mean = statistics.fmean(ours)
    difference = abs(mean - published[0])
    if difference <= FLOOR[metric]:
        return True
    if len(ours) < 2:
        return difference <= 2 * published[1]
    test = ttest_ind_from_stats(mean, statistics.stdev(ours), len(ours), published[0], published[1],
                                runs, equal_var=False)
    return bool(test.pvalue >= significance)  # nan (both sds zero, means apart): disagree


CHANGE_VERDICTS = ("yes", "no", "not clear")


def change_verdict(before: Sequence[float], after: Sequence[float], metric: str) -> str:
    """Whether the same runs trained longer (``after``, one value per seed) changed ``metric`` from
    ``before``: "yes" when ``cell_agrees`` rejects them (``before`` in the published number's place),
    "no" when their means differ by at most the metric's FLOOR or the seeds' spread (the root mean
    of the two variances), "not clear" otherwise: a change larger than the seeds' spread that so
    few seeds cannot confirm."""
    if not cell_agrees(after, (statistics.fmean(before), statistics.stdev(before) if len(before) > 1 else 0.0),
                       metric, runs=len(before)):
        return "yes"
    spread = math.sqrt((statistics.variance(before) + statistics.variance(after)) / 2) \
        if len(before) > 1 and len(after) > 1 else 0.0
    return "no" if abs(statistics.fmean(after) - statistics.fmean(before)) <= max(FLOOR[metric], spread) else "not clear"


def claim_verdict(n_cells: int, n_run: int, n_agree: int, n_unconverged: int = 0) -> str:
    """The verdict of a claim with ``n_cells`` published cells, ``n_run`` run (of which
    ``n_unconverged`` not converged, so not compared) and ``n_agree`` agreeing."""
    compared = n_run - n_unconverged
    if n_run == 0:
        return "not yet run"
    if compared == 0:
        return "not converged"
    if n_agree == compared == n_cells:
        return "reproduced"
    if n_agree == compared or 2 * n_agree >= compared:
        return "partly"
    return "not reproduced"


@dataclass(frozen=True)
class Assessment:
    """What a claim's check returns: verdict, budget it was run at, key numbers (paper, ours)."""

    verdict: str
    budget: str = "—"
    paper: str = "—"
    ours: str = "—"
    shape: str = "—"                       # the ordering or trend the paper claims, checked on ours
    disagreements: tuple[str, ...] = ()    # every cell that disagrees, with both numbers
    reason: str = ""                       # the verdict's reason at a glance (about 25 words); "" : ``ours``

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(map(repr, VERDICTS))}; got {self.verdict!r}")


class Tally:
    """A claim's published cells: how many were run, converged, agree; and the ones that disagree."""

    def __init__(self) -> None:
        self.n_cells = self.n_run = self.n_unconverged = self.n_agree = self.n_uncompared = 0
        self.disagreements: list[str] = []
        self.misses: list[tuple[str, float, float, str]] = []  # (label, our mean, published mean, metric)

    def add_uncompared(self) -> None:
        """A published cell that was run, but not so that it can be compared (a loss at other
        negatives than the published one's): it keeps the claim from "reproduced", and is not "not run"."""
        self.n_cells += 1
        self.n_uncompared += 1

    def add(self, ours: list[float], published: tuple[float, float] | None, metric: str, *,
            label: str = "", converged: bool = True) -> None:
        """One cell: our values over seeds (empty: not run), the published (mean, sd), whether all
        of the cell's runs converged, and a label naming the cell in the list of disagreements."""
        if published is None:
            return
        self.n_cells += 1
        if not ours:
            return
        self.n_run += 1
        if not converged:
            self.n_unconverged += 1
        elif cell_agrees(ours, published, metric):
            self.n_agree += 1
        else:
            spread = f" ± {format_metric(statistics.stdev(ours), metric)}" if len(ours) > 1 else ""
            self.misses.append((label, statistics.fmean(ours), published[0], metric))
            self.disagreements.append(
                f"{label}: ours {format_metric(statistics.fmean(ours), metric)}{spread} ({len(ours)} "
                f"run{'s' * (len(ours) > 1)}), published {format_metric(published[0], metric)} ± "
                f"{format_metric(published[1], metric)}")

    @property
    def verdict(self) -> str:
        return claim_verdict(self.n_cells, self.n_run, self.n_agree, self.n_unconverged)

    @property
    def cells(self) -> str:
        compared = self.n_run - self.n_unconverged
        return (f"{self.n_agree}/{compared} cells agree"
                + (f", {self.n_unconverged} not converged" if self.n_unconverged else "")
                + (f", {not_run} not run" if (not_run := self.n_cells - self.n_run - self.n_uncompared) else ""))

    def reason(self, shown: int = 2) -> str:
        """``cells`` and the ``shown`` largest misses (in units of the metric's FLOOR), ours vs published:
        the scorecard's line at a glance: '17/19 cells agree; disagreeing: violated/identity R² 0.33 (paper 0.06), ...'."""
        if not self.misses:
            return self.cells
        worst = sorted(self.misses, key=lambda m: -abs(m[1] - m[2]) / FLOOR[m[3]])
        misses = ", ".join(f"{label.replace(' / ', '/')} {format_metric(ours, metric)} (paper "
                           f"{format_metric(published, metric)})" for label, ours, published, metric in worst[:shown])
        more = f" and {len(worst) - shown} more" if len(worst) > shown else ""
        return f"{self.cells}; disagreeing: {misses}{more}"


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


def settle(found: Cells, store: ResultStore,
           settled_runs: Callable[[list[dict], ResultStore], list[dict] | None]) -> tuple[Cells, set]:
    """Each cell of ``found`` at the shortest stored length at which it has converged
    (``settled_runs``: a ``cldiv.runs.doubling.Doubling.settled_runs``), or with its own runs where
    the store holds no such length; and the keys of the cells taken at a longer length than found."""
    cells: Cells = {}
    for key, (budget, runs) in found.items():
        cells[key] = (budget, settled_runs(runs, store) or runs)
    return cells, {key for key in found if cells[key][1] is not found[key][1]}


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


#: The paper's protocol sizes (Section 3); a `paper`-budget run of other sizes (the adapted cells,
#: ``cldiv.budgets``) is labelled as such.
PAPER_SIZES = {"batch_size": 2000, "n_negatives": 2000, "iterations": 5000}


def describe_budget(cells: Iterable[tuple[str, list[dict]]]) -> str:
    """The budgets behind a claim's cells, e.g. 'cpu: 2000 it × batch 1024; 400 it × 16 anchors ×
    32 negatives, 5 seeds' or 'paper: 8000 it × 256 anchors in 64 groups × 64 negatives' (one part
    per named budget, distinct training shapes within it; a `paper`-budget shape other than
    ``PAPER_SIZES`` says "not the paper's sizes")."""
    shapes: dict[str, set[str]] = {}
    seeds: dict[str, set[int]] = {}
    for budget, runs in cells:
        config = runs[0]["config"]
        if "iterations" in config:  # synthetic
            groups = f" in {config['anchor_groups']} groups" if config.get("anchor_groups") else ""
            batch = (f"batch {config['batch_size']}" if config["batch_size"] == config["n_negatives"]
                     else f"{config['batch_size']} anchors{groups} × {config['n_negatives']} negatives")
            shape = f"{config['iterations']} it × {batch}"
            if budget == "paper" and any(config[f] != PAPER_SIZES[f] for f in PAPER_SIZES):
                shape += " (not the paper's sizes)"
        else:  # SimCLR
            shape = f"{config['epochs']} epochs, {config.get('n_train') or 50000} images"
        shapes.setdefault(budget, set()).add(shape)
        seeds.setdefault(budget, set()).add(len(runs))
    parts = [f"{budget}: " + "; ".join(sorted(shapes[budget], key=lambda x: -int(x.split()[0])))
             + f", {seed_count(seeds[budget])}" for budget in BUDGET_PREFERENCE if budget in shapes]
    return " | ".join(parts) or "—"


def format_metric(x: float, metric: str) -> str:
    return f"{x:.3f}" if metric == "ape_code" else f"{x:.2f}"
