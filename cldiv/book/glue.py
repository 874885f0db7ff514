"""Numbers and tables into a chapter's sentences: myst-nb ``glue`` under the names its text cites.

A chapter writes its sentences in Markdown and cites a value as ``{glue:text}`name:.2f``` and a table as
a ``{glue:md}`` directive with ``:format: myst``; the cell that computes them calls these functions, which
store the values in the notebook without showing them where they are computed.
"""

from __future__ import annotations

from typing import Mapping

from IPython.display import Markdown
from myst_nb import glue


def glue_values(values: Mapping[str, float | int], prefix: str = "") -> None:
    """Glue every value of ``values`` (numbers: the text formats them) as ``prefix + name``."""
    for name, value in values.items():
        glue(prefix + name, value, display=False)


def glue_table(name: str, markdown: str) -> None:
    """Glue a Markdown table (MyST: maths and marks are rendered) as ``name``."""
    glue(name, Markdown(markdown), display=False)
