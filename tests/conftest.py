"""Test-wide settings: notebooks under test never read or write the committed results."""

import os
import tempfile

import pytest
import torch

# Set before any kernel starts, so nbval's kernels inherit it: golden notebooks compute
# their (small) results from scratch in a throw-away store.
os.environ["CLDIV_RESULTS"] = tempfile.mkdtemp(prefix="cldiv-test-results-")


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """The tests are small: one torch thread avoids oversubscribing the cores when they share
    the machine with other jobs (10-30x slower otherwise). Notebook kernels are unaffected."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
