import math

import pytest
import torch
import torchvision

from cldiv.book.cli import main
from cldiv.images.encoders import IMAGE_ENCODERS, make_image_encoder, parameter_count
from cldiv.images.data import shapes_dataset
from cldiv.images.probe import latent_r2, linear_probe
from cldiv.metrics import affine_r2
from cldiv.budgets import PAPER_IMAGE_SIZES
from cldiv.config import config_hash, hashed_fields
from cldiv.images.simclr import SimCLRConfig, build_encoder, nt_xent, run_simclr, simclr_configs, train_simclr
from cldiv.runs.store import ResultStore




@pytest.mark.parametrize("name", IMAGE_ENCODERS)
def test_each_encoder_at_the_papers_size_maps_a_batch_to_unit_norm_512d_vectors(name):
    torch.manual_seed(0)
    encoder = make_image_encoder(name, **PAPER_IMAGE_SIZES[name]).eval()
    with torch.no_grad():
        z = encoder(torch.rand(3, 3, 32, 32))
    assert z.shape == (3, 512)
    torch.testing.assert_close(z.norm(dim=1), torch.ones(3))
    assert 10e6 < parameter_count(encoder) < 16e6  # "about 11M" (the paper's MLP is 15.7M)


@pytest.mark.parametrize("name", IMAGE_ENCODERS)
def test_each_encoder_at_a_small_size_gives_unit_norm_vectors_of_the_configured_dimension(name):
    encoder = make_image_encoder(name, 32, 1, out_dim=20)
    z = encoder(torch.rand(4, 3, 32, 32))
    assert z.shape == (4, 20)
    torch.testing.assert_close(z.norm(dim=1), torch.ones(4))


def test_the_cifar_stem_keeps_the_full_resolution_and_the_imagenet_stem_quarters_it():
    x = torch.rand(2, 3, 32, 32)
    assert make_image_encoder("resnet18", 8, 1, stem="cifar").stem(x).shape == (2, 8, 32, 32)
    assert make_image_encoder("resnet18", 8, 1).stem(x).shape == (2, 8, 8, 8)
    config = SimCLRConfig(encoder="resnet18", width=8, depth=1, resnet_stem="cifar")
    assert build_encoder(config).stem[0].kernel_size == (3, 3)
    # an added field: at its default it leaves the hash of configs stored before it existed alone
    assert config_hash(SimCLRConfig()) != config_hash(SimCLRConfig(resnet_stem="cifar"))
    assert "resnet_stem" not in hashed_fields(SimCLRConfig())


def test_resnet18_at_the_papers_size_is_torchvisions_resnet18_without_fc():
    reference = torchvision.models.resnet18()
    reference.fc = torch.nn.Identity()
    assert parameter_count(make_image_encoder("resnet18", 64, 2)) == parameter_count(reference) == 11_176_512


def test_nt_xent_equals_the_explicit_formula():
    g = torch.Generator().manual_seed(0)
    z1 = torch.nn.functional.normalize(torch.randn(5, 8, generator=g), dim=1)
    z2 = torch.nn.functional.normalize(torch.randn(5, 8, generator=g), dim=1)
    tau, z, b = 0.5, torch.cat([z1, z2]), 5
    total = 0.0
    for i in range(2 * b):
        partner = (i + b) % (2 * b)
        denominator = sum(math.exp(float(z[i] @ z[k]) / tau) for k in range(2 * b) if k != i)
        total += -math.log(math.exp(float(z[i] @ z[partner]) / tau) / denominator)
    assert nt_xent(z1, z2, tau).item() == pytest.approx(total / (2 * b), rel=1e-5)


def test_nt_xent_is_lowest_for_aligned_and_spread_out_views():
    eye = torch.eye(4)
    assert nt_xent(eye, eye, 0.5) < nt_xent(eye, eye.roll(1, 0), 0.5)
    with pytest.raises(ValueError, match="tau must be > 0"):
        nt_xent(eye, eye, 0.0)


def test_config_rejects_bad_values_naming_the_allowed_ones():
    with pytest.raises(ValueError, match="encoder must be one of 'resnet18', 'vit', 'mlp'"):
        SimCLRConfig(encoder="vgg")
    with pytest.raises(ValueError, match="regime must be one of 'all', 'crop', 'no_crop'"):
        SimCLRConfig(regime="crop_only")
    with pytest.raises(ValueError, match="views must be one of"):
        SimCLRConfig(views="three")
    with pytest.raises(ValueError, match="dataset must be one of 'cifar10', 'shapes', 'shapes_narrow_hue'"):
        SimCLRConfig(dataset="imagenet")
    with pytest.raises(ValueError, match="resnet_stem must be one of 'imagenet', 'cifar'"):
        SimCLRConfig(resnet_stem="vgg")
    with pytest.raises(ValueError, match="batch_size must be >= 2"):
        SimCLRConfig(batch_size=1)


def test_budget_grids_cover_encoders_times_regimes_and_take_overrides():
    configs = simclr_configs("cpu")
    assert len(configs) == 9 and len(set(configs)) == 9
    assert {c.kind for c in configs} == {"simclr"} and all(c.dataset == "shapes_fixed_background" for c in configs)
    assert {c.resnet_stem for c in configs if c.encoder == "resnet18"} == {"cifar"}
    paper = simclr_configs("paper", dataset="cifar10", encoders=["vit"], regimes=["crop"], epochs=None)
    assert paper == [SimCLRConfig(encoder="vit", width=384, depth=6, regime="crop")]
    assert simclr_configs("cpu", encoders=["mlp"], regimes=["all"], epochs=3)[0].epochs == 3
    with pytest.raises(ValueError, match="budget must be one of"):
        simclr_configs("gpu")
    with pytest.raises(ValueError, match="unknown config field"):
        simclr_configs("cpu", n_epochs=3)


def test_latent_r2_per_factor_equals_affine_r2_column_by_column():
    g = torch.Generator().manual_seed(0)
    f_train, f_test = torch.randn(300, 10, generator=g), torch.randn(100, 10, generator=g)
    w = torch.randn(10, 3, generator=g)
    c_train = f_train @ w + 0.5 * torch.randn(300, 3, generator=g)
    c_test = f_test @ w + 0.5 * torch.randn(100, 3, generator=g)
    r2 = latent_r2(f_train, c_train, f_test, c_test, ("a", "b", "c"))
    for j, name in enumerate("abc"):
        expected = affine_r2(f_train, c_train[:, [j]], test_features=f_test, test_latents=c_test[:, [j]])
        assert r2[name] == pytest.approx(expected, abs=1e-10)


def test_linear_probe_learns_linearly_separable_classes():
    g = torch.Generator().manual_seed(0)
    centres = 3 * torch.randn(4, 6, generator=g)
    labels = torch.randint(4, (600,), generator=g)
    features = centres[labels] + torch.randn(600, 6, generator=g)
    result = linear_probe(features[:400], labels[:400], features[400:], labels[400:], n_classes=4, epochs=5)
    assert result.best > 0.9 and len(result.curve) == 5 and result.final == result.curve[-1]


def test_a_tiny_simclr_run_lowers_its_loss():
    config = SimCLRConfig(dataset="shapes", encoder="mlp", width=128, depth=1, batch_size=64,
                          epochs=8, n_train=256, lr=1e-3)
    _, losses, _ = train_simclr(config, shapes_dataset(256, 0), "cpu")
    assert losses[-1] < losses[0] - 0.1, losses


def test_run_simclr_reports_accuracy_latent_r2_and_curves_and_is_deterministic():
    config = simclr_configs("smoke", encoders=["mlp"], regimes=["all"], epochs=1, probe_epochs=3)[0]
    first, device = run_simclr(config)
    second, _ = run_simclr(config)
    for record in (first, second):
        record["metrics"].pop("train_images_per_s"), record.pop("timing")  # wall-clock time
    assert first == second and device == "cpu"
    m = first["metrics"]
    assert 0 <= m["probe_final"] <= m["probe_best"] <= 1 and 1 <= m["probe_best_epoch"] <= 3
    assert set(m["latent_r2"]) == {"x", "y", "size", "rotation", "hue"}  # one background grey level
    assert len(first["curve"]["loss"]) == 1 and len(first["curve"]["probe_test_accuracy"]) == 3


def test_cli_runs_a_budget_into_the_store_and_skips_finished_configs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CLDIV_RESULTS", str(tmp_path))
    monkeypatch.delenv("CLDIV_RESULTS_READ_ONLY")
    args = ["simclr", "--budget", "smoke", "--encoders", "mlp", "--regimes", "crop", "--epochs", "1", "--threads", "1"]
    main(args)
    config = simclr_configs("smoke", encoders=["mlp"], regimes=["crop"], epochs=1)[0]
    assert ResultStore(tmp_path).load(config) is not None
    assert "[computed] shapes_fixed_background mlp / crop / seed 0" in capsys.readouterr().out
    main(args)
    assert "[stored] shapes_fixed_background mlp / crop / seed 0" in capsys.readouterr().out


def test_the_chapter_stops_with_instructions_when_cifar10_is_missing(tmp_path):
    from cldiv.book import chapters

    with pytest.raises(Exception) as error:
        chapters.execute_chapter("cifar10", {"dataset": "cifar10", "data_root": str(tmp_path)},
                                 tmp_path / "out.ipynb", progress=False)
    assert type(error.value).__name__ == "PapermillExecutionError"
    assert "DatasetUnavailableError" in str(error.value) and "download=True" in str(error.value)


def test_budget_choice_runs_undo_one_choice_each_and_skip_choices_the_budget_does_not_make():
    from cldiv.images.simclr import BUDGET_CHOICES, budget_choice_configs

    rows = budget_choice_configs("cpu")
    bases = {e: c for e, label, c in rows if label == "the budget"}
    assert {e: (c.encoder, c.regime, c.seed, c.dataset) for e, c in bases.items()} == {
        e: (e, "all", 0, "shapes_fixed_background") for e in ("resnet18", "vit", "mlp")}
    changed = [{f for f in SimCLRConfig.__dataclass_fields__ if getattr(c, f) != getattr(bases[e], f)}
               for e, label, c in rows if label != "the budget"]
    assert changed == [{"dataset"}, {"dataset"}, {"resnet_stem"}, {"lr"}, {"epochs"}, {"lr"}, {"width", "depth"},
                       {"epochs"}, {"lr"}, {"views"}, {"epochs"}]
    larger = next(c for e, label, c in rows if label.startswith("twice the width"))
    assert (larger.width, larger.depth) == (2 * bases["vit"].width, 2 * bases["vit"].depth)
    assert {c.epochs for e, label, c in rows if label.startswith("half")} == {bases["mlp"].epochs // 2}
    # the smoke budget keeps the ImageNet stem and the paper's learning rate: no stem row, no ResNet lr row
    smoke = [(e, label) for e, label, _ in budget_choice_configs("smoke") if label != "the budget"]
    assert [label for e, label in smoke if e == "resnet18"] == [label for e, label, _ in BUDGET_CHOICES[:2]] + [
        "half the epochs (an earlier cpu budget)"]
