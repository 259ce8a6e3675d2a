#!/usr/bin/env bash
# Packaging and ABI checks (called by scripts/test.sh; runs alone too: bash tests/packaging/run.sh).
#   a. build-pkg (prefix /usr, RelWithDebInfo, no tests); `cmake --install --prefix` into a
#      staging dir: header, libkbackend.so.1 (soname), kbackend.pc, kbackendConfig.cmake.
#   b. tests/packaging/consumer (y = x*2+1 through the C ABI) built against the staged tree with
#      pkg-config and with find_package(kbackend), and run; consumer.cpp (the same through the
#      installed C++ layer kbackend.hpp) with pkg-config.
#   c. cpack -G DEB: contents and control fields of libkbackend1, libkbackend-dev and the
#      plugins' kbackend-mpi and kbackend-cuda; as root, dpkg -i (ldconfig's cache then has the
#      library), the consumer again with plain pkg-config and find_package against /usr,
#      tests/packaging/consumer_go (the Go module by its path, plain `go build`) and
#      consumer_rust (the crate by its path, pkg-config), each also building and running its
#      binding's digits MLP example (as the C and C++ examples are, against /usr), then
#      dpkg --purge (also on failure;
#      -r would leave them in state "rc").
#   d. only kb_* symbols exported; SONAME libkbackend.so.1.
#   e. ABI: abidiff against the committed baseline tests/packaging/abi/kbackend.abi. Added
#      functions pass; a removed function or a changed signature/type fails. See
#      update_abi_baseline.sh.
# Quiet on success; on failure prints the failing step's output.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/packaging/common.sh
. tests/packaging/common.sh
START=$SECONDS
CONSUMER=$PWD/tests/packaging/consumer
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbackend-pkg.XXXXXX")
INSTALLED_BY_US=0

cleanup() {
  if [ "$INSTALLED_BY_US" = 1 ]; then
    dpkg --purge libkbackend-dev libkbackend1 >/dev/null 2>&1 ||
      echo "packaging: could not dpkg --purge libkbackend-dev libkbackend1" >&2
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

say() { echo "packaging: $*"; }
fail() {
  echo "packaging: FAIL: $*" >&2
  exit 1
}
# Runs a command with its output in $TMP/step.log, shown only when it fails.
step() {
  "$@" >"$TMP/step.log" 2>&1 || {
    cat "$TMP/step.log" >&2
    fail "$*"
  }
}

# ---- a. build, staged install ---------------------------------------------------------------
kb_build_pkg "$TMP/build.log" || {
  tail -50 "$TMP/build.log" >&2
  fail "building $PKG_BUILD"
}
STAGE=$TMP/stage
step cmake --install "$PKG_BUILD" --prefix "$STAGE"
[ -f "$STAGE/include/kbackend.h" ] || fail "staged tree lacks include/kbackend.h"
[ -f "$STAGE/include/kbackend.hpp" ] || fail "staged tree lacks include/kbackend.hpp"
SO1=$(find "$STAGE" -path "$STAGE/lib*/libkbackend.so.1" | head -1)
[ -n "$SO1" ] || fail "staged tree lacks lib*/libkbackend.so.1"
LIBDIR=$(dirname "$SO1")
LIBREL=${LIBDIR#"$STAGE"/}
[ -e "$LIBDIR/libkbackend.so" ] || fail "staged tree lacks $LIBREL/libkbackend.so (dev link)"
PC=$LIBDIR/pkgconfig/kbackend.pc
[ -f "$PC" ] || fail "staged tree lacks $LIBREL/pkgconfig/kbackend.pc"
[ -f "$LIBDIR/cmake/kbackend/kbackendConfig.cmake" ] ||
  fail "staged tree lacks $LIBREL/cmake/kbackend/kbackendConfig.cmake"
grep -qx 'prefix=/usr' "$PC" || fail "kbackend.pc: prefix is not /usr: $(grep '^prefix=' "$PC")"
say "staged install: include/kbackend.h{,pp}, $LIBREL/{libkbackend.so.1,pkgconfig/kbackend.pc,cmake/kbackend/}"

# ---- d. exported symbols, soname ------------------------------------------------------------
SONAME=$(readelf -d "$SO1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$SONAME" = libkbackend.so.1 ] || fail "SONAME is '$SONAME', want libkbackend.so.1"
SYMS=$(nm -D --defined-only "$SO1" | awk '{print $3}')
OTHER=$(grep -v '^kb_' <<<"$SYMS" || true)
[ -z "$OTHER" ] || fail "symbols other than kb_* are exported: $(head -20 <<<"$OTHER" | tr '\n' ' ')"
NSYMS=$(grep -c '^kb_' <<<"$SYMS")
say "exports: $NSYMS kb_* symbols and nothing else; SONAME $SONAME"

# ---- e. ABI against the committed baseline --------------------------------------------------
# abidiff's exit status: bit 1 error, 2 usage error, 4 ABI change, 8 incompatible change (a
# removed symbol). A changed parameter type or enum value is only 4, and so is an added function:
# --no-added-syms (common.sh) filters the additions, so any status left but 0 is an error or a
# change that breaks callers; fail on it (rc & 12 = a break, rc & 3 = could not compare).
[ -f "$ABI_BASELINE" ] || fail "no ABI baseline $ABI_BASELINE (make one: bash tests/packaging/update_abi_baseline.sh)"
set +e
abidiff "${ABIDIFF_FLAGS[@]}" "$ABI_BASELINE" "$SO1" >"$TMP/abidiff.txt" 2>&1
rc=$?
set -e
if [ "$rc" != 0 ]; then
  cat "$TMP/abidiff.txt" >&2
  if [ $((rc & 3)) != 0 ]; then fail "abidiff could not compare (status $rc)"; fi
  fail "ABI break against $ABI_BASELINE (abidiff status $rc; bit 8 = removed symbols). Never change an exported signature: add a new function (docs/architecture.md, The C ABI)."
fi
NBASE=$(grep -c "<elf-symbol name='kb_" "$ABI_BASELINE" || true)
say "ABI: compatible with $ABI_BASELINE ($NBASE symbols there, $((NSYMS - NBASE)) added since)"

# ---- b. consumer against the staged tree ----------------------------------------------------
# The .pc says prefix=/usr: override the prefix variable (works with pkgconf and pkg-config;
# --define-prefix would guess <stage>/lib from the multiarch libdir, and a sysroot would need
# <stage>/usr).
CC=${CC:-cc}
build_pkgconfig_consumer() { # out, pkg-config arguments...
  local out=$1
  shift
  local flags
  flags=$(pkg-config "$@" --cflags --libs kbackend) || return 1
  echo "pkg-config: $flags"
  # shellcheck disable=SC2086
  "$CC" -std=c99 -Wall -Werror "$CONSUMER/consumer.c" -o "$out" $flags -lm
}
CXX=${CXX:-c++}
build_pkgconfig_consumer_hpp() { # out, pkg-config arguments... (the C++ layer, kbackend.hpp)
  local out=$1
  shift
  local flags
  flags=$(pkg-config "$@" --cflags --libs kbackend) || return 1
  # shellcheck disable=SC2086
  "$CXX" -std=c++17 -Wall -Wextra -Werror "$CONSUMER/consumer.cpp" -o "$out" $flags
}
build_cmake_consumer() { # build dir, extra cmake arguments...
  local dir=$1
  shift
  cmake -S "$CONSUMER" -B "$dir" "$@" && cmake --build "$dir"
}
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
step build_pkgconfig_consumer "$TMP/consumer-pc" --define-variable=prefix="$STAGE"
grep -q -- "-L$LIBDIR" "$TMP/step.log" || { cat "$TMP/step.log"; fail "pkg-config did not point at the staged lib dir"; }
step build_pkgconfig_consumer_hpp "$TMP/consumer-hpp" --define-variable=prefix="$STAGE"
unset PKG_CONFIG_PATH
step build_cmake_consumer "$TMP/consumer-cmake" -DCMAKE_PREFIX_PATH="$STAGE"
grep -qx "kbackend_DIR:PATH=$LIBDIR/cmake/kbackend" "$TMP/consumer-cmake/CMakeCache.txt" ||
  fail "find_package(kbackend) found $(grep '^kbackend_DIR' "$TMP/consumer-cmake/CMakeCache.txt"), not the staged one"
for exe in "$TMP/consumer-pc" "$TMP/consumer-hpp" "$TMP/consumer-cmake/consumer"; do
  step env LD_LIBRARY_PATH="$LIBDIR" "$exe"
  grep -q '^OK' "$TMP/step.log" || { cat "$TMP/step.log"; fail "$exe did not print OK"; }
  ldd_line=$(LD_LIBRARY_PATH="$LIBDIR" ldd "$exe" | grep libkbackend.so.1 || true)
  case "$ldd_line" in *"$LIBDIR/libkbackend.so.1"*) ;; *) fail "$exe loads '$ldd_line', not the staged library" ;; esac
done
say "consumer (staged): pkg-config (C, C++) and find_package(kbackend) builds print OK"

# ---- c. Debian packages ---------------------------------------------------------------------
# As Debian splits a library: libkbackend1 (the runtime: libraries, shlibs, ldconfig trigger),
# libkbackend-dev (headers, link name, .pc, CMake files; depends on the runtime of its version),
# and each plugin where it was built (kbackend-mpi, kbackend-cuda, kbackend-onnx,
# kbackend-tensorboard), so that the library's package pulls in neither MPI, CUDA nor protobuf.
DEBDIR=$TMP/deb
step cpack --config "$PKG_BUILD/CPackConfig.cmake" -G DEB -B "$DEBDIR"
deb_of() { find "$DEBDIR" -maxdepth 1 -name "$1_*.deb" | head -1; }
RUN_DEB=$(deb_of libkbackend1)
DEV_DEB=$(deb_of libkbackend-dev)
[ -n "$RUN_DEB" ] && [ -n "$DEV_DEB" ] || { cat "$TMP/step.log"; fail "cpack made no libkbackend1 and libkbackend-dev packages"; }
files_of() { dpkg-deb -c "$1" | grep -v '^d' | awk '{print $6}' | sort; }
has_files() { # deb, files...
  local deb=$1
  shift
  files_of "$deb" >"$TMP/deb-contents.txt"
  for f in "$@"; do
    grep -qxF "$f" "$TMP/deb-contents.txt" || { cat "$TMP/deb-contents.txt"; fail "$(basename "$deb") lacks $f"; }
  done
}
has_files "$RUN_DEB" "./usr/$LIBREL/libkbackend.so.1" "./usr/$LIBREL/libkbackend_omp.so.1"
! grep -q '/include/\|\.pc$\|/cmake/\|libkbackend\.so$' "$TMP/deb-contents.txt" ||
  fail "$(basename "$RUN_DEB") holds development files: $(cat "$TMP/deb-contents.txt")"
has_files "$DEV_DEB" ./usr/include/kbackend.h ./usr/include/kbackend.hpp \
  ./usr/include/kbackend_functions.hpp "./usr/$LIBREL/libkbackend.so" \
  "./usr/$LIBREL/pkgconfig/kbackend.pc" "./usr/$LIBREL/cmake/kbackend/kbackendConfig.cmake" \
  "./usr/$LIBREL/cmake/kbackend/kbackendTargets.cmake"
dpkg-deb -I "$RUN_DEB" >"$TMP/deb-info.txt"
grep -q '^ Package: libkbackend1$' "$TMP/deb-info.txt" || { cat "$TMP/deb-info.txt"; fail "control: Package is not libkbackend1"; }
grep -q '^ Depends:.*libc6' "$TMP/deb-info.txt" || { cat "$TMP/deb-info.txt"; fail "control: no Depends on libc6 (dpkg-shlibdeps did not run?)"; }
grep -q ' shlibs *$' "$TMP/deb-info.txt" || { cat "$TMP/deb-info.txt"; fail "control: no shlibs file"; }
grep -q ' triggers *$' "$TMP/deb-info.txt" || { cat "$TMP/deb-info.txt"; fail "control: no triggers file (ldconfig)"; }
! grep -q '^ Depends:.*\(openmpi\|cuda\|cublas\|onnx\|protobuf\)' "$TMP/deb-info.txt" || { cat "$TMP/deb-info.txt"; fail "control: libkbackend1 depends on MPI, CUDA or ONNX"; }
say "$(basename "$RUN_DEB"): the library, shlibs, ldconfig trigger ($(sed -n 's/^ Depends: //p' "$TMP/deb-info.txt"))"
dpkg-deb -I "$DEV_DEB" >"$TMP/dev-info.txt"
grep -q "^ Depends:.*libkbackend1 (= $(sed -n 's/^ Version: //p' "$TMP/deb-info.txt"))" "$TMP/dev-info.txt" ||
  { cat "$TMP/dev-info.txt"; fail "libkbackend-dev does not depend on libkbackend1 of its version"; }
say "$(basename "$DEV_DEB"): headers, link name, .pc, CMake files"
PLUGIN_DEBS=""
for plugin in mpi cuda onnx tensorboard; do
  PLUGIN_DEB=$(deb_of "kbackend-$plugin")
  [ -f "$STAGE/$LIBREL/libkbackend_$plugin.so" ] || continue
  [ -n "$PLUGIN_DEB" ] || fail "cpack made no kbackend-${plugin}_*.deb beside the plugin"
  PLUGIN_DEBS="$PLUGIN_DEBS $PLUGIN_DEB"
  [ "$(files_of "$PLUGIN_DEB")" = "./usr/$LIBREL/libkbackend_$plugin.so" ] ||
    fail "$(basename "$PLUGIN_DEB") holds '$(files_of "$PLUGIN_DEB")', not the plugin alone"
  dpkg-deb -I "$PLUGIN_DEB" >"$TMP/plugin-info.txt"
  grep -q '^ Depends:.*libkbackend1 (= ' "$TMP/plugin-info.txt" ||
    { cat "$TMP/plugin-info.txt"; fail "$(basename "$PLUGIN_DEB") does not depend on libkbackend1"; }
  if [ "$plugin" = mpi ] && ! grep -q '^ Depends:.*libopenmpi' "$TMP/plugin-info.txt"; then
    cat "$TMP/plugin-info.txt"
    fail "$(basename "$PLUGIN_DEB") does not depend on Open MPI"
  fi
  if [ "$plugin" = onnx ] && ! grep -q '^ Depends:.*libonnx.*libprotobuf\|^ Depends:.*libprotobuf.*libonnx' "$TMP/plugin-info.txt"; then
    cat "$TMP/plugin-info.txt"
    fail "$(basename "$PLUGIN_DEB") does not depend on libonnx and libprotobuf"
  fi
  if [ "$plugin" = tensorboard ] && ! grep -q '^ Depends:.*libprotobuf' "$TMP/plugin-info.txt"; then
    cat "$TMP/plugin-info.txt"
    fail "$(basename "$PLUGIN_DEB") does not depend on libprotobuf"
  fi
  say "$(basename "$PLUGIN_DEB"): the plugin alone ($(sed -n 's/^ Depends: //p' "$TMP/plugin-info.txt"))"
done
# Everything `cmake --install` stages is in exactly one package.
(cd "$STAGE" && find . ! -type d | sed 's|^\./|./usr/|') | sort >"$TMP/staged.txt"
for deb in "$RUN_DEB" "$DEV_DEB" $PLUGIN_DEBS; do files_of "$deb"; done | sort >"$TMP/deb-files.txt"
if ! diff "$TMP/staged.txt" "$TMP/deb-files.txt" >"$TMP/diff.txt"; then
  cat "$TMP/diff.txt" >&2
  fail "the files of the packages (>) differ from the staged install (<)"
fi

if [ "$(id -u)" != 0 ]; then
  say "not root: skipped dpkg -i, the consumer against /usr, dpkg --purge"
elif ! dpkg --version >/dev/null 2>&1 || [ ! -w /var/lib/dpkg ]; then
  say "dpkg not usable: skipped dpkg -i, the consumer against /usr, dpkg --purge"
elif dpkg-query -W -f='${Status}' libkbackend1 2>/dev/null | grep -q 'install ok installed'; then
  say "libkbackend1 is already installed on this machine: skipped dpkg -i (not touching it)"
else
  # Only what is installed counts from here on.
  unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR CMAKE_PREFIX_PATH LD_LIBRARY_PATH
  INSTALLED_BY_US=1
  step dpkg -i "$RUN_DEB" "$DEV_DEB"
  step ldconfig -p
  grep -q 'libkbackend.so.1 ' "$TMP/step.log" || fail "ldconfig's cache lacks libkbackend.so.1 after dpkg -i"
  step pkg-config --cflags --libs kbackend
  step build_pkgconfig_consumer "$TMP/sys-consumer-pc"
  step build_pkgconfig_consumer_hpp "$TMP/sys-consumer-hpp"
  step build_cmake_consumer "$TMP/sys-consumer-cmake"
  grep -qx "kbackend_DIR:PATH=/usr/$LIBREL/cmake/kbackend" "$TMP/sys-consumer-cmake/CMakeCache.txt" ||
    fail "find_package(kbackend) found $(grep '^kbackend_DIR' "$TMP/sys-consumer-cmake/CMakeCache.txt"), not /usr/$LIBREL/cmake/kbackend"
  for exe in "$TMP/sys-consumer-pc" "$TMP/sys-consumer-hpp" "$TMP/sys-consumer-cmake/consumer"; do
    step "$exe"
    grep -q '^OK' "$TMP/step.log" || { cat "$TMP/step.log"; fail "$exe did not print OK"; }
  done
  # The digits MLP examples of C and C++, built against the installed packages alone.
  # shellcheck disable=SC2046
  step "$CC" -std=c99 -O2 examples/train_mlp.c -o "$TMP/sys-train-mlp" $(pkg-config --cflags --libs kbackend) -lm
  step "$TMP/sys-train-mlp" examples/data/digits.csv
  say "the C example against the packages trains the digits MLP: $(grep 'test accuracy' "$TMP/step.log")"
  # shellcheck disable=SC2046
  step "$CXX" -std=c++17 -O2 examples/train_mlp.cpp -o "$TMP/sys-train-mlp-cpp" $(pkg-config --cflags --libs kbackend)
  step "$TMP/sys-train-mlp-cpp" examples/data/digits.csv
  say "the C++ example against the packages trains the digits MLP: $(grep 'test accuracy' "$TMP/step.log")"
  if command -v go >/dev/null; then
    # The Go module by its path from a project of its own: plain `go build`, the library found
    # by `#cgo pkg-config: kbackend` in the installed kbackend.pc.
    cp -r tests/packaging/consumer_go "$TMP/go-consumer"
    step env -C "$TMP/go-consumer" go mod edit -replace "kbackend.dev/kbackend=$PWD/bindings/go/kbackend"
    step env -C "$TMP/go-consumer" GOFLAGS=-mod=mod GOPROXY=off GOCACHE="$TMP/go-cache" \
      GOPATH="$TMP/go-path" go build -o consumer .
    step "$TMP/go-consumer/consumer"
    grep -q '^OK' "$TMP/step.log" || { cat "$TMP/step.log"; fail "the Go consumer did not print OK"; }
    say "consumer_go (go build, the module by path): $(head -1 "$TMP/step.log")"
    # The module's digits MLP example, built and run as part of that outside project.
    mkdir -p "$TMP/go-consumer/train_mlp"
    cp bindings/go/kbackend/examples/train_mlp/main.go "$TMP/go-consumer/train_mlp/"
    step env -C "$TMP/go-consumer" GOFLAGS=-mod=mod GOPROXY=off GOCACHE="$TMP/go-cache" \
      GOPATH="$TMP/go-path" go build -o train_mlp_bin ./train_mlp
    step "$TMP/go-consumer/train_mlp_bin" "$PWD/examples/data/digits.csv"
    say "consumer_go trains the digits MLP: $(grep 'test accuracy' "$TMP/step.log")"
  fi
  if command -v cargo >/dev/null; then
    # The Rust crate by its path from a project of its own: kbackend-sys finds the library
    # through `pkg-config kbackend`.
    cp -r tests/packaging/consumer_rust "$TMP/rust-consumer"
    # with the crate's digits MLP example as a second binary of that project
    mkdir -p "$TMP/rust-consumer/src/bin"
    cp bindings/rust/kbackend/examples/train_mlp.rs "$TMP/rust-consumer/src/bin/train_mlp.rs"
    sed -i "s|\.\./\.\./\.\./bindings|$PWD/bindings|" "$TMP/rust-consumer/Cargo.toml"
    step env -C "$TMP/rust-consumer" -u KBACKEND_LIB_DIR CARGO_TARGET_DIR="$TMP/rust-target" \
      cargo build --offline -q
    step "$TMP/rust-target/debug/consumer"
    grep -q '^OK' "$TMP/step.log" || { cat "$TMP/step.log"; fail "the Rust consumer did not print OK"; }
    say "consumer_rust (cargo build, the crate by path): $(head -1 "$TMP/step.log")"
    step "$TMP/rust-target/debug/train_mlp" "$PWD/examples/data/digits.csv"
    say "consumer_rust trains the digits MLP: $(grep 'test accuracy' "$TMP/step.log")"
  fi
  step dpkg --purge libkbackend-dev libkbackend1
  INSTALLED_BY_US=0
  [ ! -e "/usr/$LIBREL/libkbackend.so.1" ] || fail "dpkg --purge left /usr/$LIBREL/libkbackend.so.1"
  say "dpkg -i, consumers via pkg-config and find_package against /usr print OK, dpkg --purge: ok"
fi

say "OK ($((SECONDS - START)) s)"
