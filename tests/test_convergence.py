"""Convergence verdicts of training runs (cldiv/synthetic/convergence.py)."""

import pytest

from cldiv.synthetic.convergence import R2_TOLERANCE, convergence


def record(r2, loss, iterations=1000):
    steps = len(r2)
    return {"config": {"iterations": iterations},
            "curves": {"iteration": [iterations * (i + 1) // steps for i in range(steps)], "r2": r2, "loss": loss}}


def group(finals, iterations, d_fixed=8):
    """The runs of one 10-D monomial point, one per seed, each with a flat curve at its final R^2."""
    from dataclasses import asdict

    from cldiv.synthetic.config import SyntheticConfig

    out = []
    for seed, final in enumerate(finals):
        config = SyntheticConfig(process="monomial", latent_dim=10, d_fixed=d_fixed, seed=seed, iterations=iterations)
        out.append({**record([final] * 20, [6.0] * 20, iterations), "config": asdict(config), "metrics": {"r2": final}})
    return out


def test_a_settled_run_has_converged():
    # 20 logged points: the last quarter (iterations > 750) holds the last five
    verdict = convergence(record([0.5, 0.9] + [0.99] * 18, [7.0, 6.5] + [6.2] * 13 + [6.25, 6.18, 6.22, 6.21, 6.19]))
    assert verdict.converged and verdict.r2_change == 0.0 and abs(verdict.loss_drop) < 0.02


@pytest.mark.parametrize("rise", [R2_TOLERANCE + 0.005, -(R2_TOLERANCE + 0.005)])
def test_held_out_r2_still_moving_over_the_last_quarter_is_not_converged(rise):
    r2 = [0.5] * 7 + [0.5 + rise / 3, 0.5 + 2 * rise / 3, 0.5 + rise]
    verdict = convergence(record(r2, [6.0] * 10))
    assert not verdict.converged and verdict.r2_change == pytest.approx(rise)


def test_a_loss_still_falling_beyond_its_noise_is_not_converged_but_noise_alone_is():
    falling = [6.5] * 15 + [6.31, 6.30, 6.21, 6.20, 6.19]  # last quarter: 6.305 -> 6.20, noise ~0.01
    verdict = convergence(record([0.9] * 20, falling))
    assert not verdict.converged and verdict.loss_drop == pytest.approx(0.105)
    noisy = [6.5] * 15 + [6.30, 6.10, 6.25, 6.15, 6.20]    # a drop of 0.0 to 0.05 inside a noise of ~0.1
    assert convergence(record([0.9] * 20, noisy)).converged


def test_with_few_logged_points_only_r2_is_judged():
    verdict = convergence(record([0.2, 0.9, 0.9], [7.0, 6.5, 6.0], iterations=30))
    assert verdict.converged and verdict.loss_drop != verdict.loss_drop  # nan: too few points


def test_a_settled_run_whose_held_out_r2_jitters_has_converged_a_slow_drift_has_not():
    # last quarter (iterations > 750 of 20 points): 0.03, 0.05, 0.02, 0.04, 0.01, 0.058 -- end minus start
    # is 0.028, more than the tolerance, but the Theil-Sen trend is flat
    jitter = [0.9] * 14 + [0.03, 0.05, 0.02, 0.04, 0.01, 0.058]
    verdict = convergence(record(jitter, [6.0] * 20))
    assert verdict.converged and abs(verdict.r2_change) < R2_TOLERANCE
    drift = [0.9] * 14 + [0.30, 0.29, 0.28, 0.27, 0.26, 0.25]
    assert not convergence(record(drift, [6.0] * 20)).converged


def test_the_loss_gap_is_the_eval_mode_final_loss_minus_the_late_training_mode_loss():
    from cldiv.synthetic.convergence import SHORTCUT_GAP, batch_statistics_shortcut, loss_gap

    honest = {**record([0.6] * 8, [3.0] * 6 + [2.8, 2.6]), "metrics": {"final_loss": 2.5}}  # last quarter: 2.8, 2.6
    assert loss_gap(honest) == pytest.approx(-0.2) and not batch_statistics_shortcut(honest)
    shortcut = {**record([0.6] * 4 + [0.2] * 4, [3.0] * 6 + [0.1, 0.1]), "metrics": {"final_loss": 3.4}}
    assert loss_gap(shortcut) == pytest.approx(3.3) and 3.3 > SHORTCUT_GAP and batch_statistics_shortcut(shortcut)


def test_one_spike_in_a_settled_curve_does_not_make_it_moving():
    # a small-batch run settled at 0.70 whose held-out R^2 dips to -1.0 at the last quarter's second
    # evaluation: a least-squares line through the last quarter rises by 0.73, the Theil-Sen line is flat
    spiked = [0.9] * 14 + [0.70, -1.0, 0.70, 0.70, 0.70, 0.70]
    verdict = convergence(record(spiked, [6.0] * 20))
    assert verdict.converged and verdict.r2_change == pytest.approx(0.0)
    sliding = [0.9] * 14 + [0.70, -1.0, 0.66, 0.62, 0.58, 0.54]
    assert not convergence(record(sliding, [6.0] * 20)).converged


def test_the_longer_runs_of_a_group_are_its_configs_at_twice_the_iterations_and_only_if_one_still_moves(tmp_path):
    from dataclasses import asdict

    from cldiv.runs.store import ResultStore
    from cldiv.config import with_overrides
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.synthetic.convergence import LONGER, doubling_steps, r2_converged

    def run(seed, r2, iterations=1000):
        config = SyntheticConfig(process="monomial", latent_dim=10, d_fixed=8, seed=seed, iterations=iterations)
        return config, {**record(r2, [6.0] * len(r2), iterations), "config": asdict(config), "metrics": {"r2": r2[-1]}}

    moving = [run(0, [0.1] * 20), run(1, [0.1] * 14 + [0.1, 0.09, 0.08, 0.07, 0.06, 0.04])]
    settled = [run(0, [0.9] * 20)]
    store = ResultStore(tmp_path)
    assert doubling_steps([r for _, r in settled], store) == [] and LONGER == 2
    runs, configs, stored = doubling_steps([r for _, r in moving], store)[0]
    assert configs == [with_overrides(c, iterations=2000) for c, _ in moving] and stored == []
    assert r2_converged(runs) == "0.07 ± 0.03 (1/2 converged)"
    store.save(configs[0], run(0, [0.1] * 20, 2000)[1], wall_time_s=1.0, device="cpu")
    assert [r["config"]["iterations"] for r in doubling_steps(runs, store)[0][2]] == [2000]


def test_the_longer_runs_table_says_whether_the_longer_runs_moved_the_r2(tmp_path):
    from cldiv.config import with_overrides
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.synthetic.convergence import longer_markdown, r2_change

    short = group([0.40, 0.44, 0.42], 1000)
    configs = [with_overrides(SyntheticConfig(**r["config"]), iterations=2000) for r in short]
    same, moved = group([0.43, 0.41, 0.45], 2000), group([0.60, 0.62, 0.61], 2000)
    # a fall from 0.96 to 0.70 that two seeds of three make and the third does not: Welch cannot confirm it
    unclear = (group([0.95, 0.96, 0.97], 1000), group([0.62, 0.85, 0.63], 2000))
    assert [r2_change(short, same), r2_change(short, moved), r2_change(*unclear)] == ["no", "yes", "not clear"]
    table = longer_markdown([("a", (short, configs, same), "cmd a"), ("b", (short, configs, moved), "cmd b"),
                             ("c", (short, configs, []), "cmd c"), ("d", (unclear[0], configs, unclear[1]), "cmd d")],
                            "point")
    rows = table.splitlines()
    assert rows[2].endswith("| no |  |") and rows[3].endswith("| yes |  |") and rows[5].endswith("| not clear |  |")
    assert "`cmd c`" in rows[4] and rows[4].endswith("|  |  |")
    assert len(rows) == 6  # the table only: the chapters write the sentences


def test_a_cell_has_converged_when_its_doubled_runs_leave_its_mean_and_only_then_once_they_are_stored(tmp_path):
    from dataclasses import asdict

    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.synthetic.convergence import doubling_steps, longer_configs, settled

    def runs(curves, iterations, d_fixed):
        out = []
        for seed, r2 in enumerate(curves):
            config = SyntheticConfig(process="monomial", latent_dim=10, d_fixed=d_fixed, seed=seed, iterations=iterations)
            out.append({**record(r2, [6.0] * len(r2), iterations), "config": asdict(config), "metrics": {"r2": r2[-1]}})
        return out

    flat = lambda level: [level] * 20
    wobbling = [0.40] * 14 + [0.40, 0.39, 0.38, 0.37, 0.36, 0.35]   # one seed drifts down by 0.05
    moving = runs([flat(0.40), wobbling, flat(0.42)], 1000, d_fixed=8)
    quiet = runs([flat(0.01), flat(0.02), flat(0.01)], 1000, d_fixed=2)  # every curve flat: a plateau
    assert [settled(moving), settled(quiet)] == [False, True]       # no store: the run verdicts decide
    store = ResultStore(tmp_path)
    assert [settled(moving, store), settled(quiet, store)] == [False, True]  # doubled runs not stored yet

    def save(group, finals):
        for config, r2 in zip(longer_configs(group), finals):
            store.save(config, runs([flat(r2)], 2000, config.d_fixed)[0] | {"config": asdict(config)},
                       wall_time_s=1.0, device="cpu")

    save(moving, [0.41, 0.37, 0.42])  # the mean keeps its level: the wobble was a wobble
    save(quiet, [0.09, 0.08, 0.11])   # every seed left the plateau later: the flat curves did not show it
    assert [settled(moving, store), settled(quiet, store)] == [True, False]
    assert doubling_steps(moving, store) and doubling_steps(quiet, store)


def test_the_loss_trend_is_falling_rising_or_flat_by_the_same_rule_on_both_sides():
    from cldiv.synthetic.convergence import loss_trend

    falling = [6.31, 6.30, 6.21, 6.20]                   # drop 0.10, standard error ~0.007
    assert loss_trend(falling) == (pytest.approx(0.10), "falling")
    assert loss_trend(falling[::-1]) == (pytest.approx(-0.10), "rising")
    assert loss_trend([6.30, 6.10, 6.25, 6.15])[1] == "no trend"   # a change of 0.0 inside a noise of ~0.1
    assert loss_trend([6.30, 6.31, 6.32])[1] == "not judged"       # fewer than four points


def test_unsettled_runs_are_listed_with_what_moved_and_counted_when_only_r2_moved():
    from cldiv.synthetic.convergence import convergence, unsettled_markdown, what_moved

    settled = record([0.9] * 20, [6.2] * 20)
    drifting = record([0.9] * 15 + [0.88, 0.87, 0.86, 0.85, 0.84], [6.2, 6.21] * 10)  # R² drifts, the loss has no trend
    spiking = record([0.9] * 15 + [0.88, 0.87, 0.86, 0.85, 0.84], [6.2] * 17 + [6.6, 6.7, 6.8])
    falling = record([0.9] * 20, [6.5] * 15 + [6.31, 6.30, 6.21, 6.20, 6.19])
    assert [what_moved(convergence(r)) for r in (settled, drifting, spiking, falling)] == [
        "", "R² only", "R², loss rising", "loss falling"]
    for r in (settled, drifting, spiking, falling):
        r["metrics"] = {"r2": r["curves"]["r2"][-1]}
    table = unsettled_markdown([("settled", settled), ("drifting", drifting), ("spiking", spiking),
                                ("falling", falling)]).splitlines()
    assert [line.split(" | ")[0] for line in table[2:5]] == ["| drifting", "| spiking", "| falling"]
    assert table[2].endswith("| 0.840 | -0.050 | -0.002 | R² only |")
    assert len(table) == 5  # the table only: the chapters say what "R² only" means
    assert unsettled_markdown([("settled", settled)]) == ""


def test_a_run_with_too_few_losses_to_judge_is_not_counted_as_moving_in_r2_only():
    from cldiv.synthetic.convergence import convergence, unsettled_markdown, what_moved

    short = record([0.2, 0.5, 0.9], [7.0, 6.5, 6.0], iterations=30)
    short["metrics"] = {"r2": 0.9}
    assert what_moved(convergence(short)) == "R², loss not judged"
    assert unsettled_markdown([("short", short)]).splitlines()[-1].endswith("| R², loss not judged |")


def test_a_group_that_moved_when_doubled_is_doubled_again_until_a_doubling_keeps_its_mean(tmp_path):
    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.synthetic.convergence import doubling_steps, settled_runs

    store = ResultStore(tmp_path)

    def save(stored_runs):
        for r in stored_runs:
            store.save(SyntheticConfig(**r["config"]), r, wall_time_s=1.0, device="cpu")

    # every curve flat, but the mean creeps up when doubled (0.01 -> 0.09 -> 0.13), then stays
    short = group([0.01, 0.02, 0.01], 1000)
    chain = [group([0.09, 0.08, 0.10], 2000), group([0.13, 0.14, 0.12], 4000), group([0.14, 0.13, 0.13], 8000)]
    save(chain[0])
    assert settled_runs(short, store) is None   # moved once; the doubled runs' flat curves do not settle it
    assert [len(s) for s in doubling_steps(short, store)] == [3, 3]
    save(chain[1])
    steps = doubling_steps(short, store)
    assert [(s[0][0]["config"]["iterations"], s[1][0].iterations, len(s[2])) for s in steps] == \
        [(1000, 2000, 3), (2000, 4000, 3), (4000, 8000, 0)]
    assert settled_runs(short, store) is None
    save(chain[2])
    shown = lambda group: [(r["config"]["iterations"], r["metrics"]["r2"]) for r in group]
    assert shown(settled_runs(short, store)) == shown(chain[1])  # 4000 -> 8000 kept the mean: settled at 4000
    assert len(doubling_steps(short, store)) == 3 and shown(doubling_steps(short, store)[0][2]) == shown(chain[0])
    assert settled_runs(chain[2], store) == chain[2] and doubling_steps(chain[2], store) == []


def test_a_sweep_table_shows_a_point_at_its_settled_length_marked_and_named_below(tmp_path):
    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.runs.doubling import SETTLED_LATER_MARK
    from cldiv.synthetic.sweeps import markdown_summary, settled_records

    runs = lambda d_fixed, finals, iterations: group(finals, iterations, d_fixed)  # noqa: E731
    store = ResultStore(tmp_path)
    moving, steady = runs(2, [0.01, 0.02, 0.01], 1000), runs(4, [0.02, 0.01, 0.02], 1000)
    for longer in (runs(2, [0.09, 0.08, 0.10], 2000), runs(2, [0.10, 0.09, 0.09], 4000)):
        for r in longer:
            store.save(SyntheticConfig(**r["config"]), r, wall_time_s=1.0, device="cpu")
    shown = settled_records("progressive_violation", moving + steady, store)
    assert sorted((r["config"]["d_fixed"], r["config"]["iterations"]) for r in shown) == [(2, 2000)] * 3 + [(4, 1000)] * 3
    table = markdown_summary("progressive_violation", shown, store=store)
    assert f"0.09 ± 0.01{SETTLED_LATER_MARK} | 0.02 ± 0.00 |" in table and "All 2 points have converged" in table
    assert "other points' 1000 iterations" in table and "monomial / paper, d_fixed = 2 at 2000 iterations." in table
    assert SETTLED_LATER_MARK not in markdown_summary("progressive_violation", moving + steady, store=store)


def test_a_cell_whose_mean_moves_the_same_way_at_every_doubling_is_named_as_still_drifting(tmp_path):
    from cldiv.runs.doubling import drifting
    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.synthetic.convergence import doubling_steps, longer_markdown

    assert drifting([(1, 0.6), (2, 0.5), (4, 0.4)]) and drifting([(1, 0.1), (2, 0.2), (4, 0.3), (8, 0.5)])
    assert not drifting([(1, 0.6), (2, 0.5)]) and not drifting([(1, 0.6), (2, 0.5), (4, 0.55)])
    store = ResultStore(tmp_path)
    short = group([0.60, 0.61, 0.59], 1000)   # flat curves; the mean falls by 0.1 at each doubling
    chain = [group([0.50, 0.51, 0.49], 2000), group([0.40, 0.41, 0.39], 4000), group([0.40, 0.39, 0.41], 8000)]

    def table():
        return longer_markdown([("p", step, "cmd") for step in doubling_steps(short, store)], "point")

    for runs in chain[0]:
        store.save(SyntheticConfig(**runs["config"]), runs, wall_time_s=1.0, device="cpu")
    assert "drifting" not in table()   # one doubling is no trend
    for runs in chain[1]:
        store.save(SyntheticConfig(**runs["config"]), runs, wall_time_s=1.0, device="cpu")
    assert table().endswith("| drifting: 0.60 at 1000 it → 0.40 at 4000 it, down at each doubling |")
    for runs in chain[2]:   # the third doubling keeps the mean: settled at 4000, not drifting
        store.save(SyntheticConfig(**runs["config"]), runs, wall_time_s=1.0, device="cpu")
    assert "Still drifting" not in table() and table().count("| yes |") == 2


def test_a_cell_not_settled_whose_runs_swing_between_states_is_named_as_switching(tmp_path):
    from cldiv.runs.store import ResultStore
    from cldiv.synthetic.config import SyntheticConfig
    from cldiv.synthetic.convergence import SWITCH_SPAN, doubling_steps, late_span, longer_markdown

    short = group([0.96, 0.97, 0.95], 1000)   # flat curves
    store = ResultStore(tmp_path)
    longer = group([0.5, 0.6, 0.55], 2000)
    swing = [0.99] * 10 + [0.99, 0.4, 0.5, 0.99, 0.99, 0.6, 0.5, 0.5, 0.5, 0.5]   # spans 0.59 late
    longer[0]["curves"]["r2"] = swing
    longer[1]["curves"]["r2"] = [0.6] * 10 + [0.6 - SWITCH_SPAN + 0.01] + [0.6] * 9   # just under the span
    for runs in longer:
        store.save(SyntheticConfig(**runs["config"]), runs, wall_time_s=1.0, device="cpu")
    assert late_span(longer[0]) == pytest.approx(0.59) and late_span(longer[2]) == 0.0

    def table():
        return longer_markdown([("p", step, "cmd") for step in doubling_steps(short, store)], "point")

    assert "| yes |" in table()
    assert table().endswith("| 1 of 3 runs switch states (R² spans 0.59 over the last half) |")
    settled = group([0.96, 0.96, 0.95], 2000)   # the same cell, but a doubling that kept its mean
    settled[0]["curves"]["r2"] = swing
    other = ResultStore(tmp_path / "other")
    for runs in settled:
        other.save(SyntheticConfig(**runs["config"]), runs, wall_time_s=1.0, device="cpu")
    assert "Switching" not in longer_markdown([("p", step, "cmd") for step in doubling_steps(short, other)], "point")


def test_a_table1_cell_is_shown_at_the_shortest_length_at_which_it_settled_marked_and_named_below(tmp_path):
    from dataclasses import asdict

    from cldiv.runs.store import ResultStore
    from cldiv.runs.verdicts import settle
    from cldiv.synthetic.convergence import settled_runs
    from cldiv.runs.doubling import NOT_CONVERGED_MARK, SETTLED_LATER_MARK
    from cldiv.synthetic.table1 import cell_config, markdown_table, summarise

    store = ResultStore(tmp_path)

    def cell(finals, iterations, save=True):
        runs = []
        for seed, final in enumerate(finals):
            config = cell_config("violated", "identity", seed, "smoke", iterations=iterations)
            runs.append({**record([final] * 20, [6.0] * 20, iterations), "config": asdict(config),
                         "metrics": {"r2": final}})
            if save:
                store.save(config, runs[-1], wall_time_s=1.0, device="cpu")
        return runs

    short = cell([0.05, 0.06, 0.05], 1000, save=False)
    cell([0.25, 0.24, 0.26], 2000)                       # doubling moved the mean: not settled at 1000
    found = {("violated", "identity"): ("smoke", short)}
    shown, later = settle(found, store, settled_runs)
    assert shown == found and later == set()             # 2000 not yet doubled: nothing settled to show
    assert NOT_CONVERGED_MARK in markdown_table(summarise(short, store=store), ["identity"], ["violated"])
    cell([0.25, 0.25, 0.25], 4000)                       # 2000 -> 4000 kept the mean: settled at 2000
    shown, later = settle(found, store, settled_runs)
    runs = shown["violated", "identity"][1]
    assert later == {("violated", "identity")} and [r["config"]["iterations"] for r in runs] == [2000] * 3
    table = markdown_table(summarise(runs, store=store), ["identity"], ["violated"], trained_longer=later)
    assert f"0.25 ± 0.01 {SETTLED_LATER_MARK}" in table and NOT_CONVERGED_MARK not in table
    assert table.endswith("identity violated at 2000 iterations.")
