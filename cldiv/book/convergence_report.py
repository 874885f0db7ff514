"""Counts behind the convergence rule's docstring (``cldiv.synthetic.convergence``), for the current store.

``python3 -m cldiv.book.convergence_report`` prints, per group of committed synthetic runs, how many have
converged and how far their held-out R^2 moved over the last quarter; then, per headline table, its cells,
those with a run not converged and what training every run twice as long did to their mean R^2.
"""

from __future__ import annotations

import numpy as np

from cldiv.book.scorecard import table_cells
from cldiv.runs.doubling import LONGER
from cldiv.runs.store import ResultStore
from cldiv.runs.verdicts import CHANGE_VERDICTS, find_runs
from cldiv.synthetic.convergence import Convergence, convergence, converged, longer_configs, r2_change, settled
from cldiv.synthetic.sweeps import SWEEPS, sweep_configs, sweep_points
from cldiv.synthetic.table1 import COLUMNS, column_of


def run_counts(store: ResultStore) -> None:
    """Converged runs among the committed synthetic results, Table 1's and the sweeps'."""
    groups: dict[str, list[Convergence]] = {}
    for record in store.records("synthetic"):
        config = record["config"]
        sweep = config["latent_dim"] != 3 or config["anchor_groups"] or (
            config["loss"] == "support_corrected" and config["rho"] != 1.0)
        group = "sweeps" if sweep else f"Table 1 and variants, {column_of(config)}"
        groups.setdefault(group, []).append(convergence(record))
    for group, verdicts in sorted(groups.items()):
        changes = np.abs([v.r2_change for v in verdicts])
        print(f"{group}: {sum(v.converged for v in verdicts)}/{len(verdicts)} converged; |R^2 change| over the "
              f"last quarter: median {np.median(changes):.3f}, 90th percentile {np.percentile(changes, 90):.3f}")


def cell_counts(store: ResultStore) -> None:
    """Per headline table (Table 1 at its preferred budget, each sweep at ``cpu``): its cells, those
    with a run not converged, and what training every run LONGER times as long did to their mean
    R^2 (``r2_change``), apart for cells all of whose runs converged and the others."""
    tables = {"Table 1": {key: runs for key, (_, runs) in find_runs(store, table_cells(COLUMNS)).items()}}
    for name in SWEEPS:
        records = [r for r in map(store.load, sweep_configs(name, "cpu")) if r is not None]
        tables[f"{name} (cpu)"] = sweep_points(name, records)
    for title, groups in tables.items():
        counts = {True: dict.fromkeys(CHANGE_VERDICTS, 0), False: dict.fromkeys(CHANGE_VERDICTS, 0)}
        for runs in groups.values():
            longer = [store.load(c) for c in longer_configs(runs)]
            if None not in longer:
                counts[all(map(converged, runs))][r2_change(runs, longer)] += 1
        moving = sum(not all(map(converged, runs)) for runs in groups.values())
        print(f"{title}: {len(groups)} cells, {moving} with a run not converged, "
              f"{sum(not settled(runs, store) for runs in groups.values())} not settled; R^2 changed by "
              f"{LONGER}x the iterations (yes/no/not clear): cells with a run not converged {counts[False]}, "
              f"cells all of whose runs converged {counts[True]}")


if __name__ == "__main__":
    run_counts(ResultStore.default())
    cell_counts(ResultStore.default())
