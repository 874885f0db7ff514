"""The one budget schema (cldiv/budgets.py)."""

import pytest

from cldiv.budgets import (
    BUDGET_NAMES,
    BUDGETS,
    EXPERIMENTS,
    GROUPS,
    PROGRESSIVE_CPU_LENGTHS,
    budget,
    overrides,
)
from cldiv.book.tables import budget_table
from cldiv.images import IMAGE_ENCODERS
from cldiv.images.simclr import SimCLRConfig
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.table1 import cell_config


def test_every_experiment_has_every_budget_and_its_fields_make_valid_configs():
    for experiment in EXPERIMENTS:
        assert tuple(BUDGETS[experiment]) == BUDGET_NAMES
        for name in BUDGET_NAMES:
            spec = budget(experiment, name)
            assert spec.seeds >= 1 and set(spec.groups) <= set(GROUPS[experiment])
            assert set(spec.axes) == set(budget(experiment, "paper").axes)
            for group in GROUPS[experiment] or (None,):
                fields = overrides(experiment, name, group)
                if experiment == "simclr":
                    SimCLRConfig(encoder=group, **fields)
                elif experiment == "synthetic":  # a group's fields with its column's loss (the adapted cells' groups)
                    config = cell_config(group, "identity", 0, name)
                    assert all(getattr(config, f) == v for f, v in fields.items())
                else:
                    SyntheticConfig(**fields)


def test_a_group_overrides_the_common_fields_and_bad_names_are_refused():
    assert overrides("synthetic", "cpu", "holds")["iterations"] == 2000
    assert overrides("synthetic", "cpu", "violated")["iterations"] == 1000
    assert overrides("simclr", "paper", "vit") == {"width": 384, "depth": 6}
    with pytest.raises(ValueError, match="experiment must be one of"):
        budget("table1", "cpu")
    with pytest.raises(ValueError, match="budget must be one of"):
        overrides("synthetic", "laptop")
    with pytest.raises(ValueError, match="group must be one of"):
        overrides("synthetic", "cpu", "inverse_holds")


def test_the_budget_table_shows_each_budget_with_the_config_default_where_a_budget_is_silent():
    table = budget_table("constraint_ratio", {"lr": (None, "lr"), "anchor_groups": (None, "anchor_groups"),
                                                "precision": (None, "precision")})
    lines = table.splitlines()
    assert lines[0] == "| | paper | cpu | smoke |"
    assert "| anchor_groups | 0 | 64 | 4 |" in lines
    assert "| precision | fp32 | fp32 | fp32 |" in lines
    assert "| rhos | 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1 | 0, 0.2, 0.5, 0.8, 1 | 0, 1 |" in lines
    assert lines[-1] == "| runs per cell | 5 | 3 | 2 |"


def test_the_progressive_cpu_lengths_are_sorted_and_hold_the_budget_s_own():
    run = overrides("progressive_violation", "cpu")
    assert (run["iterations"], run["eval_every"]) in PROGRESSIVE_CPU_LENGTHS
    assert list(PROGRESSIVE_CPU_LENGTHS) == sorted(set(PROGRESSIVE_CPU_LENGTHS))
    assert all(iterations % eval_every == 0 for iterations, eval_every in PROGRESSIVE_CPU_LENGTHS)


def test_the_image_budget_groups_are_the_image_encoders():
    assert GROUPS["simclr"] == IMAGE_ENCODERS


def test_a_cell_config_is_the_same_from_the_budget_name_or_the_budget_itself():
    spec = budget("synthetic", "paper")
    for column, process in (("holds", "spiral"), ("adapted", "identity"), ("violated", "linear")):
        assert cell_config(column, process, 1, "paper") == cell_config(column, process, 1, spec)
    assert spec.fields("adapted") == overrides("synthetic", "paper", "adapted")
    assert cell_config("holds", "spiral", 0, spec).precision == "fp32"  # one of the paper budget's fp32_cells
