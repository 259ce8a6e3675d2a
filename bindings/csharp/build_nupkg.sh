#!/usr/bin/env bash
# Builds the C# package as a .nupkg in NuGet's layout: lib/net45/KBackend.dll (what Mono's mcs
# builds; Debian 12's Mono has no netstandard2.0 reference assemblies), runtimes/linux-x64/
# native/ with libkbackend_csharp.so and what bindings/collect_natives.sh adds, the .nuspec, and
# the Open Packaging parts NuGet reads. Prints the package's path.
# Usage: bash bindings/csharp/build_nupkg.sh   (after bindings/run_jvm_dotnet_go.sh built build-bind)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=$PWD/build-bind
VERSION=$(sed -n 's/^project(kbackend VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
OUT=$BUILD/csharp-package
PKG=$OUT/content
rm -rf "$OUT"
mkdir -p "$PKG/lib/net45" "$PKG/_rels"
cp "$BUILD/bindings/csharp/KBackend.dll" "$PKG/lib/net45/"
bash bindings/collect_natives.sh "$PKG/runtimes/linux-x64/native" \
  "$BUILD/bindings/csharp/libkbackend_csharp.so"
sed "s/@VERSION@/$VERSION/" bindings/csharp/KBackend.nuspec.in >"$PKG/KBackend.nuspec"
cat >"$PKG/[Content_Types].xml" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml" />
  <Default Extension="nuspec" ContentType="application/octet" />
  <Default Extension="dll" ContentType="application/octet" />
  <Default Extension="so" ContentType="application/octet" />
  <Default Extension="1" ContentType="application/octet" />
</Types>
XML
cat >"$PKG/_rels/.rels" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Type="http://schemas.microsoft.com/packaging/2010/07/manifest" Target="/KBackend.nuspec" Id="R1" />
</Relationships>
XML
NUPKG=$OUT/KBackend.$VERSION.nupkg
(cd "$PKG" && python3 -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for folder, _, files in os.walk("."):
        for f in sorted(files):
            z.write(os.path.join(folder, f), os.path.relpath(os.path.join(folder, f), "."))
' "$NUPKG")
echo "$NUPKG"
