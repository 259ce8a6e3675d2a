// keras.layers.wrappers: TimeDistributed (the inner layer on every timestep, as one batch of
// batch * timesteps rows) and Bidirectional (a recurrent layer forwards and backwards, merged).
#include "core/model/graph_math.h"
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

const LayerRegistrar rows[] = {
    {"TimeDistributed", make_layer_of<TimeDistributed>},
    {"Bidirectional", make_layer_of<Bidirectional>},
};

}  // namespace
}  // namespace kb::model
