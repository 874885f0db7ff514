"""Time one training iteration of the synthetic benchmark at the paper protocol.

Compares cldiv's step with a straightforward PyTorch loop doing the same work (batch N,
N vMF positives, N fresh uniform negatives, the MLP encoder with per-batch BatchNorm
statistics, InfoNCE, Adam), in one process; prints both, their ratio, the step's achieved
GFLOP/s against a large float32 matmul timed in the same run, and the peak memory of short
cpu-budget runs. Same as ``cldiv bench synthetic``.

    python benchmarks/bench_synthetic.py --batch 2000 --iterations 50 [--json] [--no-memory]
"""

import argparse
import json

from cldiv.bench import format_report, run_benchmark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory child runs")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args()
    report = run_benchmark(args.batch, args.iterations, memory=not args.no_memory, threads=args.threads)
    print(json.dumps(report) if args.json else format_report(report))


if __name__ == "__main__":
    main()
