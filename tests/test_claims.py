import pytest
from scipy.stats import ttest_ind

from cldiv.images.claims import (claim_verdict, contrast, figure3_claims, learning_gain, longer_markdown, loss_settled,
                                 training_converged)


def test_two_cell_contrast_is_welchs_one_sided_t_test():
    a, b = [31.0, 33.5, 32.2], [28.0, 30.9, 26.5]
    c = contrast("claim", "a - b", [(1, a), (-1, b)])
    two_sided = ttest_ind(a, b, equal_var=False)
    assert c.value == pytest.approx(sum(a) / 3 - sum(b) / 3)
    assert c.p == pytest.approx(two_sided.pvalue / 2, rel=1e-9)
    assert c.verdict == "holds"


def test_contrast_verdicts_follow_the_sign_and_the_evidence():
    high, low = [40.0, 41.0, 39.5], [30.0, 31.0, 29.0]
    assert contrast("c", "x", [(1, low), (-1, high)]).verdict == "contradicted"
    assert contrast("c", "x", [(1, [30.0, 35.0, 25.0]), (-1, [31.0, 29.0, 33.0])]).verdict == "not significant"


def test_contrast_needs_two_seeds_per_cell():
    with pytest.raises(ValueError, match="at least 2 seeds"):
        contrast("c", "x", [(1, [1.0]), (-1, [0.0, 1.0])])


def test_gap_contrast_is_a_difference_of_differences():
    accuracy = {("resnet18", "all"): [50.0, 51.0, 49.0], ("mlp", "all"): [40.0, 41.0, 39.0],
                ("resnet18", "crop"): [45.0, 46.0, 44.0], ("mlp", "crop"): [25.0, 26.0, 24.0]}
    claims = figure3_claims(accuracy, ["resnet18", "mlp"], ["all", "crop"])
    (gap,) = claims["the gap widens"]
    assert gap.value == pytest.approx((45 - 25) - (50 - 40)) and gap.verdict == "holds"
    assert claim_verdict(claims["All is best"]) == "holds"
    assert claim_verdict(claims["inductive bias helps"]) == "holds"


def test_a_claim_is_contradicted_by_one_contradicted_contrast_and_otherwise_needs_all():
    accuracy = {("resnet18", "all"): [50.0, 51.0, 49.0], ("resnet18", "crop"): [60.0, 61.0, 59.0],
                ("resnet18", "no_crop"): [40.0, 41.0, 39.0]}
    claims = figure3_claims(accuracy, ["resnet18"], ["all", "crop", "no_crop"])
    assert [c.verdict for c in claims["All is best"]] == ["contradicted", "holds"]
    assert claim_verdict(claims["All is best"]) == "contradicted"
    assert "the gap widens" not in claims  # one encoder: no gap


def test_learning_needs_the_gain_minus_one_sd_to_reach_ten_points():
    assert learning_gain([40.0, 41.0, 42.0], [28.0, 28.0, 28.0])[2]            # gain 13 +- 1
    assert not learning_gain([40.0, 45.0, 35.0], [28.0, 28.0, 28.0])[2]        # gain 12 +- 5
    mean, sd, learns = learning_gain([30.0], [25.0])
    assert (mean, sd, learns) == (5.0, 0.0, False)


def test_loss_settled_rejects_a_diverging_curve_but_not_the_jitter_of_a_falling_one():
    assert loss_settled([5.3, 5.1, 5.0, 5.0])
    assert not loss_settled([5.3, 5.0, 5.1, 5.2])
    assert loss_settled([5.0, 4.9, 4.8, 4.75, 4.72, 4.70, 4.69, 4.734])  # last epoch up, last quarter flat
    assert not loss_settled([4.9, 4.8, 4.7, 4.6, 4.7, 4.8, 4.9, 5.0])
    assert loss_settled([4.5])


def test_published_differences_are_the_same_contrasts_on_the_published_means():
    from cldiv.images.claims import published_differences
    from cldiv.published import FIGURE3

    means = {cell: mean for cell, (mean, _) in FIGURE3.items()}
    diffs = published_differences(means, ["resnet18", "vit", "mlp"], ["all", "crop", "no_crop"])
    assert diffs["resnet18: all − crop"] == pytest.approx(55.4 - 37.2)
    assert diffs["(resnet18 − mlp): crop − all"] == pytest.approx((37.2 - 39.9) - (55.4 - 42.3))
    assert len(diffs) == 6 + 6 + 2


def test_a_run_has_converged_only_when_its_loss_neither_still_falls_nor_diverges():
    flat = [5.0, 4.6, 4.4] + [4.30, 4.31, 4.29, 4.30] * 4 + [4.30]        # 20 epochs, last quarter flat
    falling = [5.0 - 0.04 * e for e in range(20)]                            # 0.04 a epoch to the end
    diverging = [5.0 - 0.1 * e for e in range(10)] + [4.1 + 0.1 * e for e in range(10)]
    assert training_converged(flat)
    assert not training_converged(falling) and loss_settled(falling)  # the old check let it pass
    assert not training_converged(diverging)


def test_a_contrast_using_a_cell_not_converged_is_not_converged_and_so_is_its_claim():
    accuracy = {("resnet18", "all"): [50.0, 51.0, 49.0], ("resnet18", "crop"): [40.0, 41.0, 39.0],
                ("resnet18", "no_crop"): [30.0, 31.0, 29.0]}
    claims = figure3_claims(accuracy, ["resnet18"], ["all", "crop", "no_crop"], unconverged=[("resnet18", "crop")])
    assert [c.verdict for c in claims["All is best"]] == ["not converged", "holds"]
    assert claims["All is best"][0].value == pytest.approx(10.0)
    assert claim_verdict(claims["All is best"]) == "not converged"
    contradicted = figure3_claims({**accuracy, ("resnet18", "no_crop"): [60.0, 61.0, 59.0]}, ["resnet18"],
                                  ["all", "crop", "no_crop"], unconverged=[("resnet18", "crop")])
    assert claim_verdict(contradicted["All is best"]) == "contradicted"


def test_the_longer_runs_table_lists_cells_not_converged_with_their_runs_at_twice_the_epochs(tmp_path):
    from dataclasses import asdict

    from cldiv.runs.store import ResultStore
    from cldiv.images.simclr import SimCLRConfig

    flat, falling = [5.0, 4.6, 4.4] + [4.30, 4.31, 4.29, 4.30] * 4 + [4.30], [5.0 - 0.04 * e for e in range(20)]

    def run(encoder, seed, loss, accuracy, epochs=20):
        config = SimCLRConfig(dataset="shapes", encoder=encoder, epochs=epochs, seed=seed)
        return config, {"config": asdict(config), "curve": {"loss": loss}, "metrics": {"probe_best": accuracy}}

    runs = [run("resnet18", 0, flat, 0.8), run("mlp", 0, falling, 0.4), run("mlp", 1, flat, 0.5)]
    records = {(c.encoder, c.regime, c.seed): r for c, r in runs}
    store = ResultStore(tmp_path)
    table = longer_markdown(records, store, {"mlp": "MLP", "all": "All"}, "--budget cpu")
    assert table.count("\n") == 2 and "| MLP / All | 20 epochs: 45.0 ± 5.0 (1/2 converged) |" in table
    assert "`cldiv simclr --budget cpu --encoders mlp --regimes all --epochs 40`" in table
    store.save(*run("mlp", 0, flat * 2, 0.4, epochs=40), wall_time_s=1.0, device="cpu")
    assert "| 40 epochs: 40.0 ± 0.0 (1/1 converged); 1 of 2 runs stored: `cldiv simclr --budget cpu --encoders mlp " \
           "--regimes all --epochs 40` |  |" in longer_markdown(records, store, {}, "--budget cpu")
    store.save(*run("mlp", 1, flat * 2, 0.5, epochs=40), wall_time_s=1.0, device="cpu")
    assert "40 epochs: 45.0 ± 5.0 (2/2 converged) | no |" in longer_markdown(records, store, {}, "--budget cpu")
    assert longer_markdown({k: v for k, v in records.items() if k[0] == "resnet18"}, store, {}, "") == ""


def test_a_cell_has_converged_once_its_runs_at_twice_the_epochs_keep_its_accuracy(tmp_path):
    from dataclasses import asdict

    from cldiv.runs.store import ResultStore
    from cldiv.images.claims import cell_settled, unsettled_cells
    from cldiv.images.simclr import SimCLRConfig

    flat, falling = [5.0, 4.6, 4.4] + [4.30, 4.31, 4.29, 4.30] * 4 + [4.30], [5.0 - 0.04 * e for e in range(20)]

    def run(encoder, seed, loss, accuracy, epochs=20):
        config = SimCLRConfig(dataset="shapes", encoder=encoder, epochs=epochs, seed=seed)
        return config, {"config": asdict(config), "curve": {"loss": loss}, "metrics": {"probe_best": accuracy}}

    runs = [run("resnet18", 0, flat, 0.80), run("resnet18", 1, flat, 0.82),   # every loss settled
            run("mlp", 0, falling, 0.40), run("mlp", 1, falling, 0.42)]      # losses still falling
    records = {(c.encoder, c.regime, c.seed): r for c, r in runs}
    store = ResultStore(tmp_path)
    assert unsettled_cells(records) == unsettled_cells(records, store) == [("mlp", "all")]
    for encoder, seed, accuracy in (("mlp", 0, 0.405), ("mlp", 1, 0.415), ("resnet18", 0, 0.95), ("resnet18", 1, 0.96)):
        store.save(*run(encoder, seed, falling * 2, accuracy, epochs=40), wall_time_s=1.0, device="cpu")
    # twice the epochs: MLP keeps its accuracy although its losses still fall; ResNet-18 gains 15 points
    assert unsettled_cells(records, store) == [("resnet18", "all")]
    assert cell_settled([r for (e, _, _), r in records.items() if e == "mlp"], store)


def mlp_run(seed, accuracy, epochs):
    """(config, record) of an MLP / All run on shapes whose loss settled, with its best probe accuracy."""
    from dataclasses import asdict

    from cldiv.images.simclr import SimCLRConfig

    flat = [5.0, 4.6, 4.4] + [4.30, 4.31, 4.29, 4.30] * 4 + [4.30]
    config = SimCLRConfig(dataset="shapes", encoder="mlp", epochs=epochs, seed=seed)
    return config, {"config": asdict(config), "curve": {"loss": flat * (epochs // 20)},
                    "metrics": {"probe_best": accuracy}}


def test_a_cell_that_moved_when_doubled_is_shown_at_the_epochs_a_further_doubling_kept(tmp_path):
    from cldiv.runs.store import ResultStore
    from cldiv.images.claims import settled_cells, unsettled_cells

    records = {("mlp", "all", s): mlp_run(s, a, 20)[1] for s, a in ((0, 0.40), (1, 0.41))}
    store = ResultStore(tmp_path)
    for seed, accuracy in ((0, 0.50), (1, 0.52)):   # doubling gains 10 points: moved
        store.save(*mlp_run(seed, accuracy, 40), wall_time_s=1.0, device="cpu")
    assert settled_cells(records, store) == records and unsettled_cells(records, store) == [("mlp", "all")]
    table = longer_markdown(records, store, {}, "--budget cpu")
    assert "| 20 epochs: 40.5 ± 0.5 (2/2 converged) | 40 epochs: 51.0 ± 1.0 (2/2 converged) | yes |" in table
    assert "| 40 epochs: 51.0 ± 1.0 (2/2 converged) | 80 epochs: not stored yet: `cldiv simclr --budget cpu " \
           "--encoders mlp --regimes all --epochs 80` |  |" in table
    for seed, accuracy in ((0, 0.51), (1, 0.51)):   # doubling again keeps it
        store.save(*mlp_run(seed, accuracy, 80), wall_time_s=1.0, device="cpu")
    shown = settled_cells(records, store)
    assert [(r["config"]["epochs"], r["metrics"]["probe_best"]) for r in shown.values()] == [(40, 0.50), (40, 0.52)]
    assert unsettled_cells(shown, store) == [] and longer_markdown(records, store, {}, "").count("\n") == 3
    assert "drifting" not in longer_markdown(records, store, {}, "")


def test_a_cell_whose_accuracy_rises_at_every_doubling_is_named_as_still_drifting(tmp_path):
    from cldiv.runs.store import ResultStore

    records = {("mlp", "all", s): mlp_run(s, a, 20)[1] for s, a in ((0, 0.40), (1, 0.41))}
    store = ResultStore(tmp_path)
    for epochs, accuracies in ((40, (0.50, 0.52)), (80, (0.60, 0.61))):   # +10 points at each doubling
        for seed, accuracy in enumerate(accuracies):
            store.save(*mlp_run(seed, accuracy, epochs), wall_time_s=1.0, device="cpu")
    table = longer_markdown(records, store, {"mlp": "MLP", "all": "All"}, "--budget cpu")
    assert table.endswith("| drifting: 40.5 at 20 epochs → 60.5 at 80 epochs, up at each doubling |")


def test_differences_at_equal_length_put_every_cell_at_the_longest_epochs_all_of_them_have_stored(tmp_path):
    from dataclasses import replace

    from cldiv.runs.store import ResultStore
    from cldiv.images.claims import equal_length_contrasts, equal_length_markdown, unsettled_cells

    def crop_run(seed, accuracy, epochs):
        config, record = mlp_run(seed, accuracy, epochs)
        config = replace(config, regime="crop")
        return config, {**record, "config": {**record["config"], "regime": "crop"}}

    records = {("mlp", "all", s): mlp_run(s, a, 20)[1] for s, a in ((0, 0.40), (1, 0.41))}
    records |= {("mlp", "crop", s): crop_run(s, a, 20)[1] for s, a in ((0, 0.38), (1, 0.40))}
    store = ResultStore(tmp_path)
    for epochs, accuracies in ((40, (0.50, 0.52)), (80, (0.60, 0.61))):   # All: +10 points at each doubling
        for seed, accuracy in enumerate(accuracies):
            store.save(*mlp_run(seed, accuracy, epochs), wall_time_s=1.0, device="cpu")
    for seed, accuracy in enumerate((0.39, 0.40)):   # Crop only kept its accuracy at 40 epochs: settled
        store.save(*crop_run(seed, accuracy, 40), wall_time_s=1.0, device="cpu")
    unconverged = unsettled_cells(records, store)
    assert unconverged == [("mlp", "all")]
    assert figure3_claims({("mlp", "all"): [40.0, 41.0], ("mlp", "crop"): [38.0, 40.0]}, ["mlp"], ["all", "crop"],
                          unconverged=unconverged)["All is best"][0].value == pytest.approx(1.5)
    [(epochs, at_40)] = equal_length_contrasts(records, store, ["mlp"], ["all", "crop"], {}, unconverged)
    # 40 epochs, the longest both cells have for every seed: (50 + 52)/2 - (39 + 40)/2
    assert epochs == 40 and at_40.value == pytest.approx(11.5) and at_40.verdict == "not converged"
    assert "| All is best | mlp: all − crop | 40 | +11.5 |" in equal_length_markdown([(epochs, at_40)])
    assert equal_length_contrasts(records, store, ["mlp"], ["all", "crop"], {}, []) == []
