#!/usr/bin/env bash
# The manylinux wheel (bindings/python/build_wheel.sh) as a user gets it: `pip install` into a
# fresh venv outside the repository, which pulls the newest NumPy from PyPI; then, with no
# PYTHONPATH or LD_LIBRARY_PATH, from a folder of its own: NumPy >= 2, the package imported from
# the venv, no run path into a build folder, the CUDA plugin found where the wheel has one (it
# can only say that there is no GPU here), the digits MLP and a Keras model file fine-tuned (the examples), and the
# Python test suite on that NumPy.
# Usage: bash tests/packaging/python_wheel.sh WHEEL
set -euo pipefail
WHEEL=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbackend-wheel.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "python wheel: FAIL: $*" >&2
  exit 1
}

/usr/bin/python3 -m venv "$TMP/venv"
PY=$TMP/venv/bin/python
"$PY" -m pip install -q --disable-pip-version-check "$WHEEL" pytest scipy ml_dtypes
cp "$ROOT"/bindings/python/examples/train_mlp.py "$ROOT"/bindings/python/examples/finetune_keras_model.py "$TMP"
cd "$TMP"
unset PYTHONPATH LD_LIBRARY_PATH KBACKEND_LIB KB_CUDA_PLUGIN
"$PY" - <<'PY' || fail "the installed package"
import glob, os, subprocess, sys
import numpy, kbackend
assert int(numpy.__version__.split(".")[0]) >= 2, numpy.__version__
here = os.path.dirname(kbackend.__file__)
assert here.startswith(sys.prefix), here
for lib in glob.glob(os.path.join(here, "*.so*")) + glob.glob(here + ".libs/*.so*"):
    dyn = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout
    for line in dyn.splitlines():
        if "RPATH" in line or "RUNPATH" in line:
            for entry in line.split("[", 1)[1].rstrip("]").split(":"):
                assert entry.startswith("$ORIGIN") or entry.startswith("/usr/") or not entry, \
                    f"{os.path.basename(lib)} has the run path {entry}"
reason = kbackend.cuda_unavailable_reason()
if os.path.exists(os.path.join(here, "libkbackend_cuda.so")):
    assert "libkbackend_cuda.so not found" not in reason, reason
print(f"python wheel: NumPy {numpy.__version__}, {kbackend.__file__}; CUDA: {reason}")
PY
"$PY" train_mlp.py "$ROOT/examples/data/digits.csv" | tail -1
"$PY" finetune_keras_model.py "$ROOT/examples/data/digits_mlp.h5" "$ROOT/examples/data/digits.csv" | tail -1
"$PY" -m pytest -q -p no:cacheprovider "$ROOT/bindings/python/tests" | tail -1
echo "python wheel: $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1)) installs and runs"
