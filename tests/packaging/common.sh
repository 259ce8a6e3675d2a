# shellcheck shell=bash disable=SC2034
# Shared by run.sh and update_abi_baseline.sh (sourced from the repository root).

PKG_BUILD=${KB_PKG_BUILD_DIR:-build-pkg}
ABI_BASELINE=tests/packaging/abi/kbackend.abi
JOBS=${JOBS:-2}

# abidw options for the baseline: only the exported (kb_*) functions and the types they reach
# (without --exported-interfaces-only the internal C++ types, Eigen and the STL make it 15 MB);
# only the public headers (include/, any include/kbackend/*.h parts too) define types; no paths
# (--short-locs: bare file names of the translation units), no source locations, no DT_NEEDED,
# so the file is the same on every machine and does not change when code moves; hash type ids
# keep the diffs of a baseline update small.
ABIDW_FLAGS=(--exported-interfaces-only --headers-dir include --drop-private-types
             --no-corpus-path --no-comp-dir-path --no-show-locs --short-locs --no-elf-needed
             --type-id-style hash)
# abidiff options: --no-added-syms filters added functions (compatible). Deliberately NOT
# --headers-dir2: with it abidiff filters out changes through types defined outside include/,
# e.g. a parameter changed from size_t to uint32_t or a return type from int32_t to int64_t.
ABIDIFF_FLAGS=(--exported-interfaces-only --no-added-syms)

# Configures and builds (all targets, as cpack does) the way the Debian package is built:
# prefix /usr (the .pc and the CMake package name /usr), RelWithDebInfo (abidiff needs -g).
# KB_WERROR=ON makes the compile commands those of scripts/test.sh's build/, so ccache (hash_dir
# off, see CMakeLists.txt) serves build-pkg from build/'s objects.
kb_build_pkg() {
  local log=$1
  cmake -S . -B "$PKG_BUILD" -DCMAKE_INSTALL_PREFIX=/usr -DKB_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKB_WERROR=ON >"$log" 2>&1 &&
    cmake --build "$PKG_BUILD" -j"$JOBS" >>"$log" 2>&1
}
