"""What the synthetic benchmark's runs say against the paper (Table 1, Tables 3-6, Fig. 5a), its side studies
and the errata variants, as numbers and tables (the sweeps': ``cldiv.synthetic.sweep_findings``).

The chapters write the sentences; these functions compute what they cite, from the runs or from
``cldiv.published``, every comparison ("between violated and holds", "agrees with the published value") evaluated
on the data, so a chapter's glued numbers, and the assertions that guard its sentences, change with the results.
"""

from __future__ import annotations

import statistics
from typing import Iterable

from cldiv.runs.verdicts import FLOOR, cell_agrees
from cldiv.synthetic.convergence import DOUBLING, SHORTCUT_GAP, batch_statistics_shortcut, converged
from cldiv.synthetic.studies import PATCHES_IB_PROTOCOLS, BLOCK_ORDER_CELLS, BLOCK_ORDERS, RERUN_CELLS
from cldiv.synthetic.table1 import column_of, fmt, has_cell, summarise
from cldiv.published import TABLE3, published

#: How far beyond the main cell's lowest and highest seed an errata variant's R^2 still counts as inside
#: its range: the scorecard's R^2 floor.
RANGE_SLACK = FLOOR["r2"]
#: A violated MLP run that keeps only the fixed coordinate z_1 ends near R^2 = 1/3.
ONE_THIRD = (0.2, 0.45)


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


def table1_numbers(records: list[dict], processes: Iterable[str]) -> dict[str, float]:
    """The numbers the synthetic chapter's closing cites, from the headline runs (nan where a column was not run).

    Diversity holds: the processes (``processes``) whose every seed reaches R^2 >= 0.98 (``holds_ok``), the range
    over processes of MCC and APE (code convention) against Table 3's (``holds_mcc_low``/``_high``,
    ``paper_mcc_low``/``_high``, ``holds_ape_low``/..., ``paper_ape_low``/...). Violated: the runs
    (``violated_runs``), those near R^2 = 1/3 (``ONE_THIRD``; ``near_third``) and below 0.1 (``near_zero``).
    Adapted: the range of our means and the published ones (``adapted_low``/``_high``, ``adapted_paper_low``/
    ``_high``) and the processes whose adapted mean lies strictly between violated and holds (``between``).
    Inverse encoders: runs more than 0.2 below their cell's median (``stuck``)."""
    processes = list(processes)
    summary = summarise(records, ("r2", "mcc", "ape_code"))

    def means(column: str, metric: str = "r2") -> list[float]:
        return [summary[column, p][metric][0] for p in processes if (column, p) in summary]

    def seeds(column: str, p: str) -> list[float]:
        return [r["metrics"]["r2"] for r in records if r["config"]["process"] == p and column_of(r["config"]) == column]

    def spread(name: str, values: list[float]) -> dict[str, float]:
        return {f"{name}_low": min(values, default=float("nan")), f"{name}_high": max(values, default=float("nan"))}

    violated = [v for p in processes for v in seeds("violated", p)]
    cells = [p for p in processes if all((c, p) in summary for c in ("violated", "adapted", "holds"))]
    stuck = [v for p in processes if has_cell("inverse", p) for v in seeds("inverse", p)
             if v < statistics.median(seeds("inverse", p)) - 0.2]
    return {"processes": len(processes),
            "holds_ok": sum(bool(seeds("holds", p)) and min(seeds("holds", p)) >= 0.98 for p in processes),
            **spread("holds_mcc", means("holds", "mcc")), **spread("paper_mcc", [TABLE3[p][0][0] for p in processes]),
            **spread("holds_ape", means("holds", "ape_code")), **spread("paper_ape", [TABLE3[p][1][0] for p in processes]),
            "violated_runs": len(violated), "near_third": sum(ONE_THIRD[0] <= v < ONE_THIRD[1] for v in violated),
            "near_zero": sum(v < 0.1 for v in violated),
            **spread("adapted", means("adapted")),
            **spread("adapted_paper", [published("r2", "adapted", p)[0] for p in processes]),
            "between": sum(summary["violated", p]["r2"][0] < summary["adapted", p]["r2"][0] < summary["holds", p]["r2"][0]
                           for p in cells),
            "stuck": len(stuck)}


def violated_markdown(records: list[dict], processes: Iterable[str]) -> str:
    """Table 1's violated MLP cells as a markdown table: per process the mean R^2 and the seeds' range against
    the published mean, and the loss at M = 2000 against the published loss."""
    summary = summarise(records, ("r2", "loss_m2000"))
    lines = ["| process | $R^2$ (published) | seeds' $R^2$ | loss at $M = 2000$ (published) |", "|---|---|---|---|"]
    for p in processes:
        if ("violated", p) in summary:
            seeds = [r["metrics"]["r2"] for r in records if r["config"]["process"] == p
                     and column_of(r["config"]) == "violated"]
            lines.append(f"| {p} | {summary['violated', p]['r2'][0]:.2f} ({published('r2', 'violated', p)[0]:.2f}) | "
                         f"{value_range(seeds, 2)} | {summary['violated', p]['loss_m2000'][0]:.3f} "
                         f"({published('final_loss', 'violated', p)[0]:.3f}) |")
    return "\n".join(lines)


def patches_ib_numbers(rows: list[list[dict]], store) -> dict[str, float]:
    """The Patches + inductive-bias cell under the code's protocol in numbers (``rows``: the runs of
    ``cldiv.synthetic.studies.patches_ib_protocol_configs``, one list per row of PATCHES_IB_PROTOCOLS):
    the mean R^2 of each row (``pib_paper_lr3``, ``pib_paper_lr4``, ``pib_code_lr3``, ``pib_code_lr4``: the
    Patches definition and the learning rate 1e-3 or 1e-4), the rows' iterations, and per definition how
    many rows agree with the published value (``cell_agrees``; ``pib_agree_paper``, ``pib_agree_code``) and
    how many have settled (``DOUBLING.settled`` in ``store``; ``pib_settled_paper``, ``pib_settled_code``)."""
    target = published("r2", "inverse", "patches")
    numbers: dict[str, float] = {"pib_iterations": rows[0][0]["config"]["iterations"] if rows else float("nan"),
                                 "pib_published": target[0]}
    for definition, lr, _ in PATCHES_IB_PROTOCOLS:  # nan: not run
        numbers[f"pib_{definition.split(chr(39))[0]}_lr{lr[3]}"] = float("nan")
    for definition in ("paper", "code"):
        numbers[f"pib_agree_{definition}"] = numbers[f"pib_settled_{definition}"] = 0
    for (definition, lr, _), runs in zip(PATCHES_IB_PROTOCOLS, rows):
        values, name = [r["metrics"]["r2"] for r in runs], definition.split(chr(39))[0]
        numbers[f"pib_{name}_lr{lr[3]}"] = statistics.fmean(values)
        numbers[f"pib_agree_{name}"] += cell_agrees(values, target, "r2")
        numbers[f"pib_settled_{name}"] += DOUBLING.settled(runs, store)
    return numbers


def block_order_numbers(rows: list[list[list[dict]]]) -> dict[str, int]:
    """The block-order study in numbers (``rows``: the runs of ``cldiv.synthetic.studies.block_order_configs``):
    the cells (``order_cells``), the cells with a run whose curve has not converged (``order_unconverged``)
    and, per order of BLOCK_ORDERS, the cells whose mean R^2 agrees with the published one (``cell_agrees``;
    ``order_agree_code``, ``order_agree_paper``)."""
    numbers = {"order_cells": len(rows), "order_unconverged": sum(not all(map(converged, runs))
                                                                  for cell in rows for runs in cell)}
    for i, (name, _) in enumerate(BLOCK_ORDERS):
        numbers[f"order_agree_{name.split(chr(39))[0]}"] = sum(
            cell_agrees([r["metrics"]["r2"] for r in cell[i]], published("r2", column, process), "r2")
            for (column, process), cell in zip(BLOCK_ORDER_CELLS, rows))
    return numbers


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def rerun_key(i: int) -> str:
    """A name for row ``i`` of ``cldiv.synthetic.studies.RERUN_CELLS``: "patches_holds", "patches_inverse_code"."""
    column, process, changes = RERUN_CELLS[i]
    return f"{process}_{column}" + ("_code" if changes else "")


def rerun_numbers(rerun: dict, rerun_loss: dict) -> dict[str, float]:
    """The cells rerun at a larger budget's sizes in numbers. rerun / rerun_loss: row of RERUN_CELLS ->
    ([R^2 or loss at the budget's sizes], [at the larger]); per row (``rerun_key``): the mean R^2 at both sizes
    (``<key>_small``, ``<key>_big``), the loss at M = 2000 (``<key>_loss_small``, ``_loss_big``), the published
    R^2 (``<key>_published``) and whether the larger runs agree with it (``<key>_agrees``, ``cell_agrees``);
    nan for a row not run."""
    numbers: dict[str, float] = {}
    for i, (column, process, _) in enumerate(RERUN_CELLS):  # nan: the row was not run
        key, target = rerun_key(i), published("r2", column, process)
        small, big = rerun.get(i, ([], []))
        loss_small, loss_big = rerun_loss.get(i, ([], []))
        numbers |= {f"{key}_small": _mean(small), f"{key}_big": _mean(big), f"{key}_loss_small": _mean(loss_small),
                    f"{key}_loss_big": _mean(loss_big), f"{key}_published": target[0],
                    f"{key}_agrees": int(cell_agrees(big, target, "r2")) if big else float("nan")}
    return numbers


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


def adapted_study_moved(rows: Iterable[tuple]) -> dict[str, list[str]]:
    """The adapted-budget study (rows: (label of ``ADAPTED_SIZES``, config, record)): per size after the
    first (the budget's own), the processes whose R^2 differs from the first size's by the scorecard's rule
    (``cldiv.runs.verdicts.cell_agrees``, the first size's runs in the published number's place)."""
    rows = list(rows)
    labels = list(dict.fromkeys(label for label, _, _ in rows))

    def r2(label: str, process: str) -> list[float]:
        return [r["metrics"]["r2"] for name, c, r in rows if name == label and c.process == process]

    processes = list(dict.fromkeys(config.process for _, config, _ in rows))
    return {label: [p for p in processes if len(r2(labels[0], p)) >= 2 and not cell_agrees(
        r2(label, p), (statistics.fmean(r2(labels[0], p)), statistics.stdev(r2(labels[0], p))), "r2",
        runs=len(r2(labels[0], p)))] for label in labels[1:]}


def shortcut_markdown(rows: Iterable[tuple]) -> str:
    """Which runs lowered their training loss through BatchNorm's batch statistics
    (``cldiv.synthetic.convergence.batch_statistics_shortcut``), per label of rows (label, config, record), as a
    markdown table: label, anchors a step, runs with the gap, runs, the R^2 of those with it and of the others."""
    rows = list(rows)
    lines = [f"| runs | anchors a step | with a gap above {SHORTCUT_GAP} | of | their $R^2$ | the others' $R^2$ |",
             "|---|---|---|---|---|---|"]
    for label in dict.fromkeys(label for label, _, _ in rows):
        mine = [(config, record) for name, config, record in rows if name == label]
        hit = [r["metrics"]["r2"] for _, r in mine if batch_statistics_shortcut(r)]
        rest = [r["metrics"]["r2"] for _, r in mine if not batch_statistics_shortcut(r)]
        anchors = ", ".join(str(b) for b in sorted({c.batch_size for c, _ in mine}))
        lines.append(f"| {label} | {anchors} | {len(hit)} | {len(mine)} | {value_range(hit, 2) if hit else '—'} | "
                     f"{value_range(rest, 2) if rest else '—'} |")
    return "\n".join(lines)


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
