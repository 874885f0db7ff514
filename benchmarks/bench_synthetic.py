"""Time one training iteration of the synthetic benchmark at the paper protocol.

Compares cldiv's step with a straightforward PyTorch loop doing the same work (batch N,
N vMF positives, N fresh uniform negatives, the MLP encoder with per-batch BatchNorm
statistics, InfoNCE, Adam), in one process; prints both, their ratio, the step's achieved
GFLOP/s against a large float32 matmul timed in the same run, the time of the MLP's matrix
products alone, and the peak memory of short cpu-budget runs. The same command as
``cldiv bench synthetic`` (see ``cldiv.synthetic.bench``):

    python benchmarks/bench_synthetic.py --batch 2000 --iterations 50 [--json] [--no-memory] [--threads T]
"""

import sys

from cldiv.book.cli import main

if __name__ == "__main__":
    main(["bench", "synthetic", *sys.argv[1:]])
