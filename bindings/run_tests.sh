#!/usr/bin/env bash
# Builds the language bindings in build-bind/ and runs their tests and examples:
#   Python: the SWIG extension (CMake target kbackend_python), pytest on the build tree, the
#           digits example, then `pip install` into a venv and pytest again on the installed
#           package; then the manylinux wheel (bindings/python/build_wheel.sh) installed into a
#           fresh venv with the newest NumPy (tests/packaging/python_wheel.sh);
#   Rust:   cargo test and the digits examples, offline, against build-bind/libkbackend.so, the
#           data-parallel fit example on 2 processes too (bindings/on_two_processes.sh).
# Usage: bash bindings/run_tests.sh            (JOBS=2 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build-bind
JOBS=${JOBS:-2}
PY=/usr/bin/python3  # Debian's, with NumPy (the pyenv python3 first on PATH has none)
bash scripts/deps.sh

echo "== bindings: build (build-bind)"
# -DKB_WERROR=ON: the same compile flags as build/, so ccache serves the core objects. The
# extension compiles against NumPy 2's headers (the packaging tools' venv), so that the tests
# below run it on Debian's NumPy 1.24 and the wheel's on the newest NumPy.
TOOLS=$(bash bindings/python/tools_venv.sh "$BUILD")
NUMPY2=$("$TOOLS/bin/python" -c 'import numpy; print(numpy.get_include())')
cmake -S . -B "$BUILD" -DKB_WERROR=ON -DKB_BUILD_TESTS=OFF -DKB_CUDA=OFF -DKB_PYTHON=ON \
  -DPython3_EXECUTABLE=$PY -DPython3_NumPy_INCLUDE_DIR="$NUMPY2" >/dev/null
# The MPI plugin too, where MPI is found: the data-parallel fit's test runs under mpirun.
MPI_TARGET=$(cmake --build "$BUILD" --target help | grep -o 'kbackend_mpi$' || true)
cmake --build "$BUILD" -j"$JOBS" --target kbackend_python $MPI_TARGET

echo "== Python: pytest on the build tree"
PYTHONPATH="$BUILD/bindings/python" $PY -m pytest -q -p no:cacheprovider bindings/python/tests

echo "== Python: example"
PYTHONPATH="$BUILD/bindings/python" $PY bindings/python/examples/train_mlp.py examples/data/digits.csv
PYTHONPATH="$BUILD/bindings/python" $PY bindings/python/examples/finetune_keras_model.py
PYTHONPATH="$BUILD/bindings/python" $PY bindings/python/examples/finetune_keras_model.py \
  "$ROOT/examples/data/digits_mlp.keras"

echo "== Python: pip install into a venv, pytest on the installed package"
[ -x "$BUILD/venv/bin/python" ] || $PY -m venv --system-site-packages "$BUILD/venv"
KBACKEND_BUILD_DIR="$BUILD" "$BUILD/venv/bin/pip" install -q --no-build-isolation --no-index \
  --force-reinstall --no-deps bindings/python
# bfloat16 values in NumPy (tests/test_bfloat16.py): ml_dtypes 0.4.1, the newest that runs on
# Debian 12's NumPy 1.24.
"$BUILD/venv/bin/python" -c 'import ml_dtypes' 2>/dev/null ||
  "$BUILD/venv/bin/pip" install -q --no-deps ml_dtypes==0.4.1
(cd "$BUILD" && env -u PYTHONPATH venv/bin/python -c \
  'import kbackend, sys; assert "site-packages" in kbackend.__file__, kbackend.__file__; print("installed:", kbackend.__file__)')
(cd "$BUILD" && env -u PYTHONPATH venv/bin/python -m pytest -q -p no:cacheprovider \
  "$ROOT/bindings/python/tests")

echo "== Python: the manylinux wheel in a fresh venv with the newest NumPy"
bash tests/packaging/python_wheel.sh "$(bash bindings/python/build_wheel.sh)"

echo "== Rust: cargo test (offline)"
export KBACKEND_LIB_DIR="$BUILD" CARGO_TARGET_DIR="$BUILD/rust" CARGO_BUILD_JOBS="$JOBS"
(cd bindings/rust && cargo test --offline)

echo "== Rust: example"
(cd bindings/rust && cargo run --offline --release -q --example train_mlp -- "$ROOT/examples/data/digits.csv")
(cd bindings/rust && cargo run --offline --release -q --example finetune_keras_model)
(cd bindings/rust && cargo run --offline --release -q --example finetune_keras_model -- \
  "$ROOT/examples/data/digits_mlp.keras")
(cd bindings/rust && cargo build --offline --release -q --example fit_distributed)
"$BUILD/rust/release/examples/fit_distributed" "$ROOT/examples/data/digits.csv"
bash bindings/on_two_processes.sh "$BUILD" Rust "$BUILD/rust/release/examples/fit_distributed" \
  "$ROOT/examples/data/digits.csv"

echo "BINDINGS TESTS PASSED"
