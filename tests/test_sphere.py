import math

import numpy as np
import pytest
import torch

from cldiv.sphere import (
    log_vmf_normaliser,
    mean_resultant_length,
    restricted_vmf,
    uniform_on_fibre,
    uniform_sphere,
    vmf,
)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_uniform_sphere_has_unit_norm_and_zero_mean():
    z = uniform_sphere(20000, 5, gen(), dtype=torch.float64)
    assert torch.allclose(z.norm(dim=1), torch.ones(20000, dtype=torch.float64))
    # each coordinate has mean 0 and variance 1/k
    assert z.mean(0).abs().max() < 0.02
    assert torch.allclose(z.var(0), torch.full((5,), 0.2, dtype=torch.float64), atol=0.01)


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("kappa", [1e-3, 0.5, 10 / 3, 50.0, 1e4])
def test_vmf_mean_resultant_length_matches_bessel_ratio(k, kappa):
    n = 20000
    mu = uniform_sphere(n, k, gen(1), dtype=torch.float64)
    z = vmf(mu, kappa, gen(2))
    assert torch.allclose(z.norm(dim=1), torch.ones(n, dtype=torch.float64), atol=1e-12)
    cos = (z * mu).sum(1)
    expected = mean_resultant_length(k, kappa)
    # Monte-Carlo standard error of the mean cosine, plus float slack
    stderr = cos.std().item() / math.sqrt(n)
    assert abs(cos.mean().item() - expected) < 5 * stderr + 1e-9


def test_vmf_tangent_direction_is_isotropic():
    mu = torch.tensor([[0.0, 0.0, 1.0]]).repeat(20000, 1)
    z = vmf(mu, 2.0, gen(3))
    assert z[:, :2].mean(0).abs().max() < 0.02


def test_mean_resultant_length_closed_form_for_k3():
    kappa = np.array([0.1, 1.0, 10 / 3, 100.0])
    np.testing.assert_allclose(mean_resultant_length(3, kappa), 1 / np.tanh(kappa) - 1 / kappa)


def test_log_vmf_normaliser_integrates_to_one_on_s2():
    # on S^2 the density depends on t = mu.z only: integral = 2 pi C int_{-1}^{1} e^{kappa t} dt
    for kappa in [0.3, 10 / 3, 40.0]:
        log_integral = (
            log_vmf_normaliser(3, kappa) + math.log(2 * math.pi) + kappa + math.log1p(-math.exp(-2 * kappa)) - math.log(kappa)
        )
        assert abs(log_integral) < 1e-10


def test_vmf_on_s0_keeps_sign_with_sigmoid_probability():
    mu = torch.ones(40000, 1)
    z = vmf(mu, 0.7, gen(4))
    p_keep = (z == 1).double().mean().item()
    assert abs(p_keep - torch.sigmoid(torch.tensor(1.4)).item()) < 0.01


def test_vmf_is_reproducible_from_the_generator():
    mu = uniform_sphere(100, 3, gen(5))
    assert torch.equal(vmf(mu, 3.0, gen(6)), vmf(mu, 3.0, gen(6)))
    assert not torch.equal(vmf(mu, 3.0, gen(6)), vmf(mu, 3.0, gen(7)))


@pytest.mark.parametrize("k, d_fixed", [(3, 1), (3, 2), (10, 4), (10, 9)])
def test_restricted_positives_keep_u_exactly_and_stay_on_sphere(k, d_fixed):
    z = uniform_sphere(3000, k, gen(8), dtype=torch.float64)
    zt = restricted_vmf(z, d_fixed, 10 / 3, gen(9))
    assert torch.equal(zt[:, :d_fixed], z[:, :d_fixed])
    assert torch.allclose(zt.norm(dim=1), torch.ones(3000, dtype=torch.float64), atol=1e-12)
    assert not torch.allclose(zt, z)


def test_restricted_positive_direction_has_vmf_concentration_on_subsphere():
    z = uniform_sphere(20000, 3, gen(10), dtype=torch.float64)
    zt = restricted_vmf(z, 1, 2.0, gen(11))
    v, vt = z[:, 1:], zt[:, 1:]
    cos = (v * vt).sum(1) / (v.norm(dim=1) * vt.norm(dim=1))
    assert abs(cos.mean().item() - mean_resultant_length(2, 2.0)) < 0.01


def test_restricted_vmf_with_all_coordinates_fixed_is_identity_and_zero_fixed_is_vmf():
    z = uniform_sphere(50, 4, gen(12))
    assert torch.equal(restricted_vmf(z, 4, 1.0, gen(13)), z)
    assert torch.allclose(restricted_vmf(z, 0, 1.0, gen(13)), vmf(z, 1.0, gen(13)), atol=1e-6)


def test_uniform_on_fibre_shares_u_and_is_uniform_on_the_subsphere():
    z = uniform_sphere(200, 3, gen(14), dtype=torch.float64)
    neg = uniform_on_fibre(z, 1, 500, gen(15))
    assert neg.shape == (200, 500, 3)
    assert torch.equal(neg[:, :, 0], z[:, None, 0].expand(200, 500))
    assert torch.allclose(neg.norm(dim=2), torch.ones(200, 500, dtype=torch.float64), atol=1e-12)
    # v-directions uniform on the circle: mean direction ~ 0
    directions = neg[:, :, 1:] / neg[:, :, 1:].norm(dim=2, keepdim=True)
    assert directions.mean((0, 1)).abs().max() < 0.01


@pytest.mark.parametrize("kappa", [0, -1.0, float("nan"), float("inf")])
def test_bad_kappa_is_rejected_with_its_name(kappa):
    with pytest.raises(ValueError, match="kappa must be"):
        vmf(torch.ones(2, 3) / math.sqrt(3), kappa)


def test_bad_d_fixed_is_rejected_with_allowed_range():
    with pytest.raises(ValueError, match=r"d_fixed must be an integer in 0\.\.3"):
        restricted_vmf(uniform_sphere(5, 3, gen()), 4, 1.0)


def test_vmf_accepts_one_concentration_per_row():
    mu = torch.tensor([[0.0, 0.0, 1.0]], dtype=torch.float64).repeat(40000, 1)
    kappa = torch.tensor([0.5, 20.0], dtype=torch.float64).repeat(20000)
    cos = (vmf(mu, kappa, gen(16)) * mu).sum(1)
    assert abs(cos[0::2].mean().item() - mean_resultant_length(3, 0.5)) < 0.01
    assert abs(cos[1::2].mean().item() - mean_resultant_length(3, 20.0)) < 0.01


def test_restricted_vmf_exact_density_concentrates_by_kappa_r_squared():
    # anchors with |u| = 0.8, r = 0.6: the stated density exp(kappa z.z~) on K(z) is a vMF
    # on the unit sub-circle with concentration kappa r^2
    n, kappa = 20000, 5.0
    theta = torch.rand(n, generator=gen(17), dtype=torch.float64) * 2 * math.pi
    z = torch.stack([torch.full((n,), 0.8, dtype=torch.float64), 0.6 * theta.cos(), 0.6 * theta.sin()], 1)
    zt = restricted_vmf(z, 1, kappa, gen(18), exact_density=True)
    cos = (z[:, 1:] * zt[:, 1:]).sum(1) / 0.36
    assert abs(cos.mean().item() - mean_resultant_length(2, kappa * 0.36)) < 0.01


def test_vmf_on_the_circle_stays_on_it_for_a_mean_direction_unit_only_to_float32():
    """A float32-normalised mu is unit only to ~1e-7; without renormalising it in float64 the
    tangent projection is not orthogonal to mu and S^1 samples land up to 9e-2 off the circle."""
    g = torch.Generator().manual_seed(0)
    mu = torch.nn.functional.normalize(torch.randn(200_000, 2, generator=g), dim=1)
    assert (vmf(mu, 1 / 0.3, g).norm(dim=1) - 1).abs().max() < 1e-6


def test_restricted_positives_on_s2_keep_the_radius_of_v_to_float_precision():
    g = torch.Generator().manual_seed(1)
    z = uniform_sphere(200_000, 3, g)
    positive = restricted_vmf(z, 1, 1 / 0.3, g)
    assert (positive[:, 1:].norm(dim=1) - z[:, 1:].norm(dim=1)).abs().max() < 1e-6


def test_with_one_free_coordinate_the_three_sign_rules_keep_it_as_computed():
    """d_fixed = k - 1 on S^9: the vMF on S^0 keeps the sign with sigmoid(2 kappa) = 0.9987, the
    stated density with E sigmoid(2 kappa v^2) (0.64 at kappa = 1/0.3), the authors' code with 1/2."""
    from cldiv.sphere import free_sign_keep_probability

    kappa, k, n = 1 / 0.3, 10, 200_000
    g = torch.Generator().manual_seed(2)
    z = uniform_sphere(n, k, g)
    rules = {"paper": {}, "density": {"exact_density": True}, "code": {"fair_sign": True}}
    for rule, options in rules.items():
        positive = restricted_vmf(z, k - 1, kappa, g, **options)
        assert torch.equal(positive[:, :-1], z[:, :-1]) and torch.allclose(positive[:, -1].abs(), z[:, -1].abs())
        kept = (positive[:, -1] == z[:, -1]).double().mean().item()
        assert kept == pytest.approx(free_sign_keep_probability(kappa, k, rule), abs=4 / math.sqrt(n)), rule
    assert free_sign_keep_probability(kappa, k, "paper") == pytest.approx(0.99873, abs=1e-5)
    with pytest.raises(ValueError, match="rule must be one of 'paper', 'density', 'code'"):
        free_sign_keep_probability(kappa, k, "coin")
