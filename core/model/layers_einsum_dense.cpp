// keras.layers.EinsumDense (Keras 3, tf.keras 2.9+): a kernel contracted with the input by an
// einsum equation, an optional bias over some output axes, an activation. Its weights' shapes
// come from the equation as Keras' _analyze_einsum_string derives them.
#include <map>

#include "core/model/activations.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/model/lora.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

struct EinsumShapes {
  Dims kernel, bias;  // bias empty: none
  bool has_bias = false;
};

bool letters(const std::string& s) {
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  return !s.empty();
}

// The kernel's and bias' shapes of `equation` ("abc,cd->abd", "...b,bc->...c", "ab...,bc->ac...")
// for inputs of `input` dims and the config's output_shape (without the batch dim).
EinsumShapes einsum_dense_shapes(const std::string& equation, const Json& bias_axes,
                                 const Dims& input, const Json& output_shape,
                                 const std::string& where) {
  size_t comma = equation.find(','), arrow = equation.find("->");
  check(comma != std::string::npos && arrow != std::string::npos && comma < arrow,
        Status::invalid_argument, where, ": equation '", equation, "' is not [X],[Y]->[Z]");
  std::string in = equation.substr(0, comma), w = equation.substr(comma + 1, arrow - comma - 1),
              out = equation.substr(arrow + 2);
  auto strip = [](std::string& s, bool front) {
    if (s.size() >= 3 &&
        (front ? s.compare(0, 3, "...") : s.compare(s.size() - 3, 3, "...")) == 0) {
      s = front ? s.substr(3) : s.substr(0, s.size() - 3);
      return true;
    }
    return false;
  };
  bool left = strip(in, true);
  if (left)
    check(strip(out, true), Status::invalid_argument, where, ": equation '", equation,
          "' elides the input's leading dims but not the output's");
  bool right = !left && strip(in, false);
  if (right)
    check(strip(out, false) && in.size() >= 2, Status::invalid_argument, where, ": equation '",
          equation, "' is not [X]...,[Y]->[Z]...");
  check(letters(in) && letters(w) && letters(out), Status::invalid_argument, where, ": equation '",
        equation, "' is not [X],[Y]->[Z], ...[X],[Y]->...[Z] or [X]...,[Y]->[Z]...");
  int64_t rank = int64_t(input.size());
  int64_t elided = rank - int64_t(in.size());
  check(elided >= 0 && ((left || right) || elided == 0), Status::shape, where, ": equation '",
        equation, "' does not fit inputs of rank ", rank);
  // The output's dims: the batch dim, the config's, the elided ones.
  Dims full{input[0]};
  const Json& os = output_shape.is_array() ? output_shape : Json::array({output_shape});
  for (const Json& d : os) {
    check(d.is_null() || d.is_number_integer(), Status::invalid_argument, where,
          ": output_shape holds something other than dims");
    full.push_back(d.is_null() ? -1 : d.get<int64_t>());
  }
  if (elided > 0 && left)
    for (int64_t i = 1; i < elided; ++i) full.insert(full.begin() + 1, input[size_t(i)]);
  else if (elided > 0)
    for (int64_t i = rank - elided; i < rank; ++i) full.push_back(input[size_t(i)]);
  std::map<char, int64_t> in_dim, out_dim;
  for (size_t i = 0; i < in.size(); ++i) in_dim[in[i]] = left ? int64_t(i) + elided : int64_t(i);
  for (size_t i = 0; i < out.size(); ++i) out_dim[out[i]] = left ? int64_t(i) + elided : int64_t(i);
  auto at = [&](const Dims& d, int64_t i) {
    check(i >= 0 && i < int64_t(d.size()), Status::shape, where, ": equation '", equation,
          "' does not fit output_shape");
    return d[size_t(i)];
  };
  EinsumShapes s;
  for (char c : w) {
    int64_t d;
    if (out_dim.count(c))
      d = at(full, out_dim[c]);
    else if (in_dim.count(c))
      d = at(input, in_dim[c]);
    else
      fail(Status::invalid_argument, where, ": the kernel's '", c,
           "' is neither the input's nor the output's");
    check(d > 0, Status::shape, where, ": the kernel's dim '", c, "' is not known");
    s.kernel.push_back(d);
  }
  if (bias_axes.is_string() && !bias_axes.get<std::string>().empty()) {
    std::string b = bias_axes.get<std::string>();
    size_t first = out.size();
    for (char c : b) {
      check(out.find(c) != std::string::npos, Status::invalid_argument, where, ": bias axis '", c,
            "' is not an axis of the output '", out, "'");
      first = std::min(first, out.find(c));
    }
    for (size_t i = first; i < out.size(); ++i) {
      int64_t d = b.find(out[i]) != std::string::npos ? at(full, out_dim[out[i]]) : 1;
      check(d > 0, Status::shape, where, ": the bias' dim '", out[i], "' is not known");
      s.bias.push_back(d);
    }
    if (!left)
      for (int64_t i = 0; i < elided; ++i) s.bias.push_back(1);
    s.has_bias = true;
  }
  return s;
}

class EinsumDense : public Layer {
 public:
  explicit EinsumDense(const Json& c)
      : Layer("EinsumDense", c),
        equation_(required_string(c, "equation", where())),
        lora_(Lora::of(c, "kernel_constraint", where())) {
    weights_as_added_ = lora_.enabled();
    check(!c.contains("quantization_config") || c["quantization_config"].is_null(),
          Status::not_implemented, where(), ": a quantized kernel");
  }
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank_known, Status::shape, where(),
          ": needs one input of known rank");
    EinsumShapes s =
        einsum_dense_shapes(equation_, config().value("bias_axes", Json()), shapes[0].dims,
                            config().value("output_shape", Json()), where());
    kernel_ = add_weight("kernel", s.kernel, "kernel_initializer", "kernel_regularizer",
                         "kernel_constraint", !lora_.enabled());
    if (s.has_bias)
      bias_ = add_weight("bias", s.bias, "bias_initializer", "bias_regularizer", "bias_constraint");
    if (lora_.enabled()) {  // a: the kernel's shape but the last dim, then the rank
      Dims a(s.kernel.begin(), s.kernel.end() - 1);
      a.push_back(lora_.rank);
      lora_.a = add_weight_initialized("lora_kernel_a", a, Lora::a_initializer(),
                                       "kernel_regularizer", nullptr, true);
      lora_.b = add_weight_initialized("lora_kernel_b", {lora_.rank, s.kernel.back()},
                                       Lora::b_initializer(), "kernel_regularizer", nullptr, true);
    }
  }
  // Keras 3 keeps the kernel merged with its LoRA, and the bias.
  std::vector<std::string> keras3_weight_paths() const override {
    return lora_.keras3_paths(bias_ != nullptr);
  }
  NodePtr keras3_saved_value(size_t i) const override {
    return i == 0 && lora_.enabled() ? lora_.merged(kernel_) : Layer::keras3_saved_value(i);
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr y = api::einsum(equation_, {single(inputs), lora_.merged(kernel_)});
    if (bias_) y = plus(y, bias_);
    return {activate(config().value("activation", Json()), y, where(), rules())};
  }

 private:
  std::string equation_;
  Lora lora_;
  NodePtr kernel_, bias_;
};

const LayerRegistrar rows[] = {
    {"EinsumDense", make_layer_of<EinsumDense>},
};

}  // namespace
}  // namespace kb::model
