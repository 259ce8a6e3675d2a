#!/usr/bin/env bash
# Rewrites the committed ABI baseline tests/packaging/abi/kbackend.abi from the library built in
# build-pkg (RelWithDebInfo; abidw reads its DWARF, limited to the types of include/).
#
# When to run it: after a release, or after an INTENTIONAL addition to the C ABI that you want
# later changes to be checked against. Additions are compatible, so tests/packaging/run.sh passes
# without an update (it reports how many symbols were added since the baseline); updating only
# makes the new functions' signatures part of what is protected.
#
# Never run it to make run.sh pass after it reported an ABI break (a removed function, a changed
# parameter, return or struct type, a renumbered enum): that breaks every program built against
# libkbackend.so.1. Add a new function instead (docs/architecture.md, "The C ABI"), or, for a deliberate break,
# bump KB_ABI_MAJOR (the soname) in CMakeLists.txt and KB_ABI_VERSION in include/kbackend.h first.
#
# Usage: bash tests/packaging/update_abi_baseline.sh   then review `git diff --stat` and commit
# the baseline with the header change.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/packaging/common.sh
. tests/packaging/common.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
kb_build_pkg "$log" || {
  tail -50 "$log" >&2
  echo "update_abi_baseline: build failed" >&2
  exit 1
}
mkdir -p "$(dirname "$ABI_BASELINE")"
abidw "${ABIDW_FLAGS[@]}" --out-file "$ABI_BASELINE.new" "$PKG_BUILD/libkbackend.so"
# The new baseline must describe the library it was made from.
abidiff --exported-interfaces-only "$ABI_BASELINE.new" "$PKG_BUILD/libkbackend.so"
mv "$ABI_BASELINE.new" "$ABI_BASELINE"
echo "update_abi_baseline: wrote $ABI_BASELINE ($(grep -c "<elf-symbol name='kb_" "$ABI_BASELINE") kb_* symbols)"
