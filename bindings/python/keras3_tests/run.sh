#!/usr/bin/env bash
# Keras 3 reads what kbackend writes: kbackend (the build tree's Python package) loads each
# archive of tests/model_files/keras3, trains it three steps and saves it as .keras; Keras 3.15
# (on JAX, in a venv cached outside the clone: ~/.cache/kb-keras3, made when missing) loads
# each saved archive, predicts as kbackend did, and continues training from its optimizer state
# with the losses kbackend computes for the same steps. Then the other way for the layers Keras
# added after 2.2.4: Keras 3 saves a model of each (make_layer_cases.py), kbackend loads it,
# predicts and trains two epochs as Keras did (check_layer_cases.py) and saves it again, and
# Keras 3 loads that and predicts as kbackend does (read_archives.py); each case exported to
# ONNX runs in ONNX Runtime as kbackend predicts (export_onnx_cases.py); models of the
# mixed_bfloat16 policy predict and train as Keras' (make_mixed_cases.py, check_mixed_cases.py).
# Usage: bash bindings/python/keras3_tests/run.sh   (after bindings/run_tests.sh built build-bind)
set -euo pipefail
cd "$(dirname "$0")/../../.."
# shellcheck source=bindings/python/keras3_tests/venv.sh
source bindings/python/keras3_tests/venv.sh
# In the same venv: DLPack with JAX and NumPy 2's versioned protocol, the ONNX files the
# export writes run in ONNX Runtime, and fit's callbacks decide as Keras 3's do.
PYTHONPATH=build-bind/bindings/python:bindings/python/tests "$VENV/bin/python" -m pytest -q \
  -p no:cacheprovider bindings/python/tests/test_dlpack.py \
  bindings/python/tests/test_onnx_export.py bindings/python/tests/test_fit_callbacks.py
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
PYTHONPATH=build-bind/bindings/python:bindings/python/tests /usr/bin/python3 \
  bindings/python/keras3_tests/write_archives.py "$OUT"
KERAS_BACKEND=jax "$VENV/bin/python" bindings/python/keras3_tests/read_archives.py "$OUT"
# kbackend reads what Keras 3 writes for each layer Keras added after 2.2.4.
mkdir "$OUT/layers"
KERAS_BACKEND=jax "$VENV/bin/python" bindings/python/keras3_tests/make_layer_cases.py "$OUT/layers"
PYTHONPATH=build-bind/bindings/python /usr/bin/python3 \
  bindings/python/keras3_tests/check_layer_cases.py "$OUT/layers"
# Each of them exported to ONNX and run in ONNX Runtime as kbackend predicts.
PYTHONPATH=build-bind/bindings/python:bindings/python/keras3_tests "$VENV/bin/python" \
  bindings/python/keras3_tests/export_onnx_cases.py "$OUT/layers"
# Models of the mixed_bfloat16 policy: kbackend computes in bfloat16 as Keras 3 does.
mkdir "$OUT/mixed"
KERAS_BACKEND=jax "$VENV/bin/python" bindings/python/keras3_tests/make_mixed_cases.py "$OUT/mixed"
PYTHONPATH=build-bind/bindings/python:bindings/python/keras3_tests "$VENV/bin/python" \
  bindings/python/keras3_tests/check_mixed_cases.py "$OUT/mixed"
# Keras 3 reads what kbackend saved of each of them after training.
KERAS_BACKEND=jax "$VENV/bin/python" bindings/python/keras3_tests/read_archives.py "$OUT/layers/saved"
