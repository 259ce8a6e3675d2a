#!/usr/bin/env bash
# On a GPU machine (through the device tool, carry [".carry"]): build the library and the CUDA
# plugin, then run the CUDA tests, the examples, the collectives through NCCL (one process under
# mpirun), the NumPy reference suite through the GPU and the GPU benchmarks. Stages: build, tests,
# dist, suite, bench (default: all, in that order), and memcheck (the CUDA tests under
# compute-sanitizer, only when named). Each stage writes one log under $OUT (build.log,
# tests.log, dist.log, suite.log, bench.jsonl, memcheck.log): the device tool brings back 8 files. The build stage always runs first
# (incremental after the first call) and each stage leaves its logs under $OUT, so the stages can
# also run as separate calls when one call's time is short: `bash scripts/gpu_check.sh tests`,
# then `bash scripts/gpu_check.sh suite`, then `bash scripts/gpu_check.sh bench`.
#
# The GPU machine has no apt: recreate .carry (Eigen, GoogleTest, oneDNN) here with
#   mkdir -p .carry/usr/include .carry/usr/lib/x86_64-linux-gnu/cmake .carry/usr/share/eigen3
#   cp -r /usr/include/{eigen3,gtest,gmock} .carry/usr/include/
#   cp /usr/lib/x86_64-linux-gnu/lib{gtest,gtest_main,gmock,gmock_main}.a .carry/usr/lib/x86_64-linux-gnu/
#   cp -r /usr/lib/x86_64-linux-gnu/cmake/GTest .carry/usr/lib/x86_64-linux-gnu/cmake/
#   cp -r /usr/share/eigen3/cmake .carry/usr/share/eigen3/
#   (cd /tmp && apt-get download libdnnl-dev libdnnl2 ocl-icd-opencl-dev ocl-icd-libopencl1 \
#      opencl-c-headers opencl-clhpp-headers && for f in *.deb; do dpkg -x $f $OLDPWD/.carry; done)
set -uo pipefail
OUT=${OUT:-/tmp}
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/.carry/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build tests dist suite bench)
status=0

# Configures (once) and brings the GPU build up to date; fails unless the plugin finds the GPU,
# so that no later stage passes on the CPU unseen.
build() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  if [ ! -f build-gpu/build.ninja ]; then
    # Open MPI's runtime without its headers: Debian's (ABI-compatible) from .carry/ompi-include.
    local mpi=()
    if ! command -v mpicc >/dev/null && [ -d .carry/ompi-include ]; then
      local lib
      lib=$(ldconfig -p | grep -oE "/[^ ]*/libmpi\.so\.40$" | head -1)
      [ -n "$lib" ] && mpi=(-DMPI_C_COMPILER=/nonexistent "-DMPI_C_HEADER_DIR=$PWD/.carry/ompi-include"
        -DMPI_C_LIB_NAMES=mpi "-DMPI_mpi_LIBRARY=$lib")
    fi
    cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.carry/usr \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DKB_WERROR=OFF "${mpi[@]}" \
      > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; return 1; }
  fi
  local targets=(kbackend kbackend_cuda kb_cuda_tests device_info train_mlp kb_bench kb_dist_tests)
  grep -q "kbackend_mpi" build-gpu/build.ninja && targets+=(kbackend_mpi)
  cmake --build build-gpu -j16 --target "${targets[@]}" >> "$OUT/build.log" 2>&1 ||
    { grep -E "error" "$OUT/build.log" | head -30; tail -20 "$OUT/build.log"; return 1; }
  local info
  info=$(./build-gpu/tests/device_info)
  echo "$info"
  echo "$info" | grep -q "cuda devices: 1" || { echo "build: the plugin does not see the GPU"; return 1; }
}

tests() {
  local rc=0 out
  local log=$OUT/tests.log
  echo "== kb_cuda_tests" > "$log"
  ./build-gpu/tests/kb_cuda_tests > /tmp/cuda_tests.log 2>&1 || rc=1
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|cpp:[0-9]+" /tmp/cuda_tests.log | head -60
  cat /tmp/cuda_tests.log >> "$log"
  # Unfused: the plain elementwise kernels, which fusion otherwise replaces.
  echo "== KB_FUSE=0 kb_cuda_tests" >> "$log"
  KB_FUSE=0 ./build-gpu/tests/kb_cuda_tests > /tmp/cuda_tests.log 2>&1 || rc=1
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|cpp:[0-9]+" /tmp/cuda_tests.log | head -30
  cat /tmp/cuda_tests.log >> "$log"
  echo "== fallback_test.sh" >> "$log"
  bash tests/cuda/fallback_test.sh build-gpu > /tmp/fallback.log 2>&1 || rc=1
  tail -3 /tmp/fallback.log
  cat /tmp/fallback.log >> "$log"
  for device in cuda cpu; do
    out=$(KB_DEVICE=$device ./build-gpu/train_mlp examples/data/digits.csv) || rc=1
    echo "$out" | tail -1
    echo "$out" | grep -q "test accuracy" || { echo "train_mlp ($device): no accuracy"; rc=1; }
  done
  return $rc
}

# The collectives through NCCL: tests/dist as one process under mpirun (NCCL with one rank, a
# process of a job; one GPU cannot hold two ranks), every collective on the GPU against the CPU's.
dist() {
  [ -f build-gpu/libkbackend_mpi.so ] || { echo "dist: no MPI plugin (configure found no MPI)"; return 1; }
  local rc=0
  KB_TEST_EXPECT_NCCL=1 KB_DIST_TIMEOUT=60 timeout -k 10 170 mpirun --allow-run-as-root \
    --bind-to none -np 1 ./build-gpu/tests/kb_dist_tests --gtest_color=no > "$OUT/dist.log" 2>&1 ||
    rc=1
  grep -E "^rank|^\[  (FAILED|PASSED|SKIPPED) |Failure|NCCL" "$OUT/dist.log" | head -30
  return $rc
}

# The NumPy reference suite with the GPU as the default device, every case's inputs fed
# (KB_REFERENCE_FEED=1: none folds on the CPU). Its plans are logged (uncaptured, to a file
# outside $OUT) and the steps that ran on the CPU within GPU plans are counted by operation at the
# end of $OUT/suite.log.
suite() {
  python3 -c "import numpy, pytest" 2>/dev/null || { echo "suite: no numpy/pytest here"; return 1; }
  KB_REFERENCE_FEED=1 KB_LOG_PLAN=1 KBACKEND_LIB=$PWD/build-gpu/libkbackend.so \
    python3 -m pytest -q -s -p no:cacheprovider tests/reference > "$OUT/suite.log" 2> /tmp/suite_plans.log
  local rc=$?
  if [ $rc -gt 128 ] && python3 -c "import xdist" 2>/dev/null; then
    # A crash ends a serial run: the tests after it never ran. Workers of pytest-xdist are
    # replaced when one crashes, so this run lists every failure (the crashed tests too).
    echo "suite: the serial run crashed (status $rc); again in 8 workers"
    KB_REFERENCE_FEED=1 KBACKEND_LIB=$PWD/build-gpu/libkbackend.so python3 -m pytest -q -n 8 \
      -p no:cacheprovider -rfE --tb=short tests/reference > "$OUT/suite.log" 2>&1
  fi
  grep -E "^(FAILED|ERROR)" "$OUT/suite.log" | head -40
  tail -3 "$OUT/suite.log"
  grep "^kbackend plan (cuda)" /tmp/suite_plans.log | grep -o "[A-Za-z]*@cpu" | sort | uniq -c |
    sort -rn > /tmp/suite_fallbacks.txt
  echo "CPU steps in GPU plans, by operation:" | tee -a "$OUT/suite.log"
  head -20 /tmp/suite_fallbacks.txt
  cat /tmp/suite_fallbacks.txt >> "$OUT/suite.log"
  return $rc
}

# The CUDA tests under compute-sanitizer's memcheck (out-of-bounds and misaligned accesses, API
# errors); not a default stage: it runs the tests many times slower.
memcheck() {
  command -v compute-sanitizer >/dev/null || { echo "memcheck: no compute-sanitizer"; return 1; }
  timeout 560 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 40 \
    ./build-gpu/tests/kb_cuda_tests --gtest_brief=1 > "$OUT/memcheck.log" 2>&1
  local rc=$?
  grep -E "^=========|^\[  (FAILED|PASSED) " "$OUT/memcheck.log" | head -60
  [ $rc -eq 124 ] && echo "memcheck: timed out (partial log in memcheck.log)"
  return $rc
}

bench() { bash scripts/gpu_bench.sh 2>&1 | grep -E "^(heuristics: )?\{"; }

# Every stage runs on an up-to-date build of what is here (the build stage, when not named, first).
[[ " ${stages[*]} " == *" build "* ]] || stages=(build "${stages[@]}")
for s in "${stages[@]}"; do
  echo "== $s"
  case $s in
    build | tests | dist | suite | bench | memcheck) $s || { echo "== $s failed"; status=1; } ;;
    *) echo "unknown stage $s (build, tests, dist, suite, bench, memcheck)"; exit 2 ;;
  esac
  [ "$s" = build ] && [ $status -ne 0 ] && exit 1
done
exit $status
