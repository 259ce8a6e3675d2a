#!/usr/bin/env bash
# Fuzzes the C ABI: bash tests/fuzz/run.sh BUILD_DIR [SECONDS] [JOBS]
# BUILD_DIR is a clang build configured with -DKB_SANITIZE=ON -DKB_FUZZ=ON (scripts/test.sh's
# build-asan). Starts from the committed corpus (tests/fuzz/corpus) plus BUILD_DIR/fuzz-corpus,
# where new inputs go; a crash, a broken ABI promise, a sanitizer report, a leak, a 30 s input or
# an input over 4 GiB fails the run and leaves the input in BUILD_DIR/fuzz-findings.
# For hours on every core: bash tests/fuzz/run.sh build-asan 36000 $(nproc)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: run.sh BUILD_DIR [SECONDS] [JOBS]}
seconds=${2:-180}
jobs=${3:-1}
fuzzer="$build/tests/kb_capi_fuzzer"
mkdir -p "$build/fuzz-corpus" "$build/fuzz-findings"
# allocator_may_return_null: an impossible allocation is the library's to report
# (KB_ERROR_OUT_OF_MEMORY), not the fuzzer's. UBSan stops at its first report.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export KB_NUM_THREADS=1
# Long inputs from the start (-len_control=0): an input is a sequence of calls, and the
# interesting ones build several tensors before they misuse them.
args=(-max_total_time="$seconds" -max_len=2048 -len_control=0 -timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=4096
      -print_final_stats=1 -artifact_prefix="$build/fuzz-findings/")
if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs" -ignore_crashes=0 -ignore_ooms=0 -ignore_timeouts=0); fi
"$fuzzer" "${args[@]}" "$build/fuzz-corpus" tests/fuzz/corpus
