#!/usr/bin/env bash
# The .nupkg (bindings/csharp/build_nupkg.sh) as a project consumes it: what a package reference
# puts into the build output (lib/net45's assembly, runtimes/linux-x64/native's libraries) in a
# folder of its own, the digits example compiled against the assembly with mcs and run with
# mono, with no library path; the assembly carries the package's version.
# Usage: bash tests/packaging/csharp_nupkg.sh NUPKG
set -euo pipefail
NUPKG=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kbackend-nupkg.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "csharp nupkg: FAIL: $*" >&2
  exit 1
}
cd "$TMP"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall("pkg")' "$NUPKG"
version=$(sed -n 's|.*<version>\(.*\)</version>.*|\1|p' pkg/KBackend.nuspec)
[ -n "$version" ] || fail "no version in KBackend.nuspec"
mkdir out
cp pkg/lib/net45/KBackend.dll pkg/runtimes/linux-x64/native/* out/
cat >version.cs <<'CS'
class Version {
  static void Main() { System.Console.WriteLine(typeof(KBackend.K).Assembly.GetName().Version); }
}
CS
mcs -nologo -warnaserror -r:out/KBackend.dll -out:out/version.exe version.cs
got=$(mono out/version.exe)
[ "$got" = "$version.0" ] || fail "KBackend.dll is version $got, the package $version"
mcs -nologo -warnaserror -r:out/KBackend.dll -out:out/train_mlp.exe \
  "$ROOT/bindings/csharp/examples/TrainMlp.cs"
unset LD_LIBRARY_PATH
mono out/train_mlp.exe "$ROOT/examples/data/digits.csv" | tail -1
echo "csharp nupkg: $(basename "$NUPKG") ($(du -h "$NUPKG" | cut -f1)): KBackend.dll $got runs with no library path"
