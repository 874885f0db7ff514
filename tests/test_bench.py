"""The speed benchmark (cldiv/synthetic/bench.py): what it reports, and that its two loops do the same maths."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from cldiv.synthetic.bench import peak_memory_mib, step_flops, straightforward_step


@pytest.mark.slow
def test_bench_cli_reports_both_precisions_against_the_plain_loop_and_their_gemm_floors():
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_synthetic.py", "--batch", "32", "--iterations", "2", "--json",
         "--no-memory", "--threads", "1", "--compile", "--matmul-size", "256"], capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    plain = report["straightforward_seconds_per_iteration"]
    variants = ("fp32", "bf16", "fp32_compiled", "bf16_compiled")
    for precision in variants:
        r = report[precision]
        for key in ("seconds_per_iteration", "mlp_gemm_seconds", "matmul_gflops"):
            assert r[key] > 0, (precision, key)
        assert r["speedup"] == plain / r["seconds_per_iteration"]
        assert r["floor_ratio"] == r["seconds_per_iteration"] / r["mlp_gemm_seconds"]
    fastest = report["precision"] + ("_compiled" if report["step"] == "compiled" else "")
    assert report["seconds_per_iteration"] == min(report[v]["seconds_per_iteration"] for v in variants)
    assert report["seconds_per_iteration"] == report[fastest]["seconds_per_iteration"]
    assert report["speedup"] == plain / report["seconds_per_iteration"]
    assert report["step_gflop"] == step_flops(32) / 1e9
    assert report["matmul_size"] == 256
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


def test_the_grouped_negatives_timing_counts_encoded_points_and_speedups_against_per_anchor_negatives():
    from cldiv.synthetic.bench import grouped_negatives_markdown, grouped_negatives_timing

    report = grouped_negatives_timing(iterations=1, cases=((8, 0), (8, 2)))
    assert [r["points"] for r in report["rows"]] == [2 * 8 + 8 * 8, 2 * 8 + 2 * 8]
    assert all(r["seconds_per_iteration"] > 0 for r in report["rows"])
    report["rows"][0]["seconds_per_iteration"], report["rows"][1]["seconds_per_iteration"] = 0.6, 0.2
    table = grouped_negatives_markdown(report).splitlines()
    assert table[2] == "| 8 | per anchor | 80 | 0.600 | 1.0 |" and table[3] == "| 8 | 2 groups of 4 | 32 | 0.200 | 3.0 |"
    assert table[-1].startswith(f"Measured on {report['cpu']}, torch ")


def test_the_budget_cost_counts_runs_weights_and_hours_of_each_budget():
    from cldiv.synthetic.bench import budget_cost_markdown, budget_runs, budget_step_timing

    # Table 1's MLP half: holds and violated for each of the 5 processes, 5 seeds; the 10-D sweep: 2
    # processes x 11 d_fixed values x 5 seeds, plus the code's sign rule at d_fixed = 9
    assert len(budget_runs("synthetic", "paper")) == 2 * 5 * 5
    assert len(budget_runs("progressive_violation", "paper")) == 2 * 12 * 5
    report = budget_step_timing(iterations=1, cases=(("progressive_violation", "smoke"),))
    fp32, bf16 = report["rows"]
    assert (fp32["precision"], bf16["precision"]) == ("fp32", "bf16")
    # the encoder only (g is frozen): smoke widths (32, 16) from R^70 (g: S^9 -> R^70) to R^10, BatchNorm's
    # scale and shift in each block
    assert fp32["weights"] == 70 * 32 + 32 + 2 * 32 + 32 * 16 + 16 + 2 * 16 + 16 * 10 + 10
    assert fp32["total_iterations"] == 20 * fp32["runs"]
    assert fp32["hours"] == pytest.approx(fp32["total_iterations"] * fp32["seconds_per_iteration"] / 3600)
    # the table counts the budget's runs as they are now, at the report's seconds per iteration
    runs = fp32["runs"]
    fp32["seconds_per_iteration"], fp32["runs"], fp32["total_iterations"] = 0.5, 4, 80
    table = budget_cost_markdown(report, "progressive_violation").splitlines()
    hours = f"{20 * runs * 0.5 / 3600:.3g}"
    assert table[2] == f"| smoke | 32 | 32, 16 | {fp32['weights']:,} | fp32 | 0.500 | {runs} | {20 * runs} | {hours} |"
    # header, two rows, blank line, where it was measured; no rows of another experiment
    assert len(table) == 6 and len(budget_cost_markdown(report, "synthetic").splitlines()) == 4
    # a timing measured at other sizes than the budget's no longer prices it
    bf16["hidden_widths"] = [64, 16]
    with pytest.raises(ValueError, match="measured at .*re-measure with python benchmarks/bench_budgets.py"):
        budget_cost_markdown(report, "progressive_violation")


def test_the_bench_command_writes_a_timing_report_with_its_provenance(tmp_path, capsys):
    from cldiv.book.cli import main
    from cldiv.runs.store import git_commit

    main(["bench", "grouped_negatives", "--iterations", "1", "--output", str(tmp_path / "report.json")])
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["threads"] == 1 and report["git_commit"] == git_commit() and report["created_utc"]
    assert len(report["rows"]) == 5 and "| 128 | 8 groups of 16 |" in capsys.readouterr().out
