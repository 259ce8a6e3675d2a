#!/usr/bin/env bash
# The core library runs on the CPU when the CUDA plugin is missing or disabled.
# Usage: fallback_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -P "$build"/libkbackend.so* "$build"/libkbackend_omp.so* "$tmp"/
# LD_LIBRARY_PATH wins over the binaries' RUNPATH: they load the copy that has no plugin beside it
# (the rest of the path stays: the core's own dependencies may be found through it).
lib_path="$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=$(LD_LIBRARY_PATH="$lib_path" "$build"/tests/device_info)
echo "$out" | grep -q "cuda devices: 0" || { echo "expected no GPU without the plugin: $out"; exit 1; }
echo "$out" | grep -q "plugin not loaded" || { echo "expected 'plugin not loaded': $out"; exit 1; }
LD_LIBRARY_PATH="$lib_path" "$build"/train_mlp "$(dirname "$0")/../../examples/data/digits.csv" | grep -q "test accuracy"
out=$(KB_DISABLE_CUDA=1 "$build"/tests/device_info)
echo "$out" | grep -q "disabled by KB_DISABLE_CUDA=1" || { echo "KB_DISABLE_CUDA ignored: $out"; exit 1; }
# KB_DEVICE: cuda:N picks the GPU; a GPU the driver does not have, or a value of another form,
# leaves the CPU with the reason. The emulated device (the test build's) is cuda:0 only.
emulated=$build/tests/libkb_emulated_device.so
if [ -f "$emulated" ]; then
  out=$(KB_CUDA_PLUGIN="$emulated" KB_DEVICE=cuda:0 "$build"/tests/device_info)
  echo "$out" | grep -q "cuda devices: 1" || { echo "KB_DEVICE=cuda:0: $out"; exit 1; }
  out=$(KB_CUDA_PLUGIN="$emulated" KB_DEVICE=cuda:1 "$build"/tests/device_info)
  echo "$out" | grep -q "cuda devices: 0" || { echo "KB_DEVICE=cuda:1 found a GPU: $out"; exit 1; }
  echo "$out" | grep -q "KB_DEVICE=cuda:1, but" || { echo "KB_DEVICE=cuda:1: $out"; exit 1; }
  # Started by a launcher, a process takes the GPU of its local rank, unless KB_DEVICE says.
  out=$(KB_CUDA_PLUGIN="$emulated" OMPI_COMM_WORLD_LOCAL_RANK=1 "$build"/tests/device_info)
  echo "$out" | grep -q "cuda devices: 0" || { echo "local rank 1 found cuda:0: $out"; exit 1; }
  echo "$out" | grep -q "cuda:1 is this process' local rank" || { echo "local rank 1: $out"; exit 1; }
  out=$(KB_CUDA_PLUGIN="$emulated" SLURM_LOCALID=0 "$build"/tests/device_info)
  echo "$out" | grep -q "cuda devices: 1" || { echo "SLURM_LOCALID=0: $out"; exit 1; }
  out=$(KB_CUDA_PLUGIN="$emulated" OMPI_COMM_WORLD_LOCAL_RANK=1 KB_DEVICE=cuda:0 "$build"/tests/device_info)
  echo "$out" | grep -q "cuda devices: 1" || { echo "KB_DEVICE=cuda:0 at local rank 1: $out"; exit 1; }
  KB_CUDA_PLUGIN="$emulated" KB_DEVICE=cuda:1 "$build"/train_mlp \
    "$(dirname "$0")/../../examples/data/digits.csv" | grep -q "test accuracy"
fi
for bad in gpu cuda:x cuda: cuda1; do
  out=$(KB_DEVICE=$bad "$build"/tests/device_info)
  echo "$out" | grep -q "KB_DEVICE=$bad is not cpu, cuda or cuda:N" ||
    { echo "KB_DEVICE=$bad: $out"; exit 1; }
done
# With a GPU: one the driver does not have.
if "$build"/tests/device_info | grep -q "cuda devices: 1"; then
  out=$(KB_DEVICE=cuda:99 "$build"/tests/device_info)
  echo "$out" | grep -q "KB_DEVICE=cuda:99, but the driver sees" || { echo "cuda:99: $out"; exit 1; }
fi
echo "fallback ok"
