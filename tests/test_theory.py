import math

import numpy as np
import pytest
import torch

from cldiv import theory as asy
from cldiv.metrics import affine_r2
from cldiv.sphere import log_vmf_normaliser, uniform_sphere, vmf

KAPPA, TAU = 1 / 0.3, 0.3  # the paper's benchmark: kappa tau = 1
IDENTITY = asy.h_lambda(1.0)
SETTINGS = [("vmf", "sphere"), ("restricted", "sphere"), ("restricted", "fibre")]


def objective(h, **kwargs):
    return asy.asymptotic_objective(h, KAPPA, TAU, **kwargs)


# ------------------------------------------------------------------ Theorem 3.3 (chapter 1)


def test_identity_cross_entropy_has_the_closed_form_of_theorem_3_3_on_s2():
    # -A_3(kappa)/tau - log C_3(1/tau), with C_3(b) = b / (4 pi sinh b) and A_3 = coth - 1/kappa
    b = 1 / TAU
    expected = -(1 / math.tanh(KAPPA) - 1 / KAPPA) / TAU - math.log(b / (4 * math.pi * math.sinh(b)))
    assert asy.identity_cross_entropy(KAPPA, TAU) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("method", ["axial", "sphere"])
def test_both_quadrature_routes_reproduce_the_closed_form_for_the_identity(method):
    result = objective(IDENTITY, method=method)
    assert result.error < 1e-10
    assert result.value == pytest.approx(asy.identity_cross_entropy(KAPPA, TAU), abs=1e-10)
    assert result.alignment == pytest.approx(1 / math.tanh(KAPPA) - 1 / KAPPA, abs=1e-12)
    assert result.infonce_limit == pytest.approx(result.value - math.log(4 * math.pi))


def test_identity_cross_entropy_is_minimised_at_tau_equal_one_over_kappa():
    for kappa in (2.0, KAPPA, 10.0):
        taus = np.linspace(0.05, 1.0, 96)
        best = taus[np.argmin(asy.identity_cross_entropy(kappa, taus))]
        assert abs(best - 1 / kappa) <= taus[1] - taus[0]
        assert asy.identity_cross_entropy(kappa, 1 / kappa) == pytest.approx(asy.vmf_entropy(kappa), abs=1e-12)


def test_monte_carlo_infonce_converges_to_closed_form_cross_entropy():
    limit = asy.identity_cross_entropy(KAPPA, TAU) - math.log(4 * math.pi)
    large = asy.monte_carlo_infonce(IDENTITY, KAPPA, TAU, 10_000, n_anchors=400, n_repeats=10, seed=1)
    assert abs(large.mean - limit) < 3 * large.standard_error
    assert large.standard_error < 0.03
    small = asy.monte_carlo_infonce(IDENTITY, KAPPA, TAU, 10, n_anchors=400, n_repeats=10, seed=1)
    assert small.mean - limit > 3 * small.standard_error  # at M = 10 the finite-M bias is visible


def test_monte_carlo_matches_quadrature_for_a_non_trivial_map():
    h = asy.compose(asy.SmoothPerturbation(0.3, seed=2), asy.random_orthogonal(0))
    limit = objective(h).infonce_limit
    mc = asy.monte_carlo_infonce(h, KAPPA, TAU, 5_000, n_anchors=400, n_repeats=10, seed=3)
    assert abs(mc.mean - limit) < 3 * mc.standard_error


@pytest.mark.parametrize("h", [asy.h_lambda(0.7), asy.h_lambda(1.4), asy.FibreRotation(2.5)], ids=repr)
@pytest.mark.parametrize("setting", SETTINGS, ids="-".join)
def test_axial_and_sphere_quadrature_agree_within_the_reported_error(h, setting):
    conditional, negatives = setting
    a = objective(h, conditional=conditional, negatives=negatives, method="axial")
    s = objective(h, conditional=conditional, negatives=negatives, method="sphere", resolution=16)
    assert a.error < 1e-10 and s.error < 1e-4
    assert abs(a.value - s.value) <= s.error + 1e-10


# ------------------------------------------------------------------ Theorem 4.4 (chapter 2)


@pytest.mark.parametrize("h", [asy.random_orthogonal(0), asy.random_orthogonal(1, reflection=True)], ids=["rotation", "reflection"])
def test_orthogonal_maps_attain_the_vmf_entropy_when_kappa_tau_is_one(h):
    result = objective(h)
    assert abs(result.value - asy.vmf_entropy(KAPPA)) < 1e-10


def test_non_isometric_maps_cost_more_than_every_orthogonal_map():
    entropy = asy.vmf_entropy(KAPPA)
    reflection = asy.random_orthogonal(1, reflection=True)
    for h in [
        asy.h_lambda(0.8),
        asy.h_lambda(1.25),
        asy.SmoothPerturbation(0.1, seed=0),
        asy.compose(asy.h_lambda(0.8), reflection),
        asy.compose(reflection, asy.SmoothPerturbation(0.1, seed=1)),
    ]:
        result = objective(h)
        assert result.value - entropy > 100 * result.error + 1e-4


def test_orthogonal_maps_are_not_optimal_when_kappa_tau_is_not_one():
    for tau in (0.15, 0.6):
        gap = asy.identity_cross_entropy(KAPPA, tau) - asy.vmf_entropy(KAPPA)
        assert gap > 0.05


def test_perturbation_cost_grows_quadratically_with_its_size():
    gaps = [objective(asy.SmoothPerturbation(eps, seed=0)).value - asy.vmf_entropy(KAPPA) for eps in (0.05, 0.1)]
    assert gaps[1] / gaps[0] == pytest.approx(4.0, rel=0.1)


def test_model_conditional_equals_the_vmf_only_for_isometries_at_kappa_tau_one():
    gen = torch.Generator().manual_seed(0)
    z = uniform_sphere(200, 3, gen, dtype=torch.float64)
    z_tilde = vmf(z, KAPPA, gen)
    z, z_tilde = z.numpy(), z_tilde.numpy()
    log_p = log_vmf_normaliser(3, KAPPA) + KAPPA * (z * z_tilde).sum(1)
    rotation = asy.random_orthogonal(4)
    assert np.abs(asy.log_model_conditional(rotation, z, z_tilde, TAU) - log_p).max() < 1e-10
    off = asy.log_model_conditional(rotation, z, z_tilde, 0.5) - log_p  # kappa tau != 1: affine in z.z~
    slope = np.polyfit((z * z_tilde).sum(1), off, 1)[0]
    assert slope == pytest.approx(1 / 0.5 - KAPPA, abs=1e-8)
    perturbed = asy.log_model_conditional(asy.SmoothPerturbation(0.2), z, z_tilde, TAU) - log_p
    assert np.abs(perturbed).max() > 0.05


def test_procrustes_recovers_an_orthogonal_map_with_vanishing_residual():
    gen = torch.Generator().manual_seed(1)
    z = uniform_sphere(500, 3, gen, dtype=torch.float64).numpy()
    h = asy.random_orthogonal(7, reflection=True)
    a, residual = asy.recover_orthogonal(z, h(z))
    assert residual < 1e-12
    np.testing.assert_allclose(a, h.matrix, atol=1e-12)
    _, distorted = asy.recover_orthogonal(z, asy.h_lambda(0.7)(z))
    assert distorted > 0.05


def test_map_equal_to_an_isometry_off_a_null_set_preserves_almost_all_distances():
    gen = torch.Generator().manual_seed(2)
    z, z_other = (uniform_sphere(100_000, 3, gen, dtype=torch.float64).numpy() for _ in range(2))
    rotation = asy.random_orthogonal(5)
    h = asy.IsometryOffNullSet(rotation.matrix)
    assert asy.inner_product_distortion(h, z, z_other).max() < 1e-12
    a, residual = asy.recover_orthogonal(z, h(z))
    assert residual < 1e-12 and np.allclose(a, rotation.matrix, atol=1e-12)
    equator = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert not np.allclose(h(equator), rotation(equator))  # it differs from A on the null set


def test_hemisphere_reflection_breaks_the_distances_of_pairs_straddling_the_equator():
    gen = torch.Generator().manual_seed(3)
    z, z_other = (uniform_sphere(20_000, 3, gen, dtype=torch.float64).numpy() for _ in range(2))
    broken = asy.inner_product_distortion(asy.HemisphereReflection(), z, z_other) > 1e-12
    assert broken.mean() == pytest.approx(0.5, abs=0.02)
    assert asy.recover_orthogonal(z, asy.HemisphereReflection()(z))[1] > 0.1


# ------------------------------------------------------------------ Theorem 4.5 (chapter 3)


@pytest.mark.parametrize("exact_density", [True, False])
def test_under_violation_a_non_orthogonal_witness_beats_the_identity(exact_density):
    kwargs = dict(conditional="restricted", negatives="sphere", exact_density=exact_density)
    lam, best = asy.minimise_witness(KAPPA, TAU, exact_density=exact_density)
    identity = objective(IDENTITY, **kwargs)
    assert lam < 1.0
    assert identity.value - best.value > 100 * (identity.error + best.error) + 1e-3
    # the general product rule on S^2 x S^2 confirms the minimiser's loss independently
    check = objective(asy.h_lambda(lam), method="sphere", **kwargs)
    assert abs(check.value - best.value) <= check.error + 1e-9
    # and L(h_lambda) < L(I) just below lambda = 1
    assert objective(asy.h_lambda(0.99), **kwargs).value < identity.value


def test_witness_alignment_falls_and_uniformity_is_stationary_at_lambda_one():
    step = 1e-4
    kwargs = dict(conditional="restricted", negatives="sphere")
    up, down = objective(asy.h_lambda(1 + step), **kwargs), objective(asy.h_lambda(1 - step), **kwargs)
    alignment_slope = (up.alignment - down.alignment) / (2 * step)
    uniformity_slope = (up.uniformity - down.uniformity) / (2 * step)
    assert alignment_slope == pytest.approx(asy.witness_alignment_slope(KAPPA), rel=1e-6)
    assert alignment_slope < -0.05
    assert abs(uniformity_slope) < 1e-6


def test_fibre_collapsing_spirals_approach_the_alignment_uniformity_bound_under_violation():
    bound = asy.alignment_uniformity_bound(TAU)
    assert bound == pytest.approx(-1 / TAU + math.log(4 * math.pi * math.sinh(1 / TAU) * TAU), rel=1e-12)
    # every map's objective is above the bound, under diversity by a wide margin
    assert asy.vmf_entropy(KAPPA) - bound > 0.9
    lam, best = asy.minimise_witness(KAPPA, TAU, exact_density=False)
    spiral = asy.FibreCollapse(8)
    mc = asy.monte_carlo_infonce(
        spiral, KAPPA, TAU, 2000, conditional="restricted", exact_density=False, n_anchors=300, n_repeats=3, seed=6
    )
    gap = mc.mean - (bound - math.log(4 * math.pi))
    assert 0 < gap < 0.01  # finite-M bias only
    assert mc.mean < best.infonce_limit - 0.3  # far below the witness h_lambda*
    collapsed = objective(spiral, conditional="restricted", method="sphere", resolution=12)
    assert collapsed.alignment == pytest.approx(1.0, abs=1e-12)


# ------------------------------------------------------------------ Theorems 4.6, A.4, A.5 (chapter 4)


def test_support_corrected_objective_is_minimal_at_lambda_one_and_equals_the_fibre_entropy():
    kwargs = dict(conditional="restricted", negatives="fibre")
    lambdas = np.linspace(0.5, 1.5, 21)
    values = [objective(asy.h_lambda(lam), **kwargs).value for lam in lambdas]
    assert lambdas[int(np.argmin(values))] == pytest.approx(1.0)
    lam, best = asy.minimise_witness(KAPPA, TAU, negatives="fibre")
    assert lam == pytest.approx(1.0, abs=1e-5)
    assert best.value == pytest.approx(asy.restricted_entropy(KAPPA), abs=1e-12)
    rotation = objective(asy.random_orthogonal(3), method="sphere", **kwargs)
    assert abs(rotation.value - best.value) <= rotation.error + 1e-9


def test_support_corrected_monte_carlo_converges_to_the_limit_of_theorem_a4():
    for h in (IDENTITY, asy.h_lambda(0.7)):
        limit = objective(h, conditional="restricted", negatives="fibre").infonce_limit
        mc = asy.monte_carlo_infonce(
            h, KAPPA, TAU, 1_000, conditional="restricted", negatives="fibre", n_anchors=100, n_repeats=8, seed=4
        )
        assert abs(mc.mean - limit) < 3 * mc.standard_error


def test_fibre_rotation_keeps_the_corrected_loss_but_is_not_linear():
    kwargs = dict(conditional="restricted", negatives="fibre", method="sphere")
    h = asy.random_orthogonal(6)
    twisted = asy.compose(h, asy.FibreRotation(3.0))
    plain, bent = objective(h, **kwargs), objective(twisted, **kwargs)
    assert abs(plain.value - bent.value) <= plain.error + bent.error + 1e-12
    gen = torch.Generator().manual_seed(5)
    z_fit, z_test = (uniform_sphere(2000, 3, gen, dtype=torch.float64).numpy() for _ in range(2))
    r2 = affine_r2(twisted(z_fit), z_fit, test_features=twisted(z_test), test_latents=z_test)
    assert r2 < 0.9
    assert affine_r2(h(z_fit), z_fit, test_features=h(z_test), test_latents=z_test) == pytest.approx(1.0, abs=1e-12)
    # under diversity the same twist is penalised: the non-uniqueness comes from the restricted support
    assert objective(twisted).value - asy.vmf_entropy(KAPPA) > 0.1


def test_under_the_sampling_rule_the_corrected_loss_prefers_larger_lambda():
    kwargs = dict(conditional="restricted", negatives="fibre", exact_density=False)
    values = [objective(asy.h_lambda(lam), **kwargs).value for lam in (0.8, 1.0, 1.5, 3.0)]
    assert np.all(np.diff(values) < 0)


# ------------------------------------------------------------------ input validation


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(kappa=0.0), "kappa must be a finite number > 0"),
        (dict(tau=-1.0), "tau must be a finite number > 0"),
        (dict(conditional="gaussian"), "conditional must be one of 'vmf', 'restricted'"),
        (dict(negatives="batch"), "negatives must be one of 'sphere', 'fibre'"),
        (dict(negatives="fibre"), "needs conditional='restricted'"),
        (dict(method="lebedev"), "method must be one of 'auto', 'axial', 'sphere'"),
        (dict(resolution=2), "resolution must be an integer >= 4"),
    ],
)
def test_bad_inputs_raise_value_errors_naming_the_parameter(kwargs, match):
    args = dict(kappa=KAPPA, tau=TAU) | kwargs
    with pytest.raises(ValueError, match=match):
        asy.asymptotic_objective(IDENTITY, args.pop("kappa"), args.pop("tau"), **args)


def test_axial_method_rejects_a_map_that_is_not_fibre_wise():
    with pytest.raises(ValueError, match="method='axial' needs an AxialMap"):
        asy.asymptotic_objective(asy.random_orthogonal(0), KAPPA, TAU, method="axial")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: asy.h_lambda(0.0), "lam"),
        (lambda: asy.identity_cross_entropy(KAPPA, [0.3, 0.0]), "tau must be finite and > 0"),
        (lambda: asy.monte_carlo_infonce(IDENTITY, KAPPA, TAU, 0), "n_negatives must be an integer >= 1"),
        (lambda: asy.minimise_witness(KAPPA, TAU, bounds=(1.0, 0.5)), "bounds must satisfy"),
        (lambda: asy.SmoothPerturbation(-0.1), "epsilon must be"),
        (lambda: asy.FibreCollapse(float("nan")), "turns must be"),
        (lambda: asy.alignment_uniformity_bound(0.0), "tau must be"),
        (lambda: asy.Orthogonal(np.ones((3, 3))), "orthogonal matrix"),
    ],
)
def test_constructors_and_helpers_reject_bad_values(call, match):
    with pytest.raises(ValueError, match=match):
        call()
