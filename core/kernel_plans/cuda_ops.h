// The operations the CUDA device runs, and the half of each kernel's choice that does not depend
// on the GPU: which problems it takes (it declines the others, which run on the CPU) and whether
// it checks indices on the device, reporting an index out of range only when the thread settles.
// The CUDA plugin registers exactly these operations and asks this table before its own factory
// (whose remaining declines are the libraries' answers, cuDNN's); the emulated device
// (tests/device_emulation) registers the same operations with the same answers, so the suites run
// on it decline where a GPU does. The rank limit is not here: the compiler applies it to every
// device step (kMaxDeviceRank).
#pragma once
#include <string_view>
#include <vector>

#include "core/backend/kernel.h"

namespace kb {

struct DeviceOp {
  const char* name;
  bool (*takes)(const KernelArgs& args);  // nullptr: every problem of the op's valid inputs
  bool defers_index_errors;
};

const std::vector<DeviceOp>& cuda_ops();
const DeviceOp* find_cuda_op(std::string_view name);  // nullptr when the device lacks it
// Whether the CUDA device runs this step (a step of an op it lacks: no).
bool cuda_takes(const KernelArgs& args);

}  // namespace kb
