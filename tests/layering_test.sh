#!/usr/bin/env bash
# Includes run down the layers only (docs/architecture.md). The layers, bottom to top: util,
# graph, ops, backend, kernel_plans, compile, autodiff, api, model (Keras models), onnx (the ONNX
# plugin, over the model's export interface), then capi. The devices (cpu, cuda)
# and the collectives' MPI engine (mpi) may include kernel_plans and what lies below it, never
# each other, compile, autodiff or api;
# and no layer above the devices includes a device library's header (Eigen, oneDNN, CUDA, MPI).
# Fails on any include that breaks this.
# Usage: layering_test.sh <source dir>
set -uo pipefail
cd "${1:?usage: layering_test.sh <source dir>}" || exit 2

declare -A rank=([util]=0 [graph]=1 [ops]=2 [backend]=3 [kernel_plans]=4 [compile]=5 [autodiff]=6
  [api]=7 [model]=8 [onnx]=9)
declare -A device=([cpu]=1 [cuda]=1 [mpi]=1)
bad=0
while IFS= read -r file; do
  layer=$(echo "$file" | cut -d/ -f2)
  while IFS= read -r inc; do
    target=$(echo "$inc" | cut -d/ -f2)
    [ "$target" = "$layer" ] && continue
    ok=1
    if [ -n "${device[$layer]:-}" ]; then
      [ -n "${device[$target]:-}" ] && ok=0
      [ -n "${rank[$target]:-}" ] && [ "${rank[$target]}" -gt "${rank[kernel_plans]}" ] && ok=0
    elif [ -n "${rank[$layer]:-}" ]; then
      [ -n "${device[$target]:-}" ] && ok=0
      [ -n "${rank[$target]:-}" ] && [ "${rank[$target]}" -gt "${rank[$layer]}" ] && ok=0
    fi
    if [ $ok = 0 ]; then
      echo "$file includes $inc: an include up the layers"
      bad=1
    fi
  done < <(grep -oE '^#include "core/[a-z_]+/[^"]+"' "$file" | sed 's/#include "//; s/"$//')
done < <(find core \( -name '*.h' -o -name '*.cpp' -o -name '*.cuh' -o -name '*.cu' \) | sort)

# Device libraries stay below the device line (half.h and bfloat16.h take CUDA's types in code
# nvcc compiles, behind __CUDACC__).
if grep -rnE '^#include [<"](Eigen|unsupported/Eigen|oneapi/dnnl|dnnl|cuda|cudnn|cublas|mpi|nccl)' \
    core/util core/graph core/ops core/backend core/kernel_plans core/compile core/autodiff core/api core/model capi |
    grep -vE '^core/util/(half|bfloat16)\.h:'; then
  echo "a device library's header above the devices (the lines above)"
  bad=1
fi
[ $bad = 0 ] && echo "layering ok"
exit $bad
