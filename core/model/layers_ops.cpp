// keras.ops' operations as the nodes of a Keras 3 functional model (`x + y` is ops.Add,
// `ops.not_equal(x, 0)` ops.NotEqual): each positional argument a tensor of the model or a
// constant of the file (a number, or a {"class_name": "__tensor__"} array). Keras 3 passes no
// masks through them.
#include <functional>
#include <map>

#include "core/api/api.h"
#include "core/compile/function.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

using OpFn = std::function<NodePtr(const Tensors&, const Json& config)>;

// The dims and values of a nested list of numbers (the file holds each value, so its size
// bounds them).
void flatten_values(const Json& v, size_t depth, Dims& dims, std::vector<double>& out,
                    const std::string& where) {
  if (v.is_number()) {
    check(depth == dims.size(), Status::invalid_argument, where, ": a ragged constant");
    out.push_back(v.get<double>());
    return;
  }
  if (v.is_boolean()) {
    check(depth == dims.size(), Status::invalid_argument, where, ": a ragged constant");
    out.push_back(v.get<bool>() ? 1.0 : 0.0);
    return;
  }
  check(v.is_array(), Status::invalid_argument, where, ": a constant holds something not a number");
  if (depth == dims.size()) {
    check(out.empty(), Status::invalid_argument, where, ": a ragged constant");
    dims.push_back(int64_t(v.size()));
  }
  check(depth < dims.size() && dims[depth] == int64_t(v.size()), Status::invalid_argument, where,
        ": a ragged constant");
  for (const Json& item : v) flatten_values(item, depth + 1, dims, out, where);
}

NodePtr constant_of(const Json& value, const Json& dtype, const std::string& where) {
  Dims dims;
  std::vector<double> values;
  flatten_values(value, 0, dims, values, where);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  check(n == int64_t(values.size()), Status::invalid_argument, where, ": a ragged constant");
  DType t = dtype.is_null() ? Session::get().floatx() : dtype_of(dtype, where);
  auto b = Buffer::make(DType::f64, dims);
  for (size_t i = 0; i < values.size(); ++i) b->as<double>()[i] = values[i];
  return api::constant(convert_buffer(b, t), t, std::nullopt, "");
}

class OpLayer : public Layer {
 public:
  OpLayer(const std::string& cls, const Json& c, OpFn fn) : Layer(cls, c), fn_(std::move(fn)) {}
  Tensors call(const Tensors& inputs) override {
    const Json& values = arguments().values;
    // Positional arguments in order; a tensor's dtype gives a bare number's (Keras 3's weak
    // types), as x + 1.0 keeps x's dtype.
    std::vector<const Json*> args;
    for (size_t k = 0; values.contains("#" + std::to_string(k)); ++k)
      args.push_back(&values["#" + std::to_string(k)]);
    DType like = inputs.empty() ? Session::get().floatx() : inputs[0]->dtype();
    Tensors operands;
    for (const Json* a : args) {
      if (a->is_object() && a->contains("input")) {
        size_t i = (*a)["input"].get<size_t>();
        check(i < inputs.size(), Status::invalid_argument, where(), ": argument of no input");
        operands.push_back(inputs[i]);
      } else if (a->is_number() || a->is_boolean()) {
        operands.push_back(
            scalar_constant(a->is_boolean() ? double(a->get<bool>()) : a->get<double>(), like));
      } else if (a->is_object() && a->value("class_name", "") == "__tensor__") {
        const Json& tc = required(*a, "config", where());
        NodePtr t = constant_of(required(tc, "value", where()), tc.value("dtype", Json()), where());
        if (is_floating(t->dtype()) && is_floating(like) && t->dtype() != like)
          t = api::cast(t, like);
        operands.push_back(t);
      } else if (a->is_null()) {
        operands.push_back(nullptr);
      } else {
        fail(Status::not_implemented, where(), ": an argument of this kind: ", a->dump());
      }
    }
    return {fn_(operands, config())};
  }

 private:
  OpFn fn_;
};

const NodePtr& operand(const Tensors& xs, size_t i, const char* op) {
  check(i < xs.size() && xs[i], Status::invalid_argument, "ops.", op, ": takes ", i + 1,
        " tensor arguments");
  return xs[i];
}

OpFn binary_fn(const char* keras_name, OpName primitive) {
  return [=](const Tensors& xs, const Json&) {
    return api::binary_op(keras_name, primitive, operand(xs, 0, keras_name),
                          operand(xs, 1, keras_name));
  };
}
OpFn unary_fn(const char* name, NodePtr (*f)(const NodePtr&)) {
  return [=](const Tensors& xs, const Json&) { return f(operand(xs, 0, name)); };
}

// Keras 3's operations by class name, as the library registers their rows ("ops.Add").
const std::map<std::string, OpFn>& op_table() {
  static const std::map<std::string, OpFn> table = {
      {"Add", binary_fn("add", ops::Add)},
      {"Subtract", binary_fn("subtract", ops::Sub)},
      {"Multiply", binary_fn("multiply", ops::Mul)},
      {"Divide", binary_fn("divide", ops::Div)},
      {"TrueDivide", binary_fn("divide", ops::Div)},
      {"Maximum", binary_fn("maximum", ops::Maximum)},
      {"Minimum", binary_fn("minimum", ops::Minimum)},
      {"Power", binary_fn("power", ops::Pow)},
      {"Equal", binary_fn("equal", ops::Equal)},
      {"NotEqual", binary_fn("not_equal", ops::NotEqual)},
      {"Greater", binary_fn("greater", ops::Greater)},
      {"GreaterEqual", binary_fn("greater_equal", ops::GreaterEqual)},
      {"Less", binary_fn("less", ops::Less)},
      {"LessEqual", binary_fn("less_equal", ops::LessEqual)},
      {"Negative", unary_fn("negative", api::negative)},
      {"Abs", unary_fn("abs", api::abs)},
      {"Square", unary_fn("square", api::square)},
      {"Sqrt", unary_fn("sqrt", api::sqrt)},
      {"Exp", unary_fn("exp", api::exp)},
      {"Log", unary_fn("log", api::log)},
      {"Tanh", unary_fn("tanh", api::tanh)},
      {"Sigmoid", unary_fn("sigmoid", api::sigmoid)},
      {"Cast",
       [](const Tensors& xs, const Json& c) {
         return api::cast(operand(xs, 0, "cast"),
                          dtype_of(required(c, "dtype", "ops.Cast"), "ops.Cast"));
       }},
      {"ConvertToTensor",  // Keras 3 writes one where a layer's mask passes through
       [](const Tensors& xs, const Json& c) {
         const NodePtr& x = operand(xs, 0, "convert_to_tensor");
         const Json& dtype = c.value("dtype", Json());
         return dtype.is_null() ? x : api::cast(x, dtype_of(dtype, "ops.ConvertToTensor"));
       }},
      {"Matmul",
       [](const Tensors& xs, const Json&) {
         const NodePtr &a = operand(xs, 0, "matmul"), &b = operand(xs, 1, "matmul");
         return a->rank() >= 3 && a->rank() == b->rank() ? matmul(a, b, false, false)
                                                         : api::dot(a, b);
       }},
  };
  return table;
}

struct OpRows {
  OpRows() {
    for (const auto& [name, fn] : op_table()) {
      OpFn f = fn;
      std::string cls = "ops." + name;
      LayerRegistrar(cls.c_str(),
                     [f, cls](const Json& c) { return std::make_shared<OpLayer>(cls, c, f); });
    }
  }
} rows;

}  // namespace
}  // namespace kb::model
