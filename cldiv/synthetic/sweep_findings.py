"""What the two sweeps of Section 4 say against the paper: the constraint-ratio sweep (Tables 8-11,
Figure 5b), its endpoints against Table 1, the price of sharing negatives, and the progressive
violation in 10-D (Table 7): numbers and tables computed from the stored runs; the sentences are the chapters'.
"""

from __future__ import annotations

import statistics
from typing import Iterable, Sequence

from cldiv.published import (TABLE10_11_RHOS, TABLE10_APE, TABLE11_LOSS, TABLE7_CODE_LOG, TABLE7_R2, TABLE8_R2,
                             TABLE8_RHOS, published)
from cldiv.config import check_choice
from cldiv.runs.verdicts import FLOOR, cell_agrees
from cldiv.synthetic.convergence import converged
from cldiv.synthetic.findings import value_range
from cldiv.synthetic.sweeps import table7_code_config
from cldiv.synthetic.table1 import COLUMN_TITLES, fmt


NAN = float("nan")


def constraint_ratio_numbers(rows: dict, processes: Iterable[str], rhos: Iterable[float]) -> dict[str, float]:
    """The numbers the constraint-ratio chapter's conclusions cite (nan where not run). rows:
    ``summary_rows("constraint_ratio", ...)``, (process, encoder) -> {rho: (mean, std, n)}. The MLP's
    lowest and highest mean R^2 over processes at rho = 1 (``mlp_one_low``/``_high``) against Table 1's
    adapted column for the same processes (``adapted_low``/``_high``); ``interior``, the number of MLP
    curves whose best rho lies inside and beats both ends by more than the scorecard's R^2 floor
    (``cldiv.runs.verdicts.FLOOR``); the mean over processes of the inverse encoders at the smallest
    and the largest rho (``inverse_low_rho``, ``inverse_high_rho``)."""
    processes, rhos = list(processes), sorted(rhos)
    lo, hi = rhos[0], rhos[-1]

    def r2(process: str, encoder: str, rho: float) -> float | None:
        row = rows.get((process, encoder), {})
        return row[rho][0] if rho in row else None

    def spread(values: list[float]) -> tuple[float, float]:
        return (min(values), max(values)) if values else (NAN, NAN)

    at_one = [p for p in processes if hi == 1.0 and r2(p, "mlp", hi) is not None]
    numbers = dict(zip(("mlp_one_low", "mlp_one_high"), spread([r2(p, "mlp", hi) for p in at_one])))
    numbers.update(zip(("adapted_low", "adapted_high"), spread([published("r2", "adapted", p)[0] for p in at_one])))
    interior = 0
    for p in processes:
        row = rows.get((p, "mlp"), {})
        best = max(row, key=lambda rho: row[rho][0]) if row else None
        if best not in (None, lo, hi) and row[best][0] - max(row[lo][0], row[hi][0]) > FLOOR["r2"]:
            interior += 1
    numbers["interior"] = interior
    for name, rho in (("inverse_low_rho", lo), ("inverse_high_rho", hi)):
        values = [r2(p, "inverse", rho) for p in processes if r2(p, "inverse", rho) is not None]
        numbers[name] = statistics.fmean(values) if values else NAN
    return numbers


def curve_ends_markdown(rows: dict) -> str:
    """Per curve of ``summary_rows("constraint_ratio", ...)``: mean R^2 at the smallest rho, the peak and
    where it is, and at the largest rho, as a markdown table."""
    lines = ["| process / encoder | $R^2$ at lowest $\\rho$ | peak $R^2$ (at $\\rho$) | $R^2$ at highest $\\rho$ |",
             "|---|---|---|---|"]
    for (process, encoder), row in rows.items():
        best = max(row, key=lambda rho: row[rho][0])
        lines.append(f"| {process} / {encoder} | {row[min(row)][0]:.2f} ($\\rho = {min(row):g}$) | {row[best][0]:.2f} "
                     f"({best:g}) | {row[max(row)][0]:.2f} ($\\rho = {max(row):g}$) |")
    return "\n".join(lines)


def lengths_markdown(lengths: Sequence[list[dict]], settled: list[dict] | None) -> str:
    """The runs of one point at each stored length (``DOUBLING.lengths``) as a markdown table: iterations,
    mean R^2 and the seeds' values, and which length it settled at (``DOUBLING.settled_runs``)."""
    lines = ["| iterations | mean $R^2$ | seeds | settled here |", "|---|---|---|---|"]
    settled_at = settled[0]["config"]["iterations"] if settled else None
    for runs in lengths:
        values = [r["metrics"]["r2"] for r in runs]
        iterations = runs[0]["config"]["iterations"]
        lines.append(f"| {iterations} | {statistics.fmean(values):.2f} | {', '.join(f'{v:.2f}' for v in values)} | "
                     f"{'yes' if iterations == settled_at else ''} |")
    return "\n".join(lines)


def endpoint_table(rows: list[dict]) -> str:
    """``cldiv.synthetic.sweeps.endpoint_agreement`` rows as a markdown table."""
    lines = ["| process / encoder | ρ | sweep R² | Table 1 cell, same settings | R² | agrees | converged |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['process']} / {r['encoder']} | {r['rho']:g} | {fmt(r['sweep'][:2])} ({r['sweep'][2]}) | "
                     f"{COLUMN_TITLES[r['column']]} | {fmt(r['table1'][:2])} ({r['table1'][2]}) | "
                     f"{'same runs' if r.get('same') else 'yes' if r['agrees'] else '**no**'} | "
                     f"{'yes' if r['converged'] else 'no'} |")
    return "\n".join(lines)


def endpoint_counts(rows: list[dict]) -> dict[str, int]:
    """How the ends of the sweep compare with Table 1 (``endpoint_agreement`` rows): the cases, those that
    are Table 1's cells themselves (``same``), those compared (``compared``) and agreeing (``agree``),
    and the cases whose sweep point or Table 1 cell has not converged (``unsettled``)."""
    separate = [r for r in rows if not r.get("same")]
    return {"cases": len(rows), "same": len(rows) - len(separate), "compared": len(separate),
            "agree": sum(r["agrees"] for r in separate), "unsettled": sum(not r["converged"] for r in rows)}


def group_size_r2(records: Iterable[dict]) -> dict[int, list[float]]:
    """The runs of the group-size comparison (``sweeps.sharing_configs``): anchors per group -> held-out R^2."""
    sizes: dict[int, list[float]] = {}
    for record in records:
        config = record["config"]
        sizes.setdefault(config["batch_size"] // config["anchor_groups"], []).append(record["metrics"]["r2"])
    return dict(sorted(sizes.items()))


def sharing_alike(sizes: dict[int, list[float]]) -> dict[int, bool]:
    """The group-size comparison at rho = 0: sizes -> held-out R^2 of the seeds; for each group size
    other than 1, whether its runs agree with independent anchors' (size 1, two runs or more) by the
    scorecard's rule (``cell_agrees``); {} without two runs of size 1."""
    if len(sizes.get(1, [])) < 2:
        return {}
    reference = (statistics.fmean(sizes[1]), statistics.stdev(sizes[1]))
    return {size: cell_agrees(values, reference, "r2", runs=len(sizes[1]))
            for size, values in sorted(sizes.items()) if size != 1}


def sharing_markdown(sizes: dict[int, list[float]]) -> str:
    """The group-size comparison as a markdown table: anchors per group, R^2 mean ± std and the seeds'
    range, and whether it is alike independent anchors (``sharing_alike``)."""
    alike = sharing_alike(sizes)
    lines = ["| anchors per group | $R^2$ | seeds | alike independent anchors |", "|---|---|---|---|"]
    for size, values in sorted(sizes.items()):
        verdict = "—" if size == 1 else "yes" if alike.get(size) else "no" if size in alike else "not compared"
        lines.append(f"| {size} | {statistics.fmean(values):.2f} ± {statistics.pstdev(values):.2f} | "
                     f"{value_range(values, 2)} | {verdict} |")
    return "\n".join(lines)


def table7_comparison(points: dict[tuple, list[dict]]) -> list[dict]:
    """Table 7 against our runs, point by point. ``points``: (process, positive law, d_fixed) -> the
    runs shown for that point (``sweep_points`` of the chapter's settled records). Compared are the
    points Table 7 has: every d_fixed under the paper's positive law except 9, where the published
    figure comes from the authors' fair sign coin ("code"). Our value is the code's metric, the
    affine R^2 fitted and scored on the same points (``r2_in_sample``). Each row: process, d_fixed,
    published (mean, sd), ours (mean, sd, runs), agrees (``cell_agrees``, the scorecard's rule)."""
    rows = []
    for process, published_row in TABLE7_R2.items():
        for d_fixed, paper in enumerate(published_row):
            runs = points.get((process, "code" if d_fixed == 9 else "paper", d_fixed))
            if not runs:
                continue
            ours = [r["metrics"]["r2_in_sample"] for r in runs]
            rows.append({"process": process, "d_fixed": d_fixed, "published": paper,
                         "ours": (statistics.fmean(ours), statistics.pstdev(ours), len(ours)),
                         "iterations": runs[0]["config"]["iterations"], "agrees": cell_agrees(ours, paper, "r2")})
    return rows


def table7_markdown(rows: list[dict]) -> str:
    """``table7_comparison`` as a markdown table: one row per process, one column per d_fixed,
    each cell 'published / ours', ✓ where they agree."""
    processes = list(dict.fromkeys(r["process"] for r in rows))
    d_values = sorted({r["d_fixed"] for r in rows})
    cells = {(r["process"], r["d_fixed"]): r for r in rows}
    lines = ["| process | " + " | ".join(f"d = {d}" for d in d_values) + " |", "|---" * (len(d_values) + 1) + "|"]
    for process in processes:
        shown = []
        for d in d_values:
            row = cells.get((process, d))
            shown.append("" if row is None else f"{row['published'][0]:.3f} / {row['ours'][0]:.3f}"
                         + (" ✓" if row["agrees"] else ""))
        lines.append(f"| {process.replace('_', ' ')} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


#: The training lengths at which the errata chapter shows the authors' 10-D protocol: the 100 steps its
#: script sets, and the 5000 of the synthetic benchmark's protocol.
TABLE7_LENGTHS = (100, 5000)


def table7_protocol_rows(store, processes: Iterable[str] = tuple(TABLE7_R2), d_values: Iterable[int] = range(11),
                         lengths: Iterable[int] = TABLE7_LENGTHS, seeds: Iterable[int] = range(5)) -> list[dict]:
    """The stored runs of the authors' 10-D protocol (``table7_code_config``), one row per process, d_fixed
    and length, over the stored ``seeds``: how many runs (``runs``), the code's R^2 (in sample; mean
    ``r2_in_sample`` and sd ``r2_sd``), the mean last training-batch loss (``train_loss``), the lowest
    training-batch loss and the highest held-out R^2 any of them logged (``lowest_loss``, ``highest_r2``), the mean held-out R^2 at the first and the last
    evaluation of training (``r2_curve``), the first iteration at which every run's logged loss is at most the
    mean of the losses the authors' script logged (``TABLE7_CODE_LOG``; None if never: ``reaches_code_loss``),
    whether every run converged (``cldiv.synthetic.convergence.converged``), Table 7's (mean, sd) and whether
    the runs agree with it (``cell_agrees``: Welch's test, or for one run within the floor or two published
    sd). Points with no stored run are left out."""
    rows = []
    for process in processes:
        for d_fixed in d_values:
            code_loss = TABLE7_CODE_LOG[process][d_fixed][1]
            for iterations in lengths:
                records = [r for r in (store.load(table7_code_config(process, d_fixed, seed, iterations))
                                       for seed in seeds) if r is not None]
                if not records:
                    continue
                r2 = [r["metrics"]["r2_in_sample"] for r in records]
                curves = [r["curves"] for r in records]
                reached = [next((i for i, loss in zip(c["iteration"], c["loss"]) if loss <= code_loss), None)
                           for c in curves]
                rows.append({"process": process, "d_fixed": d_fixed, "iterations": iterations, "runs": len(r2),
                             "r2_in_sample": statistics.fmean(r2), "r2_sd": statistics.pstdev(r2),
                             "train_loss": statistics.fmean(r["metrics"]["train_loss_last"] for r in records),
                             "lowest_loss": min(min(c["loss"]) for c in curves),
                             "highest_r2": max(max(c["r2"]) for c in curves),
                             "r2_curve": (statistics.fmean(c["r2"][0] for c in curves),
                                          statistics.fmean(c["r2"][-1] for c in curves)),
                             "reaches_code_loss": None if None in reached else max(reached),
                             "converged": all(map(converged, records)), "published": TABLE7_R2[process][d_fixed],
                             "agrees": cell_agrees(r2, TABLE7_R2[process][d_fixed], "r2")})
    return rows


def table7_protocol_markdown(rows: list[dict]) -> str:
    """``table7_protocol_rows`` as a markdown table, one row per process and d_fixed, the code's R^2 (mean ± sd
    over the stored runs) and the last training loss at each stored length beside Table 7; the header gives
    the number of runs a point at each length."""
    lengths = sorted({r["iterations"] for r in rows})
    cells = {(r["process"], r["d_fixed"], r["iterations"]): r for r in rows}

    def runs(n: int) -> str:
        counts = sorted({r["runs"] for r in rows if r["iterations"] == n})
        shown = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        return f"{shown} run" + ("" if shown == "1" else "s")

    def cell(row: dict) -> str:
        spread = f" ± {row['r2_sd']:.3f}" if row["runs"] > 1 else ""
        return f"{row['r2_in_sample']:.3f}{spread} ({row['train_loss']:.2f})"

    lines = ["| process | d_fixed | Table 7 | " + " | ".join(f"R² at {n} steps (loss), {runs(n)}" for n in lengths)
             + " |", "|---" * (3 + len(lengths)) + "|"]
    for process, d_fixed in dict.fromkeys((r["process"], r["d_fixed"]) for r in rows):
        mean, sd = TABLE7_R2[process][d_fixed]
        shown = [cell(cells[process, d_fixed, n]) if (process, d_fixed, n) in cells else "" for n in lengths]
        lines.append(f"| {process.replace('_', ' ')} | {d_fixed} | {mean:.3f} ± {sd:.3f} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def table7_log_markdown(rows: list[dict]) -> str:
    """The authors' logged training losses (``TABLE7_CODE_LOG``) against ours: one row per process and source,
    one column per d_fixed with a stored 100-step run: the mean of the script's logged losses, the lowest loss
    our runs of the same 100 steps logged, and our last loss after 5000 steps where stored."""
    cells = {(r["process"], r["d_fixed"], r["iterations"]): r for r in rows}
    d_values = sorted({r["d_fixed"] for r in rows if r["iterations"] == 100})
    lines = ["| process | loss | " + " | ".join(f"d = {d}" for d in d_values) + " |", "|---" * (2 + len(d_values)) + "|"]
    for process in dict.fromkeys(r["process"] for r in rows if r["iterations"] == 100):
        def ours(d: int, iterations: int, field: str) -> float | None:
            row = cells.get((process, d, iterations))
            return row[field] if row else None

        sources = (("the code's log, mean", lambda d: TABLE7_CODE_LOG[process][d][1]),
                   ("ours, lowest in 100 steps", lambda d: ours(d, 100, "lowest_loss")),
                   ("ours, last after 5000 steps", lambda d: ours(d, 5000, "train_loss")))
        for label, value in sources:
            shown = ["" if value(d) is None else f"{value(d):.3f}" for d in d_values]
            if any(shown):
                lines.append(f"| {process.replace('_', ' ')} | {label} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def table7_length_counts(rows: list[dict]) -> dict[str, int]:
    """What ``table7_protocol_rows`` say about the training length behind Table 7: the points run for 100
    steps ("points_100") and how many agree with it ("agree_100"); the points run for both lengths
    ("both") and how many of them agree after 100 steps ("both_agree_100") and after 5000 ("both_agree_5000")."""
    by_key = {(r["process"], r["d_fixed"], r["iterations"]): r for r in rows}
    at_100 = [r for r in rows if r["iterations"] == 100]
    both = [(r, by_key[r["process"], r["d_fixed"], 5000]) for r in at_100 if (r["process"], r["d_fixed"], 5000) in by_key]
    return {"points_100": len(at_100), "agree_100": sum(r["agrees"] for r in at_100), "both": len(both),
            "both_agree_100": sum(a["agrees"] for a, _ in both), "both_agree_5000": sum(b["agrees"] for _, b in both)}


def table7_length_numbers(rows: list[dict]) -> dict[str, float]:
    """The numbers errata item 13 cites, from ``table7_protocol_rows`` (injective linear map; nan where not
    stored): at d_fixed = 2 the code's R^2 and loss after 100 steps (``short``, ``short_loss``) and after 5000
    (``long``, ``long_loss``) with Table 7's mean (``published``); at d_fixed = 9 after 5000 steps the code's
    R^2 (``nine``), the held-out R^2 at the first and last evaluation (``nine_first``, ``nine_last``) and Table
    7's mean (``nine_published``); ``table7_length_counts``; and against the authors' log (``TABLE7_CODE_LOG``,
    both maps): the 100-step points (``log_points``), those whose mean logged loss lies more than the loss floor
    below the lowest loss of our 100 steps (``log_below``), at d_fixed = 0 the mean logged R^2
    (``logged_r2_zero``) and our highest in 100 steps (``highest_r2_zero``), and the fewest and most steps our
    5000-step runs took to reach the code's mean logged loss (``reach_low``, ``reach_high``) and the largest
    difference between their last losses and the code's last logged ones (``final_gap``)."""
    at = {(r["d_fixed"], r["iterations"]): r for r in rows if r["process"] == "injective_linear"}
    short, long, nine, zero = at.get((2, 100)), at.get((2, 5000)), at.get((9, 5000)), at.get((0, 100))
    at_100 = [r for r in rows if r["iterations"] == 100]
    below = [TABLE7_CODE_LOG[r["process"]][r["d_fixed"]][1] < r["lowest_loss"] - FLOOR["final_loss"] for r in at_100]
    at_5000 = [r for r in rows if r["iterations"] == 5000]
    reached = [r["reaches_code_loss"] for r in at_5000 if r["reaches_code_loss"]]
    gaps = [abs(r["train_loss"] - TABLE7_CODE_LOG[r["process"]][r["d_fixed"]][0]) for r in at_5000]
    return {"short": short["r2_in_sample"] if short else NAN, "short_loss": short["train_loss"] if short else NAN,
            "long": long["r2_in_sample"] if long else NAN, "long_loss": long["train_loss"] if long else NAN,
            "published": TABLE7_R2["injective_linear"][2][0], "nine": nine["r2_in_sample"] if nine else NAN,
            "nine_first": nine["r2_curve"][0] if nine else NAN, "nine_last": nine["r2_curve"][1] if nine else NAN,
            "nine_published": TABLE7_R2["injective_linear"][9][0], **table7_length_counts(rows),
            "log_points": len(at_100), "log_below": sum(below),
            "logged_r2_zero": TABLE7_CODE_LOG["injective_linear"][0][2],
            "highest_r2_zero": zero["highest_r2"] if zero else NAN,
            "reach_low": min(reached, default=NAN), "reach_high": max(reached, default=NAN),
            "final_gap": max(gaps, default=NAN)}


#: The published tables of the constraint-ratio sweep that give one mean per point: metric -> (rho values, means).
PUBLISHED_SWEEP_MEANS = {"r2": (TABLE8_RHOS, TABLE8_R2), "ape_code": (TABLE10_11_RHOS, TABLE10_APE)}


def table8_comparison(points: dict[tuple, list[dict]], metric: str = "r2") -> list[dict]:
    """Table 8 (``metric="r2"``) or Table 10 (``"ape_code"``) against our runs, point by point. ``points``:
    (process, encoder, rho) -> the runs shown for that point (``sweep_points`` of the constraint-ratio
    chapter's settled records); compared are the points the table has. The tables give means only, so each
    row carries the difference of the means: process, encoder, rho, published mean, ours (mean, sd, runs),
    difference (ours - published)."""
    check_choice("metric", metric, tuple(PUBLISHED_SWEEP_MEANS))
    rhos, table = PUBLISHED_SWEEP_MEANS[metric]
    rows = []
    for (process, encoder), means in table.items():
        for rho, mean in zip(rhos, means):
            runs = points.get((process, encoder, rho))
            if runs:
                ours = [r["metrics"][metric] for r in runs]
                rows.append({"process": process, "encoder": encoder, "rho": rho, "published": mean,
                             "ours": (statistics.fmean(ours), statistics.pstdev(ours), len(ours)),
                             "difference": statistics.fmean(ours) - mean})
    return rows


def table8_counts(rows: list[dict], near: float = 0.05, far: float = 0.10) -> dict[str, float]:
    """How close ``table8_comparison`` is to the published means: points compared, within ``near`` and within
    ``far`` of the published mean, and the Pearson correlation of the two sets of means (nan with fewer than
    3 points)."""
    distance = [abs(r["difference"]) for r in rows]
    pairs = [(r["published"], r["ours"][0]) for r in rows]
    return {"points": len(rows), "within_near": sum(d <= near for d in distance),
            "within_far": sum(d <= far for d in distance),
            "pearson": statistics.correlation(*zip(*pairs)) if len(pairs) > 2 else float("nan")}


def table8_markdown(rows: list[dict], digits: int = 2) -> str:
    """``table8_comparison`` as a markdown table: one row per process / encoder, one column per rho, each
    cell 'published / ours' at ``digits`` decimals."""
    rhos = sorted({r["rho"] for r in rows})
    cells = {(r["process"], r["encoder"], r["rho"]): r for r in rows}
    lines = ["| process / encoder | " + " | ".join(f"ρ = {rho:g}" for rho in rhos) + " |", "|---" * (len(rhos) + 1) + "|"]
    for process, encoder in dict.fromkeys((r["process"], r["encoder"]) for r in rows):
        shown = [f"{cells[process, encoder, rho]['published']:.{digits}f} / {cells[process, encoder, rho]['ours'][0]:.{digits}f}"
                 if (process, encoder, rho) in cells else "" for rho in rhos]
        lines.append(f"| {process} / {encoder} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def loss_order(gap: float) -> str:
    """Which encoder reaches the lower loss, from the MLP's loss minus the inverse encoder's: "MLP", "inverse",
    or "neither" within the scorecard's loss floor."""
    return "neither" if abs(gap) <= FLOOR["final_loss"] else ("MLP" if gap < 0 else "inverse")


def table11_order_rows(points: dict[tuple, list[dict]]) -> list[dict]:
    """Table 11's losses are at 2000 negatives per anchor, ours at the budget's M, so only what does not depend
    on M is compared: at each rho of Table 11 and each process with an inverse encoder, the MLP's mean loss
    minus the inverse encoder's, published and ours (``points`` as for ``table8_comparison``), and whether
    ``loss_order`` reads them alike."""
    rows = []
    for (process, encoder), mlp in TABLE11_LOSS.items():
        if encoder != "mlp" or (process, "inverse") not in TABLE11_LOSS:
            continue
        for rho, published_mlp, published_inverse in zip(TABLE10_11_RHOS, mlp, TABLE11_LOSS[process, "inverse"]):
            runs = [points.get((process, e, rho)) for e in ("mlp", "inverse")]
            if all(runs):
                ours = [statistics.fmean(r["metrics"]["final_loss"] for r in side) for side in runs]
                published_gap, our_gap = published_mlp - published_inverse, ours[0] - ours[1]
                rows.append({"process": process, "rho": rho, "published": published_gap, "ours": our_gap,
                             "agrees": loss_order(published_gap) == loss_order(our_gap)})
    return rows


def table11_order_markdown(rows: list[dict]) -> str:
    """``table11_order_rows`` as a markdown table: one row per process, one column per rho, each cell
    'published / ours' (the MLP's loss minus the inverse encoder's), ✓ where the order agrees."""
    rhos = sorted({r["rho"] for r in rows})
    cells = {(r["process"], r["rho"]): r for r in rows}
    lines = ["| process | " + " | ".join(f"ρ = {rho:g}" for rho in rhos) + " |", "|---" * (len(rhos) + 1) + "|"]
    for process in dict.fromkeys(r["process"] for r in rows):
        shown = [f"{cells[process, rho]['published']:+.2f} / {cells[process, rho]['ours']:+.2f}"
                 + (" ✓" if cells[process, rho]["agrees"] else "") if (process, rho) in cells else "" for rho in rhos]
        lines.append(f"| {process} | " + " | ".join(shown) + " |")
    return "\n".join(lines)
