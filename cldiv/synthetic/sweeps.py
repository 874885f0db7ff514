"""The named sweeps of Section 4: grids of ``SyntheticConfig`` run through ``cldiv.runs.executor``.

- ``constraint_ratio`` (Tables 8-11, Fig. 5b): diversity violated (d_fixed = 1), support-corrected
  InfoNCE in which a fraction rho of each anchor's M negatives lies on K(z) and the rest is uniform
  on the sphere, rho in {0, 0.1, ..., 1}; every process of Table 1 with the MLP and with its inverse
  encoder (the Invertible MLP has none), 5 seeds. rho = 1 with the MLP is Table 1's "adapted" column.
- ``progressive_violation`` (Table 7, Fig. 5c): Z = S^9 mapped to R^70 by an injective linear map
  and by the monomial embedding, MLP encoder with hidden widths [512, 1024, 1024, 512, 256, 128,
  64, 32], InfoNCE, d_fixed = 0..10 (9: the free coordinate can only flip sign; 10: z~ = z), 5 seeds.

A budget (``cldiv.budgets``: ``paper``, ``cpu``, ``smoke``) is the config fields every run gets
plus the default axes (rhos, or d_fixed values and sign rules) and seeds. ``sweep_configs`` builds the grid, ``run_named_sweep`` runs
what the store lacks (locally or on Ray) and returns every record; ``summarise`` gives mean and
standard deviation over seeds per grid point.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any, Iterable

import numpy as np

from cldiv.runs.verdicts import SIGNIFICANCE, cell_agrees
from cldiv.synthetic.table1 import summarise, cell_config, column_of
from cldiv import budgets
from cldiv.config import check_choice, check_positive, check_subset, with_overrides
from cldiv.synthetic.config import POSITIVE_LAWS, SyntheticConfig
from cldiv.synthetic.encoders import INVERSE_ENCODERS
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES
from cldiv.runs.executor import EXECUTORS, grid, run_sweep
from cldiv.synthetic.train import run_synthetic
from cldiv.synthetic.convergence import (NOT_CONVERGED_NOTE, doubling_steps, longer_markdown, settled, settled_runs,
                                         unsettled_markdown)
from cldiv.runs.doubling import NOT_CONVERGED_MARK, SETTLED_LATER_MARK

SWEEPS = ("constraint_ratio", "progressive_violation")

SWEEP_ENCODERS = ("mlp", "inverse")
PROGRESSIVE_PROCESSES = ("injective_linear", "monomial")


def constraint_ratio_cells(processes: Iterable[str], encoders: Iterable[str]) -> list[tuple[str, str]]:
    """(process, encoder) pairs of the sweep: no inverse encoder for the Invertible MLP."""
    return [(p, e) for e in encoders for p in processes if e == "mlp" or p in INVERSE_ENCODERS]


def sweep_configs(
    name: str,
    budget: str = "cpu",
    *,
    processes: Iterable[str] | None = None,
    encoders: Iterable[str] | None = None,
    rhos: Iterable[float] | None = None,
    d_fixed: Iterable[int] | None = None,
    seeds: int | None = None,
    sign_rules: Iterable[str] | None = None,
    **overrides: Any,
) -> list[SyntheticConfig]:
    """Every config of sweep ``name`` under ``budget``; axes default to the budget's.

    constraint_ratio: ``processes`` (Table 1's five), ``encoders`` ("mlp", "inverse"), ``rhos``;
    progressive_violation: ``processes`` ("injective_linear", "monomial"), ``d_fixed`` (0..10), and
    ``sign_rules``: positive laws (``SyntheticConfig.positive_law``) run in addition to "paper" at
    d_fixed = k - 1, where the one free coordinate can only flip its sign and the rules differ
    (default: the budget's, ("code",): the authors' fair coin, which produced the published figure).
    ``overrides`` are SyntheticConfig fields for every run (e.g. ``iterations=1000``).
    Seed-major order: an interrupted sweep has whole seeds of every grid point.
    """
    check_choice("sweep", name, SWEEPS)
    spec = budgets.budget(name, budget)
    known = {f.name for f in fields(SyntheticConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        axes = ["processes", "encoders", "rhos"] if name == "constraint_ratio" else ["processes", "d_fixed", "sign_rules"]
        raise ValueError(f"unknown parameter(s) {unknown} of sweep {name!r}; allowed: {axes + ['seeds']} "
                         f"and the SyntheticConfig fields {sorted(known)}")
    seeds = spec.seeds if seeds is None else seeds
    check_positive("seeds", seeds, integer=True)
    base = {**spec.config, **overrides}
    configs: list[SyntheticConfig] = []
    if name == "constraint_ratio":
        if d_fixed is not None or sign_rules is not None:
            raise ValueError("d_fixed and sign_rules are parameters of sweep 'progressive_violation', not 'constraint_ratio'")
        processes = check_subset("processes", SYNTHETIC_PROCESSES if processes is None else processes,
                                SYNTHETIC_PROCESSES)
        encoders = check_subset("encoders", SWEEP_ENCODERS if encoders is None else encoders, SWEEP_ENCODERS)
        rhos = list(spec.axes["rhos"] if rhos is None else rhos)
        for rho in rhos:
            if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not 0 <= rho <= 1:
                raise ValueError(f"rhos must be numbers in [0, 1] (fractions of negatives on K(z)); got {rho!r}")
        cells = constraint_ratio_cells(processes, encoders)
        for seed in range(seeds):
            for process, encoder in cells:
                configs += grid(SyntheticConfig(process=process, encoder=encoder, seed=seed, **base),
                                rho=[float(r) for r in rhos])
    else:
        if rhos is not None or encoders is not None:
            raise ValueError("rhos and encoders are parameters of sweep 'constraint_ratio', not 'progressive_violation'")
        processes = check_subset("processes", PROGRESSIVE_PROCESSES if processes is None else processes,
                                PROGRESSIVE_PROCESSES)
        k = base.get("latent_dim", 10)
        d_values = check_subset("d_fixed", spec.axes["d_fixed"] if d_fixed is None else d_fixed, tuple(range(k + 1)))
        rules = list(spec.axes["sign_rules"] if sign_rules is None else sign_rules)
        if rules:
            check_subset("sign_rules", rules, POSITIVE_LAWS)
        if k - 1 not in d_values or "positive_law" in base:
            rules = []
        for seed in range(seeds):
            for process in processes:
                configs += grid(SyntheticConfig(process=process, seed=seed, **base), d_fixed=d_values)
                configs += [SyntheticConfig(process=process, seed=seed, d_fixed=k - 1, positive_law=rule, **base)
                            for rule in rules if rule != "paper"]
    return configs


def table7_code_config(process: str, d_fixed: int, seed: int = 0, iterations: int = 100) -> SyntheticConfig:
    """One run of the 10-D experiment as the authors' code ran it for Table 7 (PAPER.md, Section 4): the
    paper's widths in the code's block order (Linear -> ReLU -> BatchNorm), N = M = 2000, Adam at lr 1e-4,
    the code's injective map (diag(U(0,1)) over N(0,1), random bias), its fair sign coin at d_fixed = 9,
    float32, ``iterations`` steps (the script says 100) with the curve logged 50 times."""
    check_choice("process", process, PROGRESSIVE_PROCESSES)
    return SyntheticConfig(
        process=process, process_variant="code" if process == "injective_linear" else "paper", latent_dim=10,
        d_fixed=d_fixed, batch_size=2000, n_negatives=2000, iterations=iterations,
        eval_every=max(iterations // 50, 1), lr=1e-4, hidden_widths=budgets.PAPER_10D_WIDTHS,
        mlp_order="linear_relu_bn", positive_law="code", precision="fp32", seed=seed)


def run_named_sweep(
    name: str,
    budget: str = "cpu",
    executor: str = "local",
    *,
    workers: int | None = None,
    address: str | None = None,
    gpus_per_task: float = 0.0,
    store=None,
    progress: bool = True,
    **params: Any,
) -> list[dict]:
    """Run sweep ``name`` (only what the store lacks) and return every record in grid order; for the
    constraint-ratio sweep also its ``endpoint_companions`` (not returned).

    ``params``: the axes and config overrides of ``sweep_configs``.
    """
    check_choice("executor", executor, EXECUTORS)
    configs = sweep_configs(name, budget, **params)
    grid_runs = len(configs)
    if name == "constraint_ratio":
        configs += [c for c in endpoint_companions(configs) if c not in configs]
    records = run_sweep(configs, run_synthetic, store=store, executor=executor, workers=workers, address=address,
                        gpus_per_task=gpus_per_task, progress=progress)
    return records[:grid_runs]


#: Table 1's columns at the ends of the constraint-ratio sweep, (rho, encoder) -> column: rho = 0 is
#: InfoNCE under violated diversity (uniform negatives only), rho = 1 with the MLP the adapted loss.
ENDPOINT_COLUMNS = {(0.0, "mlp"): "violated", (0.0, "inverse"): "inverse", (1.0, "mlp"): "adapted"}


def endpoint_companions(configs: Iterable[SyntheticConfig]) -> list[SyntheticConfig]:
    """Table 1's cells at the settings of the constraint-ratio sweep's endpoints.

    For each run at rho = 0 or 1 whose (rho, encoder) is in ENDPOINT_COLUMNS, the same run with
    Table 1's sampler: InfoNCE with independent anchors and shared negatives (violated, inverse),
    or the support-corrected loss with per-anchor negatives (adapted) -- unless the run is itself a
    budget's Table 1 adapted cell (``is_table1_cell``), which is then its own companion. No config twice.
    """
    out = []
    for config in configs:
        column = ENDPOINT_COLUMNS.get((config.rho, config.encoder))
        if column == "adapted":
            out.append(config if is_table1_cell(config) else with_overrides(config, anchor_groups=0))
        elif column is not None:
            out.append(with_overrides(config, loss="infonce", rho=1.0, anchor_groups=0))
    return list(dict.fromkeys(out))


def is_table1_cell(config: SyntheticConfig) -> bool:
    """Whether ``config`` is a run of Table 1's adapted column under one of the synthetic budgets
    (the cpu budget's sweep at rho = 1 with the MLP is the paper budget's adapted cell)."""
    return config.process in SYNTHETIC_PROCESSES and any(
        config == cell_config("adapted", config.process, config.seed, name) for name in budgets.BUDGET_NAMES)


def sharing_configs(base: SyntheticConfig, process: str, group_sizes: Iterable[int], seeds: int) -> list[SyntheticConfig]:
    """The MLP runs of the constraint-ratio chapter's "price of sharing": ``base`` at rho = 0 for
    ``process``, anchors in groups of each size in ``group_sizes`` (1: independent anchors; each
    must divide ``base.batch_size``), seeds 0 .. seeds-1."""
    return [with_overrides(base, process=process, encoder="mlp", rho=0.0, seed=seed,
                           anchor_groups=base.batch_size // size)
            for size in dict.fromkeys([1, *group_sizes]) for seed in range(seeds)]


def endpoint_agreement(sweep_records: Iterable[dict], table_records: Iterable[dict], metric: str = "r2",
                       store=None) -> list[dict]:
    """The constraint-ratio sweep's endpoints against Table 1's cells of the same process and encoder.

    One row per sweep (process, encoder, rho) in ENDPOINT_COLUMNS whose Table 1 cell has two runs or
    more: both means and standard deviations, the runs, whether both have converged (``settled``,
    their longer runs looked up in ``store``), whether
    the two are the ``same`` runs (the sweep's point is a Table 1 cell, ``endpoint_companions``), and
    whether they agree by the scorecard's rule (``cldiv.runs.verdicts.cell_agrees``: within the
    floor, or Welch's t-test does not reject equal means), the Table 1 cell in the published one's
    place. The claim is that *every* end agrees, so the test's level is Bonferroni-corrected over the
    rows that are separate runs (SIGNIFICANCE / their number); with one test per row at 0.05, 14 ends
    drawn from equal laws would show a spurious disagreement about half the time. Same runs agree.
    """
    table: dict[tuple, list[dict]] = {}
    for record in table_records:
        table.setdefault((column_of(record["config"]), record["config"]["process"]), []).append(record)
    sweep: dict[tuple, list[dict]] = {}
    for record in sweep_records:
        config = record["config"]
        sweep.setdefault((config["process"], config["encoder"], float(config["rho"])), []).append(record)
    pairs = [(key, runs, table.get((ENDPOINT_COLUMNS[key[2], key[1]], key[0]), []))
             for key, runs in sorted(sweep.items()) if (key[2], key[1]) in ENDPOINT_COLUMNS]
    pairs = [(key, runs, cell, sorted(map(_config_key, runs)) == sorted(map(_config_key, cell)))
             for key, runs, cell in pairs if len(cell) >= 2]
    tests = max(1, sum(not same for *_, same in pairs))
    rows = []
    for (process, encoder, rho), runs, cell, same in pairs:
        ours, theirs = ([r["metrics"][metric] for r in group] for group in (runs, cell))
        reference = (float(np.mean(theirs)), float(np.std(theirs, ddof=1)))
        rows.append({"process": process, "encoder": encoder, "rho": rho, "column": ENDPOINT_COLUMNS[rho, encoder],
                     "sweep": (float(np.mean(ours)), float(np.std(ours, ddof=1)) if len(ours) > 1 else 0.0, len(ours)),
                     "table1": (*reference, len(theirs)),
                     "converged": settled(runs, store) and settled(cell, store), "same": same,
                     "agrees": same or cell_agrees(ours, reference, metric, runs=len(theirs),
                                                   significance=SIGNIFICANCE / tests)})
    return rows


def _config_key(record: dict) -> str:
    """A record's config as a canonical string, to tell whether two lists hold the same runs."""
    return json.dumps(record["config"], sort_keys=True)


#: The grid axis of each sweep (the x-axis of its figure) and the fields that make a curve.
SWEEP_AXIS = {"constraint_ratio": "rho", "progressive_violation": "d_fixed"}
SWEEP_CURVE = {"constraint_ratio": ("process", "encoder"), "progressive_violation": ("process", "positive_law")}
#: Field defaults, for records stored before a field was added (``cldiv.config.added_field``).
_DEFAULTS = {f.name: f.default for f in fields(SyntheticConfig)}


def summary_rows(name: str, records: Iterable[dict], metric: str = "r2", store=None) -> dict[tuple, dict]:
    """{curve key (``SWEEP_CURVE`` fields): {axis value: (mean, std, n)}} of one metric; with
    ``metric="converged"``, {axis value: (converged runs, runs)}; with ``metric="settled"``, {axis
    value: whether the point has converged}, its longer runs looked up in ``store``
    (``cldiv.synthetic.convergence.settled``)."""
    check_choice("sweep", name, SWEEPS)
    axis, curve = SWEEP_AXIS[name], SWEEP_CURVE[name]

    def cell(config: dict) -> tuple:
        return tuple(config.get(f, _DEFAULTS[f]) for f in (*curve, axis))

    out: dict[tuple, dict] = {}
    metrics = () if metric in ("converged", "settled") else (metric,)
    for key, stats in sorted(summarise(records, metrics, key=cell, store=store).items()):
        out.setdefault(key[:-1], {})[key[-1]] = stats[metric]
    return out


def markdown_summary(name: str, records: Iterable[dict], metric: str = "r2", digits: int = 2, store=None) -> str:
    """A markdown table of 'mean ± std' over seeds: one row per curve, one column per axis value;
    NOT_CONVERGED_MARK after a point that has not converged (``summary_rows``' "settled", its longer
    runs looked up in ``store``) and SETTLED_LATER_MARK after one whose runs are longer than the
    shortest (``settled_records``), both explained below the table."""
    records = list(records)
    rows, settled_points = summary_rows(name, records, metric), summary_rows(name, records, "settled", store)
    iterations = {key: runs[0]["config"]["iterations"] for key, runs in sweep_points(name, records).items()}
    shortest = min(iterations.values(), default=0)
    values = sorted({v for row in rows.values() for v in row})
    head = "| " + " / ".join(SWEEP_CURVE[name]) + " | " + " | ".join(f"{SWEEP_AXIS[name]} = {v:g}" for v in values) + " |"
    lines = [head, "|---" * (len(values) + 1) + "|"]
    unsettled, later = 0, []
    for key, row in rows.items():
        cells = []
        for v in values:
            mark = NOT_CONVERGED_MARK if not settled_points[key].get(v, True) else ""
            unsettled += bool(mark)
            if v in row and iterations[(*key, v)] > shortest:
                mark += SETTLED_LATER_MARK
                later.append(f"{point_label(name, (*key, v))} at {iterations[(*key, v)]}")
            cells.append(f"{row[v][0]:.{digits}f} ± {row[v][1]:.{digits}f}{mark}" if v in row else "")
        lines.append("| " + " / ".join(key) + " | " + " | ".join(cells) + " |")
    total = sum(map(len, rows.values()))
    lines.append(f"\n{NOT_CONVERGED_MARK} {NOT_CONVERGED_NOTE} ({unsettled} of {total} points)." if unsettled
                 else f"\nAll {total} points have converged (cldiv.synthetic.convergence.settled).")
    if later:
        lines.append(f"\n{SETTLED_LATER_MARK} trained for longer than the other points' {shortest} iterations: the "
                     f"shortest length at which the point converged (cldiv.synthetic.convergence.settled_runs): "
                     f"{'; '.join(later)} iterations.")
    return "\n".join(lines)


def settled_records(name: str, records: Iterable[dict], store) -> list[dict]:
    """The runs of every point of sweep ``name`` (``sweep_points`` of ``records``) at the shortest
    length at which the point has converged (``cldiv.synthetic.convergence.settled_runs``, in
    ``store``), or its own runs where the store holds no such length."""
    return [r for runs in sweep_points(name, records).values() for r in settled_runs(runs, store) or runs]


def sweep_points(name: str, records: Iterable[dict]) -> dict[tuple, list[dict]]:
    """The runs of each grid point of sweep ``name``: key (the ``SWEEP_CURVE`` fields, then the
    ``SWEEP_AXIS`` value) -> records."""
    check_choice("sweep", name, SWEEPS)
    keys = (*SWEEP_CURVE[name], SWEEP_AXIS[name])
    points: dict[tuple, list[dict]] = {}
    for record in records:
        points.setdefault(tuple(record["config"].get(f, _DEFAULTS[f]) for f in keys), []).append(record)
    return points


#: The ``sweep_configs`` axis that selects one value of a grid field; other fields are overrides.
_SWEEP_PARAM = {"process": "processes", "encoder": "encoders", "rho": "rhos", "d_fixed": "d_fixed"}


def longer_table(name: str, records: Iterable[dict], budget: str, store) -> str:
    """The points of sweep ``name`` (``sweep_points`` of ``records``) some of whose runs have not
    converged or that have not settled, one row per step of their
    ``cldiv.synthetic.convergence.doubling_steps`` (their runs at LONGER times the iterations, and
    again while that moved them) in ``store``, as a markdown table (``longer_markdown``) with the
    ``cldiv sweep`` command that trains a step's longer runs; "" if every run has converged."""
    fields_of_key = (*SWEEP_CURVE[name], SWEEP_AXIS[name])
    rows = []
    for key, runs in sweep_points(name, records).items():
        point = " ".join(f'-p {_SWEEP_PARAM[f]} "[{v!r}]"' if f in _SWEEP_PARAM else f"-p {f} {v}"
                         for f, v in zip(fields_of_key, key))
        for entry in doubling_steps(runs, store):
            command = (f"cldiv sweep {name} --budget {budget} {point} -p seeds {1 + max(c.seed for c in entry[1])} "
                       f"-p iterations {entry[1][0].iterations}")
            rows.append((point_label(name, key), entry, command))
    return longer_markdown(rows, "point") if rows else ""


def point_label(name: str, key: tuple) -> str:
    """A grid point of sweep ``name`` (a ``sweep_points`` key) in words: "monomial / paper, d_fixed = 9"."""
    return " / ".join(map(str, key[:-1])) + f", {SWEEP_AXIS[name]} = {key[-1]:g}"


def unsettled_table(name: str, records: Iterable[dict]) -> str:
    """``cldiv.synthetic.convergence.unsettled_markdown`` of the runs of sweep ``name`` that have not
    converged, each labelled by its point and seed; "" if every run has converged."""
    return unsettled_markdown([(f"{point_label(name, key)}, seed {r['config']['seed']}", r)
                               for key, runs in sweep_points(name, records).items() for r in runs])


def format_summary(name: str, records: list[dict], store=None) -> str:
    """The R^2 table of a sweep (what ``cldiv sweep`` prints), its points' longer runs looked up in ``store``."""
    return f"R^2 (mean ± std over seeds)\n{markdown_summary(name, records, store=store)}"


_PROCESS_COLOURS = {p: f"C{i}" for i, p in enumerate(SYNTHETIC_PROCESSES + PROGRESSIVE_PROCESSES)}


def plot_metric(ax, name: str, records: Iterable[dict], metric: str = "r2", *, bars: bool = False) -> None:
    """One line per curve of a sweep: mean of ``metric`` over seeds against the sweep's axis,
    with a band (or, with ``bars``, error bars) of ± one standard deviation."""
    for key, row in summary_rows(name, list(records), metric).items():
        xs = sorted(row)
        mean = np.array([row[x][0] for x in xs])
        std = np.array([row[x][1] for x in xs])
        colour = _PROCESS_COLOURS.get(key[0])  # one colour per process in every panel
        label, style = " / ".join(key), "-" if key[1] in ("mlp", "paper") else "--"
        if bars:
            ax.errorbar(xs, mean, yerr=std, marker="o", markersize=3, capsize=3, label=label, color=colour,
                        linestyle=style)
            continue
        (line,) = ax.plot(xs, mean, marker="o", markersize=3, label=label, color=colour, linestyle=style)
        ax.fill_between(xs, mean - std, mean + std, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel(SWEEP_AXIS[name])
    ax.grid(alpha=0.3)
