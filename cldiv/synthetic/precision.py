"""Does bf16 mixed precision change the synthetic benchmark? fp32 against bf16 runs at the same seeds.

For every cell of Table 1 (and Figure 5a's inverse-encoder cell under diversity) the runs of
``precision="bf16"`` are paired with the float32 runs of the same config and seed. Per metric
(held-out R^2, MCC, APE, loss at M = 2000) the study reports both means and a paired t-test of
the per-seed differences (``scipy.stats.ttest_rel``): a p-value below ``SIGNIFICANCE`` with a mean
difference above the scorecard's floor for that metric (``cldiv.runs.verdicts.FLOOR``) marks the
cell as changed. The paper's findings are the orderings of ``cldiv.synthetic.table1.shape_checks``;
bf16 changes a finding when an ordering holds in one precision and not in the other.
"""

from __future__ import annotations

import statistics
from dataclasses import replace

from scipy.stats import ttest_rel

from cldiv.budgets import budget
from cldiv.config import config_hash
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.table1 import COLUMN_TITLES, TABLE1_COLUMNS, column_of, has_cell, shape_checks

METRICS = {"r2": ("R²", 0.02), "mcc": ("MCC", 0.05), "ape_code": ("APE", 0.005), "loss_m2000": ("loss", 0.02)}
SIGNIFICANCE = 0.05


def paired_runs(fp32: list[dict], bf16: list[dict]) -> dict[tuple[str, str], list[tuple[dict, dict]]]:
    """(column, process) -> [(fp32 record, bf16 record)] of the same config but precision, same seed.

    Records are matched by the hash of their config with the precision set to "fp32" (records stored
    before a field was added lack it in their config dict, so the dicts themselves are not compared)."""
    def as_fp32(record: dict) -> SyntheticConfig:
        return replace(SyntheticConfig(**record["config"]), precision="fp32")

    by_hash = {config_hash(as_fp32(r)): r for r in fp32}
    pairs: dict[tuple[str, str], list[tuple[dict, dict]]] = {}
    for record in bf16:
        config = as_fp32(record)
        twin = by_hash.get(config_hash(config))
        if twin is not None:
            pairs.setdefault((column_of(config), config.process), []).append((twin, record))
    return pairs


def compare(pairs: dict) -> list[dict]:
    """One row per cell and metric: means, mean difference (bf16 - fp32), paired p-value, changed?"""
    rows = []
    for (column, process), runs in sorted(pairs.items()):
        for metric, (label, floor) in METRICS.items():
            a = [f["metrics"][metric] for f, b in runs if metric in f["metrics"] and metric in b["metrics"]]
            b = [b["metrics"][metric] for f, b in runs if metric in f["metrics"] and metric in b["metrics"]]
            if not a:
                continue
            difference = statistics.fmean(b) - statistics.fmean(a)
            p = float(ttest_rel(b, a).pvalue) if len(a) > 1 and any(x != y for x, y in zip(a, b)) else 1.0
            changed = bool(p == p and p < SIGNIFICANCE and abs(difference) > floor)
            rows.append({"column": column, "process": process, "metric": label, "n": len(a),
                         "fp32": statistics.fmean(a), "bf16": statistics.fmean(b), "difference": difference,
                         "p": p, "changed": changed})
    return rows


def markdown(rows: list[dict], metrics: tuple[str, ...] = ("R²", "loss")) -> str:
    """The rows of ``metrics`` (labels of METRICS) as a markdown table."""
    lines = ["| cell | metric | seeds | fp32 | bf16 | bf16 − fp32 | paired p | changed |", "|---|---|---|---|---|---|---|---|"]
    for r in (r for r in rows if r["metric"] in metrics):
        lines.append(f"| {r['process']}, {COLUMN_TITLES[r['column']]} | {r['metric']} | {r['n']} | {r['fp32']:.3f} | "
                     f"{r['bf16']:.3f} | {r['difference']:+.3f} | {r['p']:.2f} | {'**yes**' if r['changed'] else 'no'} |")
    return "\n".join(lines)


def _mean_r2(pairs: dict, index: int):
    """mean_r2(column, process) over the fp32 (index 0) or bf16 (index 1) runs of ``pairs``."""
    return lambda column, process: statistics.fmean(
        pair[index]["metrics"]["r2"] for pair in pairs[column, process]) if (column, process) in pairs else float("nan")


def flipped_claims(pairs: dict, processes: list[str]) -> list[str]:
    """The claims of ``shape_checks`` that hold in one precision and not in the other (processes
    with every Table 1 cell paired only)."""
    complete = [p for p in processes if all((c, p) in pairs for c in TABLE1_COLUMNS if has_cell(c, p))]
    checks = zip(shape_checks(_mean_r2(pairs, 0), complete), shape_checks(_mean_r2(pairs, 1), complete))
    return [claim for (claim, a), (_, b) in checks if a != b]


def sensitive_cells(pairs: dict, rows: list[dict], processes: list[str]) -> set[tuple[str, str]]:
    """(column, process) cells that bf16 changes: a metric marked changed, or a flipped claim of the
    process together with a difference of mean R^2 above the floor in that cell. Their runs at the
    paper's protocol use float32 (``cldiv.budgets``, ``fp32_cells``)."""
    cells = {(r["column"], r["process"]) for r in rows if r["changed"]}
    flipped = {claim.split(":")[0] for claim in flipped_claims(pairs, processes)}
    fp32, bf16 = _mean_r2(pairs, 0), _mean_r2(pairs, 1)
    return cells | {(c, p) for (c, p) in pairs if p in flipped and abs(bf16(c, p) - fp32(c, p)) > METRICS["r2"][1]}


def precision_numbers(pairs: dict, rows: list[dict], processes: list[str]) -> dict[str, float]:
    """The comparison in numbers: cells compared (``cells``), cells with a metric that bf16 changes
    (``changed``), tests made (``tests``) and how many of them would pass by chance alone (``chance``), and the
    orderings of Table 1 that flip between the precisions (``flips``; nan without a process whose every cell
    was paired)."""
    complete = [p for p in processes if all((c, p) in pairs for c in TABLE1_COLUMNS if has_cell(c, p))]
    return {"cells": len({(r["column"], r["process"]) for r in rows}),
            "changed": len({(r["column"], r["process"]) for r in rows if r["changed"]}),
            "tests": len(rows), "chance": SIGNIFICANCE * len(rows),
            "flips": len(flipped_claims(pairs, processes)) if complete else float("nan")}


def cpu_size_pairs(records: list[dict]) -> dict[tuple[str, str], list[tuple[dict, dict]]]:
    """``paired_runs`` of every stored run at one of the ``cpu`` budget's Table 1 batch sizes,
    whatever its iterations (the adapted cells' earlier 400-iteration runs included): the evidence
    from which the ``paper`` budget's ``fp32_cells`` are chosen (``sensitive_cells``)."""
    cpu = budget("synthetic", "cpu")
    sizes = {cpu.config["batch_size"]} | {group.get("batch_size", cpu.config["batch_size"]) for group in cpu.groups.values()}
    runs = [r for r in records if r["config"]["batch_size"] in sizes]
    return paired_runs([r for r in runs if r["config"].get("precision", "fp32") == "fp32"],
                       [r for r in runs if r["config"].get("precision") == "bf16"])


def sensitive_markdown(pairs: dict, processes: list[str]) -> str:
    """The cells ``sensitive_cells`` finds in ``pairs`` (a ``cpu_size_pairs``) as a markdown table, each with
    why: the metrics bf16 changes (fp32 → bf16 means) and the orderings of its process that flip."""
    rows = compare(pairs)
    flips = flipped_claims(pairs, processes)
    lines = ["| cell | bf16 changes | orderings of its process that flip |", "|---|---|---|"]
    for column, process in sorted(sensitive_cells(pairs, rows, processes)):
        changed = [f"{r['metric']} {r['fp32']:.3f} → {r['bf16']:.3f}" for r in rows
                   if r["changed"] and (r["column"], r["process"]) == (column, process)]
        flipped = [claim for claim in flips if claim.split(":")[0] == process]
        lines.append(f"| {process} {COLUMN_TITLES[column]} | {', '.join(changed) or '—'} | {'; '.join(flipped) or '—'} |")
    return "\n".join(lines)
