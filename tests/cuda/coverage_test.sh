#!/usr/bin/env bash
# Whether tests/cuda runs every kernel the CUDA plugin registers, on the emulated device (which
# registers the plugin's set of kernels and records which ran, with which dtypes): the suite runs
# fused and unfused (KB_FUSE=0: the plain elementwise kernels), and fails the check when a kernel
# never ran, or ran on float32 but not on float16 and bfloat16 (except the kernels below, which
# take no 16-bit floats). A new kernel without a test, or a test that stops reaching its
# kernel (a plan that folds or fuses it away), shows here.
# Usage: coverage_test.sh <build dir>
set -uo pipefail
build=${1:?usage: coverage_test.sh <build dir>}
plugin=$build/tests/libkb_emulated_device.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Kernel: why it has no 16-bit case.
declare -A float32_only=(
  [FusedMatMul]="the plan fuses float32 products only"
  [FusedConv]="the plan fuses float32 convolutions only"
  [CtcLoss]="ctc_batch_cost takes float32 or float64"
  [CtcLossGrad]="ctc_batch_cost takes float32 or float64"
  [AllReduce]="sums across processes take float32, float64 and integers"
  [ReduceScatter]="sums across processes take float32, float64 and integers"
  [AllReduceWait]="buckets hold sums across processes"
  [Pack]="buckets hold sums across processes"
  [Unpack]="buckets hold sums across processes"
)

for fuse in 1 0; do
  if ! KB_FUSE=$fuse KB_CUDA_PLUGIN=$plugin KB_EMULATED_COVERAGE=$tmp/ran.$fuse \
    "$build/tests/kb_cuda_tests" --gtest_brief=1 > "$tmp/log.$fuse" 2>&1; then
    echo "tests/cuda failed on the emulated device (KB_FUSE=$fuse):"
    tail -40 "$tmp/log.$fuse"
    exit 1
  fi
  [ -s "$tmp/ran.$fuse" ] || { echo "the emulated device wrote no record (KB_FUSE=$fuse)"; exit 1; }
done

# One line per kernel: its name, then every dtype it ran with in either run ("-" if it never ran).
summary=$(awk '{ if (!($1 in seen)) { seen[$1] = ""; order[++n] = $1 }
                 runs[$1] += $2; for (i = 3; i <= NF; ++i) seen[$1] = seen[$1] " " $i }
               END { for (k = 1; k <= n; ++k) print order[k], (runs[order[k]] ? seen[order[k]] : " -") }' \
  "$tmp/ran.1" "$tmp/ran.0")

status=0
while read -r op dtypes; do
  if [ "$dtypes" = "-" ]; then
    echo "never ran on the device: $op"
    status=1
  elif [[ " $dtypes " == *" float32 "* ]] && [ -z "${float32_only[$op]:-}" ]; then
    for t in float16 bfloat16; do
      [[ " $dtypes " == *" $t "* ]] || { echo "ran on float32 but never on $t: $op"; status=1; }
    done
  fi
done <<< "$summary"
kernels=$(wc -l <<< "$summary")
[ $status -eq 0 ] && echo "all $kernels kernels of the plugin ran on the emulated device"
exit $status
