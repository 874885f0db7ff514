"""`cldiv gpu-run` (cldiv/synthetic/gpu_run.py) on the CPU at the smoke budget: the GPU run, rehearsed."""

import json

from cldiv.book.cli import main
from cldiv.synthetic.gpu_run import gpu_run, step_equivalence
from cldiv.runs.store import ResultStore
from cldiv.synthetic.table1 import cell_config, table_configs

CELLS = dict(budget="smoke", columns=("holds", "violated", "inverse"), processes=("identity", "linear"), seeds=2)


def test_one_batched_step_matches_the_per_run_step():
    for column, process in [("holds", "linear"), ("violated", "spiral"), ("inverse", "patches")]:
        check = step_equivalence(cell_config(column, process, 0, "smoke"), "cpu")
        assert check["ok"] and check["loss_rel_diff"] < 1e-5 and check["grad_rel_diff"] < 1e-4, (column, check)


def test_a_run_stopped_by_its_time_limit_leaves_only_complete_results_and_resumes(tmp_path):
    store = ResultStore(tmp_path)
    configs = table_configs(CELLS["budget"], processes=list(CELLS["processes"]), seeds=2, columns=list(CELLS["columns"]))
    ticks = iter(range(10**6))  # a clock that advances one second every time it is read
    first = gpu_run(**CELLS, max_minutes=1.5, device="cpu", store=store, clock=lambda: next(ticks), log=lambda s: None)
    assert first["finished"] and first["unfinished"]  # the limit was shorter than the work
    files = sorted(tmp_path.glob("synthetic/*.json"))
    assert len(files) == len(first["finished"]) < len(configs)
    assert not list(tmp_path.rglob("*.tmp"))
    assert all(store.load(c) is not None for c in first["finished"])
    assert all(store.load(c) is None for c in first["unfinished"])
    stamps = {path: path.stat().st_mtime_ns for path in files}

    second = gpu_run(**CELLS, device="cpu", store=store, log=lambda s: None)
    assert set(map(store.path, second["finished"])) == set(map(store.path, first["unfinished"]))
    assert not second["unfinished"]
    assert all(store.load(c) is not None for c in configs)
    assert {path: path.stat().st_mtime_ns for path in files} == stamps  # finished runs were not retrained
    assert second["groups"] and all(g["runs_per_minute"] > 0 and g["seconds_per_step"] > 0 for g in second["groups"])


def test_cli_names_the_device_checks_the_step_and_stores_results_with_provenance(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CLDIV_RESULTS", str(tmp_path))
    monkeypatch.delenv("CLDIV_RESULTS_READ_ONLY")
    main(["gpu-run", "--budget", "smoke", "--columns", "inverse", "--processes", "linear", "--seeds", "2",
          "--device", "cpu", "--max-minutes", "10"])
    out = capsys.readouterr().out
    assert "device: CPU" in out and ": ok" in out and "runs/min" in out and "not finished: 0" in out
    records = [json.loads(p.read_text()) for p in tmp_path.glob("synthetic/*.json")]
    assert len(records) == 2
    assert all(r["provenance"]["device"] == "cpu" and r["timing"]["batched_runs"] == 2 for r in records)
