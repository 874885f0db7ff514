"""The bf16-against-fp32 study (cldiv/synthetic/precision.py) on constructed runs."""

from dataclasses import asdict

from cldiv.synthetic.precision import compare, paired_runs, precision_numbers
from cldiv.synthetic.table1 import cell_config


def run(column, process, seed, precision, r2):
    config = asdict(cell_config(column, process, seed, "smoke", precision=precision))
    return {"config": config, "metrics": {"r2": r2, "mcc": 0.5, "ape_code": 0.01, "loss_m2000": 6.0}}


def test_a_shifted_cell_is_flagged_and_a_noisy_one_is_not():
    fp32 = [run("holds", "identity", s, "fp32", 0.99) for s in range(5)] + \
           [run("violated", "identity", s, "fp32", 0.2 + 0.1 * s) for s in range(5)]
    bf16 = [run("holds", "identity", s, "bf16", 0.90 + 0.001 * s) for s in range(5)] + \
           [run("violated", "identity", s, "bf16", 0.2 + 0.1 * ((s + 2) % 5)) for s in range(5)]
    pairs = paired_runs(fp32, bf16)
    assert sorted(pairs) == [("holds", "identity"), ("violated", "identity")]
    rows = {(r["column"], r["metric"]): r for r in compare(pairs)}
    assert rows["holds", "R²"]["changed"] and abs(rows["holds", "R²"]["difference"] + 0.088) < 1e-9
    assert not rows["violated", "R²"]["changed"]  # same values, other seeds: a zero mean difference
    assert not rows["holds", "MCC"]["changed"]
    numbers = precision_numbers(pairs, list(rows.values()), ["identity"])
    assert (numbers["cells"], numbers["changed"], numbers["tests"]) == (2, 1, 8)
    assert numbers["flips"] != numbers["flips"]  # nan: identity's adapted and inverse cells were not paired


def test_runs_stored_before_a_field_existed_are_paired_by_their_config_hash():
    old = run("holds", "identity", 0, "fp32", 0.99)
    for field in ("precision", "positive_law"):  # as a record written before these fields existed
        old["config"].pop(field)
    pairs = paired_runs([old], [run("holds", "identity", 0, "bf16", 0.98)])
    assert list(pairs) == [("holds", "identity")]


def test_the_float32_cells_come_from_every_pair_at_the_cpu_sizes_and_the_table_names_them():
    from cldiv.synthetic.precision import cpu_size_pairs, sensitive_markdown

    def sized(record, batch_size, iterations):
        record["config"].update(batch_size=batch_size, n_negatives=batch_size, iterations=iterations)
        return record

    records = ([sized(run("holds", "identity", s, "fp32", 0.99), 1024, 2000) for s in range(5)]
               + [sized(run("holds", "identity", s, "bf16", 0.90 + 0.001 * s), 1024, 2000) for s in range(5)]
               + [sized(run("holds", "spiral", s, p, 0.99), 2000, 5000) for s in range(5) for p in ("fp32", "bf16")])
    pairs = cpu_size_pairs(records)
    assert list(pairs) == [("holds", "identity")]  # batch 2000 is not a cpu-budget size
    assert sensitive_markdown(pairs, ["identity"]).splitlines()[2:] == ["| identity holds | R² 0.990 → 0.902 | — |"]
