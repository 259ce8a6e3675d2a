#!/usr/bin/env bash
# The benchmark suite (docs/performance.md): every workload W1-W10 in
# kbackend (kb_bench) and in every peer that is installed (PyTorch eager and torch.jit.script,
# TensorFlow tf.function, NumPy; bench/setup_peers.sh installs them outside the repository),
# alternating the systems round by round (A B C D A B C D ...), each with warm-up and repeats; then
# one table (bench/suite_table.py): per workload the median per system, kbackend / best peer, the
# spread and, for W1-W3, the fraction of the machine's bandwidth or fp32 peak.
# With BUSY=1 each system also runs, in the same round right after its quiet run, beside a
# competing CPU-bound process that the script starts pinned to the last core and stops after (as a
# service or another rank sharing the machine would); the table then adds each system's busy time /
# quiet time and kbackend's busy ratio to the best peer.
# Usage: bash bench/run_suite.sh [rounds=2] [repeats=10]
# Environment: KB_BENCH (default build/kb_bench; built when missing), WORKLOADS (default all, e.g.
# W4,W5,W8), SYSTEMS (default kbackend,pytorch,tensorflow,numpy), PEERS, TORCH_PYTHON,
# TF_PYTHON, NUMPY_PYTHON (bench/peer_paths.sh), OUT (a folder for the JSON lines and table.json;
# default a temporary one). Not run by the tests; no peer is ever a dependency of the library.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
repeats=${2:-10}
workloads=${WORKLOADS:-}
systems=${SYSTEMS:-kbackend,pytorch,tensorflow,numpy}
kb=${KB_BENCH:-build/kb_bench}
# shellcheck source=bench/peer_paths.sh
source bench/peer_paths.sh
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ ! -x "$kb" ]; then
  echo "building $kb"
  cmake -S . -B "$(dirname "$kb")" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
  cmake --build "$(dirname "$kb")" -j"$(nproc)" --target kb_bench > /dev/null
fi

# system -> command (without the arguments); a peer whose module does not import is skipped.
declare -A cmd
active=()
for s in ${systems//,/ }; do
  case $s in
    kbackend) cmd[$s]="$kb" ;;
    pytorch) py=$torch_py mod=torch script=bench/torch_peer.py ;;
    tensorflow) py=$tf_py mod=tensorflow script=bench/tf_peer.py ;;
    numpy) py=$np_py mod=numpy script=bench/numpy_peer.py ;;
    *) echo "unknown system $s" >&2; exit 1 ;;
  esac
  if [ "$s" != kbackend ]; then
    if ! "$py" -c "import $mod" > /dev/null 2>&1; then
      echo "skipped $s: $py cannot import $mod (bench/setup_peers.sh installs it)"
      continue
    fi
    cmd[$s]="$py $script"
  fi
  active+=("$s")
done

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "systems: ${active[*]}; rounds $rounds, repeats $repeats, workloads ${workloads:-all}"
# One run of system $1 in round $2, its JSON lines to $out/$1.$2$3.jsonl ($3: "" or ".busy").
run_system() {
  local s=$1 r=$2 suffix=$3 start=$SECONDS
  # shellcheck disable=SC2086  # the command is a program and its script
  ${cmd[$s]} cpu "$repeats" $workloads > "$out/$s.$r$suffix.jsonl" 2> "$out/$s.$r$suffix.err" ||
    { echo "  $s failed (see $out/$s.$r$suffix.err)"; tail -3 "$out/$s.$r$suffix.err"; }
  echo "  $((SECONDS - start)) s"
}

for r in $(seq 1 "$rounds"); do
  for s in "${active[@]}"; do
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "round $r: $s (load $load)" | tee -a "$out/load.txt"
    run_system "$s" "$r" ""
    if [ "${BUSY:-0}" = 1 ]; then
      taskset -c "$(($(nproc) - 1))" bash -c 'while :; do :; done' &
      hog=$!
      trap 'kill "$hog" 2> /dev/null' EXIT  # never left running, even when a run fails
      echo "round $r: $s beside a busy core (pid $hog)" | tee -a "$out/load.txt"
      run_system "$s" "$r" .busy
      kill "$hog"
      wait "$hog" 2> /dev/null || true
    fi
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"
python3 bench/suite_table.py "$out" | tee "$out/table.md"
