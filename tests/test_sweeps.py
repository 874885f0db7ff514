import json
import math

import pytest
import torch

from cldiv.book.cli import main as cli_main
from cldiv.config import config_hash
from cldiv.synthetic.config import SyntheticConfig
from cldiv.synthetic.encoders import MLPEncoder
from cldiv.runs.store import REPO_ROOT
from cldiv.sphere import grouped_uniform_sphere
from cldiv.budgets import PAPER_10D_WIDTHS
from cldiv.synthetic import sweep_findings
from cldiv.synthetic.sweeps import (endpoint_agreement, markdown_summary, run_named_sweep, summary_rows,
                          sweep_configs)
from cldiv.synthetic.train import build_model, contrastive_loss, make_step, sample_batch


# --- the named grids are the paper's --------------------------------------------------------
def test_constraint_ratio_paper_grid_is_eleven_rhos_nine_encoder_cells_five_seeds():
    configs = sweep_configs("constraint_ratio", "paper")
    assert len(configs) == 11 * 9 * 5
    assert sorted({c.rho for c in configs}) == [round(0.1 * i, 1) for i in range(11)]
    cells = {(c.process, c.encoder) for c in configs}
    assert len(cells) == 9 and ("invertible_mlp", "inverse") not in cells
    assert {c.seed for c in configs} == set(range(5))
    for c in configs:
        assert (c.d_fixed, c.loss, c.batch_size, c.n_negatives, c.iterations, c.lr, c.latent_dim) == (
            1, "support_corrected", 2000, 2000, 5000, 1e-3, 3)
        assert c.anchor_groups == 0  # the paper's per-anchor negatives


def test_progressive_violation_paper_grid_is_two_maps_of_s9_to_r70_and_d_fixed_0_to_10():
    configs = sweep_configs("progressive_violation", "paper")
    assert len(configs) == 2 * 11 * 5 + 2 * 5  # and the authors' sign rule at d_fixed = 9
    code = [c for c in configs if c.positive_law == "code"]
    assert len(code) == 10 and {c.d_fixed for c in code} == {9}
    assert len(sweep_configs("progressive_violation", "paper", sign_rules=[])) == 2 * 11 * 5
    assert {c.process for c in configs} == {"injective_linear", "monomial"}
    assert sorted({c.d_fixed for c in configs}) == list(range(11))
    for c in configs:
        assert (c.latent_dim, c.loss, c.encoder, c.hidden_widths) == (10, "infonce", "mlp", PAPER_10D_WIDTHS)
    model = build_model(SyntheticConfig(process="monomial", latent_dim=10, hidden_widths=PAPER_10D_WIDTHS))
    assert model.generator.output_dim == 70 and model.encoder.linears[0].in_features == 70
    assert [l.out_features for l in model.encoder.linears] == list(PAPER_10D_WIDTHS)
    assert model.encoder.head.out_features == 10


def test_sweep_axes_and_overrides_replace_the_budget_defaults():
    configs = sweep_configs("constraint_ratio", "smoke", processes=["spiral"], encoders=["inverse"],
                            rhos=[0.3], seeds=3, iterations=7)
    assert [(c.process, c.encoder, c.rho, c.seed, c.iterations) for c in configs] == [
        ("spiral", "inverse", 0.3, s, 7) for s in range(3)]


@pytest.mark.parametrize("call, parameter", [
    (lambda: sweep_configs("constraint", "cpu"), "sweep"),
    (lambda: sweep_configs("constraint_ratio", "gpu"), "budget"),
    (lambda: sweep_configs("constraint_ratio", "smoke", processes=["circle"]), "processes"),
    (lambda: sweep_configs("constraint_ratio", "smoke", processes="identity"), "processes"),
    (lambda: sweep_configs("constraint_ratio", "smoke", encoders=["resnet"]), "encoders"),
    (lambda: sweep_configs("constraint_ratio", "smoke", rhos=[1.5]), "rhos"),
    (lambda: sweep_configs("constraint_ratio", "smoke", d_fixed=[1]), "d_fixed"),
    (lambda: sweep_configs("constraint_ratio", "smoke", seeds=0), "seeds"),
    (lambda: sweep_configs("progressive_violation", "smoke", d_fixed=[11]), "d_fixed"),
    (lambda: sweep_configs("progressive_violation", "smoke", processes=["identity"]), "processes"),
    (lambda: sweep_configs("progressive_violation", "smoke", rhos=[0.5]), "rhos"),
    (lambda: sweep_configs("progressive_violation", "smoke", widths=[3]), "widths"),
    (lambda: run_named_sweep("constraint_ratio", "smoke", "slurm"), "executor"),
    (lambda: SyntheticConfig(d_fixed=1, loss="support_corrected", batch_size=10, anchor_groups=3), "anchor_groups"),
    (lambda: SyntheticConfig(anchor_groups=2), "anchor_groups"),
    (lambda: SyntheticConfig(hidden_widths=(8, 0)), "hidden_widths"),
    (lambda: SyntheticConfig(process="identity", encoder="inverse", hidden_widths=(8,)), "hidden_widths"),
])
def test_bad_sweep_names_and_values_raise_value_error_naming_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


# --- the new config fields keep old results valid ---------------------------------------------
def test_new_fields_at_their_defaults_keep_the_hash_of_stored_results():
    """A config written before anchor_groups and hidden_widths existed names the same file."""
    added = {"anchor_groups": 0, "hidden_widths": []}
    path = next(p for p in sorted((REPO_ROOT / "results" / "synthetic").glob("*.json"))
                if all(json.loads(p.read_text())["config"].get(k, v) == v for k, v in added.items()))
    config = json.loads(path.read_text())["config"]
    before = {k: v for k, v in config.items() if k not in added}
    assert config_hash(SyntheticConfig(**before)) == config_hash(SyntheticConfig(**config)) == path.stem
    assert config_hash(SyntheticConfig(hidden_widths=[])) == config_hash(SyntheticConfig())
    assert config_hash(SyntheticConfig(anchor_groups=2, loss="support_corrected", d_fixed=1)) != config_hash(
        SyntheticConfig(loss="support_corrected", d_fixed=1))


def test_hidden_widths_configure_the_mlp_and_default_to_the_paper_widths():
    assert [l.out_features for l in build_model(SyntheticConfig()).encoder.linears] == [128, 256, 256, 256, 128]
    config = SyntheticConfig(hidden_widths=[16, 8])  # a list (JSON, papermill) becomes a tuple
    assert config.hidden_widths == (16, 8)
    encoder = build_model(config).encoder
    assert isinstance(encoder, MLPEncoder) and [l.out_features for l in encoder.linears] == [16, 8]


# --- the grouped-anchor estimator -------------------------------------------------------------
def test_grouped_anchors_share_u_within_a_group_and_are_marginally_uniform():
    g = torch.Generator().manual_seed(0)
    z, centres = grouped_uniform_sphere(40000, 3, 1, 10000, g, dtype=torch.float64)
    groups = z.view(10000, 4, 3)
    assert torch.allclose(groups[:, :, 0], centres[:, None, 0].expand(10000, 4))
    assert torch.allclose(z.norm(dim=1), torch.ones(40000, dtype=torch.float64))
    # uniform on S^2: E z = 0, E z z^T = I/3, and z_1 uniform on [-1, 1] (Archimedes)
    assert z.mean(0).abs().max() < 0.02
    assert (z.T @ z / len(z) - torch.eye(3, dtype=torch.float64) / 3).abs().max() < 0.02
    assert abs(float((z[:, 0] < -0.5).double().mean()) - 0.25) < 0.01


@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_grouped_estimator_has_the_expected_loss_of_per_anchor_negatives(rho):
    """Monte-Carlo loss of a fixed map h = normalise(W z + b) under both samplers agrees (250 batches of 64)."""
    base = dict(process="identity", encoder="inverse", d_fixed=1, loss="support_corrected", rho=rho,
                batch_size=64, n_negatives=16, tau=0.3, seed=3)
    means = {}
    for groups in (0, 8):
        config = SyntheticConfig(**base, anchor_groups=groups)
        model = build_model(config).eval()
        g = torch.Generator().manual_seed(11 + groups)
        with torch.no_grad():
            losses = torch.tensor([float(contrastive_loss(model, config, sample_batch(config, g, "cpu")))
                                   for _ in range(250)], dtype=torch.float64)
        means[groups] = (float(losses.mean()), float(losses.std()) / math.sqrt(len(losses)))
    (m0, s0), (m4, s4) = means[0], means[8]
    assert abs(m0 - m4) < 4 * math.hypot(s0, s4), means
    assert s4 > 0 and abs(m0 - math.log(17)) > 10 * s0  # the map is not trivially constant


@pytest.mark.parametrize("rho", [0.0, 0.5, 1.0])
def test_grouped_training_step_encodes_2n_plus_g_times_fibre_plus_shared_points(rho):
    config = SyntheticConfig(process="identity", d_fixed=1, loss="support_corrected", rho=rho, batch_size=8,
                             n_negatives=6, anchor_groups=2, mlp_order="linear_relu_bn")
    z, positive, (fibre, shared) = sample_batch(config, torch.Generator().manual_seed(0), "cpu")
    on_fibre = round(rho * 6)
    assert fibre.shape == (2, on_fibre, 3) and shared.shape == (6 - on_fibre, 3)
    assert torch.allclose(fibre[:, :, 0], z.view(2, 4, 3)[:, :1, 0].expand(2, on_fibre))
    model, step, _ = make_step(config)
    assert math.isfinite(float(step()))


# --- running a named sweep --------------------------------------------------------------------
def test_named_sweep_runs_into_the_store_and_the_cli_loads_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CLDIV_RESULTS", str(tmp_path))
    monkeypatch.delenv("CLDIV_RESULTS_READ_ONLY")
    params = dict(processes=["identity"], encoders=["inverse"], rhos=[0.0, 1.0], seeds=1, iterations=5)
    records = run_named_sweep("constraint_ratio", "smoke", workers=1, progress=False, **params)
    assert len(records) == 2 and all(r["provenance"]["wall_time_s"] > 0 for r in records)
    # and the rho = 0 run's Table 1 companion: the inverse encoder under InfoNCE (endpoint_companions)
    assert len(list((tmp_path / "synthetic").glob("*.json"))) == 3
    rows = summary_rows("constraint_ratio", records)
    assert list(rows) == [("identity", "inverse")] and sorted(rows[("identity", "inverse")]) == [0.0, 1.0]
    assert "rho = 1" in markdown_summary("constraint_ratio", records)
    cli_main(["sweep", "constraint_ratio", "--budget", "smoke", "-p", "processes", "['identity']",
              "-p", "encoders", "['inverse']", "-p", "rhos", "[0.0, 1.0]", "-p", "seeds", "1",
              "-p", "iterations", "5"])
    assert "2 runs ready" in capsys.readouterr().out
    assert len(list((tmp_path / "synthetic").glob("*.json"))) == 3  # loaded, not rerun


def test_cli_sweep_rejects_a_bad_parameter_with_its_name():
    with pytest.raises(SystemExit, match="rhos"):
        cli_main(["sweep", "constraint_ratio", "--budget", "smoke", "-p", "rhos", "[2]"])


def test_the_run_function_of_sweeps_is_picklable_for_process_pools_and_ray_tasks():
    import pickle

    from cldiv.synthetic.train import run_synthetic

    assert pickle.loads(pickle.dumps(run_synthetic)) is run_synthetic


def _run(r2, seed, **config):
    from dataclasses import asdict

    fields = asdict(SyntheticConfig(seed=seed, iterations=100, **config))
    curve = {"iteration": [25, 50, 75, 100], "loss": [5.0, 5.0, 5.0, 5.0], "r2": [r2] * 4}
    return {"config": fields, "metrics": {"r2": r2}, "curves": curve}


def test_the_endpoint_companions_are_the_sweep_runs_with_table_1_samplers():
    from cldiv.synthetic.sweeps import endpoint_companions, sweep_configs
    from cldiv.synthetic.table1 import cell_config, column_of

    configs = sweep_configs("constraint_ratio", "cpu", processes=["identity", "invertible_mlp"], seeds=1)
    companions = endpoint_companions(configs)
    assert sorted((column_of(c), c.process) for c in companions) == [
        ("adapted", "identity"), ("adapted", "invertible_mlp"), ("inverse", "identity"),
        ("violated", "identity"), ("violated", "invertible_mlp")]
    for c in companions:
        assert (c.batch_size, c.n_negatives, c.iterations) == (256, 64, 8000)
        assert c.anchor_groups == (64 if column_of(c) == "adapted" else 0)
    # at the cpu budget rho = 1 with the MLP is the paper budget's adapted cell itself: its own companion
    assert cell_config("adapted", "identity", 0, "paper") in companions
    assert cell_config("adapted", "identity", 0, "paper") in configs
    # elsewhere (smoke: 4 groups of 4 anchors) the adapted companion has per-anchor negatives
    smoke = endpoint_companions(sweep_configs("constraint_ratio", "smoke", processes=["identity"], encoders=["mlp"],
                                              seeds=1))
    assert [c.anchor_groups for c in smoke if column_of(c) == "adapted"] == [0]


def test_an_end_that_is_a_table_1_cell_is_marked_same_and_left_out_of_the_test_level():
    corrected = dict(d_fixed=1, loss="support_corrected")
    adapted = [_run(0.60 + 0.01 * s, s, rho=1.0, **corrected) for s in range(3)]
    sweep = [_run(0.05 + 0.01 * s, s, rho=0.0, **corrected) for s in range(3)] + adapted
    table = [_run(0.06 + 0.01 * s, s, d_fixed=1) for s in range(3)] + adapted
    rows = {r["column"]: r for r in endpoint_agreement(sweep, table)}
    assert rows["adapted"]["same"] and rows["adapted"]["agrees"] and not rows["violated"]["same"]
    assert sweep_findings.endpoint_counts(list(rows.values())) == {"cases": 2, "same": 1, "compared": 1, "agree": 1,
                                                                   "unsettled": 0}
    assert "| same runs |" in sweep_findings.endpoint_table(list(rows.values()))


def test_sweep_endpoints_are_compared_with_table_1_cells_of_the_same_process_and_encoder():
    corrected = dict(d_fixed=1, loss="support_corrected", anchor_groups=4)  # Table 1: per-anchor negatives
    sweep = ([_run(0.05 + 0.01 * s, s, rho=0.0, **corrected) for s in range(3)]
             + [_run(0.60 + 0.01 * s, s, rho=1.0, **corrected) for s in range(3)]
             + [_run(0.40, s, rho=0.5, **corrected) for s in range(3)])  # not an endpoint
    table = ([_run(0.06 + 0.01 * s, s, d_fixed=1) for s in range(3)]  # violated: agrees within the floor
             + [_run(0.30 + 0.01 * s, s, d_fixed=1, loss="support_corrected") for s in range(3)])  # adapted: not
    rows = {(r["rho"], r["column"]): r for r in endpoint_agreement(sweep, table)}
    assert set(rows) == {(0.0, "violated"), (1.0, "adapted")}
    assert rows[0.0, "violated"]["agrees"] and not rows[1.0, "adapted"]["agrees"]
    assert rows[1.0, "adapted"]["sweep"][:2] == pytest.approx((0.61, 0.01)) and rows[1.0, "adapted"]["converged"]


def drifting_code_law_record(config):
    """A stored run of ``config`` whose R^2 settles at 0.1, except the code-law point's seed 1, whose
    R^2 still falls over its last quarter."""
    from dataclasses import asdict

    r2 = [0.3, 0.2, 0.1] if (config.positive_law, config.seed) == ("code", 1) else [0.1] * 3
    n = config.iterations
    return {"config": asdict(config), "metrics": {"r2": r2[-1]},
            "curves": {"iteration": [n // 3, 2 * n // 3, n], "loss": [5.0] * 3, "r2": r2}}


def test_a_sweep_point_with_an_unconverged_run_gets_the_command_that_trains_it_twice_as_long(tmp_path):
    from cldiv.book.cli import parse_value
    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.convergence import doubling_steps
    from cldiv.synthetic.sweeps import longer_table, sweep_points

    configs = sweep_configs("progressive_violation", "smoke", processes=["monomial"], d_fixed=[8, 9], seeds=2)
    record = drifting_code_law_record
    points = sweep_points("progressive_violation", map(record, configs))
    assert sorted(points) == [("monomial", "code", 9), ("monomial", "paper", 8), ("monomial", "paper", 9)]
    store = ResultStore(tmp_path)
    assert [point for point, runs in points.items() if doubling_steps(runs, store)] == [("monomial", "code", 9)]
    table = longer_table("progressive_violation", map(record, configs), "smoke", store).splitlines()
    assert len(table) == 3 and table[2].startswith("| monomial / code, d_fixed = 9 | ")
    command = table[2].split("`")[1].split()
    assert command[:5] == ["cldiv", "sweep", "progressive_violation", "--budget", "smoke"]
    params = {}  # the command's -p NAME VALUE pairs, read as the CLI reads them
    for i in range(5, len(command), 3):
        params[command[i + 1]] = parse_value(command[i + 2].strip('"'))
    assert sweep_configs("progressive_violation", "smoke", **params) == doubling_steps(points["monomial", "code", 9], store)[0][1]


def test_a_point_is_marked_not_converged_until_its_doubled_runs_are_stored_and_keep_its_mean(tmp_path):
    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.convergence import longer_configs
    from cldiv.synthetic.sweeps import sweep_points

    configs = sweep_configs("progressive_violation", "smoke", processes=["monomial"], d_fixed=[8, 9], seeds=2)
    records = [drifting_code_law_record(c) for c in configs]
    store = ResultStore(tmp_path)
    marked = lambda: [line.count("†") for line in markdown_summary("progressive_violation", records, store=store).splitlines()]
    assert marked()[2:4] == [1, 0] and "(1 of 3 points)" in markdown_summary("progressive_violation", records)
    for config in longer_configs(sweep_points("progressive_violation", records)[("monomial", "code", 9)]):
        store.save(config, {"metrics": {"r2": 0.1}, "curves": {}}, wall_time_s=1.0, device="cpu")
    assert marked()[2:4] == [0, 0]
    assert "All 3 points have converged" in markdown_summary("progressive_violation", records, store=store)


def test_the_unsettled_runs_of_a_sweep_are_labelled_by_point_and_seed():
    from cldiv.synthetic.sweeps import unsettled_table

    configs = sweep_configs("progressive_violation", "smoke", processes=["monomial"], d_fixed=[8, 9], seeds=2)
    table = unsettled_table("progressive_violation", map(drifting_code_law_record, configs)).splitlines()
    assert len(table) == 3 and table[2].startswith("| monomial / code, d_fixed = 9, seed 1 | 0.100 | -0.100 | – |")
    assert unsettled_table("progressive_violation", map(drifting_code_law_record, configs[:2])) == ""


def test_table7_code_config_is_the_authors_protocol():
    from cldiv.budgets import PAPER_10D_WIDTHS
    from cldiv.synthetic.sweeps import table7_code_config

    linear = table7_code_config("injective_linear", 9, seed=3)
    assert (linear.batch_size, linear.n_negatives, linear.iterations, linear.lr) == (2000, 2000, 100, 1e-4)
    assert linear.hidden_widths == PAPER_10D_WIDTHS and linear.mlp_order == "linear_relu_bn"
    assert (linear.process_variant, linear.positive_law, linear.precision, linear.seed) == ("code", "code", "fp32", 3)
    assert table7_code_config("monomial", 2, iterations=5000).eval_every == 100
    with pytest.raises(ValueError, match="process must be one of"):
        table7_code_config("spiral", 2)
