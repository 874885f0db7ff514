"""``cldiv gpu-run``: Table 1 at the paper's protocol in one prepared command, on the device at hand.

A GPU is lent to this project rarely and briefly, so the run must not waste it. In order:

1. name the device (``describe_device``);
2. check one training step of the batched trainer on that device against the per-run trainer
   on the CPU, same seed and same batch (``step_equivalence``): loss and gradient to float
   tolerance, or stop before training anything;
3. train the missing runs of the chosen cells (default: Table 1's holds, violated and
   inverse-encoder cells, 14 cells x 5 seeds at the ``paper`` budget) in batched groups sized to
   the free memory (``cldiv.synthetic.batched.plan_groups``), writing each finished run to the result store
   with its provenance (device name, float32 matmul precision);
4. stop before the wall-time limit: a group is started only if the throughput measured so far
   says it will end in time, and a group still running at the limit is abandoned whole, so that
   the store holds only complete results. A second call resumes with what is missing.

The report lists what finished, what did not, and the throughput of every group (runs/min,
s/step), so the next run can be sized from this one.
"""

from __future__ import annotations

import platform
import time
from typing import Any, Callable, Iterable

import torch

from cldiv.runs.store import ResultStore
from cldiv.synthetic.batched import DeadlinePassed, batched_losses, free_memory_bytes, plan_groups, stack_encoders, train_batched
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES
from cldiv.synthetic.table1 import cell_config, table_configs
from cldiv.synthetic.train import DATA_STREAM, build_model, contrastive_loss, default_device, random_stream, sample_batch

#: Table 1's cells trained at the paper's protocol on a GPU (the adapted column encodes N x M
#: negatives a step and is left to the per-run trainer).
GPU_COLUMNS = ("holds", "violated", "inverse")
#: Relative tolerance of the step check: float32 sums in another order differ by ~1e-6.
STEP_TOLERANCE = 1e-4


def describe_device(device: str) -> str:
    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(torch.device(device))} (CUDA {torch.version.cuda}, torch {torch.__version__})"
    return f"CPU {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads (torch {torch.__version__})"


def step_equivalence(config: SyntheticConfig, device: str) -> dict[str, float | bool]:
    """One training step of ``config``: the per-run trainer on the CPU against the batched
    trainer on ``device``, on the same batch. Returns the losses, the relative differences of
    the loss and of the gradient's norm (over all parameters; the batched model orders and pads
    them differently), and whether both are within STEP_TOLERANCE."""
    batch = sample_batch(config, random_stream(config.seed, DATA_STREAM, "cpu"), "cpu")
    reference = build_model(config, "cpu").train()
    cpu_loss = contrastive_loss(reference, config, batch)
    cpu_loss.backward()
    cpu_grad = _gradient_norm(reference.encoder)

    model = build_model(config, device)
    stacked = stack_encoders([model.encoder]).to(device).train()
    device_loss = batched_losses(stacked, [model], [config], [[t.to(device) for t in batch]])[0]
    device_loss.backward()
    device_grad = _gradient_norm(stacked)

    cpu_loss, device_loss = float(cpu_loss.detach()), float(device_loss.detach())
    loss_diff = abs(device_loss - cpu_loss) / abs(cpu_loss)
    grad_diff = abs(device_grad - cpu_grad) / cpu_grad
    return {"cpu_loss": cpu_loss, "device_loss": device_loss, "loss_rel_diff": loss_diff,
            "grad_rel_diff": grad_diff, "ok": loss_diff <= STEP_TOLERANCE and grad_diff <= STEP_TOLERANCE}


def _gradient_norm(module: torch.nn.Module) -> float:
    return float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in module.parameters() if p.grad is not None)))


def gpu_run(
    budget: str = "paper",
    columns: Iterable[str] = GPU_COLUMNS,
    processes: Iterable[str] | None = None,
    seeds: int | None = None,
    *,
    max_minutes: float | None = None,
    device: str | None = None,
    store=None,
    clock: Callable[[], float] = time.monotonic,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train the missing runs of the chosen cells; return a report (module docstring)."""
    deadline = None if max_minutes is None else clock() + 60 * max_minutes
    device = device or default_device()
    store = store or ResultStore.default()
    configs = table_configs(budget, processes=list(processes or SYNTHETIC_PROCESSES), seeds=seeds,
                            columns=list(columns))
    report: dict[str, Any] = {"device": describe_device(device), "finished": [], "groups": []}
    log(f"device: {report['device']}")

    check = step_equivalence(cell_config("holds", "linear", 0, "smoke"), device)
    report["step_equivalence"] = check
    log(f"one training step, CPU per-run vs {device} batched: loss {check['cpu_loss']:.6f} vs "
        f"{check['device_loss']:.6f} (rel. diff {check['loss_rel_diff']:.1e}), gradient rel. diff "
        f"{check['grad_rel_diff']:.1e}: {'ok' if check['ok'] else 'MISMATCH'}")
    if not check["ok"]:
        raise RuntimeError(f"the batched step on {device} does not match the CPU step; nothing was trained")

    pending = [c for c in configs if store.load(c) is None]
    unsupported = [c for c in pending if c.loss != "infonce"]
    if unsupported:
        raise ValueError(f"gpu-run trains InfoNCE cells only; columns {sorted({c.loss for c in unsupported})} "
                         f"need the per-run trainer (cldiv synthetic); choose columns among {GPU_COLUMNS}")
    log(f"{len(configs)} runs asked for, {len(configs) - len(pending)} already stored, {len(pending)} to train")
    seconds_per_run_step = None  # measured throughput, for the time each further group needs
    for group in plan_groups(pending, free_memory_bytes(device)):
        for config in group:
            store.check_writable(config)
        steps = group[0].iterations
        if deadline is not None and seconds_per_run_step is not None:
            needed = seconds_per_run_step * steps * len(group)
            if clock() + needed > deadline:
                log(f"skipped a group of {len(group)} runs: needs ~{needed:.0f} s, the limit comes first")
                continue
        start, wall = clock(), time.perf_counter()
        try:
            results = train_batched(group, device=device, deadline=deadline, clock=clock)
        except DeadlinePassed as stop:
            log(f"wall-time limit reached in a group of {len(group)} runs ({stop}); none of them was stored")
            break
        seconds = time.perf_counter() - wall
        for config, result in zip(group, results):
            store.save(config, result, wall_time_s=seconds / len(group), device=device)
        report["finished"] += group
        seconds_per_run_step = max(clock() - start, 1e-9) / (steps * len(group))
        throughput = {"runs": len(group), "steps": steps, "seconds": round(seconds, 1),
                      "seconds_per_step": round(seconds / steps, 5),
                      "runs_per_minute": round(60 * len(group) / max(seconds, 1e-9), 2)}
        report["groups"].append(throughput)
        log(f"group of {len(group)} ({group[0].encoder}, {steps} steps) done in {seconds:.0f} s: "
            f"{throughput['seconds_per_step']} s/step, {throughput['runs_per_minute']} runs/min")
    report["unfinished"] = [c for c in pending if c not in report["finished"]]
    log(f"finished {len(report['finished'])} runs; not finished: {len(report['unfinished'])}"
        + "".join(f"\n  {c.process} {'holds' if c.d_fixed == 0 else 'violated'} {c.encoder} seed {c.seed}"
                  for c in report["unfinished"]))
    return report

