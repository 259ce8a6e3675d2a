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

// A call's positional arguments: each a tensor (`tensor`), a list of tensors (`tensors`) or a
// value of the file (`value`), and the operation's config (its axis, shape...).
struct OpCall {
  std::vector<NodePtr> tensor;
  std::vector<Tensors> tensors;
  std::vector<const Json*> value;
  const Json* config;
  const NodePtr& at(size_t i, const char* op) const {
    check(i < tensor.size() && tensor[i], Status::invalid_argument, "ops.", op, ": argument ",
          i + 1, " is not a tensor");
    return tensor[i];
  }
};
using OpFn = std::function<NodePtr(const OpCall&)>;

NodePtr constant_of(const Json& value, const Json& dtype, const std::string& where) {
  // The file holds each value, so its size bounds them.
  Dims dims;
  std::vector<double> values;
  nested_numbers(value, kMaxJsonDepth, true, dims, values, where + ": a constant");
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
    DType like = inputs.empty() ? Session::get().floatx() : inputs[0]->dtype();
    OpCall op;
    op.config = &config();
    auto input = [&](const Json& i) {
      check(i.is_number_unsigned() && i.get<size_t>() < inputs.size(), Status::invalid_argument,
            where(), ": an argument of no input");
      return inputs[i.get<size_t>()];
    };
    for (size_t k = 0; values.contains("#" + std::to_string(k)); ++k) {
      const Json& a = values["#" + std::to_string(k)];
      NodePtr t;
      Tensors list;
      if (a.is_object() && a.contains("input")) {
        t = input(a["input"]);
      } else if (a.is_object() && a.contains("inputs") && a["inputs"].is_array()) {
        for (const Json& i : a["inputs"]) list.push_back(input(i));
      } else if (a.is_number() || a.is_boolean()) {
        t = scalar_constant(a.is_boolean() ? double(a.get<bool>()) : a.get<double>(), like);
      } else if (a.is_object() && a.value("class_name", "") == "__tensor__") {
        const Json& tc = required(a, "config", where());
        t = constant_of(required(tc, "value", where()), tc.value("dtype", Json()), where());
        if (is_floating(t->dtype()) && is_floating(like) && t->dtype() != like)
          t = api::cast(t, like);
      }
      op.tensor.push_back(t);
      op.tensors.push_back(list);
      op.value.push_back(&a);
    }
    return {fn_(op)};
  }

 private:
  OpFn fn_;
};

OpFn binary_fn(const char* keras_name, OpName primitive) {
  return [=](const OpCall& c) {
    return api::binary_op(keras_name, primitive, c.at(0, keras_name), c.at(1, keras_name));
  };
}
OpFn unary_fn(const char* name, NodePtr (*f)(const NodePtr&)) {
  return [=](const OpCall& c) { return f(c.at(0, name)); };
}

// The config's axis (an int, a list, or null for every axis).
api::Axes axes_of(const Json& config, const char* key, const char* op) {
  const Json& a = config.value(key, Json());
  if (a.is_null()) return std::nullopt;
  std::vector<int64_t> axes;
  for (const Json& v : a.is_array() ? a : Json::array({a})) {
    check(v.is_number_integer(), Status::invalid_argument, "ops.", op, ": ", key, " is not ints");
    axes.push_back(v.get<int64_t>());
  }
  return axes;
}
int64_t axis_of(const Json& config, const char* op) {
  api::Axes a = axes_of(config, "axis", op);
  check(a && a->size() == 1, Status::invalid_argument, "ops.", op, ": axis is one int");
  return (*a)[0];
}
OpFn reduce_fn(const char* op, NodePtr (*f)(const NodePtr&, const api::Axes&, bool)) {
  return [=](const OpCall& c) {
    return f(c.at(0, op), axes_of(*c.config, "axis", op), c.config->value("keepdims", false));
  };
}

// x[key] as Keras 3 writes the key: ints, {"class_name": "__slice__"} (start, stop, step),
// "__ellipsis__" and null (a new axis), one or a list of them: TensorFlow's strided slice.
NodePtr get_item(const NodePtr& x, const Json& key) {
  const char* op = "ops.GetItem";
  check(x->shape().rank_known, Status::shape, op, ": the rank of x is unknown");
  Json items = key.is_array() ? key : Json::array({key});
  int64_t named = 0;
  for (const Json& k : items)
    if (!(k.is_object() && k.value("class_name", "") == "__ellipsis__") && !k.is_null()) ++named;
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, shrink = 0, new_axis = 0, i = 0;
  auto full = [&] {
    begin_mask |= int64_t(1) << i, end_mask |= int64_t(1) << i;
    begin.push_back(0), end.push_back(0), strides.push_back(1), ++i;
  };
  for (const Json& k : items) {
    check(i < 62, Status::invalid_argument, op, ": too many indices");
    if (k.is_number_integer()) {
      int64_t v = k.get<int64_t>();
      begin.push_back(v), end.push_back(v + 1), strides.push_back(1);
      if (v == -1) end_mask |= int64_t(1) << i;
      shrink |= int64_t(1) << i++;
    } else if (k.is_null()) {
      begin.push_back(0), end.push_back(0), strides.push_back(1);
      new_axis |= int64_t(1) << i++;
    } else if (k.is_object() && k.value("class_name", "") == "__ellipsis__") {
      for (int64_t n = x->rank() - named; n > 0; --n) full();
    } else if (k.is_object() && k.value("class_name", "") == "__slice__") {
      const Json& sc = required(k, "config", op);
      auto part = [&](const char* name) { return sc.value(name, Json()); };
      for (const char* name : {"start", "stop", "step"})
        check(part(name).is_null() || part(name).is_number_integer(), Status::not_implemented, op,
              ": a slice bound that is not an int");
      int64_t step = part("step").is_null() ? 1 : part("step").get<int64_t>();
      check(step != 0, Status::invalid_argument, op, ": a slice step of 0");
      if (part("start").is_null()) begin_mask |= int64_t(1) << i;
      if (part("stop").is_null()) end_mask |= int64_t(1) << i;
      begin.push_back(part("start").is_null() ? 0 : part("start").get<int64_t>());
      end.push_back(part("stop").is_null() ? 0 : part("stop").get<int64_t>());
      strides.push_back(step);
      ++i;
    } else {
      fail(Status::not_implemented, op, ": an index of this kind: ", k.dump());
    }
  }
  return api::strided_slice(x, begin, end, strides, begin_mask, end_mask, shrink, new_axis);
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
       [](const OpCall& c) {
         return api::cast(c.at(0, "cast"),
                          dtype_of(required(*c.config, "dtype", "ops.Cast"), "ops.Cast"));
       }},
      {"ConvertToTensor",  // Keras 3 writes one where a layer's mask passes through
       [](const OpCall& c) {
         const NodePtr& x = c.at(0, "convert_to_tensor");
         const Json& dtype = c.config->value("dtype", Json());
         return dtype.is_null() ? x : api::cast(x, dtype_of(dtype, "ops.ConvertToTensor"));
       }},
      {"Matmul",
       [](const OpCall& c) {
         const NodePtr &a = c.at(0, "matmul"), &b = c.at(1, "matmul");
         return a->rank() >= 3 && a->rank() == b->rank() ? matmul(a, b, false, false)
                                                         : api::dot(a, b);
       }},
      {"Mean", reduce_fn("mean", api::mean)},
      {"Sum", reduce_fn("sum", api::sum)},
      {"Max", reduce_fn("max", api::max)},
      {"Min", reduce_fn("min", api::min)},
      {"Reshape",
       [](const OpCall& c) {
         api::Axes shape = axes_of(*c.config, "newshape", "reshape");
         check(shape.has_value(), Status::invalid_argument, "ops.Reshape: no newshape");
         return api::reshape(c.at(0, "reshape"), *shape);
       }},
      {"Transpose",
       [](const OpCall& c) {
         const NodePtr& x = c.at(0, "transpose");
         api::Axes axes = axes_of(*c.config, "axes", "transpose");
         return axes ? api::permute_dimensions(x, *axes) : api::transpose(x);
       }},
      {"ExpandDims",
       [](const OpCall& c) {
         return api::expand_dims(c.at(0, "expand_dims"), axis_of(*c.config, "expand_dims"));
       }},
      {"Squeeze",
       [](const OpCall& c) {
         return api::squeeze(c.at(0, "squeeze"), axis_of(*c.config, "squeeze"));
       }},
      {"Concatenate",
       [](const OpCall& c) {
         check(!c.tensors.empty() && !c.tensors[0].empty(), Status::invalid_argument,
               "ops.Concatenate: takes a list of tensors");
         return api::concatenate(c.tensors[0], axis_of(*c.config, "concatenate"));
       }},
      {"GetItem",
       [](const OpCall& c) {
         check(c.value.size() == 2, Status::invalid_argument, "ops.GetItem: takes x and a key");
         return get_item(c.at(0, "get_item"), *c.value[1]);
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
