#!/usr/bin/env bash
# On the GPU machine: build, then W3/W7/W9 in kbackend (CUDA) and PyTorch (CUDA), alternating.
set -euo pipefail
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/.carry/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp}
cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.carry/usr -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_BUILD_TYPE=Release >> "$OUT/build.log" 2>&1
cmake --build build-gpu -j16 --target kbackend kbackend_cuda kb_bench >> "$OUT/build.log" 2>&1
PY=$(command -v python3)
for round in 1 2; do
  ./build-gpu/kb_bench cuda 30 | tee -a "$OUT/bench.jsonl"
  "$PY" bench/torch_peer.py cuda 30 | tee -a "$OUT/bench.jsonl"
done
# The convolutions with cuDNN's untimed heuristics instead of the algorithms timed at plan time.
KB_CUDNN_FIND=0 ./build-gpu/kb_bench cuda 30 W4,W5,W8 | sed 's/^/heuristics: /' | tee -a "$OUT/bench.jsonl"
