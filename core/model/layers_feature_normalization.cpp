// The normalizations over each sample's features that Keras added after 2.2.4:
// LayerNormalization, GroupNormalization, RMSNormalization and UnitNormalization, each by Keras
// 3's formula (keras.ops.layer_normalization and friends): statistics of the sample only, the
// same in training and inference, no state.
#include <algorithm>

#include "core/api/api.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// Keras' `axis`: an int or a list of them, normalized for `rank` and sorted.
std::vector<int64_t> axes_of(const Json& c, int64_t rank, int64_t fallback,
                             const std::string& where) {
  Json axis = c.contains("axis") && !c["axis"].is_null() ? c["axis"] : Json(fallback);
  std::vector<int64_t> axes;
  for (const Json& a : axis.is_array() ? axis : Json::array({axis})) {
    check(a.is_number_integer(), Status::invalid_argument, where, ": axis is not an int");
    int64_t v = a.get<int64_t>();
    check(v >= -rank && v < rank && (v != 0 && v != -rank), Status::invalid_argument, where,
          ": axis ", v, " is not an axis of the features of an input of rank ", rank);
    axes.push_back(v < 0 ? v + rank : v);
  }
  std::sort(axes.begin(), axes.end());
  check(std::adjacent_find(axes.begin(), axes.end()) == axes.end() && !axes.empty(),
        Status::invalid_argument, where, ": axis repeats an axis");
  return axes;
}

NodePtr rsqrt(const NodePtr& x) { return divided(number(x, 1.0), api::sqrt(x)); }

// A weight of the dims of `axes` shaped to broadcast against inputs of `rank`.
NodePtr broadcast_weight(const NodePtr& w, const std::vector<int64_t>& axes, const Dims& dims) {
  if (!w || (axes.size() == 1 && axes[0] == int64_t(dims.size()) - 1)) return w;
  Dims shape(dims.size(), 1);
  for (int64_t a : axes) shape[size_t(a)] = dims[size_t(a)];
  return api::reshape(w, shape);
}

// The weight shape of `axes` of an input's dims, each known.
Dims weight_shape(const Shape& s, const std::vector<int64_t>& axes, const std::string& where) {
  Dims shape;
  for (int64_t a : axes) {
    check(s.dims[size_t(a)] > 0, Status::shape, where, ": the normalized axis ", a, " of input ",
          s.str(), " must be known");
    shape.push_back(s.dims[size_t(a)]);
  }
  return shape;
}

class LayerNormalization : public Layer {
 public:
  // Keras 3 normalizes 16-bit inputs in float32.
  bool autocast() const override { return false; }
  bool supports_masking() const override { return true; }
  explicit LayerNormalization(const Json& c)
      : Layer("LayerNormalization", c),
        epsilon_(number_or(c, "epsilon", 1e-3, where())),
        center_(bool_or(c, "center", true, where())),
        scale_(bool_or(c, "scale", true, where())),
        rms_scaling_(bool_or(c, "rms_scaling", false, where())) {}
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank_known && shapes[0].rank() >= 2, Status::shape,
          where(), ": needs one input of rank 2 or more");
    axes_ = axes_of(config(), shapes[0].rank(), -1, where());
    dims_ = shapes[0].dims;
    Dims shape = weight_shape(shapes[0], axes_, where());
    if (scale_ || rms_scaling_)
      gamma_ =
          add_weight("gamma", shape, "gamma_initializer", "gamma_regularizer", "gamma_constraint");
    if (center_ && !rms_scaling_)
      beta_ = add_weight("beta", shape, "beta_initializer", "beta_regularizer", "beta_constraint");
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    NodePtr variance = api::var(x, axes_, true);
    NodePtr gamma = broadcast_weight(gamma_, axes_, dims_);
    if (rms_scaling_) {  // Keras 3's rms_scaling: x / sqrt(variance + epsilon) * gamma
      NodePtr y = times(x, rsqrt(plus(variance, number(variance, epsilon_))));
      return {gamma ? times(y, gamma) : y};
    }
    return {keras3_normalized(x, api::mean(x, axes_, true), variance, gamma,
                              broadcast_weight(beta_, axes_, dims_), epsilon_)};
  }

 private:
  double epsilon_;
  bool center_, scale_, rms_scaling_;
  std::vector<int64_t> axes_;
  Dims dims_;
  NodePtr gamma_, beta_;
};

class RMSNormalization : public Layer {
 public:
  // Keras 3 normalizes 16-bit inputs in float32.
  bool autocast() const override { return false; }
  explicit RMSNormalization(const Json& c)
      : Layer("RMSNormalization", c), epsilon_(number_or(c, "epsilon", 1e-6, where())) {}
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank_known && shapes[0].rank() >= 2, Status::shape,
          where(), ": needs one input of rank 2 or more");
    axes_ = axes_of(config(), shapes[0].rank(), -1, where());
    dims_ = shapes[0].dims;
    scale_ = add_weight_initialized("scale", weight_shape(shapes[0], axes_, where()), "ones",
                                    nullptr, nullptr, true);
  }
  Tensors call(const Tensors& inputs) override {
    // x / sqrt(mean(x^2) + epsilon) * scale
    const NodePtr& x = single(inputs);
    NodePtr ms = api::mean(times(x, x), axes_, true);
    return {times(times(x, rsqrt(plus(ms, number(ms, epsilon_)))),
                  broadcast_weight(scale_, axes_, dims_))};
  }

 private:
  double epsilon_;
  std::vector<int64_t> axes_;
  Dims dims_;
  NodePtr scale_;
};

class UnitNormalization : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit UnitNormalization(const Json& c) : Layer("UnitNormalization", c) {}
  Tensors call(const Tensors& inputs) override {
    // keras.ops.normalize(order=2, epsilon=1e-12): x / sqrt(max(sum(x^2), epsilon^2))
    const NodePtr& x = single(inputs);
    NodePtr squares = api::sum(times(x, x), axes_of(config(), x->rank(), -1, where()), true);
    return {times(x, rsqrt(larger(squares, number(squares, 1e-24))))};
  }
};

class GroupNormalization : public Layer {
 public:
  // Keras 3 normalizes 16-bit inputs in float32.
  bool autocast() const override { return false; }
  bool supports_masking() const override { return true; }
  explicit GroupNormalization(const Json& c)
      : Layer("GroupNormalization", c),
        groups_(int_or(c, "groups", 32, where())),
        epsilon_(number_or(c, "epsilon", 1e-3, where())),
        center_(bool_or(c, "center", true, where())),
        scale_(bool_or(c, "scale", true, where())) {}
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank_known && shapes[0].rank() >= 2, Status::shape,
          where(), ": needs one input of rank 2 or more");
    std::vector<int64_t> axes = axes_of(config(), shapes[0].rank(), -1, where());
    check(axes.size() == 1, Status::invalid_argument, where(), ": axis is one axis");
    axis_ = axes[0];
    Dims shape = weight_shape(shapes[0], axes, where());
    int64_t dim = shape[0];
    if (groups_ == -1) groups_ = dim;  // instance normalization
    check(groups_ > 0 && groups_ <= dim && dim % groups_ == 0, Status::invalid_argument, where(),
          ": ", groups_, " groups do not divide the ", dim, " channels");
    if (scale_)
      gamma_ =
          add_weight("gamma", shape, "gamma_initializer", "gamma_regularizer", "gamma_constraint");
    if (center_)
      beta_ = add_weight("beta", shape, "beta_initializer", "beta_regularizer", "beta_constraint");
  }
  Tensors call(const Tensors& inputs) override {
    // The channels axis split into (groups, channels / groups); statistics over each group
    // and every other axis but the batch.
    const NodePtr& x = single(inputs);
    int64_t rank = x->rank(), dim = x->shape().dims[size_t(axis_)];
    Dims grouped = x->shape().dims;
    grouped[size_t(axis_)] = dim / groups_;
    grouped.insert(grouped.begin() + axis_, groups_);
    NodePtr dims = shape_vector(x);
    Tensors parts;
    if (axis_ > 0) parts.push_back(make_node(ops::Gather, {dims, int64_vector(range(0, axis_))}));
    parts.push_back(int64_vector({groups_, dim / groups_}));
    if (axis_ + 1 < rank)
      parts.push_back(make_node(ops::Gather, {dims, int64_vector(range(axis_ + 1, rank))}));
    NodePtr xg = reshape_to(x, make_node(ops::Concat, parts, {{attr::axis, int64_t(0)}}), grouped);
    std::vector<int64_t> reduction;
    for (int64_t a = 1; a <= rank; ++a)
      if (a != axis_) reduction.push_back(a);
    Dims wshape(size_t(rank + 1), 1);
    wshape[size_t(axis_)] = groups_;
    wshape[size_t(axis_ + 1)] = dim / groups_;
    auto shaped = [&](const NodePtr& w) { return w ? api::reshape(w, wshape) : w; };
    NodePtr y = keras3_normalized(xg, api::mean(xg, reduction, true), api::var(xg, reduction, true),
                                  shaped(gamma_), shaped(beta_), epsilon_);
    return {kb::reshape_like(y, x)};
  }

 private:
  static std::vector<int64_t> range(int64_t from, int64_t to) {
    std::vector<int64_t> v;
    for (int64_t i = from; i < to; ++i) v.push_back(i);
    return v;
  }
  int64_t groups_, axis_ = -1;
  double epsilon_;
  bool center_, scale_;
  NodePtr gamma_, beta_;
};

const LayerRegistrar rows[] = {
    {"LayerNormalization", make_layer_of<LayerNormalization>},
    {"RMSNormalization", make_layer_of<RMSNormalization>},
    {"UnitNormalization", make_layer_of<UnitNormalization>},
    {"GroupNormalization", make_layer_of<GroupNormalization>},
};

}  // namespace
}  // namespace kb::model
