// The emulated device's own kernels for the operations whose CUDA kernels run one shared
// per-element function or strided map (core/kernel_plans/pool_windows.h,
// core/kernel_plans/resize_taps.h, core/kernel_plans/fused_program.h,
// core/kernel_plans/epilogue_value.h, core/kernel_plans/axis_scans.h,
// core/kernel_plans/device_reduce.h, core/kernel_plans/device_softmax.h,
// core/kernel_plans/device_batch_norm.h, core/kernel_plans/strided_map.h): the same function over
// every element, on the host, so that the suites run on the emulated device test what the GPU
// computes, not the CPU kernel. Which problems they take is not theirs to say: the emulated device
// asks the table of the CUDA device's operations first (core/kernel_plans/cuda_ops.h).
#pragma once
#include <optional>

#include "core/backend/kernel.h"

namespace kb::emulation {

// nullopt: `op` has no shared element function (the emulator runs the CPU kernel). cpu(name): the
// CPU's kernel factory of another op, for kernels that the GPU composes (FusedConv's convolution).
std::optional<Kernel> element_kernel(const char* op, const KernelArgs& args,
                                     KernelFactory (*cpu)(const char* name));

// The plugin's strided kernels (copies, broadcasting binary operations, select) over the maps the
// plugin builds (strided_kernels.cpp); nullopt for the other ops.
std::optional<Kernel> strided_kernel(const char* op, const KernelArgs& args);

// Reduce, SumToLike, Softmax and LogSoftmax in the plugin's schedule and order of sums
// (reduce_kernels.cpp); nullopt for the other ops.
std::optional<Kernel> device_reduce_kernel(const char* op, const KernelArgs& args);

// BatchNorm and BatchCenteredDot in the plugin's order of sums (batch_norm_kernels.cpp); nullopt
// for the other ops.
std::optional<Kernel> batch_norm_kernel(const char* op, const KernelArgs& args);

}  // namespace kb::emulation
