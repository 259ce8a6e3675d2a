// keras.layers.wrappers: TimeDistributed (the inner layer on every timestep, as one batch of
// batch * timesteps rows), Bidirectional (a recurrent layer forwards and backwards, merged)
// and SpectralNormalization (the inner layer's kernel normalized in training).
#include "core/api/control.h"
#include "core/model/graph_math.h"
#include "core/ops/substitute.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// The inner layer of a wrapper's config ({"layer": {"class_name", "config"}}), renamed.
std::shared_ptr<Layer> inner_layer(const Json& c, const std::string& where,
                                   const std::string& prefix = "", int flip_backwards = -1) {
  const Json& spec = required(c, "layer", where);
  std::string cls = required_string(spec, "class_name", where);
  Json config = required(spec, "config", where);
  check(config.is_object(), Status::invalid_argument, where, ": the inner layer's config");
  if (!prefix.empty()) config["name"] = prefix + string_or(config, "name", "layer", where);
  if (flip_backwards >= 0) config["go_backwards"] = flip_backwards != 0;
  return make_layer(cls, config);
}

class TimeDistributed : public Layer {
 public:
  explicit TimeDistributed(const Json& c)
      : Layer("TimeDistributed", c), inner_(inner_layer(c, where())) {}
  // The input's (batch, timesteps) mask passes on (the inner layer sees rows, unmasked).
  bool supports_masking() const override { return true; }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    const Dims& d = x->shape().dims;
    check(x->rank() >= 3 && d[1] > 0, Status::shape, where(),
          ": needs inputs (batch, timesteps, ...) with the timesteps known");
    Dims inner_shape{-1};
    inner_shape.insert(inner_shape.end(), d.begin() + 2, d.end());
    Tensors ys = (*inner_)({api::reshape(x, inner_shape)});
    if (!adopted_) {
      adopt(*inner_);
      adopted_ = true;
    }
    check(ys.size() == 1, Status::invalid_argument, where(), ": the inner layer gives ", ys.size(),
          " outputs");
    const Dims& yd = ys[0]->shape().dims;
    Dims out{-1, d[1]};
    for (size_t i = 1; i < yd.size(); ++i) {
      check(yd[i] >= 0, Status::shape, where(), ": the inner layer's output dims must be known");
      out.push_back(yd[i]);
    }
    return {api::reshape(ys[0], out)};
  }

 private:
  std::shared_ptr<Layer> inner_;
  bool adopted_ = false;
};

class Bidirectional : public Layer {
 public:
  explicit Bidirectional(const Json& c)
      : Layer("Bidirectional", c),
        forward_(inner_layer(c, where(), "forward_")),
        backward_(inner_layer(c, where(), "backward_",
                              !bool_or(c["layer"]["config"], "go_backwards", false, where()))) {
    merge_ = c.contains("merge_mode") ? c["merge_mode"] : Json("concat");
    const Json& lc = c["layer"]["config"];
    return_sequences_ = bool_or(lc, "return_sequences", false, where());
    return_state_ = bool_or(lc, "return_state", false, where());
  }
  bool supports_masking() const override { return true; }
  Tensors compute_mask(const Tensors&, const Tensors& outputs) override {
    Tensors out(outputs.size());
    NodePtr m = masks().empty() ? nullptr : masks()[0];
    if (return_sequences_) {
      out[0] = m;
      if (merge_.is_null()) out[1] = m;
    }
    return out;
  }
  Tensors call(const Tensors& inputs) override {
    check(!inputs.empty() && inputs.size() % 2 == 1, Status::invalid_argument, where(),
          ": takes the inputs and, optionally, the initial states of both directions");
    size_t half = (inputs.size() - 1) / 2;
    Tensors fin{inputs[0]}, bin{inputs[0]};
    fin.insert(fin.end(), inputs.begin() + 1, inputs.begin() + 1 + long(half));
    bin.insert(bin.end(), inputs.begin() + 1 + long(half), inputs.end());
    Tensors fmask(fin.size()), bmask(bin.size());
    if (!masks().empty()) fmask[0] = bmask[0] = masks()[0];
    Tensors y = forward_->apply(fin, fmask).outputs, y_rev = backward_->apply(bin, bmask).outputs;
    if (!adopted_) {
      adopt(*forward_);
      adopt(*backward_);
      adopted_ = true;
    }
    Tensors states;
    if (return_state_) {
      states.insert(states.end(), y.begin() + 1, y.end());
      states.insert(states.end(), y_rev.begin() + 1, y_rev.end());
    }
    NodePtr a = y[0], b = y_rev[0];
    if (return_sequences_) b = api::reverse(b, {1});
    Tensors out;
    if (merge_.is_null()) {
      out = {a, b};
    } else {
      std::string mode = merge_.is_string() ? merge_.get<std::string>() : "?";
      if (mode == "concat")
        out = {api::concatenate({a, b}, -1)};
      else if (mode == "sum")
        out = {plus(a, b)};
      else if (mode == "ave")
        out = {divided(plus(a, b), number(a, 2.0))};
      else if (mode == "mul")
        out = {times(a, b)};
      else
        fail(Status::invalid_argument, where(), ": unknown merge_mode '", mode, "'");
    }
    out.insert(out.end(), states.begin(), states.end());
    return out;
  }

 private:
  std::shared_ptr<Layer> forward_, backward_;
  Json merge_;
  bool return_sequences_ = false, return_state_ = false, adopted_ = false;
};

// keras.layers.SpectralNormalization (Keras 3, tf.keras 2.13+): in training, the inner layer
// computes with its kernel divided by the kernel's largest singular value, estimated by
// power_iterations of a power iteration from vector_u, which keeps the estimate's vector. As
// Keras 3 on JAX trains it: the gradient flows through the division into the kernel, which
// the optimizer updates unnormalized (Keras' assignment of the normalized kernel is dropped
// with the step's trainable state). In inference the inner layer runs on the kernel as it is.
class SpectralNormalization : public Layer {
 public:
  explicit SpectralNormalization(const Json& c)
      : Layer("SpectralNormalization", c),
        inner_(inner_layer(c, where())),
        iterations_(int_or(c, "power_iterations", 1, where())) {
    check(iterations_ >= 1 && iterations_ <= 1000, Status::invalid_argument, where(),
          ": power_iterations must be from 1 to 1000");
  }
  // Keras 3 tracks the kernel as the wrapper's own variable beside vector_u, before the inner
  // layer's others; tf.keras lists the trainable weights first.
  std::vector<Weight> weights() const override {
    std::vector<Weight> all = Layer::weights();
    if (rules() != KerasRules::keras3 || !vector_u_) return all;
    std::vector<Weight> out(2);
    for (const Weight& w : all)
      if (w.variable == kernel_)
        out[0] = w;
      else if (w.variable == vector_u_)
        out[1] = w;
      else
        out.push_back(w);
    return out;
  }
  std::vector<std::string> keras3_weight_paths() const override {
    std::vector<std::string> paths;
    for (const Weight& w : weights())
      paths.push_back(w.variable == vector_u_ ? "vars/1"
                                              : "layer/vars/" + std::to_string(inner_index(w)));
    return paths;
  }
  std::vector<std::pair<std::string, size_t>> keras3_weight_copies() const override {
    return {{"vars/0", 0}};
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    Tensors ys = (*inner_)({x});
    check(ys.size() == 1, Status::invalid_argument, where(), ": the inner layer gives ", ys.size(),
          " outputs");
    if (!vector_u_) adopt_inner();
    NodePtr trained = substituted({ys[0]}, kernel_, normalized_kernel())[0];
    NodePtr y = api::in_train_phase([&] { return trained; }, [&] { return ys[0]; }, nullptr,
                                    std::nullopt, "SpectralNormalization");
    return {y->dtype() == x->dtype() ? y : api::cast(y, x->dtype())};
  }

 private:
  void adopt_inner() {
    adopt(*inner_);
    for (const char* role : {"kernel", "embeddings"})
      for (const Weight& w : inner_->weights())
        if (!kernel_ && w.role == role) kernel_ = w.variable;
    check(kernel_ != nullptr, Status::invalid_argument, where(), ": ", inner_->where(),
          " has no kernel nor embeddings");
    check(kernel_->rank() >= 1 && kernel_->shape().dims.back() > 0, Status::shape, where(),
          ": the kernel's last dim must be known");
    Json truncated = {{"class_name", "TruncatedNormal"},
                      {"config", {{"mean", 0.0}, {"stddev", 0.02}, {"seed", nullptr}}}};
    vector_u_ = add_weight_initialized("vector_u", {1, kernel_->shape().dims.back()}, truncated,
                                       nullptr, nullptr, false);
  }
  // The index of one of the inner layer's weights among them.
  size_t inner_index(const Weight& w) const {
    std::vector<Weight> ws = inner_->weights();
    size_t i = 0;
    while (i < ws.size() && ws[i].variable != w.variable) ++i;
    return i;
  }
  // Keras' normalize(x, axis=None): x * min(rsqrt(sum(x^2)), 1 / epsilon).
  static NodePtr unit(const NodePtr& x) {
    NodePtr inv = divided(number(x, 1.0), api::sqrt(api::sum(api::square(x), std::nullopt, true)));
    return times(x, smaller(inv, number(x, 1.0 / 1e-7)));
  }
  // kernel / sigma, sigma = v W u' after the power iteration (u and v held constant for the
  // gradient), vector_u updated to its u; an all-zero kernel keeps both as they are.
  NodePtr normalized_kernel() {
    int64_t out = kernel_->shape().dims.back();
    NodePtr w = api::reshape(kernel_, {-1, out});
    NodePtr u = vector_u_, v;
    for (int64_t i = 0; i < iterations_; ++i) {
      v = unit(api::dot(u, api::transpose(w)));
      u = unit(api::dot(v, w));
    }
    u = api::stop_gradient(u), v = api::stop_gradient(v);
    NodePtr sigma = api::reshape(api::dot(api::dot(v, w), api::transpose(u)), {});
    NodePtr zero = api::all(api::binary_op("equal", ops::Equal, kernel_, number(kernel_, 0.0)),
                            std::nullopt, false);
    updates_.push_back(
        api::update(vector_u_, api::switch_(
                                   zero, [&] { return vector_u_; }, [&] { return u; })));
    NodePtr safe = api::switch_(
        zero, [&] { return number(sigma, 1.0); }, [&] { return sigma; });
    return divided(kernel_, safe);
  }

  std::shared_ptr<Layer> inner_;
  int64_t iterations_;
  NodePtr kernel_, vector_u_;
};

const LayerRegistrar rows[] = {
    {"TimeDistributed", make_layer_of<TimeDistributed>},
    {"Bidirectional", make_layer_of<Bidirectional>},
    {"SpectralNormalization", make_layer_of<SpectralNormalization>},
};

}  // namespace
}  // namespace kb::model
