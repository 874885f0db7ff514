"""Table 1, Tables 3-6 and Figure 5a of the synthetic benchmark: cells, published numbers, summaries.

A *cell* is (column, process); each cell is run for several seeds. Columns (Section 3):

- ``holds``: MLP encoder, diversity holds (vMF positives on the sphere), InfoNCE;
- ``violated``: MLP, first coordinate fixed (d_fixed = 1), InfoNCE;
- ``adapted``: MLP, d_fixed = 1, support-corrected InfoNCE with all negatives on K(z) (rho = 1);
- ``inverse``: inverse encoder, d_fixed = 1, InfoNCE (Table 1's "+ inductive bias");
- ``inverse_holds``: inverse encoder, diversity holds (Figure 5a only).

The paper's numbers for these cells are in ``cldiv.published``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from cldiv.runs.verdicts import cell_agrees
from cldiv.config import check_choice, with_overrides
from cldiv import budgets
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.convergence import (NOT_CONVERGED_NOTE, converged, doubling_steps, longer_markdown, settled,
                                         unsettled_markdown)
from cldiv.runs.doubling import NOT_CONVERGED_MARK, SETTLED_LATER_MARK
from cldiv.synthetic.encoders import INVERSE_ENCODERS
from cldiv.published import published
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES

COLUMNS: dict[str, dict[str, Any]] = {
    "holds": {"encoder": "mlp", "d_fixed": 0, "loss": "infonce"},
    "violated": {"encoder": "mlp", "d_fixed": 1, "loss": "infonce"},
    "adapted": {"encoder": "mlp", "d_fixed": 1, "loss": "support_corrected", "rho": 1.0},
    "inverse": {"encoder": "inverse", "d_fixed": 1, "loss": "infonce"},
    "inverse_holds": {"encoder": "inverse", "d_fixed": 0, "loss": "infonce"},
}
#: The budget group (``cldiv.budgets.GROUPS``) whose sizes each column's runs get.
BUDGET_GROUP = {"holds": "holds", "violated": "violated", "adapted": "adapted", "inverse": "inverse",
                "inverse_holds": "inverse"}
TABLE1_COLUMNS = ("holds", "violated", "adapted", "inverse")
COLUMN_TITLES = {
    "holds": "holds",
    "violated": "violated",
    "adapted": "adapted",
    "inverse": "+ inductive bias",
    "inverse_holds": "inverse, holds",
}

# ---------------------------------------------------------------------------------------------
# Cells and configs
# ---------------------------------------------------------------------------------------------
def has_cell(column: str, process: str) -> bool:
    """Whether the paper has this cell (no inverse encoder for the Invertible MLP)."""
    return COLUMNS[column]["encoder"] == "mlp" or process in INVERSE_ENCODERS


def cell_config(column: str, process: str, seed: int = 0, budget: str | budgets.Budget = "cpu",
                **overrides) -> SyntheticConfig:
    """The config of one run of a cell under a budget (its name, or the ``Budget`` itself), with per-field
    ``overrides``."""
    check_choice("column", column, tuple(COLUMNS))
    check_choice("process", process, SYNTHETIC_PROCESSES)
    spec = budgets.budget("synthetic", budget) if isinstance(budget, str) else budget
    fields = {**spec.fields(BUDGET_GROUP[column]), **COLUMNS[column]}
    if (column, process) in spec.fp32_cells:
        fields["precision"] = "fp32"
    config = SyntheticConfig(process=process, seed=seed, **fields)
    return with_overrides(config, **overrides) if overrides else config


def table_configs(
    budget: str = "cpu",
    processes: Iterable[str] = SYNTHETIC_PROCESSES,
    seeds: int | None = None,
    columns: Iterable[str] = tuple(COLUMNS),
    **overrides,
) -> list[SyntheticConfig]:
    """Every run of the chosen cells: seeds x columns x processes (where the cell exists)."""
    spec = budgets.budget("synthetic", budget)
    seeds = spec.seeds if seeds is None else seeds
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer (runs per cell); got {seeds!r}")
    processes = list(processes)
    for process in processes:
        check_choice("process", process, SYNTHETIC_PROCESSES)
    columns = list(columns)
    return [  # seed-major: an interrupted run has whole seeds of every cell
        cell_config(column, process, seed, spec, **overrides)
        for seed in range(seeds)
        for column in columns
        for process in processes
        if has_cell(column, process)
    ]


def longer_table(found: dict, store) -> str:
    """The headline cells (``found``: ``cldiv.runs.verdicts.find_runs``) some of whose runs have not
    converged, one row per step of their ``cldiv.synthetic.convergence.doubling_steps`` (their runs at
    LONGER times the iterations, and again while that moved them) in ``store``, as a markdown table
    (``longer_markdown``) with the ``cldiv synthetic`` command that trains a step's longer runs, then a
    table of each complete step against the published R^2; "" if every run has converged."""
    steps = [(column, process, entry) for (column, process), (_, runs) in found.items()
             for entry in doubling_steps(runs, store)]
    rows = [(f"{process} {COLUMN_TITLES[column]}", entry,
             f"cldiv synthetic --budget {found[column, process][0]} --processes {process} --columns {column} "
             f"--seeds {1 + max(c.seed for c in entry[1])} --set iterations {entry[1][0].iterations}")
            for column, process, entry in steps]
    if not rows:
        return ""
    against = ["| cell | published R² | agrees (the scorecard's rule), shorter | longer |", "|---|---|---|---|"]
    for column, process, (runs, configs, stored) in steps:
        reference = published("r2", column, process)
        if reference and len(stored) == len(configs):
            agree = [f"{group[0]['config']['iterations']} it: "
                     + ("yes" if cell_agrees([r["metrics"]["r2"] for r in group], reference, "r2") else "no")
                     for group in (runs, stored)]
            against.append(f"| {process} {COLUMN_TITLES[column]} | {fmt(reference)} | {agree[0]} | {agree[1]} |")
    return longer_markdown(rows, "cell") + ("\n\n" + "\n".join(against) if len(against) > 2 else "")


def unsettled_table(found: dict) -> str:
    """``cldiv.synthetic.convergence.unsettled_markdown`` of the headline cells' runs (``found``:
    ``cldiv.runs.verdicts.find_runs``) that have not converged, each labelled by its cell and seed;
    "" if every run has converged."""
    return unsettled_markdown([(f"{process} {COLUMN_TITLES[column]}, seed {r['config']['seed']}", r)
                               for (column, process), (_, runs) in found.items() for r in runs])


def column_of(config: dict | SyntheticConfig) -> str:
    """The column a config belongs to (inverse of COLUMNS)."""
    get = config.get if isinstance(config, dict) else lambda k: getattr(config, k)
    for column, spec in COLUMNS.items():
        if all(get(k) == v for k, v in spec.items() if k != "rho"):
            return column
    raise ValueError(f"config matches no column of Table 1: {config}")


# ---------------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------------
def summarise(records: Iterable[dict], metrics: Iterable[str] = ("r2",),
              key: Callable[[dict], tuple] | None = None, store=None) -> dict:
    """{key: {metric: (mean, std, n) or None, "converged": (k, n), "settled": bool, "iterations": int}}
    over seeds (std: population, as numpy); "converged" counts the cell's runs that have converged,
    "settled" says whether the cell has, its runs at twice the iterations looked up in ``store``
    (``cldiv.synthetic.convergence.settled``); "iterations", the longest of its runs'.

    ``key(config)`` names a record's cell: (column, process) by default; sweeps group by grid fields.
    """
    key = key or (lambda config: (column_of(config), config["process"]))
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        groups.setdefault(key(record["config"]), []).append(record)
    out = {}
    for cell, records_of_cell in groups.items():
        runs = [record["metrics"] for record in records_of_cell]
        out[cell] = {"converged": (sum(map(converged, records_of_cell)), len(records_of_cell)),
                     "settled": settled(records_of_cell, store),
                     "iterations": max(record["config"]["iterations"] for record in records_of_cell)}
        for metric in metrics:
            values = np.array([run[metric] for run in runs if metric in run], dtype=float)
            out[cell][metric] = (float(values.mean()), float(values.std()), len(values)) if len(values) else None
    return out


def fmt(value: tuple | None, digits: int = 2) -> str:
    """'mean ± std' or 'N/A'."""
    if value is None:
        return "N/A"
    return f"{value[0]:.{digits}f} ± {value[1]:.{digits}f}"


def markdown_table(
    summary: dict,
    processes: Iterable[str],
    columns: Iterable[str],
    metric: str = "r2",
    digits: int = 2,
    show_published: bool = True,
    published_metric: str | None = None,
    trained_longer: Iterable[tuple] = (),
) -> str:
    """A markdown table, one row per process, 'ours (published)' in every cell; a cell that has not
    converged (``summarise``'s "settled") is marked ``NOT_CONVERGED_MARK``, explained under the table
    with how many of its runs have converged; a cell of ``trained_longer`` ((column, process), taken
    at the shortest length at which it converged: ``cldiv.runs.verdicts.settle``) is marked
    ``SETTLED_LATER_MARK``, with its iterations under the table.

    ``published_metric`` names the paper's metric to show beside ours when it differs (e.g.
    our "loss_m2000" beside the published "final_loss").
    """
    columns = list(columns)
    head = "| process | " + " | ".join(COLUMN_TITLES[c] for c in columns) + " |"
    lines = [head, "|---" * (len(columns) + 1) + "|"]
    unconverged, later, trained_longer = [], [], set(trained_longer)
    for process in processes:
        cells = []
        for column in columns:
            entry = summary.get((column, process), {})
            ours = entry.get(metric)
            text = fmt(ours[:2] if ours else None, digits)
            if ours and not entry["settled"]:
                done, runs = entry["converged"]
                text += f" {NOT_CONVERGED_MARK}"
                unconverged.append(f"{process} {COLUMN_TITLES[column]} ({done} of {runs} runs converged)")
            if ours and (column, process) in trained_longer:
                text += f" {SETTLED_LATER_MARK}"
                later.append(f"{process} {COLUMN_TITLES[column]} at {entry['iterations']}")
            if show_published and column in TABLE1_COLUMNS:
                text += f" ({fmt(published(published_metric or metric, column, process), digits)})"
            cells.append(text)
        lines.append(f"| {process} | " + " | ".join(cells) + " |")
    if unconverged:
        lines.append(f"\n{NOT_CONVERGED_MARK} {NOT_CONVERGED_NOTE}: " + "; ".join(unconverged) + ".")
    if later:
        lines.append(f"\n{SETTLED_LATER_MARK} trained longer than its budget's iterations: the shortest length at which "
                     "the cell converged (cldiv.synthetic.convergence.settled_runs): " + "; ".join(later) + " iterations.")
    return "\n".join(lines)


def within(value: float, target: tuple[float, float] | None, tolerance: float) -> bool:
    """Whether value lies within ``tolerance`` of a published mean (False if no number)."""
    return target is not None and math.isfinite(value) and abs(value - target[0]) <= tolerance


def shape_checks(mean_r2, processes: Iterable[str]) -> list[tuple[str, bool]]:
    """The claims of Table 1's shape, as (claim, holds?) on the R^2 means ``mean_r2(column, process)``.

    Per process: holds >= 0.98; violated below holds by more than 0.3 (and <= 0.3 for Identity
    and Linear); adapted strictly between violated and holds; the inverse encoder under
    violation >= 0.95 (Identity, Linear, Spiral) or >= 0.85 (Patches).
    """
    out = []
    for p in processes:
        holds, violated, adapted, inverse = (mean_r2(c, p) for c in TABLE1_COLUMNS)
        out.append((f"{p}: holds R^2 >= 0.98", holds >= 0.98))
        out.append((f"{p}: violated well below holds (by > 0.3)", holds - violated > 0.3))
        if p in ("identity", "linear"):
            out.append((f"{p}: violated R^2 <= 0.3", violated <= 0.3))
        out.append((f"{p}: adapted between violated and holds", violated < adapted < holds))
        if has_cell("inverse", p):
            threshold = 0.95 if p in ("identity", "linear", "spiral") else 0.85
            out.append((f"{p}: inverse encoder under violation >= {threshold}", inverse >= threshold))
    return out


def shape_checks_markdown(ours: list[tuple[str, bool]], published_checks: dict[str, bool]) -> str:
    """``shape_checks`` on our means beside the same checks on the published means, as a markdown table."""
    mark = {True: "yes", False: "**no**"}
    lines = ["| Table 1's shape | ours | published numbers |", "|---|---|---|"]
    lines += [f"| {claim} | {mark[ok]} | {mark[published_checks[claim]]} |" for claim, ok in ours]
    return "\n".join(lines)
