"""The numbers and tables the chapters' findings cite (cldiv/synthetic/findings.py, sweep_findings.py) follow the data."""

import math
from dataclasses import asdict

import pytest

from cldiv.published import published
from cldiv.synthetic.findings import figure5a_means, table1_numbers, violated_markdown
from cldiv.synthetic.table1 import COLUMNS, has_cell, cell_config, summarise

PROCESSES = ["identity", "spiral"]


def fake_records(r2: dict[str, float]) -> list[dict]:
    """Two seeds per cell of every column, with R^2 given per column (seed 1 a little higher)."""
    records = []
    for column in COLUMNS:
        for p in PROCESSES:
            if not has_cell(column, p):
                continue
            for seed in (0, 1):
                config = asdict(cell_config(column, p, seed, "smoke"))
                value = r2[column] + 0.01 * seed
                records.append({"config": config, "metrics": {"r2": value, "mcc": 0.5, "ape_code": 0.01,
                                                               "loss_m2000": 6.0},
                                "curves": {"iteration": [10, 20, 30], "r2": [value] * 3, "loss": [6.0] * 3}})
    return records


def test_the_closing_numbers_are_computed_from_the_runs_and_the_published_module():
    runs = fake_records({"holds": 0.99, "violated": 0.3, "adapted": 0.6, "inverse": 0.97, "inverse_holds": 0.8})
    numbers = table1_numbers(runs, PROCESSES)
    assert numbers["holds_ok"] == numbers["processes"] == 2 and numbers["between"] == 2
    assert (numbers["violated_runs"], numbers["near_third"], numbers["near_zero"], numbers["stuck"]) == (4, 4, 0, 0)
    assert math.isclose(numbers["adapted_low"], 0.605) and numbers["adapted_paper_low"] == min(
        published("r2", "adapted", p)[0] for p in PROCESSES)
    assert f"| identity | 0.30 ({published('r2', 'violated', 'identity')[0]:.2f}) | 0.30–0.31 |" in violated_markdown(
        runs, PROCESSES)


def test_a_number_of_the_closing_turns_when_the_data_turn():
    runs = fake_records({"holds": 0.99, "violated": 0.3, "adapted": 0.2, "inverse": 0.7, "inverse_holds": 0.9})
    assert table1_numbers(runs, PROCESSES)["between"] == 0
    bars = figure5a_means(summarise(runs, ("r2",)), PROCESSES)
    assert bars["inverse", "holds"] == 0.905 and bars["mlp", "violated"] == 0.305


def test_constraint_ratio_numbers_count_interior_optima_and_follow_the_inverse_encoders():
    from cldiv.synthetic.sweep_findings import constraint_ratio_numbers

    rows = {("identity", "mlp"): {0.0: (0.3, 0, 5), 0.5: (0.7, 0, 5), 1.0: (0.6, 0, 5)},
            ("identity", "inverse"): {0.0: (0.95, 0, 5), 1.0: (0.7, 0, 5)}}
    numbers = constraint_ratio_numbers(rows, ["identity"], [0.0, 0.5, 1.0])
    assert (numbers["mlp_one_low"], numbers["mlp_one_high"]) == (0.6, 0.6)
    assert numbers["adapted_low"] == published("r2", "adapted", "identity")[0]
    assert numbers["interior"] == 1 and (numbers["inverse_low_rho"], numbers["inverse_high_rho"]) == (0.95, 0.7)
    rows["identity", "mlp"][0.5] = (0.61, 0, 5)  # an interior mean within the floor (0.02) of an end is no optimum
    assert constraint_ratio_numbers(rows, ["identity"], [0.0, 0.5, 1.0])["interior"] == 0
    assert math.isnan(constraint_ratio_numbers(rows, ["identity"], [0.0, 0.5])["mlp_one_low"])  # rho = 1 not run


def test_the_lengths_table_shows_each_stored_length_and_where_the_point_settled():
    from cldiv.synthetic.sweep_findings import lengths_markdown

    def runs(iterations, r2s):
        return [{"config": {"iterations": iterations}, "metrics": {"r2": r2}} for r2 in r2s]

    lengths = [runs(8000, (0.95, 0.96, 0.97)), runs(16000, (0.70, 0.60, 0.80)), runs(32000, (0.45, 0.46, 0.44))]
    table = lengths_markdown(lengths, lengths[2]).splitlines()
    assert table[2] == "| 8000 | 0.96 | 0.95, 0.96, 0.97 |  |" and table[4] == "| 32000 | 0.45 | 0.45, 0.46, 0.44 | yes |"
    assert "yes" not in lengths_markdown(lengths, None)


def test_rerun_numbers_compare_with_the_published_value_and_the_mirrored_seeds_are_counted():
    from cldiv.synthetic.findings import rerun_numbers
    from cldiv.synthetic.studies import RERUN_CELLS, mirrored_numbers

    i = next(i for i, (column, p, changes) in enumerate(RERUN_CELLS) if (column, p) == ("holds", "patches"))
    target = published("r2", "holds", "patches")[0]
    numbers = rerun_numbers({i: ([target - 0.1], [target])}, {i: ([6.0], [5.9])})
    assert (numbers["patches_holds_small"], numbers["patches_holds_big"], numbers["patches_holds_agrees"]) == (
        target - 0.1, target, 1)
    assert numbers["patches_holds_loss_big"] == 5.9 and math.isnan(numbers["spiral_inverse_big"])  # not run
    assert mirrored_numbers([])["basin"] == 0 and math.isnan(mirrored_numbers([])["avoid_in_five"])


def test_the_patches_protocol_study_says_which_difference_moves_the_cell_and_which_rows_settled(tmp_path):
    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.convergence import longer_configs
    from cldiv.synthetic.findings import patches_ib_numbers
    from cldiv.synthetic.studies import patches_ib_protocol_configs, patches_ib_protocol_markdown

    def as_record(config, r2, curve=None):
        curve = curve or [r2] * 20
        return {"config": asdict(config), "metrics": {"r2": r2},
                "curves": {"iteration": [3 * (i + 1) for i in range(20)], "r2": curve, "loss": [6.0] * 20}}

    target = published("r2", "inverse", "patches")[0]
    means = [target - 0.2, target - 0.08, target - 0.03, target]  # paper, code's lr, code's Patches, both
    rows = [[as_record(c, m + 0.004 * c.seed, None if i else [m + 0.1] * 15 + [m + 0.08, m + 0.06, m + 0.04, m + 0.02, m + 0.004 * c.seed])
             for c in configs] for i, (configs, m) in enumerate(zip(patches_ib_protocol_configs("smoke", 3), means))]
    store = ResultStore(tmp_path)
    for config, run in zip(longer_configs(rows[3]), rows[3]):  # the code's protocol doubled: mean kept
        store.save(config, as_record(config, run["metrics"]["r2"] + 0.001), wall_time_s=1.0, device="cpu")
    numbers = patches_ib_numbers(rows, store)
    assert [numbers[f"pib_{name}"] for name in ("paper_lr3", "paper_lr4", "code_lr3", "code_lr4")] == pytest.approx(
        [m + 0.004 for m in means])
    assert numbers["pib_agree_code"] == 1  # the code's Patches at lr 1e-3: 0.03 below at sd 0.003, apart
    assert (numbers["pib_settled_paper"], numbers["pib_settled_code"]) == (1, 2)  # paper's at lr 1e-3: curves fall
    table = patches_ib_protocol_markdown(rows, store)
    assert "| R², 60 iterations |" in table and table.count("not run") == 3
    assert table.splitlines()[-1].split(" | ")[3:5] == [f"{means[3] + 0.005:.2f} ± 0.00 (3/3 converged)", "no"]


def test_the_block_order_study_shows_each_order_per_cell_and_which_agrees_with_the_published_value():
    from cldiv.synthetic.findings import block_order_numbers as findings_numbers
    from cldiv.synthetic.studies import BLOCK_ORDER_CELLS, block_order_configs, block_order_markdown

    def as_record(config, r2):
        return {"config": asdict(config), "metrics": {"r2": r2},
                "curves": {"iteration": [3 * (i + 1) for i in range(20)], "r2": [r2] * 20, "loss": [6.0] * 20}}

    targets = [published("r2", column, process)[0] for column, process in BLOCK_ORDER_CELLS]
    # violated Identity: the code's order 0.3 above the published value, the paper's at it; Spiral holds: the reverse
    offsets = [(0.3, 0.0), (0.0, -0.3)]
    rows = [[[as_record(c, target + offset + 0.002 * c.seed) for c in configs] for configs, offset in zip(cell, pair)]
            for cell, target, pair in zip(block_order_configs("smoke", 3), targets, offsets)]
    assert findings_numbers(rows) == {"order_cells": 2, "order_unconverged": 0, "order_agree_code": 1,
                                      "order_agree_paper": 1}
    rows[1][1] = rows[1][0]  # the paper's order now agrees on Spiral holds too
    assert findings_numbers(rows)["order_agree_paper"] == 2
    rows[0][1][0]["curves"]["r2"] = [0.01 * i for i in range(20)]  # a run still rising
    assert findings_numbers(rows)["order_unconverged"] == 1
    table = block_order_markdown(rows)
    assert table.splitlines()[0] == ("| cell | code's order (linear_relu_bn) | paper's order (linear_bn_relu) "
                                     "| published |")
    assert f"| identity violated | {targets[0] + 0.302:.2f} ± 0.00 (3/3 converged) |" in table


def test_group_sizes_are_compared_with_independent_anchors_by_the_scorecards_rule():
    from cldiv.synthetic.sweep_findings import group_size_r2, sharing_alike, sharing_markdown

    runs = [{"config": {"batch_size": 16, "anchor_groups": groups}, "metrics": {"r2": r2}}
            for groups, r2 in ((16, 0.2), (4, 0.3), (16, 0.25))]
    assert group_size_r2(runs) == {1: [0.2, 0.25], 4: [0.3]}
    alike = {1: [0.20, 0.22, 0.24], 4: [0.21, 0.23, 0.23], 8: [0.22, 0.24, 0.26]}
    assert sharing_alike(alike) == {4: True, 8: True}
    unlike = {**alike, 8: [0.90, 0.92, 0.94]}
    assert sharing_alike(unlike) == {4: True, 8: False}
    assert "| 8 | 0.92 ± 0.02 | 0.90–0.94 | no |" in sharing_markdown(unlike)
    assert sharing_alike({1: [0.2], 4: [0.3]}) == {}  # one run of independent anchors: nothing to compare with
    assert "| 4 | 0.30 ± 0.00 | 0.30 | not compared |" in sharing_markdown({1: [0.2], 4: [0.3]})


def test_the_loss_table_and_counts_say_at_which_number_of_negatives_the_published_losses_agree():
    from cldiv.synthetic.findings import holds_losses_measured_at_4000, loss_negatives_counts, loss_negatives_table

    def records(column, m2000, m4000):
        return [{"config": asdict(cell_config(column, "identity", seed, "smoke")),
                 "metrics": {"loss_m2000": m2000 + 0.001 * seed, "loss_m4000": m4000 + 0.001 * seed}}
                for seed in (0, 1, 2)]

    holds, violated = (published("final_loss", column, "identity")[0] for column in ("holds", "violated"))
    at_4000 = records("holds", holds - 0.66, holds) + records("violated", violated, violated + 0.6)
    counts = loss_negatives_counts(at_4000, ["identity"])
    assert (counts["holds_cells"], counts["holds_2000"], counts["holds_4000"]) == (1, 0, 1)
    assert math.isclose(counts["holds_gap"], 0.659) and (counts["violated_2000"], counts["violated_4000"]) == (1, 0)
    table = loss_negatives_table(at_4000, ["identity"])
    assert f"| holds | identity | {holds - 0.659:.3f} | {holds + 0.001:.3f} |" in table and table.count("| 4000 |") == 1

    at_2000 = records("holds", holds, holds + 0.66)
    assert (loss_negatives_counts(at_2000, ["identity"])["holds_2000"], loss_negatives_counts(at_2000, ["identity"])["holds_4000"]) == (1, 0)
    assert "| neither |" in loss_negatives_table(records("holds", 1.0, 2.0), ["identity"])
    violated_only = loss_negatives_counts(records("violated", 5.709, 6.3), ["identity"])
    assert violated_only["holds_cells"] == 0 and math.isnan(violated_only["holds_gap"])
    # the errata chapter's guard on its typed item 9: true, false, and no holds cells to tell
    assert holds_losses_measured_at_4000(at_4000, ["identity"]) is True
    assert holds_losses_measured_at_4000(at_2000, ["identity"]) is False
    assert holds_losses_measured_at_4000(records("violated", 5.709, 6.3), ["identity"]) is None


def test_the_errata_table_says_whether_a_variant_leaves_the_main_cells_range_and_the_conventions_are_measured():
    from cldiv.synthetic.findings import convention_numbers, errata_table

    def run(column, r2, mcc=0.5, seed=0):
        return {"config": asdict(cell_config(column, "identity", seed, "smoke")),
                "metrics": {"r2": r2, "r2_in_sample": r2 + 0.01, "mcc": mcc, "ape": 0.2, "ape_code": 0.2 * 1999 / 4000,
                            "final_loss": 6.0, "train_loss_last": 6.1},
                "curves": {"iteration": [50, 75, 100], "loss": [6.0] * 3, "r2": [r2] * 3}}

    main = [run("holds", 0.99, seed=s) for s in range(3)]
    variants = [("lr 1e-4", "holds", "identity", {}), ("paper order", "holds", "identity", {})]
    pairs = [(0, None, None), (1, None, None)]
    table = errata_table(variants, pairs, [run("holds", 0.99), run("holds", 0.99)],
                         [run("holds", 0.995), run("holds", 0.60)], main).splitlines()
    assert table[2].endswith("| yes (0.97–1.01) |") and table[3].endswith("| **no** (0.97–1.01) |")
    assert "| lr 1e-4 | identity, holds | 0.990 ± 0.000 | 0.990 | 0.995 | 0.500 | 0.500 |" in table[2]
    numbers = convention_numbers(main)
    assert math.isclose(numbers["r2_gap"], 0.01) and math.isclose(numbers["loss_gap"], 0.1)
    assert math.isclose(numbers["ape_ratio_low"], 1999 / 4000) and numbers["ape_ratio_expected"] == (main[0]["config"]["n_eval"] - 1) / (2 * main[0]["config"]["n_eval"])


def test_table7_comparison_reads_the_codes_metric_and_the_codes_sign_rule_at_nine():
    from cldiv.published import TABLE7_R2
    from cldiv.synthetic.sweep_findings import table7_comparison, table7_markdown

    def runs(value: float) -> list[dict]:
        return [{"config": {"iterations": 100}, "metrics": {"r2": 0.0, "r2_in_sample": value + e}} for e in (-0.01, 0.01)]

    published = TABLE7_R2["monomial"]
    points = {("monomial", "paper", 0): runs(published[0][0]),            # agrees
              ("monomial", "paper", 4): runs(published[4][0] + 0.3),      # far off
              ("monomial", "paper", 9): runs(published[9][0] + 0.3),      # the paper's law: not Table 7's point
              ("monomial", "code", 9): runs(published[9][0])}             # the code's coin: compared
    rows = table7_comparison(points)
    assert [(r["d_fixed"], r["agrees"]) for r in rows] == [(0, True), (4, False), (9, True)]
    assert rows[0]["ours"][2] == 2 and abs(rows[0]["ours"][0] - published[0][0]) < 1e-12
    table = table7_markdown(rows)
    assert "| monomial | 0.990 / 0.990 ✓ |" in table and f"{published[4][0]:.3f} / {published[4][0] + 0.3:.3f} |" in table


def test_table7_protocol_rows_show_the_stored_lengths_and_seeds_of_the_codes_protocol(tmp_path):
    from test_scorecard import write_run  # tests/ is on sys.path under pytest

    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.sweep_findings import table7_protocol_markdown, table7_protocol_rows
    from cldiv.synthetic.sweeps import table7_code_config

    write_run(tmp_path, table7_code_config("injective_linear", 2, iterations=100), r2_in_sample=0.19, train_loss_last=5.45)
    write_run(tmp_path, table7_code_config("injective_linear", 2, seed=1, iterations=100), r2_in_sample=0.21,
              train_loss_last=5.47)
    write_run(tmp_path, table7_code_config("injective_linear", 2, iterations=5000), r2_in_sample=0.02, train_loss_last=4.81)
    write_run(tmp_path, table7_code_config("injective_linear", 9, iterations=100), r2_in_sample=0.48, train_loss_last=6.0)
    rows = table7_protocol_rows(ResultStore(tmp_path))
    assert [(r["d_fixed"], r["iterations"], r["runs"]) for r in rows] == [(2, 100, 2), (2, 5000, 1), (9, 100, 1)]
    assert rows[0]["r2_in_sample"] == pytest.approx(0.20) and rows[0]["r2_sd"] == pytest.approx(0.01)
    assert rows[0]["lowest_loss"] == 6.0 and rows[0]["reaches_code_loss"] is None  # the fake curve is flat at 6
    assert not rows[0]["agrees"]  # two runs: Welch's test against Table 7's 0.014 ± 0.003
    table = table7_protocol_markdown(rows)
    assert "| process | d_fixed | Table 7 | R² at 100 steps (loss), 1–2 runs | R² at 5000 steps (loss), 1 run |" in table
    assert "| injective linear | 2 | 0.014 ± 0.003 | 0.200 ± 0.010 (5.46) | 0.020 (4.81) |" in table
    assert "| injective linear | 9 | 0.299 ± 0.047 | 0.480 (6.00) |  |" in table


def test_the_codes_log_is_set_beside_our_lowest_loss_in_100_steps():
    from cldiv.published import TABLE7_CODE_LOG
    from cldiv.synthetic.sweep_findings import table7_length_numbers, table7_log_markdown

    def row(d: int, n: int, lowest: float, last: float, reaches=None) -> dict:
        return {"process": "injective_linear", "d_fixed": d, "iterations": n, "agrees": False, "r2_in_sample": 0.5,
                "train_loss": last, "lowest_loss": lowest, "highest_r2": 0.7, "r2_curve": (0.3, 0.7),
                "reaches_code_loss": reaches}

    code = TABLE7_CODE_LOG["injective_linear"]
    rows = [row(0, 100, 7.35, 7.36), row(2, 100, 5.45, 5.45), row(10, 100, code[10][1] + 0.01, 4.81),
            row(2, 5000, 4.81, code[2][0] + 0.004, reaches=1400), row(9, 5000, 4.80, code[9][0] - 0.002, reaches=800)]
    numbers = table7_length_numbers(rows)
    assert (numbers["log_points"], numbers["log_below"]) == (3, 2)  # d_fixed = 10 is within the loss floor
    assert (numbers["reach_low"], numbers["reach_high"]) == (800, 1400)
    assert numbers["final_gap"] == pytest.approx(0.004)
    assert numbers["logged_r2_zero"] == code[0][2] and numbers["highest_r2_zero"] == 0.7
    table = table7_log_markdown(rows)
    assert table.splitlines()[0] == "| process | loss | d = 0 | d = 2 | d = 10 |"
    assert f"| injective linear | the code's log, mean | {code[0][1]:.3f} | {code[2][1]:.3f} | {code[10][1]:.3f} |" in table
    assert "| injective linear | ours, lowest in 100 steps | 7.350 | 5.450 |" in table
    assert f"| injective linear | ours, last after 5000 steps |  | {code[2][0] + 0.004:.3f} |  |" in table


def test_the_table7_code_command_shows_stored_runs_beside_table7(tmp_path, monkeypatch, capsys):
    from test_scorecard import write_run  # tests/ is on sys.path under pytest

    from cldiv.book.cli import main
    from cldiv.synthetic.sweeps import table7_code_config

    monkeypatch.setenv("CLDIV_RESULTS", str(tmp_path))
    write_run(tmp_path, table7_code_config("monomial", 9, iterations=100), r2_in_sample=0.43, train_loss_last=4.81)
    main(["table7-code", "--processes", "monomial", "--d-fixed", "9"])  # stored: nothing trains
    assert "| monomial | 9 | 0.425 ± 0.056 | 0.430 (4.81) |" in capsys.readouterr().out


def test_table7_length_counts_compare_the_points_run_for_both_lengths():
    from cldiv.synthetic.sweep_findings import table7_length_counts

    def row(d: int, n: int, agrees: bool) -> dict:
        return {"process": "injective_linear", "d_fixed": d, "iterations": n, "agrees": agrees}

    rows = [row(0, 100, False), row(2, 100, False), row(9, 100, True), row(2, 5000, True), row(9, 5000, False)]
    assert table7_length_counts(rows) == {"points_100": 3, "agree_100": 1, "both": 2, "both_agree_100": 1,
                                          "both_agree_5000": 1}


def test_table8_comparison_counts_how_close_the_means_are():
    from cldiv.published import TABLE8_R2
    from cldiv.synthetic.sweep_findings import table8_comparison, table8_counts, table8_markdown

    def runs(value: float) -> list[dict]:
        return [{"metrics": {"r2": value}}]

    published = TABLE8_R2["spiral", "inverse"]
    points = {("spiral", "inverse", 0.0): runs(published[0] - 0.01), ("spiral", "inverse", 0.5): runs(published[5] + 0.08),
              ("spiral", "inverse", 1.0): runs(published[10] - 0.3), ("spiral", "inverse", 0.25): runs(0.5)}  # not in Table 8
    rows = table8_comparison(points)
    assert [r["rho"] for r in rows] == [0.0, 0.5, 1.0]
    counts = table8_counts(rows)
    assert (counts["points"], counts["within_near"], counts["within_far"]) == (3, 1, 2)
    assert "| spiral / inverse | 1.00 / 0.99 | 0.99 / 1.07 | 0.57 / 0.27 |" in table8_markdown(rows)


def test_table7_length_numbers_read_the_two_points_errata_item_13_cites():
    from cldiv.published import TABLE7_R2
    from cldiv.synthetic.sweep_findings import table7_length_numbers

    def row(d: int, n: int, r2: float, curve=(0.5, 0.4)) -> dict:
        return {"process": "injective_linear", "d_fixed": d, "iterations": n, "agrees": False, "r2_in_sample": r2,
                "train_loss": 4.8, "r2_curve": curve, "lowest_loss": 4.8, "highest_r2": r2, "reaches_code_loss": None}

    numbers = table7_length_numbers([row(2, 100, 0.19), row(2, 5000, 0.03), row(9, 5000, 0.39, (0.47, 0.39))])
    assert (numbers["short"], numbers["long"], numbers["nine"], numbers["nine_first"]) == (0.19, 0.03, 0.39, 0.47)
    assert numbers["nine_published"] == TABLE7_R2["injective_linear"][9][0] and numbers["both"] == 1
    assert math.isnan(table7_length_numbers([])["nine"])


def test_table10_apes_and_table11_loss_order_are_compared_where_both_tables_have_points():
    from cldiv.published import TABLE10_APE, TABLE11_LOSS
    from cldiv.synthetic.sweep_findings import (loss_order, table8_comparison, table8_counts, table8_markdown,
                                                table11_order_markdown, table11_order_rows)

    def runs(ape: float, loss: float) -> list[dict]:
        return [{"metrics": {"ape_code": ape, "final_loss": loss}}]

    points = {("spiral", "mlp", 0.0): runs(TABLE10_APE["spiral", "mlp"][0] + 0.01, 3.4),
              ("spiral", "inverse", 0.0): runs(0.5, 2.6),  # the MLP's loss is higher: the order flips
              ("spiral", "mlp", 1.0): runs(0.15, 3.27), ("spiral", "inverse", 1.0): runs(0.15, 3.26),
              ("spiral", "mlp", 0.2): runs(0.2, 3.0)}  # not in Tables 10-11
    ape = table8_comparison(points, "ape_code")
    assert [(r["encoder"], r["rho"]) for r in ape] == [("mlp", 0.0), ("mlp", 1.0), ("inverse", 0.0), ("inverse", 1.0)]
    counts = table8_counts(ape, near=0.02, far=0.05)  # the inverse encoder misses by 0.47 at rho = 0, 0.04 at 1
    assert (counts["within_near"], counts["within_far"]) == (2, 3)
    assert "| spiral / mlp | 0.257 / 0.267 | 0.156 / 0.150 |" in table8_markdown(ape, digits=3)
    order = table11_order_rows(points)
    published_gap = TABLE11_LOSS["spiral", "mlp"][0] - TABLE11_LOSS["spiral", "inverse"][0]
    assert [(r["rho"], r["agrees"]) for r in order] == [(0.0, False), (1.0, False)]  # -0.93 published: MLP lower
    assert loss_order(published_gap) == "MLP" and loss_order(0.01) == "neither" and loss_order(0.8) == "inverse"
    assert "| spiral | -1.00 / +0.80 | -0.93 / +0.01 |" in table11_order_markdown(order)
    with pytest.raises(ValueError, match="metric"):
        table8_comparison(points, "mcc")
