"""Saved training states, so that a longer run continues the longest shorter one instead of starting over.

A synthetic run is a function of its config: Adam at a constant learning rate on batches drawn from the seed's
data stream, evaluated on fixed latents. So the first k iterations of a run of n > k iterations are the run of
k iterations with every other field the same, and the run of n can start from that run's final state (model,
optimizer, data stream, curve so far): bitwise the uninterrupted run on the same kind of CPU and thread count
(``tests/test_states.py``). A doubling (``cldiv.book.doubling``) then costs the new iterations only.

Off unless ``$CLDIV_STATES`` names a directory. A state is the file ``<lineage>_<iterations>.pt`` there, where
the lineage is the hash of the config without its iteration count; it is written atomically. A run of n
continues from the state with the most iterations k < n that is a multiple of ``eval_every`` (so the shorter
run's curve is the start of the longer one's).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from cldiv.config import config_hash
from cldiv.synthetic.config import SyntheticConfig

STATES_VARIABLE = "CLDIV_STATES"


def state_directory() -> Path | None:
    """The directory in ``$CLDIV_STATES``, or None (states off)."""
    directory = os.environ.get(STATES_VARIABLE)
    return Path(directory) if directory else None


def lineage(config: SyntheticConfig) -> str:
    """The hash shared by every config that differs from ``config`` at most in its iteration count."""
    return config_hash(replace(config, iterations=1))


def save_state(config: SyntheticConfig, state: dict[str, Any]) -> None:
    """Keep the final training state of a run of ``config`` (no-op when states are off)."""
    directory = state_directory()
    if directory is None:
        return
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{lineage(config)}_{config.iterations}.pt"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save({"config": asdict(config), **state}, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def latest_state(config: SyntheticConfig) -> dict[str, Any] | None:
    """The saved state a run of ``config`` can continue from (module docstring), or None."""
    directory = state_directory()
    if directory is None:
        return None
    shorter = []
    for path in directory.glob(f"{lineage(config)}_*.pt"):
        k = int(path.stem.rsplit("_", 1)[1])
        if k < config.iterations and k % config.eval_every == 0:
            shorter.append((k, path))
    for k, path in sorted(shorter, reverse=True):
        try:
            state = torch.load(path, weights_only=True)
        except Exception as error:  # a state is a cache: a bad one is skipped, never fatal
            warnings.warn(f"ignoring unreadable training state {path}: {error}")
            continue
        if state["config"] == asdict(replace(config, iterations=k)):
            return state
    return None
