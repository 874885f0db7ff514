"""Test-wide settings: notebooks under test never read or write the committed results."""

import os
import tempfile

# Set before any kernel starts, so nbval's kernels inherit it: golden notebooks compute
# their (small) results from scratch in a throw-away store.
os.environ["CLDIV_RESULTS"] = tempfile.mkdtemp(prefix="cldiv-test-results-")
