"""Claims about the committed results in results/ that the code depends on."""

from pathlib import Path

from cldiv.runs.store import ResultStore
from cldiv.budgets import budget
from cldiv.synthetic.generators import SYNTHETIC_PROCESSES
from cldiv.synthetic.precision import compare, cpu_size_pairs, sensitive_cells

RESULTS = Path(__file__).resolve().parents[1] / "results"


def synthetic_records() -> list[dict]:
    return ResultStore(RESULTS, read_only=True).records("synthetic")


def test_the_paper_budget_runs_in_float32_exactly_the_cells_bf16_changes():
    pairs = cpu_size_pairs(synthetic_records())
    assert len(pairs) >= 20, "the precision study's runs are missing from results/"
    cells = sensitive_cells(pairs, compare(pairs), list(SYNTHETIC_PROCESSES))
    assert cells == set(budget("synthetic", "paper").fp32_cells)


def test_the_constraint_ratio_sweep_ends_agree_with_table_1_cells_at_the_same_settings():
    from cldiv.synthetic.sweeps import (
        endpoint_agreement,
        endpoint_companions,
        sweep_configs,
    )

    store = ResultStore(RESULTS, read_only=True)
    configs = [c for c in sweep_configs("constraint_ratio", "cpu") if c.rho in (0.0, 1.0)]
    companions = endpoint_companions(configs)
    missing = [c for c in configs + companions if store.load(c) is None]
    assert not missing, f"{len(missing)} cpu-budget sweep runs missing: cldiv sweep constraint_ratio --budget cpu"
    rows = endpoint_agreement([store.load(c) for c in configs], [store.load(c) for c in companions])
    assert len(rows) == 5 + 4 + 5  # violated and adapted per process; inverse where there is an inverse encoder
    assert [r for r in rows if not r["agrees"]] == []
    # rho = 1 with the MLP: the sweep's runs are the paper budget's Table 1 adapted cells themselves
    assert sorted((r["rho"], r["encoder"]) for r in rows if r["same"]) == [(1.0, "mlp")] * 5


def test_the_constraint_ratio_chapter_finds_every_cpu_run_stored():
    # the book builds from the store: a missing run would be trained during the build
    from cldiv.book.chapters import chapter_parameters
    from cldiv.synthetic.sweeps import endpoint_companions, sharing_configs, sweep_configs

    chapter = chapter_parameters("constraint_ratio")
    configs = sweep_configs("constraint_ratio", chapter["budget"])
    seeds = budget("constraint_ratio", chapter["budget"]).seeds
    needed = (configs + endpoint_companions(configs)
              + sharing_configs(configs[0], chapter["processes"][0], chapter["group_sizes"], seeds))
    store = ResultStore(RESULTS, read_only=True)
    missing = [c for c in needed if store.load(c) is None]
    assert not missing, f"{len(missing)} constraint-ratio runs missing: cldiv sweep constraint_ratio --budget cpu"


def test_the_cifar10_chapter_finds_every_cpu_run_stored_and_its_training_settled():
    # the book builds from the store: a missing run would be trained during the build
    from cldiv.images.claims import loss_settled
    from cldiv.images.simclr import budget_choice_configs, simclr_configs

    store = ResultStore(RESULTS, read_only=True)
    seeds = range(budget("simclr", "cpu").seeds)
    configs = simclr_configs("cpu", seeds=seeds) + [c for _, _, c in budget_choice_configs("cpu")]
    missing = [c for c in configs if store.load(c) is None]
    assert not missing, f"{len(missing)} SimCLR runs missing: cldiv simclr --budget cpu --workers 2"
    # issue 13: under All, the ResNet's and the MLP's NT-Xent is still falling or flat at the end, not diverging
    assert all(loss_settled(store.load(c)["curve"]["loss"]) for c in configs
               if c.regime == "all" and c.encoder in ("resnet18", "mlp"))
