"""The result store: one JSON file per experiment config, named by the config's hash.

A record holds the config, what the run measured, and its provenance (cldiv version, git
commit, wall time, device, seed). Files are written atomically (temporary file, fsync,
``os.replace``), so an interrupted run never leaves a partial result behind; a file that
does not parse or does not match its config is reported and rerun, never loaded.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import tempfile
import time
import warnings
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import torch

from cldiv import __version__
from cldiv.config import Config, config_hash, hashed_fields

REPO_ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def git_commit() -> str:
    """The commit of the cldiv checkout, with '+dirty' if cldiv/ differs from it in any way.

    Read once per process, before its first run (``ResultStore.get_or_run``,
    ``cldiv.runs.executor.run_sweep``), so that a result records the code the process started
    with, not a checkout that moved on while it trained. ``$CLDIV_GIT_COMMIT``, if set, is taken
    instead: for a copy of the checkout without its ``.git`` (a lent GPU machine gets the working
    tree only), set to the commit it was copied from.
    """
    if os.environ.get("CLDIV_GIT_COMMIT"):
        return os.environ["CLDIV_GIT_COMMIT"]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "cldiv"],  # untracked modules count too
            cwd=REPO_ROOT, capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def cpu_name() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def bf16_instructions() -> list[str]:
    """The CPU's bf16 matrix instructions (/proc/cpuinfo flags amx_bf16, avx512_bf16), on which the
    speed of bf16 mixed precision depends most."""
    try:
        with open("/proc/cpuinfo") as info:
            flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        flags = []
    return sorted({"amx_bf16", "avx512_bf16"} & set(flags))


def provenance(wall_time_s: float, device: str, threads: int | None = None) -> dict[str, Any]:
    """Where and how a result was produced; ``threads``: the torch threads of the process that ran
    it (default: this process's)."""
    return {
        "cldiv_version": __version__,
        "git_commit": git_commit(),
        "wall_time_s": round(wall_time_s, 3),
        "device": device,
        "device_name": torch.cuda.get_device_name() if device.startswith("cuda") else cpu_name(),
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "threads": torch.get_num_threads() if threads is None else threads,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),  # "highest": no TF32
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_json_atomic(path: Path, data: dict) -> None:
    """Write JSON so that ``path`` holds either the old content or the complete new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes files private; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _jsonable(value: Any) -> Any:
    """A value as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


class ResultStore:
    """Results under ``root/<kind>/<config hash>.json``.

    A ``read_only`` store only loads: asking it for a result it does not hold raises instead of
    running the config. The golden notebooks run on such a store (``tests/golden/results``), so
    that what they show never depends on the CPU that executes them.
    """

    def __init__(self, root: str | Path, *, read_only: bool = False):
        self.root = Path(root)
        self.read_only = read_only

    @classmethod
    def default(cls) -> "ResultStore":
        """The store in ``$CLDIV_RESULTS`` if set, else the repository's ``results/``;
        read-only if ``$CLDIV_RESULTS_READ_ONLY`` is 1."""
        return cls(os.environ.get("CLDIV_RESULTS") or REPO_ROOT / "results",
                   read_only=os.environ.get("CLDIV_RESULTS_READ_ONLY") == "1")

    def check_writable(self, config: Config) -> None:
        """Raise if ``config`` would have to be run into a read-only store."""
        if self.read_only:
            raise LookupError(
                f"no result for {config} in the read-only store {self.root} (file {self.path(config).name}); "
                "if the config changed on purpose, regenerate the golden notebooks and their store with "
                "`cldiv golden`")

    def path(self, config: Config) -> Path:
        return self.root / config.kind / f"{config_hash(config)}.json"

    def load(self, config: Config) -> dict | None:
        """The stored record for ``config``, or None if absent or invalid (with a warning)."""
        path = self.path(config)
        if not path.exists():
            return None
        try:
            record = json.loads(path.read_text())
            valid = (
                record["config_hash"] == config_hash(config)
                and all(record["config"][k] == _jsonable(v) for k, v in hashed_fields(config).items())
                and "metrics" in record
                and "provenance" in record
            )
        except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError):
            valid = False
        if not valid:
            warnings.warn(f"ignoring corrupt or mismatched result file {path}; it will be recomputed")
            return None
        return record

    def save(self, config: Config, result: dict, *, wall_time_s: float, device: str,
             threads: int | None = None) -> dict:
        """Store ``result`` (a dict with at least 'metrics') for ``config``; returns the record.
        ``threads``: the torch threads of the worker that ran it, if not this process. A result that
        continues a shorter run (``timing.continued_from``, ``cldiv.runs.states``) adds that
        run's training seconds to ``wall_time_s``: the record's wall time is what produced it."""
        if "metrics" not in result:
            raise ValueError("result must contain a 'metrics' entry")
        self.check_writable(config)
        wall_time_s += result.get("timing", {}).get("continued_from", {}).get("train_seconds", 0.0)
        record = _jsonable({
            "kind": config.kind,
            "config_hash": config_hash(config),
            "config": asdict(config),
            **result,
            "provenance": provenance(wall_time_s, device, threads),
        })  # returned exactly as a later load() will read it
        write_json_atomic(self.path(config), record)
        return record

    def get_or_run(
        self, config: Config, run: Callable[[Config], tuple[dict, str]], *, recompute: bool = False
    ) -> dict:
        """Load the result of ``config``; run it (and store it) only if absent or ``recompute``.

        ``run(config)`` returns ``(result, device)``; its wall time is measured here.
        """
        if not recompute:
            record = self.load(config)
            if record is not None:
                return record
        self.check_writable(config)
        git_commit()  # the code this run starts with
        start = time.perf_counter()
        result, device = run(config)
        return self.save(config, result, wall_time_s=time.perf_counter() - start, device=device)

    def records(self, kind: str) -> list[dict]:
        """Every valid-looking record of one kind (for summaries and the scorecard)."""
        out = []
        for path in sorted((self.root / kind).glob("*.json")):
            try:
                out.append(json.loads(path.read_text()))
            except json.JSONDecodeError:
                warnings.warn(f"skipping unreadable result file {path}")
        return out
