"""Timing one training step of the synthetic benchmark (``cldiv bench synthetic``).

Compares cldiv's step (``cldiv.synthetic.train.make_step``) in both precisions (float32 and bf16
mixed precision) with a plain float32 PyTorch loop doing the same work -- the paper protocol: N anchors, N vMF positives, N fresh uniform negatives, the MLP
encoder with per-batch BatchNorm statistics (three forward calls), InfoNCE, Adam -- in one
process, in alternating blocks so that both see the same machine load. Reports seconds per
iteration, their ratios, the step's achieved GFLOP/s (matmul FLOPs of forward and backward,
counted analytically) against a large matmul of each precision timed in the same run, the time of
the MLP's matrix products alone in each precision (a floor for any step doing the same work), the
float32 comparison
in a child process whose glibc keeps freed memory (``TUNED_MALLOC``: how much of the speedup is
page faults of fresh allocations, which cldiv's step makes fewer of), and the peak resident
memory of a short run of each cell group of the ``cpu`` budget (child processes).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from cldiv.config import with_overrides, check_choice
from cldiv.runs.store import cpu_name, bf16_instructions, git_commit, write_json_atomic, REPO_ROOT
from cldiv.synthetic.sweeps import sweep_configs
from cldiv.synthetic.table1 import table_configs
from cldiv.synthetic.train import make_step, build_model
from cldiv import budgets
from cldiv.synthetic.config import PRECISIONS, SyntheticConfig
from cldiv.synthetic.encoders import MLP_HIDDEN
from cldiv.sphere import uniform_sphere, vmf


def straightforward_step(batch: int, seed: int = 0, tau: float = 0.3):
    """The plain loop: nn.Sequential MLP called three times, cross-entropy over the
    concatenated logits [a·p, a nᵀ] / tau, torch Adam."""
    torch.manual_seed(seed)
    widths = (3, *MLP_HIDDEN)
    layers: list[nn.Module] = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.BatchNorm1d(b), nn.ReLU()]
    f = nn.Sequential(*layers, nn.Linear(widths[-1], 3))
    optimizer = torch.optim.Adam(f.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(seed)
    targets = torch.zeros(batch, dtype=torch.long)  # the positive is logit 0

    def step() -> torch.Tensor:
        z = uniform_sphere(batch, 3, generator)
        positive = vmf(z, 1 / tau, generator)
        negatives = uniform_sphere(batch, 3, generator)
        a, p, n = (F.normalize(f(x), dim=1) for x in (z, positive, negatives))
        logits = torch.cat([(a * p).sum(dim=1, keepdim=True), a @ n.T], dim=1) / tau
        loss = F.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step


def step_flops(batch: int, negatives: int | None = None) -> float:
    """Matmul FLOPs of one step: MLP forward + backward on 3N rows, and the N x M logits."""
    negatives = batch if negatives is None else negatives
    widths = (3, *MLP_HIDDEN, 3)
    rows = 3 * batch
    forward = sum(2 * rows * a * b for a, b in zip(widths, widths[1:]))
    backward_input = sum(2 * rows * a * b for a, b in list(zip(widths, widths[1:]))[1:])
    logits = 2 * batch * negatives * 3
    return forward * 2 + backward_input + 3 * logits


def mlp_gemm_step(batch: int, seed: int = 0, dtype: torch.dtype = torch.float32):
    """Only the MLP's matrix products of one step, on random data of the step's shapes.

    Forward X_l W_lᵀ for every layer, input gradients G_l W_l for every layer but the first,
    weight gradients G_lᵀ X_l for every layer, on 3N rows: the work no implementation of the
    same maths can skip, in ``dtype``. Its time is a floor for the step at this BLAS's speed.
    """
    generator = torch.Generator().manual_seed(seed)
    widths = (3, *MLP_HIDDEN, 3)
    rows = 3 * batch
    layers = [tuple(torch.randn(*shape, generator=generator).to(dtype) for shape in ((rows, a), (b, a), (rows, b)))
              for a, b in zip(widths, widths[1:])]

    def step() -> None:
        for i, (x, w, g) in enumerate(layers):
            x @ w.T
            if i:
                g @ w
            g.T @ x

    return step


def matmul_gflops(size: int = 2048, dtype: torch.dtype = torch.float32) -> float:
    """GFLOP/s of one large matmul (size x size) in ``dtype``."""
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    a @ b
    start = time.perf_counter()
    a @ b
    return 2 * size**3 / (time.perf_counter() - start) / 1e9


def time_steps(steps: dict, iterations: int, warmup: int = 3, block: int = 5) -> dict[str, float]:
    """Median seconds per iteration of each step, timed in alternating blocks."""
    for step in steps.values():
        for _ in range(warmup):
            step()
    times: dict[str, list[float]] = {name: [] for name in steps}
    done = 0
    while done < iterations:
        n = min(block, iterations - done)
        for name, step in steps.items():
            start = time.perf_counter()
            for _ in range(n):
                step()
            times[name].append((time.perf_counter() - start) / n)
        done += n
    return {name: statistics.median(t) for name, t in times.items()}


# glibc settings under which freed blocks of up to 32 MiB stay in the process for reuse, instead of
# going back to the kernel and being page-faulted in again, zeroed, on the next step.
TUNED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


def tuned_allocator_timing(batch: int, iterations: int, threads: int, matmul_size: int) -> dict[str, float]:
    """Seconds per iteration of both steps, and their ratio, in a child process run with TUNED_MALLOC."""
    code = (
        "import json; from cldiv.synthetic.bench import run_benchmark; "
        f"r = run_benchmark({batch}, {iterations}, memory=False, threads={threads}, allocator=False, "
        f"matmul_size={matmul_size}); "
        "print(json.dumps({k: r[k] for k in ('seconds_per_iteration', 'straightforward_seconds_per_iteration', "
        "'speedup')}))"
    )
    env = {**os.environ, **TUNED_MALLOC}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return json.loads(result.stdout.splitlines()[-1])


def peak_memory_mib(budget: str = "cpu", iterations: int = 20) -> dict[str, float]:
    """Peak resident memory (MiB) of a short run of each cell group of a budget (subprocess).

    Read from the child's VmHWM (Linux /proc/self/status), the peak of its own address space:
    getrusage's ru_maxrss would also count the parent's resident memory at the fork, which
    survives the exec.
    """
    out = {}
    cells = {
        "holds": {"process": "patches"},
        "adapted": {"process": "patches", "d_fixed": 1, "loss": "support_corrected"},
        "inverse": {"process": "patches", "encoder": "inverse", "d_fixed": 1},
    }
    for group, fields in cells.items():
        overrides = {**budgets.overrides("synthetic", budget, group),
                     "iterations": iterations, **fields}
        code = (
            "import json; from cldiv.synthetic.config import SyntheticConfig; from cldiv.synthetic.train import train; "
            f"train(SyntheticConfig(**json.loads({json.dumps(json.dumps(overrides))}))); "
            "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')))"
        )
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        out[group] = round(int(result.stdout.split()[-1]) / 1024, 1)
    return out


def run_benchmark(batch: int = 2000, iterations: int = 50, memory: bool = True, threads: int = 0,
                  allocator: bool = True, compiled: bool = False, matmul_size: int = 2048) -> dict:
    """Time cldiv's step and the straightforward loop; GFLOP/s vs the matmul peak; memory;
    with ``allocator``, both steps again under TUNED_MALLOC (child process); with ``compiled``,
    the compiled step (``cldiv.synthetic.train.STEP_MODES``) of each precision too, reported as
    ``fp32_compiled`` and ``bf16_compiled`` (compilation happens in the untimed warm-up).

    ``threads`` > 0 sets torch's CPU threads for the whole comparison (default: torch's choice).
    ``matmul_size``: the side of the peak matmul; keep it small on a CPU without bf16 instructions,
    where a bf16 matmul falls back to a reference kernel (1.3 GFLOP/s on a Zen 3 core: about 13 s a matmul at 2048).
    """
    if threads:
        torch.set_num_threads(threads)
    steps, peaks = {"straightforward": straightforward_step(batch)}, {p: [] for p in PRECISIONS}
    variants = {}  # name -> precision
    for precision, dtype in zip(PRECISIONS, (torch.float32, torch.bfloat16)):
        config = SyntheticConfig(batch_size=batch, n_negatives=batch, iterations=iterations, precision=precision)
        for mode in ("eager", "compiled") if compiled else ("eager",):
            name = precision if mode == "eager" else f"{precision}_compiled"
            steps[name], variants[name] = make_step(config, "cpu", mode=mode)[1], precision
        steps[f"gemm_{precision}"] = mlp_gemm_step(batch, dtype=dtype)
        steps[f"matmul_{precision}"] = lambda dtype=dtype, out=peaks[precision]: out.append(matmul_gflops(matmul_size, dtype))
    seconds = time_steps(steps, iterations)
    flops = step_flops(batch)
    plain = seconds["straightforward"]
    per_variant = {v: {"seconds_per_iteration": seconds[v], "speedup": plain / seconds[v],
                       "mlp_gemm_seconds": seconds[f"gemm_{p}"], "floor_ratio": seconds[v] / seconds[f"gemm_{p}"],
                       "matmul_gflops": statistics.median(peaks[p]), "step_gflops": flops / seconds[v] / 1e9}
                   for v, p in variants.items()}
    fastest = min(variants, key=lambda v: seconds[v])
    report = {
        "precision": variants[fastest],
        "step": "compiled" if fastest.endswith("_compiled") else "eager",
        "seconds_per_iteration": seconds[fastest],
        "straightforward_seconds_per_iteration": plain,
        "speedup": plain / seconds[fastest],
        "floor_ratio": per_variant[fastest]["floor_ratio"],
        **per_variant,
        "step_gflop": flops / 1e9,
        "straightforward_gflops": flops / plain / 1e9,
        "speedup_ceiling_fp32": plain / seconds["gemm_fp32"],
        "batch": batch,
        "iterations": iterations,
        "matmul_size": matmul_size,
        "threads": torch.get_num_threads(),
    }
    if allocator:
        report["tuned_allocator"] = tuned_allocator_timing(batch, iterations, report["threads"], matmul_size)
    if memory:
        report["peak_memory_mib_cpu_budget"] = peak_memory_mib()
    return report


def format_report(report: dict) -> str:
    lines = [f"batch {report['batch']}, {report['iterations']} timed iterations, {report['threads']} threads",
             f"straightforward float32 loop: {report['straightforward_seconds_per_iteration']:.4f} s/iteration "
             f"({report['straightforward_gflops']:.1f} GFLOP/s)"]
    for v in (f"{p}{mode}" for mode in ("", "_compiled") for p in PRECISIONS if f"{p}{mode}" in report):
        r = report[v]
        lines.append(f"cldiv step, {v}: {r['seconds_per_iteration']:.4f} s/iteration ({r['step_gflops']:.1f} GFLOP/s), "
                     f"speedup {r['speedup']:.2f}x; its matrix products alone {r['mlp_gemm_seconds']:.4f} s "
                     f"({r['floor_ratio']:.2f}x that floor); large matmul {r['matmul_gflops']:.0f} GFLOP/s")
    lines.append(f"fastest: {report['precision']} {report['step']}, {report['seconds_per_iteration']:.4f} s/iteration, "
                 f"speedup {report['speedup']:.2f}x over the plain float32 loop")
    if "tuned_allocator" in report:
        tuned = report["tuned_allocator"]
        lines.append(
            f"with glibc keeping freed memory ({', '.join(TUNED_MALLOC)}): cldiv {tuned['seconds_per_iteration']:.4f}, "
            f"straightforward {tuned['straightforward_seconds_per_iteration']:.4f} s/iteration, speedup "
            f"{tuned['speedup']:.2f}x; the rest of the speedup above is page faults of fresh allocations")
    if "peak_memory_mib_cpu_budget" in report:
        lines.append(f"peak memory of cpu-budget runs (MiB): {report['peak_memory_mib_cpu_budget']}")
    return "\n".join(lines)


#: (N = M, anchor_groups) timed by ``grouped_negatives_timing``; anchor_groups 0: per-anchor negatives.
GROUPED_CASES = ((64, 0), (64, 16), (64, 8), (128, 0), (128, 8))


def grouped_negatives_timing(iterations: int = 10, cases=GROUPED_CASES) -> dict:
    """Seconds per training iteration of the support-corrected loss at rho = 1 (every negative on
    K(z), the costliest case; MLP encoder in the authors' block order, Identity, d_fixed = 1) with
    per-anchor negatives and with anchors in G groups that share u (``SyntheticConfig.anchor_groups``),
    in one process and in alternating blocks (``time_steps``), so that every case sees the same
    machine load. A step encodes 2N + G M points (G = N for per-anchor negatives)."""
    steps = {}
    for n, groups in cases:
        config = SyntheticConfig(process="identity", d_fixed=1, loss="support_corrected", rho=1.0, batch_size=n,
                                 n_negatives=n, anchor_groups=groups, mlp_order="linear_relu_bn")
        steps[n, groups] = make_step(config, "cpu", mode="eager")[1]
    seconds = time_steps(steps, iterations)
    rows = [{"n": n, "anchor_groups": groups, "points": 2 * n + (groups or n) * n,
             "seconds_per_iteration": seconds[n, groups]} for n, groups in cases]
    return {"cpu": cpu_name(), "torch": torch.__version__, "threads": torch.get_num_threads(),
            "iterations": iterations, "rows": rows}


def grouped_negatives_markdown(report: dict) -> str:
    """``grouped_negatives_timing``'s report as a markdown table, each case's speed-up against
    per-anchor negatives at the same N, and a line saying where it was measured."""
    per_anchor = {r["n"]: r["seconds_per_iteration"] for r in report["rows"] if r["anchor_groups"] == 0}
    lines = ["| $N = M$ | negatives | encoded points per step | s / iteration | speed-up |", "|---|---|---|---|---|"]
    for r in report["rows"]:
        n, groups, seconds = r["n"], r["anchor_groups"], r["seconds_per_iteration"]
        label = "per anchor" if groups == 0 else f"{groups} groups of {n // groups}"
        speedup = f"{per_anchor[n] / seconds:.1f}" if n in per_anchor else "—"
        lines.append(f"| {n} | {label} | {r['points']} | {seconds:.3f} | {speedup} |")
    return "\n".join(lines) + "\n\n" + measured_on(report)


def measured_on(report: dict) -> str:
    """Where a timing report was measured: CPU (and its bf16 instructions, where recorded), torch,
    threads, iterations, and the cldiv commit (where recorded)."""
    cpu = report["cpu"]
    if "bf16_instructions" in report:
        cpu += f" (bf16 instructions: {', '.join(report['bf16_instructions']) or 'none'})"
    commit = f", at cldiv commit {report['git_commit']}" if "git_commit" in report else ""
    return (f"Measured on {cpu}, torch {report['torch']}, {report['threads']} thread(s), median of "
            f"{report['iterations']} iterations a case in alternating blocks{commit}.")


#: (experiment, budget) pairs timed by ``budget_step_timing``.
BUDGET_CASES = (("synthetic", "paper"), ("synthetic", "cpu"),
                ("progressive_violation", "paper"), ("progressive_violation", "cpu"))


def budget_runs(experiment: str, budget: str) -> list[SyntheticConfig]:
    """The MLP runs of a budget, whose steps cost about the same (the encoder's, at the same sizes;
    the processes differ only in the frozen g): the synthetic benchmark's holds and violated cells
    (the MLP half of Table 1, every seed), or every run of the progressive violation."""
    if experiment == "synthetic":
        return table_configs(budget, columns=("holds", "violated"))
    return sweep_configs(experiment, budget)


#: The fields of a budget's runs that the cost of one of their steps depends on.
STEP_SHAPE = ("batch_size", "n_negatives", "hidden_widths")


def budget_size(experiment: str, budget: str) -> dict:
    """The STEP_SHAPE of a budget's ``budget_runs``, how many they are and their iterations in all."""
    configs = budget_runs(experiment, budget)
    return {"batch_size": configs[0].batch_size, "n_negatives": configs[0].n_negatives,
            "hidden_widths": list(configs[0].hidden_widths or MLP_HIDDEN),
            "runs": len(configs), "total_iterations": sum(c.iterations for c in configs)}


def budget_step_timing(iterations: int = 5, cases=BUDGET_CASES) -> dict:
    """Seconds per training iteration (``make_step``, one process, alternating blocks) of one run of
    each (experiment, budget) in ``cases``, in float32 and in bf16 mixed precision, and the one-core
    hours of all of the budget's ``budget_runs`` at that rate: hours = runs x iterations x s / 3600."""
    steps, weights = {}, {}
    for experiment, budget in cases:
        config = budget_runs(experiment, budget)[0]
        weights[experiment, budget] = sum(p.numel() for p in build_model(config).encoder.parameters())
        for precision in PRECISIONS:
            steps[experiment, budget, precision] = make_step(with_overrides(config, precision=precision),
                                                             "cpu", mode="eager")[1]
    seconds = time_steps(steps, iterations, warmup=2)
    rows = []
    for (experiment, budget, precision), s in seconds.items():
        size = budget_size(experiment, budget)
        rows.append({"experiment": experiment, "budget": budget, "precision": precision, **size,
                     "weights": weights[experiment, budget], "seconds_per_iteration": s,
                     "hours": size["total_iterations"] * s / 3600})
    return {"cpu": cpu_name(), "bf16_instructions": bf16_instructions(), "torch": torch.__version__,
            "threads": torch.get_num_threads(), "iterations": iterations, "rows": rows}


def budget_cost_markdown(report: dict, experiment: str) -> str:
    """``budget_step_timing``'s rows of one experiment as a markdown table, and where it was measured.
    The runs, iterations and hours are those of the budgets as they are now (``budget_size``) at the
    report's seconds per iteration; a row measured at another STEP_SHAPE than its budget's is an error."""
    lines = ["| budget | $N = M$ | MLP hidden widths | weights | precision | s / iteration | runs | iterations in all "
             "| one-core hours |", "|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        if r["experiment"] != experiment:
            continue
        size = budget_size(experiment, r["budget"])
        if any(r[field] != size[field] for field in STEP_SHAPE):
            raise ValueError(f"the step timing of the {experiment} budget {r['budget']!r} was measured at "
                             f"{ {f: r[f] for f in STEP_SHAPE} }, but the budget now runs "
                             f"{ {f: size[f] for f in STEP_SHAPE} }: re-measure with "
                             "python benchmarks/bench_budgets.py --output benchmarks/results/budget_steps.json")
        hours = size["total_iterations"] * r["seconds_per_iteration"] / 3600
        widths = ", ".join(map(str, r["hidden_widths"]))
        lines.append(f"| {r['budget']} | {r['batch_size']} | {widths} | {r['weights']:,} | {r['precision']} | "
                     f"{r['seconds_per_iteration']:.3f} | {size['runs']} | {size['total_iterations']} | {hours:.3g} |")
    return "\n".join(lines) + "\n\n" + measured_on(report)


def save_report(report: dict, path) -> None:
    """Write a timing report as JSON (atomically), stamped with the cldiv commit and its creation time (UTC)."""
    from datetime import datetime, timezone

    write_json_atomic(Path(path), {**report, "git_commit": git_commit(),
                                   "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")})


#: The committed timing reports (benchmarks/results/) and the benchmark script that writes each.
TIMING_REPORTS = {"grouped_negatives.json": "bench_grouped_negatives.py", "budget_steps.json": "bench_budgets.py"}


def stored_timing_markdown(report_name: str, render, *args) -> str:
    """``render(report, *args)`` of the committed report ``benchmarks/results/<report_name>`` (one of
    TIMING_REPORTS), or, while none is committed, the command that writes it."""
    check_choice("report_name", report_name, tuple(TIMING_REPORTS))
    path = REPO_ROOT / "benchmarks" / "results" / report_name
    if not path.exists():
        return (f"No timing stored yet: `python benchmarks/{TIMING_REPORTS[report_name]} --output "
                f"{path.relative_to(REPO_ROOT)}`")
    return render(json.loads(path.read_text()), *args)
