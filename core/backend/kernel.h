// The device interface: kernels are created per node once its concrete input types are known
// (at plan time) and then called for every run of the plan.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/graph/buffer.h"
#include "core/graph/node.h"
#include "core/ops/op_names.h"

namespace kb {

struct KernelArgs {
  const Node& node;
  const std::vector<TensorType>& in;  // concrete types
  const TensorType& out;              // concrete type
  // Tuple-typed ops: which parts the plan reads (nullptr: all may be read).
  const std::vector<bool>* used_parts = nullptr;
  // Per input (nullptr: none): the value is the same from run to run while its storage is (a
  // variable the plan does not update, a constant, a value the plan computes from those alone
  // and keeps: Step::kept). A kernel may keep what it derives from such an input (a
  // convolution's weights in oneDNN's layout) for as long as it holds the input's storage and
  // the Buffer is not external; nothing in the library writes a storage someone else holds.
  const std::vector<bool>* stable = nullptr;
};

// `out` arrives with dtype and dims set. For ops marked `view` it arrives without storage (the
// kernel may alias an input's storage or allocate); otherwise its storage is already allocated.
using Kernel = std::function<void(const std::vector<const Buffer*>& in, Buffer& out)>;
// A device factory may return an empty Kernel to decline (unsupported dtype): the step then
// runs on the CPU.
using KernelFactory = Kernel (*)(const KernelArgs& args);

void register_kernel(const std::string& device, const std::string& op, KernelFactory f);
KernelFactory find_kernel(const std::string& device, const std::string& op);

struct KernelRegistrar {
  KernelRegistrar(const char* device, OpName op, KernelFactory f) {
    register_kernel(device, op.c_str(), f);
  }
};

}  // namespace kb
