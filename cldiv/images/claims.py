"""Figure 3's claims, judged on stored SimCLR runs over seeds (paper Section 5).

The paper reads three claims off Figure 3:

1. **All is best**: for every encoder, the broadest augmentations (*All*) give a higher probe
   accuracy than *Crop only* and than *All w/o crop*;
2. **inductive bias helps**: in every regime, ResNet-18 > ViT > MLP;
3. **the gap widens**: the gap between the architectures of most and least inductive bias,
   ResNet-18 minus MLP, is larger in each restricted regime than under *All*.

Each claim is a set of linear contrasts of cell means, c = sum_j w_j mean_j (a difference of two
cells, or for claim 3 a difference of two differences), each tested one-sided by Welch's method:
t = c / se with se^2 = sum_j w_j^2 s_j^2 / n_j and Welch-Satterthwaite degrees of freedom. A
contrast **holds** when c > 0 at level SIGNIFICANCE, is **contradicted** when c < 0 at that level,
and is **not significant** otherwise. A claim holds when all its contrasts hold, is contradicted
when one is, and is otherwise not significant.

Before any of that, training must have taught the encoder something: a run **learns** when its
best probe accuracy exceeds that of the same encoder at initialisation; a cell learns when the
mean gain over its seeds, minus one sd, is at least LEARNING_MARGIN points (issue 13's bar).
And training must have finished: a run has **converged** when its NT-Xent is neither still falling
over the last quarter of its epochs (the synthetic runs' loss criterion,
``cldiv.runs.convergence.loss_trend``) nor diverging (``loss_settled``); a cell has
converged when, where its runs trained for LONGER times the epochs are all stored, those left
its best probe accuracy where it was, and otherwise when every run has (``cell_settled``, the
synthetic cells' rule, ``cldiv.synthetic.convergence.settled``). A contrast that uses a cell
that has not converged is **not converged**: it neither holds nor is contradicted. Accuracies
here are in percentage points.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from scipy.stats import t as student_t

from cldiv.images.simclr import SimCLRConfig
from cldiv.runs.verdicts import change_verdict
from cldiv.runs.doubling import LONGER, Doubling, add_step, drift_note
from cldiv.runs.convergence import LAST_SHARE, loss_trend

__all__ = ["CLAIM_NAMES", "Contrast", "LEARNING_MARGIN", "SIGNIFICANCE", "claim_verdict", "contrast",
           "cell_settled", "claim_contrasts", "contrasts_markdown", "converged_per_cell", "equal_length_contrasts",
           "equal_length_markdown", "figure3_claims",
           "gains_markdown", "learning_gain", "longer_markdown", "loss_settled", "per_cell", "published_differences",
           "runs_per_cell", "settled_cells", "training_converged", "unsettled_cells"]

SIGNIFICANCE = 0.05
#: Points by which training must beat the probe at initialisation (mean minus one sd over seeds).
LEARNING_MARGIN = 10.0
#: How far the last quarter's mean NT-Xent may lie above the quarter before for training to count as
#: settled (not diverging).
LOSS_TOLERANCE = 0.02
CLAIM_NAMES = ("All is best", "inductive bias helps", "the gap widens")
CONTRAST_VERDICTS = ("holds", "contradicted", "not significant", "not converged")


@dataclass(frozen=True)
class Contrast:
    """One tested contrast: its label, value (points), standard error, one-sided p and verdict."""

    claim: str
    label: str
    value: float
    se: float
    p: float
    verdict: str


def contrast(claim: str, label: str, cells: Sequence[tuple[float, Sequence[float]]],
             significance: float = SIGNIFICANCE) -> Contrast:
    """The contrast sum_j w_j mean(x_j) of ``cells`` = [(w_j, x_j), ...] tested against 0 (module
    docstring). Every x_j needs at least two values (a standard deviation)."""
    for _, values in cells:
        if len(values) < 2:
            raise ValueError(f"every cell of contrast {label!r} needs at least 2 seeds; got {len(values)}")
    value = sum(w * statistics.fmean(x) for w, x in cells)
    terms = [w * w * statistics.variance(x) / len(x) for w, x in cells]
    se = sum(terms) ** 0.5
    if se == 0:
        p = 0.0 if value > 0 else 1.0
        verdict = "holds" if value > 0 else "contradicted" if value < 0 else "not significant"
        return Contrast(claim, label, value, 0.0, p, verdict)
    df = se**4 / sum(term * term / (len(x) - 1) for term, (_, x) in zip(terms, cells) if term > 0)
    p = float(student_t.sf(value / se, df))  # one-sided: P(T >= t) under c = 0
    verdict = "holds" if p < significance else "contradicted" if 1 - p < significance else "not significant"
    return Contrast(claim, label, value, se, p, verdict)


def claim_verdict(contrasts: Sequence[Contrast]) -> str:
    """holds (all contrasts hold), contradicted (one is), not converged (some are, the others
    hold), otherwise not significant."""
    verdicts = {c.verdict for c in contrasts}
    if verdicts == {"holds"}:
        return "holds"
    if "contradicted" in verdicts:
        return "contradicted"
    return "not converged" if verdicts <= {"holds", "not converged"} else "not significant"


def claim_contrasts(encoders: Sequence[str], regimes: Sequence[str], labels: Mapping[str, str] | None = None
                    ) -> dict[str, list[tuple[str, list[tuple[int, tuple[str, str]]]]]]:
    """Claim -> [(label, [(weight, (encoder, regime)), ...]), ...]: the contrasts of the three claims
    that the given cells allow; encoders in order of decreasing inductive bias
    (``cldiv.images.IMAGE_ENCODERS``), the first regime the broadest ("all")."""
    name = dict(labels or {}).get
    broad, restricted = regimes[0], list(regimes[1:])
    out: dict[str, list] = {claim: [] for claim in CLAIM_NAMES}
    for e in encoders:
        for r in restricted:
            out["All is best"].append((f"{name(e, e)}: {name(broad, broad)} − {name(r, r)}",
                                       [(1, (e, broad)), (-1, (e, r))]))
    for r in regimes:
        for more, less in zip(encoders, encoders[1:]):
            out["inductive bias helps"].append((f"{name(r, r)}: {name(more, more)} − {name(less, less)}",
                                                [(1, (more, r)), (-1, (less, r))]))
    if len(encoders) >= 2:
        most, least = encoders[0], encoders[-1]
        for r in restricted:
            out["the gap widens"].append((f"({name(most, most)} − {name(least, least)}): {name(r, r)} − {name(broad, broad)}",
                                          [(1, (most, r)), (-1, (least, r)), (-1, (most, broad)), (1, (least, broad))]))
    return {claim: contrasts for claim, contrasts in out.items() if contrasts}


def figure3_claims(accuracy: Mapping[tuple[str, str], Sequence[float]], encoders: Sequence[str],
                   regimes: Sequence[str], labels: Mapping[str, str] | None = None,
                   unconverged: Collection[tuple[str, str]] = ()) -> dict[str, list[Contrast]]:
    """Every contrast of ``claim_contrasts`` tested on accuracy: (encoder, regime) -> per-seed points;
    a contrast that uses a cell of ``unconverged`` keeps its value but is *not converged*."""
    def tested(claim, label, weights):
        result = contrast(claim, label, [(w, accuracy[cell]) for w, cell in weights])
        return replace(result, verdict="not converged") if any(cell in unconverged for _, cell in weights) else result

    return {claim: [tested(claim, label, weights) for label, weights in items]
            for claim, items in claim_contrasts(encoders, regimes, labels).items()}


def published_differences(means: Mapping[tuple[str, str], float], encoders: Sequence[str], regimes: Sequence[str],
                          labels: Mapping[str, str] | None = None) -> dict[str, float]:
    """The same contrasts evaluated on published means (no test: the paper gives no per-seed values)."""
    return {label: sum(w * means[cell] for w, cell in weights)
            for items in claim_contrasts(encoders, regimes, labels).values() for label, weights in items}


def learning_gain(trained: Sequence[float], at_init: Sequence[float]) -> tuple[float, float, bool]:
    """Per-seed gains trained - at_init (points): (mean, sd, learns: mean - sd >= LEARNING_MARGIN).
    With one seed the sd is 0."""
    gains = [a - b for a, b in zip(trained, at_init, strict=True)]
    mean = statistics.fmean(gains)
    sd = statistics.stdev(gains) if len(gains) > 1 else 0.0
    return mean, sd, mean - sd >= LEARNING_MARGIN


def loss_settled(losses: Sequence[float], tolerance: float = LOSS_TOLERANCE) -> bool:
    """Whether the NT-Xent curve (one value per epoch) is still falling or flat, not diverging:
    the mean over the last quarter of epochs is at most ``tolerance`` above the mean over the
    quarter before (a trend, so that the epoch-to-epoch jitter of a small batch does not count).
    A curve shorter than two epochs counts as settled."""
    quarter = max(1, len(losses) // 4)
    if len(losses) < 2 * quarter:
        return True
    return statistics.fmean(losses[-quarter:]) <= statistics.fmean(losses[-2 * quarter:-quarter]) + tolerance


def training_converged(losses: Sequence[float]) -> bool:
    """Whether a SimCLR run has converged (module docstring): its NT-Xent, one value per epoch, is
    not still falling over the last quarter of the epochs (``loss_trend``; with fewer than
    four epochs there, only the next condition applies) and not diverging (``loss_settled``)."""
    last_quarter = list(losses[len(losses) - round(LAST_SHARE * len(losses)):])
    return loss_trend(last_quarter)[1] != "falling" and loss_settled(losses)


def per_cell(records: Mapping[tuple[str, str, int], dict], metric: str) -> dict[tuple[str, str], list[float]]:
    """(encoder, regime) -> ``metric`` of each seed's record in points, cells in the order of
    ``records`` ((encoder, regime, seed) -> stored SimCLR record; accuracies are stored as fractions)."""
    out: dict[tuple[str, str], list[float]] = {}
    for (encoder, regime, _), record in records.items():
        out.setdefault((encoder, regime), []).append(100 * record["metrics"][metric])
    return out


def converged_per_cell(records: Mapping[tuple[str, str, int], dict]) -> dict[tuple[str, str], list[bool]]:
    """(encoder, regime) -> ``training_converged`` of each seed's record, in the order of ``per_cell``."""
    out: dict[tuple[str, str], list[bool]] = {}
    for (encoder, regime, _), record in records.items():
        out.setdefault((encoder, regime), []).append(training_converged(record["curve"]["loss"]))
    return out


def longer_configs(runs: Sequence[dict]) -> list:
    """The configs of ``runs`` at LONGER times their epochs."""
    return [replace(SimCLRConfig(**r["config"]), epochs=LONGER * r["config"]["epochs"]) for r in runs]


def accuracy_change(runs: Sequence[dict], longer: Sequence[dict]) -> str:
    """Whether ``longer`` (``runs`` at LONGER times the epochs) changed the best probe accuracy:
    ``cldiv.runs.verdicts.change_verdict``, "yes", "no" or "not clear"."""
    return change_verdict(*([100 * r["metrics"]["probe_best"] for r in group] for group in (runs, longer)), "accuracy")


#: How SimCLR runs are doubled (``cldiv.runs.doubling``): epochs, the mean best probe accuracy.
DOUBLING = Doubling(longer_configs, lambda record: training_converged(record["curve"]["loss"]), accuracy_change)
#: Whether a cell's runs have converged (module docstring): where ``store`` holds all of them at LONGER
#: times the epochs, whether those left the best probe accuracy where it was; else whether every run has.
cell_settled = DOUBLING.settled


def runs_per_cell(records: Mapping[tuple[str, str, int], dict]) -> dict[tuple[str, str], list[dict]]:
    """(encoder, regime) -> its records, from ``records`` ((encoder, regime, seed) -> record)."""
    cells: dict[tuple[str, str], list[dict]] = {}
    for (encoder, regime, _), record in records.items():
        cells.setdefault((encoder, regime), []).append(record)
    return cells


def unsettled_cells(records: Mapping[tuple[str, str, int], dict], store=None) -> list[tuple[str, str]]:
    """The cells (encoder, regime) of ``records`` ((encoder, regime, seed) -> record) that have not
    converged (``cell_settled``, longer runs looked up in ``store``)."""
    return [cell for cell, runs in runs_per_cell(records).items() if not cell_settled(runs, store)]


def contrasts_markdown(claims: Mapping[str, Sequence[Contrast]]) -> str:
    """One row per tested contrast, then each claim's verdict (a markdown table)."""
    rows = ["| claim | contrast | difference (points) | se | one-sided p | verdict |", "|---|---|---|---|---|---|"]
    for claim, contrasts in claims.items():
        rows += [f"| {claim} | {c.label} | {c.value:+.1f} | {c.se:.1f} | {c.p:.3f} | {c.verdict} |" for c in contrasts]
        rows.append(f"| **{claim}** | all of the above | | | | **{claim_verdict(contrasts)}** |")
    return "\n".join(rows)


def gains_markdown(trained: Mapping[tuple[str, str], Sequence[float]], at_init: Mapping[tuple[str, str], Sequence[float]],
                   labels: Mapping[str, str], converged: Mapping[tuple[str, str], Sequence[bool]]) -> str:
    """Per cell: probe accuracy after SimCLR and at initialisation, the gain, whether it learns and
    how many of its runs converged (``converged``: cell -> one verdict per seed)."""
    rows = ["| cell | after SimCLR (%) | at init (%) | gain (points) | learns (gain − sd ≥ 10) | runs converged |",
            "|---|---|---|---|---|---|"]
    for cell, values in trained.items():
        mean, sd, learns = learning_gain(values, at_init[cell])
        rows.append(f"| {' / '.join(labels.get(k, k) for k in cell)} | {statistics.fmean(values):.1f} "
                    f"| {statistics.fmean(at_init[cell]):.1f} | {mean:+.1f} ± {sd:.1f} | {'yes' if learns else 'no'} "
                    f"| {sum(converged[cell])}/{len(converged[cell])} |")
    return "\n".join(rows)


def longer_markdown(records: Mapping[tuple[str, str, int], dict], store, labels: Mapping[str, str], command: str) -> str:
    """The cells of ``records`` with a run not converged or that have not converged (``cell_settled``),
    one row per step of their ``DOUBLING.steps`` (their runs at LONGER times the epochs, every other
    field unchanged, and again while that moved them) in ``store``: best probe accuracy over seeds and
    converged runs at both lengths, and whether the longer runs changed the accuracy
    (``accuracy_change``); while a step's longer runs are not all stored, the command that trains them
    (``command``, the ``cldiv simclr`` options that select the chapter's runs); then the cells still
    drifting (``cldiv.runs.doubling.drift_note``, on each row of a cell that drifts); "" if every run has converged."""
    def percent(runs):
        return [100 * r["metrics"]["probe_best"] for r in runs]

    def accuracy(runs):
        return (f"{statistics.fmean(percent(runs)):.1f} ± {statistics.pstdev(percent(runs)):.1f} "
                f"({sum(map(DOUBLING.converged, runs))}/{len(runs)} converged)")

    rows = ["| cell | best probe accuracy (%) | at twice the epochs | accuracy changed | note |", "|---|---|---|---|---|"]
    chains: dict[str, list[tuple[int, float]]] = {}
    for (encoder, regime), cell_runs in runs_per_cell(records).items():
        label = f"{labels.get(encoder, encoder)} / {labels.get(regime, regime)}"
        for runs, configs, stored in DOUBLING.steps(cell_runs, store):
            epochs = configs[0].epochs
            command_line = f"`cldiv simclr {command} --encoders {encoder} --regimes {regime} --epochs {epochs}`"
            complete = len(stored) == len(configs)
            later = (accuracy(stored) + ("" if complete else f"; {len(stored)} of {len(runs)} runs stored: {command_line}")
                     if stored else f"not stored yet: {command_line}")
            changed = accuracy_change(runs, stored) if complete else ""
            if changed:
                add_step(chains, label, changed, (runs[0]["config"]["epochs"], statistics.fmean(percent(runs))),
                         (epochs, statistics.fmean(percent(stored))))
            note = drift_note(chains[label], "epochs", 1) if label in chains else ""
            rows.append(f"| {label} | {runs[0]['config']['epochs']} epochs: {accuracy(runs)} | {epochs} epochs: {later} | "
                        f"{changed} | {note} |")
    return "" if len(rows) == 2 else "\n".join(rows)


def settled_cells(records: Mapping[tuple[str, str, int], dict], store) -> dict[tuple[str, str, int], dict]:
    """``records`` ((encoder, regime, seed) -> record) with every cell's runs at the shortest length
    at which the cell has converged (``DOUBLING.settled_runs`` in ``store``), or its own runs where
    the store holds no such length."""
    out = {}
    for cell, runs in runs_per_cell(records).items():
        for record in DOUBLING.settled_runs(runs, store) or runs:
            out[(*cell, record["config"]["seed"])] = record
    return out


def equal_length_contrasts(records: Mapping[tuple[str, str, int], dict], store, encoders: Sequence[str],
                           regimes: Sequence[str], labels: Mapping[str, str] | None = None,
                           unconverged: Collection[tuple[str, str]] = ()) -> list[tuple[int, Contrast]]:
    """The contrasts of ``claim_contrasts`` that use a cell of ``unconverged``, each evaluated with all
    its cells at one length: the longest number of epochs that every one of them has stored for every
    seed (``DOUBLING.lengths`` of ``records``, (encoder, regime, seed) -> record, in ``store``). Pairs
    (epochs, contrast), verdict kept *not converged*: where training stopped at an equal budget, not a
    verdict on the claim."""
    at_length = {cell: {runs[0]["config"]["epochs"]: [100 * r["metrics"]["probe_best"] for r in runs]
                        for runs in DOUBLING.lengths(cell_runs, store)}
                 for cell, cell_runs in runs_per_cell(records).items()}
    out = []
    for claim, items in claim_contrasts(encoders, regimes, labels).items():
        for label, weights in items:
            if any(cell in unconverged for _, cell in weights):
                epochs = max(set.intersection(*(set(at_length[cell]) for _, cell in weights)))
                tested = contrast(claim, label, [(w, at_length[cell][epochs]) for w, cell in weights])
                out.append((epochs, replace(tested, verdict="not converged")))
    return out


def equal_length_markdown(contrasts: Sequence[tuple[int, Contrast]]) -> str:
    """One row per (epochs, contrast) of ``equal_length_contrasts``: the epochs of every cell, the
    difference and its standard error (a markdown table)."""
    rows = ["| claim | contrast | epochs (every cell) | difference (points) | se |", "|---|---|---|---|---|"]
    rows += [f"| {c.claim} | {c.label} | {epochs} | {c.value:+.1f} | {c.se:.1f} |" for epochs, c in contrasts]
    return "\n".join(rows)
