#!/usr/bin/env bash
# kbackend against PyTorch's CPU path only, side by side: bench/run_suite.sh with
# SYSTEMS=kbackend,pytorch (alternating rounds, one table from bench/suite_table.py).
# Usage: bench/cpu_compare.sh [rounds=2] [repeats=20] [workloads=W4,W5,W8]
# Environment: KB_BENCH (default build/kb_bench), PEERS and TORCH_PYTHON (bench/peer_paths.sh), OUT
# (a folder for the JSON lines; default a temporary one).
# Not run by the tests; PyTorch is never a dependency of the library.
set -euo pipefail
cd "$(dirname "$0")/.."
SYSTEMS=kbackend,pytorch WORKLOADS=${3:-W4,W5,W8} \
  exec bash bench/run_suite.sh "${1:-2}" "${2:-20}"
