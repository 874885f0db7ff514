"""Has a training run converged? A verdict computed from the run's stored training curve.

A result says what the paper's protocol measures only if training has settled: a run stopped
while its recovery is still moving reports a point on the way, not an outcome. Every stored run
has a curve of the held-out R^2 (affine fit on fixed held-out latents) and of the training-batch
loss, logged every ``eval_every`` iterations. A run is **converged** when, over the last quarter
of its iterations,

- its held-out R^2 moved by at most ``R2_TOLERANCE`` = 0.02 along its Theil-Sen line (the median
  of the pairwise slopes) through the logged points from the last one at or before 75% of the
  iterations to the end: a trend, so that the noise of a run that has settled, large at small
  batches, is not read as movement, and a robust one, so that a single spike (the R^2 of a noisy
  small-batch run dips to -1 at one evaluation now and then) does not tilt it, and
- its training loss did not still fall: the mean of the later half of the last quarter's logged
  losses is not below the mean of the earlier half by more than ``LOSS_TOLERANCE`` = 0.02 *and*
  twice the standard error of that difference (the batch loss is noisy, most of all at the small
  batches of the support-corrected runs). With fewer than four logged losses in the last
  quarter only the R^2 criterion applies.

Why 0.02. It is the scorecard's agreement floor for R^2 (``cldiv.runs.verdicts.FLOOR``): a run
still moving by more than that could move its cell across the line between agreeing and not.
On the runs committed by 2 December 2026 the last-quarter |change of R^2| has median 0.001-0.005
in Table 1's holds, violated and inverse columns and their variants, where 72 of 75, 87 of 102 and
97 of 111 runs pass, and 0.022 in the adapted column, where 39 of 87 pass (most of them at 16
anchors a step); among the sweeps' runs the 90th percentile is 0.064 and 427 of 654 pass, the
audit's point that the sweeps' first budgets were too small. ``python3 -m cldiv.book.convergence_report``
prints these counts for the current store.

Cells. A table cell or sweep point reports the mean held-out R^2 over its seeds, so what must have
settled is that mean. The run verdicts above are a screen: every run of a cell with a run not
converged is also trained for ``LONGER`` = 2 times the iterations, and once those runs are all
stored they decide, whatever the shorter runs' curves say: the cell has converged when they left
its mean R^2 where it was (``r2_change`` "no": within the floor 0.02 or the seeds' spread). While
they are not stored, a cell has converged when every run has (``settled``). Why both halves. On
the runs committed by 3 December 2026, of the 23 cells of the three headline tables (Table 1 at its
preferred budget, both sweeps at ``cpu``) with a run not converged, doubling left the mean where it
was in 17, moved it in 3 and may have in 3: most flagged runs wobble by a few hundredths around a
level their seeds share, or have a noisy loss. Conversely, of the 14 points all of whose runs had
converged and whose doubled runs are stored (all progressive-violation points), one moved
(injective linear, d_fixed = 2: every seed left its plateau late, R^2 0.01 -> 0.09), which the
shorter runs' curves do not show.

Longer still. A cell that moved when doubled (or may have) is doubled again, and so on
(``doubling_steps``), until a doubling leaves its mean R^2 where it was; ``settled_runs`` are its
runs at that length, the shortest at which it has converged (``cldiv.runs.doubling``, which the
SimCLR cells share). A cell that moved once is not trusted to its curves again.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from cldiv.runs.convergence import LAST_SHARE, loss_trend, trend
from cldiv.runs.doubling import LONGER, Doubling, add_step, drift_note
from cldiv.runs.verdicts import change_verdict
from cldiv.config import with_overrides
from cldiv.synthetic.config import SyntheticConfig

R2_TOLERANCE = 0.02
#: The explanation of ``NOT_CONVERGED_MARK`` under a synthetic table.
NOT_CONVERGED_NOTE = ("not converged: training every run twice as long moved the mean held-out R² (or may have, "
                      "which the seeds cannot tell), or, where those runs are not stored, some run's held-out R² "
                      "or loss still moved over the last quarter of training (cldiv.synthetic.convergence)")


@dataclass(frozen=True)
class Convergence:
    """The verdict on one run and the two changes it rests on."""

    converged: bool
    r2_change: float   # held-out R^2 at the end minus at the start of the last quarter
    loss_drop: float   # mean loss of the earlier half of the last quarter minus the later half (nan: too few points)
    loss_trend: str    # "falling" (the loss criterion failed), "rising", "no trend" or "not judged"


def convergence(record: dict) -> Convergence:
    """The convergence verdict of a stored synthetic run (module docstring)."""
    curve = record["curves"]
    iterations = curve["iteration"]
    start = (1 - LAST_SHARE) * record["config"]["iterations"]
    first = max([i for i, it in enumerate(iterations) if it <= start], default=0)
    r2_change = trend(iterations[first:], curve["r2"][first:])
    loss_drop, direction = loss_trend([loss for it, loss in zip(iterations, curve["loss"]) if it > start])
    return Convergence(abs(r2_change) <= R2_TOLERANCE and direction != "falling", r2_change, loss_drop, direction)


def converged(record: dict) -> bool:
    return convergence(record).converged


def what_moved(verdict: Convergence) -> str:
    """What kept a run from converging: "R² only" (its loss had no trend, ``loss_trend``), "R², loss
    rising", "R², loss falling", "R², loss not judged" or "loss falling"; "" for a converged run."""
    if verdict.converged:
        return ""
    if abs(verdict.r2_change) <= R2_TOLERANCE:
        return "loss falling"
    return "R² only" if verdict.loss_trend == "no trend" else f"R², loss {verdict.loss_trend}"


def unsettled_markdown(rows: list[tuple[str, dict]]) -> str:
    """The runs of ``rows`` ((label, stored run)) that have not converged, one table row each: the
    final held-out R^2, its change and the loss drop over the last quarter, and ``what_moved``; "" if
    every run has converged."""
    lines = ["| run | R² at the end | R² change, last quarter | loss drop, last quarter | what moved |",
             "|---|---|---|---|---|"]
    moved = []
    for label, record in rows:
        verdict = convergence(record)
        if verdict.converged:
            continue
        moved.append(what_moved(verdict))
        drop = "–" if math.isnan(verdict.loss_drop) else f"{verdict.loss_drop:+.3f}"
        lines.append(f"| {label} | {record['metrics']['r2']:.3f} | {verdict.r2_change:+.3f} | {drop} | {moved[-1]} |")
    return "\n".join(lines) if moved else ""


def longer_configs(runs: list[dict]) -> list[SyntheticConfig]:
    """The configs of ``runs`` at LONGER times their iterations."""
    return [with_overrides(SyntheticConfig(**r["config"]), iterations=LONGER * r["config"]["iterations"]) for r in runs]


def r2_converged(records: list[dict]) -> str:
    """'mean ± std (converged/runs converged)' of the held-out R^2 of ``records``."""
    r2 = [r["metrics"]["r2"] for r in records]
    return (f"{statistics.fmean(r2):.2f} ± {statistics.pstdev(r2):.2f} "
            f"({sum(map(converged, records))}/{len(records)} converged)")


def r2_change(runs: list[dict], longer: list[dict]) -> str:
    """Whether ``longer`` (``runs`` at LONGER times the iterations) changed the held-out R^2:
    ``cldiv.runs.verdicts.change_verdict``, "yes", "no" or "not clear"."""
    return change_verdict([r["metrics"]["r2"] for r in runs], [r["metrics"]["r2"] for r in longer], "r2")


#: How synthetic runs are doubled (``cldiv.runs.doubling``): iterations, the mean held-out R^2.
DOUBLING = Doubling(longer_configs, converged, r2_change)
#: Whether a group of runs (a table cell, a sweep point) has converged; its doubling steps; its runs
#: at the shortest length at which it has (module docstring, "Cells" and "Longer still").
settled, doubling_steps, settled_runs = DOUBLING.settled, DOUBLING.steps, DOUBLING.settled_runs


def longer_markdown(rows: list[tuple[str, tuple, str]], first: str) -> str:
    """A markdown table of ``doubling_steps`` steps, one row per (label, step, command): R^2 over seeds and
    converged runs at the runs' iterations and at LONGER times them, or, while none of the longer runs is
    stored, ``command``, which trains them; whether the longer runs changed the R^2 (``r2_change``, once all
    are stored); and, on a cell's last row, a note where it is still drifting
    (``cldiv.runs.doubling.drift_note``) or its runs switch between states (``switching_note``).
    ``first``: the first column's title."""
    table: list[list[str]] = []
    chains: dict[str, list[tuple[int, float]]] = {}
    latest: dict[str, list[dict]] = {}  # label -> its longest stored runs
    last_row: dict[str, int] = {}
    for label, (runs, configs, stored), command in rows:
        partly = f"; {len(stored)} of {len(configs)} runs stored" if 0 < len(stored) < len(configs) else ""
        later = r2_converged(stored) + partly if stored else f"not stored yet: `{command}`"
        changed = r2_change(runs, stored) if len(stored) == len(configs) else ""
        if changed:
            add_step(chains, label, changed, (runs[0]["config"]["iterations"], _mean_r2(runs)),
                     (configs[0].iterations, _mean_r2(stored)))
            latest[label] = stored
        last_row[label] = len(table)
        table.append([label, f"{runs[0]['config']['iterations']} it: {r2_converged(runs)}",
                      f"{configs[0].iterations} it: {later}", changed, ""])
    for label, chain in chains.items():  # the cells not settled
        table[last_row[label]][4] = "; ".join(note for note in (drift_note(chain, "it", 2),
                                                                switching_note(latest[label])) if note)
    lines = [f"| {first} | R² | R² at {LONGER}x the iterations | R² changed | note |", "|---|---|---|---|---|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in table])


#: A run whose held-out R^2 spans more than this over the last half of its training switches between
#: states (near-isometric and collapsed ones) rather than settling. On the 1392 stored synthetic runs of
#: 5 Dec 2026, 1.4 % of the runs converged by their curves and 11 % of the others spanned more than 0.3.
SWITCH_SPAN = 0.3


def late_span(record: dict) -> float:
    """max - min of a run's held-out R^2 over the last half of its logged curve."""
    late = record["curves"]["r2"][len(record["curves"]["r2"]) // 2:]
    return max(late) - min(late)


def switching_note(runs: list[dict]) -> str:
    """How many of ``runs`` switch between states (``late_span`` above SWITCH_SPAN), "2 of 3 runs switch
    states (spans 0.31–0.52)": such a cell's mean is a snapshot of where its runs were when training stopped,
    and a longer run need not settle it; "" if none does."""
    spans = sorted(span for span in map(late_span, runs) if span > SWITCH_SPAN)
    if not spans:
        return ""
    return (f"{len(spans)} of {len(runs)} runs switch states (R² spans {spans[0]:.2f}"
            + (f"–{spans[-1]:.2f}" if len(spans) > 1 else "") + " over the last half)")


def _mean_r2(records: list[dict]) -> float:
    return statistics.fmean(r["metrics"]["r2"] for r in records)


#: How far a run's final loss (evaluation mode, fresh batch) may exceed its training-mode loss over
#: the last quarter before the run is read as exploiting BatchNorm's batch statistics. On the
#: committed adapted runs the gap is either below 0.2 or above 0.5 (synthetic chapter, "How big
#: the adapted cells must be").
SHORTCUT_GAP = 0.5


def loss_gap(record: dict) -> float:
    """``final_loss`` (the training objective on a fresh batch in evaluation mode: BatchNorm running
    statistics) minus the mean logged training-batch loss over the last quarter (training mode:
    each call's batch statistics). Near zero when the encoder computes the same function in both
    modes; large when training lowered the loss through the batch statistics themselves, which a
    fresh batch in evaluation mode does not reproduce."""
    curve, start = record["curves"], (1 - LAST_SHARE) * record["config"]["iterations"]
    late = [loss for it, loss in zip(curve["iteration"], curve["loss"]) if it > start] or curve["loss"][-1:]
    return record["metrics"]["final_loss"] - statistics.fmean(late)


def batch_statistics_shortcut(record: dict) -> bool:
    """Whether a run's ``loss_gap`` exceeds ``SHORTCUT_GAP``."""
    return loss_gap(record) > SHORTCUT_GAP
