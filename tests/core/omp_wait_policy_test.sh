#!/usr/bin/env bash
# libkbackend chooses OpenMP's wait policy before libgomp starts (core/startup/omp_wait_policy.c):
# a short spin unless the user set one; what the user sets wins. libgomp prints the settings it
# started with under OMP_DISPLAY_ENV=verbose.
# Usage: omp_wait_policy_test.sh PRINT_THREADS
set -uo pipefail
prog=$1
spin() { env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose "$@" "$prog" 2>&1 |
  sed -n "s/^ *GOMP_SPINCOUNT = '\(.*\)'/\1/p"; }
fail() { echo "FAIL: $*"; exit 1; }
got=$(spin)
[ "$got" = 1000 ] || fail "libgomp started with GOMP_SPINCOUNT '$got', want 1000"
got=$(spin GOMP_SPINCOUNT=77)
[ "$got" = 77 ] || fail "the user's GOMP_SPINCOUNT=77 became '$got'"
got=$(spin OMP_WAIT_POLICY=active)
if [ -z "$got" ] || [ "$got" = 1000 ]; then
  fail "OMP_WAIT_POLICY=active gave GOMP_SPINCOUNT '$got'"
fi
# glibc's two orders of initialization (the tunable picks one) both run ours first.
for sort in 1 2; do
  got=$(spin GLIBC_TUNABLES=glibc.rtld.dynamic_sort=$sort)
  [ "$got" = 1000 ] || fail "dynamic_sort=$sort: GOMP_SPINCOUNT '$got'"
done
echo "GOMP_SPINCOUNT 1000 by default; the user's settings kept"
