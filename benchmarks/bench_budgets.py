"""Seconds per training iteration of one run of each budget of the synthetic benchmark and of the
progressive violation, in float32 and bf16, and the one-core hours of the budget's runs at that rate.

The MLP runs of each budget (``cldiv.synthetic.bench.budget_runs``: Table 1's holds and violated
cells; every progressive-violation run), one torch thread, the training step of
``cldiv.synthetic.train.make_step``, all cases in one process in alternating blocks
(``cldiv.synthetic.bench.budget_step_timing``). ``--output`` writes the report (JSON, atomically);
the two chapters show the committed one, ``benchmarks/results/budget_steps.json``.

    python benchmarks/bench_budgets.py [--iterations 5] [--output benchmarks/results/budget_steps.json]
"""

import argparse
from pathlib import Path

import torch

from cldiv.synthetic.bench import budget_cost_markdown, budget_step_timing, save_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--output", type=Path, help="write the report here (JSON)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    report = budget_step_timing(args.iterations)
    for experiment in sorted({r["experiment"] for r in report["rows"]}):
        print(f"{experiment}\n{budget_cost_markdown(report, experiment)}\n")
    if args.output:
        save_report(report, args.output)


if __name__ == "__main__":
    main()
