import json

import pytest

from cldiv.synthetic.config import SyntheticConfig
from cldiv.runs.store import ResultStore, write_json_atomic


def fake_run(calls):
    def run(config):
        calls.append(config)
        return {"metrics": {"r2": 0.5 + config.seed}, "curve": {"iteration": [0, 1]}}, "cpu"
    return run


def test_run_once_then_load_without_recomputing(tmp_path):
    store, calls = ResultStore(tmp_path), []
    config = SyntheticConfig(seed=3)
    first = store.get_or_run(config, fake_run(calls))
    second = store.get_or_run(config, fake_run(calls))
    assert len(calls) == 1 and first == second
    assert first["metrics"]["r2"] == 3.5
    assert first["config"]["seed"] == 3 and first["kind"] == "synthetic"
    prov = first["provenance"]
    assert prov["device"] == "cpu" and prov["wall_time_s"] >= 0 and prov["cldiv_version"]
    assert store.path(config).parent == tmp_path / "synthetic"


def test_recompute_forces_a_new_run(tmp_path):
    store, calls = ResultStore(tmp_path), []
    store.get_or_run(SyntheticConfig(), fake_run(calls))
    store.get_or_run(SyntheticConfig(), fake_run(calls), recompute=True)
    assert len(calls) == 2


@pytest.mark.parametrize("content", ["{\"config\": {", "", "[]", "{\"metrics\": {}}"])
def test_corrupt_or_partial_result_is_rerun_not_loaded(tmp_path, content):
    store, calls = ResultStore(tmp_path), []
    config = SyntheticConfig()
    store.path(config).parent.mkdir(parents=True)
    store.path(config).write_text(content)
    with pytest.warns(UserWarning, match="corrupt or mismatched"):
        record = store.get_or_run(config, fake_run(calls))
    assert len(calls) == 1 and record["metrics"]["r2"] == 0.5
    assert json.loads(store.path(config).read_text()) == record


def test_result_of_another_config_under_this_name_is_not_loaded(tmp_path):
    store, calls = ResultStore(tmp_path), []
    record = store.get_or_run(SyntheticConfig(seed=1), fake_run(calls))
    store.path(SyntheticConfig(seed=2)).write_text(json.dumps(record))
    with pytest.warns(UserWarning):
        assert store.get_or_run(SyntheticConfig(seed=2), fake_run(calls))["config"]["seed"] == 2


def test_atomic_write_leaves_the_old_file_when_serialisation_fails(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"a": object()})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_default_store_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CLDIV_RESULTS", str(tmp_path))
    monkeypatch.delenv("CLDIV_RESULTS_READ_ONLY")
    assert ResultStore.default().root == tmp_path


def test_record_missing_a_hashed_field_is_rejected(tmp_path):
    store, calls = ResultStore(tmp_path), []
    config = SyntheticConfig()
    record = store.get_or_run(config, fake_run(calls))
    record["config"].pop("seed")  # as if 'seed' had not existed yet: now a mismatch
    store.path(config).write_text(json.dumps(record))
    with pytest.warns(UserWarning):
        assert store.load(config) is None


@pytest.mark.parametrize("kind", ["synthetic", "simclr"])
def test_every_committed_result_file_loads_under_its_config_hash(kind):
    """A refactoring that changed a config's fields, defaults or kind would orphan the committed
    results: each file must rebuild its config, hash to its own name and load."""
    from cldiv.runs.store import REPO_ROOT
    from cldiv.images.simclr import SimCLRConfig
    from cldiv.synthetic.config import SyntheticConfig

    make = {"synthetic": SyntheticConfig, "simclr": SimCLRConfig}[kind]
    for root in (REPO_ROOT / "results", REPO_ROOT / "tests" / "golden" / "results"):
        store = ResultStore(root, read_only=True)
        paths = sorted((root / kind).glob("*.json"))
        assert paths, root / kind
        for path in paths:
            config = make(**json.loads(path.read_text())["config"])
            assert store.path(config) == path and store.load(config) is not None, path


def test_a_run_records_the_commit_its_process_started_with(tmp_path, monkeypatch):
    from cldiv.runs.store import git_commit

    git_commit.cache_clear()
    monkeypatch.setenv("CLDIV_GIT_COMMIT", "before")

    def run(config):  # the checkout moves on while the run trains
        monkeypatch.setenv("CLDIV_GIT_COMMIT", "after")
        return {"metrics": {"r2": 1.0}}, "cpu"

    try:
        record = ResultStore(tmp_path).get_or_run(SyntheticConfig(iterations=2), run)
        assert record["provenance"]["git_commit"] == "before" and git_commit() == "before"
    finally:
        git_commit.cache_clear()
