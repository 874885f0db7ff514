"""The shared rule by which a training curve has settled: a trend over the last quarter of a run.

Every run stores a coarse curve (its metric and its training loss every few steps). Over the last
``LAST_SHARE`` of training a run has settled when its metric moved by at most a tolerance along its
Theil-Sen line (``trend``: the median of the pairwise slopes, so that one spike does not tilt it) and
its training loss is not still falling (``loss_trend``: the later half of that stretch is not below
the earlier half by more than ``LOSS_TOLERANCE`` and twice the standard error of the difference).
Each experiment applies it to its own metric: ``cldiv.synthetic.convergence`` to the held-out R^2,
``cldiv.images.claims`` to the NT-Xent loss of SimCLR.
"""

from __future__ import annotations

import math
import statistics

from scipy.stats import theilslopes

LOSS_TOLERANCE = 0.02
#: The share of a run's length, counted from the end, over which it must have settled.
LAST_SHARE = 0.25


def trend(steps: list[int], values: list[float]) -> float:
    """The change of ``values`` over ``steps`` along their Theil-Sen line (median pairwise slope
    times span); the plain end-to-end difference with fewer than three points."""
    if len(values) < 3:
        return values[-1] - values[0]
    return float(theilslopes(values, steps).slope) * (steps[-1] - steps[0])


def loss_trend(late: list[float]) -> tuple[float, str]:
    """(drop, trend) of the losses ``late`` logged over a run's last quarter: the drop is the mean
    of their earlier half minus the mean of their later half; the loss is "falling" when the drop
    exceeds ``LOSS_TOLERANCE`` and twice its standard error, "rising" when minus the drop does,
    else "no trend". With fewer than four losses: (nan, "not judged")."""
    if len(late) < 4:
        return math.nan, "not judged"
    earlier, later = late[: len(late) // 2], late[len(late) // 2:]
    drop = statistics.fmean(earlier) - statistics.fmean(later)
    error = math.sqrt(statistics.variance(earlier) / len(earlier) + statistics.variance(later) / len(later))
    threshold = max(LOSS_TOLERANCE, 2 * error)
    return drop, "falling" if drop > threshold else "rising" if -drop > threshold else "no trend"
