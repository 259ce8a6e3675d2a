// Graph builders: one function per primitive application. Used by core/api (the Keras
// functions) and by the gradient rules, so that gradients are graphs too.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/graph/node.h"
#include "core/ops/modes.h"
#include "core/ops/op_names.h"

namespace kb {

struct OpDef;

// Creates a node for primitive `op`, inferring its type from the inputs' static types.
NodePtr make_node(OpName op, std::vector<NodePtr> inputs, Attrs attrs = {},
                  const std::string& name = "");
// The same for an op known by its definition (a copy of a node: make_node(*n->op, ...)).
NodePtr make_node(const OpDef& op, std::vector<NodePtr> inputs, Attrs attrs = {},
                  const std::string& name = "");
NodePtr make_leaf(OpName op, TensorType type, const std::string& name, Attrs attrs = {},
                  std::shared_ptr<Buffer> value = nullptr);

NodePtr constant_node(std::shared_ptr<Buffer> value, const std::string& name = "");
NodePtr scalar_constant(double v, DType t);
NodePtr scalar_like(const NodePtr& x, double v);  // a scalar constant of x's dtype
bool is_constant(const NodePtr& x);
bool is_scalar_constant(const NodePtr& x, double v);

NodePtr unary(OpName op, const NodePtr& x);
NodePtr binary(OpName op, const NodePtr& a, const NodePtr& b);
NodePtr neg(const NodePtr& x);
NodePtr add(const NodePtr& a, const NodePtr& b);
NodePtr sub(const NodePtr& a, const NodePtr& b);
NodePtr mul(const NodePtr& a, const NodePtr& b);
NodePtr div(const NodePtr& a, const NodePtr& b);
NodePtr pow_(const NodePtr& a, const NodePtr& b);
NodePtr greater(const NodePtr& a, const NodePtr& b);
NodePtr greater_equal(const NodePtr& a, const NodePtr& b);
NodePtr less(const NodePtr& a, const NodePtr& b);
NodePtr less_equal(const NodePtr& a, const NodePtr& b);
NodePtr cast(const NodePtr& x, DType t);
NodePtr select(const NodePtr& cond, const NodePtr& a, const NodePtr& b);

// `axes` must be normalized (non-negative, sorted, unique); empty means all axes.
NodePtr reduce(const NodePtr& x, ReduceMode mode, std::vector<int64_t> axes, bool keepdims);
NodePtr reduce_sum(const NodePtr& x, std::vector<int64_t> axes, bool keepdims);

NodePtr matmul(const NodePtr& a, const NodePtr& b, bool transpose_a, bool transpose_b);
NodePtr transpose(const NodePtr& x, std::vector<int64_t> perm);
NodePtr reshape(const NodePtr& x, std::vector<int64_t> dims);
NodePtr reshape_like(const NodePtr& x, const NodePtr& like);
NodePtr expand_dims(const NodePtr& x, int64_t axis);  // axis normalized in [0, rank]
NodePtr squeeze(const NodePtr& x, int64_t axis);      // axis normalized
NodePtr broadcast_like(const NodePtr& x, const NodePtr& like);
NodePtr sum_to_like(const NodePtr& x, const NodePtr& like);  // undoes broadcasting
NodePtr fill_like(const NodePtr& x, double value, DType t);
NodePtr zeros_like(const NodePtr& x);
NodePtr size_of(const NodePtr& x, std::vector<int64_t> axes, DType t);  // empty axes: all
NodePtr identity(const NodePtr& x);
NodePtr stop_gradient(const NodePtr& x);

// An int64 vector constant.
NodePtr int64_vector(const std::vector<int64_t>& v);
// x's dims as an int64 vector, their values when the function runs.
NodePtr shape_vector(const NodePtr& x);
// x reshaped to `target` (an int64 vector) whose entries known now are `known` (-1 elsewhere):
// a plain reshape where at most one is unknown, else ReshapeTo (resolved when it runs).
NodePtr reshape_to(const NodePtr& x, const NodePtr& target, const std::vector<int64_t>& known);

// Keras' arange values: ceil((stop - start) / step) of them (none when negative), of dtype t.
std::shared_ptr<Buffer> range_values(double start, double stop, double step, DType t);
// The StridedSlice attributes of Keras' slice(x, start, size) (size -1: to the end) for x of
// dims d (-1 where unknown); checks them against what d says.
Attrs slice_attrs(const Dims& d, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& size);

// Reverses a reduction's shape change: dy (reduced over `axes` without keepdims) -> x's shape.
NodePtr unreduce(const NodePtr& dy, const NodePtr& x, const std::vector<int64_t>& axes,
                 bool keepdims);

}  // namespace kb
