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
  return float_out(k) &&
         fits_cublas(gemm_dims(k.in[0].shape.dims, k.in[1].shape.dims, a.i(attr::transpose_a) != 0,
                               a.i(attr::transpose_b) != 0));
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
  return k.node.attrs.ints(attr::shape).size() <= size_t(kMaxDeviceRank);
}
bool tuple_depth_fits(const KernelArgs& k) { return k.in[1].shape.dims.back() <= kMaxDeviceRank; }

std::vector<DeviceOp> make_table() {
  constexpr bool defers = true;
  std::vector<DeviceOp> t = {
      {ops::BatchNorm.c_str(), nullptr, false},
      {ops::BatchCenteredDot.c_str(), centered_dot_fits, false},
      // cuDNN answers for the convolutions when the plugin asks it (no rule of ours).
      {ops::Conv.c_str(), nullptr, false},
      {ops::ConvBackwardData.c_str(), nullptr, false},
      {ops::ConvBackwardFilter.c_str(), nullptr, false},
      {ops::FusedConv.c_str(), nullptr, false},
      {ops::Pool.c_str(), pool_fits<PoolKernel::forward>, false},
      {ops::PoolBackward.c_str(), pool_fits<PoolKernel::backward>, false},
      {ops::MaxPoolGradGrad.c_str(), pool_fits<PoolKernel::max_grad_grad>, false},
      {ops::CtcLoss.c_str(), nullptr, false},
      {ops::CtcLossGrad.c_str(), nullptr, false},
      {ops::Cast.c_str(), nullptr, false},
      {ops::Select.c_str(), nullptr, false},
      {ops::FillLike.c_str(), nullptr, false},
      {ops::FusedElementwise.c_str(), fused_program_fits, false},
      {ops::Resize.c_str(), not_bool_out, false},
      {ops::ResizeGrad.c_str(), not_bool_out, false},
      {ops::TileGrad.c_str(), tile_grad_fits, false},
      {ops::Gather.c_str(), nullptr, defers},
      {ops::ScatterAddLike.c_str(), float_out, defers},
      {ops::ArgReduce.c_str(), not_bool_in, false},
      {ops::Cumulative.c_str(), not_bool_in, false},
      {ops::InTopK.c_str(), float_in, defers},
      {ops::MatMul.c_str(), product_fits, false},
      {ops::FusedMatMul.c_str(), fused_product_fits, false},
      {ops::Reshape.c_str(), nullptr, false},
      {ops::ReshapeLike.c_str(), nullptr, false},
      {ops::ExpandDims.c_str(), nullptr, false},
      {ops::Squeeze.c_str(), nullptr, false},
      {ops::Identity.c_str(), nullptr, false},
      {ops::StopGradient.c_str(), nullptr, false},
      {ops::ReshapeTo.c_str(), nullptr, false},
      {ops::StridedSlice.c_str(), copy_fits, false},
      {ops::StridedSliceGrad.c_str(), copy_fits, false},
      {ops::Concat.c_str(), copy_fits, false},
      {ops::SplitLike.c_str(), copy_fits, false},
      {ops::Tile.c_str(), copy_fits, false},
      {ops::Reverse.c_str(), copy_fits, false},
      {ops::Transpose.c_str(), copy_fits, false},
      {ops::BroadcastLike.c_str(), copy_fits, false},
      {ops::Pad.c_str(), copy_fits, false},
      {ops::Switch.c_str(), switch_branches_agree, false},
      {ops::Random.c_str(), float_out, false},
      {ops::Reduce.c_str(), reduction_runs, false},
      {ops::SumToLike.c_str(), reduction_runs, false},
      {ops::Softmax.c_str(), float_out, false},
      {ops::LogSoftmax.c_str(), float_out, false},
      {ops::SparseTensor.c_str(), dense_shape_fits, false},
      {ops::SparseToDense.c_str(), dense_shape_fits, false},
      {ops::GatherNd.c_str(), tuple_depth_fits, defers},
      {ops::ScatterNdLike.c_str(), tuple_depth_fits, defers},
      {ops::SparseMatMul.c_str(), nullptr, false},
      // NCCL's answers (present, and a dtype it sums) are the plugin's (core/cuda/collectives.cu).
      {ops::AllReduce.c_str(), nullptr, false},
      {ops::Broadcast.c_str(), nullptr, false},
      {ops::AllGather.c_str(), nullptr, false},
      {ops::ReduceScatter.c_str(), nullptr, false},
      {ops::AllReduceWait.c_str(), nullptr,
       false},  // a bucket's (core/compile/bucket_collectives.cpp)
      {ops::Pack.c_str(), nullptr, false},
      {ops::Unpack.c_str(), nullptr, false},
  };
  // The scalar table's operations: its domains are the inference's, so every valid problem.
#define KB_CUDA_SCALAR_ROW(Name, ...) t.push_back({ops::Name.c_str(), nullptr, false});
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
