"""What the synthetic benchmark's runs say, cell by cell, against the paper (Table 1, Tables 3-6, Fig. 5a),
and what its side studies and the errata variants show (the sweeps': ``cldiv.synthetic.sweep_findings``).

``table1_findings`` turns the stored runs of Table 1's cells into the sentences that close the
synthetic chapter. Every number in them is computed from the runs or read from
``cldiv.published``; every comparison ("between violated and holds", "lower with diversity")
is evaluated on the data, so the text changes when the results do.
"""

from __future__ import annotations

import statistics
from typing import Iterable

from cldiv.runs.verdicts import FLOOR, cell_agrees
from cldiv.synthetic.convergence import DOUBLING, SHORTCUT_GAP, batch_statistics_shortcut, converged, loss_gap
from cldiv.synthetic.studies import PATCHES_IB_PROTOCOLS, BLOCK_ORDER_CELLS, BLOCK_ORDERS, RERUN_CELLS
from cldiv.synthetic.table1 import column_of, fmt, has_cell, summarise, COLUMN_TITLES
from cldiv.published import FIGURE5A, TABLE3, published

#: How far beyond the main cell's lowest and highest seed an errata variant's R^2 still counts as inside
#: its range: the scorecard's R^2 floor.
RANGE_SLACK = FLOOR["r2"]
#: A violated MLP run that keeps only the fixed coordinate z_1 ends near R^2 = 1/3.
ONE_THIRD = (0.2, 0.45)


def listing(items: Iterable[str]) -> str:
    items = list(items)
    return ", ".join(items) if items else "none"


def value_range(values: Iterable[float], digits: int) -> str:
    """min–max of ``values`` at ``digits`` decimals; one number when the two round alike."""
    values = list(values)
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return low if low == high else f"{low}–{high}"


def figure5a_means(summary: dict, processes: Iterable[str]) -> dict[tuple[str, str], float]:
    """Figure 5a's bars: mean R^2 over processes, (encoder, condition) -> mean; the inverse
    encoders over the processes that have one."""
    processes = list(processes)
    inverse = [p for p in processes if has_cell("inverse", p)]

    def mean_over(column: str, names: list[str]) -> float:
        values = [summary[column, p]["r2"][0] for p in names if (column, p) in summary]
        return statistics.fmean(values) if values else float("nan")

    return {("mlp", "holds"): mean_over("holds", processes), ("mlp", "violated"): mean_over("violated", processes),
            ("inverse", "holds"): mean_over("inverse_holds", inverse), ("inverse", "violated"): mean_over("inverse", inverse)}


def table1_findings(records: list[dict], processes: Iterable[str]) -> list[str]:
    """The chapter's closing findings, one markdown bullet per column of Table 1 and for Figure 5a."""
    processes = list(processes)
    summary = summarise(records, ("r2", "mcc", "ape_code", "loss_m2000"))

    def mean(column: str, p: str, metric: str = "r2") -> float:
        return summary[column, p][metric][0]

    def seeds(column: str, p: str) -> list[float]:
        return sorted(r["metrics"]["r2"] for r in records
                      if r["config"]["process"] == p and column_of(r["config"]) == column)

    paper_mcc = [TABLE3[p][0][0] for p in processes]
    paper_ape = [TABLE3[p][1][0] for p in processes]
    holds_ok = [p for p in processes if min(seeds("holds", p)) >= 0.98]
    holds_low = [f"{p} (mean {mean('holds', p):.3f}, lowest seed {min(seeds('holds', p)):.3f}, published "
                 f"{published('r2', 'holds', p)[0]:.2f})" for p in processes if p not in holds_ok]
    violated = [v for p in processes for v in seeds("violated", p)]
    near_third = sum(ONE_THIRD[0] <= v < ONE_THIRD[1] for v in violated)
    near_zero = sum(v < 0.1 for v in violated)
    kept = [p for p in processes if mean("violated", p) > 0.9]
    between = [p for p in processes if mean("violated", p) < mean("adapted", p) < mean("holds", p)]
    inverse = [p for p in processes if has_cell("inverse", p)]
    stuck = [f"{p} {v:.2f}" for p in inverse for v in seeds("inverse", p)
             if v < statistics.median(seeds("inverse", p)) - 0.2]
    spiral = published("r2", "violated", "spiral")
    bars = figure5a_means(summary, processes)

    holds = (f"- *Diversity holds.* $R^2 \\ge 0.98$ in every seed for {listing(holds_ok)}; below that: "
             f"{listing(holds_low)}. MCC {value_range((mean('holds', p, 'mcc') for p in processes), 2)} (published "
             f"{value_range(paper_mcc, 2)}); APE (code convention) "
             f"{value_range((mean('holds', p, 'ape_code') for p in processes), 3)} (published {value_range(paper_ape, 3)}).")
    kept_text = ""
    if kept:
        kept_text = f"The runs of {listing(kept)} keep the geometry (mean $R^2 > 0.9$)" + (
            f"; the published Spiral value, {fmt(spiral)}, says that some of the paper's runs did so too."
            if "spiral" in kept else ".")
    violated_text = (
        "- *Diversity violated, MLP.* "
        + "; ".join(f"{p} {mean('violated', p):.2f} ({published('r2', 'violated', p)[0]:.2f})" for p in processes)
        + f". Of the {len(violated)} runs, {near_third} end with $R^2$ between {ONE_THIRD[0]} and {ONE_THIRD[1]} — "
        "$h$ squeezes each circle $K(z)$ towards a point and keeps only the fixed coordinate $z_1$, "
        f"$R^2 \\approx 1/3$ — and {near_zero} below 0.1, where $z_1$ is no longer linearly decodable either. "
        + kept_text)
    loss = ("- *The loss does not tell these apart.* Violated losses at $M = 2000$: "
            + "; ".join(f"{p} {mean('violated', p, 'loss_m2000'):.3f} ({published('final_loss', 'violated', p)[0]:.3f})"
                        for p in processes)
            + ". Between seeds of one cell $R^2$ ranges over "
            + "; ".join(f"{p} {value_range(seeds('violated', p), 2)}" for p in processes)
            + ": the restricted conditional leaves a family of minimisers, and which one training reaches is not "
            "fixed by the loss — the paper's title.")
    not_between = [p for p in processes if p not in between]
    adapted = (f"- *Adapted (support-corrected) loss.* {value_range((mean('adapted', p) for p in processes), 2)} against "
               f"the published {value_range((published('r2', 'adapted', p)[0] for p in processes), 2)}. Between *violated* "
               f"and *holds* for {listing(between)}" + (f"; not for {listing(not_between)}" if not_between else "")
               + ". The corrected loss has non-orthogonal minimisers (Theorem A.5), so it is not expected to reach 1.")
    inverse_text = ("- *Inverse encoders under violation.* "
                    + "; ".join(f"{p} {fmt(summary['inverse', p]['r2'][:2])} ({published('r2', 'inverse', p)[0]:.2f})"
                                for p in inverse)
                    + (f". Runs more than 0.2 below their cell's median: {listing(stuck)}; such a run has settled in "
                       "a local optimum of the inverse encoder's few parameters." if stuck else "."))
    lower = bars["inverse", "holds"] < bars["inverse", "violated"]
    paper_lower = FIGURE5A["inverse"]["holds"] < FIGURE5A["inverse"]["violated"]
    figure = (f"- *Figure 5a.* Inverse encoders: {bars['inverse', 'holds']:.2f} with diversity and "
              f"{bars['inverse', 'violated']:.2f} without (published {FIGURE5A['inverse']['holds']:.2f} and "
              f"{FIGURE5A['inverse']['violated']:.2f}). "
              + ("As in the paper, they score lower *with* diversity than without it." if lower and paper_lower else
                 "Unlike the paper, they do not score lower with diversity than without it." if paper_lower else
                 "They score " + ("lower" if lower else "higher") + " with diversity than without it."))
    return [holds, violated_text, loss, adapted, inverse_text, figure]


def patches_ib_findings(rows: list[list[dict]], store) -> list[str]:
    """Sentences on the Patches + inductive-bias cell under the code's protocol, one difference at a
    time (``rows``: the runs of ``cldiv.synthetic.table1.patches_ib_protocol_configs``, one list per
    row of PATCHES_IB_PROTOCOLS): what each difference does to the mean R^2, which rows agree with
    the published value (``cell_agrees``), and which have settled (``DOUBLING.settled`` in ``store``)."""
    target = published("r2", "inverse", "patches")
    r2 = [[r["metrics"]["r2"] for r in runs] for runs in rows]
    mean = [statistics.fmean(values) for values in r2]
    names = [f"the {definition} Patches at lr {lr.split()[0]}" for definition, lr, _ in PATCHES_IB_PROTOCOLS]
    settled = [DOUBLING.settled(runs, store) for runs in rows]
    return [f"at {rows[0][0]['config']['iterations']} iterations the code's definition of Patches alone moves the "
            f"cell's mean R² from {mean[0]:.3f} to {mean[2]:.3f}, the code's learning rate alone to {mean[1]:.3f}, "
            f"both to {mean[3]:.3f} (published {fmt(target)})",
            "agreeing with the published value (the scorecard's rule): "
            + listing(n for n, values in zip(names, r2) if cell_agrees(values, target, "r2")),
            "settled (a stored doubling kept the mean, or, not yet doubled, every run's curve has converged): "
            + listing(n for n, ok in zip(names, settled) if ok)
            + "; not settled: " + listing(n for n, ok in zip(names, settled) if not ok)]


def block_order_findings(rows: list[list[list[dict]]]) -> list[str]:
    """One sentence per cell of the block-order study (``rows``: the runs of
    ``cldiv.synthetic.table1.block_order_configs``): each order's mean R^2 and whether it agrees with
    the published value (``cell_agrees``, the scorecard's rule; "not converged" unless every run's
    curve has, ``converged``); then which order agrees with every cell."""
    verdicts = [[("not converged" if not all(map(converged, runs)) else
                  "agrees" if cell_agrees([r["metrics"]["r2"] for r in runs], published("r2", column, process), "r2")
                  else "disagrees") for runs in cell]
                for (column, process), cell in zip(BLOCK_ORDER_CELLS, rows)]
    out = [f"{process} {COLUMN_TITLES[column]}, published {fmt(published('r2', column, process))}: "
           + ", ".join(f"the {name} order {statistics.fmean(r['metrics']['r2'] for r in runs):.2f} ({verdict})"
                       for (name, _), runs, verdict in zip(BLOCK_ORDERS, cell, cell_verdicts))
           for (column, process), cell, cell_verdicts in zip(BLOCK_ORDER_CELLS, rows, verdicts)]
    if any("not converged" in cell_verdicts for cell_verdicts in verdicts):
        return out + ["some runs have not converged, so this study decides nothing yet"]
    agreeing = [name for i, (name, _) in enumerate(BLOCK_ORDERS) if all(v[i] == "agrees" for v in verdicts)]
    return out + ["the " + " and the ".join(agreeing) + " order" + ("s agree" if len(agreeing) > 1 else " agrees")
                  + " with every cell" if agreeing else "neither order agrees with every cell: the order alone "
                  "does not explain the published numbers"]


def rerun_findings(rerun: dict, rerun_loss: dict, rerun_at: str, n_mirrored: int, n_basin: int) -> list[str]:
    """Sentences on the cells rerun at the paper's sizes (``cldiv.synthetic.studies.RERUN_CELLS``).

    rerun / rerun_loss: row of RERUN_CELLS -> ([R^2 or loss at the budget's sizes], [at rerun_at's]);
    n_mirrored of n_basin Spiral inverse-encoder seeds settled on the mirrored control."""
    text, matches = [], {}
    for i, (small_r2, big_r2) in rerun.items():
        column, p, changes = RERUN_CELLS[i]
        target = published("r2", column, p)[0]
        small, big = statistics.fmean(small_r2), statistics.fmean(big_r2)
        verdict = ("within 0.02 of it" if abs(big - target) <= 0.02 else
                   "closer to it" if abs(big - target) < abs(small - target) else "further from it")
        matches[i] = abs(big - target) <= 0.02
        loss_small, loss_big = (statistics.fmean(v) for v in rerun_loss[i])
        both_fell = (f"; its loss at $M = 2000$ fell too, {loss_small:.3f} → {loss_big:.3f}: a lower loss and a "
                     "worse recovery" if big < small - 0.02 and loss_big < loss_small else "")
        what = f"{p} *{COLUMN_TITLES[column]}*" + (" with the code's definition" if changes else "")
        text.append(f"{what}: {small:.3f} → {big:.3f} at the {rerun_at} budget's sizes (published {target:.2f}; "
                    f"{verdict}){both_fell}")
    patches = {bool(RERUN_CELLS[i][2]): ok for i, ok in matches.items() if RERUN_CELLS[i][:2] == ("inverse", "patches")}
    if patches.get(True) and patches.get(False) is False:
        text.append("so the published Patches inverse-encoder value is what the code's definition of Patches gives, "
                    "not the paper's")
    if n_basin:
        clean = (1 - n_mirrored / n_basin) ** 5
        spiral = fmt(published("r2", "inverse", "spiral"))
        text.append(f"the mirrored Spiral control appears in {n_mirrored} of {n_basin} seeds; at that rate five runs "
                    f"all avoid it with probability {clean:.2f}, "
                    + (f"so the published {spiral} from five runs does not contradict our runs" if clean >= 0.05 else
                       f"so the published {spiral} from five runs would be unlikely with our encoder"))
    return [f"- {t[0].upper()}{t[1:]}." for t in text]


def _runs_value(values: list[float]) -> str:
    return f"{values[0]:.3f}" if len(values) == 1 else f"{statistics.fmean(values):.3f} ± {statistics.pstdev(values):.3f}"


def errata_table(variants: list, pairs: list, base: list[dict], changed: list[dict], main_records: list[dict]) -> str:
    """Errata items 1-4 as a markdown table: per variant and cell, R^2 of the main chapter's cell over all its
    seeds, R^2 and MCC of the book's config ("main") and of the code's ("variant") for the seeds run here, and
    whether every variant run lies inside the main cell's seed range widened by ``RANGE_SLACK`` each side.

    variants: ``ERRATA_VARIANTS``; pairs: (variant index, book's config, code's config) per run;
    base / changed: the records of the book's and of the code's configs, in ``pairs`` order."""
    lines = ["| variant | cell | R² main, all seeds | R² main | R² variant | MCC main | MCC variant | variant inside "
             "main's range |", "|---|---|---|---|---|---|---|---|"]
    for i, (label, column, process, _) in enumerate(variants):
        def values(records: list[dict], metric: str) -> list[float]:
            return [r["metrics"][metric] for (j, _, _), r in zip(pairs, records) if j == i]

        spread = [r["metrics"]["r2"] for r in main_records
                  if r["config"]["process"] == process and column_of(r["config"]) == column]
        inside = "—"
        if spread:
            low, high = min(spread) - RANGE_SLACK, max(spread) + RANGE_SLACK
            inside = f"{'yes' if all(low <= v <= high for v in values(changed, 'r2')) else '**no**'} ({low:.2f}–{high:.2f})"
        lines.append(f"| {label} | {process}, {column} | {_runs_value(spread) if spread else '—'} | "
                     f"{_runs_value(values(base, 'r2'))} | {_runs_value(values(changed, 'r2'))} | "
                     f"{_runs_value(values(base, 'mcc'))} | {_runs_value(values(changed, 'mcc'))} | {inside} |")
    return "\n".join(lines)


def convention_numbers(records: list[dict]) -> dict[str, float]:
    """Errata items 6-8 on the main chapter's runs: the largest in-sample minus held-out R^2 over cells
    (``r2_gap``); the lowest and highest ratio of the code's APE to the paper's (``ape_ratio_low``/``_high``)
    against (n - 1)/2n for the n evaluation points (``ape_ratio_expected``); the largest difference between
    the held-out final loss and the last training-batch loss (``loss_gap``). Means over seeds per cell."""
    cells = summarise(records, ("r2", "r2_in_sample", "ape", "ape_code", "final_loss", "train_loss_last")).values()
    n = records[0]["config"]["n_eval"]
    ratios = [v["ape_code"][0] / v["ape"][0] for v in cells if v["ape"][0] > 0]
    return {"r2_gap": max(v["r2_in_sample"][0] - v["r2"][0] for v in cells),
            "ape_ratio_low": min(ratios), "ape_ratio_high": max(ratios), "ape_ratio_expected": (n - 1) / (2 * n),
            "loss_gap": max(abs(v["final_loss"][0] - v["train_loss_last"][0]) for v in cells)}


def adapted_study_findings(rows: Iterable[tuple]) -> str:
    """The adapted-budget study in words. rows: (label of ``ADAPTED_SIZES``, config, record). Per size:
    how many runs converged, and per process whether its R^2 differs from the first size's (the
    budget's own) by the scorecard's rule (``cldiv.runs.verdicts.cell_agrees``)."""
    rows = list(rows)
    labels = list(dict.fromkeys(label for label, _, _ in rows))
    processes = list(dict.fromkeys(config.process for _, config, _ in rows))

    def runs(label: str, process: str | None = None) -> list[dict]:
        return [r for name, c, r in rows if name == label and process in (None, c.process)]

    def r2(label: str, process: str) -> list[float]:
        return [r["metrics"]["r2"] for r in runs(label, process)]

    counts = "; ".join(f"{label} {sum(map(converged, runs(label)))} of {len(runs(label))}" for label in labels)
    settled = [label for label in labels if all(map(converged, runs(label)))]
    text = (f"Runs converged: {counts}. "
            + (f"Every run converged at: {listing(settled)}." if settled else "At no size did every run converge."))
    base = labels[0]
    for label in labels[1:]:
        moved = [f"{p} ({statistics.fmean(r2(base, p)):.2f} → {statistics.fmean(r2(label, p)):.2f})" for p in processes
                 if len(r2(base, p)) >= 2 and not cell_agrees(
                     r2(label, p), (statistics.fmean(r2(base, p)), statistics.stdev(r2(base, p))), "r2", runs=len(r2(base, p)))]
        text += (f" {label[0].upper() + label[1:]}: R² differs from {base} size for {listing(moved)}." if moved else
                 f" {label[0].upper() + label[1:]}: R² not distinguishable from {base} size for any process.")
    return text


def shortcut_findings(rows: Iterable[tuple]) -> str:
    """Which runs lowered their training loss through BatchNorm's batch statistics
    (``cldiv.synthetic.convergence.batch_statistics_shortcut``), per label of rows (label, config,
    record), with their R^2 against the other runs'."""
    rows = list(rows)
    hit = [(label, record) for label, _, record in rows if batch_statistics_shortcut(record)]
    rest = [record for _, _, record in rows if not batch_statistics_shortcut(record)]
    per_label = []
    for label in dict.fromkeys(label for label, _, _ in rows):
        mine = [record for name, record in hit if name == label]
        total = sum(name == label for name, _, _ in rows)
        r2 = [r["metrics"]["r2"] for r in mine]
        shown = "" if not r2 else f" ($R^2$ {r2[0]:.2f})" if len(r2) == 1 else f" ($R^2$ {value_range(r2, 2)})"
        per_label.append(f"{label} {len(mine)} of {total}{shown}")
    text = (f"Runs whose final loss in evaluation mode exceeds their training-mode loss over the last quarter by more "
            f"than {SHORTCUT_GAP}: {'; '.join(per_label)}.")
    if rest:
        text += (f" The other {len(rest)} runs have gaps of {value_range(map(loss_gap, rest), 2)} and $R^2$ "
                 f"{value_range((r['metrics']['r2'] for r in rest), 2)}.")
    return text


def _loss_agreement(records: Iterable[dict], processes: Iterable[str]) -> dict[str, tuple]:
    """Per column (*holds*, *violated*) with published losses and both of ours: (cells, agree, values),
    where cells = [(process, published loss)], agree = {metric: processes whose published loss agrees
    with ours at that M by ``cell_agrees``} for metric "loss_m2000" and "loss_m4000", and values =
    {(column, process, metric): our losses}."""
    values: dict[tuple[str, str, str], list[float]] = {}
    for record in records:
        column, process = column_of(record["config"]), record["config"]["process"]
        for metric in ("loss_m2000", "loss_m4000"):
            if metric in record["metrics"]:
                values.setdefault((column, process, metric), []).append(record["metrics"][metric])
    processes = list(processes)
    columns = {}
    for column in ("holds", "violated"):
        cells = [(p, published("final_loss", column, p)) for p in processes
                 if published("final_loss", column, p) and {(column, p, "loss_m2000"), (column, p, "loss_m4000")} <= values.keys()]
        if cells:
            agree = {m: [p for p, pub in cells if cell_agrees(values[column, p, m], pub, "final_loss")]
                     for m in ("loss_m2000", "loss_m4000")}
            columns[column] = (cells, agree, values)
    return columns


def holds_losses_measured_at_4000(records: Iterable[dict], processes: Iterable[str]) -> bool | None:
    """Whether the published *holds* losses were measured with 4000 negatives (errata item 9): every
    process's published loss agrees with ours at M = 4000 and none at M = 2000; None without such cells."""
    return _holds_at_4000(_loss_agreement(records, processes))


def _holds_at_4000(columns: dict[str, tuple]) -> bool | None:
    """``holds_losses_measured_at_4000`` from ``_loss_agreement``'s result."""
    if "holds" not in columns:
        return None
    cells, agree, _ = columns["holds"]
    return len(agree["loss_m4000"]) == len(cells) and not agree["loss_m2000"]


def loss_negatives_table(records: Iterable[dict], processes: Iterable[str]) -> str:
    """Errata item 9 as a markdown table: per column (*holds*, *violated*) and process with a published final
    loss, ours at M = 2000 and 4000 (mean over seeds), the published value, and at which M the two agree by
    the scorecard's rule (``cell_agrees``)."""
    lines = ["| column | process | ours, M = 2000 | ours, M = 4000 | published | agrees at M = |",
             "|---|---|---|---|---|---|"]
    for column, (cells, agree, values) in _loss_agreement(records, processes).items():
        for p, pub in cells:
            at = [m[-4:] for m in ("loss_m2000", "loss_m4000") if p in agree[m]]
            lines.append(f"| {column} | {p} | {statistics.fmean(values[column, p, 'loss_m2000']):.3f} | "
                         f"{statistics.fmean(values[column, p, 'loss_m4000']):.3f} | {fmt(pub, 3)} | "
                         f"{', '.join(at) or 'neither'} |")
    return "\n".join(lines)


def loss_negatives_counts(records: Iterable[dict], processes: Iterable[str]) -> dict[str, float]:
    """Errata item 9 in numbers, for column c in *holds* and *violated*: the processes compared (``c_cells``),
    those whose published loss agrees with ours at M = 2000 (``c_2000``) and at 4000 (``c_4000``), and the
    mean published minus ours at M = 2000 (``c_gap``); 0 and nan for a column without such cells."""
    columns = _loss_agreement(records, processes)
    numbers: dict[str, float] = {}
    for column in ("holds", "violated"):
        cells, agree, values = columns.get(column, ([], {"loss_m2000": [], "loss_m4000": []}, {}))
        numbers.update({f"{column}_cells": len(cells), f"{column}_2000": len(agree["loss_m2000"]),
                        f"{column}_4000": len(agree["loss_m4000"]),
                        f"{column}_gap": statistics.fmean(pub[0] - statistics.fmean(values[column, p, "loss_m2000"])
                                                          for p, pub in cells) if cells else float("nan")})
    return numbers
