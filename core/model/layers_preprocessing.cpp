// The preprocessing layers that act on numbers inside a model (keras.layers.Rescaling and
// Normalization, Keras 3 and tf.keras 2.6+), and Identity: the same computation in training and
// inference, no trainable weights.
#include <algorithm>

#include "core/api/api.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// A number or a list of them (one per channel, the last axis) as a constant of `dtype`.
NodePtr per_channel(const Json& v, double fallback, DType dtype, const std::string& where,
                    const char* key) {
  if (v.is_null()) return scalar_constant(fallback, dtype);
  if (v.is_number()) return scalar_constant(v.get<double>(), dtype);
  check(v.is_array() && !v.empty(), Status::invalid_argument, where, ": ", key,
        " is neither a number nor a list of numbers");
  auto b = Buffer::make(DType::f64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    check(v[i].is_number(), Status::invalid_argument, where, ": ", key, " holds a non-number");
    b->as<double>()[i] = v[i].get<double>();
  }
  return api::constant(b, dtype, std::nullopt, "");
}

class Rescaling : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit Rescaling(const Json& c) : Layer("Rescaling", c) {}
  Tensors call(const Tensors& inputs) override {
    // inputs * scale + offset; a list scales the channels (the last axis).
    NodePtr x = single(inputs);
    DType t = compute_dtype();
    if (x->dtype() != t) x = api::cast(x, t);
    return {plus(times(x, per_channel(config().value("scale", Json()), 1.0, t, where(), "scale")),
                 per_channel(config().value("offset", Json()), 0.0, t, where(), "offset"))};
  }
};

class Normalization : public Layer {
 public:
  // Its statistics are not trainable weights: it computes in their dtype, cast afterwards.
  bool autocast() const override { return false; }
  explicit Normalization(const Json& c)
      : Layer("Normalization", c), invert_(bool_or(c, "invert", false, where())) {
    check(c.value("mean", Json()).is_null() == c.value("variance", Json()).is_null(),
          Status::invalid_argument, where(), ": mean and variance are given together");
  }
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank_known, Status::shape, where(),
          ": needs one input of known rank");
    const Dims& d = shapes[0].dims;
    int64_t rank = int64_t(d.size());
    Json axis = config().contains("axis") ? config()["axis"] : Json(-1);
    std::vector<int64_t> keep;
    if (!axis.is_null())
      for (const Json& a : axis.is_array() ? axis : Json::array({axis})) {
        check(a.is_number_integer() && a.get<int64_t>() >= -rank && a.get<int64_t>() < rank,
              Status::invalid_argument, where(), ": axis is not an axis of the input");
        int64_t v = a.get<int64_t>() < 0 ? a.get<int64_t>() + rank : a.get<int64_t>();
        check(d[size_t(v)] > 0, Status::shape, where(), ": kept axis ", v, " must be known");
        keep.push_back(v);
      }
    std::sort(keep.begin(), keep.end());
    Dims shape;  // of the mean and variance
    broadcast_.assign(size_t(rank), 1);
    for (int64_t a : keep) {
      shape.push_back(d[size_t(a)]);
      broadcast_[size_t(a)] = d[size_t(a)];
    }
    if (config().value("mean", Json()).is_null()) {  // adapted: the statistics are weights
      mean_ = add_weight_of("mean", shape, dtype(), "zeros", false);
      variance_ = add_weight_of("variance", shape, dtype(), "ones", false);
      add_weight_of("count", {}, DType::i32, "zeros", false);
      mean_ = api::reshape(mean_, broadcast_);
      variance_ = api::reshape(variance_, broadcast_);
    } else {
      mean_ = statistic("mean", keep);
      variance_ = statistic("variance", keep);
    }
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr x = single(inputs);
    if (x->dtype() != dtype()) x = api::cast(x, dtype());
    // (x - mean) / max(sqrt(variance), epsilon); inverted: mean + x * max(...)
    NodePtr sd = larger(api::sqrt(variance_), number(variance_, 1e-7));
    return {invert_ ? plus(mean_, times(x, sd)) : divided(minus(x, mean_), sd)};
  }

 private:
  // The config's mean or variance: a number, or values for the kept axes (their last ones
  // where fewer), shaped to broadcast.
  NodePtr statistic(const char* key, const std::vector<int64_t>& keep) {
    const Json& v = config()[key];
    if (v.is_number()) return scalar_constant(v.get<double>(), dtype());
    Dims dims;
    std::vector<double> values;
    nested_numbers(v, 8, false, dims, values, where() + ": " + key);
    check(dims.size() <= keep.size(), Status::shape, where(), ": ", key, " has more dims than ",
          "the kept axes");
    Dims shape(broadcast_.size(), 1);
    for (size_t i = 1; i <= dims.size(); ++i) {
      int64_t axis = keep[keep.size() - i];
      check(dims[dims.size() - i] == broadcast_[size_t(axis)] || dims[dims.size() - i] == 1,
            Status::shape, where(), ": ", key, " does not fit axis ", axis);
      shape[size_t(axis)] = dims[dims.size() - i];
    }
    auto b = Buffer::make(DType::f64, shape);
    for (size_t i = 0; i < values.size(); ++i) b->as<double>()[i] = values[i];
    return api::constant(b, dtype(), std::nullopt, "");
  }
  bool invert_;
  Dims broadcast_;
  NodePtr mean_, variance_;
};

class Identity : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit Identity(const Json& c) : Layer("Identity", c) {}
  Tensors call(const Tensors& inputs) override { return {single(inputs)}; }
};

const LayerRegistrar rows[] = {
    {"Rescaling", make_layer_of<Rescaling>},
    {"Normalization", make_layer_of<Normalization>},
    {"Identity", make_layer_of<Identity>},
};

}  // namespace
}  // namespace kb::model
