"""The image chapter's tables and numbers (cldiv/images/tables.py) on constructed runs."""

from __future__ import annotations

import math

import pytest

from cldiv.images import tables
from cldiv.images.augment import REGIME_LABELS
from cldiv.images.encoders import ENCODER_LABELS
from cldiv.images.simclr import budget_choice_configs
from cldiv.published import FIGURE3

LABELS = {**ENCODER_LABELS, **REGIME_LABELS}


def metrics(best: float, init: float, **latents: float) -> dict:
    return {"probe_best": best, "probe_final": best - 0.01, "init_probe_best": init, "final_loss": 5.0,
            "latent_r2": latents, "init_latent_r2": {name: 0.1 for name in latents},
            "latent_r2_mean": sum(latents.values()) / max(1, len(latents))}


def test_the_accuracy_table_averages_the_seeds_and_marks_the_cells():
    records = {("resnet18", "all", s): {"metrics": metrics(0.50 + 0.02 * s, 0.3)} for s in range(2)}
    records |= {("resnet18", "crop", s): {"metrics": metrics(0.40, 0.3)} for s in range(2)}
    table = tables.accuracy_markdown(records, ["resnet18"], ["all", "crop"], LABELS, {("resnet18", "crop"): "†"}, FIGURE3)
    assert table.splitlines()[2] == f"| {LABELS['all']} | 51.0 / 50.0 [{FIGURE3['resnet18', 'all'][0]:.1f}] |"
    assert table.splitlines()[3].startswith(f"| {LABELS['crop']} | 40.0 / 39.0† [")
    runs = tables.runs_markdown(records, LABELS).splitlines()
    assert runs[2] == f"| {LABELS['resnet18']} | {LABELS['all']} | 0 | 50.0 | 49.0 | 30.0 | 5.000 |"


def test_the_latents_table_sets_each_latent_after_simclr_beside_its_value_at_initialisation():
    records = {("mlp", "all", s): {"metrics": metrics(0.5, 0.3, hue=0.8 + 0.1 * s, size=0.4)} for s in range(2)}
    table = tables.latents_markdown(records, ["mlp"], ["all"], ["hue", "size"], LABELS)
    assert table.splitlines()[2] == f"| {LABELS['mlp']} | {LABELS['all']} | 0.85 (0.10) | 0.40 (0.10) | 0.62 |"


def test_the_grey_level_shortcut_counts_runs_that_gain_less_and_keep_the_background():
    runs = {("resnet18", "the budget"): metrics(0.9, 0.3, hue=0.7),
            ("resnet18", "shapes"): metrics(0.4, 0.3, hue=0.9, background=0.8),   # gains less, keeps the grey level
            ("resnet18", "narrow"): metrics(0.95, 0.3, hue=0.1, background=0.9)}  # gains more
    assert tables.background_numbers(runs) == {"varied": 2, "shortcut": 1, "base_gain": pytest.approx(60.0)}
    assert math.isnan(tables.background_numbers({})["base_gain"])
    assert "| ResNet-18 | shapes | 40.0 | 30.0 | +10.0 | 0.90 |" in tables.choices_markdown(runs, LABELS).replace(
        LABELS["resnet18"], "ResNet-18")


def test_a_larger_encoder_that_learns_is_counted_and_the_size_runs_differ_in_width_and_depth_only():
    runs = [("64 × 2", 1000, metrics(0.35, 0.38)), ("128 × 4", 8000, metrics(0.60, 0.40))]
    assert tables.size_numbers(runs) == {"learn": 1, "sizes": 2, "largest": 8000, "margin": 10.0}
    assert tables.sizes_markdown(runs).splitlines()[3] == "| 128 × 4 | 8,000 | +20.0 | — |"
    choices = budget_choice_configs("smoke")
    found = tables.size_runs(choices, {(e, label): metrics(0.5, 0.3) for e, label, _ in choices}, "vit")
    assert [size for size, _, _ in found][0] == next(f"{c.width} × {c.depth}" for e, label, c in choices
                                                     if (e, label) == ("vit", "the budget"))
    assert [n for _, n, _ in found] == sorted(n for _, n, _ in found)


def test_the_published_differences_and_encoder_sizes_are_tabled():
    means = {cell: mean for cell, (mean, _) in FIGURE3.items()}
    table = tables.published_differences_markdown(means, ["resnet18", "vit", "mlp"], ["all", "crop", "no_crop"], LABELS)
    all_minus_crop = FIGURE3["resnet18", "all"][0] - FIGURE3["resnet18", "crop"][0]
    assert f"| {LABELS['resnet18']}: {LABELS['all']} − {LABELS['crop']} | {all_minus_crop:+.1f} |" in table
    sizes = tables.encoder_sizes_markdown([("resnet18", 8, 1, 110_000)], LABELS)
    assert sizes.splitlines()[2] == f"| {LABELS['resnet18']} | 8 × 1 | 110,000 | 64 × 2, 11.2M |"
