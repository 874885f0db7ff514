"""The speed benchmark (cldiv/synthetic/bench.py): what it reports, and that its two loops do the same maths."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from cldiv.synthetic.bench import peak_memory_mib, step_flops, straightforward_step


@pytest.mark.slow
def test_bench_cli_reports_both_steps_their_ratio_and_the_gemm_floor():
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_synthetic.py", "--batch", "32", "--iterations", "2", "--json",
         "--no-memory", "--threads", "1"], capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    for key in ("seconds_per_iteration", "straightforward_seconds_per_iteration", "mlp_gemm_seconds",
                "matmul_gflops"):
        assert report[key] > 0, key
    assert report["speedup"] == report["straightforward_seconds_per_iteration"] / report["seconds_per_iteration"]
    assert report["speedup_ceiling"] == report["straightforward_seconds_per_iteration"] / report["mlp_gemm_seconds"]
    assert report["step_gflop"] == step_flops(32) / 1e9
    tuned = report["tuned_allocator"]  # the same comparison under TUNED_MALLOC, in a child process
    assert tuned["speedup"] == tuned["straightforward_seconds_per_iteration"] / tuned["seconds_per_iteration"] > 0


def test_straightforward_loop_trains_on_the_infonce_loss_and_is_seeded():
    first, second = straightforward_step(64, seed=3), straightforward_step(64, seed=3)
    losses = [float(first()) for _ in range(3)]
    assert losses == [float(second()) for _ in range(3)]
    # Untrained embeddings: about log(1 + M) (every logit near 0 relative to the spread)
    assert abs(losses[0] - torch.log(torch.tensor(65.0)).item()) < 1.0


@pytest.mark.slow
def test_peak_memory_is_the_child_runs_own_not_the_parents_at_the_fork():
    ballast = torch.ones(384 * 2**20)  # 1.5 GiB resident in this process
    rss_mib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:")) / 1024
    peaks = peak_memory_mib("smoke", iterations=2)
    assert set(peaks) == {"holds", "adapted", "inverse"}
    assert all(0 < peak < rss_mib - 1024 for peak in peaks.values()), (peaks, rss_mib)
    del ballast
