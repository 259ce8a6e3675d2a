// The CUDA device's operations and the problems each takes (core/kernel_plans/cuda_ops.h).
#include "core/kernel_plans/cuda_ops.h"

#include <algorithm>

#include "core/backend/device.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/batch_norm.h"
#include "core/kernel_plans/copy_plan.h"
#include "core/kernel_plans/device_batch_norm.h"
#include "core/kernel_plans/fused_program.h"
#include "core/kernel_plans/layout.h"
#include "core/kernel_plans/pool_problem.h"
#include "core/kernel_plans/reduce_plan.h"
#include "core/ops/op.h"
#include "core/ops/scalar_ops.h"

namespace kb {
namespace {

bool float_out(const KernelArgs& k) { return is_floating(k.out.dtype); }
bool float_in(const KernelArgs& k) { return is_floating(k.in[0].dtype); }
// Booleans have no order, no sum and no image kernel on the GPU.
bool not_bool_in(const KernelArgs& k) { return k.in[0].dtype != DType::b8; }
bool not_bool_out(const KernelArgs& k) { return k.out.dtype != DType::b8; }

// The strided maps that index a copy hold kMaxDeviceRank axes.
bool copy_fits(const KernelArgs& k) {
  std::optional<CopyPlan> p = copy_plan(k);
  return p && p->fits;
}

// TileGrad reduces the interleaved (multiple, dim) axes of its output.
bool tile_grad_fits(const KernelArgs& k) { return tile_fits_device(k.out.shape.dims.size()); }

// A condition unknown at plan time: the branches must have one shape (else the CPU says why).
bool switch_branches_agree(const KernelArgs& k) { return k.in[1].shape.dims == k.in[2].shape.dims; }

// The window kernels index three spatial axes at most, floating values only.
template <PoolKernel Which>
bool pool_fits(const KernelArgs& k) {
  return float_out(k) && pool_problem(k, Which).geom.nsp() <= 3;
}

bool product_fits(const KernelArgs& k) {
  const Attrs& a = k.node.attrs;
  return float_out(k) && fits_cublas(gemm_dims(k.in[0].shape.dims, k.in[1].shape.dims,
                                               a.i("transpose_a") != 0, a.i("transpose_b") != 0));
}

// The fused epilogue is a float32 rewrite; its fallback is a cuBLAS product.
bool fused_product_fits(const KernelArgs& k) {
  return k.out.dtype == DType::f32 && product_fits(k);
}

bool reduction_runs(const KernelArgs& k) { return !device_reduction(k).declined; }

bool centered_dot_fits(const KernelArgs& k) {
  return CenteredDotChunks(channel_layout(k.in[1].shape.dims, k.node.attrs)).fit_grid();
}

// A program beyond the register program's fixed sizes stays unfused.
bool fused_program_fits(const KernelArgs& k) {
  FusedProgram p;
  return float_out(k) && make_fused_program(k, p);
}

// The index tuples of the sparse kernels hold kMaxDeviceRank coordinates.
bool dense_shape_fits(const KernelArgs& k) {
  return k.node.attrs.ints("shape").size() <= size_t(kMaxDeviceRank);
}
bool tuple_depth_fits(const KernelArgs& k) { return k.in[1].shape.dims.back() <= kMaxDeviceRank; }

std::vector<DeviceOp> make_table() {
  constexpr bool defers = true;
  std::vector<DeviceOp> t = {
      {"BatchNorm", nullptr, false},
      {"BatchCenteredDot", centered_dot_fits, false},
      // cuDNN answers for the convolutions when the plugin asks it (no rule of ours).
      {"Conv", nullptr, false},
      {"ConvBackwardData", nullptr, false},
      {"ConvBackwardFilter", nullptr, false},
      {"FusedConv", nullptr, false},
      {"Pool", pool_fits<PoolKernel::forward>, false},
      {"PoolBackward", pool_fits<PoolKernel::backward>, false},
      {"MaxPoolGradGrad", pool_fits<PoolKernel::max_grad_grad>, false},
      {"CtcLoss", nullptr, false},
      {"CtcLossGrad", nullptr, false},
      {"Cast", nullptr, false},
      {"Select", nullptr, false},
      {"FillLike", nullptr, false},
      {"FusedElementwise", fused_program_fits, false},
      {"Resize", not_bool_out, false},
      {"ResizeGrad", not_bool_out, false},
      {"TileGrad", tile_grad_fits, false},
      {"Gather", nullptr, defers},
      {"ScatterAddLike", float_out, defers},
      {"ArgReduce", not_bool_in, false},
      {"Cumulative", not_bool_in, false},
      {"InTopK", float_in, defers},
      {"MatMul", product_fits, false},
      {"FusedMatMul", fused_product_fits, false},
      {"Reshape", nullptr, false},
      {"ReshapeLike", nullptr, false},
      {"ExpandDims", nullptr, false},
      {"Squeeze", nullptr, false},
      {"Identity", nullptr, false},
      {"StopGradient", nullptr, false},
      {"ReshapeTo", nullptr, false},
      {"StridedSlice", copy_fits, false},
      {"StridedSliceGrad", copy_fits, false},
      {"Concat", copy_fits, false},
      {"SplitLike", copy_fits, false},
      {"Tile", copy_fits, false},
      {"Reverse", copy_fits, false},
      {"Transpose", copy_fits, false},
      {"BroadcastLike", copy_fits, false},
      {"Pad", copy_fits, false},
      {"Switch", switch_branches_agree, false},
      {"Random", float_out, false},
      {"Reduce", reduction_runs, false},
      {"SumToLike", reduction_runs, false},
      {"Softmax", float_out, false},
      {"LogSoftmax", float_out, false},
      {"SparseTensor", dense_shape_fits, false},
      {"SparseToDense", dense_shape_fits, false},
      {"GatherNd", tuple_depth_fits, defers},
      {"ScatterNdLike", tuple_depth_fits, defers},
      {"SparseMatMul", nullptr, false},
      // NCCL's answers (present, and a dtype it sums) are the plugin's (core/cuda/collectives.cu).
      {"AllReduce", nullptr, false},
      {"Broadcast", nullptr, false},
      {"AllGather", nullptr, false},
      {"ReduceScatter", nullptr, false},
      {"AllReduceWait", nullptr, false},  // a bucket's (core/compile/bucket_collectives.cpp)
      {"Pack", nullptr, false},
      {"Unpack", nullptr, false},
  };
  // The scalar table's operations: its domains are the inference's, so every valid problem.
#define KB_CUDA_SCALAR_ROW(Name, ...) t.push_back({#Name, nullptr, false});
  KB_UNARY_OPS(KB_CUDA_SCALAR_ROW)
  KB_BINARY_OPS(KB_CUDA_SCALAR_ROW)
#undef KB_CUDA_SCALAR_ROW
  return t;
}

}  // namespace

const std::vector<DeviceOp>& cuda_ops() {
  static const std::vector<DeviceOp> table = make_table();
  return table;
}

const DeviceOp* find_cuda_op(std::string_view name) {
  const std::vector<DeviceOp>& t = cuda_ops();
  auto it = std::find_if(t.begin(), t.end(), [&](const DeviceOp& d) { return d.name == name; });
  return it == t.end() ? nullptr : &*it;
}

bool cuda_takes(const KernelArgs& args) {
  const DeviceOp* op = find_cuda_op(args.node.op->name);
  return op && (!op->takes || op->takes(args));
}

}  // namespace kb
