// The primitive set: each primitive is one OpDef (shape/dtype inference, gradient rule, flags).
// Kernels live with the devices (core/backend, core/cpu); compositions live in core/api.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/graph/node.h"
#include "core/ops/op_names.h"

namespace kb {

using InferFn = TensorType (*)(const std::vector<TensorType>& inputs, const Attrs& attrs);
// Returns one gradient per input (nullptr where none flows). Written with graph builders so that
// gradients of gradients work.
using GradFn = std::vector<NodePtr> (*)(const NodePtr& node, const NodePtr& dy);

// An op with arguments given as tensors (a tile's multiples, a range's bounds) as the ops of
// static attributes that compute the same for these values (values[i]: input i's value, null
// where not known), or null while a value it needs is unknown. The new nodes read n's inputs.
using SpecializeFn = NodePtr (*)(const Node& n, const std::vector<const Buffer*>& values);

// Shape inference that also sees the inputs whose values are known (values[i], null where not):
// constants when a graph is built, and every value a plan folds once its input shapes are known
// (K.shape(x)[1] of a fed x).
using InferValuesFn = TensorType (*)(const std::vector<TensorType>& inputs,
                                     const std::vector<const Buffer*>& values, const Attrs& attrs);

struct OpDef {
  std::string name;
  InferFn infer = nullptr;
  GradFn grad = nullptr;    // nullptr: not differentiable (no gradient flows through)
  bool stateful = false;    // random, printing, updates: never merged or folded
  bool view = false;        // the kernel may alias input 0's storage
  bool shape_only = false;  // the value depends on input shapes only (folded once shapes are known)
  bool leaf = false;        // placeholder, variable, constant
  // The kernel may write its output over input 0 (same shape) when the plan gives them one
  // storage, as elementwise kernels may: a collective reduces in place.
  bool in_place = false;
  // The output's dims depend on the input values (where, trimming, sparse densify): infer may
  // leave dims unknown; the kernel receives `out` without storage, sets its dims and allocates.
  bool dynamic = false;
  // For a dynamic op whose shape known values determine: used instead of infer (null: infer).
  InferValuesFn infer_values = nullptr;
  // Plans specialize the op where they know the values (folded K.shape(x) arithmetic, constants);
  // elsewhere the CPU does so when the function runs, for the values it then has.
  SpecializeFn specialize = nullptr;
  // An input read for its type alone (the "like" operand of BroadcastLike and friends), or -1.
  // Kernels never read it at run time, so a plan that knows its shape need not compute it.
  int shape_input = -1;
  // For a view op that aliases its input for some types only (SumToLike: when nothing is summed):
  // whether it does for these concrete types. Elsewhere its kernel writes a fresh value, which a
  // plan may then place (in its arena). Null: `view` holds for all types.
  bool (*view_when)(const std::vector<TensorType>& in, const TensorType& out) = nullptr;
};

void register_op(const OpDef& def);

// Whether node n reads input i for its type alone (its values are never touched).
inline bool reads_shape_only(const Node& n, size_t i) {
  return n.op->shape_only || int(i) == n.op->shape_input;
}

// A row of the scalar-op table (unary or binary, broadcasting) or Cast: element i of the result
// depends on element i of each same-shaped operand only.
bool is_elementwise_op(const std::string& name);
const OpDef* find_op(const std::string& name);
const OpDef& op(const std::string& name);  // fails with an internal error when unknown
const OpDef& op(OpName name);

// Registers an op at static-initialization time: `static OpRegistrar r({...});`
struct OpRegistrar {
  explicit OpRegistrar(const OpDef& def) { register_op(def); }
};

}  // namespace kb
