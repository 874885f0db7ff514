import json
import subprocess
import sys

import jupytext
import nbformat
import pytest

from cldiv.book import chapters
from cldiv.book import golden as goldens
from cldiv.book.cli import main

GOLDEN = sorted(goldens.GOLDEN_DIR.glob("*.ipynb"))


def code_cells(nb):
    return [c.source for c in nb.cells if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])]


def test_every_chapter_has_a_golden_copy_and_golden_parameters():
    assert sorted(goldens.golden_parameters()) == chapters.chapter_names()
    assert [p.stem for p in GOLDEN] == chapters.chapter_names()


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda p: p.stem)
def test_golden_notebook_code_equals_its_markdown_source(golden):
    source = jupytext.read(chapters.chapter_source(golden.stem))
    assert code_cells(nbformat.read(golden, as_version=4)) == code_cells(source)


@pytest.mark.parametrize("name", chapters.chapter_names())
def test_every_chapter_source_survives_a_jupytext_round_trip(name):
    # as `jupytext --test --to ipynb`: the MyST source, read and written again, is the same text
    # (but for the version lines jupytext adds to the header)
    text = chapters.chapter_source(name).read_text()
    again = jupytext.writes(jupytext.reads(text, fmt="md:myst"), fmt="md:myst")
    versions = ("format_version:", "jupytext_version:")
    lines = lambda t: [line for line in t.splitlines() if not line.strip().startswith(versions)]
    assert lines(again) == lines(text)


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda p: p.stem)
def test_golden_notebook_was_run_with_its_golden_parameters(golden):
    nb = nbformat.read(golden, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    namespace = {}
    exec(injected[0].source, {}, namespace)
    assert namespace == goldens.golden_parameters()[golden.stem]


def test_every_chapter_has_a_parameters_cell_of_plain_values():
    for name in chapters.chapter_names():
        params = chapters.chapter_parameters(name)
        assert params, name
        json.dumps(params)  # plain data, so papermill can inject it


def test_unknown_parameter_is_rejected_before_running(tmp_path):
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['not_a_parameter'\].*allowed"):
        chapters.execute_chapter("setting", {"not_a_parameter": 1}, tmp_path / "out.ipynb")
    assert not (tmp_path / "out.ipynb").exists()


def test_unknown_chapter_is_rejected_with_the_list_of_chapters():
    with pytest.raises(ValueError, match="chapter must be one of .*setting"):
        chapters.chapter_source("no_such_chapter")


def test_cli_reexecutes_a_chapter_with_new_parameters(tmp_path):
    out = tmp_path / "setting.ipynb"
    main(["chapter", "setting", "-p", "kappas", "[5.0]", "-p", "n_points", "200", "-o", str(out)])
    text = "".join(
        o.get("text", "") for c in nbformat.read(out, as_version=4).cells for o in c.get("outputs", [])
    )
    assert "kappa =   5.000" in text and "kappa =  20.000" not in text


def test_cli_fails_fast_with_a_clear_message_on_a_bad_parameter_value(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "cldiv.book.cli", "chapter", "setting", "-p", "processes", "['helix']",
         "-o", str(tmp_path / "out.ipynb")],
        capture_output=True, text=True,
    )
    assert result.returncode != 0
    assert "process must be one of 'identity'" in result.stderr


def test_no_chapter_hides_a_cell_longer_than_15_lines():
    """Long code belongs in cldiv, tested; a chapter hides only short setup and figure calls."""
    long_hidden = []
    for name in chapters.chapter_names():
        for cell in chapters.chapter_notebook(name).cells:
            hidden = any(t.startswith(("remove", "hide")) for t in cell.metadata.get("tags", []))
            if cell.cell_type == "code" and hidden and len(cell.source.splitlines()) > 15:
                long_hidden.append((name, cell.source.splitlines()[0]))
    assert not long_hidden


def test_every_figure_has_a_caption_and_a_label_that_the_prose_references():
    for name in chapters.chapter_names():
        nb = chapters.chapter_notebook(name)
        prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        for cell in nb.cells:
            if cell.cell_type == "code" and "plt.show()" in cell.source:
                figure = cell.metadata.get("mystnb", {}).get("figure", {})
                assert figure.get("caption") and figure.get("name"), (name, cell.source.splitlines()[0])
                assert "{numref}`" + figure["name"] + "`" in prose, (name, figure["name"])
