#!/usr/bin/env bash
# bench/mixed_precision.py from one command: the Keras 3 venv (keras3_tests/venv.sh makes it when
# missing) saves the models under both policies into DIR (default build/mixed_precision), then
# three rounds alternate kbackend (the Python binding built in build-bind) and Keras 3 on JAX
# per model. Usage: bash bench/mixed_precision.sh [DIR] [MODEL...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/mixed_precision}
shift || true
models=("$@")
if [ ${#models[@]} -eq 0 ]; then models=(cnn32 transformer mlp digits_cnn tokens); fi
# shellcheck source=bindings/python/keras3_tests/venv.sh
source bindings/python/keras3_tests/venv.sh
mkdir -p "$dir"
KERAS_BACKEND=jax "$VENV/bin/python" bench/mixed_precision.py make "$dir"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "bf16 arithmetic: $(grep -qw avx512_bf16 /proc/cpuinfo && echo avx512_bf16 || echo none)"
for round in 1 2 3; do
  echo "round $round"
  for m in "${models[@]}"; do
    PYTHONPATH=build-bind/bindings/python /usr/bin/python3 bench/mixed_precision.py native "$dir" "$m"
    KERAS_BACKEND=jax "$VENV/bin/python" bench/mixed_precision.py keras "$dir" "$m"
  done
done
