"""The golden notebooks that nbval checks, and the result store they read.

Each chapter has a golden copy, ``tests/golden/<name>.ipynb``, executed with the small parameters
of ``tests/golden/parameters.json``. Chapters that train read their smoke-budget results from the
golden store, ``tests/golden/results``, which ``cldiv golden`` fills (training what is missing on
the machine it runs on) and the tests open read-only. Seeded training is bit-identical only on
one kind of CPU, so the golden notebooks compare the *rendering* of stored results exactly, and
``tests/test_golden_store.py`` retrains the ``SPREAD_CELLS`` below and compares with a tolerance
taken from their seed-to-seed spread.
"""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat

from cldiv.runs.store import REPO_ROOT, ResultStore
from cldiv.synthetic.table1 import cell_config
from cldiv.synthetic.train import run_all
from cldiv.book.chapters import execute_chapter

GOLDEN_DIR = REPO_ROOT / "tests" / "golden"
GOLDEN_STORE = GOLDEN_DIR / "results"

#: Smoke-budget cells (column, process) retrained by the tests, with SPREAD_SEEDS seeds each in
#: the golden store: one per kind of training step (holds, violated, support-corrected, inverse).
SPREAD_CELLS = (("holds", "identity"), ("violated", "spiral"), ("adapted", "identity"), ("inverse", "spiral"))
SPREAD_SEEDS = 8


def golden_parameters() -> dict[str, dict[str, Any]]:
    """The small parameters each chapter's nbval golden copy is executed with."""
    return json.loads((GOLDEN_DIR / "parameters.json").read_text())


def spread_configs() -> list:
    """The configs of ``SPREAD_CELLS`` at the smoke budget, seeds 0 .. SPREAD_SEEDS - 1."""
    return [cell_config(column, process, seed, "smoke")
            for column, process in SPREAD_CELLS for seed in range(SPREAD_SEEDS)]


def write_golden(name: str) -> Path:
    """Execute chapter ``name`` with its golden parameters into tests/golden/<name>.ipynb.

    Runs against the golden store: results it holds are loaded, missing ones are computed on
    this machine and added. A run that had to compute is repeated, so that the golden copy
    shows the chapter as the tests run it, loading every result.
    """
    params = golden_parameters()
    if name not in params:
        raise ValueError(f"chapter {name!r} has no entry in {GOLDEN_DIR / 'parameters.json'}")
    output = GOLDEN_DIR / f"{name}.ipynb"
    with _environment(CLDIV_RESULTS=str(GOLDEN_STORE), CLDIV_RESULTS_READ_ONLY="0"):
        stored = _stored_files()
        path = execute_chapter(name, params[name], output, progress=False)
        if _stored_files() != stored:
            path = execute_chapter(name, params[name], output, progress=False)
    _strip_volatile_metadata(path)
    return path


def write_spread_runs() -> None:
    """Train (or load) ``spread_configs()`` into the golden store."""
    run_all(spread_configs(), ResultStore(GOLDEN_STORE), progress=False)


def _stored_files() -> set[Path]:
    return set(GOLDEN_STORE.glob("*/*.json"))


def clear_golden_store() -> None:
    """Delete the golden result store, so that the next ``write_golden`` calls retrain it."""
    shutil.rmtree(GOLDEN_STORE, ignore_errors=True)


@contextmanager
def _environment(**values: str):
    """Set environment variables (inherited by notebook kernels) for the duration of a block."""
    previous = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _strip_volatile_metadata(path: Path) -> None:
    """Drop papermill's timings and the figures' pixels (nbval does not compare images), so
    a golden copy stays small and regenerating it changes only real outputs."""
    nb = nbformat.read(path, as_version=4)
    for key in ("start_time", "end_time", "duration", "input_path", "output_path"):
        nb.metadata.get("papermill", {}).pop(key, None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            for mime in ("image/png", "image/jpeg"):
                output.get("data", {}).pop(mime, None)
    nbformat.write(nb, path)
