"""The chapters' parameter checks (cldiv/book/parameters.py)."""

import pytest

from cldiv.book import chapters
from cldiv.book.parameters import RULES, check_parameters


def test_every_chapter_has_a_rule_for_each_of_its_parameters_and_its_defaults_pass():
    assert sorted(RULES) == chapters.chapter_names()
    for name in chapters.chapter_names():
        defaults = chapters.chapter_parameters(name)
        assert sorted(RULES[name]) == sorted(defaults), name
        assert check_parameters(name, defaults) == defaults


@pytest.mark.parametrize("chapter, name, value, message", [
    ("vmf_asymptotics", "kappa", -1.0, "kappa must be a finite number > 0; got -1.0"),
    ("vmf_asymptotics", "negatives", [10, 0], "negatives must be an integer >= 1; got 0"),
    ("vmf_asymptotics", "tau_max", 0.01, "tau_min must be below tau_max"),
    ("setting", "patches_variant", "both", "patches_variant must be one of 'paper', 'code'; got 'both'"),
    ("synthetic_benchmark", "rerun_at", "huge", "rerun_at must be one of 'paper', 'cpu', 'smoke'; got 'huge'"),
    ("synthetic_benchmark", "scatter_process", "helix", "scatter_process must be one of processes"),
    ("constraint_ratio", "executor", "slurm", "executor must be one of 'local', 'ray'; got 'slurm'"),
    ("identifiability", "epsilons", "0.1", "epsilons must be a non-empty list; got '0.1'"),
])
def test_a_bad_parameter_is_named_with_what_it_allows(chapter, name, value, message):
    values = {**chapters.chapter_parameters(chapter), name: value}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        check_parameters(chapter, values)
