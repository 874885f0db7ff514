"""The chapters' parameters, checked in one call before any work.

A chapter's ``parameters`` cell holds plain values that papermill may replace (``cldiv chapter``).
Its setup cell then calls ``check_parameters(name, globals())``, which checks every parameter
with the rule below and the relations between them, and raises a ``ValueError`` naming the
parameter and the values it allows. Parameters that build experiment configs (budgets,
processes, seeds, overrides) are checked again by the configs themselves.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from cldiv.budgets import BUDGET_NAMES, budget
from cldiv.config import check_choice, integer_at_least, positive_number

Rule = Callable[[str, Any], None]


def positive(name: str, value: Any) -> None:
    positive_number(name, value)


def integer(minimum: int) -> Rule:
    return lambda name, value: integer_at_least(name, value, minimum)


def choice(allowed: tuple) -> Rule:
    return lambda name, value: check_choice(name, value, allowed)


def optional(rule: Rule) -> Rule:
    """``None`` (the budget's default) or a value that passes ``rule``."""
    return lambda name, value: None if value is None else rule(name, value)


def list_of(rule: Rule) -> Rule:
    """A non-empty list whose every item passes ``rule``."""
    def check(name: str, value: Any) -> None:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or not value:
            raise ValueError(f"{name} must be a non-empty list; got {value!r}")
        for item in value:
            rule(name, item)
    return check


def non_negative(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{name} must be a number >= 0; got {value!r}")


def mapping(name: str, value: Any) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a dict of config fields; got {value!r}")


def anything(name: str, value: Any) -> None:
    """Checked where it is used (a path, an address)."""


def _ordered(low: str, high: str) -> tuple[str, Callable[[dict], bool]]:
    return f"{low} must be below {high}", lambda p: p[low] < p[high]


SEED, WORKERS, EXECUTOR = integer(0), integer(1), choice(("local", "ray"))
_GRID = {"lambda_min": positive, "lambda_max": positive, "n_lambdas": integer(2)}
_MONTE_CARLO = {"n_anchors": integer(1), "n_repeats": integer(2)}

#: chapter -> parameter -> rule.
RULES: dict[str, dict[str, Rule]] = {
    "setting": {"kappas": list_of(positive), "n_points": integer(1), "processes": list_of(anything),
                "patches_variant": choice(("paper", "code")), "d_fixed": integer(0), "seed": SEED},
    "vmf_asymptotics": {"kappa": positive, "tau": positive, "tau_min": positive, "tau_max": positive,
                        "n_taus": integer(2), "negatives": list_of(integer(1)), **_MONTE_CARLO,
                        "resolution": integer(4), "perturbation": non_negative, "seed": SEED},
    "identifiability": {"kappa": positive, "tau": positive, "tau_off": positive, "lambda_low": positive,
                        "lambda_high": positive, **_GRID, "epsilons": list_of(non_negative), "n_pairs": integer(1),
                        "n_samples": integer(2), "resolution": integer(4), "seed": SEED},
    "diversity_violation": {"kappa": positive, "tau": positive, **_GRID, "fd_step": positive, "twist": non_negative,
                            "spiral_turns": list_of(positive), **_MONTE_CARLO, "n_negatives": integer(1),
                            "n_points": integer(2), "seed": SEED},
    "support_correction": {"kappa": positive, "tau": positive, **_GRID, "twists": list_of(non_negative),
                           "negatives": list_of(integer(1)), **_MONTE_CARLO, "n_points": integer(2),
                           "resolution": integer(4), "seed": SEED},
    "synthetic_benchmark": {"budget": choice(BUDGET_NAMES), "processes": list_of(anything), "seeds": integer(1),
                            "overrides": mapping, "workers": WORKERS, "rerun_at": optional(choice(BUDGET_NAMES)),
                            "basin_seeds": integer(0), "scatter_process": anything},
    "errata": {"budget": choice(BUDGET_NAMES), "seeds": integer(1), "processes": list_of(anything), "workers": WORKERS},
    "constraint_ratio": {"budget": choice(BUDGET_NAMES), "processes": list_of(anything), "encoders": list_of(anything),
                         "rhos": optional(list_of(non_negative)), "seeds": optional(integer(1)), "overrides": mapping,
                         "group_sizes": list_of(integer(1)), "executor": EXECUTOR, "workers": WORKERS,
                         "ray_address": anything},
    "progressive_violation": {"budget": choice(BUDGET_NAMES), "processes": list_of(anything),
                              "d_fixed": optional(list_of(integer(0))), "seeds": optional(integer(1)),
                              "overrides": mapping, "executor": EXECUTOR, "workers": WORKERS, "ray_address": anything},
    "cifar10": {"dataset": anything, "budget": choice(BUDGET_NAMES), "encoders": list_of(anything),
                "regimes": list_of(anything), "epochs": optional(integer(1)), "n_train": optional(integer(1)),
                "seeds": optional(list_of(integer(0))), "data_root": anything, "download": choice((True, False)),
                "threads": integer(0)},
}

#: chapter -> (message, test) for relations between parameters.
RELATIONS: dict[str, list[tuple[str, Callable[[dict], bool]]]] = {
    "vmf_asymptotics": [_ordered("tau_min", "tau_max")],
    "identifiability": [_ordered("lambda_min", "lambda_max"), _ordered("lambda_low", "lambda_high")],
    "diversity_violation": [_ordered("lambda_min", "lambda_max")],
    "support_correction": [_ordered("lambda_min", "lambda_max")],
    "setting": [("d_fixed must be at most 3 (the latent sphere is S^2)", lambda p: p["d_fixed"] <= 3)],
    "synthetic_benchmark": [("scatter_process must be one of processes", lambda p: p["scatter_process"] in p["processes"])],
    "constraint_ratio": [("group_sizes must divide the batch size of the budget", lambda p: all(
        _sweep_batch("constraint_ratio", p) % size == 0 for size in p["group_sizes"]))],
}


def _sweep_batch(name: str, values: dict) -> int:
    """The batch size a sweep chapter runs at: its budget's, unless overridden."""
    return values["overrides"].get("batch_size", budget(name, values["budget"]).config["batch_size"])


def check_parameters(chapter: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Check chapter ``chapter``'s parameters, read from ``namespace`` (the notebook's globals());
    return them as a dict. Raises ValueError naming the first bad parameter and what it allows."""
    check_choice("chapter", chapter, tuple(RULES))
    values = {name: namespace[name] for name in RULES[chapter]}
    for name, rule in RULES[chapter].items():
        rule(name, values[name])
    for message, holds in RELATIONS.get(chapter, []):
        if not holds(values):
            raise ValueError(f"{message}; got " + ", ".join(f"{k}={v!r}" for k, v in values.items() if k in message))
    return values

