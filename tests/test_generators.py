import math

import pytest
import torch

from cldiv.synthetic.generators import (
    GENERATORS,
    SYNTHETIC_PROCESSES,
    InjectiveLinear,
    InvertibleMLP,
    Linear,
    Monomial,
    Patches,
    Spiral,
    make_generator,
)


def sphere_points(n: int, k: int, seed: int = 0) -> torch.Tensor:
    """n points uniform on S^{k-1} (normalised seeded Gaussians), float32."""
    x = torch.randn(n, k, generator=torch.Generator().manual_seed(seed))
    return x / x.norm(dim=1, keepdim=True)


def latent_dim_for(name: str) -> int:
    return 10 if name in ("injective_linear", "monomial") else 3


ALL_CASES = [(name, variant) for name in GENERATORS for variant in ("paper", "code")]


@pytest.mark.parametrize(
    "name, variant",
    [("identity", "paper"), ("spiral", "paper"), ("patches", "paper"), ("patches", "code")],
)
def test_sphere_processes_are_norm_preserving_bijections(name, variant):
    g = make_generator(name, variant=variant)
    z = sphere_points(5000, 3)
    x = g(z)
    assert torch.allclose(x.norm(dim=1), torch.ones(5000), atol=1e-5)
    assert torch.allclose(g.inverse(x), z, atol=1e-5)
    if name != "identity":  # the map really moves points
        assert (x - z).norm(dim=1).mean() > 0.1


@pytest.mark.parametrize("n", [2.0, 3.0])
def test_spiral_rotates_first_plane_by_n_pi_z3_and_keeps_z3(n):
    z = sphere_points(2000, 3, seed=1)
    x = Spiral(n)(z)
    assert torch.equal(x[:, 2], z[:, 2])
    turned = torch.atan2(x[:, 1], x[:, 0]) - torch.atan2(z[:, 1], z[:, 0])
    expected = n * math.pi * z[:, 2]
    # compare angles modulo 2 pi through their unit vectors
    assert torch.allclose(torch.cos(turned), torch.cos(expected), atol=1e-4)
    assert torch.allclose(torch.sin(turned), torch.sin(expected), atol=1e-4)


def test_patches_band_angles_follow_paper_and_code_variants():
    pi = math.pi
    paper = Patches(variant="paper").band_angle(torch.tensor([-0.9, -0.3, 0.3, 0.9, 1.0]))
    assert torch.allclose(paper, torch.tensor([-pi / 4, -pi / 3, -pi / 2, -pi, -pi]))
    code = Patches(variant="code").band_angle(torch.tensor([0.1, -0.3, 0.6, -0.9, 0.25, 1.0]))
    expected = torch.tensor([pi / 4, pi / 3, pi / 2, pi, pi / 4, pi])
    assert torch.allclose(code, expected)


def test_patches_at_exactly_z3_zero_is_in_the_first_band_not_the_authors_bucket_minus_one():
    """The authors' bucketize puts |z_3| = 0 in bucket -1 (angle pi / 5, no band's angle); we use band 0."""
    angle = Patches(variant="code").band_angle(torch.tensor([0.0, -0.0]))
    assert torch.allclose(angle, torch.full((2,), math.pi / 4))
    z = torch.tensor([[1.0, 0.0, 0.0]])
    g = Patches(variant="code")
    assert torch.allclose(g.inverse(g(z)), z, atol=1e-6)


@pytest.mark.parametrize("variant", ["paper", "code"])
def test_patches_is_discontinuous_across_a_band_edge(variant):
    g = Patches(variant=variant)
    phi = torch.linspace(0, 2 * math.pi, 64)
    edge, eps = 0.5, 1e-4  # 0.5 is a band edge of both variants for K = 4

    def circle(z3):
        r = math.sqrt(1 - z3**2)
        return torch.stack((r * torch.cos(phi), r * torch.sin(phi), torch.full_like(phi, z3)), 1)

    below, above = circle(edge - eps), circle(edge + eps)
    assert (below - above).norm(dim=1).max() < 1e-3
    assert (g(below) - g(above)).norm(dim=1).max() > 0.5


@pytest.mark.parametrize("variant", ["paper", "code"])
def test_linear_has_full_column_rank_and_inverts(variant):
    g = Linear(seed=3, variant=variant)
    assert g.weight.shape == (7, 3) and (g.latent_dim, g.output_dim) == (3, 7)
    assert torch.linalg.svdvals(g.weight).min() > 1e-3
    z = sphere_points(5000, 3)
    assert torch.allclose(g.inverse(g(z)), z, atol=1e-5)


def test_linear_paper_variant_is_linear_and_code_variant_is_affine_with_diagonal_top():
    z = sphere_points(100, 3)
    paper = Linear(variant="paper")
    assert torch.allclose(paper(-z), -paper(z))
    code = Linear(variant="code")
    top = code.weight[:3]
    assert torch.equal(top, torch.diag(torch.diagonal(top)))
    assert ((torch.diagonal(top) > 0) & (torch.diagonal(top) < 1)).all()
    assert code.bias.abs().max() > 0 and code.bias.abs().max() <= 1 / math.sqrt(3)
    assert torch.allclose(code(torch.zeros(1, 3)), code.bias)


def test_invertible_mlp_layers_meet_condition_threshold_with_unit_columns():
    g = InvertibleMLP(seed=0)
    assert g.weights.shape == (3, 3, 3)
    assert 1.0 < g.cond_threshold < 10.0
    assert (torch.linalg.cond(g.weights.double()) <= g.cond_threshold).all()
    assert torch.allclose(g.weights.norm(dim=1), torch.ones(3, 3), atol=1e-6)


def test_invertible_mlp_inverts_and_is_nonlinear_without_bias():
    g = InvertibleMLP(seed=0)
    z = sphere_points(5000, 3)
    x = g(z)
    assert torch.allclose(g.inverse(x), z, atol=1e-5)
    assert torch.allclose(g(2 * z), 2 * x, atol=1e-5)  # no bias: positively homogeneous
    assert not torch.allclose(g(-z), -x, atol=1e-2)  # LeakyReLU: not odd, so not linear


def test_invertible_mlp_weights_are_fixed_by_seed():
    a, b, c = InvertibleMLP(seed=5), InvertibleMLP(seed=5), InvertibleMLP(seed=6)
    assert torch.equal(a.weights, b.weights) and a.cond_threshold == b.cond_threshold
    assert not torch.equal(a.weights, c.weights)


@pytest.mark.parametrize(
    "name, variant",
    [("injective_linear", "paper"), ("injective_linear", "code"), ("monomial", "paper")],
)
def test_ten_dimensional_maps_send_s9_injectively_to_r70(name, variant):
    g = make_generator(name, latent_dim=10, variant=variant)
    z = sphere_points(3000, 10)
    x = g(z)
    assert x.shape == (3000, 70) and g.output_dim == 70
    assert torch.allclose(g.inverse(x), z, atol=1e-5)


def test_monomial_entries_are_powers_one_to_seven_of_each_coordinate():
    z = sphere_points(500, 10)
    x = Monomial(10)(z).reshape(500, 10, 7)
    for p in range(1, 8):
        assert torch.allclose(x[..., p - 1], z**p, atol=1e-7)


def test_injective_linear_rejects_output_smaller_than_latent():
    with pytest.raises(ValueError, match="latent_dim <= output_dim"):
        InjectiveLinear(5, 4)


@pytest.mark.parametrize("name, variant", ALL_CASES)
def test_generators_are_frozen_seeded_float32_and_leave_global_rng_alone(name, variant):
    k = latent_dim_for(name)
    rng_state = torch.get_rng_state()
    g1 = make_generator(name, seed=11, latent_dim=k, variant=variant)
    g2 = make_generator(name, seed=11, latent_dim=k, variant=variant)
    assert torch.equal(torch.get_rng_state(), rng_state)
    assert all(not p.requires_grad for p in g1.parameters())
    assert all(not b.requires_grad and b.dtype == torch.float32 for b in g1.buffers())
    z = sphere_points(256, k)
    x = g1(z)
    assert x.dtype == torch.float32 and x.shape == (256, g1.output_dim)
    assert g1.latent_dim == k
    assert torch.equal(x, g2(z))


@pytest.mark.parametrize("name", ["linear", "injective_linear", "invertible_mlp"])
def test_random_generators_change_with_seed(name):
    k = latent_dim_for(name)
    z = sphere_points(64, k)
    a = make_generator(name, seed=0, latent_dim=k)(z)
    b = make_generator(name, seed=1, latent_dim=k)(z)
    assert not torch.allclose(a, b)


@pytest.mark.parametrize("name", GENERATORS)
def test_forward_and_inverse_reject_wrong_last_dimension(name):
    g = make_generator(name, latent_dim=latent_dim_for(name))
    with pytest.raises(ValueError, match="last dimension"):
        g(torch.zeros(4, g.latent_dim + 1))
    with pytest.raises(ValueError, match="last dimension"):
        g.inverse(torch.zeros(4, g.output_dim + 1))


def test_identity_accepts_any_latent_dim():
    g = make_generator("identity", latent_dim=10)
    z = sphere_points(10, 10)
    assert torch.equal(g(z), z) and g.output_dim == 10


def test_factory_names_cover_table_1_and_the_10d_maps():
    assert SYNTHETIC_PROCESSES == ("identity", "linear", "spiral", "patches", "invertible_mlp")
    assert set(GENERATORS) == set(SYNTHETIC_PROCESSES) | {"injective_linear", "monomial"}


def test_factory_rejects_unknown_process_naming_allowed_values():
    with pytest.raises(ValueError, match=r"process must be one of 'identity', 'linear'.*got 'foo'"):
        make_generator("foo")


@pytest.mark.parametrize("name", ["linear", "patches", "spiral"])
def test_factory_rejects_unknown_variant_naming_allowed_values(name):
    with pytest.raises(ValueError, match=r"variant must be one of 'paper', 'code'; got 'x'"):
        make_generator(name, variant="x")


@pytest.mark.parametrize("name", ["linear", "spiral", "patches", "invertible_mlp"])
def test_factory_rejects_latent_dim_other_than_3_for_s2_processes(name):
    with pytest.raises(ValueError, match="latent_dim must be 3"):
        make_generator(name, latent_dim=5)
