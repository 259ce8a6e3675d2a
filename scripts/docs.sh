#!/usr/bin/env bash
# The API reference of every language, into build-bind/docs/ (a warning fails the script):
#   c/       C and C++ (Doxygen): the C functions from api/kbackend.toml, the C++ headers' docs
#   java/    javadoc of org.kbackend (the jar's public API; every member commented)
#   python/  pdoc of the kbackend package
#   rust/    rustdoc of the kbackend and kbackend-sys crates
#   go/      go doc -all of the Go module (text)
# Builds the bindings it documents in build-bind/ (as bindings/run_tests.sh does).
# Usage: bash scripts/docs.sh      then open build-bind/docs/index.html
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build-bind
OUT=$BUILD/docs
JOBS=${JOBS:-2}
PY=/usr/bin/python3
bash scripts/deps.sh
rm -rf "$OUT"
mkdir -p "$OUT"
VERSION=$(sed -n 's/^project(kbackend VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

echo "== docs: C and C++ (Doxygen)"
$PY api/generate.py --doxygen "$OUT/kbackend_api.dox"
KB_SOURCE=$ROOT KB_DOC_PAGES="$OUT/kbackend_api.dox" KB_DOC_OUT="$OUT/c" KB_VERSION=$VERSION \
  doxygen docs/reference/Doxyfile

echo "== docs: Python (pdoc)"
cmake --build "$BUILD" -j"$JOBS" --target kbackend_python
TOOLS=$(bash bindings/python/tools_venv.sh "$BUILD")
PYTHONPATH="$BUILD/bindings/python" "$TOOLS/bin/python" -W error -m pdoc -o "$OUT/python" \
  kbackend kbackend.models kbackend.keras_backend kbackend.keras_dist

echo "== docs: Rust (rustdoc; every public item documented)"
export KBACKEND_LIB_DIR="$BUILD" CARGO_TARGET_DIR="$BUILD/rust" CARGO_BUILD_JOBS="$JOBS"
(cd bindings/rust && RUSTDOCFLAGS="-D warnings" cargo doc --offline --no-deps -q)
cp -r "$BUILD/rust/doc" "$OUT/rust"

echo "== docs: Java (javadoc)"
cmake --build "$BUILD" -j"$JOBS" --target kbackend_jar
JAVA_SOURCES="$BUILD/bindings/java/gen:bindings/java/src"
javadoc -quiet -public --release 11 -Xdoclint:all,-missing -Xwerror -d "$OUT/java" \
  -sourcepath "$JAVA_SOURCES" org.kbackend
# Every public member has a comment (a second pass with doclint's "missing" group, whose
# @param / @return warnings are not required).
bare=$(javadoc -public -Xdoclint:missing -Xmaxwarns 100000 --release 11 -d "$BUILD/javadoc-check" \
  -sourcepath "$JAVA_SOURCES" org.kbackend 2>&1 | grep "warning: no comment" || true)
if [ -n "$bare" ]; then
  echo "javadoc: public members without a comment:"; echo "$bare"; exit 1
fi

echo "== docs: Go (go doc; TestEveryExportedNameIsDocumented checks the comments)"
cmake --build "$BUILD" -j"$JOBS" --target kbackend_go
mkdir -p "$OUT/go"
(cd "$BUILD/bindings/go/kbackend" && GOFLAGS=-mod=mod GOPROXY=off GOCACHE="$BUILD/go-cache" \
  GOPATH="$BUILD/go-path" PKG_CONFIG_PATH="$BUILD/bindings/go/pkgconfig" \
  go doc -all . > "$OUT/go/kbackend.txt")

cat > "$OUT/index.html" <<HTML
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>kbackend $VERSION API reference</title></head>
<body><h1>kbackend $VERSION API reference</h1><ul>
<li><a href="c/index.html">C and C++</a> (Doxygen)</li>
<li><a href="java/index.html">Java</a> (javadoc)</li>
<li><a href="python/index.html">Python</a> (pdoc)</li>
<li><a href="rust/kbackend/index.html">Rust</a> (rustdoc)</li>
<li><a href="go/kbackend.txt">Go</a> (go doc -all)</li>
</ul></body></html>
HTML
echo "API reference: $OUT/index.html"
