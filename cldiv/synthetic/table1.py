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
from dataclasses import asdict
from typing import Any, Callable, Iterable

import numpy as np

from cldiv.runs.verdicts import cell_agrees
from cldiv.config import check_choice, with_overrides
from cldiv import budgets
from cldiv.synthetic.config import SyntheticConfig
from cldiv.runs.doubling import LONGER
from cldiv.synthetic.convergence import (DOUBLING, NOT_CONVERGED_MARK, NOT_CONVERGED_NOTE, SETTLED_LATER_MARK,
                                         converged, doubling_steps, longer_markdown, r2_change, r2_converged, settled,
                                         unsettled_markdown)
from cldiv.synthetic.encoders import INVERSE_ENCODERS
from cldiv.published import published
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES
from cldiv.synthetic.train import scatter_latents

COLUMNS: dict[str, dict[str, Any]] = {
    "holds": {"encoder": "mlp", "d_fixed": 0, "loss": "infonce"},
    "violated": {"encoder": "mlp", "d_fixed": 1, "loss": "infonce"},
    "adapted": {"encoder": "mlp", "d_fixed": 1, "loss": "support_corrected", "rho": 1.0},
    "inverse": {"encoder": "inverse", "d_fixed": 1, "loss": "infonce"},
    "inverse_holds": {"encoder": "inverse", "d_fixed": 0, "loss": "infonce"},
}
_GROUP = {"holds": "holds", "violated": "violated", "adapted": "adapted", "inverse": "inverse",
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


def cell_config(column: str, process: str, seed: int = 0, budget: str = "cpu", **overrides) -> SyntheticConfig:
    """The config of one run of a cell under a budget, with per-field ``overrides``."""
    check_choice("column", column, tuple(COLUMNS))
    check_choice("process", process, SYNTHETIC_PROCESSES)
    fields = {**budgets.overrides("synthetic", budget, _GROUP[column]), **COLUMNS[column]}
    if (column, process) in budgets.budget("synthetic", budget).fp32_cells:
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
    seeds = budgets.budget("synthetic", budget).seeds if seeds is None else seeds
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer (runs per cell); got {seeds!r}")
    processes = list(processes)
    for process in processes:
        check_choice("process", process, SYNTHETIC_PROCESSES)
    columns = list(columns)
    return [  # seed-major: an interrupted run has whole seeds of every cell
        cell_config(column, process, seed, budget, **overrides)
        for seed in range(seeds)
        for column in columns
        for process in processes
        if has_cell(column, process)
    ]


# Differences between the paper and the authors' code that change training (errata chapter,
# items 1-4): (label, column, process, overrides). The baseline is the same cell without them;
# the cpu budget uses the code's block order, so that row's variant is the paper's order.
ERRATA_VARIANTS = (
    ("Adam lr 1e-4 (code)", "holds", "identity", {"lr": 1e-4}),
    ("Adam lr 1e-4 (code)", "violated", "identity", {"lr": 1e-4}),
    ("block order Linear-BN-ReLU (paper)", "holds", "spiral", {"mlp_order": "linear_bn_relu"}),
    ("block order Linear-BN-ReLU (paper)", "holds", "invertible_mlp", {"mlp_order": "linear_bn_relu"}),
    ("block order Linear-BN-ReLU (paper)", "violated", "identity", {"mlp_order": "linear_bn_relu"}),
    ("Linear process: code's affine W", "violated", "linear", {"process_variant": "code"}),
    ("Patches: code's definition", "holds", "patches", {"process_variant": "code"}),
    ("Patches: code's definition", "violated", "patches", {"process_variant": "code"}),
    ("Patches: code's definition", "inverse", "patches", {"process_variant": "code"}),
)
# The cells the cpu budget's batch size was chosen on (synthetic chapter).
SMALL_BATCH_CELLS = (("holds", "patches"), ("violated", "linear"))


def errata_pairs(budget: str = "cpu", seeds: int = 1) -> list[tuple[int, SyntheticConfig, SyntheticConfig]]:
    """(index into ERRATA_VARIANTS, the book's config, the variant's config) per variant and seed."""
    return [(i, cell_config(column, process, s, budget), cell_config(column, process, s, budget, **changes))
            for i, (_, column, process, changes) in enumerate(ERRATA_VARIANTS) for s in range(seeds)]


def quarter_batch(config: SyntheticConfig) -> SyntheticConfig:
    """``config`` with a quarter of the batch and negatives and four times the iterations
    (the same number of samples)."""
    return with_overrides(config, batch_size=config.batch_size // 4, n_negatives=config.n_negatives // 4,
                          iterations=4 * config.iterations, eval_every=4 * config.eval_every)


# The adapted column's budget (synthetic chapter): its cells resized, as (label, the config's
# changes as a function of the config); the first row is the budget's own. The others spend
# about 8x its compute three ways: on iterations, on anchors and negatives (per-anchor negatives
# cost 2N + N M encoder points a step, ``encoder_points``), and on anchors in groups of 4 that
# share their negatives (2N + G M).
ADAPTED_SIZES = (
    ("the budget's", lambda c: {}),
    ("8x iterations", lambda c: {"iterations": 8 * c.iterations, "eval_every": 8 * c.eval_every}),
    ("4x anchors, 2x negatives", lambda c: {"batch_size": 4 * c.batch_size, "n_negatives": 2 * c.n_negatives}),
    ("16x anchors in groups of 4, 2x negatives",
     lambda c: {"batch_size": 16 * c.batch_size, "n_negatives": 2 * c.n_negatives, "anchor_groups": 4 * c.batch_size}),
    ("16x anchors in groups of 4, 2x negatives, 2x iterations",
     lambda c: {"batch_size": 16 * c.batch_size, "n_negatives": 2 * c.n_negatives, "anchor_groups": 4 * c.batch_size,
                "iterations": 2 * c.iterations, "eval_every": 2 * c.eval_every}),
)
# The cells it is measured on: two of the cpu budget's adapted cells with the most unconverged runs.
ADAPTED_STUDY_PROCESSES = ("identity", "invertible_mlp")
ADAPTED_STUDY_SEEDS = 3


def adapted_study_configs(budget: str = "cpu", processes: Iterable[str] = ADAPTED_STUDY_PROCESSES,
                          seeds: int = ADAPTED_STUDY_SEEDS) -> list[tuple[str, SyntheticConfig]]:
    """(label of ADAPTED_SIZES, config) for every size, process and seed of the adapted-budget study."""
    out = []
    for label, changes in ADAPTED_SIZES:
        for p in processes:
            for s in range(seeds):
                config = cell_config("adapted", p, s, budget)
                out.append((label, with_overrides(config, **changes(config))))
    return out


def settled_sizes(rows: Iterable[tuple[str, SyntheticConfig, dict]]) -> list[str]:
    """The labels of the adapted-budget study's sizes (rows: (label, config, record)) at which every
    run converged, costliest first (encoder points a step times iterations)."""
    rows = list(rows)
    labels = dict.fromkeys(label for label, _, _ in rows)
    every_run = [label for label in labels if all(converged(record) for name, _, record in rows if name == label)]
    cost = {label: config.iterations * encoder_points(config) for label, config, _ in rows}
    return sorted(every_run, key=lambda label: -cost[label])


# The cells whose cpu-budget means miss Table 1's shape (synthetic chapter), rerun at a larger
# budget's sizes with every other field unchanged: (column, process, overrides). The last row
# is the errata's "code's Patches definition" at those sizes.
RERUN_CELLS = (
    ("holds", "patches", {}),
    ("inverse", "patches", {}),
    ("inverse", "spiral", {}),
    ("inverse", "patches", {"process_variant": "code"}),
)
SIZE_FIELDS = ("batch_size", "n_negatives", "iterations", "eval_every")
# The Patches + inductive-bias cell under the authors' code's protocol, one difference at a time: its
# definition of Patches and its Adam lr 1e-4 (errata chapter, items 1 and 4), at its inverse-encoder
# length, about 10,000 iterations, CODE_INVERSE_LENGTH times the paper's 5000 (PAPER.md, section 3):
# (Patches definition, Adam lr, overrides). The first row is the paper's protocol at that length.
PATCHES_IB_PROTOCOLS = (
    ("paper's", "1e-3 (paper)", {}),
    ("paper's", "1e-4 (code)", {"lr": 1e-4}),
    ("code's", "1e-3 (paper)", {"process_variant": "code"}),
    ("code's", "1e-4 (code)", {"process_variant": "code", "lr": 1e-4}),
)
CODE_INVERSE_LENGTH = 2
PATCHES_IB_SEEDS = 3  # runs per row (at most; fewer if the chapter's seeds are fewer)
# Seeds of the Spiral inverse-encoder cell (beyond the budget's) that measure how often it
# settles on the mirrored control c = -z_3 (``mirrored_spiral``).
SPIRAL_BASIN_SEEDS = 20


def resized(config: SyntheticConfig, budget: str) -> SyntheticConfig:
    """``config`` with the sizes (SIZE_FIELDS) that ``budget`` gives its column."""
    sizes = budgets.overrides("synthetic", budget, _GROUP[column_of(config)])
    return with_overrides(config, **{name: sizes[name] for name in SIZE_FIELDS if name in sizes})


def rerun_pairs(budget: str, processes: Iterable[str], seeds: int, rerun_at: str,
                **overrides) -> list[tuple[int, SyntheticConfig, SyntheticConfig]]:
    """(index into RERUN_CELLS, the run under ``budget``, the same run at ``rerun_at``'s sizes)
    for the RERUN_CELLS of ``processes``, seeds 0 .. seeds-1, ``overrides`` on every run."""
    processes = set(processes)
    pairs = []
    for i, (column, p, changes) in enumerate(RERUN_CELLS):
        for s in range(seeds if p in processes else 0):
            config = cell_config(column, p, s, budget, **{**overrides, **changes})
            pairs.append((i, config, resized(config, rerun_at)))
    return pairs


def patches_ib_protocol_configs(budget: str, seeds: int) -> list[list[SyntheticConfig]]:
    """Per row of PATCHES_IB_PROTOCOLS, the Patches + inductive-bias runs of seeds 0 .. seeds-1 at
    ``budget``'s sizes and CODE_INVERSE_LENGTH times its iterations."""
    iterations = CODE_INVERSE_LENGTH * cell_config("inverse", "patches", 0, budget).iterations
    return [[cell_config("inverse", "patches", s, budget, iterations=iterations, **changes) for s in range(seeds)]
            for _, _, changes in PATCHES_IB_PROTOCOLS]


def patches_ib_protocol_markdown(rows: list[list[dict]], store) -> str:
    """The runs of ``patches_ib_protocol_configs`` (one list per row of PATCHES_IB_PROTOCOLS) as a
    markdown table: held-out R^2 (mean ± sd, runs converged by their curves), the same runs trained
    LONGER times as long where ``store`` holds them all, and whether that moved the mean."""
    lines = [f"| Patches definition | Adam lr | R², {rows[0][0]['config']['iterations']} iterations "
             f"| R², {LONGER}x as long | moved? | published |", "|---|---|---|---|---|---|"]
    target = fmt(published("r2", "inverse", "patches"))
    for (definition, lr, _), runs in zip(PATCHES_IB_PROTOCOLS, rows):
        longer = DOUBLING.stored_longer(runs, store)
        done = None not in longer
        lines.append(f"| {definition} | {lr} | {r2_converged(runs)} | {r2_converged(longer) if done else 'not run'} "
                     f"| {r2_change(runs, longer) if done else ''} | {target} |")
    return "\n".join(lines)


# The MLP block order at the paper's sizes (errata chapter, item 2): the cells whose number the order
# decided in the errata chapter's `cpu`-budget pairs (violated Identity: R^2 1/3 with the code's order
# Linear-ReLU-BN, about 0 with the paper's Linear-BN-ReLU; Spiral holds: 1.00 and 0.66), each with
# both orders at a budget's sizes.
BLOCK_ORDER_CELLS = (("violated", "identity"), ("holds", "spiral"))
BLOCK_ORDERS = (("code's", "linear_relu_bn"), ("paper's", "linear_bn_relu"))
BLOCK_ORDER_SEEDS = 3  # runs per cell and order (at most; fewer if the chapter's seeds are fewer)


def block_order_configs(budget: str, seeds: int) -> list[list[list[SyntheticConfig]]]:
    """Per cell of BLOCK_ORDER_CELLS, per order of BLOCK_ORDERS, the runs of seeds 0 .. seeds-1 at
    ``budget`` with that MLP block order."""
    return [[[cell_config(column, process, s, budget, mlp_order=order) for s in range(seeds)]
             for _, order in BLOCK_ORDERS] for column, process in BLOCK_ORDER_CELLS]


def block_order_markdown(rows: list[list[list[dict]]]) -> str:
    """The runs of ``block_order_configs`` as a markdown table: per cell, the held-out R^2 (mean ± sd,
    runs converged by their curves) with each block order, and the published value."""
    lines = ["| cell | " + " | ".join(f"{name} order ({order})" for name, order in BLOCK_ORDERS) + " | published |",
             "|---" * (len(BLOCK_ORDERS) + 2) + "|"]
    for (column, process), cell in zip(BLOCK_ORDER_CELLS, rows):
        lines.append(f"| {process} {COLUMN_TITLES[column]} | " + " | ".join(r2_converged(runs) for runs in cell)
                     + f" | {fmt(published('r2', column, process))} |")
    return "\n".join(lines)


def longer_table(found: dict, store) -> str:
    """The headline cells (``found``: ``cldiv.runs.verdicts.find_runs``) some of whose runs have not
    converged, one row per step of their ``cldiv.synthetic.convergence.doubling_steps`` (their runs at
    LONGER times the iterations, and again while that moved them) in ``store``, as a markdown table
    (``longer_markdown``) with the ``cldiv synthetic`` command that trains a step's longer runs, then
    each complete step against the published R^2; "" if every run has converged."""
    steps = [(column, process, entry) for (column, process), (_, runs) in found.items()
             for entry in doubling_steps(runs, store)]
    rows = [(f"{process} {COLUMN_TITLES[column]}", entry,
             f"cldiv synthetic --budget {found[column, process][0]} --processes {process} --columns {column} "
             f"--seeds {1 + max(c.seed for c in entry[1])} --set iterations {entry[1][0].iterations}")
            for column, process, entry in steps]
    if not rows:
        return ""
    verdicts = []
    for column, process, (runs, configs, stored) in steps:
        reference = published("r2", column, process)
        if reference and len(stored) == len(configs):
            agree = ["agrees" if cell_agrees([r["metrics"]["r2"] for r in group], reference, "r2") else "disagrees"
                     for group in (runs, stored)]
            verdicts.append(f"{process} {COLUMN_TITLES[column]} {agree[0]} at {runs[0]['config']['iterations']} "
                            f"and {agree[1]} at {configs[0].iterations} iterations")
    against = (" Against the published R² (the scorecard's rule, were the runs converged): "
               + "; ".join(verdicts) + ".") if verdicts else ""
    return longer_markdown(rows, "cell") + against


def unsettled_table(found: dict) -> str:
    """``cldiv.synthetic.convergence.unsettled_markdown`` of the headline cells' runs (``found``:
    ``cldiv.runs.verdicts.find_runs``) that have not converged, each labelled by its cell and seed;
    "" if every run has converged."""
    return unsettled_markdown([(f"{process} {COLUMN_TITLES[column]}, seed {r['config']['seed']}", r)
                               for (column, process), (_, runs) in found.items() for r in runs])


def companion_configs(budget: str = "cpu", processes: Iterable[str] = SYNTHETIC_PROCESSES) -> list[SyntheticConfig]:
    """The runs the chapters show besides Table 1's cells, for ``processes``: the errata variants
    (seed 0), the quarter-batch reruns of SMALL_BATCH_CELLS (seed 0), the Spiral inverse encoder's
    extra seeds (up to SPIRAL_BASIN_SEEDS), if the budget names a ``rerun_at`` budget, both
    runs of every ``rerun_pairs`` pair for the budget's seeds, and the adapted-budget study
    (``adapted_study_configs``). No config twice."""
    processes = list(processes)
    variants = [v for _, _, v in errata_pairs(budget)]
    small = [quarter_batch(cell_config(column, p, 0, budget)) for column, p in SMALL_BATCH_CELLS if p in processes]
    seeds, rerun_at = budgets.budget("synthetic", budget).seeds, budgets.budget("synthetic", budget).rerun_at
    basin = [cell_config("inverse", "spiral", s, budget)
             for s in range(seeds, SPIRAL_BASIN_SEEDS) if "spiral" in processes]
    reruns = [c for _, base, big in rerun_pairs(budget, processes, seeds, rerun_at) for c in (base, big)] if rerun_at else []
    adapted = [c for _, c in adapted_study_configs(budget, [p for p in ADAPTED_STUDY_PROCESSES if p in processes])]
    return list(dict.fromkeys(variants + small + basin + reruns + adapted))


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


def mirrored_spiral(record: dict) -> bool:
    """Whether a Spiral inverse-encoder run settled on the mirrored control c = -z_3.

    The encoder predicts c (z_3 when it inverts g), rotates (x_1, x_2) by -n pi c and outputs
    normalise(x_1', x_2', c). With c = -z_3 it doubles g's rotation by n pi z_3 instead of
    undoing it: a twisted map that InfoNCE does not leave (a local optimum). Read off the
    stored images of the scatter latents: h_3 decreases with z_3 (negative correlation).
    """
    config = record["config"]
    if (config["process"], config["encoder"]) != ("spiral", "inverse"):
        raise ValueError(f"mirrored_spiral needs a Spiral inverse-encoder run; got process={config['process']!r}, "
                         f"encoder={config['encoder']!r}")
    z = scatter_latents(config["latent_dim"]).numpy()
    h = np.asarray(record["scatter_h"])
    return bool(np.corrcoef(h[:, 2], z[:, 2])[0, 1] < 0)


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


def adapted_study_table(rows: Iterable[tuple[str, SyntheticConfig, dict]]) -> str:
    """The adapted-budget study as a markdown table: per size (``ADAPTED_SIZES``), its shape and
    cost, and per process the held-out R^2 over seeds with how many runs converged."""
    rows = list(rows)
    processes = list(dict.fromkeys(config.process for _, config, _ in rows))
    lines = ["| size | anchors × negatives, iterations | points a step | "
             + " | ".join(f"{p}: R² (converged)" for p in processes) + " | s per run |",
             "|---" * (len(processes) + 4) + "|"]
    for label in dict.fromkeys(label for label, _, _ in rows):
        mine = [(config, record) for name, config, record in rows if name == label]
        config = mine[0][0]
        groups = f" in {config.anchor_groups} groups" if config.anchor_groups else ""
        cells = []
        for p in processes:
            cell = summarise([record for c, record in mine if c.process == p]).get(("adapted", p))
            cells.append(f"{fmt(cell['r2'][:2])} ({cell['converged'][0]}/{cell['converged'][1]})" if cell else "—")
        seconds = np.median([record["provenance"]["wall_time_s"] for _, record in mine])
        lines.append(f"| {label} | {config.batch_size}{groups} × {config.n_negatives}, {config.iterations} | "
                     f"{encoder_points(config):,} | " + " | ".join(cells) + f" | {seconds:.0f} |")
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
