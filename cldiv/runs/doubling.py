"""Training a cell ever longer until a doubling leaves its mean where it was.

A cell (a table cell, a sweep point, an image cell) reports a mean over its seeds, so what must
have settled is that mean. A run's curve is a screen: every run of a cell with a run not converged
is also trained for ``LONGER`` = 2 times as long, and once those runs are all stored they decide,
whatever the shorter runs' curves say: the cell has converged when they left its mean where it was
(change "no"); while they are not stored, when every run has (``Doubling.settled``). A cell that
moved when doubled (or may have) is doubled again, and so on (``Doubling.steps``), until a
doubling leaves its mean in place; ``Doubling.settled_runs`` are its runs at that length, the
shortest at which it has converged. A cell that moved once is not trusted to its curves again:
only a stored doubling that kept its mean settles it.

The synthetic runs (iterations, held-out R^2: ``cldiv.synthetic.convergence.DOUBLING``) and the
SimCLR runs (epochs, best probe accuracy: ``cldiv.images.claims.DOUBLING``) each give their own
``Doubling``.

A cell may never settle within reach: its mean moves the same way at every doubling. Where it has
done so at two doublings or more (``drifting``), the chapters' tables say so (``drift_note``):
its number at any stored length is where training stopped, and the trend is what the runs show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: How many times its length a cell some of whose runs have not converged is also trained for.
LONGER = 2
#: The mark of a cell that has not converged (``Doubling.settled``), in every table of the book.
NOT_CONVERGED_MARK = "†"
#: The mark of a cell shown at a longer length than its table's, the shortest at which it has converged
#: (``Doubling.settled_runs``).
SETTLED_LATER_MARK = "‡"

#: One doubling step: (the runs, their configs at LONGER times the length, those of them stored).
Step = tuple[list[dict], list, list[dict]]


@dataclass(frozen=True)
class Doubling:
    """How one kind of run is doubled: ``longer(runs)``, the configs of ``runs`` at LONGER times
    their length; ``converged(record)``, the run's curve verdict; ``change(runs, longer)``, whether
    the longer runs moved the cell's mean, "yes", "no" or "not clear"."""

    longer: Callable[[Sequence[dict]], list]
    converged: Callable[[dict], bool]
    change: Callable[[Sequence[dict], Sequence[dict]], str]

    def stored_longer(self, runs: Sequence[dict], store) -> list[dict | None]:
        """The records of ``runs`` at LONGER times the length in ``store`` (None where absent)."""
        return [store.load(c) for c in self.longer(runs)]

    def settled(self, runs: Sequence[dict], store=None) -> bool:
        """Whether a cell has converged: where ``store`` holds all of its runs at LONGER times the
        length, whether those left its mean where it was (change "no"); else whether every run has."""
        longer = self.stored_longer(runs, store) if store is not None else [None]
        if None in longer or not runs:
            return all(map(self.converged, runs))
        return self.change(runs, longer) == "no"

    def steps(self, runs: Sequence[dict], store) -> list[Step]:
        """Where a cell goes when trained ever longer: a ``Step`` for ``runs`` if some have not
        converged or they have not ``settled``, then for those longer runs, and so on while a step's
        longer runs are all stored and moved the mean or may have (change not "no"); [] if ``runs``
        have converged and settled."""
        steps: list[Step] = []
        runs = list(runs)
        if all(map(self.converged, runs)) and self.settled(runs, store):
            return steps
        while True:
            configs = self.longer(runs)
            stored = [r for r in map(store.load, configs) if r is not None]
            steps.append((runs, configs, stored))
            if len(stored) < len(configs) or self.change(runs, stored) == "no":
                return steps
            runs = stored

    def settled_runs(self, runs: list[dict], store) -> list[dict] | None:
        """The runs of a cell at the shortest length at which it has converged: ``runs`` if they
        have ``settled``; else the runs of its last ``steps`` step, if that step's longer runs are
        all stored and left the mean where it was; None if the store holds no such runs."""
        if self.settled(runs, store):
            return runs
        shorter, configs, stored = self.steps(runs, store)[-1]
        return shorter if len(stored) == len(configs) and self.change(shorter, stored) == "no" else None

    def lengths(self, runs: list[dict], store) -> list[list[dict]]:
        """The runs of a cell at each length stored for every seed, shortest first: ``runs``, then
        their runs at LONGER times the length, and so on while ``store`` holds all of them."""
        chain = [list(runs)]
        while chain[-1] and None not in (longer := self.stored_longer(chain[-1], store)):
            chain.append(longer)
        return chain

    def longest_runs(self, runs: list[dict], store) -> list[dict]:
        """The runs of a cell at the longest of its ``lengths``: where training stopped for a cell
        that has not settled."""
        return self.lengths(runs, store)[-1]


def add_step(chains: dict[str, list[tuple[int, float]]], label: str, change: str,
             before: tuple[int, float], after: tuple[int, float]) -> None:
    """Add a complete doubling step of cell ``label``, (length, mean) ``before`` and ``after``, to its
    chain in ``chains``; a step that kept the mean (change "no") is a cell's last: it has settled, and
    its chain is dropped."""
    if change == "no":
        chains.pop(label, None)
    else:
        chains.setdefault(label, [before]).append(after)


def drifting(chain: Sequence[tuple[int, float]]) -> bool:
    """Whether a cell's means along its doublings, ``chain`` = [(length, mean over seeds), ...] at
    its first length and at the end of each doubling step whose longer runs are all stored, moved the
    same way (all up or all down) at each of at least two doublings."""
    moves = [later - earlier for (_, earlier), (_, later) in zip(chain, chain[1:])]
    return len(moves) >= 2 and (all(m > 0 for m in moves) or all(m < 0 for m in moves))


def drift_note(chain: Sequence[tuple[int, float]], unit: str, digits: int) -> str:
    """For a ``drifting`` chain (as for ``drifting``), its first and last mean, "drifting: 0.96 at 8000 it ->
    0.45 at 64000 it": no stored length tells where, or whether, it settles; "" for a chain that is not."""
    if not drifting(chain):
        return ""
    return (f"drifting: {chain[0][1]:.{digits}f} at {chain[0][0]} {unit} → {chain[-1][1]:.{digits}f} at "
            f"{chain[-1][0]} {unit}, {'up' if chain[-1][1] > chain[0][1] else 'down'} at each doubling")
