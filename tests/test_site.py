"""The rendered site (cldiv/book/site.py): self-contained, with a live scorecard, checked in a real browser.

The browser test opens every page of the built book from file:// in headless Chromium with the
network emulated offline, and fails on any console error, any failed request, any request that
leaves the site, any equation MathJax did not typeset, any image that did not load, any code cell wider
than the page and any cross-reference Sphinx could not resolve. It saves
screenshots of the landing page and of a chapter to ``_build/screenshots/`` (or
``$CLDIV_SCREENSHOTS``) for a person to look at.

Chromium is driven by Playwright for Python through ``executable_path`` (Debian's ``chromium``; no
browser download). The test is skipped only when no Chromium is installed; ``.ci/run`` installs it.

The site under test is ``$CLDIV_SITE`` if set, else ``book/_build/html`` when it is newer than
every source of the book (chapters, config, ``cldiv``, results), else a build into a temporary
folder (``jupyter-book build book -W --path-output``) against the committed results, starting
from a copy of ``book/_build/.jupyter_cache`` when there is one (what is tested is the rendering;
CI's own book build starts from a clean cache).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from cldiv.book import site
from cldiv.runs.store import REPO_ROOT

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
SCREENSHOT_PAGES = ("intro.html", "notebooks/setting.html")
BOOK_SOURCES = ("_config.yml", "_toc.yml", "references.bib", "book/*.md", "notebooks/*.md", "cldiv/**/*.py",
                "results/**/*.json")


def find_browser() -> str | None:
    """A Chromium executable: ``$CLDIV_CHROMIUM`` or the first of ``BROWSERS`` on PATH."""
    explicit = os.environ.get("CLDIV_CHROMIUM")
    if explicit:
        return explicit
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


# ----------------------------------------------------------------------------- fixtures


def _newest_source_mtime() -> float:
    return max(path.stat().st_mtime for pattern in BOOK_SOURCES for path in REPO_ROOT.glob(pattern))


def built_site(tmp_root: Path) -> Path:
    """The HTML site to test (module docstring): $CLDIV_SITE, a fresh book/_build/html, or a new build."""
    if os.environ.get("CLDIV_SITE"):
        return Path(os.environ["CLDIV_SITE"])
    html = REPO_ROOT / "book" / "_build" / "html"
    stamp = html / ".buildinfo"  # written at the end of every successful HTML build
    if stamp.exists() and (html / "intro.html").exists() and stamp.stat().st_mtime > _newest_source_mtime():
        return html
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLDIV_RESULTS")}  # the committed results
    cache = REPO_ROOT / "book" / "_build" / ".jupyter_cache"
    if cache.is_dir():  # executed chapters keyed by their code: only new or changed code runs again
        shutil.copytree(cache, tmp_root / "_build" / ".jupyter_cache")
    build = subprocess.run(
        [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(REPO_ROOT / "book"), "-W",
         "--path-output", str(tmp_root)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=3000,
    )
    assert build.returncode == 0, f"the book did not build:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    return tmp_root / "_build" / "html"


@pytest.fixture(scope="session")
def site_html(tmp_path_factory) -> Path:
    return built_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def browser():
    executable = find_browser()
    if executable is None:
        pytest.skip("no Chromium found (install Debian's `chromium`, as .ci/run does, or set CLDIV_CHROMIUM)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        yield instance
        instance.close()


# ----------------------------------------------------------------------------- the browser test

PAGE_REPORT = """(async () => {
  await new Promise(resolve => document.readyState === 'complete' ? resolve() : addEventListener('load', resolve));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(resolve => { img.addEventListener('load', resolve); img.addEventListener('error', resolve); })));
  await document.fonts.ready;
  const maths = [...document.querySelectorAll('.math')];
  return {
    title: document.title,
    maths: maths.length,
    untypeset: maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80)),
    mathjax_errors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent.slice(0, 80)),
    typeset: document.querySelectorAll('mjx-container').length,
    images: [...document.images].map(img => ({src: img.getAttribute('src'), ok: img.complete,
        width: img.naturalWidth, height: img.naturalHeight})),
    wide_code: [...document.querySelectorAll('div.cell pre')].filter(pre => pre.scrollWidth > pre.clientWidth + 1)
        .map(pre => pre.textContent.slice(0, 80)),
    unresolved: [...document.querySelectorAll('.xref')].filter(e => !e.closest('a')).map(e => e.textContent.slice(0, 80)),
  };
})()"""


def _watch(page: Page, site_root: Path) -> list[str]:
    """The list that collects the page's console errors, uncaught exceptions, failed requests and
    requests that leave the site, as they happen."""
    problems: list[str] = []

    def on_request(request) -> None:
        parsed = urlparse(request.url)
        if parsed.scheme not in ("file", "data", "blob", "about"):
            problems.append(f"request leaves the site: {request.url}")
        elif parsed.scheme == "file" and not Path(unquote(parsed.path)).resolve().is_relative_to(site_root):
            problems.append(f"request outside the site folder: {request.url}")

    page.on("console", lambda message: problems.append(f"console.{message.type}: {message.text}")
            if message.type in ("error", "assert") else None)
    page.on("pageerror", lambda error: problems.append(f"uncaught exception: {error}"))
    page.on("request", on_request)
    page.on("requestfailed", lambda request: problems.append(f"failed request: {request.failure} {request.url}"))
    return problems


def check_page(browser: Browser, path: Path, root: Path) -> tuple[Page, list[str], dict]:
    """Open ``path`` in a new offline page (1280 x 900); returns (the page, problems found, its report)."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True).new_page()
    problems = _watch(page, root)
    page.goto(path.as_uri(), wait_until="load")
    report = page.evaluate(PAGE_REPORT)
    problems += [f"equation not typeset: {text!r}" for text in report["untypeset"]]
    problems += [f"MathJax error: {text!r}" for text in report["mathjax_errors"]]
    problems += [f"image not loaded: {img['src']}" for img in report["images"]
                 if not (img["ok"] and img["width"] > 0 and img["height"] > 0)]
    problems += [f"code cell wider than the page: {text!r}" for text in report["wide_code"]]
    problems += [f"unresolved reference: {text!r}" for text in report["unresolved"]]
    return page, problems, report


@pytest.mark.slow
def test_every_page_renders_offline_in_chromium(site_html, browser):
    root = site_html.resolve()
    pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts)
    assert "intro.html" in pages and "notebooks/setting.html" in pages, pages
    screenshots = Path(os.environ.get("CLDIV_SCREENSHOTS") or REPO_ROOT / "_build" / "screenshots")
    failures, typeset = {}, {}
    for page in pages:
        redirect = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', (root / page).read_text())
        if redirect:  # index.html: a redirect to the landing page, which is tested itself
            assert (root / page).parent.joinpath(redirect.group(1)).resolve().relative_to(root).as_posix() in pages
            continue
        opened, problems, report = check_page(browser, root / page, root)
        if page in SCREENSHOT_PAGES:
            opened.screenshot(path=screenshots / (Path(page).stem + ".png"), full_page=True)
        if problems:
            failures[page] = problems
        typeset[page] = report["typeset"]
        opened.context.close()
    assert not failures, "pages with problems:\n" + json.dumps(failures, indent=1)
    # the pages with mathematics did typeset it (the chapter has labelled equations, the landing page $...$)
    assert typeset["notebooks/setting.html"] > 10 and typeset["intro.html"] > 0, typeset
    for page in SCREENSHOT_PAGES:
        assert (screenshots / (Path(page).stem + ".png")).stat().st_size > 10_000


def test_the_page_check_catches_cdn_requests_broken_images_script_errors_and_raw_tex(browser, tmp_path):
    """The browser check is not vacuous: a page with each kind of fault fails it, once per fault."""
    (tmp_path / "bad.html").write_text(textwrap.dedent("""\
        <!DOCTYPE html><html><head><title>bad</title>
        <script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script></head>
        <body><p><span class="math">\\(x^2\\)</span> <span class="xref std std-ref">no-such-label</span></p>
        <img src="missing.png">
        <script>console.error("boom"); undefined_function();</script></body></html>"""))
    page, problems, _ = check_page(browser, tmp_path / "bad.html", tmp_path)
    page.context.close()
    text = "\n".join(problems)
    for fault in ("request leaves the site: https://cdn.jsdelivr.net", "console.error: boom", "undefined_function",
                  "equation not typeset", "image not loaded: missing.png", "failed request",
                  "unresolved reference: 'no-such-label'"):
        assert fault in text, (fault, problems)


@pytest.mark.slow
def test_site_fetches_nothing_from_another_host(site_html):
    """No page or stylesheet of the built site names a CDN: every script and link is local."""
    offenders = []
    for path in site_html.rglob("*.html"):
        if "_static" in path.parts:
            continue
        text = path.read_text(errors="replace")
        for marker in ('src="http', "src='http", 'rel="stylesheet" href="http', "cdn.jsdelivr", "unpkg.com",
                       "cdnjs.cloudflare", "fonts.googleapis"):
            if marker in text:
                offenders.append(f"{path.relative_to(site_html)}: {marker}")
    assert not offenders, offenders
    assert (site_html / "_static" / "mathjax" / site.MATHJAX_ENTRY).is_file()


@pytest.mark.slow
def test_the_landing_page_gives_every_chapter_its_measured_execution_time(site_html):
    """The re-execution times the chapters point to ({ref}`execution-times`) are the build's own
    measurements (myst-nb's {nb-exec-table}), one row per chapter with a run time in seconds."""
    text = re.sub(r"<[^>]+>", " ", (site_html / "intro.html").read_text())
    table = text.split("Execution times", 1)[1]
    for chapter in _toc_chapters():
        assert re.search(rf"notebooks/{chapter}\s+\S+ \S+\s+cache\s+\d+\.\d+", table), chapter


# ----------------------------------------------------------------------------- the Sphinx extension


def test_mathjax_parts_exist_in_the_pinned_package(tmp_path):
    source = site.mathjax_source()
    assert 'VERSION="3.2.2"' in (source / site.MATHJAX_ENTRY).read_text()
    site.copy_mathjax(tmp_path)
    for part in site.MATHJAX_PARTS:
        assert (tmp_path / part).exists(), part
    assert any((tmp_path / "output/chtml/fonts/woff-v2").glob("*.woff"))
    assert "Apache License" in (tmp_path / "NOTICE.txt").read_text()


MINIMAL_CONF = textwrap.dedent("""
    extensions = ["myst_parser", "cldiv.book.site"]
    myst_enable_extensions = ["dollarmath"]
    html_theme = "basic"
""")


def _build_minimal_site(src: Path, out: Path, results: Path) -> str:
    env = {**os.environ, "CLDIV_RESULTS": str(results), "CLDIV_RESULTS_READ_ONLY": "0"}
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q", str(src), str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return (out / "index.html").read_text()


@pytest.mark.slow
def test_scorecard_page_follows_the_result_files_in_an_incremental_build(tmp_path):
    """The landing page's table is recomputed on every build, even when its source did not change."""
    from test_scorecard import write_table1_runs  # tests/ is on sys.path under pytest

    src, out, results = tmp_path / "src", tmp_path / "out", tmp_path / "results"
    src.mkdir()
    (src / "conf.py").write_text(MINIMAL_CONF)
    (src / "index.md").write_text("# Scorecard\n\n$x^2$\n\n```{scorecard}\n```\n\n```{scorecard}\n:details:\n```\n")
    first = _build_minimal_site(src, out, results)
    assert "Table 1" in first and "Theorem 4.5" in first and "0 result files" in first
    assert first.count("not yet run") >= 7
    assert 'src="_static/mathjax/tex-chtml.js' in first and (out / "_static/mathjax/tex-chtml.js").exists()

    write_table1_runs(results, agree=True)
    second = _build_minimal_site(src, out, results)
    assert second != first and "sd-bg-success" in second and "paper: 5000 it × batch 2000, 5 seeds" in second
    glance = second.split("<table", 1)[1].split("</table>", 1)[0]  # the first table: claim, verdict, why
    assert glance.count('<th class="head"') == 3 and "19/19 cells agree" in glance and "5000 it" not in glance


def _toc_chapters() -> list[str]:
    """The chapters the book contains, from _toc.yml (notebooks/<name> entries)."""
    return [line.split("notebooks/")[1].strip() for line in (REPO_ROOT / "_toc.yml").read_text().splitlines()
            if "file: notebooks/" in line]


@pytest.mark.parametrize("chapter", _toc_chapters())
def test_every_chapter_opens_with_what_it_reproduces_and_how_to_rerun_it(chapter):
    """The opening convention: what the chapter reproduces, and the one command that re-executes it."""
    text = (REPO_ROOT / "notebooks" / f"{chapter}.md").read_text()
    opening = text.split("\n# ", 1)[1].split("\n## ", 1)[0]
    assert "**Reproduces:**" in opening, f"{chapter}: no '**Reproduces:**' line before the first section"
    assert f"cldiv chapter {chapter}" in opening, f"{chapter}: no `cldiv chapter {chapter} ...` command in the opening"
