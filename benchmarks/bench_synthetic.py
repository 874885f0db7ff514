"""Time one training iteration of the synthetic benchmark at the paper protocol.

Compares cldiv's step, in float32 and in bf16 mixed precision, with a straightforward float32
PyTorch loop doing the same work (batch N, N vMF positives, N fresh uniform negatives, the MLP
encoder with per-batch BatchNorm statistics, InfoNCE, Adam), in one process, alternating blocks;
prints each, its speedup, its time against the MLP's matrix products alone at the same precision
(``floor_ratio``: the step within 2x of its floor means 2 or less), each precision's large-matmul
peak, and the peak memory of short cpu-budget runs; with --compile, the compiled step of each
precision as well. The same command as
``cldiv bench synthetic`` (see ``cldiv.synthetic.bench``):

    python benchmarks/bench_synthetic.py --batch 2000 --iterations 50 [--json] [--no-memory] [--threads T] [--compile] [--matmul-size S]
"""

import sys

from cldiv.book.cli import main

if __name__ == "__main__":
    main(["bench", "synthetic", *sys.argv[1:]])
