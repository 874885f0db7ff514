"""Sweeps: a grid of experiment configs run through one interface, locally or on Ray.

``grid(base, **axes)`` is the product of named parameter lists (seeds included). ``run_sweep``
skips every config whose result is already in the store, runs the rest with

- ``executor="local"``: a process pool sized to the machine, or
- ``executor="ray"``: one Ray task per config on an existing cluster (``address`` or
  ``RAY_ADDRESS``; a local instance if neither), a GPU requested per task if asked,

and writes each result into the store as it arrives. Only this process writes, each file
atomically, so a sweep killed at any point keeps its finished runs and never leaves a
half-written one: starting it again runs only what is missing. On Linux a local worker dies with
the sweep's process (``_die_with_parent``), so that a killed sweep leaves no worker training for
nobody, on cores a restarted sweep needs.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import signal
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Any, Callable, Iterable

from tqdm import tqdm

from cldiv.config import Config, check_choice, with_overrides
from cldiv.runs.store import ResultStore, git_commit

EXECUTORS = ("local", "ray")

Run = Callable[[Config], "tuple[dict, str]"]


def grid(base: Config, **axes: Iterable[Any]) -> list[Config]:
    """Every combination of the named parameter lists applied to ``base`` (last axis fastest)."""
    names = list(axes)
    values = [list(axes[name]) for name in names]
    return [with_overrides(base, **dict(zip(names, combo))) for combo in itertools.product(*values)]


def _timed_run(run: Run, config: Config, threads: int) -> tuple[dict, str, float]:
    """Run one config in a worker; returns (result, device, wall seconds)."""
    import torch

    torch.set_num_threads(threads)
    start = time.perf_counter()
    result, device = run(config)
    return result, device, time.perf_counter() - start


#: prctl(2) option: the signal the kernel sends this process when the thread that started it exits.
PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Worker initializer: on Linux, have the kernel send this worker SIGKILL when the sweep's
    process (``parent``, which started it) dies, however it dies; exit at once if it already has.
    Elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, e.g. under ``taskset``)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _run_local(pending, run, store, workers, threads, bar) -> None:
    threads = threads or max(1, usable_cpus() // workers)
    context = get_context("spawn")  # a clean interpreter per worker: no forked torch threads
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(_timed_run, run, config, threads): config for config in pending}
        try:
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    config = futures.pop(future)
                    result, device, wall = future.result()
                    store.save(config, result, wall_time_s=wall, device=device, threads=threads)
                    bar.update()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _run_ray(pending, run, store, address, gpus_per_task, bar) -> None:
    import ray

    if not ray.is_initialized():
        ray.init(address=address or os.environ.get("RAY_ADDRESS"), log_to_driver=False)
    task = ray.remote(num_cpus=1, num_gpus=gpus_per_task)(_timed_run)
    refs = {task.remote(run, config, 1): config for config in pending}
    while refs:
        done, _ = ray.wait(list(refs), num_returns=1)
        config = refs.pop(done[0])
        result, device, wall = ray.get(done[0])
        store.save(config, result, wall_time_s=wall, device=device, threads=1)
        bar.update()


def run_sweep(
    configs: list[Config],
    run: Run,
    *,
    store: ResultStore | None = None,
    executor: str = "local",
    workers: int | None = None,
    address: str | None = None,
    gpus_per_task: float = 0.0,
    threads: int | None = None,
    progress: bool = True,
) -> list[dict]:
    """Run every config without a stored result; return all records in ``configs`` order.

    ``run`` must be a module-level function (it is sent to worker processes or Ray tasks). Local
    workers use ``threads`` torch threads each (default: the usable CPUs shared among them; two commands
    run at once thus oversubscribe the cores unless each is pinned, e.g. with ``taskset -c 0``).
    """
    check_choice("executor", executor, EXECUTORS)
    store = store or ResultStore.default()
    pending = [c for c in configs if store.load(c) is None]
    for config in pending[:1]:
        store.check_writable(config)
        git_commit()  # the code these runs start with (read once per process)
    with tqdm(total=len(configs), initial=len(configs) - len(pending), disable=None if progress else True,
              desc="sweep", unit="run") as bar:
        if pending and executor == "local":
            _run_local(pending, run, store, workers or min(len(pending), usable_cpus()), threads, bar)
        elif pending:
            _run_ray(pending, run, store, address, gpus_per_task, bar)
    return [store.load(c) for c in configs]
