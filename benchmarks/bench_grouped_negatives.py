"""Seconds per training iteration of the support-corrected loss: per-anchor negatives against
anchors in groups that share u (``SyntheticConfig.anchor_groups``, constraint-ratio chapter).

MLP encoder (the authors' block order), Identity process, d_fixed = 1, rho = 1 (every negative on
K(z), the most expensive case), one torch thread, the training step of ``cldiv.synthetic.train.make_step``.

    python benchmarks/bench_grouped_negatives.py [--iterations 10]
"""

import argparse
import time

import torch

from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.train import make_step

CASES = [(64, 0), (64, 16), (64, 8), (128, 0), (128, 8)]  # (N = M, anchor_groups); 0 = per anchor


def seconds_per_iteration(n: int, groups: int, iterations: int) -> float:
    config = SyntheticConfig(process="identity", d_fixed=1, loss="support_corrected", rho=1.0, batch_size=n,
                             n_negatives=n, anchor_groups=groups, mlp_order="linear_relu_bn")
    _, step = make_step(config)
    step()  # warm-up
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    return (time.perf_counter() - start) / iterations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for n, groups in CASES:
        points = 2 * n + (n * n if groups == 0 else groups * n)
        seconds = seconds_per_iteration(n, groups, args.iterations)
        label = "per anchor" if groups == 0 else f"{groups} groups of {n // groups}"
        print(f"N = M = {n:4d}, {label:>16}: {points:6d} encoded points, {seconds:.3f} s/iteration", flush=True)


if __name__ == "__main__":
    main()
