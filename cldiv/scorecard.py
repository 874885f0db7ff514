"""The reproduction scorecard: each claim of the paper, its chapter, and a verdict computed from results.

The landing page of the book renders ``scorecard()`` as one table (``cldiv.site``); nothing in it
is typed by hand. A *claim* is a table, figure or theorem of the paper (every one named in the
spec): its name, the chapter that reproduces it, and a function of the result store returning an
``Assessment`` -- the budget it was run at, the verdict, and the key numbers, published and ours.

Published numbers are data, labelled as published: the synthetic benchmark's live in
``cldiv.tables`` (Table 1, Tables 3-6, Figure 5a), CIFAR-10's (Figure 3) below. Ours come from
the result store (``ResultStore.default()``: ``results/`` or ``$CLDIV_RESULTS``), so the table
changes when a result file changes. Theorems are checked by evaluating the asymptotic objective
(``cldiv.asymptotics``) at the paper's setting, which takes a few seconds.

Verdict rules (``VERDICTS``):

- a *cell* (one published number) **agrees** when |ours - published| <= max(tolerance of the
  metric, 2 published sd, 2 sd of ours over seeds); ``TOLERANCE`` holds the per-metric floors;
- **reproduced**: every cell was run and agrees (for a theorem: every check holds);
- **partly**: some cells were not run yet but all that were agree, or at least half agree;
- **not reproduced**: fewer than half of the cells that were run agree;
- **measured**: run, but there are no published numbers to compare with;
- **not yet run**: no result of the claim is in the store (for a theorem: its chapter does not
  exist yet).

Which runs count. A cell of the synthetic benchmark (column x process, ``cldiv.tables.COLUMNS``)
is the set of its runs at the paper's protocol (``SyntheticConfig`` defaults for every field that
is neither a cell field nor a budget field); seeds are pooled. If several budgets were run, the
paper's budget wins, then the one with the most iterations, then the most seeds. Runs of the
authors' code variants (another learning rate, generator variant, MLP order, ...) do not count
here: the chapters show them.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from cldiv import tables
from cldiv.config import budget_seeds
from cldiv.generators import SYNTHETIC_PROCESSES
from cldiv.store import REPO_ROOT, ResultStore

__all__ = ["VERDICTS", "TOLERANCE", "Assessment", "Claim", "Row", "CLAIMS", "scorecard", "claim_verdict",
           "cell_agrees", "find_runs", "describe_budget", "verdict_rules"]

VERDICTS = ("reproduced", "partly", "not reproduced", "measured", "not yet run")
NOTEBOOK_DIR = REPO_ROOT / "notebooks"

#: Published Figure 3 (CIFAR-10 linear-probe accuracy, %, best probe epoch): encoder -> regime ->
#: (mean, sd) over 5 runs. The ViT values are read off the figure (no sd): the tolerance alone applies.
PUBLISHED_FIGURE3: dict[str, dict[str, tuple[float, float]]] = {
    "resnet18": {"all": (55.4, 1.3), "crop": (37.2, 0.5), "no_crop": (35.5, 0.6)},
    "vit": {"all": (54.0, 0.0), "crop": (41.0, 0.0), "no_crop": (32.0, 0.0)},
    "mlp": {"all": (42.3, 0.9), "crop": (39.9, 0.1), "no_crop": (33.0, 0.2)},
}

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


@dataclass(frozen=True)
class Claim:
    """A table, figure or theorem of the paper and how to check it."""

    name: str                     # as the paper names it: "Table 1", "Theorem 4.5"
    what: str                     # one line: what it states or shows
    chapter: str                  # notebooks/<chapter>.md reproduces it
    assess: Callable[[ResultStore], Assessment]
    needs_chapter: bool = False   # computed by the chapter's code (theorems): "not yet run" without it


@dataclass(frozen=True)
class Row:
    """One line of the scorecard."""

    claim: str
    what: str
    chapter: str
    chapter_exists: bool
    budget: str
    verdict: str
    paper: str
    ours: str


class _Tally:
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
    built by the same functions the chapters use (``cldiv.tables.cell_config``,
    ``cldiv.sweeps.sweep_configs``, ``cldiv.simclr.simclr_configs``), so a result counts exactly
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


def _values(runs: list[dict], metric: str, loss_negatives: int = 2000) -> list[float]:
    """Our values of ``metric``, one per seed.

    The final loss depends on the number of negatives M (it contains about log M), so it is only
    compared at the M the published number was measured with (the paper's 2000 unless said):
    ``loss_m<M>`` (evaluated with 2000 anchors and M negatives whatever the training budget,
    ``cldiv.train``) where it exists, else the final loss of a run trained with M negatives;
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


def _seed_count(counts: set[int]) -> str:
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
             + f", {_seed_count(seeds[budget])}" for budget in BUDGET_PREFERENCE if budget in shapes]
    return " | ".join(parts) or "—"


def _fmt(x: float, metric: str) -> str:
    return f"{x:.3f}" if metric == "ape_code" else f"{x:.2f}"


# ----------------------------------------------------------------------------- synthetic benchmark


def table_cells(columns: Iterable[str]) -> Callable[[str], Iterable[tuple[tuple, object]]]:
    """The runs of the synthetic benchmark's cells (column, process) of ``columns``, per budget."""
    columns = list(columns)

    def configs(budget: str):
        for column in columns:
            for process in SYNTHETIC_PROCESSES:
                if tables.has_cell(column, process):
                    for seed in range(budget_seeds(budget)):
                        yield (column, process), tables.cell_config(column, process, seed, budget)

    return configs


def _table_assessment(store: ResultStore, columns: Sequence[str], metrics: Sequence[str],
                      extra: Callable[[Cells], str] | None = None, loss_negatives: int = 2000) -> Assessment:
    """Compare the published cells of ``columns`` x ``metrics`` x processes with our runs.

    Key numbers: per column and metric, the mean over processes of the published means and of
    ours (over the processes that were run).
    """
    found = find_runs(store, table_cells(columns))
    tally, paper_parts, our_parts, incomparable = _Tally(), [], [], 0
    for column in columns:
        paper_metrics, our_metrics = [], []
        for metric in metrics:
            published, ours = [], []
            for process in SYNTHETIC_PROCESSES:
                value = tables.published(metric, column, process)
                runs = found.get((column, process), (None, []))[1]
                values = _values(runs, metric, loss_negatives)
                tally.add(values, value, metric)
                incomparable += bool(runs and not values and value is not None)
                if value is not None:
                    published.append(value[0])
                    if values:
                        ours.append(statistics.fmean(values))
            label = METRIC_LABELS[metric] + " " if len(metrics) > 1 else ""
            paper_metrics.append(f"{label}{_fmt(statistics.fmean(published), metric)}")
            if ours:
                our_metrics.append(f"{label}{_fmt(statistics.fmean(ours), metric)}")
        prefix = (tables.COLUMN_TITLES[column] + (": " if len(metrics) > 1 else " ")) if len(columns) > 1 else ""
        paper_parts.append(prefix + ", ".join(paper_metrics))
        if our_metrics:
            our_parts.append(prefix + ", ".join(our_metrics))
    paper = "; ".join(paper_parts) + " (means over processes)"
    if not found:
        return Assessment("not yet run", paper=paper)
    note = (f"; {incomparable} loss cells run with M ≠ {loss_negatives} negatives, not compared"
            if incomparable else "")
    ours = "; ".join(our_parts) + (extra(found) if extra else "") + f" ({tally.cells}{note})"
    verdict = tally.verdict if tally.n_run else "measured"
    return Assessment(verdict, describe_budget(found.values()), paper, ours)


def assess_table1(store: ResultStore) -> Assessment:
    """Table 1: R^2 of h = f o g, five processes x {holds, violated, adapted, + inductive bias}."""
    return _table_assessment(store, tables.TABLE1_COLUMNS, ["r2"])


def assess_table3(store: ResultStore) -> Assessment:
    """Table 3: MCC, APE and final loss when diversity holds (MLP encoder).

    The published loss matches 4000 negatives, not the protocol's 2000 (PAPER.md; the errata
    chapter), so ours is compared like with like at 4000, and the loss at 2000 is shown beside it.
    """

    def loss_with_2000_negatives(found: Cells) -> str:
        values = [v for _, runs in found.values() for v in _values(runs, "final_loss", 2000)]
        return f"; loss with the protocol's 2000 negatives {statistics.fmean(values):.2f}" if values else ""

    return _table_assessment(store, ["holds"], ["mcc", "ape_code", "final_loss"],
                             extra=loss_with_2000_negatives, loss_negatives=4000)


def assess_tables4_6(store: ResultStore) -> Assessment:
    """Tables 4-6: MCC, APE and final loss when diversity is violated (InfoNCE, adapted, inverse)."""
    return _table_assessment(store, ["violated", "adapted", "inverse"], ["mcc", "ape_code", "final_loss"])


#: Figure 5a's bars as columns of ``cldiv.tables``: (encoder, condition) -> column.
FIGURE5A_COLUMNS = {("mlp", "holds"): "holds", ("mlp", "violated"): "violated",
                    ("inverse", "holds"): "inverse_holds", ("inverse", "violated"): "inverse"}


def assess_figure5a(store: ResultStore) -> Assessment:
    """Figure 5a: mean R^2 over processes, MLP vs inverse encoders, diversity holds vs violated."""
    found = find_runs(store, table_cells(FIGURE5A_COLUMNS.values()))
    tally, paper_parts, our_parts = _Tally(), [], []
    for (encoder, condition), column in FIGURE5A_COLUMNS.items():
        label = f"{'MLP' if encoder == 'mlp' else 'inverse'} {condition}"
        published = tables.PUBLISHED_FIG5A[encoder][condition]
        paper_parts.append(f"{label} {published:.2f}")
        processes = [p for p in SYNTHETIC_PROCESSES if tables.has_cell(column, p)]
        means = [statistics.fmean(_values(found[column, p][1], "r2")) for p in processes if (column, p) in found]
        complete = len(means) == len(processes)
        tally.add([statistics.fmean(means)] if complete else [], (published, 0.0), "r2")
        if means:
            our_parts.append(f"{label} {statistics.fmean(means):.2f}"
                             + ("" if complete else f" ({len(means)}/{len(processes)} processes)"))
    paper = "; ".join(paper_parts)
    if not found:
        return Assessment("not yet run", paper=paper)
    verdict = tally.verdict if tally.n_run else "partly"
    return Assessment(verdict, describe_budget(found.values()), paper, "; ".join(our_parts) + f" ({tally.cells})")


def assess_constraint_sweep(store: ResultStore) -> Assessment:
    """Tables 8-11 / Figure 5b: support-corrected loss with a fraction rho of negatives on K(z).

    No numbers of the sweep are published in the spec; its rho = 1 MLP cells play the part of
    Table 1's "adapted" column, which is what is compared. The verdict is at most "partly" until
    the paper's whole grid (11 values of rho x 5 processes x {MLP, inverse}) has been run.
    """
    from cldiv.sweeps import PAPER_RHOS, constraint_ratio_cells, sweep_configs

    def configs(budget: str):
        for config in sweep_configs("constraint_ratio", budget):
            yield (config.encoder, config.process, config.rho), config

    found = find_runs(store, configs)
    paper = "only ρ = 1 (MLP) is published: Table 1 adapted, R² 0.63 (mean over processes)"
    if not found:
        return Assessment("not yet run", paper=paper)
    tally = _Tally()
    for process in SYNTHETIC_PROCESSES:
        runs = found.get(("mlp", process, 1.0), (None, []))[1]
        tally.add(_values(runs, "r2"), tables.published("r2", "adapted", process), "r2")
    parts = []
    for encoder, label in (("mlp", "MLP"), ("inverse", "inverse")):
        ends = []
        for rho in (0.0, 1.0):
            values = [statistics.fmean(_values(runs, "r2")) for (e, _, r), (_, runs) in found.items()
                      if e == encoder and r == rho]
            ends.append(f"{statistics.fmean(values):.2f}" if values else "?")
        if ends != ["?", "?"]:
            parts.append(f"{label} R² {ends[0]} → {ends[1]} (ρ 0 → 1)")
    grid = len(constraint_ratio_cells(SYNTHETIC_PROCESSES, ("mlp", "inverse"))) * len(PAPER_RHOS)
    rhos = sorted({rho for _, _, rho in found})
    verdict = tally.verdict if tally.n_run else "measured"
    if verdict == "reproduced" and len(found) < grid:
        verdict = "partly"
    compared = tally.cells if tally.n_run else "not run"
    ours = (f"{'; '.join(parts)}; ρ = 1 vs Table 1: {compared}; {len(found)}/{grid} cells of the paper's grid "
            f"(ρ ∈ {{{', '.join(f'{r:g}' for r in rhos)}}})")
    return Assessment(verdict, describe_budget(found.values()), paper, ours)


def assess_progressive_violation(store: ResultStore) -> Assessment:
    """Table 7 / Figure 5c: R^2 against d_fixed = 0..10 on S^9 (linear and monomial embeddings)."""
    from cldiv.sweeps import PROGRESSIVE_PROCESSES, sweep_configs

    def configs(budget: str):
        for config in sweep_configs("progressive_violation", budget):
            yield (config.process, config.d_fixed), config

    found = find_runs(store, configs)
    paper = "numbers not in the spec"
    if not found:
        return Assessment("not yet run", paper=paper)
    parts = []
    for process in PROGRESSIVE_PROCESSES:
        values = {d: statistics.fmean(_values(runs, "r2")) for (p, d), (_, runs) in found.items() if p == process}
        if values:
            shown = ", ".join(f"{d}: {values[d]:.2f}" for d in sorted(values))
            parts.append(f"{process.replace('_', ' ')} R² by d_fixed {{{shown}}}")
    return Assessment("measured", describe_budget(found.values()), paper, "; ".join(parts))


# ----------------------------------------------------------------------------- images (SimCLR)

SIMCLR_SEEDS = range(5)  # the paper's 5 runs: seeds 0..4 are looked up


def assess_figure3(store: ResultStore) -> Assessment:
    """Figure 3: SimCLR linear-probe accuracy, 3 encoders x 3 augmentation regimes.

    CIFAR-10 runs (``dataset="cifar10"``; the accuracy is ``probe_best``, the best probe epoch, as
    in the paper) are compared with the published numbers. Without them, runs on the generated
    image set (``"shapes"``, the chapter's stand-in) are shown as measured, with the paper's
    qualitative claim checked: the broadest augmentation (All) gives the best accuracy for every
    encoder.
    """
    from cldiv.simclr import simclr_configs

    paper = "All / Crop / w/o crop: " + "; ".join(
        f"{e} {'/'.join(f'{m:.1f}' for m, _ in r.values())}" for e, r in PUBLISHED_FIGURE3.items())
    for dataset in ("cifar10", "shapes"):
        found = find_runs(store, lambda budget: (((c.encoder, c.regime), c) for c in simclr_configs(
            budget, dataset=dataset, seeds=SIMCLR_SEEDS)))
        if found:
            break
    else:
        return Assessment("not yet run", paper=paper)
    tally, parts, all_best = _Tally(), [], 0
    for encoder, regimes in PUBLISHED_FIGURE3.items():
        row = {}
        for regime, published in regimes.items():
            values = [100 * v for v in _values(found.get((encoder, regime), (None, []))[1], "probe_best")]
            tally.add(values, published, "accuracy")
            if values:
                row[regime] = statistics.fmean(values)
        if row:
            parts.append(f"{encoder} " + "/".join(f"{row[r]:.1f}" if r in row else "?" for r in regimes))
            all_best += len(row) == len(regimes) and max(row, key=row.get) == "all"
    budget = describe_budget(found.values())
    if dataset == "cifar10":
        return Assessment(tally.verdict, budget, paper, "; ".join(parts) + f" ({tally.cells})")
    return Assessment("measured", budget, paper, "generated shapes, not CIFAR-10: " + "; ".join(parts)
                      + f"; All is best for {all_best}/{len(PUBLISHED_FIGURE3)} encoders")


# ----------------------------------------------------------------------------- theorems

#: The paper's setting for the theorem checks: tau = 0.3, kappa = 1 / tau (Section 3).
TAU = 0.3
KAPPA = 1.0 / TAU


def _theory(checks: list[tuple[bool, str]], paper: str, method: str, start: float) -> Assessment:
    """A theorem's assessment: reproduced iff every check holds; budget = method and time taken."""
    verdict = claim_verdict(len(checks), len(checks), sum(ok for ok, _ in checks))
    budget = f"{method}, {time.perf_counter() - start:.1f} s at build"
    return Assessment(verdict, budget, paper, "; ".join(text for _, text in checks))


QUADRATURE = "quadrature on S² (error < 1e-10)"

#: What each theorem states, in the scorecard's words (the "paper" column).
STATEMENTS = {
    "Theorem 3.3": "L − log M → E H(P, Q_h) − log|Z|; for h = I, argmin over τ at 1/κ = 0.3",
    "Theorem 4.4": "the global minimisers are h(z) = Az, A ∈ O(3)",
    "Theorem 4.5": "some h_λ, λ < 1, has a lower loss than every orthogonal map",
    "Theorem 4.6 / A.4": "every h ∈ O(3) is a global minimiser (κτ = 1)",
    "Theorem A.5": "L(h ∘ m) = L(h): the corrected loss does not select O(3)",
}


def assess_theorem_3_3(store: ResultStore) -> Assessment:
    """Thm 3.3: InfoNCE - log M -> cross-entropy - log|Z|; for h = I minimised over tau at 1/kappa."""
    from scipy.optimize import minimize_scalar

    from cldiv.asymptotics import asymptotic_objective, identity_cross_entropy, monte_carlo_infonce

    start = time.perf_counter()
    closed = float(identity_cross_entropy(KAPPA, TAU))
    limit = asymptotic_objective(lambda z: z, KAPPA, TAU, method="sphere")
    finite = monte_carlo_infonce(lambda z: z, KAPPA, TAU, 4096, n_anchors=500, n_repeats=10, seed=0)
    best = minimize_scalar(lambda t: float(identity_cross_entropy(KAPPA, t)), bounds=(0.05, 3.0),
                           method="bounded", options={"xatol": 1e-8})
    return _theory([
        (abs(finite.mean - limit.infonce_limit) < 3 * finite.standard_error + 0.01,
         f"L − log M at M = 4096: {finite.mean:.3f} ± {finite.standard_error:.3f}, "
         f"limit {limit.infonce_limit:.3f}"),
        (abs(limit.value - closed) < 1e-6, f"cross-entropy {limit.value:.4f} = closed form {closed:.4f}"),
        (abs(best.x - 1 / KAPPA) < 1e-4, f"argmin τ = {best.x:.4f}"),
    ], STATEMENTS["Theorem 3.3"],
        "quadrature + Monte Carlo (10 × 500 anchors, M = 4096)", start)


def assess_theorem_4_4(store: ResultStore) -> Assessment:
    """Thm 4.4: under diversity every orthogonal h attains the minimum, non-orthogonal ones do not."""
    from cldiv.asymptotics import SmoothPerturbation, asymptotic_objective, h_lambda, random_orthogonal, vmf_entropy

    start = time.perf_counter()
    minimum = vmf_entropy(KAPPA)

    def excess(h) -> float:
        return asymptotic_objective(h, KAPPA, TAU).value - minimum

    orthogonal = max(abs(excess(random_orthogonal(seed, reflection=seed == 1))) for seed in range(2))
    others = {"h_λ (λ = 0.8)": excess(h_lambda(0.8)), "smooth perturbation": excess(SmoothPerturbation(0.2))}
    return _theory([
        (orthogonal < 1e-6, f"orthogonal maps: L − H(vMF) = {orthogonal:.0e}"),
        (min(others.values()) > 1e-4, ", ".join(f"{k}: +{v:.4f}" for k, v in others.items())),
    ], STATEMENTS["Theorem 4.4"], QUADRATURE, start)


def assess_theorem_4_5(store: ResultStore) -> Assessment:
    """Thm 4.5: restricted positives, full-sphere negatives: h_lambda with lambda < 1 beats O(3)."""
    from cldiv.asymptotics import asymptotic_objective, h_lambda, minimise_witness

    start = time.perf_counter()
    identity = asymptotic_objective(h_lambda(1.0), KAPPA, TAU, conditional="restricted").value
    lam, best = minimise_witness(KAPPA, TAU, conditional="restricted", negatives="sphere")
    return _theory([
        (lam < 1.0, f"λ* = {lam:.3f}"),
        (best.value < identity - 1e-6, f"L(h_λ*) − L(I) = {best.value - identity:.4f}"),
    ], STATEMENTS["Theorem 4.5"], QUADRATURE, start)


def assess_theorem_4_6(store: ResultStore) -> Assessment:
    """Thm 4.6 / A.4: support-corrected loss: orthogonal maps are global minimisers when kappa tau = 1."""
    from cldiv.asymptotics import asymptotic_objective, minimise_witness, random_orthogonal, restricted_entropy

    start = time.perf_counter()
    minimum = restricted_entropy(KAPPA)
    setting = dict(conditional="restricted", negatives="fibre")
    orthogonal = max(abs(asymptotic_objective(random_orthogonal(seed), KAPPA, TAU, **setting).value - minimum)
                     for seed in range(2))
    lam, _ = minimise_witness(KAPPA, TAU, **setting)
    return _theory([
        (orthogonal < 1e-6, f"orthogonal maps: L − E H(P^K) = {orthogonal:.0e}"),
        (abs(lam - 1.0) < 1e-3, f"best h_λ at λ = {lam:.3f}"),
    ], STATEMENTS["Theorem 4.6 / A.4"], QUADRATURE, start)


def assess_theorem_a5(store: ResultStore) -> Assessment:
    """Thm A.5: a measure- and conditional-preserving m leaves the support-corrected loss unchanged."""
    from cldiv.asymptotics import FibreRotation, asymptotic_objective, compose, random_orthogonal

    start = time.perf_counter()
    setting = dict(conditional="restricted", negatives="fibre", method="sphere")
    twist = FibreRotation(1.0)  # m: rotate each fibre K(z) by u radians, not linear
    diffs = [abs(asymptotic_objective(compose(h, twist), KAPPA, TAU, **setting).value
                 - asymptotic_objective(h, KAPPA, TAU, **setting).value)
             for h in (lambda z: z, random_orthogonal(0))]
    return _theory([(max(diffs) < 1e-6, f"|L(h ∘ m) − L(h)| = {max(diffs):.0e} for a non-linear m")],
                   STATEMENTS["Theorem A.5"], QUADRATURE, start)


# ----------------------------------------------------------------------------- the scorecard

CLAIMS: tuple[Claim, ...] = (
    Claim("Table 1", "R² of the recovery map: 5 processes × {holds, violated, adapted, + inductive bias}",
          "synthetic_benchmark", assess_table1),
    Claim("Table 3", "MCC, APE, final loss when diversity holds (MLP)", "synthetic_benchmark", assess_table3),
    Claim("Tables 4–6", "MCC, APE, final loss when diversity is violated", "synthetic_benchmark",
          assess_tables4_6),
    Claim("Figure 5a", "mean R²: MLP vs inverse encoders, holds vs violated", "synthetic_benchmark",
          assess_figure5a),
    Claim("Tables 8–11, Figure 5b", "constraint-ratio sweep ρ of the support-corrected loss",
          "constraint_ratio", assess_constraint_sweep),
    Claim("Table 7, Figure 5c", "progressive violation d_fixed = 0..10 on S⁹", "progressive_violation",
          assess_progressive_violation),
    Claim("Figure 3", "CIFAR-10 SimCLR: 3 encoders × 3 augmentation regimes", "cifar10", assess_figure3),
    Claim("Theorem 3.3", "InfoNCE − log M converges to a cross-entropy", "vmf_asymptotics",
          assess_theorem_3_3, needs_chapter=True),
    Claim("Theorem 4.4", "identifiability up to O(k) under the diversity condition", "identifiability",
          assess_theorem_4_4, needs_chapter=True),
    Claim("Theorem 4.5", "loss of identifiability when diversity is violated", "diversity_violation",
          assess_theorem_4_5, needs_chapter=True),
    Claim("Theorem 4.6 / A.4", "support-corrected InfoNCE makes orthogonal recovery achievable",
          "support_correction", assess_theorem_4_6, needs_chapter=True),
    Claim("Theorem A.5", "non-uniqueness: the corrected loss does not select O(k)", "support_correction",
          assess_theorem_a5, needs_chapter=True),
)


def scorecard(store: ResultStore | None = None, *, notebook_dir: Path = NOTEBOOK_DIR,
              claims: Sequence[Claim] = CLAIMS) -> list[Row]:
    """One ``Row`` per claim, computed now from ``store`` (default ``ResultStore.default()``)."""
    store = store or ResultStore.default()
    rows = []
    for claim in claims:
        exists = (Path(notebook_dir) / f"{claim.chapter}.md").exists()
        if claim.needs_chapter and not exists:
            assessment = Assessment("not yet run", paper=STATEMENTS.get(claim.name, "—"))
        else:
            assessment = claim.assess(store)
        rows.append(Row(claim.name, claim.what, claim.chapter, exists, **asdict(assessment)))
    return rows
