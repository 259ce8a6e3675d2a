#!/usr/bin/env bash
# Runs a language's data-parallel fit example under `mpirun -np 2`, where MPI is there (mpirun,
# and the MPI plugin beside the build tree's libkbackend.so); each rank must print
# "rank R of 2: ok". Nothing runs (and it succeeds) without MPI.
# Usage: bash bindings/on_two_processes.sh <build dir> <language> <command...>
set -euo pipefail
BUILD=$1
LANGUAGE=$2
shift 2
if [ ! -f "$BUILD/libkbackend_mpi.so" ] || ! command -v mpirun >/dev/null; then exit 0; fi
echo "== $LANGUAGE: data-parallel fit on 2 processes (mpirun)"
out=$(OMP_NUM_THREADS=1 KB_DIST_TIMEOUT=60 timeout -k 10 300 mpirun --allow-run-as-root \
  --oversubscribe --bind-to none -np 2 "$@") || { echo "$out"; exit 1; }
echo "$out"
for r in 0 1; do
  grep -q "rank $r of 2: ok" <<<"$out" || { echo "$LANGUAGE: rank $r failed"; exit 1; }
done
