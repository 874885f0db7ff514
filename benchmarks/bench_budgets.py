"""Seconds per training iteration of one run of each budget of the synthetic benchmark and of the
progressive violation, in float32 and bf16, and the one-core hours of the budget's runs at that rate.

The MLP runs of each budget (``cldiv.synthetic.bench.budget_runs``: Table 1's holds and violated
cells; every progressive-violation run), one torch thread, the training step of
``cldiv.synthetic.train.make_step``, all cases in one process in alternating blocks
(``cldiv.synthetic.bench.budget_step_timing``). ``--output`` writes the report (JSON, atomically);
the two chapters show the committed one, ``benchmarks/results/budget_steps.json``. The same command
as ``cldiv bench budgets``:

    python benchmarks/bench_budgets.py [--iterations 5] [--output benchmarks/results/budget_steps.json]
"""

import sys

from cldiv.book.cli import main

if __name__ == "__main__":
    main(["bench", "budgets", *sys.argv[1:]])
