#!/usr/bin/env bash
# The prepared GPU run: Table 1's holds, violated and inverse-encoder cells at the paper's
# protocol (14 cells x 5 seeds, N = M = 2000, 5000 steps) on the card at hand, batched.
# Rehearsed on the CPU by tests/test_gpu_run.py. Needs only PyTorch, NumPy, SciPy, scikit-learn
# and tqdm (no Jupyter). From the repository root of a copy of the checkout:
#
#   CLDIV_GIT_COMMIT=$(git rev-parse HEAD) benchmarks/gpu_run.sh [MAX_MINUTES] [OUT_DIR]
#
# CLDIV_GIT_COMMIT names the commit when the copy has no .git. New result files go into the
# result store as usual (results/, or $CLDIV_RESULTS) and, packed, into OUT_DIR/new_results.tar.gz
# (with the log), to be unpacked into the checkout they came from: `tar xzf new_results.tar.gz -C results`.
# Run it again to resume.
set -euo pipefail
minutes=${1:-8}
out=${2:-${OUT:-gpu_out}}
store=${CLDIV_RESULTS:-results}
mkdir -p "$out" "$store/synthetic"
before=$(mktemp)
(cd "$store" && find synthetic -name '*.json' | sort) > "$before"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | tee "$out/gpu_run.log" || true
PYTHONPATH=. PYTHONUNBUFFERED=1 python3 -c "from cldiv.book.cli import main; main()" \
  gpu-run --budget paper --max-minutes "$minutes" 2>&1 | tee -a "$out/gpu_run.log"
(cd "$store" && find synthetic -name '*.json' | sort) | comm -13 "$before" - > "$out/new_results.txt"
tar czf "$out/new_results.tar.gz" -C "$store" -T "$out/new_results.txt"
echo "$(wc -l < "$out/new_results.txt") new result files in $out/new_results.tar.gz"
