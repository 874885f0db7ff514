"""The real CIFAR-10 path without the real data: a tiny set in CIFAR-10's on-disk format
(torchvision's python-pickle batches), read by torchvision's own reader and run through the
chapter's CIFAR-10 mode end to end at the smoke budget."""

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

from cldiv.images.data import (
    CIFAR10_CLASSES,
    UNVERIFIED_CIFAR10_VARIABLE,
    DatasetUnavailableError,
    load_images,
)
from cldiv.published import FIGURE3

TRAIN_PER_BATCH, TEST = 24, 40


def write_cifar10(root) -> None:
    """``root/cifar-10-batches-py``: data_batch_1..5, test_batch and batches.meta, as the official
    archive lays them out; every image's red channel is 20 x its label, its green channel 8 x the column."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)

    def dump(name: str, n: int) -> None:
        labels = rng.integers(0, 10, n)
        images = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
        images[:, 0] = (20 * labels)[:, None, None]
        images[:, 1] = (8 * np.arange(32))[None, None, :]
        batch = {"batch_label": name, "labels": labels.tolist(), "data": images.reshape(n, 3072),
                 "filenames": [f"{name}_{i}.png" for i in range(n)]}
        with open(folder / name, "wb") as file:
            pickle.dump(batch, file)

    for i in range(1, 6):
        dump(f"data_batch_{i}", TRAIN_PER_BATCH)
    dump("test_batch", TEST)
    with open(folder / "batches.meta", "wb") as file:
        pickle.dump({"label_names": list(CIFAR10_CLASSES), "num_cases_per_batch": TRAIN_PER_BATCH, "num_vis": 3072}, file)


def test_a_copy_in_cifar10_format_loads_through_torchvision_with_images_labels_and_layout_intact(tmp_path, monkeypatch):
    write_cifar10(tmp_path)
    with pytest.raises(DatasetUnavailableError, match="CIFAR-10 is not in"):  # not the official files
        load_images("cifar10", "train", data_root=tmp_path)
    monkeypatch.setenv(UNVERIFIED_CIFAR10_VARIABLE, "1")
    train, test = (load_images("cifar10", split, data_root=tmp_path) for split in ("train", "test"))
    assert (len(train), len(test)) == (5 * TRAIN_PER_BATCH, TEST) and train.class_names == CIFAR10_CLASSES
    for data in (train, test):
        assert data.images.shape[1:] == (3, 32, 32)
        assert (data.images[:, 0, 5, 7].long() == 20 * data.labels).all()  # channel and label kept together
        assert (data.images[0, 1, 3] == 8 * np.arange(32)).all()  # rows are rows, columns columns


def test_the_chapter_runs_figure_3_on_data_in_cifar10_format(tmp_path, monkeypatch):
    write_cifar10(tmp_path / "data")
    monkeypatch.setenv(UNVERIFIED_CIFAR10_VARIABLE, "1")
    monkeypatch.setenv("CLDIV_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv("CLDIV_RESULTS_READ_ONLY", raising=False)
    out = tmp_path / "cifar10.ipynb"
    params = [("dataset", "'cifar10'"), ("budget", "'smoke'"), ("encoders", "['resnet18', 'mlp']"),
              ("regimes", "['all', 'crop']"), ("data_root", repr(str(tmp_path / "data")))]
    subprocess.run([sys.executable, "-m", "cldiv.book.cli", "chapter", "cifar10", "-o", str(out),
                    *[arg for name, value in params for arg in ("-p", name, value)]], check=True)
    glued = {o["metadata"]["scrapbook"]["name"]: "".join(o["data"].get("application/papermill.record/text/markdown", ""))
             for cell in json.loads(out.read_text())["cells"] for o in cell.get("outputs", [])
             if "scrapbook" in o.get("metadata", {})}
    assert f"[{FIGURE3['resnet18', 'all'][0]:.1f}]" in glued["accuracy"]  # the CIFAR-10 mode's table: published values
    assert len(list((tmp_path / "results" / "simclr").glob("*.json"))) == 4  # 2 encoders x 2 regimes
