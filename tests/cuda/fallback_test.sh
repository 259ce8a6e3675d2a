#!/usr/bin/env bash
# The core library runs on the CPU when the CUDA plugin is missing or disabled.
# Usage: fallback_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -P "$build"/libkbackend.so* "$tmp"/
# LD_LIBRARY_PATH wins over the binaries' RUNPATH: they load the copy that has no plugin beside it.
out=$(LD_LIBRARY_PATH="$tmp" "$build"/tests/device_info)
echo "$out" | grep -q "cuda devices: 0" || { echo "expected no GPU without the plugin: $out"; exit 1; }
echo "$out" | grep -q "plugin not loaded" || { echo "expected 'plugin not loaded': $out"; exit 1; }
LD_LIBRARY_PATH="$tmp" "$build"/train_mlp "$(dirname "$0")/../../examples/data/digits.csv" | grep -q "test accuracy"
out=$(KB_DISABLE_CUDA=1 "$build"/tests/device_info)
echo "$out" | grep -q "disabled by KB_DISABLE_CUDA=1" || { echo "KB_DISABLE_CUDA ignored: $out"; exit 1; }
echo "fallback ok"
