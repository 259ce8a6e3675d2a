// Every primitive's name as code refers to it: one constant per OpDef row (ops::Gather), so that
// a misspelt name fails to compile instead of failing when a graph is built. The elementwise rows
// are KB_UNARY_OPS and KB_BINARY_OPS (core/ops/scalar_ops.h); KB_OTHER_OPS lists the rest. A test
// (tests/cpp/op_names_test.cpp) checks that the registry holds exactly these names.
#pragma once
#include "core/graph/op_name.h"
#include "core/ops/scalar_ops.h"

namespace kb {

// clang-format off
#define KB_OTHER_OPS(X) \
  X(AllGather) X(AllReduce) X(AllReduceWait) X(ArgReduce) X(Assign) X(BatchCenteredDot) \
  X(BatchNorm) X(Broadcast) X(BroadcastLike) X(Cast) X(Concat) X(Constant) X(Conv) \
  X(ConvBackwardData) X(ConvBackwardFilter) X(CtcDecode) X(CtcLoss) X(CtcLossGrad) \
  X(Cumulative) X(ExpandDims) X(FillLike) X(FusedConv) X(FusedElementwise) X(FusedMatMul) \
  X(Gather) X(GatherNd) X(Identity) X(InTopK) X(LearningPhase) X(LogSoftmax) X(Loop) X(MatMul) \
  X(MaxPoolGradGrad) X(Pack) X(Pad) X(Placeholder) X(Pool) X(PoolBackward) X(Print) X(Random) \
  X(RangeTo) X(Reduce) X(ReduceScatter) X(Reshape) X(ReshapeLike) X(ReshapeTo) X(Resize) \
  X(ResizeGrad) X(Reverse) X(ScatterAddLike) X(ScatterNdLike) X(Select) X(ShapeOf) X(SizeOf) \
  X(SliceTo) X(SliceToGrad) X(Softmax) X(SparseMatMul) X(SparseTensor) X(SparseToDense) \
  X(SplitLike) X(Squeeze) X(StopGradient) X(StridedSlice) X(StridedSliceGrad) X(SumToLike) \
  X(Switch) X(Tile) X(TileGrad) X(TileTo) X(TileToGrad) X(Transpose) X(TrimTrailing) \
  X(TupleGet) X(Unpack) X(Variable) X(Where)
// clang-format on

namespace ops {
#define KB_DECLARE_OP(Name, ...) inline constexpr OpName Name{#Name};
KB_UNARY_OPS(KB_DECLARE_OP)
KB_BINARY_OPS(KB_DECLARE_OP)
KB_OTHER_OPS(KB_DECLARE_OP)
#undef KB_DECLARE_OP
}  // namespace ops

// Every name the constants above hold.
inline const char* const kAllOpNames[] = {
#define KB_OP_NAME_TEXT(Name, ...) #Name,
    KB_UNARY_OPS(KB_OP_NAME_TEXT) KB_BINARY_OPS(KB_OP_NAME_TEXT) KB_OTHER_OPS(KB_OP_NAME_TEXT)
#undef KB_OP_NAME_TEXT
};

}  // namespace kb
