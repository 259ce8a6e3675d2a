// Small float32 convolutions with channels last as matrix products (im2col): the input's windows
// gathered into rows, one sgemm, and for the input's gradient the rows added back. oneDNN's
// convolution primitives cost about 25 us per call beyond their arithmetic on problems this small
// (a digits CNN's 3x3 convolution from 16 to 32 channels, batch 32: forward, input and kernel
// gradients 35, 33 and 54 us through oneDNN, 36, 37 and 35 us here; batch 8: 31, 29, 29 against
// 16, 17, 11 us).
#pragma once
#include "core/backend/kernel.h"
#include "core/cpu/conv_geo.h"
#include "core/cpu/epilogue.h"

namespace kb::cpu {

// Whether the products take the problem: float32 (the caller's check), channels last, one group,
// 8 channels or more (a cell of one channel is a copy per value: 3x3 over one channel took 2-3
// times oneDNN's time), below kSerialWork multiply-adds (larger ones run oneDNN's kernels on
// several threads).
bool im2col_fits(const ConvGeo& g);

// The pass's kernel over the inputs the graph gives it (Conv / FusedConv: x, kernel[, bias];
// ConvBackwardData: dy, kernel; ConvBackwardFilter: x, dy). e: the forward pass's epilogue.
Kernel im2col_kernel(ConvPass pass, const ConvGeo& g, Epilogue e = {});

}  // namespace kb::cpu
