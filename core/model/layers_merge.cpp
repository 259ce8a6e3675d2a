// keras.layers.merge: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot.
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

enum class Merge { add, subtract, multiply, average, maximum, minimum };

const char* merge_name(Merge m) {
  static const char* names[] = {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"};
  return names[int(m)];
}

// _Merge.compute_mask: the inputs' masks combined with a logical and (null when none is masked).
NodePtr all_of(const Tensors& masks) {
  Tensors present;
  for (const auto& m : masks)
    if (m) present.push_back(api::expand_dims(m, 0));
  if (present.empty()) return nullptr;
  return api::all(api::concatenate(present, 0), std::vector<int64_t>{0}, false);
}

// _Merge: the inputs (of one rank) combined pairwise, left to right.
template <Merge M>
class Elementwise : public Layer {
 public:
  explicit Elementwise(const Json& c) : Layer(merge_name(M), c) {}
  bool supports_masking() const override { return true; }
  Tensors compute_mask(const Tensors&, const Tensors&) override { return {all_of(masks())}; }
  Tensors call(const Tensors& inputs) override {
    check(inputs.size() >= 2, Status::invalid_argument, where(), ": needs at least 2 inputs");
    check(M != Merge::subtract || inputs.size() == 2, Status::invalid_argument, where(),
          ": takes exactly 2 inputs");
    for (const auto& x : inputs)
      check(x->rank() == inputs[0]->rank(), Status::shape, where(), ": inputs of different ranks");
    NodePtr y = inputs[0];
    for (size_t i = 1; i < inputs.size(); ++i) {
      const NodePtr& x = inputs[i];
      switch (M) {
        case Merge::add:
        case Merge::average:
          y = plus(y, x);
          break;
        case Merge::subtract:
          y = minus(y, x);
          break;
        case Merge::multiply:
          y = times(y, x);
          break;
        case Merge::maximum:
          y = larger(y, x);
          break;
        case Merge::minimum:
          y = smaller(y, x);
          break;
      }
    }
    if (M == Merge::average) y = divided(y, number(y, double(inputs.size())));
    return {y};
  }
};

class Concatenate : public Layer {
 public:
  explicit Concatenate(const Json& c)
      : Layer("Concatenate", c), axis_(int_or(c, "axis", -1, where())) {}
  bool supports_masking() const override { return true; }
  // Each input's mask (all true where it has none, expanded to its rank), concatenated along
  // the axis, then all() over the last axis.
  Tensors compute_mask(const Tensors& inputs, const Tensors&) override {
    if (!masked()) return {nullptr};
    Tensors parts;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const NodePtr& m = masks()[i];
      if (!m)
        parts.push_back(api::cast(api::ones_like(inputs[i], std::nullopt, ""), DType::b8));
      else if (m->rank() < inputs[i]->rank())
        parts.push_back(api::expand_dims(m, -1));
      else
        parts.push_back(m);
    }
    return {api::all(api::concatenate(parts, axis_), std::vector<int64_t>{-1}, false)};
  }
  Tensors call(const Tensors& inputs) override {
    check(inputs.size() >= 2, Status::invalid_argument, where(), ": needs at least 2 inputs");
    return {api::concatenate(inputs, axis_)};
  }

 private:
  int64_t axis_;
};

class Dot : public Layer {
 public:
  explicit Dot(const Json& c)
      : Layer("Dot", c),
        axes_(ints_or(c, "axes", 2, -1, where())),
        normalize_(bool_or(c, "normalize", false, where())) {}
  bool supports_masking() const override { return true; }
  Tensors compute_mask(const Tensors&, const Tensors&) override { return {nullptr}; }
  Tensors call(const Tensors& inputs) override {
    check(inputs.size() == 2, Status::invalid_argument, where(), ": takes exactly 2 inputs");
    NodePtr x1 = inputs[0], x2 = inputs[1];
    int64_t a1 = axes_[0] < 0 ? axes_[0] + x1->rank() : axes_[0];
    int64_t a2 = axes_[1] < 0 ? axes_[1] + x2->rank() : axes_[1];
    if (normalize_) {
      x1 = api::l2_normalize(x1, std::vector<int64_t>{a1});
      x2 = api::l2_normalize(x2, std::vector<int64_t>{a2});
    }
    return {api::batch_dot(x1, x2, std::make_pair(a1, a2))};
  }

 private:
  std::vector<int64_t> axes_;
  bool normalize_;
};

const LayerRegistrar rows[] = {
    {"Add", make_layer_of<Elementwise<Merge::add>>},
    {"Subtract", make_layer_of<Elementwise<Merge::subtract>>},
    {"Multiply", make_layer_of<Elementwise<Merge::multiply>>},
    {"Average", make_layer_of<Elementwise<Merge::average>>},
    {"Maximum", make_layer_of<Elementwise<Merge::maximum>>},
    {"Minimum", make_layer_of<Elementwise<Merge::minimum>>},
    {"Concatenate", make_layer_of<Concatenate>},
    {"Dot", make_layer_of<Dot>},
};

}  // namespace
}  // namespace kb::model
