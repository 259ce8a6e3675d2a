#!/usr/bin/env bash
# The main job: build the library and train the digits MLP from C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target train_mlp
./build/train_mlp examples/data/digits.csv
