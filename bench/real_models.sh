#!/usr/bin/env bash
# bench/real_models.py from one command: the Keras 3 venv (keras3_tests/venv.sh makes it when
# missing) saves the models once into DIR (default build/real_models), then three rounds
# alternate kbackend (the Python binding built in build-bind; in float32, then the same model
# under mixed_bfloat16) and ONNX Runtime per model.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/real_models}
# shellcheck source=bindings/python/keras3_tests/venv.sh
source bindings/python/keras3_tests/venv.sh
venv=$VENV
mkdir -p "$dir"
KERAS_BACKEND=jax "$venv/bin/python" bench/real_models.py make "$dir"
kb_python=build-bind/venv/bin/python
for round in 1 2 3; do
  echo "round $round"
  for m in resnet50 mobilenetv2; do
    PYTHONPATH=build-bind/bindings/python "$kb_python" bench/real_models.py kbackend "$dir" "$m"
    PYTHONPATH=build-bind/bindings/python "$venv/bin/python" bench/real_models.py kbackend-bf16 \
      "$dir" "$m"
    "$venv/bin/python" bench/real_models.py ort "$dir" "$m"
  done
done
