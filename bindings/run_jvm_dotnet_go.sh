#!/usr/bin/env bash
# Builds the Java, C# and Go bindings in build-bind/ (CMake, JOBS=2) and runs their test suites
# and their digits examples:
#   Java: kbackend.jar + libkbackend_java.so, JUnit 5 (console launcher), examples/TrainMlp,
#         then the jar with the native libraries inside (bindings/java/build_jar.sh) from a
#         folder of its own (tests/packaging/java_jar.sh);
#   C#:   KBackend.dll + libkbackend_csharp.so, a console runner ("N passed, N failed"), the
#         .nupkg (bindings/csharp/build_nupkg.sh) as a project consumes it
#         (tests/packaging/csharp_nupkg.sh), TrainMlp;
#   Go:   the module in build-bind/bindings/go/kbackend, `go test` through `#cgo pkg-config`
#         (a build-tree kbackend.pc), then the example through the CGO_* fallback.
# Each language's data-parallel fit example (examples/FitDistributed, fit_distributed) runs alone
# and, where MPI is there, on 2 processes (bindings/on_two_processes.sh).
# Usage: bash bindings/run_jvm_dotnet_go.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build-bind
JOBS=${JOBS:-2}
DATA=$ROOT/examples/data/digits.csv
MODEL=$ROOT/examples/data/digits_mlp.h5  # saved by Keras 2.2.4 (examples/make_keras_model.py)
MODEL3=$ROOT/examples/data/digits_mlp.keras  # saved by Keras 3.15 (the same script)
bash scripts/deps.sh

echo "== bindings: build Java, C#, Go (build-bind)"
cmake -S . -B "$BUILD" -DKB_WERROR=ON -DKB_BUILD_TESTS=OFF -DKB_CUDA=OFF -DKB_JAVA=ON -DKB_CSHARP=ON -DKB_GO=ON \
  >/dev/null
MPI_TARGET=$(cmake --build "$BUILD" --target help | grep -o 'kbackend_mpi$' || true)
cmake --build "$BUILD" -j"$JOBS" --target kbackend_jar kbackend_csharp_assembly kbackend_go $MPI_TARGET
echo "== Java, C#: the C functions SWIG's wrappers reach (api/parity.py)"
python3 api/parity.py --check java,csharp

echo "== Java: JUnit 5"
J=$BUILD/bindings/java
rm -rf "$J/test-classes" && mkdir -p "$J/test-classes"
javac -Xlint:all -Werror -d "$J/test-classes" \
  -cp "$J/kbackend.jar:/usr/share/java/junit-jupiter-api.jar:/usr/share/java/apiguardian-api.jar:/usr/share/java/opentest4j.jar" \
  bindings/java/tests/org/kbackend/*.java bindings/java/examples/TrainMlp.java \
  bindings/java/examples/FinetuneKerasModel.java bindings/java/examples/FitDistributed.java
java -jar /usr/share/java/junit-platform-console-standalone.jar --disable-banner \
  --details=tree --fail-if-no-tests -cp "$J/kbackend.jar:$J/test-classes" --select-package org.kbackend
echo "== Java: example"
java -cp "$J/kbackend.jar:$J/test-classes" TrainMlp "$DATA"
echo "== Java: the jar with its native libraries, used with no library path"
bash tests/packaging/java_jar.sh "$(bash bindings/java/build_jar.sh)"
java -cp "$J/kbackend.jar:$J/test-classes" FinetuneKerasModel "$MODEL" "$DATA"
java -cp "$J/kbackend.jar:$J/test-classes" FinetuneKerasModel "$MODEL3" "$DATA" "$J/digits_mlp.onnx"
[ -s "$J/digits_mlp.onnx" ] || { echo "the Java example exported no ONNX file"; exit 1; }
java -cp "$J/kbackend.jar:$J/test-classes" FitDistributed "$DATA"
bash bindings/on_two_processes.sh "$BUILD" Java java -cp "$J/kbackend.jar:$J/test-classes" FitDistributed "$DATA"

echo "== C#: tests"
C=$BUILD/bindings/csharp
mcs -nologo -warnaserror -r:"$C/KBackend.dll" -out:"$C/tests.exe" bindings/csharp/tests/Tests.cs
(cd "$C" && KB_MODEL_FILES="$ROOT/tests/model_files" mono tests.exe)
echo "== C#: the .nupkg, consumed as a package reference would, with no library path"
bash tests/packaging/csharp_nupkg.sh "$(bash bindings/csharp/build_nupkg.sh)"
echo "== C#: example"
mcs -nologo -warnaserror -r:"$C/KBackend.dll" -out:"$C/train_mlp.exe" bindings/csharp/examples/TrainMlp.cs
(cd "$C" && mono train_mlp.exe "$DATA")
mcs -nologo -warnaserror -r:"$C/KBackend.dll" -out:"$C/finetune_keras_model.exe" \
  bindings/csharp/examples/FinetuneKerasModel.cs
(cd "$C" && mono finetune_keras_model.exe "$MODEL" "$DATA")
(cd "$C" && mono finetune_keras_model.exe "$MODEL3" "$DATA")
mcs -nologo -warnaserror -r:"$C/KBackend.dll" -out:"$C/fit_distributed.exe" \
  bindings/csharp/examples/FitDistributed.cs
(cd "$C" && mono fit_distributed.exe "$DATA")
(cd "$C" && bash "$ROOT/bindings/on_two_processes.sh" "$BUILD" "C#" mono fit_distributed.exe "$DATA")

echo "== Go: gofmt, then go test (#cgo pkg-config: kbackend, the build tree's kbackend.pc)"
unformatted=$(gofmt -l bindings/go/kbackend)
[ -z "$unformatted" ] || { echo "gofmt would change: $unformatted"; exit 1; }
export GOFLAGS=-mod=mod GOPROXY=off GOCACHE=${GOCACHE:-$BUILD/go-cache} GOPATH=${GOPATH:-$BUILD/go-path}
G=$BUILD/bindings/go
(cd "$G/kbackend" && PKG_CONFIG_PATH="$G/pkgconfig" go vet . && \
  KB_MODEL_FILES="$ROOT/tests/model_files" PKG_CONFIG_PATH="$G/pkgconfig" go test -count=1 -v ./...)
echo "== Go: example (CGO_CXXFLAGS / CGO_LDFLAGS instead of pkg-config)"
(cd "$G/kbackend" && CGO_CFLAGS="-I$ROOT/include" CGO_CXXFLAGS="-I$ROOT/include" \
  CGO_LDFLAGS="-L$BUILD -Wl,-rpath,$BUILD -lkbackend" \
  go run -tags kbackend_no_pkgconfig ./examples/train_mlp "$DATA")
for model in "$MODEL" "$MODEL3"; do
  (cd "$G/kbackend" && PKG_CONFIG_PATH="$G/pkgconfig" go run ./examples/finetune_keras_model \
    "$model" "$DATA")
done
(cd "$G/kbackend" && PKG_CONFIG_PATH="$G/pkgconfig" go build -o "$G/fit_distributed" \
  ./examples/fit_distributed)
"$G/fit_distributed" "$DATA"
bash bindings/on_two_processes.sh "$BUILD" Go "$G/fit_distributed" "$DATA"

echo "JVM/.NET/GO BINDINGS TESTS PASSED"
