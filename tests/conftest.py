"""Test-wide settings: notebooks under test read the golden result store and never write."""

import os

import pytest
import torch

from cldiv.book.golden import GOLDEN_STORE

# Set before any kernel starts, so nbval's kernels inherit it: golden notebooks load the
# smoke-budget results stored in tests/golden/results (trained once, by `cldiv golden`) instead
# of training, so what they print does not depend on this machine's CPU, kernels or thread
# count. Read-only: a result missing there is an error, not a silent retrain. Unit tests that
# store results use their own temporary store.
os.environ["CLDIV_RESULTS"] = str(GOLDEN_STORE)
os.environ["CLDIV_RESULTS_READ_ONLY"] = "1"


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """The tests are small: one torch thread avoids oversubscribing the cores when they share
    the machine with other jobs (10-30x slower otherwise). Notebook kernels are unaffected."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
