#include "core/model/export/onnx_ops.h"

#include <climits>
#include <map>

#include "core/ops/modes.h"
#include "core/ops/op_names.h"
#include "core/util/error.h"

namespace kb::model::onnx_export {

namespace {

std::string one(const Lowering& l, const char* op, std::vector<Attr> attrs = {}) {
  return l.g.node(op, {l.in[0]}, std::move(attrs), l.hint);
}
std::string two(const Lowering& l, const char* op) {
  return l.g.node(op, {l.in[0], l.in[1]}, {}, l.hint);
}

int64_t axis_of(const Lowering& l, int64_t rank) {
  int64_t a = l.node.attrs.i(attr::axis);
  return a < 0 ? a + rank : a;
}

// ---- elementwise ------------------------------------------------------------------------------
#define KB_ONNX_UNARY(Name, Op) \
  std::string Name(const Lowering& l) { return one(l, Op); }
#define KB_ONNX_BINARY(Name, Op) \
  std::string Name(const Lowering& l) { return two(l, Op); }
KB_ONNX_UNARY(neg, "Neg")
KB_ONNX_UNARY(abs, "Abs")
KB_ONNX_UNARY(sqrt, "Sqrt")
KB_ONNX_UNARY(exp, "Exp")
KB_ONNX_UNARY(log, "Log")
KB_ONNX_UNARY(sin, "Sin")
KB_ONNX_UNARY(cos, "Cos")
KB_ONNX_UNARY(tanh, "Tanh")
KB_ONNX_UNARY(sigmoid, "Sigmoid")
KB_ONNX_UNARY(softplus, "Softplus")
KB_ONNX_UNARY(erf, "Erf")
KB_ONNX_UNARY(reciprocal, "Reciprocal")
KB_ONNX_UNARY(relu, "Relu")
KB_ONNX_UNARY(sign, "Sign")
KB_ONNX_UNARY(round, "Round")  // half to even, as kbackend's (and Keras') round
KB_ONNX_UNARY(floor, "Floor")
KB_ONNX_UNARY(identity, "Identity")
KB_ONNX_BINARY(add, "Add")
KB_ONNX_BINARY(sub, "Sub")
KB_ONNX_BINARY(mul, "Mul")
KB_ONNX_BINARY(div, "Div")
KB_ONNX_BINARY(pow, "Pow")
KB_ONNX_BINARY(maximum, "Max")
KB_ONNX_BINARY(minimum, "Min")
KB_ONNX_BINARY(equal, "Equal")
KB_ONNX_BINARY(greater, "Greater")
KB_ONNX_BINARY(greater_equal, "GreaterOrEqual")
KB_ONNX_BINARY(less, "Less")
KB_ONNX_BINARY(less_equal, "LessOrEqual")
#undef KB_ONNX_UNARY
#undef KB_ONNX_BINARY

std::string square(const Lowering& l) { return l.g.node("Mul", {l.in[0], l.in[0]}, {}, l.hint); }
std::string log1p(const Lowering& l) {
  std::string one_plus = l.g.node("Add", {l.in[0], l.g.scalar(1, l.node.dtype())});
  return l.g.node("Log", {one_plus}, {}, l.hint);
}
std::string not_equal(const Lowering& l) {
  return l.g.node("Not", {l.g.node("Equal", {l.in[0], l.in[1]})}, {}, l.hint);
}
std::string is_finite(const Lowering& l) {
  std::string bad = l.g.node("Or", {l.g.node("IsNaN", {l.in[0]}), l.g.node("IsInf", {l.in[0]})});
  return l.g.node("Not", {bad}, {}, l.hint);
}
std::string select(const Lowering& l) {
  return l.g.node("Where", {l.in[0], l.in[1], l.in[2]}, {}, l.hint);
}
std::string cast(const Lowering& l) {
  return one(l, "Cast", {Attr::of_int("to", elem_type(l.node.dtype()))});
}

// ---- products, reductions, softmax --------------------------------------------------------------
std::string transposed_last_two(const Lowering& l, const std::string& x, int64_t rank) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[size_t(rank - 2)], perm[size_t(rank - 1)]);
  return transposed(l.g, x, perm);
}
std::string matmul(const Lowering& l) {
  std::string a = l.in[0], b = l.in[1];
  if (l.node.attrs.i(attr::transpose_a, 0)) a = transposed_last_two(l, a, l.node.inputs[0]->rank());
  if (l.node.attrs.i(attr::transpose_b, 0)) b = transposed_last_two(l, b, l.node.inputs[1]->rank());
  return l.g.node("MatMul", {a, b}, {}, l.hint);
}
std::string reduce(const Lowering& l) {
  const auto& axes = l.node.attrs.ints(attr::axes);
  int64_t keep = l.node.attrs.i(attr::keepdims);
  switch (mode_of<ReduceMode>(l.node.attrs)) {
    case ReduceMode::sum: {  // opset 13 on: the axes are an input (none: every axis)
      std::vector<std::string> ins{l.in[0]};
      if (!axes.empty()) ins.push_back(l.g.int64s(axes, "axes"));
      return l.g.node("ReduceSum", ins, {Attr::of_int("keepdims", keep)}, l.hint);
    }
    case ReduceMode::prod:
    case ReduceMode::max:
    case ReduceMode::min: {
      ReduceMode m = mode_of<ReduceMode>(l.node.attrs);
      const char* op = m == ReduceMode::prod  ? "ReduceProd"
                       : m == ReduceMode::max ? "ReduceMax"
                                              : "ReduceMin";
      std::vector<Attr> attrs{Attr::of_int("keepdims", keep)};
      if (!axes.empty()) attrs.push_back(Attr::of_ints("axes", axes));
      return one(l, op, std::move(attrs));
    }
  }
  fail(Status::internal, "export_onnx: an unknown reduction");
}
std::string softmax(const Lowering& l) {
  return one(l, "Softmax", {Attr::of_int("axis", axis_of(l, l.node.rank()))});
}
std::string log_softmax(const Lowering& l) {
  return one(l, "LogSoftmax", {Attr::of_int("axis", axis_of(l, l.node.rank()))});
}

// ---- shapes ---------------------------------------------------------------------------------
std::string reshape(const Lowering& l) {
  return l.g.node("Reshape", {l.in[0], l.g.int64s(l.node.attrs.ints(attr::dims))}, {}, l.hint);
}
std::string reshape_to(const Lowering& l) {  // the target a value (int32 or int64)
  std::string target = l.in[1];
  if (l.node.inputs[1]->dtype() != DType::i64)
    target = l.g.node("Cast", {target}, {Attr::of_int("to", elem_type(DType::i64))});
  return l.g.node("Reshape", {l.in[0], target}, {}, l.hint);
}
std::string reshape_like(const Lowering& l) {  // keep > 0: like's leading dims, then x's rest
  std::string target = l.g.node("Shape", {l.in[1]});
  if (int64_t keep = l.node.attrs.i(attr::keep, 0); keep > 0) {
    std::string lead =
        l.g.node("Slice", {target, l.g.int64s({0}, "starts"), l.g.int64s({keep}, "ends")});
    std::string rest = l.g.node("Slice", {l.g.node("Shape", {l.in[0]}), l.g.int64s({1}, "starts"),
                                          l.g.int64s({INT64_MAX}, "ends")});
    target = l.g.node("Concat", {lead, rest}, {Attr::of_int("axis", 0)});
  }
  return l.g.node("Reshape", {l.in[0], target}, {}, l.hint);
}
std::string shape_of(const Lowering& l) {
  std::string s = l.g.node("Shape", {l.in[0]});
  return l.g.node("Cast", {s}, {Attr::of_int("to", elem_type(l.node.dtype()))}, l.hint);
}
std::string expand_dims(const Lowering& l) {
  return l.g.node("Unsqueeze", {l.in[0], l.g.int64s({l.node.attrs.i(attr::axis)}, "axes")}, {},
                  l.hint);
}
std::string squeeze(const Lowering& l) {
  return l.g.node("Squeeze", {l.in[0], l.g.int64s({l.node.attrs.i(attr::axis)}, "axes")}, {},
                  l.hint);
}
std::string transpose(const Lowering& l) {
  return one(l, "Transpose", {Attr::of_ints("perm", l.node.attrs.ints(attr::perm))});
}
std::string concat(const Lowering& l) {
  return l.g.node("Concat", l.in, {Attr::of_int("axis", axis_of(l, l.node.rank()))}, l.hint);
}
std::string gather(const Lowering& l) {  // along the first axis
  return l.g.node("Gather", {l.in[0], l.in[1]}, {Attr::of_int("axis", 0)}, l.hint);
}
std::string broadcast_like(const Lowering& l) {
  return l.g.node("Expand", {l.in[0], l.g.node("Shape", {l.in[1]})}, {}, l.hint);
}

std::map<std::string, Rule>& registry() {
  static std::map<std::string, Rule> rows;
  return rows;
}

const RuleRegistrar rows({
    {ops::Neg.c_str(), neg},
    {ops::Abs.c_str(), abs},
    {ops::Square.c_str(), square},
    {ops::Sqrt.c_str(), sqrt},
    {ops::Exp.c_str(), exp},
    {ops::Log.c_str(), log},
    {ops::Log1p.c_str(), log1p},
    {ops::Sin.c_str(), sin},
    {ops::Cos.c_str(), cos},
    {ops::Tanh.c_str(), tanh},
    {ops::Sigmoid.c_str(), sigmoid},
    {ops::Softplus.c_str(), softplus},
    {ops::Erf.c_str(), erf},
    {ops::Reciprocal.c_str(), reciprocal},
    {ops::Relu.c_str(), relu},
    {ops::Sign.c_str(), sign},
    {ops::Round.c_str(), round},
    {ops::Floor.c_str(), floor},
    {ops::IsFinite.c_str(), is_finite},
    {ops::Add.c_str(), add},
    {ops::Sub.c_str(), sub},
    {ops::Mul.c_str(), mul},
    {ops::Div.c_str(), div},
    {ops::Pow.c_str(), pow},
    {ops::Maximum.c_str(), maximum},
    {ops::Minimum.c_str(), minimum},
    {ops::Equal.c_str(), equal},
    {ops::NotEqual.c_str(), not_equal},
    {ops::Greater.c_str(), greater},
    {ops::GreaterEqual.c_str(), greater_equal},
    {ops::Less.c_str(), less},
    {ops::LessEqual.c_str(), less_equal},
    {ops::Select.c_str(), select},
    {ops::Cast.c_str(), cast},
    {ops::Identity.c_str(), identity},
    {ops::StopGradient.c_str(), identity},
    {ops::MatMul.c_str(), matmul},
    {ops::Reduce.c_str(), reduce},
    {ops::Softmax.c_str(), softmax},
    {ops::LogSoftmax.c_str(), log_softmax},
    {ops::Reshape.c_str(), reshape},
    {ops::ReshapeTo.c_str(), reshape_to},
    {ops::ReshapeLike.c_str(), reshape_like},
    {ops::ShapeOf.c_str(), shape_of},
    {ops::ExpandDims.c_str(), expand_dims},
    {ops::Squeeze.c_str(), squeeze},
    {ops::Transpose.c_str(), transpose},
    {ops::Concat.c_str(), concat},
    {ops::Gather.c_str(), gather},
    {ops::BroadcastLike.c_str(), broadcast_like},
});

}  // namespace

RuleRegistrar::RuleRegistrar(std::initializer_list<RuleRow> rows) {
  for (const RuleRow& r : rows) registry()[r.op] = r.rule;
}

const Rule* rule_for(const std::string& op_name) {
  auto it = registry().find(op_name);
  return it == registry().end() ? nullptr : &it->second;
}

std::string transposed(Graph& g, const std::string& x, const std::vector<int64_t>& perm) {
  return g.node("Transpose", {x}, {Attr::of_ints("perm", perm)});
}

std::vector<int64_t> to_channels_first(int64_t r) {
  std::vector<int64_t> p{0, r - 1};
  for (int64_t i = 1; i < r - 1; ++i) p.push_back(i);
  return p;
}

std::vector<int64_t> to_channels_last(int64_t r) {
  std::vector<int64_t> p{0};
  for (int64_t i = 2; i < r; ++i) p.push_back(i);
  p.push_back(1);
  return p;
}

}  // namespace kb::model::onnx_export
