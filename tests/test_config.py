import pytest

from cldiv.config import config_hash, with_overrides
from cldiv.synthetic.config import SyntheticConfig


def test_defaults_are_the_paper_protocol():
    c = SyntheticConfig()
    assert (c.tau, c.batch_size, c.n_negatives, c.iterations, c.lr) == (0.3, 2000, 2000, 5000, 1e-3)
    assert c.concentration == pytest.approx(1 / 0.3)


def test_hash_is_stable_and_changes_with_any_field():
    a = SyntheticConfig()
    assert config_hash(a) == config_hash(SyntheticConfig())
    assert len(config_hash(a)) == 16
    assert config_hash(a) != config_hash(with_overrides(a, seed=1))
    assert config_hash(a) != config_hash(with_overrides(a, tau=0.31))


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("process", "helix", "process must be one of 'identity', 'linear'"),
        ("kappa", 0.0, "kappa must be a finite number > 0"),
        ("kappa", -1.0, "kappa must be a finite number > 0"),
        ("tau", float("nan"), "tau must be a finite number > 0"),
        ("d_fixed", 4, r"d_fixed must be an integer in \[0, 3\]"),
        ("d_fixed", -1, r"d_fixed must be an integer in \[0, 3\]"),
        ("rho", 1.5, r"rho must be a number in \[0.0, 1.0\]"),
        ("encoder", "resnet", "encoder must be one of 'mlp', 'inverse'"),
        ("loss", "nce", "loss must be one of 'infonce', 'support_corrected'"),
        ("batch_size", 0, "batch_size must be a positive integer"),
        ("iterations", 2.5, "iterations must be a positive integer"),
        ("process_variant", "authors", "process_variant must be one of 'paper', 'code'"),
    ],
)
def test_bad_config_names_the_field_and_allowed_values(field, value, message):
    with pytest.raises(ValueError, match=message):
        SyntheticConfig(**{field: value})


def test_support_corrected_loss_needs_a_restricted_conditional():
    with pytest.raises(ValueError, match="support_corrected' needs d_fixed >= 1"):
        SyntheticConfig(loss="support_corrected", d_fixed=0)


def test_unknown_override_is_rejected_with_allowed_fields():
    with pytest.raises(ValueError, match=r"unknown config field\(s\) \['temperature'\]; allowed"):
        with_overrides(SyntheticConfig(), temperature=0.5)


def test_adding_a_field_at_its_default_keeps_the_hash_of_existing_configs():
    from dataclasses import dataclass

    from cldiv.config import added_field

    @dataclass(frozen=True)
    class Before:
        kind = "demo"
        a: int = 1

    @dataclass(frozen=True)
    class After:
        kind = "demo"
        a: int = 1
        b: int = added_field(0)

    assert config_hash(After()) == config_hash(Before())
    assert config_hash(After(b=2)) != config_hash(Before())
