#!/usr/bin/env bash
# The jar (bindings/java/build_jar.sh) as a user gets it: in a folder of its own, with no
# library path (no LD_LIBRARY_PATH, no java.library.path, no library beside the jar), the digits
# example compiled with `javac -cp kbackend.jar` for Java 11 and run with `java -cp`; the
# classes are Java 11 bytecode and the jar carries its POM.
# Usage: bash tests/packaging/java_jar.sh JAR
set -euo pipefail
JAR=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbackend-jar.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "java jar: FAIL: $*" >&2
  exit 1
}
cp "$JAR" "$TMP/kbackend.jar"
cp "$ROOT/bindings/java/examples/TrainMlp.java" "$TMP/"
cd "$TMP"
unset LD_LIBRARY_PATH
jar tf kbackend.jar | grep -qx 'org/kbackend/native/linux-x86_64/libkbackend_java.so' ||
  fail "the jar has no native libraries"
(mkdir meta && cd meta && jar xf ../kbackend.jar META-INF/maven/org.kbackend/kbackend/pom.xml)
grep -q '<artifactId>kbackend</artifactId>' meta/META-INF/maven/org.kbackend/kbackend/pom.xml ||
  fail "the jar has no POM"
major=$(javap -v -cp kbackend.jar org.kbackend.K | sed -n 's/ *major version: //p')
[ "$major" = 55 ] || fail "org.kbackend.K is class file version $major, not 55 (Java 11)"
javac --release 11 -cp kbackend.jar -d . TrainMlp.java
java -cp kbackend.jar:. TrainMlp "$ROOT/examples/data/digits.csv" | tail -1
echo "java jar: $(basename "$JAR") ($(du -h "$JAR" | cut -f1)) runs with no library path"
