#!/usr/bin/env bash
# Builds the Python package as a manylinux wheel: build-bind's extension (compiled against
# NumPy >= 2, runs on 1.x too) and library, the CUDA plugin of build/ where there is one, then
# `auditwheel repair --strip`, which copies oneDNN, HDF5, the OpenMP runtime and what they need
# into kbackend.libs, points the run paths there, strips, and tags the wheel with the oldest
# glibc it needs. MPI and the CUDA libraries stay the system's (the plugins that need them load
# at run time, and say why they cannot). Prints the wheel's path.
# Usage: bash bindings/python/build_wheel.sh   (after bindings/run_tests.sh has built build-bind)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=$ROOT/build-bind
OUT=$BUILD/wheel
TOOLS=$(bash bindings/python/tools_venv.sh "$BUILD")
NUMPY2=$("$TOOLS/bin/python" -c 'import numpy; print(numpy.get_include())')
cmake -S . -B "$BUILD" -DPython3_NumPy_INCLUDE_DIR="$NUMPY2" >/dev/null
rm -rf "$OUT"
CUDA_PLUGIN=$ROOT/build/libkbackend_cuda.so
[ -f "$CUDA_PLUGIN" ] || CUDA_PLUGIN=""
KBACKEND_BUILD_DIR=$BUILD KBACKEND_CUDA_PLUGIN=$CUDA_PLUGIN "$TOOLS/bin/pip" wheel -q \
  --disable-pip-version-check --no-build-isolation --no-deps -w "$OUT/linux" bindings/python >&2
PATH=$TOOLS/bin:$PATH "$TOOLS/bin/auditwheel" repair --strip -w "$OUT/dist" \
  --exclude 'libmpi.so.*' --exclude 'libcublas.so.*' --exclude 'libcublasLt.so.*' \
  --exclude 'libcudnn.so.*' --exclude 'libcudart.so.*' --exclude 'libnccl.so.*' \
  "$OUT"/linux/kbackend-*.whl >"$OUT/auditwheel.log" 2>&1 || {
  cat "$OUT/auditwheel.log" >&2
  exit 1
}
ls "$OUT"/dist/kbackend-*-manylinux_*.whl
