#!/usr/bin/env bash
# Every test: warnings-as-errors build, C ABI and C++ layer tests (GoogleTest), NumPy reference
# tests (pytest over the C ABI), the C and C++ examples, the C ABI and C++ layer tests again under
# clang's AddressSanitizer and UBSan, the C ABI and model file fuzzers (libFuzzer, KB_FUZZ_SECONDS
# and KB_MODEL_FUZZ_SECONDS), the
# concurrency tests under ThreadSanitizer, the language bindings (Python, Rust, Java, C#, Go),
# Keras, and packaging. The
# GoogleTest, NumPy reference and Keras tests run again on the emulated GPU
# (tests/device_emulation), which makes every plan a device plan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
JOBS=${JOBS:-2}

echo "== format"
bad=$(git ls-files '*.c' '*.cpp' '*.h' '*.hpp' | xargs clang-format --dry-run -Werror 2>&1 | grep -c "error:" || true)
if [ "$bad" != "0" ]; then
  git ls-files '*.c' '*.cpp' '*.h' '*.hpp' | xargs clang-format --dry-run -Werror 2>&1 | head -20
  echo "clang-format: $bad problems"; exit 1
fi

echo "== build (warnings as errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKB_WERROR=ON >/dev/null
cmake --build build -j"$JOBS"

echo "== exported symbols"
for lib in build/libkbackend.so build/libkbackend_cuda.so build/libkbackend_mpi.so \
    build/libkbackend_onnx.so build/libkbackend_tensorboard.so build/tests/libkb_emulated_device.so; do
  [ -f "$lib" ] || continue
  if nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^kb_' | grep -q .; then
    echo "$lib exports symbols other than kb_*:"; nm -D --defined-only "$lib" | grep -v ' kb_' | head
    exit 1
  fi
done

echo "== GoogleTest"
(cd build && ctest --output-on-failure -j"$JOBS")

if ls tests/reference/test_*.py >/dev/null 2>&1; then
  echo "== NumPy reference tests"
  KBACKEND_LIB="$PWD/build/libkbackend.so" /usr/bin/python3 -m pytest -q tests/reference
  # Again with the emulated GPU (tests/device_emulation) as the default device: every plan a
  # device plan, the CUDA plugin's kernels on device memory that host code cannot touch, and
  # every case's inputs fed (KB_REFERENCE_FEED=1), so that none folds on the CPU.
  echo "== NumPy reference tests on the emulated GPU"
  KB_REFERENCE_FEED=1 KB_CUDA_PLUGIN="$PWD/build/tests/libkb_emulated_device.so" \
    KBACKEND_LIB="$PWD/build/libkbackend.so" \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/reference
fi

echo "== example"
./build/train_mlp examples/data/digits.csv
./build/train_mlp_cpp examples/data/digits.csv
./build/train_lstm
./build/train_cnn examples/data/digits.csv
./build/finetune_keras_model examples/data/digits_mlp.h5 examples/data/digits.csv
./build/finetune_keras_model_cpp examples/data/digits_mlp.h5 examples/data/digits.csv
# The same fine-tuning of a Keras 3 archive (examples/make_keras_model.py made both files).
./build/finetune_keras_model examples/data/digits_mlp.keras examples/data/digits.csv
./build/finetune_keras_model_cpp examples/data/digits_mlp.keras examples/data/digits.csv
if [ -f build/libkbackend_mpi.so ]; then
  echo "== example on 2 processes (mpirun)"
  OMP_NUM_THREADS=1 KB_DIST_TIMEOUT=60 timeout -k 10 300 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np 2 ./build/train_cnn examples/data/digits.csv
fi

echo "== AddressSanitizer and UBSan (clang; the same build serves the fuzzer)"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
# A folder configured by another compiler is made anew (CMake cannot switch compilers in place).
if [ -f build-asan/CMakeCache.txt ] && ! grep -q "^CMAKE_CXX_COMPILER:FILEPATH=.*clang++" build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
# -O1: the sanitized tests and the fuzzer run several times faster than at -O0, reports alike.
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKB_SANITIZE=ON -DKB_FUZZ=ON \
  -DKB_WERROR=ON -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DCMAKE_C_FLAGS_DEBUG="-g -O1" >/dev/null
cmake --build build-asan -j"$JOBS" --target kb_capi_tests kb_hpp_tests train_mlp train_lstm train_cnn \
  finetune_keras_model kb_capi_fuzzer kb_model_fuzzer
ASAN_OPTIONS=detect_leaks=1 ./build-asan/tests/kb_capi_tests --gtest_brief=1
ASAN_OPTIONS=detect_leaks=1 ./build-asan/tests/kb_hpp_tests --gtest_brief=1
ASAN_OPTIONS=detect_leaks=1 ./build-asan/train_mlp examples/data/digits.csv >/dev/null
ASAN_OPTIONS=detect_leaks=1 ./build-asan/train_lstm >/dev/null
ASAN_OPTIONS=detect_leaks=1 ./build-asan/finetune_keras_model examples/data/digits_mlp.h5 \
  examples/data/digits.csv >/dev/null
# Alone, without MPI (whose allocations at exit are not this project's: see below).
KB_MPI_PLUGIN=/nonexistent ASAN_OPTIONS=detect_leaks=1 ./build-asan/train_cnn examples/data/digits.csv >/dev/null
if [ -f build/libkbackend_mpi.so ]; then
  # The collectives on 2 processes. Open MPI leaves its own allocations to the exit, in components
  # it has unloaded by then: no leak check for this run (the one-process collectives are in the
  # C++ layer's tests above, with it); ASan and UBSan check the rest.
  cmake --build build-asan -j"$JOBS" --target kb_dist_tests kbackend_mpi
  ASAN_OPTIONS=detect_leaks=0 KB_DIST_TIMEOUT=60 OMP_NUM_THREADS=1 timeout -k 10 300 \
    mpirun --allow-run-as-root --oversubscribe --bind-to none -x ASAN_OPTIONS -np 2 \
    ./build-asan/tests/kb_dist_tests --gtest_brief=1
fi

echo "== fuzzing the C ABI (libFuzzer under ASan and UBSan, ${KB_FUZZ_SECONDS:-180} s)"
bash tests/fuzz/run.sh build-asan "${KB_FUZZ_SECONDS:-180}"
echo "== fuzzing the model readers (${KB_MODEL_FUZZ_SECONDS:-120} s)"
bash tests/fuzz/run.sh build-asan "${KB_MODEL_FUZZ_SECONDS:-120}" 1 model

echo "== ThreadSanitizer (clang): the C ABI from several threads"
# One OpenMP thread: the runtimes' own synchronization is not instrumented (libgomp, libomp), and
# the races looked for are between the callers' threads (tests/tsan.supp says what is ignored).
CC=clang CXX=clang++ cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DKB_TSAN=ON -DKB_WERROR=ON \
  -DKB_BINDINGS=OFF -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DCMAKE_C_FLAGS_DEBUG="-g -O1" >/dev/null
cmake --build build-tsan -j"$JOBS" --target kb_capi_tests
KB_NUM_THREADS=1 \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp" \
  ./build-tsan/tests/kb_capi_tests --gtest_brief=1 --gtest_filter='Concurrency.*'

echo "== language bindings"
bash bindings/run_tests.sh
bash bindings/run_jvm_dotnet_go.sh

echo "== API reference (every language; warnings fail)"
bash scripts/docs.sh

echo "== Keras 2.2.4 on kbackend"
bash bindings/python/keras_tests/run.sh
echo "== Keras 2.2.4 on kbackend, emulated GPU"
KB_CUDA_PLUGIN="$PWD/build/tests/libkb_emulated_device.so" KB_REBUILD=0 bash bindings/python/keras_tests/run.sh
echo "== Keras 3 reads kbackend's .keras archives"
bash bindings/python/keras3_tests/run.sh

if [ -f tests/packaging/run.sh ]; then
  echo "== packaging"
  bash tests/packaging/run.sh
fi
echo "ALL TESTS PASSED"
