"""The reproduction scorecard: each claim of the paper, its chapter, and a verdict computed from results.

The landing page of the book renders ``scorecard()`` as one table (``cldiv.book.site``); nothing in it
is typed by hand. A *claim* is a table, figure or theorem of the paper (every one named in the
spec): its name, the chapter that reproduces it, and a function of the result store returning an
``Assessment`` -- the budget it was run at, the verdict, and the key numbers, published and ours.

Published numbers are data, labelled as published, in ``cldiv.published``. Ours come from
the result store (``ResultStore.default()``: ``results/`` or ``$CLDIV_RESULTS``), so the table
changes when a result file changes. Theorems are checked by evaluating the asymptotic objective
(``cldiv.theory``) at the paper's setting, which takes a few seconds.

The verdict rules and which runs count are in ``cldiv.runs.verdicts``.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.sweeps import (constraint_ratio_cells, endpoint_agreement, endpoint_companions, sweep_configs,
                                    PROGRESSIVE_PROCESSES)
from cldiv.runs.store import REPO_ROOT, ResultStore
from cldiv.book.figure3_check import assess_figure3
from cldiv.book.theorem_checks import (STATEMENTS, assess_theorem_3_3, assess_theorem_4_4, assess_theorem_4_5,
                                       assess_theorem_4_6, assess_theorem_a5)
from cldiv.runs.verdicts import (METRIC_LABELS, VERDICTS, Assessment, Cells, Tally, claim_verdict, describe_budget,
                                 find_runs, format_metric, metric_values, settle, verdict_rules)
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES
from cldiv.synthetic.sweep_findings import (table7_comparison, table7_length_numbers, table7_protocol_rows,
                                            table8_comparison, table8_counts)
from cldiv.published import FIGURE5A, TABLE7_R2, published as published_cell
from cldiv.synthetic import studies, table1 as tables
from cldiv import budgets
from cldiv.synthetic.convergence import settled, settled_runs
from cldiv.runs.doubling import NOT_CONVERGED_MARK, SETTLED_LATER_MARK

__all__ = ["Claim", "Row", "CLAIMS", "scorecard", "verdict_rules", "VERDICTS"]

NOTEBOOK_DIR = REPO_ROOT / "notebooks"


@dataclass(frozen=True)
class Claim:
    """A table, figure or theorem of the paper and how to check it."""

    name: str                     # as the paper names it: "Table 1", "Theorem 4.5"
    what: str                     # one line: what it states or shows
    chapter: str                  # notebooks/<chapter>.md reproduces it
    assess: Callable[[ResultStore], Assessment]
    needs_chapter: bool = False   # computed by the chapter's code (theorems): "not yet run" without it
    section: str = ""             # the label of the chapter's section with the details ("": the chapter's)


@dataclass(frozen=True)
class Row:
    """One line of the scorecard."""

    claim: str
    what: str
    chapter: str
    section: str
    chapter_exists: bool
    budget: str
    verdict: str
    paper: str
    ours: str
    shape: str
    disagreements: tuple[str, ...]
    reason: str


# ----------------------------------------------------------------------------- synthetic benchmark


def table_cells(columns: Iterable[str]) -> Callable[[str], Iterable[tuple[tuple, object]]]:
    """The runs of the synthetic benchmark's cells (column, process) of ``columns``, per budget."""
    columns = list(columns)

    def configs(budget: str):
        for column in columns:
            for process in SYNTHETIC_PROCESSES:
                if tables.has_cell(column, process):
                    for seed in range(budgets.budget("synthetic", budget).seeds):
                        yield (column, process), tables.cell_config(column, process, seed, budget)

    return configs


def _table_assessment(store: ResultStore, columns: Sequence[str], metrics: Sequence[str],
                      extra: Callable[[Cells], str] | None = None, loss_negatives: int = 2000) -> Assessment:
    """Compare the published cells of ``columns`` x ``metrics`` x processes with our runs.

    Key numbers: per column and metric, the mean over processes of the published means and of
    ours (over the processes that were run). Each cell at the shortest stored length at which it has
    converged (``settle``), marked ‡ if that is longer than its budget's.
    """
    found, later = settle(find_runs(store, table_cells(columns)), store, settled_runs)
    tally, paper_parts, our_parts, incomparable = Tally(), [], [], 0
    for column in columns:
        paper_metrics, our_metrics = [], []
        for metric in metrics:
            published, ours = [], []
            for process in SYNTHETIC_PROCESSES:
                value = published_cell(metric, column, process)
                runs = found.get((column, process), (None, []))[1]
                values = metric_values(runs, metric, loss_negatives)
                if runs and not values and value is not None:
                    tally.add_uncompared()
                    incomparable += 1
                else:
                    tally.add(values, value, metric, converged=settled(runs, store),
                              label=f"{tables.COLUMN_TITLES[column]} / {process} / {METRIC_LABELS[metric]}")
                if value is not None:
                    published.append(value[0])
                    if values:
                        ours.append(statistics.fmean(values))
            label = METRIC_LABELS[metric] + " " if len(metrics) > 1 else ""
            paper_metrics.append(f"{label}{format_metric(statistics.fmean(published), metric)}")
            if ours:
                our_metrics.append(f"{label}{format_metric(statistics.fmean(ours), metric)}")
        prefix = (tables.COLUMN_TITLES[column] + (": " if len(metrics) > 1 else " ")) if len(columns) > 1 else ""
        paper_parts.append(prefix + ", ".join(paper_metrics))
        if our_metrics:
            our_parts.append(prefix + ", ".join(our_metrics))
    paper = "; ".join(paper_parts) + " (means over processes)"
    if not found:
        return Assessment("not yet run", paper=paper)
    note = (f"; {incomparable} loss cell{'s' * (incomparable > 1)} run with M ≠ {loss_negatives} negatives, "
            "not compared" if incomparable else "")
    note += (f"; {SETTLED_LATER_MARK} trained longer, until it converged: "
             + ", ".join(f"{tables.COLUMN_TITLES[c]} / {p}" for c, p in sorted(later)) if later else "")
    ours = "; ".join(our_parts) + (extra(found) if extra else "") + f" ({tally.cells}{note})"
    verdict = tally.verdict if tally.n_run else "measured"
    return Assessment(verdict, describe_budget(found.values()), paper, ours,
                      disagreements=tuple(tally.disagreements), reason=tally.reason())


def assess_table1(store: ResultStore) -> Assessment:
    """Table 1: R^2 of h = f o g, five processes x {holds, violated, adapted, + inductive bias}.

    Shape: the orderings the paper's table shows (``cldiv.synthetic.table1.shape_checks``), on our
    means, for the processes whose four cells were all run.
    """
    assessment = _table_assessment(store, tables.TABLE1_COLUMNS, ["r2"])
    found, _ = settle(find_runs(store, table_cells(tables.TABLE1_COLUMNS)), store, settled_runs)
    processes = [p for p in SYNTHETIC_PROCESSES
                 if all((c, p) in found for c in tables.TABLE1_COLUMNS if tables.has_cell(c, p))]
    if not processes:
        return assessment
    checks = tables.shape_checks(lambda c, p: statistics.fmean(metric_values(found[c, p][1], "r2"))
                                 if (c, p) in found else float("nan"), processes)
    failing = [claim for claim, holds in checks if not holds]
    shape = f"{len(checks) - len(failing)}/{len(checks)} orderings hold" + (
        f"; not: {'; '.join(failing)}" if failing else "")
    if any(claim.startswith("patches: inverse encoder") for claim in failing):
        shape += _patches_protocol_note(store)
    return replace(assessment, shape=shape,
                   reason=f"{len(checks) - len(failing)}/{len(checks)} orderings hold; {assessment.reason}")


def _patches_protocol_note(store: ResultStore) -> str:
    """Where stored, the Patches + inductive-bias cell under the authors' code's protocol (the last
    row of ``PATCHES_IB_PROTOCOLS``, the paper's sizes), which produced the published value: what
    the cell does when the paper's protocol misses its shape check; "" if not all its runs are stored."""
    runs = [store.load(c) for c in studies.patches_ib_protocol_configs("paper", studies.PATCHES_IB_SEEDS)[-1]]
    if None in runs:
        return ""
    definition, lr, _ = studies.PATCHES_IB_PROTOCOLS[-1]
    values = metric_values(runs, "r2")
    return (f" (under the authors' code's protocol, the {definition} Patches at lr {lr.split()[0]} and "
            f"{runs[0]['config']['iterations']} it: R² {statistics.fmean(values):.2f} ± {statistics.pstdev(values):.2f}, "
            f"{len(values)} runs, {'settled' if settled(runs, store) else 'not settled'}; synthetic chapter, "
            "'Patches + inductive bias under the code's protocol')")


def assess_table3(store: ResultStore) -> Assessment:
    """Table 3: MCC, APE and final loss when diversity holds (MLP encoder).

    The published loss matches 4000 negatives, not the protocol's 2000 (measured with the authors' code; the errata
    chapter), so ours is compared like with like at 4000, and the loss at 2000 is shown beside it.
    """

    def loss_with_2000_negatives(found: Cells) -> str:
        values = [v for _, runs in found.values() for v in metric_values(runs, "final_loss", 2000)]
        return f"; loss with the protocol's 2000 negatives {statistics.fmean(values):.2f}" if values else ""

    return _table_assessment(store, ["holds"], ["mcc", "ape_code", "final_loss"],
                             extra=loss_with_2000_negatives, loss_negatives=4000)


def assess_tables4_6(store: ResultStore) -> Assessment:
    """Tables 4-6: MCC, APE and final loss when diversity is violated (InfoNCE, adapted, inverse)."""
    return _table_assessment(store, ["violated", "adapted", "inverse"], ["mcc", "ape_code", "final_loss"])


#: Figure 5a's bars as columns of ``cldiv.synthetic.table1``: (encoder, condition) -> column.
FIGURE5A_COLUMNS = {("mlp", "holds"): "holds", ("mlp", "violated"): "violated",
                    ("inverse", "holds"): "inverse_holds", ("inverse", "violated"): "inverse"}


def replicate_means(cells: Sequence[list[dict]]) -> list[float]:
    """One bar of Figure 5a per replication: for each seed run in every one of ``cells`` (the runs
    of each process), the mean R^2 over the processes; so a bar over 3 seeds is 3 values, compared
    like any cell of ours (``cell_agrees``: Welch over our seeds)."""
    by_seed = [{run["config"]["seed"]: run["metrics"]["r2"] for run in runs} for runs in cells]
    common = sorted(set.intersection(*(set(values) for values in by_seed))) if by_seed else []
    return [statistics.fmean(values[seed] for values in by_seed) for seed in common]


def assess_figure5a(store: ResultStore) -> Assessment:
    """Figure 5a: mean R^2 over processes, MLP vs inverse encoders, diversity holds vs violated.
    The published bars carry no sd (compared as exact values); ours are ``replicate_means``."""
    found, _ = settle(find_runs(store, table_cells(FIGURE5A_COLUMNS.values())), store, settled_runs)
    tally, paper_parts, our_parts = Tally(), [], []
    for (encoder, condition), column in FIGURE5A_COLUMNS.items():
        label = f"{'MLP' if encoder == 'mlp' else 'inverse'} {condition}"
        published = FIGURE5A[encoder][condition]
        paper_parts.append(f"{label} {published:.2f}")
        processes = [p for p in SYNTHETIC_PROCESSES if tables.has_cell(column, p)]
        means = [statistics.fmean(metric_values(found[column, p][1], "r2")) for p in processes if (column, p) in found]
        complete = len(means) == len(processes)
        tally.add(replicate_means([found[column, p][1] for p in processes]) if complete else [],
                  (published, 0.0), "r2", label=label,
                  converged=all(settled(found[column, p][1], store) for p in processes if (column, p) in found))
        if means:
            our_parts.append(f"{label} {statistics.fmean(means):.2f}"
                             + ("" if complete else f" ({len(means)}/{len(processes)} processes)"))
    paper = "; ".join(paper_parts)
    if not found:
        return Assessment("not yet run", paper=paper)
    verdict = tally.verdict if tally.n_run else "partly"
    return Assessment(verdict, describe_budget(found.values()), paper, "; ".join(our_parts) + f" ({tally.cells})",
                      disagreements=tuple(tally.disagreements), reason=tally.reason())


def assess_constraint_sweep(store: ResultStore) -> Assessment:
    """Tables 8-11 / Figure 5b: support-corrected loss with a fraction rho of negatives on K(z).

    The paper's Tables 8-11 give means without standard deviations; compared here are the sweep's
    rho = 1 MLP cells, which play the part of Table 1's "adapted" column. The verdict is at most "partly" until
    the paper's whole grid (11 values of rho x 5 processes x {MLP, inverse}) has been run. Also
    shown: how many of the sweep's ends agree with Table 1's cells run at the same settings.
    """
    def configs(budget: str):
        for config in sweep_configs("constraint_ratio", budget):
            yield (config.encoder, config.process, config.rho), config

    found = find_runs(store, configs)
    adapted = statistics.fmean(published_cell("r2", "adapted", p)[0] for p in SYNTHETIC_PROCESSES)
    paper = (f"Table 8: mean R² at 11 values of ρ for 9 process / encoder curves (no sd); ρ = 1 (MLP) is Table 1 "
             f"adapted, R² {adapted:.2f} (mean over processes)")
    if not found:
        return Assessment("not yet run", paper=paper)
    tally = Tally()
    for process in SYNTHETIC_PROCESSES:
        runs = found.get(("mlp", process, 1.0), (None, []))[1]
        tally.add(metric_values(runs, "r2"), published_cell("r2", "adapted", process), "r2",
                  label=f"ρ = 1 MLP / {process} / R²", converged=settled(runs, store))
    parts = []
    for encoder, label in (("mlp", "MLP"), ("inverse", "inverse")):
        ends = []
        for rho in (0.0, 1.0):
            values = [statistics.fmean(metric_values(runs, "r2")) for (e, _, r), (_, runs) in found.items()
                      if e == encoder and r == rho]
            ends.append(f"{statistics.fmean(values):.2f}" if values else "?")
        if ends != ["?", "?"]:
            parts.append(f"{label} R² {ends[0]} → {ends[1]} (ρ 0 → 1)")
    grid = len(constraint_ratio_cells(SYNTHETIC_PROCESSES, ("mlp", "inverse"))) * len(budgets.budget("constraint_ratio", "paper").axes["rhos"])
    rhos = sorted({rho for _, _, rho in found})
    verdict = tally.verdict if tally.n_run else "measured"
    if verdict == "reproduced" and len(found) < grid:
        verdict = "partly"
    compared = tally.cells if tally.n_run else "not run"
    runs = [run for _, cell in found.values() for run in cell]
    companions = [store.load(c) for c in endpoint_companions(SyntheticConfig(**r["config"]) for r in runs)]
    ends = endpoint_agreement(runs, [r for r in companions if r is not None], store=store)
    separate = [r for r in ends if not r["same"]]
    same = f" ({len(ends) - len(separate)} more are Table 1's cells themselves)" if len(separate) < len(ends) else ""
    ends_text = (f"; ends agree with Table 1 cells at the same settings: {sum(r['agrees'] for r in separate)}/"
                 f"{len(separate)}{same}") if ends else ""
    settled_found, _ = settle(found, store, settled_runs)  # each point where it settled, as the chapter shows it
    t8 = table8_counts(table8_comparison({(p, e, r): runs for (e, p, r), (_, runs) in settled_found.items()}))
    t8_text = (f"; Table 8: {t8['within_near']}/{t8['points']} points within 0.05 of the published mean, "
               f"{t8['within_far']} within 0.10" + (f", r {t8['pearson']:.2f}" if t8["points"] > 2 else "")) if t8["points"] else ""
    ours = (f"{'; '.join(parts)}; ρ = 1 vs Table 1: {compared}{ends_text}{t8_text}; {len(found)}/{grid} cells of the "
            f"paper's grid (ρ ∈ {{{', '.join(f'{r:g}' for r in rhos)}}})")
    reason = (f"Table 8: {t8['within_near']}/{t8['points']} points within 0.05; " if t8["points"] else "") + \
        f"ρ = 1 vs Table 1: {compared}; {len(found)} of the paper's {grid} points run"
    return Assessment(verdict, describe_budget(found.values()), paper, ours, disagreements=tuple(tally.disagreements),
                      reason=reason)


def assess_progressive_violation(store: ResultStore) -> Assessment:
    """Table 7 / Figure 5c: R^2 against d_fixed = 0..10 on S^9 (linear and monomial embeddings), each
    point compared with Table 7 (``cldiv.synthetic.sweep_findings.table7_comparison``: the code's
    in-sample R^2, its fair sign coin at d_fixed = 9). Each point at the shortest stored length at
    which it has converged (``cldiv.synthetic.convergence.settled_runs``), marked ‡ if that is longer
    than the budget's; one that has not converged at any is marked † and not compared."""
    def configs(budget: str):
        for config in sweep_configs("progressive_violation", budget):
            yield (config.process, config.positive_law, config.d_fixed), config

    published_points = sum(map(len, TABLE7_R2.values()))
    paper = "; ".join(f"{process.replace('_', ' ')} R² by d_fixed {{" + ", ".join(
        f"{d}: {mean:.2f}" for d, (mean, _) in enumerate(row)) + "}" for process, row in TABLE7_R2.items())
    found = find_runs(store, configs)
    if not found:
        return Assessment("not yet run", paper=paper)
    found, later = settle(found, store, settled_runs)
    rows = table7_comparison({key: runs for key, (_, runs) in found.items()})
    law = lambda d: "code" if d == 9 else "paper"  # noqa: E731  (Table 7's positive law at d_fixed)
    unconverged = {(r["process"], r["d_fixed"]) for r in rows
                   if not settled(found[r["process"], law(r["d_fixed"]), r["d_fixed"]][1], store)}
    parts = []
    for process in PROGRESSIVE_PROCESSES:
        shown = [f"{r['d_fixed']}: {r['ours'][0]:.2f}"
                 + (f" {NOT_CONVERGED_MARK}" if (process, r["d_fixed"]) in unconverged else " ✓" * r["agrees"])
                 + f" {SETTLED_LATER_MARK}" * ((process, law(r["d_fixed"]), r["d_fixed"]) in later)
                 for r in rows if r["process"] == process]
        if shown:
            parts.append(f"{process.replace('_', ' ')} R² by d_fixed {{" + ", ".join(shown) + "}")
    agree = sum(r["agrees"] for r in rows if (r["process"], r["d_fixed"]) not in unconverged)
    ours = "; ".join(parts) + f" ({agree}/{len(rows) - len(unconverged)} compared points agree, ✓)"
    ours += f" ({NOT_CONVERGED_MARK} not converged: {len(unconverged)} of {len(rows)} points)" if unconverged else ""
    longer = sum((r["process"], law(r["d_fixed"]), r["d_fixed"]) in later for r in rows)
    ours += f" ({SETTLED_LATER_MARK} trained longer, until it converged: {longer} of {len(rows)} points)" if longer else ""
    verdict = claim_verdict(published_points, len(rows), agree, len(unconverged))
    reason = f"{agree}/{len(rows) - len(unconverged)} converged points agree"
    lengths = table7_length_numbers(table7_protocol_rows(store))
    if lengths["both"]:
        reason += (f"; at the authors' code's protocol {lengths['both_agree_5000']}/{lengths['both']} after 5000 steps, "
                   f"{lengths['both_agree_100']}/{lengths['both']} after 100")
    if lengths["log_below"] > lengths["log_points"] / 2:
        reason += "; the code's own log fits longer training"
    return Assessment(verdict, describe_budget(found.values()), paper, ours, reason=reason)


# ----------------------------------------------------------------------------- images (SimCLR)


# ----------------------------------------------------------------------------- the scorecard

CLAIMS: tuple[Claim, ...] = (
    Claim("Table 1", "R² of the recovery map: 5 processes × {holds, violated, adapted, + inductive bias}",
          "synthetic_benchmark", assess_table1, section="sec-table1"),
    Claim("Table 3", "MCC, APE, final loss when diversity holds (MLP)", "synthetic_benchmark", assess_table3,
          section="sec-tables3-6"),
    Claim("Tables 4–6", "MCC, APE, final loss when diversity is violated", "synthetic_benchmark",
          assess_tables4_6, section="sec-tables3-6"),
    Claim("Figure 5a", "mean R²: MLP vs inverse encoders, holds vs violated", "synthetic_benchmark",
          assess_figure5a, section="sec-figure5a"),
    Claim("Tables 8–11, Figure 5b", "constraint-ratio sweep ρ of the support-corrected loss",
          "constraint_ratio", assess_constraint_sweep, section="sec-table8"),
    Claim("Table 7, Figure 5c", "progressive violation d_fixed = 0..10 on S⁹", "progressive_violation",
          assess_progressive_violation, section="sec-table7"),
    Claim("Figure 3", "CIFAR-10 SimCLR: 3 encoders × 3 augmentation regimes", "cifar10", assess_figure3,
          section="sec-figure3-claims"),
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
        fields = asdict(assessment) | {"reason": assessment.reason or assessment.ours}
        rows.append(Row(claim.name, claim.what, claim.chapter, claim.section or f"chapter-{claim.chapter.replace('_', '-')}",
                        exists, **fields))
    return rows
