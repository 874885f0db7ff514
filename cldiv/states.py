"""Saved training states, so that a longer run continues the longest shorter one instead of starting over.

A synthetic run (iterations) and a SimCLR run (epochs) are functions of their config: Adam at a constant
learning rate on batches drawn from the seed's random streams. So the first k steps of a run of n > k steps
are the run of k steps with every other field the same, and the run of n can start from that run's final
state (model, optimizer, random streams, curve so far): bitwise the uninterrupted run on the same kind of CPU
and thread count (``tests/test_states.py``). A doubling (``cldiv.book.doubling``) then costs the new steps only.

Off unless ``$CLDIV_STATES`` names a directory. A state is the file ``<lineage>_<length>.pt`` there, where the
lineage is the hash of the config without its length (the field named ``length``: "iterations", "epochs"); it
is written atomically. A run of n continues from the state with the most steps k < n that is a multiple of
``every`` (a synthetic run's ``eval_every``, so that the shorter run's curve is the start of the longer one's).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from cldiv.config import Config, config_hash

STATES_VARIABLE = "CLDIV_STATES"


def state_directory() -> Path | None:
    """The directory in ``$CLDIV_STATES``, or None (states off)."""
    directory = os.environ.get(STATES_VARIABLE)
    return Path(directory) if directory else None


def lineage(config: Config, length: str) -> str:
    """The hash shared by every config that differs from ``config`` at most in its field ``length``."""
    return config_hash(replace(config, **{length: 1}))


def save_state(config: Config, length: str, state: dict[str, Any]) -> None:
    """Keep the final training state of a run of ``config`` (no-op when states are off)."""
    directory = state_directory()
    if directory is None:
        return
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{lineage(config, length)}_{getattr(config, length)}.pt"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save({"config": asdict(config), **state}, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def latest_state(config: Config, length: str, every: int = 1) -> dict[str, Any] | None:
    """The saved state a run of ``config`` can continue from (module docstring), or None."""
    directory = state_directory()
    if directory is None:
        return None
    shorter = []
    for path in directory.glob(f"{lineage(config, length)}_*.pt"):
        k = int(path.stem.rsplit("_", 1)[1])
        if k < getattr(config, length) and k % every == 0:
            shorter.append((k, path))
    for k, path in sorted(shorter, reverse=True):
        try:
            state = torch.load(path, weights_only=True)
        except Exception as error:  # a state is a cache: a bad one is skipped, never fatal
            warnings.warn(f"ignoring unreadable training state {path}: {error}")
            continue
        if state["config"] == asdict(replace(config, **{length: k})):
            return state
    return None
