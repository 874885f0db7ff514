"""The scorecard's check of Figure 3 (Section 5): SimCLR with three encoders under three augmentation
regimes, each cell's best linear-probe accuracy against the published one, and the paper's claims about
them (``cldiv.images.claims``) evaluated on our converged cells.
"""

from __future__ import annotations

import statistics

from cldiv.images import HEADLINE_DATASET
from cldiv.images.claims import DOUBLING, claim_verdict, figure3_claims, learning_gain
from cldiv.images.simclr import simclr_configs
from cldiv.published import FIGURE3
from cldiv.runs.store import ResultStore
from cldiv.runs.verdicts import Assessment, Tally, describe_budget, find_runs, metric_values, settle
from cldiv.runs.doubling import NOT_CONVERGED_MARK, SETTLED_LATER_MARK


SIMCLR_SEEDS = range(5)  # the paper's 5 runs: seeds 0..4 are looked up


def assess_figure3(store: ResultStore) -> Assessment:
    """Figure 3: SimCLR linear-probe accuracy, 3 encoders x 3 augmentation regimes.

    CIFAR-10 runs (``dataset="cifar10"``; the accuracy is ``probe_best``, the best probe epoch, as
    in the paper) are compared with the published numbers. Without them, runs on the chapter's
    generated stand-in (``HEADLINE_DATASET``) are shown as measured. Either way the paper's three
    qualitative claims (``cldiv.images.claims``) get a verdict where every cell has two seeds or
    more (a difference using a cell with a run not converged: *not converged*), beside whether
    training beat the probe at initialisation. Each cell is taken at the shortest stored length at
    which it has converged (``cldiv.images.claims.DOUBLING.settled_runs``), marked ‡ if that is
    longer than the budget's; one that has not converged at any is marked †, and its mean where training
    stopped (``DOUBLING.longest_runs``) is named beside the count.
    """
    encoders = list(dict.fromkeys(e for e, _ in FIGURE3))
    regimes = list(dict.fromkeys(r for _, r in FIGURE3))
    paper = "All / Crop / w/o crop: " + "; ".join(
        f"{e} {'/'.join(f'{FIGURE3[e, r][0]:.1f}' for r in regimes)}" for e in encoders)
    for dataset in ("cifar10", HEADLINE_DATASET):
        found = find_runs(store, lambda budget: (((c.encoder, c.regime), c) for c in simclr_configs(
            budget, dataset=dataset, seeds=SIMCLR_SEEDS)))
        if found:
            break
    else:
        return Assessment("not yet run", paper=paper)
    found, later = settle(found, store, DOUBLING.settled_runs)
    tally, parts, accuracy, learned, not_learning, unconverged = Tally(), [], {}, [], [], []
    for encoder in encoders:
        row = {}
        for regime in regimes:
            mean, sd = FIGURE3[encoder, regime]
            runs = found.get((encoder, regime), (None, []))[1]
            converged = DOUBLING.settled(runs, store)
            unconverged += [] if converged else [(encoder, regime)]
            values = [100 * v for v in metric_values(runs, "probe_best")]
            # no published sd (ViT): the floor alone
            tally.add(values, (mean, sd or 0.0), "accuracy", label=f"{encoder} / {regime}", converged=converged)
            if values:
                row[regime], accuracy[encoder, regime] = statistics.fmean(values), values
            init = [100 * v for v in metric_values(runs, "init_probe_best")]
            if regime == "all" and values and len(init) == len(values):
                gain, gain_sd, learns = learning_gain(values, init)
                not_learning += [] if learns else [encoder]
                learned.append(f"{encoder} {gain:+.1f} ± {gain_sd:.1f}{'' if learns else ' (short of +10)'}")
        if row:
            parts.append(f"{encoder} " + "/".join(f"{row[r]:.1f}" + SETTLED_LATER_MARK * ((encoder, r) in later)
                                                  + NOT_CONVERGED_MARK * ((encoder, r) in unconverged)
                                                  if r in row else "?" for r in regimes))
    complete = len(accuracy) == len(encoders) * len(regimes) and all(len(v) >= 2 for v in accuracy.values())
    claims = figure3_claims(accuracy, encoders, regimes, unconverged=unconverged) if complete else {}
    shape = "; ".join(f"{claim}: {claim_verdict(contrasts)}" for claim, contrasts in claims.items()) \
        or "claims need every cell with 2+ seeds"
    if learned:
        shape += "; gain over the probe at init under All: " + ", ".join(learned)
    budget = describe_budget(found.values())
    if later:
        parts.append(f"{SETTLED_LATER_MARK} trained longer, until it converged: {len(later)} of {len(found)} cells")
    if unconverged:
        # an unsettled cell keeps its own runs in found
        stopped = {cell: DOUBLING.longest_runs(found[cell][1], store) for cell in unconverged}
        where = [f"{e} / {r} {statistics.fmean(100 * v for v in metric_values(runs, 'probe_best')):.1f} "
                 f"at {runs[0]['config']['epochs']} epochs" for (e, r), runs in stopped.items()
                 if runs[0]["config"]["epochs"] > found[e, r][1][0]["config"]["epochs"]]
        parts.append(f"{NOT_CONVERGED_MARK} not converged: {len(unconverged)} of {len(found)} cells"
                     + (f" (where training stopped: {', '.join(where)})" if where else ""))
    verdicts = "; ".join(f"{claim}: {claim_verdict(contrasts)}" for claim, contrasts in claims.items())
    learning = f"; {' and '.join(not_learning)} short of +10 points over init" if not_learning else ""
    if dataset == "cifar10":
        return Assessment(tally.verdict, budget, paper, "; ".join(parts) + f" ({tally.cells})", shape=shape,
                          disagreements=tuple(tally.disagreements), reason=f"{tally.reason()}{learning}")
    return Assessment("measured", budget, paper, f"generated {dataset}, not CIFAR-10: " + "; ".join(parts),
                      shape=shape, reason=f"on generated images; {verdicts or 'claims not yet tested'}{learning}")
