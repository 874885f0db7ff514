import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cldiv.synthetic.config import SyntheticConfig
from cldiv.runs.store import ResultStore
from cldiv.runs.executor import grid, run_sweep, usable_cpus


def slow_square(config):
    """A stand-in experiment: logs that it ran, waits, returns seed^2."""
    log = os.environ.get("SWEEP_TEST_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{config.seed}\n")
    pids = os.environ.get("SWEEP_TEST_PIDS")
    if pids:
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\n")
    time.sleep(float(os.environ.get("SWEEP_TEST_SLEEP", "0")))
    return {"metrics": {"square": config.seed**2, "tau": config.tau}}, "cpu"


def torch_threads(config):
    """A stand-in experiment that reports the torch threads it ran with."""
    import torch

    return {"metrics": {"threads": torch.get_num_threads()}}, "cpu"


def test_grid_is_the_product_of_the_named_lists_with_the_last_axis_fastest():
    configs = grid(SyntheticConfig(), tau=[0.3, 0.5], seed=[0, 1, 2])
    assert [(c.tau, c.seed) for c in configs] == [(0.3, 0), (0.3, 1), (0.3, 2), (0.5, 0), (0.5, 1), (0.5, 2)]


def test_grid_rejects_unknown_parameter_names():
    with pytest.raises(ValueError, match="unknown config field"):
        grid(SyntheticConfig(), temperature=[0.1])


def test_local_sweep_runs_missing_configs_and_skips_stored_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEEP_TEST_LOG", str(tmp_path / "log"))
    store = ResultStore(tmp_path / "results")
    configs = grid(SyntheticConfig(), seed=range(4))
    store.save(configs[1], {"metrics": {"square": -1}}, wall_time_s=0, device="cpu")
    records = run_sweep(configs, slow_square, store=store, workers=2, progress=False)
    assert [r["metrics"]["square"] for r in records] == [0, -1, 4, 9]
    assert sorted((tmp_path / "log").read_text().split()) == ["0", "2", "3"]
    assert all(r["provenance"]["wall_time_s"] >= 0 for r in records)
    # the worker's thread count, not the parent's: each of 2 workers gets usable CPUs // 2 threads
    assert {records[i]["provenance"]["threads"] for i in (0, 2, 3)} == {max(1, usable_cpus() // 2)}


def test_workers_share_the_cpus_of_the_affinity_mask_not_the_machine(tmp_path, monkeypatch):
    # under `taskset -c 0` one worker must run one thread, not one per core of the machine
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setenv("SWEEP_TEST_LOG", str(tmp_path / "log"))
    assert usable_cpus() == 1
    records = run_sweep(grid(SyntheticConfig(), seed=range(1)), slow_square, store=ResultStore(tmp_path / "r"),
                        workers=1, progress=False)
    assert records[0]["provenance"]["threads"] == 1


def test_a_given_thread_count_is_what_each_worker_runs_with(tmp_path):
    # `cldiv simclr --threads 3`: 3 threads in the worker, whatever the CPUs (default: usable CPUs // workers)
    records = run_sweep(grid(SyntheticConfig(), seed=range(1)), torch_threads, store=ResultStore(tmp_path),
                        workers=1, threads=3, progress=False)
    assert records[0]["metrics"]["threads"] == 3 and records[0]["provenance"]["threads"] == 3


def test_bad_executor_is_rejected():
    with pytest.raises(ValueError, match="executor must be one of 'local', 'ray'"):
        run_sweep([], slow_square, executor="dask")


SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from test_executor import slow_square
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.runs.store import ResultStore
    from cldiv.runs.executor import grid, run_sweep
    run_sweep(grid(SyntheticConfig(), seed=range(8)), slow_square, store=ResultStore({root!r}),
              workers=2, progress=False)
    """
)


@pytest.mark.slow
def test_killed_sweep_keeps_finished_runs_and_restart_only_runs_the_rest(tmp_path):
    root = tmp_path / "results"
    script = SCRIPT.format(tests=os.path.dirname(__file__), root=str(root))
    env = dict(os.environ, SWEEP_TEST_LOG=str(tmp_path / "first"), SWEEP_TEST_SLEEP="0.5")
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)
    deadline = time.time() + 60
    while len(list(root.glob("synthetic/*.json"))) < 2 and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = list(root.glob("synthetic/*.json"))
    assert 2 <= len(finished) < 8
    for path in finished:  # every file present is complete
        assert "metrics" in json.loads(path.read_text())

    env.update(SWEEP_TEST_LOG=str(tmp_path / "second"), SWEEP_TEST_SLEEP="0")
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    rerun = (tmp_path / "second").read_text().split()
    assert len(rerun) == 8 - len(finished)
    assert len(list(root.glob("synthetic/*.json"))) == 8


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux: /proc/<pid>/stat)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers die with the sweep on Linux only")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_workers_of_a_killed_sweep_stop_instead_of_training_for_nobody(tmp_path, how):
    # kill only the sweep's process, not its process group: its workers must not run on
    pids = tmp_path / "pids"
    script = SCRIPT.format(tests=os.path.dirname(__file__), root=str(tmp_path / "results"))
    env = dict(os.environ, SWEEP_TEST_PIDS=str(pids), SWEEP_TEST_SLEEP="60")
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.time() + 60
    while len(pids.read_text().split() if pids.exists() else []) < 2 and time.time() < deadline:
        time.sleep(0.05)
    workers = [int(pid) for pid in pids.read_text().split()]
    assert len(workers) == 2 and all(map(running, workers))
    proc.send_signal(how)
    proc.wait()
    deadline = time.time() + 10
    while any(map(running, workers)) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(map(running, workers))


@pytest.mark.slow
def test_ray_executor_gives_the_same_results_as_the_local_one(tmp_path):
    ray = pytest.importorskip("ray")
    configs = grid(SyntheticConfig(), tau=[0.3, 0.5], seed=[1, 2])
    local = run_sweep(configs, slow_square, store=ResultStore(tmp_path / "local"), progress=False)
    tests = os.path.dirname(__file__)  # so Ray's workers can import slow_square
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": tests}})
    try:
        remote = run_sweep(configs, slow_square, store=ResultStore(tmp_path / "ray"), executor="ray",
                           progress=False)
    finally:
        ray.shutdown()
    assert [r["metrics"] for r in remote] == [r["metrics"] for r in local]
    assert [r["config"] for r in remote] == [r["config"] for r in local]
