"""The rendered site: a Sphinx extension that makes the book self-contained and adds the scorecard.

Loaded by ``_config.yml`` (``sphinx: extra_extensions: [cldiv.book.site]``). It does two things:

- **MathJax from the site itself.** The equations are typeset by MathJax 3.2.2, whose files come
  from the pinned PyPI package ``sphinx-mathjax-offline`` (``requirements.txt``; used here as a
  data source only). At the end of an HTML build the parts the book needs (``MATHJAX_PARTS``: the
  TeX-to-CHTML bundle, its TeX extensions and web fonts, the menu and the accessibility
  components) are copied to ``_static/mathjax/``, and ``mathjax_path`` points there. No CDN is
  contacted, so ``_build/html`` works opened from disk with no network, or from any static host.
  sphinx-thebe's scripts, which would load thebe from a CDN, are left out while the book has no
  thebe launch button.
- **The ``{scorecard}`` directive**, which renders ``cldiv.book.scorecard.scorecard()`` -- every claim
  of the paper, linked to its chapter's section, with its verdict and the reason in a line; with
  ``:details:``, the budgets, key numbers and disagreeing cells -- computed from the result store
  at build time. Pages that use it are re-read on every build, so the table follows
  the result files even in an incremental build.
"""

from __future__ import annotations

from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective
from sphinx.util.fileutil import copy_asset

from cldiv import __version__
from cldiv.book.scorecard import Row, scorecard, verdict_rules
from cldiv.runs.store import REPO_ROOT, ResultStore

MATHJAX_DISTRIBUTION = "sphinx-mathjax-offline"
MATHJAX_DIR = "sphinx-mathjax-offline/static/mathjax"  # inside that distribution
MATHJAX_ENTRY = "tex-chtml.js"
#: Files and folders of MathJax copied to ``_static/mathjax`` (relative to its root).
MATHJAX_PARTS = (
    MATHJAX_ENTRY,
    "input/tex/extensions",        # loaded on demand by \require and autoload
    "output/chtml/fonts/woff-v2",  # the CHTML web fonts
    "ui",                          # the contextual menu
    "a11y",                        # accessibility components the menu can switch on
    "sre/mathmaps/base.json",      # speech rules for the English explorer
    "sre/mathmaps/en.json",
    "sre/mathmaps/nemeth.json",
)
MATHJAX_NOTICE = """MathJax 3.2.2 (https://www.mathjax.org), copyright the MathJax Consortium,
licensed under the Apache License 2.0. Copied from the PyPI package sphinx-mathjax-offline
by cldiv.book.site when the book is built.
"""

#: Styles of the site, written to ``_static/cldiv-site.css``: code cells and their printed outputs
#: wrap long lines at the page's edge instead of running past it; the scorecard table.
SITE_CSS = """\
div.cell div.cell_input pre, div.cell div.cell_output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
table.cldiv-scorecard { font-size: 0.8rem; line-height: 1.35; }
table.cldiv-scorecard th, table.cldiv-scorecard td { padding: 0.4rem 0.45rem; vertical-align: top; }
table.cldiv-scorecard p { margin: 0 0 0.25rem 0; }
table.cldiv-scorecard .cldiv-claim-what { color: var(--pst-color-text-muted); }
table.cldiv-scorecard .sd-badge { white-space: nowrap; }
/* wide screens: the table also takes the right-hand margin (the page's contents list) */
@media (min-width: 1200px) {
  .bd-article div.cldiv-wide { width: calc(100% + var(--pst-sidebar-secondary, 17rem)); max-width: none;
    position: relative; z-index: 2; background-color: var(--pst-color-background); }
}
"""

VERDICT_COLOURS = {"reproduced": "success", "partly": "warning", "not reproduced": "danger",
                   "not converged": "secondary", "measured": "info", "not yet run": "muted"}


def mathjax_source() -> Path:
    """The MathJax folder of the installed ``sphinx-mathjax-offline`` distribution."""
    try:
        root = Path(metadata.distribution(MATHJAX_DISTRIBUTION).locate_file(MATHJAX_DIR))
    except metadata.PackageNotFoundError:
        root = None
    if root is None or not (root / MATHJAX_ENTRY).is_file():
        raise ExtensionError(
            f"cldiv.book.site serves MathJax from the '{MATHJAX_DISTRIBUTION}' package, which is not installed; "
            "run `pip install -r requirements.txt`"
        )
    return root


def copy_mathjax(target: Path) -> None:
    """Copy ``MATHJAX_PARTS`` into ``target`` (e.g. ``_build/html/_static/mathjax``)."""
    source = mathjax_source()
    for part in MATHJAX_PARTS:
        destination = target / part
        if (source / part).is_dir():
            copy_asset(str(source / part), str(destination))
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            copy_asset(str(source / part), str(destination.parent))
    (target / "NOTICE.txt").write_text(MATHJAX_NOTICE)


def _serve_mathjax_locally(app: Sphinx, config: Any) -> None:
    mathjax_source()  # fail early, before any page is read, if MathJax is missing
    config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"


def _is_thebe(script: Any) -> bool:
    name = str(getattr(script, "filename", None) or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return name.endswith("sphinx-thebe.js") or "thebe@" in name or "THEBE_JS_URL" in body


def _drop_unused_thebe(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Without thebe launch buttons, sphinx-thebe's scripts only name a CDN (and, added twice by
    sphinx-thebe 0.3.1, raise "THEBE_JS_URL has already been declared"): leave them out."""
    if app.config.html_theme_options.get("launch_buttons", {}).get("thebe"):
        return
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = [script for script in scripts if not _is_thebe(script)]  # in place: the builder's list


def _add_stylesheet(app: Sphinx) -> None:
    if app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        (static / "cldiv-site.css").write_text(SITE_CSS)
        app.add_css_file("cldiv-site.css")


def _install_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        copy_mathjax(Path(app.outdir) / "_static" / "mathjax")


# ----------------------------------------------------------------------------- the scorecard


def _paragraph(*children: nodes.Node) -> nodes.paragraph:
    return nodes.paragraph("", "", *children)


def _entry(*children: nodes.Node) -> nodes.entry:
    return nodes.entry("", *children)


class ScorecardDirective(SphinxDirective):
    """``{scorecard}``: the reproduction scorecard at a glance -- one row per claim: the claim, linked
    to the chapter section with its details, its verdict badge and the reason in a line.

    ``:details:`` renders the rest instead: per claim the budget, the published and our key numbers
    and the shape checks, how verdicts are decided, and every cell that disagrees (the landing page
    folds it under the table)."""

    has_content = False
    option_spec = {"details": lambda argument: True}

    def run(self) -> list[nodes.Node]:
        store = ResultStore.default()
        rows = scorecard(store)
        docs = getattr(self.env, "cldiv_scorecard_docs", set())
        docs.add(self.env.docname)
        self.env.cldiv_scorecard_docs = docs
        return self._details(rows) if "details" in self.options else self._glance(rows, store)

    def _glance(self, rows: list[Row], store: ResultStore) -> list[nodes.Node]:
        n_files = len(list(store.root.glob("*/*.json")))
        counts = Counter(row.verdict for row in rows)
        summary = ", ".join(f"{counts[v]} {v}" for v in VERDICT_COLOURS if counts[v])
        intro = _paragraph(nodes.Text(
            f"{len(rows)} claims: {summary}. Computed when this page was built, by cldiv {__version__}, from "
            f"{n_files} result file{'s' * (n_files != 1)} in the result store ({self._store_name(store)})."))
        table = self._table(("Claim", "Verdict", "Why"), (27, 11, 62),
                            [(self._claim(row), self._badge(row), _entry(_paragraph(nodes.Text(row.reason))))
                             for row in rows])
        return [intro, table]

    def _details(self, rows: list[Row]) -> list[nodes.Node]:
        table = self._table(("Claim", "Budget", "Paper (published)", "Ours", "Shape"), (12, 15, 22, 33, 18),
                            [(_entry(_paragraph(nodes.strong(text=row.claim))),
                              *(_entry(_paragraph(nodes.Text(value)))
                                for value in (row.budget, row.paper, row.ours, row.shape))) for row in rows])
        rules = _paragraph(nodes.strong(text="How the verdicts are decided. "), nodes.Text(verdict_rules()))
        disagreeing = [f"{row.claim}, {cell}" for row in rows for cell in row.disagreements]
        listing = _paragraph(nodes.strong(text="Every cell that disagrees. "),
                             nodes.Text("None." if not disagreeing else ""))
        cells = nodes.bullet_list()
        cells.extend(nodes.list_item("", _paragraph(nodes.Text(cell))) for cell in disagreeing)
        return [table, rules, listing] + ([cells] if disagreeing else [])

    @staticmethod
    def _table(header: tuple[str, ...], widths: tuple[int, ...], rows: list[tuple[nodes.entry, ...]]) -> nodes.Node:
        table = nodes.table(classes=["cldiv-scorecard", "colwidths-given"])
        group = nodes.tgroup(cols=len(header))
        table += group
        group.extend(nodes.colspec(colwidth=w) for w in widths)
        head = nodes.thead()
        head += nodes.row("", *(_entry(_paragraph(nodes.Text(h))) for h in header))
        body = nodes.tbody()
        body.extend(nodes.row("", *entries) for entries in rows)
        group += head
        group += body
        return nodes.container("", table, classes=["cldiv-wide"])

    @staticmethod
    def _store_name(store: ResultStore) -> str:
        try:
            return str(store.root.resolve().relative_to(REPO_ROOT)) + "/"
        except ValueError:
            return str(store.root)

    def _claim(self, row: Row) -> nodes.entry:
        """The claim's name, linked to the section of its chapter with the details, and what it states."""
        what = _paragraph(nodes.inline(text=row.what, classes=["cldiv-claim-what"]))
        if f"notebooks/{row.chapter}" not in self.env.found_docs:
            return _entry(_paragraph(nodes.strong(text=row.claim), nodes.Text(" ("),
                                     nodes.literal(text=row.chapter), nodes.Text(" not in the book yet)")), what)
        ref = pending_xref("", nodes.strong(text=row.claim), refdomain="std", reftype="ref",
                           reftarget=row.section, refexplicit=True, refwarn=True, refdoc=self.env.docname)
        return _entry(_paragraph(ref), what)

    @staticmethod
    def _badge(row: Row) -> nodes.entry:
        colour = VERDICT_COLOURS[row.verdict]
        return _entry(_paragraph(nodes.inline(
            text=row.verdict, classes=["sd-badge", f"sd-bg-{colour}", f"sd-bg-text-{colour}"])))


def _reread_scorecard_pages(app: Sphinx, env: Any, added: set, changed: set, removed: set) -> list[str]:
    """Re-read every page with a scorecard on every build: its input is the result store."""
    return sorted(getattr(env, "cldiv_scorecard_docs", set()) - removed)


def _forget_page(app: Sphinx, env: Any, docname: str) -> None:
    getattr(env, "cldiv_scorecard_docs", set()).discard(docname)


def _merge_pages(app: Sphinx, env: Any, docnames: set, other: Any) -> None:
    env.cldiv_scorecard_docs = getattr(env, "cldiv_scorecard_docs", set()) | getattr(
        other, "cldiv_scorecard_docs", set())


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _serve_mathjax_locally)
    app.connect("build-finished", _install_mathjax)
    app.connect("builder-inited", _add_stylesheet)
    app.connect("html-page-context", _drop_unused_thebe, priority=900)
    app.add_directive("scorecard", ScorecardDirective)
    app.connect("env-get-outdated", _reread_scorecard_pages)
    app.connect("env-purge-doc", _forget_page)
    app.connect("env-merge-info", _merge_pages)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
