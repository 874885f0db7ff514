import math

import numpy as np
import pytest

from cldiv.theory.quadrature import circle_rule, gauss_legendre, polar_rule, sphere_rule, tangent_frame


def test_gauss_legendre_integrates_polynomials_of_degree_2n_minus_1_exactly():
    x, w = gauss_legendre(5, 0.0, 2.0)
    assert w @ x**9 == pytest.approx(2.0**10 / 10, rel=1e-13)
    assert w @ x**10 != pytest.approx(2.0**11 / 11, rel=1e-8)


def test_circle_rule_integrates_trigonometric_polynomials_exactly():
    t, w = circle_rule(8)
    assert w.sum() == pytest.approx(2 * math.pi)
    assert w @ np.cos(3 * t) ** 2 == pytest.approx(math.pi, rel=1e-13)
    assert abs(w @ np.sin(7 * t)) < 1e-13


def test_sphere_rule_weights_sum_to_sphere_area_and_integrate_harmonics_exactly():
    points, weights = sphere_rule(6)
    assert points.shape == (72, 3) and weights.shape == (72,)
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 1.0, atol=1e-14)
    assert weights.sum() == pytest.approx(4 * math.pi, rel=1e-14)
    x, y, z = points.T
    # int x^2 y^4 z^4 dsigma (degree 10 <= 2n - 1) = 2 G(3/2) G(5/2)^2 / G(13/2), G = Gamma
    exact = 2 * math.gamma(1.5) * math.gamma(2.5) ** 2 / math.gamma(6.5)
    assert weights @ (x**2 * y**4 * z**4) == pytest.approx(exact, rel=1e-12)


def test_tangent_frame_is_orthonormal_including_at_the_coordinate_axes():
    poles = np.vstack([np.eye(3), -np.eye(3), np.full((1, 3), 3**-0.5)])
    e1, e2 = tangent_frame(poles)
    for a, b in [(e1, e1), (e2, e2)]:
        np.testing.assert_allclose((a * b).sum(1), 1.0, atol=1e-14)
    for a, b in [(e1, e2), (e1, poles), (e2, poles)]:
        np.testing.assert_allclose((a * b).sum(1), 0.0, atol=1e-14)


def test_polar_rule_integrates_a_vmf_density_centred_on_each_pole_to_one():
    poles = np.array([[0.0, 0.0, 1.0], [0.6, 0.0, 0.8], [-1.0, 0.0, 0.0]])
    nodes, w, weights = polar_rule(poles, 16)
    np.testing.assert_allclose(np.linalg.norm(nodes, axis=2), 1.0, atol=1e-14)
    np.testing.assert_allclose((nodes * poles[:, None, :]).sum(2), np.broadcast_to(w, nodes.shape[:2]), atol=1e-14)
    kappa = 5.0
    density = kappa / (4 * math.pi * math.sinh(kappa)) * np.exp(kappa * w)
    assert weights @ density == pytest.approx(1.0, rel=1e-13)


@pytest.mark.parametrize("n", [0, -3, 2.5, True])
def test_quadrature_rules_reject_bad_node_counts(n):
    with pytest.raises(ValueError, match="number of quadrature nodes"):
        sphere_rule(n)


def test_gauss_legendre_rejects_an_empty_interval():
    with pytest.raises(ValueError, match="a < b"):
        gauss_legendre(4, 1.0, 1.0)
