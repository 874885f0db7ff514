"""Saved training states, so that a longer run continues the longest shorter one instead of starting over.

A synthetic run (iterations) and a SimCLR run (epochs) are functions of their config: Adam at a constant
learning rate on batches drawn from the seed's random streams. So the first k steps of a run of n > k steps
are the run of k steps with every other field the same, and the run of n can start from that run's final
state (model, optimizer, random streams, curve so far): bitwise the uninterrupted run on the same kind of CPU
and thread count (``tests/test_states.py``). A doubling (``cldiv.runs.doubling``) then costs the new steps only.

Off unless ``$CLDIV_STATES`` names a directory. A state is the file ``<lineage>_<length>.pt`` there, where the
lineage is the hash of the config without its length (the field named ``length``: "iterations", "epochs"); it
is written atomically. A run of n continues from the state with the most steps k < n that is a multiple of
``every`` (a synthetic run's ``eval_every``, so that the shorter run's curve is the start of the longer one's).

A run in progress also keeps an interim state every ``CHECKPOINT_SECONDS`` (``Checkpoints``): the state after k
steps is the final state of the run of k, so a run cut off (a session's end) is continued by the next run of
its config from there. Interim states are removed once a run that passed them has finished.

A state names the machines that ran its steps (``machines``: device model and torch threads, in order), and a
continued run's ``timing.continued_from`` repeats them: a run whose steps ran on more than one kind of machine
is a valid run of its config, but not bitwise what one uninterrupted run on either gives.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from cldiv.runs.store import cpu_name
from cldiv.config import Config, config_hash

STATES_VARIABLE = "CLDIV_STATES"

#: How often (seconds) a run in progress keeps an interim state.
CHECKPOINT_SECONDS = 600.0


def state_directory() -> Path | None:
    """The directory in ``$CLDIV_STATES``, or None (states off)."""
    directory = os.environ.get(STATES_VARIABLE)
    return Path(directory) if directory else None


def lineage(config: Config, length: str) -> str:
    """The hash shared by every config that differs from ``config`` at most in its field ``length``."""
    return config_hash(replace(config, **{length: 1}))


def state_path(config: Config, length: str, directory: Path) -> Path:
    """The file of the final state of a run of ``config`` in ``directory``."""
    return directory / f"{lineage(config, length)}_{getattr(config, length)}.pt"


def save_state(config: Config, length: str, state: dict[str, Any], *, interim: bool = False) -> Path | None:
    """Keep the final training state of a run of ``config``; returns its file (None when states are off).
    ``interim``: the state of a longer run in progress (``Checkpoints``)."""
    directory = state_directory()
    if directory is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    path = state_path(config, length, directory)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save({"config": asdict(config), "interim": interim, **state}, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def machine(device: str | torch.device) -> str:
    """What a bitwise continuation depends on: the model of ``device`` (CPU or GPU) and the torch threads."""
    name = torch.cuda.get_device_name(device) if str(device).startswith("cuda") else cpu_name()
    return f"{name}, {torch.get_num_threads()} threads"


def machines_so_far(saved: dict[str, Any] | None, device: str | torch.device) -> list[str]:
    """The machines of a run that continues ``saved`` (None: starts afresh) on ``device``, in order."""
    earlier = list(saved.get("machines", [])) if saved else []
    here = machine(device)
    return earlier if earlier and earlier[-1] == here else [*earlier, here]


def continued_from(saved: dict[str, Any], length: str) -> dict[str, Any]:
    """``timing.continued_from`` of a run that continued ``saved``: the shorter run's ``length``, its
    training seconds and, where the state records them, the machines that ran it."""
    out = {length: saved["config"][length], "train_seconds": round(saved["train_seconds"], 3)}
    if "machines" in saved:
        out["machines"] = list(saved["machines"])
    return out


def latest_state(config: Config, length: str, every: int = 1) -> dict[str, Any] | None:
    """The saved state a run of ``config`` can continue from (module docstring), or None; its
    ``path`` entry is the file it came from."""
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
            return {**state, "path": path}
    return None


class Checkpoints:
    """The interim states of one run of ``config`` (module docstring): ``offer(k, state)`` after step k keeps
    ``state()`` when ``CHECKPOINT_SECONDS`` have passed since the last one and k < the run's length is a multiple of ``every``,
    replacing this run's previous interim state (never another run's final state); ``close(saved)``, at the
    end of the run, removes this run's interim state and the one it continued from (``saved``), if interim."""

    def __init__(self, config: Config, length: str, every: int = 1):
        self.config, self.length, self.every = config, length, every
        self.due = time.monotonic() + CHECKPOINT_SECONDS
        self.written: Path | None = None

    def offer(self, k: int, state: Callable[[], dict[str, Any]]) -> None:
        directory = state_directory()
        if directory is None or k % self.every or k >= getattr(self.config, self.length) or time.monotonic() < self.due:
            return
        shorter = replace(self.config, **{self.length: k})
        if not state_path(shorter, self.length, directory).exists():
            path = save_state(shorter, self.length, state(), interim=True)
            self._remove(self.written)
            self.written = path
        self.due = time.monotonic() + CHECKPOINT_SECONDS

    def close(self, saved: dict[str, Any] | None) -> None:
        self._remove(self.written)
        if saved is not None and saved.get("interim"):  # states saved before interim ones existed lack the flag
            self._remove(saved["path"])

    @staticmethod
    def _remove(path: Path | None) -> None:
        if path is not None:
            path.unlink(missing_ok=True)
