#!/usr/bin/env bash
# A job that goes wrong fails instead of hanging (tests/dist/dist_failures.cpp says what each mode
# does): a stalled rank, a job left with kb_dist_abort, ranks whose graphs differ, a killed rank.
# Usage: failures_test.sh <kb_dist_failures> <mpiexec>
set -uo pipefail
BIN=${1:?usage: failures_test.sh <kb_dist_failures> <mpiexec>}
MPIRUN=${2:?usage: failures_test.sh <kb_dist_failures> <mpiexec>}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
bad=0
fail() {
  echo "FAIL: $*"
  cat "$OUT"
  bad=1
}
job() {  # job <mode>: runs 2 ranks, output in $OUT; prints the seconds it took
  local start=$SECONDS
  OMP_NUM_THREADS=1 timeout -k 5 90 "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
    -np 2 "$BIN" "$1" >"$OUT" 2>&1
  echo $((SECONDS - start))
}
# Seconds of a "rank R: WHAT status S after T s" line.
after() { sed -n "s/^rank $1: $2 status $3 after \([0-9.]*\) s.*/\1/p" "$OUT" | head -1; }

# A rank 8 s late, a deadline of 2 s: the other fails within 4 s (the deadline and 1 s for the
# others' reports), naming it, then at once; a small collective (polled by the caller) and a
# large one (on the engine's thread).
for mode in stall stall-large; do
  job "$mode" >/dev/null
  t=$(after 0 all_reduce 9)
  if [ -z "$t" ] || ! awk -v t="$t" 'BEGIN { exit !(t >= 1.9 && t <= 4) }'; then
    fail "$mode: rank 0 did not fail with KB_ERROR_DISTRIBUTED (9) within 4 s"
  fi
  grep -q "^rank 0: all_reduce status 9 .*did not complete within 2 s: rank 1 has not reached it" \
    "$OUT" || fail "$mode: the message does not name rank 1"
  t=$(after 0 barrier 9)
  if [ -z "$t" ] || ! awk -v t="$t" 'BEGIN { exit !(t < 0.5) }'; then
    fail "$mode: the next collective did not fail at once"
  fi
  grep -q "^rank 0: barrier status 9 .*an earlier collective failed" "$OUT" ||
    fail "$mode: barrier message"
  # The late rank's own failure (rank 0 waits for it in this mode): rank 0 gave up first.
  [ "$mode" = stall ] || continue
  grep -q "^rank 1: all_reduce status 9 .*within 2 s: rank 0 has given up on it" "$OUT" ||
    fail "$mode: rank 1's message does not say that rank 0 gave up"
done

# A failed job left with kb_dist_abort(3): the launcher ends it at once, with status 3.
job_start=$SECONDS
OMP_NUM_THREADS=1 timeout -k 5 90 "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
  -np 2 "$BIN" abort >"$OUT" 2>&1
status=$?
took=$((SECONDS - job_start))
[ "$status" = 3 ] || fail "abort: the launcher's exit status is $status, not 3"
[ "$took" -lt 8 ] || fail "abort: the job took $took s to end"
grep -q "^rank 0: barrier status 9" "$OUT" || fail "abort: rank 0 did not fail first"
grep -q "abort returned" "$OUT" && fail "abort: kb_dist_abort returned"

# Different shapes: both ranks name rank 1, long before the 60 s deadline.
took=$(job differ)
for r in 0 1; do
  grep -q "^rank $r: all_reduce status 9 .*different collectives: rank 1 differs" "$OUT" ||
    fail "differ: rank $r did not report the fingerprint error"
done
[ "$took" -lt 30 ] || fail "differ: took $took s"

# A killed rank: the launcher ends the job (with a failure) well within 30 s.
took=$(job kill)
[ "$took" -lt 30 ] || fail "kill: the job took $took s to end"
grep -q "^rank 1: all_reduce status 0" "$OUT" || fail "kill: the first all_reduce did not run"
grep -qi "signal 9\|killed" "$OUT" || fail "kill: the launcher did not report the killed rank"

[ $bad = 0 ] && echo "failures: ok"
exit $bad
