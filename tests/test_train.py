"""Training loop, budgets and Table 1 cells (cldiv/synthetic/train.py, cldiv/synthetic/table1.py, budgets in config)."""

import json
import math
from dataclasses import asdict

import pytest
import torch


from cldiv.config import with_overrides
from cldiv.budgets import BUDGETS, overrides
from cldiv.synthetic.config import SyntheticConfig
from cldiv.runs.store import ResultStore
from cldiv.published import TABLE1_R2, TABLE3, TABLES4_6, published
from cldiv.synthetic.studies import (ERRATA_VARIANTS, RERUN_CELLS, SPIRAL_BASIN_SEEDS, chapter_runs, unique_runs,
                                     errata_pairs, mirrored_spiral, quarter_batch, rerun_pairs)
from cldiv.synthetic.table1 import cell_config, column_of, markdown_table, shape_checks, summarise, table_configs
from cldiv.synthetic.train import contrastive_loss, build_model, make_step, run_all, sample_batch, scatter_latents, train, random_stream


SMOKE = dict(batch_size=32, n_negatives=32, iterations=12, eval_every=4, n_eval=128)


def test_training_is_bitwise_deterministic_on_cpu_for_a_seed():
    config = SyntheticConfig(process="linear", d_fixed=1, **SMOKE)
    first, second = train(config, device="cpu"), train(config, device="cpu")
    assert first["metrics"] == second["metrics"]
    assert first["curves"] == second["curves"] and first["scatter_h"] == second["scatter_h"]
    other = train(SyntheticConfig(process="linear", d_fixed=1, seed=1, **SMOKE), device="cpu")
    assert other["metrics"]["r2"] != first["metrics"]["r2"]


def test_bf16_on_a_cpu_without_bf16_instructions_warns_and_fp32_does_not(monkeypatch):
    import warnings
    import cldiv.synthetic.train as synthetic_train

    bf16 = SyntheticConfig(precision="bf16", **SMOKE)
    monkeypatch.setattr(synthetic_train, "bf16_instructions", lambda: [])
    with pytest.warns(RuntimeWarning, match="precision='bf16'.*without bf16 matrix instructions"):
        make_step(bf16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_step(with_overrides(bf16, precision="fp32"))
        monkeypatch.setattr(synthetic_train, "bf16_instructions", lambda: ["avx512_bf16"])
        make_step(bf16)


def test_training_under_diversity_recovers_the_identity_process_quickly():
    config = SyntheticConfig(batch_size=128, n_negatives=128, iterations=120, eval_every=60, n_eval=512)
    result = train(config, device="cpu")
    assert result["metrics"]["r2"] > 0.9
    assert result["curves"]["iteration"] == [60, 120]


def test_result_has_every_metric_both_conventions_and_stays_small():
    result = train(SyntheticConfig(process="spiral", **SMOKE), device="cpu")
    metrics = result["metrics"]
    for name in ("r2", "r2_in_sample", "mcc", "ape", "ape_code", "final_loss", "loss_m2000",
                 "loss_m4000", "train_loss_last"):
        assert name in metrics and metrics[name] == metrics[name]  # present, not NaN
    n = SMOKE["n_eval"]
    assert metrics["ape_code"] == pytest.approx(metrics["ape"] * (n - 1) / (2 * n), rel=1e-9)
    assert len(json.dumps(result)) < 50_000


def test_support_corrected_and_inverse_encoder_runs_train():
    adapted = SyntheticConfig(process="patches", d_fixed=1, loss="support_corrected",
                              **{**SMOKE, "batch_size": 8, "n_negatives": 6})
    assert "loss_m2000" not in train(adapted, device="cpu")["metrics"]
    inverse = SyntheticConfig(process="spiral", encoder="inverse", d_fixed=1, **SMOKE)
    assert 0.0 <= train(inverse, device="cpu")["metrics"]["mcc"] <= 1.0


def test_support_corrected_negatives_share_the_anchor_u_and_mix_by_rho():
    config = SyntheticConfig(d_fixed=1, loss="support_corrected", rho=0.5, batch_size=5, n_negatives=8)
    z, positive, negatives = sample_batch(config, random_stream(0, 1, "cpu"), "cpu")
    assert negatives.shape == (5, 8, 3)
    assert torch.equal(negatives[:, :4, 0], z[:, None, 0].expand(5, 4))  # on K(z)
    assert torch.equal(positive[:, 0], z[:, 0])
    torch.testing.assert_close(negatives.norm(dim=2), torch.ones(5, 8))


def test_shared_negative_batch_of_another_size_uses_separate_calls():
    config = SyntheticConfig(batch_size=16, n_negatives=24)
    model = build_model(config)
    loss = contrastive_loss(model, config, sample_batch(config, random_stream(0, 1, "cpu"), "cpu"))
    assert loss.ndim == 0 and torch.isfinite(loss)


def test_budgets_are_overridable_and_table_configs_cover_every_cell():
    configs = table_configs("smoke", seeds=2)
    assert len(configs) == (5 + 5 + 5 + 4 + 4) * 2  # no inverse encoder for the invertible MLP
    assert {c.seed for c in configs} == {0, 1}
    assert configs[0].seed == 0 and configs[-1].seed == 1  # seed-major
    adapted = cell_config("adapted", "identity", budget="cpu")
    assert (adapted.loss, adapted.d_fixed, adapted.rho) == ("support_corrected", 1, 1.0)
    assert adapted.batch_size == overrides("synthetic", "cpu", "adapted")["batch_size"]
    assert cell_config("holds", "spiral", budget="paper").batch_size == 2000
    assert cell_config("holds", "spiral", budget="cpu", iterations=7).iterations == 7
    assert set(BUDGETS["synthetic"]) == {"paper", "cpu", "smoke"}
    with pytest.raises(ValueError, match="budget must be one of"):
        table_configs("laptop")
    with pytest.raises(ValueError, match="seeds must be a positive integer"):
        table_configs("smoke", seeds=0)
    with pytest.raises(ValueError, match="process must be one of"):
        table_configs("smoke", processes=["helix"])
    with pytest.raises(ValueError, match="unknown config field"):
        table_configs("smoke", batchsize=3)


def test_published_numbers_and_column_lookup():
    assert published("r2", "violated", "identity") == TABLE1_R2["identity"]["violated"]
    assert published("r2", "inverse", "invertible_mlp") is None
    assert published("final_loss", "holds", "identity") == TABLE3["identity"][2]
    assert published("ape_code", "adapted", "spiral") == TABLES4_6["ape_code"]["spiral"][1]
    for column in ("holds", "violated", "adapted", "inverse", "inverse_holds"):
        assert column_of(cell_config(column, "linear", budget="smoke")) == column


def test_shape_checks_pass_the_published_table_except_its_known_failures_and_catch_a_bad_cell():
    processes = ["identity", "invertible_mlp", "linear", "patches", "spiral"]
    paper = dict(shape_checks(lambda c, p: (published("r2", c, p) or (float("nan"),))[0], processes))
    assert len(paper) == 21
    assert sorted(claim for claim, ok in paper.items() if not ok) == [
        "spiral: adapted between violated and holds", "spiral: violated well below holds (by > 0.3)"]
    worse = dict(shape_checks(lambda c, p: 0.5 if (c, p) == ("holds", "patches") else published("r2", c, p)[0], processes[3:4]))
    assert not worse["patches: holds R^2 >= 0.98"] and not worse["patches: adapted between violated and holds"]


def test_companion_runs_differ_from_their_cell_only_as_stated():
    for i, base, changed in errata_pairs("cpu"):
        changes = ERRATA_VARIANTS[i][3]
        assert with_overrides(base, **changes) == changed and base != changed
    holds = cell_config("holds", "patches", 0, "cpu")
    small = quarter_batch(holds)
    assert small.batch_size * small.iterations == holds.batch_size * holds.iterations
    assert with_overrides(small, batch_size=holds.batch_size, n_negatives=holds.n_negatives,
                          iterations=holds.iterations, eval_every=holds.eval_every) == holds
    # identity has no small-batch or rerun cell; its adapted-budget study has 5 sizes x 3 seeds
    sections = chapter_runs("cpu", ["identity"])
    assert sections["table"] == table_configs("cpu", ["identity"])
    assert [len(sections[k]) for k in ("errata", "small_batch", "spiral_basin", "reruns", "adapted_study")] == [
        len(ERRATA_VARIANTS), 0, 0, 0, 5 * 3]


def test_reruns_change_only_the_sizes_and_companions_hold_each_config_once():
    pairs = rerun_pairs("cpu", ["patches", "spiral"], 2, "paper", lr=1e-4)
    assert [i for i, _, _ in pairs] == [0, 0, 1, 1, 2, 2, 3, 3]
    for i, base, big in pairs:
        column, process, changes = RERUN_CELLS[i]
        assert base == cell_config(column, process, base.seed, "cpu", lr=1e-4, **changes)
        assert (big.batch_size, big.n_negatives, big.iterations, big.eval_every) == (2000, 2000, 5000, 250)
        assert with_overrides(big, batch_size=base.batch_size, n_negatives=base.n_negatives,
                              iterations=base.iterations, eval_every=base.eval_every) == base
    companions = unique_runs(chapter_runs("cpu"))
    assert len(companions) == len(set(companions))
    assert {c.seed for c in companions if (c.process, c.encoder, c.batch_size) == ("spiral", "inverse", 256)
            and c.d_fixed == 1} == set(range(SPIRAL_BASIN_SEEDS))
    assert not chapter_runs("smoke")["reruns"]  # smoke names no rerun budget


def test_mirrored_spiral_reads_the_sign_of_the_third_coordinate():
    z = scatter_latents()
    record = {"config": {"process": "spiral", "encoder": "inverse", "latent_dim": 3}, "scatter_h": z.tolist()}
    assert not mirrored_spiral(record)
    assert mirrored_spiral({**record, "scatter_h": (z * torch.tensor([1.0, 1.0, -1.0])).tolist()})
    with pytest.raises(ValueError, match="Spiral inverse-encoder run"):
        mirrored_spiral({**record, "config": {**record["config"], "encoder": "mlp"}})


def test_run_all_stores_results_and_summaries_aggregate_over_seeds(tmp_path):
    store = ResultStore(tmp_path)
    configs = table_configs("smoke", processes=["identity"], seeds=2, columns=["holds"],
                            iterations=4, eval_every=2, n_eval=64)
    records = run_all(configs, store, progress=False)
    assert len(list((tmp_path / "synthetic").glob("*.json"))) == 2
    again = run_all(configs, store, progress=False)  # loaded, not rerun
    assert [r["provenance"]["created_utc"] for r in again] == [r["provenance"]["created_utc"] for r in records]
    summary = summarise(records, metrics=("r2", "mcc"))
    mean, std, n = summary[("holds", "identity")]["r2"]
    assert n == 2 and 0 <= std
    assert "identity" in markdown_table(summary, ["identity"], ["holds"])


def test_projected_hours_scales_measured_seconds_per_iteration_by_the_runs_and_workers():
    from dataclasses import asdict

    from cldiv.synthetic.cost import projected_hours

    configs = table_configs("paper", processes=["identity", "linear"], columns=("holds", "violated"), seeds=2)
    def record(config, seconds, threads=1):
        return {"config": asdict(config), "provenance": {"threads": threads, "device": "cpu", "wall_time_s": seconds,
                                                         "device_name": "CPU X"}}
    measured = [record(configs[0], 500.0), record(configs[1], 300.0), record(configs[2], 9.0, threads=2)]
    projection = projected_hours(configs, measured, workers=2)
    # 8 runs of 5000 iterations at the median 400 s / 5000 it, on 2 workers: 8 * 400 / 2 s
    assert projection == {"hours": 8 * 400 / 2 / 3600, "runs": 2, "cpus": ["CPU X"]}
    assert projected_hours(table_configs("paper", columns=("inverse",), seeds=1), measured) is None


def test_encoder_points_count_anchors_positives_and_each_losss_negatives():
    from cldiv.synthetic.cost import encoder_points

    holds, adapted = (cell_config(c, "identity", 0, "paper") for c in ("holds", "adapted"))
    assert encoder_points(holds) == 2000 + 2000 + 2000  # M negatives shared by all anchors
    assert encoder_points(adapted) == 256 + 256 + 64 * 64  # M shared within each of G groups
    per_anchor = with_overrides(adapted, batch_size=2000, n_negatives=2000, anchor_groups=0)
    assert encoder_points(per_anchor) == 2000 + 2000 + 2000 * 2000  # M of its own per anchor
    grouped = cell_config("adapted", "identity", 0, "cpu", anchor_groups=4)
    assert encoder_points(grouped) == 16 + 16 + 4 * 32


def test_projected_hours_by_points_scale_the_largest_measured_float32_mlp_shape():
    from dataclasses import asdict

    from cldiv.synthetic.cost import encoder_points, projected_hours_by_points

    def record(config, seconds, threads=1):
        return {"config": asdict(config), "provenance": {"threads": threads, "device": "cpu", "wall_time_s": seconds,
                                                         "device_name": "CPU X"}}
    big = cell_config("holds", "identity", 0, "paper", precision="fp32")   # 6000 points, 5000 iterations
    small = cell_config("holds", "identity", 0, "cpu")                      # fewer points: not used
    measured = [record(big, 600.0), record(small, 1.0), record(big, 60.0, threads=2)]
    adapted = [cell_config("adapted", "identity", s, "paper") for s in range(2)]
    projection = projected_hours_by_points(adapted, measured)
    per_point = 600.0 / (5000 * 6000)
    assert projection["runs"] == 1 and projection["cpus"] == ["CPU X"]
    assert math.isclose(projection["hours"], 2 * 8000 * encoder_points(adapted[0]) * per_point / 3600)
    assert projected_hours_by_points(adapted, [record(small, 1.0, threads=2)]) is None


def test_the_projection_tables_show_one_row_per_cpu_and_per_shape():
    from dataclasses import asdict

    from cldiv.synthetic.cost import paper_projection_markdown, points_projection_markdown

    def record(config, seconds, cpu):
        return {"config": asdict(config), "provenance": {"threads": 1, "device": "cpu", "wall_time_s": seconds,
                                                         "device_name": cpu}}
    configs = table_configs("paper", processes=["identity"], columns=("holds",), seeds=2)
    measured = [record(configs[0], 360.0, "CPU X"), record(configs[0], 720.0, "CPU Y")]
    rows = paper_projection_markdown(configs, measured).splitlines()[2:]
    assert rows == ["| CPU X | 2 | 0.1 | 1 |", "| CPU Y | 2 | 0.2 | 1 |"]  # 2 runs x 360 s on 2 workers
    big = cell_config("holds", "identity", 0, "paper", precision="fp32")
    adapted = [cell_config("adapted", "identity", s, "paper") for s in range(2)]
    table = points_projection_markdown({"a": adapted, "b": adapted[:1], "c": [big]}, [record(big, 600.0, "CPU X")])
    assert [line.split(" | ")[0] for line in table.splitlines()[2:]] == ["| a", "| c"]  # "b" repeats a's shape


def test_the_shape_table_sets_our_checks_beside_the_published_ones_and_reruns_are_tabled():
    from cldiv.synthetic.studies import RERUN_CELLS, rerun_markdown, rerun_pairs, rerun_values
    from cldiv.synthetic.table1 import shape_checks_markdown

    table = shape_checks_markdown([("holds >= 0.98", True), ("violated <= 0.3", False)],
                                  {"holds >= 0.98": True, "violated <= 0.3": True}).splitlines()
    assert table[2:] == ["| holds >= 0.98 | yes | yes |", "| violated <= 0.3 | **no** | yes |"]
    pairs = rerun_pairs("cpu", ["patches", "spiral"], 2, "paper")
    runs = [{"metrics": {"r2": k / 10, "loss_m2000": 6.0}} for k in range(2 * len(pairs))]
    values = rerun_values(pairs, runs)
    first = pairs[0][0]
    assert values[first] == ([0.0, 0.2], [0.1, 0.3])  # each pair's two runs in turn, seeds 0 and 1
    column, process, _ = RERUN_CELLS[first]
    assert rerun_markdown(pairs, values).splitlines()[2].startswith(f"| {process} ")


def test_the_adapted_study_resizes_the_budgets_adapted_cells_at_about_eight_then_sixteen_times_its_compute():
    from cldiv.synthetic.cost import encoder_points
    from cldiv.synthetic.studies import ADAPTED_SIZES, adapted_study_configs

    rows = adapted_study_configs("cpu", ["identity"], seeds=2)
    assert [label for label, _ in rows] == [label for label, _ in ADAPTED_SIZES for _ in range(2)]
    base = cell_config("adapted", "identity", 1, "cpu")
    assert rows[1][1] == base  # the first size is the budget's own cell
    cost = encoder_points(base) * base.iterations
    ratios = []
    for _, config in rows[2::2]:
        assert (config.process, config.seed, config.loss, config.rho) == ("identity", 0, "support_corrected", 1.0)
        ratios.append(encoder_points(config) * config.iterations / cost)
    assert all(7.5 <= r <= 8.5 for r in ratios[:-1]) and 15 <= ratios[-1] <= 17


def test_the_paper_budgets_adapted_cells_are_the_studys_last_size():
    from cldiv.synthetic.studies import adapted_study_configs

    last = [config for label, config in adapted_study_configs("cpu", ["identity", "linear"], seeds=1)][-1]
    assert last == cell_config("adapted", "linear", 0, "paper")  # the same runs, stored once
    assert (last.batch_size, last.anchor_groups, last.n_negatives, last.iterations) == (256, 64, 64, 8000)


def test_the_adapted_study_table_shows_every_size_with_its_cost_and_convergence(tmp_path):
    from cldiv.synthetic.studies import ADAPTED_SIZES, adapted_study_configs, adapted_study_table

    rows = adapted_study_configs("smoke", ["identity"], seeds=1)
    records = run_all([config for _, config in rows], ResultStore(tmp_path), progress=False)
    table = adapted_study_table((label, config, record) for (label, config), record in zip(rows, records))
    lines = table.splitlines()
    assert len(lines) == 2 + len(ADAPTED_SIZES)
    assert lines[2].startswith("| the budget's | 16 × 16, 30 | 288 | ")  # 2 N + N M
    assert "| 256 in 64 groups × 32, 30 | 2,560 |" in lines[5]  # 2 N + G M
    assert "| 256 in 64 groups × 32, 60 | 2,560 |" in lines[6]
    assert all(line.count("/1)") == 1 for line in lines[2:])


def test_the_adapted_study_names_each_size_whose_r2_differs_from_the_budgets(tmp_path):
    from cldiv.synthetic.findings import adapted_study_moved
    from cldiv.synthetic.studies import adapted_study_configs

    rows = adapted_study_configs("smoke", ["identity"], seeds=2)
    records = run_all([config for _, config in rows], ResultStore(tmp_path), progress=False)
    rows = [(label, config, record) for (label, config), record in zip(rows, records)]
    assert list(adapted_study_moved(rows)) == [label for label, _, _ in rows[2::2]]  # every size after the budget's
    # a size whose runs sit far from the budget's, with a tight spread, is named
    moved = {"the budget's": 0.5, "8x iterations": 0.9}
    far = [(label, config, {**record, "metrics": {**record["metrics"], "r2": moved[label] + 0.001 * config.seed}})
           if label in moved else (label, config, record) for label, config, record in rows]
    assert adapted_study_moved(far)["8x iterations"] == ["identity"]


def test_the_settled_sizes_are_those_at_which_every_run_converged_costliest_first(tmp_path):
    from cldiv.synthetic.studies import adapted_study_configs, settled_sizes

    rows = adapted_study_configs("smoke", ["identity"], seeds=1)

    def record(config, r2):
        n = config.iterations
        return {"config": asdict(config), "curves": {"iteration": [n // 3, 2 * n // 3, n], "loss": [5.0] * 3, "r2": r2}}

    flat, rising = [0.6, 0.6, 0.6], [0.2, 0.4, 0.6]
    moving = {"8x iterations"}  # this size's run still moves over its last quarter
    rows = [(label, config, record(config, rising if label in moving else flat)) for label, config in rows]
    assert settled_sizes(rows) == ["16x anchors in groups of 4, 2x negatives, 2x iterations",
                                   "16x anchors in groups of 4, 2x negatives", "4x anchors, 2x negatives",
                                   "the budget's"]
    assert settled_sizes([(label, config, record(config, rising)) for label, config, _ in rows]) == []


def test_the_shortcut_table_counts_runs_whose_eval_mode_loss_exceeds_the_training_loss():
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.synthetic.findings import shortcut_markdown

    def run(gap, r2):
        return {"config": {"iterations": 100}, "metrics": {"final_loss": 3.0 + gap, "r2": r2},
                "curves": {"iteration": [50, 80, 100], "loss": [3.0, 3.0, 3.0], "r2": [r2] * 3}}

    small, large = SyntheticConfig(batch_size=16), SyntheticConfig(batch_size=256)
    rows = [("small", small, run(3.2, 0.2)), ("small", small, run(-0.2, 0.6)), ("large", large, run(0.1, 0.62))]
    assert shortcut_markdown(rows).splitlines()[2:] == ["| small | 16 | 1 | 2 | 0.20 | 0.60 |",
                                                       "| large | 256 | 0 | 1 | — | 0.62 |"]


def test_a_headline_cell_with_an_unconverged_run_is_also_trained_twice_as_long_and_listed(tmp_path):
    from cldiv.synthetic.convergence import LONGER
    from cldiv.synthetic.table1 import longer_table, unsettled_table

    def record(config, r2):
        n = config.iterations
        return {"config": asdict(config), "metrics": {"r2": r2[-1]},
                "curves": {"iteration": [n // 3, 2 * n // 3, n], "loss": [5.0] * 3, "r2": r2}}

    flat, falling = [0.3, 0.3, 0.3], [0.4, 0.3, 0.2]
    moving = [record(cell_config("violated", "patches", s, "paper"), falling if s == 1 else flat) for s in range(3)]
    settled = [record(cell_config("holds", "linear", s, "paper"), [0.99] * 3) for s in range(3)]
    store = ResultStore(tmp_path)
    assert longer_table({("holds", "linear"): ("paper", settled)}, store) == ""  # every run converged
    found = {("violated", "patches"): ("paper", moving), ("holds", "linear"): ("paper", settled)}
    table = longer_table(found, store).splitlines()
    assert len(table) == 3  # only the cell with a run still moving
    assert table[2] == ("| patches violated | 5000 it: 0.27 ± 0.05 (2/3 converged) | 10000 it: not stored yet: "
                        "`cldiv synthetic --budget paper --processes patches --columns violated --seeds 3 --set "
                        "iterations 10000` |  |  |")
    for s in range(2):  # two of the longer runs, settled at 0.25
        config = with_overrides(cell_config("violated", "patches", s, "paper"), iterations=LONGER * 5000)
        store.save(config, record(config, [0.25] * 3), wall_time_s=1.0, device="cpu")
    assert longer_table(found, store).splitlines()[-1].endswith(
        "| 10000 it: 0.25 ± 0.00 (2/2 converged); 2 of 3 runs stored |  |  |")
    config = with_overrides(cell_config("violated", "patches", 2, "paper"), iterations=LONGER * 5000)
    store.save(config, record(config, [0.25] * 3), wall_time_s=1.0, device="cpu")
    table = longer_table(found, store)  # 0.27 ± 0.05 -> 0.25: within the seeds' spread; the paper has 0.25 ± 0.03
    assert "| 10000 it: 0.25 ± 0.00 (3/3 converged) | no |" in table
    assert table.endswith("| patches violated | 0.25 ± 0.03 | 5000 it: yes | 10000 it: yes |")
    unsettled = unsettled_table(found).splitlines()  # the one run still moving, by its cell and seed
    assert len(unsettled) == 3 and unsettled[2] == "| patches violated, seed 1 | 0.200 | -0.100 | – | R², loss not judged |"


def test_a_headline_cell_that_moved_when_doubled_gets_a_row_for_the_next_doubling(tmp_path):
    from cldiv.synthetic.convergence import LONGER
    from cldiv.synthetic.table1 import longer_table

    def record(config, r2):
        n = config.iterations
        return {"config": asdict(config), "metrics": {"r2": r2[-1]},
                "curves": {"iteration": [n // 3, 2 * n // 3, n], "loss": [5.0] * 3, "r2": r2}}

    def stored(iterations, r2):
        configs = [with_overrides(cell_config("violated", "patches", s, "paper"), iterations=iterations) for s in range(3)]
        for config, value in zip(configs, r2):
            store.save(config, record(config, [value] * 3), wall_time_s=1.0, device="cpu")

    store = ResultStore(tmp_path)
    moving = [record(cell_config("violated", "patches", s, "paper"), [0.4, 0.3, 0.2]) for s in range(3)]
    found = {("violated", "patches"): ("paper", moving)}
    stored(LONGER * 5000, [0.60, 0.61, 0.62])  # 0.20 -> 0.61: moved, so it is doubled again
    rows = longer_table(found, store).splitlines()
    assert rows[3] == ("| patches violated | 10000 it: 0.61 ± 0.01 (3/3 converged) | 20000 it: not stored yet: "
                       "`cldiv synthetic --budget paper --processes patches --columns violated --seeds 3 --set "
                       "iterations 20000` |  |  |")
    stored(LONGER ** 2 * 5000, [0.60, 0.62, 0.61])  # and that doubling left it in place: the last row
    table = longer_table(found, store)
    assert len(table.split("\n\n")[0].splitlines()) == 4 and "| 20000 it: 0.61 ± 0.01 (3/3 converged) | no |" in table
    assert table.split("\n\n")[1].splitlines()[2:] == [
        "| patches violated | 0.25 ± 0.03 | 5000 it: no | 10000 it: no |",
        "| patches violated | 0.25 ± 0.03 | 10000 it: no | 20000 it: no |"]
