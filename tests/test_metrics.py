"""Tests for cldiv.metrics (paper Appendix D)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from cldiv import metrics
from cldiv.metrics import affine_r2, angle_preservation_error, mean_correlation_coefficient


def uniform_sphere(n: int, k: int, seed: int) -> np.ndarray:
    """(n, k) uniform points on S^{k-1}: a normalised seeded standard normal."""
    x = np.random.default_rng(seed).standard_normal((n, k))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def random_orthogonal(k: int, seed: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((k, k)))
    return q * np.sign(np.diag(r))


def spiral(z: np.ndarray, turns: float = 3.0) -> np.ndarray:
    """Rotate (z1, z2) by the angle turns * pi * z3, keep z3 (norm-preserving, non-linear)."""
    angle = turns * np.pi * z[:, 2]
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([c * z[:, 0] - s * z[:, 1], s * z[:, 0] + c * z[:, 1], z[:, 2]], axis=1)


def ape_double_loop(z: np.ndarray, z_hat: np.ndarray, convention: str) -> float:
    n = len(z)
    total = 0.0
    for i in range(n):
        for j in range(n):
            if convention == "paper" and i == j:
                continue
            total += abs(float(z[i] @ z[j]) - float(z_hat[i] @ z_hat[j]))
    return total / (n * (n - 1)) if convention == "paper" else total / (2 * n * n)


# ---- orthogonal recovery: every metric at its ideal value ---------------------------------


def test_affine_r2_is_one_for_orthogonal_map_in_sample_and_held_out():
    z_train, z_test = uniform_sphere(500, 3, seed=0), uniform_sphere(300, 3, seed=1)
    a = random_orthogonal(3, seed=2)
    assert affine_r2(z_train @ a.T, z_train) == pytest.approx(1.0, abs=1e-9)
    held_out = affine_r2(z_train @ a.T, z_train, test_features=z_test @ a.T, test_latents=z_test)
    assert held_out == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("convention", ["paper", "code"])
def test_angle_preservation_error_is_zero_for_orthogonal_map(convention):
    z = uniform_sphere(400, 3, seed=3)
    z_hat = z @ random_orthogonal(3, seed=4).T
    assert angle_preservation_error(z, z_hat, convention=convention) == pytest.approx(0.0, abs=1e-12)


def test_mcc_is_one_for_signed_permutation():
    z = uniform_sphere(500, 3, seed=5)
    z_hat = np.stack([-z[:, 2], z[:, 0], -z[:, 1]], axis=1)
    assert mean_correlation_coefficient(z_hat, z) == pytest.approx(1.0, abs=1e-12)


def test_mcc_below_one_for_rotation_although_r2_is_one():
    z = uniform_sphere(4000, 3, seed=6)
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])  # 45 degrees about z_3
    z_hat = z @ rotation.T
    assert affine_r2(z_hat, z) == pytest.approx(1.0, abs=1e-9)
    # population value: matched |correlations| are cos 45, cos 45 and 1
    assert mean_correlation_coefficient(z_hat, z) == pytest.approx((2 * c + 1) / 3, abs=0.03)


def test_mcc_matches_min_d_k_pairs_when_features_have_extra_dimensions():
    z = uniform_sphere(500, 3, seed=8)
    noise = np.random.default_rng(9).standard_normal((500, 2))
    z_hat = np.concatenate([noise[:, :1], z[:, [1, 2, 0]], noise[:, 1:]], axis=1)  # d = 5, k = 3
    assert mean_correlation_coefficient(z_hat, z) == pytest.approx(1.0, abs=1e-12)
    assert mean_correlation_coefficient(z, z_hat) == pytest.approx(1.0, abs=1e-12)


# ---- non-linear distortion is detected ---------------------------------------------------


def test_affine_r2_well_below_one_for_spiral_distortion():
    z = uniform_sphere(2000, 3, seed=10)
    z_hat = spiral(z)
    assert affine_r2(z_hat, z) < 0.9
    assert angle_preservation_error(z, z_hat) > 0.1


# ---- conventions and reference implementations ------------------------------------------


def test_ape_code_convention_equals_paper_times_n_minus_one_over_two_n():
    z = uniform_sphere(301, 3, seed=11)
    z_hat = spiral(z)
    n = len(z)
    paper = angle_preservation_error(z, z_hat, convention="paper")
    code = angle_preservation_error(z, z_hat, convention="code")
    assert code == pytest.approx(paper * (n - 1) / (2 * n), rel=1e-12)


@pytest.mark.parametrize("convention", ["paper", "code"])
def test_ape_matches_direct_double_loop(convention):
    z = uniform_sphere(7, 3, seed=12)
    z_hat = uniform_sphere(7, 4, seed=13)  # d may differ from k
    expected = ape_double_loop(z, z_hat, convention)
    assert angle_preservation_error(z, z_hat, convention=convention) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("convention", ["paper", "code"])
def test_ape_row_chunking_does_not_change_result(monkeypatch, convention):
    z = uniform_sphere(10, 3, seed=14)
    z_hat = spiral(z)
    expected = ape_double_loop(z, z_hat, convention)
    monkeypatch.setattr(metrics, "_APE_CHUNK_ROWS", 3)
    assert angle_preservation_error(z, z_hat, convention=convention) == pytest.approx(expected, abs=1e-12)


def test_mcc_matches_explicit_pearson_and_brute_force_matching():
    rng = np.random.default_rng(15)
    z = uniform_sphere(200, 3, seed=16)
    z_hat = z @ rng.standard_normal((3, 3)) + 0.3 * rng.standard_normal((200, 3))
    corr = np.abs(np.corrcoef(z_hat.T, z.T)[:3, 3:])
    best = max(np.mean([corr[i, p[i]] for i in range(3)]) for p in itertools.permutations(range(3)))
    assert mean_correlation_coefficient(z_hat, z) == pytest.approx(best, abs=1e-12)


def test_in_sample_r2_at_least_held_out_r2_when_overfitting():
    rng = np.random.default_rng(17)
    z_train, z_test = uniform_sphere(20, 3, seed=18), uniform_sphere(200, 3, seed=19)
    features_train = rng.standard_normal((20, 30))  # more features than points: pure noise
    features_test = rng.standard_normal((200, 30))
    in_sample = affine_r2(features_train, z_train)
    held_out = affine_r2(features_train, z_train, test_features=features_test, test_latents=z_test)
    assert in_sample == pytest.approx(1.0, abs=1e-9)
    assert held_out < 0.5
    assert in_sample >= held_out


def test_metrics_accept_torch_tensors():
    z = uniform_sphere(100, 3, seed=20)
    z_hat = spiral(z)
    zt, zht = torch.from_numpy(z).float(), torch.from_numpy(z_hat).float()
    assert affine_r2(zht, zt) == pytest.approx(affine_r2(z_hat, z), abs=1e-5)
    assert mean_correlation_coefficient(zht, zt) == pytest.approx(mean_correlation_coefficient(z_hat, z), abs=1e-5)
    assert angle_preservation_error(zt, zht) == pytest.approx(angle_preservation_error(z, z_hat), abs=1e-5)


# ---- input validation --------------------------------------------------------------------


def test_unknown_ape_convention_raises_naming_allowed_values():
    z = uniform_sphere(10, 3, seed=21)
    with pytest.raises(ValueError, match=r"convention.*'paper'.*'code'"):
        angle_preservation_error(z, z, convention="authors")


def test_mismatched_number_of_points_raises():
    z, z_hat = uniform_sphere(10, 3, seed=22), uniform_sphere(11, 3, seed=23)
    with pytest.raises(ValueError, match="same number of rows"):
        affine_r2(z_hat, z)
    with pytest.raises(ValueError, match="same number of rows"):
        mean_correlation_coefficient(z_hat, z)
    with pytest.raises(ValueError, match="same number of rows"):
        angle_preservation_error(z, z_hat)


def test_non_two_dimensional_input_raises_naming_parameter():
    z = uniform_sphere(10, 3, seed=24)
    with pytest.raises(ValueError, match="features must be a 2-D array"):
        affine_r2(z[:, 0], z)
    with pytest.raises(ValueError, match="latents must be a 2-D array"):
        mean_correlation_coefficient(z, z[None])
    with pytest.raises(ValueError, match="latents must be a 2-D array"):
        angle_preservation_error(z[:, 0], z)


def test_affine_r2_requires_both_test_arrays_or_neither():
    z = uniform_sphere(10, 3, seed=25)
    with pytest.raises(ValueError, match="test_features and test_latents"):
        affine_r2(z, z, test_features=z)
