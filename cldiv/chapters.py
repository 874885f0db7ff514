"""Re-executing the book's chapters with new parameters (jupytext -> papermill).

Chapters are jupytext MyST sources ``notebooks/<name>.md`` whose first code cell is tagged
``parameters``. ``execute_chapter`` converts one to a notebook, checks the requested
parameter names against that cell, and runs it with papermill.
"""

from __future__ import annotations

import ast
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import papermill

from cldiv.store import REPO_ROOT

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
GOLDEN_DIR = REPO_ROOT / "tests" / "golden"


def chapter_names() -> list[str]:
    return sorted(p.stem for p in NOTEBOOK_DIR.glob("*.md"))


def chapter_source(name: str) -> Path:
    path = NOTEBOOK_DIR / f"{name}.md"
    if not path.exists():
        raise ValueError(f"chapter must be one of {', '.join(chapter_names())}; got {name!r}")
    return path


def chapter_notebook(name: str) -> nbformat.NotebookNode:
    """The chapter as an (unexecuted) notebook."""
    return jupytext.read(chapter_source(name))


def chapter_parameters(name: str) -> dict[str, Any]:
    """The defaults in the chapter's ``parameters`` cell (plain assignments), evaluated."""
    for cell in chapter_notebook(name).cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            values: dict[str, Any] = {}
            exec(cell.source, {}, values)
            return values
    raise ValueError(f"chapter {name!r} has no cell tagged 'parameters'")


def parse_value(text: str) -> Any:
    """A command-line value as a Python literal if it is one (2, 0.5, [1, 2], True), else a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def execute_chapter(
    name: str, parameters: dict[str, Any], output: str | Path, *, progress: bool = True
) -> Path:
    """Run chapter ``name`` with ``parameters`` overriding its defaults; write ``output``.

    Unknown parameter names are rejected before anything runs. The notebook runs with
    notebooks/ as its working directory, as in the book build.
    """
    known = chapter_parameters(name)
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for chapter {name!r}; allowed: {sorted(known)}")
    output = Path(output).resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / f"{name}.ipynb"
        nbformat.write(chapter_notebook(name), source)
        papermill.execute_notebook(
            str(source),
            str(output),
            parameters=parameters,
            cwd=str(NOTEBOOK_DIR),
            kernel_name="python3",
            progress_bar=progress,
        )
    return output


def golden_parameters() -> dict[str, dict[str, Any]]:
    """The small parameters each chapter's nbval golden copy is executed with."""
    return json.loads((GOLDEN_DIR / "parameters.json").read_text())


def write_golden(name: str) -> Path:
    """Execute chapter ``name`` with its golden parameters into tests/golden/<name>.ipynb.

    Runs against an empty temporary result store, so the golden copy is computed from
    scratch (and nbval later checks that the computation is deterministic).
    """
    params = golden_parameters()
    if name not in params:
        raise ValueError(f"chapter {name!r} has no entry in {GOLDEN_DIR / 'parameters.json'}")
    with tempfile.TemporaryDirectory() as store:
        previous = os.environ.get("CLDIV_RESULTS")
        os.environ["CLDIV_RESULTS"] = store
        try:
            path = execute_chapter(name, params[name], GOLDEN_DIR / f"{name}.ipynb", progress=False)
        finally:
            if previous is None:
                del os.environ["CLDIV_RESULTS"]
            else:
                os.environ["CLDIV_RESULTS"] = previous
    _strip_volatile_metadata(path)
    return path


def _strip_volatile_metadata(path: Path) -> None:
    """Drop papermill's timings and the figures' pixels (nbval does not compare images), so
    a golden copy stays small and regenerating it changes only real outputs."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata.get("papermill", {}).pop("start_time", None)
    nb.metadata.get("papermill", {}).pop("end_time", None)
    nb.metadata.get("papermill", {}).pop("duration", None)
    nb.metadata.get("papermill", {}).pop("input_path", None)
    nb.metadata.get("papermill", {}).pop("output_path", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            for mime in ("image/png", "image/jpeg"):
                output.get("data", {}).pop(mime, None)
    nbformat.write(nb, path)
