#!/usr/bin/env bash
# Runs the Keras 2.2.4 tests (unmodified Keras on kbackend.keras_backend) against build-bind/.
# Keras 2.2.4 is installed --no-deps into build-bind/venv (Debian's python3-numpy/scipy/yaml/h5py/six,
# python3-keras-applications/-preprocessing satisfy its imports; scripts/deps.sh installs them);
# offline-safe once installed. Usage: bash bindings/python/keras_tests/run.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
BUILD=$ROOT/build-bind
PY=/usr/bin/python3
bash scripts/deps.sh
if [ ! -f "$BUILD/bindings/python/kbackend/_kbackend.so" ] || [ "${KB_REBUILD:-1}" = 1 ]; then
  cmake -S . -B "$BUILD" -DKB_WERROR=ON -DKB_BUILD_TESTS=OFF -DKB_CUDA=OFF -DKB_PYTHON=ON \
    -DPython3_EXECUTABLE=$PY >/dev/null
  cmake --build "$BUILD" -j"${JOBS:-2}" --target kbackend_python
else  # KB_REBUILD=0: no compiling, but the package's Python files are copied in afresh
  cmake --build "$BUILD" --target kbackend_python_files >/dev/null
fi
[ -x "$BUILD/venv/bin/python" ] || $PY -m venv --system-site-packages "$BUILD/venv"
if ! "$BUILD/venv/bin/python" -c 'import importlib.metadata as m; assert m.version("keras") == "2.2.4"' 2>/dev/null; then
  "$BUILD/venv/bin/pip" install -q --no-deps keras==2.2.4
fi
# ONNX Runtime runs the native layers' ONNX exports (test_native_layers.py): its wheel alone, on
# Debian's NumPy (what it imports beside NumPy is for its tools).
"$BUILD/venv/bin/python" -c 'import onnxruntime' 2>/dev/null ||
  "$BUILD/venv/bin/pip" install -q --disable-pip-version-check --no-deps onnxruntime==1.23.2
# Keras' NumPy reference of the backend (tests/keras/backend/reference_operations.py) ships in the
# Keras 2.2.4 source distribution only: fetched once into build-bind/ for test_keras_reference.py,
# with the TensorFlow backend's source, whose signatures test_contract.py compares with ours.
REF_DIR=$BUILD/keras-2.2.4-sdist
REF=$REF_DIR/Keras-2.2.4/tests/keras/backend/reference_operations.py
TF_BACKEND=$REF_DIR/Keras-2.2.4/keras/backend/tensorflow_backend.py
if [ ! -f "$REF" ] || [ ! -f "$TF_BACKEND" ]; then
  mkdir -p "$REF_DIR"
  if { [ -f "$REF_DIR/Keras-2.2.4.tar.gz" ] ||
       "$BUILD/venv/bin/pip" download -q --no-deps --no-binary :all: -d "$REF_DIR" keras==2.2.4; } &&
     tar -xzf "$REF_DIR/Keras-2.2.4.tar.gz" -C "$REF_DIR" \
       Keras-2.2.4/tests/keras/backend/reference_operations.py \
       Keras-2.2.4/keras/backend/tensorflow_backend.py; then :
  else
    echo "run.sh: could not fetch the Keras 2.2.4 sdist; the tests that read it are skipped" >&2
  fi
fi
export KERAS_REFERENCE_OPERATIONS=$REF KERAS_TF_BACKEND_SOURCE=$TF_BACKEND
KERAS_HOME=$(mktemp -d)
trap 'rm -rf "$KERAS_HOME"' EXIT
export KERAS_HOME KERAS_BACKEND=kbackend.keras_backend
export PYTHONPATH="$BUILD/bindings/python:$ROOT/bindings/python/keras_tests"
(cd "$BUILD" && venv/bin/python -m pytest -q -p no:cacheprovider -s "$ROOT/bindings/python/keras_tests" "$@")
echo "KERAS TESTS PASSED"
