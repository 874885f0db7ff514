"""Re-executing the book's chapters with new parameters (jupytext -> papermill).

Chapters are jupytext MyST sources ``notebooks/<name>.md`` whose first code cell is tagged
``parameters``. ``execute_chapter`` converts one to a notebook, checks the requested
parameter names against that cell, and runs it with papermill.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import papermill

from cldiv.runs.store import REPO_ROOT

NOTEBOOK_DIR = REPO_ROOT / "notebooks"


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
