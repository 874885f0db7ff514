"""The synthetic chapter's side studies of Table 1: the runs besides its cells and how they are read.

- the errata variants (the authors' code's learning rate, block order, Linear and Patches definitions),
  each against the same cell without it (``ERRATA_VARIANTS``, ``errata_pairs``);
- the cells the ``cpu`` budget's batch size was chosen on, rerun at a quarter of the batch
  (``SMALL_BATCH_CELLS``, ``quarter_batch``);
- the adapted column's size study (``ADAPTED_SIZES``);
- the cells that miss Table 1's shape at the ``cpu`` budget, rerun at a bigger one (``RERUN_CELLS``);
- the Patches inverse encoder under three protocols, the two MLP block orders, the Spiral inverse
  encoder's basin over many seeds (``mirrored_spiral``).

``chapter_runs`` lists them with Table 1's cells, section by section: what ``cldiv synthetic`` trains
and the synthetic chapter loads.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from cldiv import budgets
from cldiv.config import with_overrides
from cldiv.published import published
from cldiv.runs.doubling import LONGER
from cldiv.runs.verdicts import FLOOR
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.convergence import DOUBLING, converged, r2_change, r2_converged
from cldiv.synthetic.cost import encoder_points
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES
from cldiv.synthetic.table1 import BUDGET_GROUP, COLUMN_TITLES, cell_config, column_of, fmt, summarise, table_configs
from cldiv.synthetic.train import scatter_latents


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
    sizes = budgets.overrides("synthetic", budget, BUDGET_GROUP[column_of(config)])
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


def mirrored_numbers(runs: list[dict]) -> dict[str, float]:
    """Spiral inverse-encoder runs (``runs``) in numbers: how many settled on the mirrored control
    (``mirrored_spiral``; ``mirrored`` of ``basin``), how many miss the published R^2 by more than the floor
    (``missed``) and how many of those are mirrored (``missed_mirrored``), and the lowest and highest R^2 of
    the others (``others_low``, ``others_high``; nan if none); and the probability that five runs all avoid the
    mirrored control at that rate (``avoid_in_five``), as five published runs did."""
    below = published("r2", "inverse", "spiral")[0] - FLOOR["r2"]
    mirrored = [r for r in runs if mirrored_spiral(r)]
    others = [r["metrics"]["r2"] for r in runs if not mirrored_spiral(r)]
    missed = [r for r in runs if r["metrics"]["r2"] < below]
    return {"mirrored": len(mirrored), "basin": len(runs), "missed": len(missed),
            "missed_mirrored": sum(map(mirrored_spiral, missed)),
            "others_low": min(others, default=float("nan")), "others_high": max(others, default=float("nan")),
            "avoid_in_five": (1 - len(mirrored) / len(runs)) ** 5 if runs else float("nan")}


def small_batch_markdown(pairs: list[tuple[str, str, dict, dict]]) -> str:
    """The batch-size comparison as a markdown table: per (column, process, main run, its ``quarter_batch``
    run), both runs' batch, iterations and R^2, the published value, and which ends closer to it."""
    lines = ["| cell | N, iterations | $R^2$ | quarter batch: N, iterations | $R^2$ | published | closer |",
             "|---|---|---|---|---|---|---|"]
    for column, process, main, small in pairs:
        target = published("r2", column, process)
        big_r2, small_r2 = main["metrics"]["r2"], small["metrics"]["r2"]
        closer = "large batch" if abs(big_r2 - target[0]) < abs(small_r2 - target[0]) else "small batch"
        lines.append(f"| {process} {COLUMN_TITLES[column]} | {main['config']['batch_size']}, {main['config']['iterations']} | "
                     f"{big_r2:.3f} | {small['config']['batch_size']}, {small['config']['iterations']} | {small_r2:.3f} | "
                     f"{fmt(target)} | {closer} |")
    return "\n".join(lines)


def rerun_values(pairs: list[tuple[int, SyntheticConfig, SyntheticConfig]], runs: list[dict],
                 metric: str = "r2") -> dict[int, tuple[list[float], list[float]]]:
    """``metric`` of the runs of ``rerun_pairs`` (``runs``: each pair's two runs in turn): row of RERUN_CELLS ->
    ([at the budget's sizes], [at rerun_at's sizes]), one value per seed."""
    values: dict[int, tuple[list[float], list[float]]] = {}
    for (i, _, _), small, big in zip(pairs, runs[0::2], runs[1::2]):
        values.setdefault(i, ([], []))
        values[i][0].append(small["metrics"][metric])
        values[i][1].append(big["metrics"][metric])
    return values


def rerun_markdown(pairs: list[tuple[int, SyntheticConfig, SyntheticConfig]], r2: dict[int, tuple[list[float], list[float]]]) -> str:
    """``rerun_values`` of R^2 as a markdown table: per row of RERUN_CELLS, its sizes and R^2 at the budget's
    and at rerun_at's sizes (mean ± std over seeds), and the published value."""
    first = {i: (base, big) for i, base, big in reversed(pairs)}
    lines = ["| cell | N = M, iterations | $R^2$ | rerun: N = M, iterations | $R^2$ | published |", "|---|---|---|---|---|---|"]
    for i, (small, big_r2) in r2.items():
        column, process, changes = RERUN_CELLS[i]
        base, big = first[i]
        name = f"{process} {COLUMN_TITLES[column]}" + (" (code's definition)" if changes else "")
        lines.append(f"| {name} | {base.batch_size}, {base.iterations} | {fmt((np.mean(small), np.std(small)))} | "
                     f"{big.batch_size}, {big.iterations} | {fmt((np.mean(big_r2), np.std(big_r2)))} | "
                     f"{fmt(published('r2', column, process))} |")
    return "\n".join(lines)


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


def chapter_runs(budget: str = "cpu", processes: Iterable[str] = SYNTHETIC_PROCESSES) -> dict[str, list[SyntheticConfig]]:
    """Every run the synthetic and errata chapters show at ``budget`` for ``processes``, by section:
    "table" (Table 1's cells, ``table_configs``), "errata" (the errata variants, seed 0), "small_batch"
    (the quarter-batch reruns of SMALL_BATCH_CELLS, seed 0), "spiral_basin" (the Spiral inverse
    encoder's extra seeds, up to SPIRAL_BASIN_SEEDS), "reruns" (both runs of every ``rerun_pairs`` pair
    for the budget's seeds, if it names a ``rerun_at`` budget) and "adapted_study"
    (``adapted_study_configs``). What ``cldiv synthetic`` trains and the chapter loads."""
    processes, spec = list(processes), budgets.budget("synthetic", budget)
    return {
        "table": table_configs(budget, processes),
        "errata": [v for _, _, v in errata_pairs(budget)],
        "small_batch": [quarter_batch(cell_config(column, p, 0, spec)) for column, p in SMALL_BATCH_CELLS
                        if p in processes],
        "spiral_basin": [cell_config("inverse", "spiral", s, spec) for s in range(spec.seeds, SPIRAL_BASIN_SEEDS)
                         if "spiral" in processes],
        "reruns": [c for _, base, big in rerun_pairs(budget, processes, spec.seeds, spec.rerun_at) for c in (base, big)]
                  if spec.rerun_at else [],
        "adapted_study": [c for _, c in adapted_study_configs(budget, [p for p in ADAPTED_STUDY_PROCESSES
                                                                        if p in processes])],
    }


def unique_runs(sections: dict[str, list[SyntheticConfig]]) -> list[SyntheticConfig]:
    """The configs of every section of ``chapter_runs``, in order, each once."""
    return list(dict.fromkeys(c for configs in sections.values() for c in configs))


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
