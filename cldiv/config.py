"""Experiment configs: frozen dataclasses, validated on construction, hashed to name results.

Every experiment's config (``cldiv.synthetic.config.SyntheticConfig``,
``cldiv.images.simclr.SimCLRConfig``) is a frozen dataclass with a ``kind``; this module hashes
them, overrides their fields, and holds the validators their ``__post_init__`` calls, each
naming the parameter and the allowed values. Budgets (``cldiv.budgets``) are named sets of
overrides. A config never holds the device: where a run happened is part of its
provenance, not of what was asked for.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import field, fields, replace
from typing import Any, ClassVar, Iterable, Protocol

import numpy as np


class Config(Protocol):
    kind: ClassVar[str]


def added_field(default: Any) -> Any:
    """A field added after results were stored: left out of the hash while at its default,
    so that stored results of configs that do not use it stay valid."""
    return field(default=default, metadata={"added_later": True})


def hashed_fields(config: Config) -> dict[str, Any]:
    """The fields that identify a config: all of them, except added fields at their default."""
    return {
        f.name: getattr(config, f.name)
        for f in fields(config)
        if not (f.metadata.get("added_later") and getattr(config, f.name) == f.default)
    }


def config_hash(config: Config) -> str:
    """First 16 hex digits of the SHA-256 of the config's canonical JSON (kind included)."""
    payload = json.dumps({"kind": config.kind, **hashed_fields(config)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")


def check_positive(name: str, value: Any, *, integer: bool = False) -> None:
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value) or value <= 0:
        what = "a positive integer" if integer else "a finite number > 0"
        raise ValueError(f"{name} must be {what}; got {value!r}")


def check_range(name: str, value: Any, low: float, high: float, *, integer: bool = False) -> None:
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
        what = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {what} in [{low}, {high}]; got {value!r}")


def check_subset(name: str, values: Any, allowed: tuple) -> list:
    """``values`` as a non-empty list whose every item is one of ``allowed``."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(f"{name} must be a list of values from {', '.join(map(repr, allowed))}; got {values!r}")
    values = list(values)
    if not values:
        raise ValueError(f"{name} must not be empty; allowed values: {', '.join(map(repr, allowed))}")
    for value in values:
        check_choice(name, value, allowed)
    return values


def positive_number(name: str, value: Any) -> float:
    """``value`` as a float, checked finite and > 0 (numpy scalars accepted)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}") from None
    if isinstance(value, bool) or not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return number


def integer_at_least(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int, checked to be an integer >= minimum (numpy integers accepted)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def with_overrides(config, **overrides):
    """A copy of ``config`` with fields replaced; unknown field names are rejected."""
    known = {f.name for f in fields(config)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown}; allowed: {sorted(known)}")
    return replace(config, **overrides)
