"""Seconds per training iteration of the support-corrected loss: per-anchor negatives against
anchors in groups that share u (``SyntheticConfig.anchor_groups``, constraint-ratio chapter).

MLP encoder (the authors' block order), Identity process, d_fixed = 1, rho = 1 (every negative on
K(z), the most expensive case), one torch thread, the training step of ``cldiv.synthetic.train.make_step``,
all cases in one process in alternating blocks (``cldiv.synthetic.bench.grouped_negatives_timing``).
``--output`` writes the report (JSON, atomically); the constraint-ratio chapter shows the committed one,
``benchmarks/results/grouped_negatives.json``.

    python benchmarks/bench_grouped_negatives.py [--iterations 10] [--output benchmarks/results/grouped_negatives.json]
"""

import argparse
from pathlib import Path

import torch

from cldiv.synthetic.bench import grouped_negatives_markdown, grouped_negatives_timing, save_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--output", type=Path, help="write the report here (JSON)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    report = grouped_negatives_timing(args.iterations)
    print(grouped_negatives_markdown(report))
    if args.output:
        save_report(report, args.output)


if __name__ == "__main__":
    main()
