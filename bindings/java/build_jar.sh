#!/usr/bin/env bash
# Builds the Java package: build-bind's kbackend.jar (Java 11 bytecode) with the native
# libraries inside under org/kbackend/native/linux-x86_64/ (libkbackend_java.so and what
# bindings/collect_natives.sh adds); the class that loads them copies them out of the jar first.
# Also a POM, beside the jar and inside it. Prints the jar's path.
# Usage: bash bindings/java/build_jar.sh   (after bindings/run_jvm_dotnet_go.sh built build-bind)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=$ROOT/build-bind
VERSION=$(sed -n 's/^project(kbackend VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
OUT=$BUILD/java-package
NATIVE=$OUT/natives/org/kbackend/native/linux-x86_64
rm -rf "$OUT"
mkdir -p "$OUT/natives/META-INF/maven/org.kbackend/kbackend"
bash bindings/collect_natives.sh "$NATIVE" "$BUILD/bindings/java/libkbackend_java.so"
(cd "$NATIVE" && ls -1 -- *.so*) >"$OUT/files.txt"
mv "$OUT/files.txt" "$NATIVE/"
sed "s/@VERSION@/$VERSION/" bindings/java/pom.xml.in >"$OUT/kbackend-$VERSION.pom"
cp "$OUT/kbackend-$VERSION.pom" "$OUT/natives/META-INF/maven/org.kbackend/kbackend/pom.xml"
JAR=$OUT/kbackend-$VERSION.jar
cp "$BUILD/bindings/java/kbackend.jar" "$JAR"
jar uf "$JAR" -C "$OUT/natives" .
echo "$JAR"
