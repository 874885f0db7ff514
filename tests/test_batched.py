"""The batched trainer (cldiv/synthetic/batched.py): the per-run trainer's results, many runs at once."""

import json

import pytest

from cldiv.synthetic.batched import (DeadlinePassed, estimated_bytes, group_key, plan_groups, run_batched, train_batched)
from cldiv.runs.store import ResultStore
from cldiv.synthetic.table1 import cell_config
from cldiv.synthetic.train import train

TINY = dict(batch_size=32, n_negatives=32, iterations=4, eval_every=1, n_eval=128)


def equal_to_rounding(batched, single):
    """The first recorded loss is the loss before any update: equal up to summation order. Adam's
    first steps are close to lr * sign(gradient), so a rounding-level difference in a near-zero
    gradient moves a weight by ~lr: after 4 steps the metrics agree to 1e-2 (losses: 1%), not to 1e-6."""
    assert batched["curves"]["iteration"] == single["curves"]["iteration"]
    assert batched["curves"]["loss"][0] == pytest.approx(single["curves"]["loss"][0], rel=1e-5)
    for name in ("r2", "mcc", "ape", "final_loss", "train_loss_last"):
        assert batched["metrics"][name] == pytest.approx(single["metrics"][name], abs=1e-2, rel=1e-2), name


@pytest.mark.parametrize("column, processes", [
    ("holds", ("linear", "spiral")),              # MLP, observations of widths 7 and 3 in one group
    ("violated", ("identity", "patches")),
    ("inverse", ("spiral",)),                     # BatchNorm-free encoders, stacked with torch.func
    ("inverse", ("linear",)),
    ("inverse_holds", ("patches",)),
])
@pytest.mark.parametrize("order", ["linear_bn_relu", "linear_relu_bn"])
def test_batched_runs_equal_per_run_training_in_every_column(column, processes, order):
    configs = [cell_config(column, p, seed, "smoke", mlp_order=order, **TINY) for p in processes for seed in (0, 1)]
    [group] = plan_groups(configs, memory_bytes=1 << 40)
    assert group == configs
    for config, result in zip(configs, train_batched(configs)):
        equal_to_rounding(result, train(config, device="cpu"))


def test_hidden_widths_and_a_negative_batch_of_another_size_are_honoured():
    configs = [cell_config("violated", "identity", seed, "smoke", hidden_widths=(16, 32), **{**TINY, "n_negatives": 48})
               for seed in (0, 1)]
    for config, result in zip(configs, train_batched(configs)):
        equal_to_rounding(result, train(config, device="cpu"))


def test_runs_of_different_shapes_go_to_different_groups_and_are_refused_together():
    narrow = cell_config("holds", "identity", 0, "smoke", hidden_widths=(8,))
    wide = cell_config("holds", "identity", 0, "smoke", hidden_widths=(16,))
    spiral, patches = (cell_config("inverse", p, 0, "smoke") for p in ("spiral", "patches"))
    assert len({group_key(c) for c in (narrow, wide)}) == 2
    assert len({group_key(c) for c in (spiral, patches)}) == 2  # each inverse encoder its own architecture
    assert len(plan_groups([narrow, wide, spiral, patches], memory_bytes=1 << 40)) == 4
    with pytest.raises(ValueError, match="must agree on .*hidden_widths"):
        train_batched([narrow, wide])


def test_support_corrected_runs_are_refused_with_the_allowed_loss():
    with pytest.raises(ValueError, match="loss='infonce' only; got loss='support_corrected'"):
        train_batched([cell_config("adapted", "identity", 0, "smoke")])


def test_groups_are_split_to_fit_the_memory():
    configs = [cell_config("holds", "identity", seed, "paper") for seed in range(5)]
    per_run = estimated_bytes(configs[0])
    assert 50e6 < per_run < 500e6  # activations of 6000 rows x 1027 units and three 2000 x 2001 matrices
    assert [len(g) for g in plan_groups(configs, memory_bytes=int(4.5 * per_run), share=1.0)] == [4, 1]
    assert [len(g) for g in plan_groups(configs, memory_bytes=1, share=1.0)] == [1] * 5


def test_a_passed_deadline_stops_training_without_a_result():
    ticks = iter(range(1000))
    with pytest.raises(DeadlinePassed, match="iteration 3 of 4"):
        train_batched([cell_config("holds", "identity", 0, "smoke", **TINY)], deadline=2.5, clock=lambda: next(ticks))


def test_run_batched_trains_what_is_missing_and_support_corrected_runs_one_by_one(tmp_path):
    store = ResultStore(tmp_path)
    configs = [cell_config(column, "identity", 0, "smoke", **TINY) for column in ("holds", "violated", "adapted")]
    records = run_batched(configs, store, device="cpu")
    assert [r["config_hash"] for r in records] == [store.path(c).stem for c in configs]
    assert [r["timing"].get("batched_runs") for r in records] == [2, 2, None]
    again = run_batched(configs, store, device="cpu")
    assert [json.dumps(r, sort_keys=True) for r in again] == [json.dumps(r, sort_keys=True) for r in records]
