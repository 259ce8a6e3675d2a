#!/usr/bin/env bash
# Runs a fuzzer: bash tests/fuzz/run.sh BUILD_DIR [SECONDS] [JOBS] [FUZZER]
# FUZZER is capi (the C ABI, the default) or model (the model readers). BUILD_DIR is a clang
# build configured with -DKB_SANITIZE=ON -DKB_FUZZ=ON (scripts/test.sh's build-asan). Starts
# from the committed seeds (capi: tests/fuzz/corpus; model: the model files of
# tests/model_files and tests/fuzz/model_corpus) plus BUILD_DIR/fuzz-corpus[-model], where new
# inputs go; a crash, a broken ABI promise, a sanitizer report, a leak, a 30 s input or an input
# over 4 GiB fails the run and leaves the input in BUILD_DIR/fuzz-findings.
# For hours on every core: bash tests/fuzz/run.sh build-asan 36000 $(nproc) model
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: run.sh BUILD_DIR [SECONDS] [JOBS] [FUZZER]}
seconds=${2:-180}
jobs=${3:-1}
which=${4:-capi}
fuzzer="$build/tests/kb_${which}_fuzzer"
case "$which" in
  # Long inputs from the start (-len_control=0): an input is a sequence of calls, and the
  # interesting ones build several tensors before they misuse them.
  capi) corpus="$build/fuzz-corpus"; seeds=(tests/fuzz/corpus); shape=(-max_len=2048 -len_control=0) ;;
  # Inputs as long as the committed model files.
  model) corpus="$build/fuzz-corpus-model"
         seeds=(tests/model_files/keras3 tests/model_files/tf_keras tests/fuzz/model_corpus)
         shape=(-max_len=65536) ;;
  *) echo "unknown fuzzer '$which' (capi, model)"; exit 2 ;;
esac
mkdir -p "$corpus" "$build/fuzz-findings"
# allocator_may_return_null: an impossible allocation is the library's to report
# (KB_ERROR_OUT_OF_MEMORY), not the fuzzer's. UBSan stops at its first report.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export KB_NUM_THREADS=1
args=(-max_total_time="$seconds" "${shape[@]}" -timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=4096
      -print_final_stats=1 -artifact_prefix="$build/fuzz-findings/")
if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs" -ignore_crashes=0 -ignore_ooms=0 -ignore_timeouts=0); fi
"$fuzzer" "${args[@]}" "$corpus" "${seeds[@]}"
