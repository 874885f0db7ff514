"""Encoders of the synthetic benchmark (cldiv/encoders.py)."""

import math

import pytest
import torch


from cldiv.synthetic.encoders import (
    LinearInverseEncoder,
    MLPEncoder,
    PatchesInverseEncoder,
    Recovery,
    SpiralInverseEncoder,
    make_encoder,
)
from cldiv.synthetic.generators import make_generator
from cldiv.sphere import uniform_sphere


from torch import nn

class _ThirdCoordinate(nn.Module):
    def forward(self, x):
        return x[..., 2:]


def _reference_mlp(encoder: MLPEncoder) -> nn.Sequential:
    """The same weights as a plain nn.Sequential (Linear-BN-ReLU with zero Linear bias)."""
    layers = []
    for linear, bn in zip(encoder.linears, encoder.norms):
        ref = nn.Linear(linear.in_features, linear.out_features).double()
        ref.weight.data.copy_(linear.weight.data)
        ref.bias.data.zero_()
        ref_bn = nn.BatchNorm1d(bn.num_features).double()
        ref_bn.weight.data.copy_(bn.weight.data)
        ref_bn.bias.data.copy_(bn.bias.data)
        layers += [ref, ref_bn, nn.ReLU()]
    head = nn.Linear(encoder.head.in_features, encoder.head.out_features).double()
    head.load_state_dict(encoder.head.state_dict())
    return nn.Sequential(*layers, head)


def test_mlp_encoder_segments_equal_separate_batchnorm_calls_forward_backward_and_running_stats():
    torch.manual_seed(0)
    encoder = MLPEncoder(3, 3, hidden=(8, 16, 8)).double()
    with torch.no_grad():  # non-trivial affine BatchNorm parameters
        for bn in encoder.norms:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
    reference = _reference_mlp(encoder)
    x = torch.randn(3 * 10, 3, dtype=torch.float64)

    out = encoder(x, segments=3)
    ref = torch.cat([nn.functional.normalize(reference(chunk), dim=-1) for chunk in x.chunk(3)])
    torch.testing.assert_close(out, ref)

    weights = torch.randn_like(out)
    grads = torch.autograd.grad((out * weights).sum(), [encoder.norms[1].weight, encoder.linears[1].weight])
    ref_grads = torch.autograd.grad((ref * weights).sum(), [reference[4].weight, reference[3].weight])
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r)
    for bn, ref_bn in zip(encoder.norms, reference[1::3]):
        torch.testing.assert_close(bn.running_mean, ref_bn.running_mean)
        torch.testing.assert_close(bn.running_var, ref_bn.running_var)


def test_mlp_encoder_segment_batchnorm_passes_gradcheck():
    torch.manual_seed(1)
    encoder = MLPEncoder(3, 3, hidden=(5, 4)).double()
    x = torch.randn(12, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda inp: encoder(inp, segments=2), (x,))


@pytest.mark.parametrize("order", ["linear_bn_relu", "linear_relu_bn"])
def test_mlp_encoder_outputs_unit_vectors_in_both_orders(order):
    encoder = MLPEncoder(7, 3, order=order)
    out = encoder(torch.randn(12, 7), segments=3)
    assert out.shape == (12, 3)
    torch.testing.assert_close(out.norm(dim=1), torch.ones(12))
    encoder.eval()
    torch.testing.assert_close(encoder(torch.randn(5, 7)).norm(dim=1), torch.ones(5))


def test_mlp_encoder_code_order_puts_relu_before_batchnorm():
    encoder = MLPEncoder(3, 3, hidden=(4,), order="linear_relu_bn")
    assert encoder.linears[0].bias is not None  # a bias matters before ReLU
    assert MLPEncoder(3, 3, hidden=(4,)).linears[0].bias is None  # BatchNorm cancels it


def test_mlp_encoder_rejects_unknown_order_and_uneven_segments():
    with pytest.raises(ValueError, match="order must be one of"):
        MLPEncoder(order="bn_first")
    with pytest.raises(ValueError, match="segments"):
        MLPEncoder()(torch.randn(10, 3), segments=3)


def test_inverse_encoders_recover_their_process_exactly_at_the_true_parameters():
    z = uniform_sphere(200, 3, torch.Generator().manual_seed(0))
    # Spiral: with the control network replaced by c = x_3, h is the identity.
    spiral = make_generator("spiral")
    encoder = SpiralInverseEncoder(n=spiral.n)
    encoder.control = _ThirdCoordinate()
    torch.testing.assert_close(encoder(spiral(z)), z, atol=1e-5, rtol=0)
    # Linear: W^+ as the weight gives back z.
    linear = make_generator("linear", seed=3)
    inverse = LinearInverseEncoder(7, 3)
    with torch.no_grad():
        inverse.linear.weight.copy_(torch.linalg.pinv(linear.weight))
        inverse.linear.bias.zero_()
    torch.testing.assert_close(inverse(linear(z)), z, atol=1e-4, rtol=0)


@pytest.mark.parametrize("variant", ["paper", "code"])
def test_patches_inverse_encoder_with_true_band_weights_inverts_patches(variant):
    g = make_generator("patches", variant=variant)
    encoder = PatchesInverseEncoder(n_bands=4, variant=variant)
    z = uniform_sphere(300, 3, torch.Generator().manual_seed(1))
    x = g(z)
    # one-hot weights of the true bands of both piecewise rotations, applied step by step
    angles = encoder.angles
    first = g.band_angle(z[:, 2])
    second = g.band_angle((g._piecewise_rotation(z, 1.0) @ g.tilt.T)[:, 2])
    w2 = (second[:, None] == angles[None, :]).double().float()
    w1 = (first[:, None] == angles[None, :]).double().float()
    y = encoder._soft_inverse(x, w2) @ encoder.tilt_inv.T
    y = encoder._soft_inverse(y, w1)
    torch.testing.assert_close(y, z, atol=1e-4, rtol=0)
    assert encoder(x).shape == (300, 3)


def test_make_encoder_builds_each_kind_and_refuses_inverse_of_invertible_mlp():
    for process in ("identity", "linear", "spiral", "patches"):
        g = make_generator(process)
        h = Recovery(g, make_encoder("inverse", process, g))
        out = h(uniform_sphere(6, 3, torch.Generator().manual_seed(0)))
        torch.testing.assert_close(out.norm(dim=1), torch.ones(6))
        assert list(h.generator.parameters()) == [] or not any(p.requires_grad for p in h.generator.parameters())
    g = make_generator("invertible_mlp")
    assert isinstance(make_encoder("mlp", "invertible_mlp", g), MLPEncoder)
    with pytest.raises(ValueError, match="N/A"):
        make_encoder("inverse", "invertible_mlp", g)
    with pytest.raises(ValueError, match="encoder must be one of"):
        make_encoder("cnn", "identity", make_generator("identity"))


def test_linear_inverse_encoder_input_width_follows_the_process():
    g = make_generator("linear")
    encoder = make_encoder("inverse", "linear", g)
    assert encoder.linear.in_features == 7 and math.isclose(encoder(g(torch.eye(3))).norm().item() ** 2, 3, rel_tol=1e-5)
