#!/usr/bin/env bash
# Creates the virtual environments that the benchmark peers run in (bench/peer_paths.sh: PEERS,
# default build/peers): never a dependency of the library, never run by the tests. PyTorch and
# NumPy share one (torch_peer.py, numpy_peer.py); TensorFlow 2.15 (CPU wheel, tf_peer.py) has its
# own, as its NumPy is older. bench/run_suite.sh skips a peer whose venv is missing.
# Packages come from the index pip is configured with (PyPI unless PIP_INDEX_URL says otherwise):
# PyTorch's own CPU-only index is used only when it answers, as many machines cannot reach it.
# Usage: bash bench/setup_peers.sh [torch|tensorflow ...] (default both)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/peer_paths.sh
source bench/peer_paths.sh
targets=${*:-torch tensorflow}
venv_of() { dirname "$(dirname "$1")"; }

for t in $targets; do
  case $t in
    torch)
      venv=$(venv_of "$torch_py")
      python3 -m venv "$venv"
      index=()
      # The CPU wheels are a tenth of the size; PyPI's carry the CUDA libraries, unused here.
      if curl -sf -m 10 -o /dev/null https://download.pytorch.org/whl/cpu/torch/; then
        index=(--index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple)
      fi
      "$venv/bin/pip" install -q "${index[@]}" torch numpy
      "$venv/bin/python" -c "import torch; print('torch', torch.__version__, torch.get_num_threads(), 'threads')"
      ;;
    tensorflow)
      venv=$(venv_of "$tf_py")
      python3 -m venv "$venv"
      "$venv/bin/pip" install -q tensorflow-cpu==2.15.1
      "$venv/bin/python" -c "import tensorflow as tf; print('tensorflow', tf.__version__)"
      ;;
    *) echo "unknown peer $t (torch or tensorflow)" >&2; exit 1 ;;
  esac
done
