"""Seconds per training iteration of the support-corrected loss: per-anchor negatives against
anchors in groups that share u (``SyntheticConfig.anchor_groups``, constraint-ratio chapter).

MLP encoder (the authors' block order), Identity process, d_fixed = 1, rho = 1 (every negative on
K(z), the most expensive case), one torch thread, the training step of ``cldiv.synthetic.train.make_step``,
all cases in one process in alternating blocks (``cldiv.synthetic.bench.grouped_negatives_timing``).
``--output`` writes the report (JSON, atomically); the constraint-ratio chapter shows the committed one,
``benchmarks/results/grouped_negatives.json``. The same command as ``cldiv bench grouped_negatives``:

    python benchmarks/bench_grouped_negatives.py [--iterations 10] [--output benchmarks/results/grouped_negatives.json]
"""

import sys

from cldiv.book.cli import main

if __name__ == "__main__":
    main(["bench", "grouped_negatives", *sys.argv[1:]])
