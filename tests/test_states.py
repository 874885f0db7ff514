"""Saved training states (cldiv/states.py): a longer run continues a shorter one, and an interrupted run its
interim state, bitwise (synthetic and SimCLR)."""

import pytest

from cldiv.runs.store import ResultStore
from cldiv.config import with_overrides
from cldiv.synthetic.config import SyntheticConfig
from cldiv.images.simclr import run_simclr, simclr_configs
import cldiv.synthetic.train as synthetic_train
from cldiv.runs.states import STATES_VARIABLE, latest_state, lineage, machine
from cldiv.synthetic.train import run_synthetic, train

SMOKE = dict(batch_size=32, n_negatives=32, eval_every=4, n_eval=128)
CONFIGS = {"infonce, mlp": SyntheticConfig(process="linear", d_fixed=1, iterations=8, **SMOKE),
           "support-corrected, grouped": SyntheticConfig(process="spiral", d_fixed=1, loss="support_corrected",
                                                         rho=0.5, anchor_groups=8, iterations=8, **SMOKE),
           "infonce, inverse": SyntheticConfig(process="patches", encoder="inverse", d_fixed=1, iterations=8, **SMOKE)}


@pytest.mark.parametrize("name", CONFIGS)
def test_a_doubled_run_continued_from_the_shorter_one_is_the_uninterrupted_run(name, tmp_path, monkeypatch):
    short = CONFIGS[name]
    long = with_overrides(short, iterations=2 * short.iterations)
    uninterrupted = train(long, device="cpu")
    monkeypatch.setenv(STATES_VARIABLE, str(tmp_path))
    train(short, device="cpu")
    assert latest_state(long, "iterations", long.eval_every)["config"]["iterations"] == short.iterations
    continued = train(long, device="cpu")
    assert continued["timing"]["continued_from"]["iterations"] == short.iterations
    assert continued["metrics"] == uninterrupted["metrics"]
    assert continued["curves"] == uninterrupted["curves"] and continued["scatter_h"] == uninterrupted["scatter_h"]


def test_only_a_shorter_run_of_the_same_config_on_the_evaluation_grid_is_continued(tmp_path, monkeypatch):
    monkeypatch.setenv(STATES_VARIABLE, str(tmp_path))
    base = CONFIGS["infonce, mlp"]
    train(base, device="cpu")
    assert latest_state(base, "iterations", 4) is None                                        # not from itself
    assert latest_state(with_overrides(base, iterations=4), "iterations", 4) is None          # not from a longer run
    assert latest_state(with_overrides(base, iterations=20, seed=1), "iterations", 4) is None  # another seed
    train(with_overrides(base, iterations=6), device="cpu")                   # 6: off the eval_every grid
    assert latest_state(with_overrides(base, iterations=20), "iterations", 4)["config"]["iterations"] == 8
    assert lineage(base, "iterations") == lineage(with_overrides(base, iterations=20), "iterations") \
        != lineage(with_overrides(base, seed=1), "iterations")
    (tmp_path / f"{lineage(base, 'iterations')}_12.pt").write_bytes(b"not a state")  # unreadable: skipped with a warning
    with pytest.warns(UserWarning, match="ignoring unreadable training state"):
        assert latest_state(with_overrides(base, iterations=20), "iterations", 4)["config"]["iterations"] == 8


def test_a_continued_run_stores_the_wall_time_of_both_parts(tmp_path, monkeypatch):
    monkeypatch.setenv(STATES_VARIABLE, str(tmp_path / "states"))
    store = ResultStore(tmp_path / "results")
    short = CONFIGS["infonce, mlp"]
    first = store.get_or_run(short, run_synthetic)
    second = store.get_or_run(with_overrides(short, iterations=16), run_synthetic)
    earlier = second["timing"]["continued_from"]["train_seconds"]
    assert 0 < earlier <= first["provenance"]["wall_time_s"] < second["provenance"]["wall_time_s"]
    assert second["timing"]["train_seconds"] > earlier


def test_a_continued_run_names_the_machines_that_ran_its_steps(tmp_path, monkeypatch):
    monkeypatch.setenv(STATES_VARIABLE, str(tmp_path))
    short = CONFIGS["infonce, mlp"]
    here = machine("cpu")
    assert "threads" in here
    train(short, device="cpu")
    doubled = with_overrides(short, iterations=2 * short.iterations)
    assert train(doubled, device="cpu")["timing"]["continued_from"]["machines"] == [here]  # one machine, once
    monkeypatch.setattr("cldiv.runs.states.machine", lambda device: "another CPU, 1 threads")
    quadrupled = train(with_overrides(short, iterations=4 * short.iterations), device="cpu")
    assert quadrupled["timing"]["continued_from"]["machines"] == [here]
    assert latest_state(with_overrides(short, iterations=8 * short.iterations), "iterations",
                        short.eval_every)["machines"] == [here, "another CPU, 1 threads"]


def test_a_doubled_simclr_run_continued_from_the_shorter_one_is_the_uninterrupted_run(tmp_path, monkeypatch):
    """The MLP encoder has dropout, so the global random stream is part of the state too."""
    short = simclr_configs("smoke", encoders=["mlp"], regimes=["all"], epochs=1, probe_epochs=2)[0]
    long = with_overrides(short, epochs=2)
    uninterrupted, _ = run_simclr(long)
    monkeypatch.setenv(STATES_VARIABLE, str(tmp_path))
    run_simclr(short)
    continued, _ = run_simclr(long)
    assert continued["timing"]["continued_from"] == {"epochs": 1, "machines": [machine("cpu")],
                                                    "train_seconds": continued["timing"]["continued_from"]["train_seconds"]}
    for record in (continued, uninterrupted):
        record["metrics"].pop("train_images_per_s")
    assert continued["metrics"] == uninterrupted["metrics"] and continued["curve"] == uninterrupted["curve"]


def test_an_interrupted_run_continues_from_its_interim_state_and_removes_it(tmp_path, monkeypatch):
    config = with_overrides(CONFIGS["infonce, mlp"], iterations=16)
    uninterrupted = train(config, device="cpu")
    monkeypatch.setenv(STATES_VARIABLE, str(tmp_path))
    monkeypatch.setattr("cldiv.runs.states.CHECKPOINT_SECONDS", 0.0)  # an interim state at every evaluation
    curve_point, calls = synthetic_train.curve_point, []

    def cut_off_at_the_third_evaluation(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return curve_point(*args)

    monkeypatch.setattr(synthetic_train, "curve_point", cut_off_at_the_third_evaluation)
    with pytest.raises(KeyboardInterrupt):
        train(config, device="cpu")
    assert [p.name for p in tmp_path.glob("*.pt")] == [f"{lineage(config, 'iterations')}_8.pt"]  # the latest only
    monkeypatch.setattr(synthetic_train, "curve_point", curve_point)
    continued = train(config, device="cpu")
    assert continued["timing"]["continued_from"]["iterations"] == 8
    assert continued["metrics"] == uninterrupted["metrics"] and continued["curves"] == uninterrupted["curves"]
    assert [p.name for p in tmp_path.glob("*.pt")] == [f"{lineage(config, 'iterations')}_16.pt"]  # interim removed


def test_interim_states_never_replace_a_finished_runs_state(tmp_path, monkeypatch):
    monkeypatch.setenv(STATES_VARIABLE, str(tmp_path))
    monkeypatch.setattr("cldiv.runs.states.CHECKPOINT_SECONDS", 0.0)
    short = CONFIGS["infonce, mlp"]
    train(short, device="cpu")
    train(with_overrides(short, iterations=16), device="cpu")  # passes 8 (finished: kept) and 12 (interim: removed)
    assert sorted(int(p.stem.rsplit("_", 1)[1]) for p in tmp_path.glob("*.pt")) == [8, 16]
    assert latest_state(with_overrides(short, iterations=12), "iterations", 4)["interim"] is False
