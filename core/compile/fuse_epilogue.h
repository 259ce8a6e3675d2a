// Plan-time rewrite: a convolution or a matrix product followed by a bias add and/or a relu
// becomes one FusedConv / FusedMatMul node (oneDNN's bias and relu post-ops on the CPU; on the GPU
// cuDNN's fused forward convolution and cuBLASLt's epilogues) when the intermediate values have no
// other reader.
// Gradients are taken on the user's graph before any function is compiled, so the rewrite sees
// forward and gradient nodes alike and only fuses where nothing else reads the product's or the
// bias add's value (readers of their shape alone are redirected).
#pragma once
#include <memory>
#include <vector>

#include "core/compile/plan.h"

namespace kb {

// The plan of the rewritten graph (it keeps the graph's new nodes alive), or nullptr when there
// is nothing to fuse: float32 convolutions and matrix products (no batch axes) on a device with a
// kernel for the fused op (the CPU: both; the GPU: FusedMatMul); KB_FUSE=0 turns the rewrite off.
std::shared_ptr<Plan> fused_plan(const std::vector<NodePtr>& inputs,
                                 const std::vector<TensorType>& input_types,
                                 const std::vector<NodePtr>& outputs,
                                 const std::vector<NodePtr>& updates, int phase, Device device,
                                 const std::vector<int>& fed_phases);

}  // namespace kb
