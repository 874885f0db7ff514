"""The 10-D progressive-violation sweep's numbers and tables (cldiv/synthetic/progressive.py)."""

from __future__ import annotations

import math

import numpy as np

from cldiv.synthetic.progressive import (converged_counts_markdown, coordinate_recovery, coordinate_recovery_markdown,
                                         recovery_numbers)
from cldiv.synthetic.train import scatter_latents

K = 10


def record(process: str, d_fixed: int, scatter_h: np.ndarray, r2: float = 0.5, law: str = "paper", seed: int = 0) -> dict:
    curve = {"iteration": [50, 75, 100], "loss": [5.0, 5.0, 5.0], "r2": [r2, r2, r2]}
    return {"config": {"process": process, "positive_law": law, "d_fixed": d_fixed, "seed": seed, "iterations": 100},
            "metrics": {"r2": r2, "mcc": 0.5, "ape": 0.1}, "curves": curve, "scatter_h": scatter_h.tolist()}


def test_an_encoder_that_keeps_only_the_fixed_coordinates_recovers_them_and_loses_the_free_ones():
    z = scatter_latents(K).numpy()
    rng = np.random.default_rng(0)
    keeps_u = np.concatenate([z[:, :3], rng.normal(size=(len(z), K - 3))], axis=1)  # u kept, v replaced by noise
    rotation = np.linalg.qr(rng.normal(size=(K, K)))[0]
    split = coordinate_recovery([record("linear", 3, keeps_u), record("linear", 0, z @ rotation)], K)
    (fixed, free), = split["linear", 3]
    assert math.isclose(fixed, 1.0, abs_tol=1e-9) and free < 0.1
    (fixed, free), = split["linear", 0]  # nothing fixed; an orthogonal map recovers every coordinate
    assert math.isnan(fixed) and math.isclose(free, 1.0, abs_tol=1e-9)
    table = coordinate_recovery_markdown(split)
    assert "| linear | 0 | – | 1.00 ± 0.00 |" in table and "| linear | 3 | 1.00 ± 0.00 |" in table


def test_recovery_numbers_follow_the_runs_and_are_nan_where_a_point_was_not_run():
    z = scatter_latents(K).numpy()
    records = [record("linear", 0, z, r2=0.97), record("monomial", 0, z, r2=0.99),
               record("linear", 1, z, r2=0.05), record("monomial", 1, z, r2=0.10),
               record("linear", 9, z, r2=0.08), record("linear", 9, z, r2=0.30, law="code"), record("linear", 10, z, r2=0.06)]
    split = {("linear", 1): [(0.5, 0.02)], ("monomial", 1): [(0.9, 0.04)], ("linear", 4): [(0.6, 0.05)],
             ("linear", 6): [(0.7, 0.03)]}
    numbers = recovery_numbers(records, split, K)
    assert (numbers["r2_0_low"], numbers["r2_0_high"], numbers["r2_1_low"], numbers["r2_1_high"]) == (0.97, 0.99, 0.05, 0.10)
    assert math.isclose(numbers["drop"], 0.87) and numbers["free_high"] == 0.05  # d_fixed 1 to k - 2
    assert (numbers["fixed_1_low"], numbers["fixed_1_high"]) == (0.5, 0.9)
    assert (numbers["fixed_middle_low"], numbers["fixed_middle_high"]) == (0.6, 0.7)
    assert (numbers["r2_last_paper"], numbers["r2_last_code"], numbers["r2_k"]) == (0.08, 0.30, 0.06)
    assert math.isnan(recovery_numbers(records[:2], {}, K)["r2_1_low"])


def test_converged_counts_count_the_runs_whose_curves_settled_per_length_and_point():
    z = scatter_latents(K).numpy()
    settled, moving = record("linear", 0, z), record("linear", 0, z, seed=1)
    moving["curves"]["r2"] = [0.1, 0.3, 0.5]  # still rising over the last quarter
    table = converged_counts_markdown({100: [settled, moving], 200: [settled, settled]})
    assert table.splitlines()[2:] == ["| 100 | 1/2 |", "| 200 | 2/2 |"]
