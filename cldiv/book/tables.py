"""Markdown tables of the experiments' configuration that the chapters show: their budgets side by side."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from cldiv.budgets import BUDGET_NAMES, BUDGETS, budget, overrides
from cldiv.images.simclr import SimCLRConfig
from cldiv.synthetic.config import SyntheticConfig


def budget_table(experiment: str, rows: Mapping[str, tuple[str | None, str]]) -> str:
    """A markdown table of an experiment's budgets side by side: one row per entry of ``rows``
    (title -> (group, field)), then one per grid axis and the runs per cell. A field a budget
    leaves unset shows the default of the experiment's config."""
    config_class = SimCLRConfig if experiment == "simclr" else SyntheticConfig
    defaults = {f.name: f.default for f in fields(config_class)}

    def show(value: Any) -> str:
        if isinstance(value, (tuple, list)):
            return ", ".join(show(v) for v in value)
        return f"{value:g}" if isinstance(value, float) else str(value)

    lines = ["| | " + " | ".join(BUDGET_NAMES) + " |", "|---" * (len(BUDGET_NAMES) + 1) + "|"]
    for title, (group, name) in rows.items():
        values = [overrides(experiment, b, group).get(name, defaults.get(name, "")) for b in BUDGET_NAMES]
        lines.append(f"| {title} | " + " | ".join(show(v) for v in values) + " |")
    for axis in BUDGETS[experiment]["paper"].axes:
        axis_values = (show(budget(experiment, b).axes[axis]) for b in BUDGET_NAMES)
        lines.append(f"| {axis} | " + " | ".join(axis_values) + " |")
    lines.append("| runs per cell | " + " | ".join(str(budget(experiment, b).seeds) for b in BUDGET_NAMES) + " |")
    return "\n".join(lines)
