// keras.layers.pooling: max and average pooling in 1, 2 and 3 dims, their global forms, and
// Keras 3's adaptive ones.
#include <algorithm>

#include "core/api/api.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

const char* pool_name(api::PoolKind kind, int rank, bool global) {
  static const char* names[2][2][3] = {
      {{"MaxPooling1D", "MaxPooling2D", "MaxPooling3D"},
       {"GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D"}},
      {{"AveragePooling1D", "AveragePooling2D", "AveragePooling3D"},
       {"GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D"}}};
  return names[kind == api::PoolKind::avg][global][rank - 1];
}

template <api::PoolKind Kind, int Rank>
class Pooling : public Layer {
 public:
  explicit Pooling(const Json& c)
      : Layer(pool_name(Kind, Rank, false), c),
        size_(ints_or(c, "pool_size", size_t(Rank), 2, where())),
        padding_(padding_of(c, where())),
        format_(Rank == 1 ? data_format_or_last(c) : data_format_of(c, where())) {
    // strides None: the pool size (Keras 1D layers call it "strides" too).
    strides_ = c.contains("strides") && !c["strides"].is_null()
                   ? ints_or(c, "strides", size_t(Rank), 1, where())
                   : size_;
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (Rank == 1) {
      // _Pooling1D: a dummy spatial axis of 1, pooled in 2-D, dropped again.
      int64_t dummy = format_ == DataFormat::channels_last ? 2 : 3;
      NodePtr y = api::pool2d(api::expand_dims(x, dummy), {size_[0], 1}, {strides_[0], 1}, padding_,
                              format_, Kind);
      return {api::squeeze(y, dummy)};
    }
    if (Rank == 2) return {api::pool2d(x, size_, strides_, padding_, format_, Kind)};
    return {api::pool3d(x, size_, strides_, padding_, format_, Kind)};
  }

 private:
  DataFormat data_format_or_last(const Json& c) {
    return c.contains("data_format") ? data_format_of(c, where()) : DataFormat::channels_last;
  }
  std::vector<int64_t> size_, strides_;
  api::Padding padding_;
  DataFormat format_;
};

template <api::PoolKind Kind, int Rank>
class GlobalPooling : public Layer {
 public:
  explicit GlobalPooling(const Json& c)
      : Layer(pool_name(Kind, Rank, true), c),
        format_(Rank == 1 && !c.contains("data_format") ? DataFormat::channels_last
                                                        : data_format_of(c, where())),
        keepdims_(bool_or(c, "keepdims", false, where())) {}
  // Keras 2.2.4: GlobalAveragePooling1D averages over the unmasked steps.
  bool supports_masking() const override { return Kind == api::PoolKind::avg && Rank == 1; }
  Tensors compute_mask(const Tensors& inputs, const Tensors& outputs) override {
    if (!supports_masking()) return Layer::compute_mask(inputs, outputs);
    return {nullptr};
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (supports_masking() && masked()) {
      int64_t steps = format_ == DataFormat::channels_last ? 1 : 2;
      NodePtr m = api::cast(masks()[0], Session::get().floatx());
      m = api::reshape(m, {-1, x->shape().dims[size_t(steps)], 1});
      NodePtr kept = api::binary_op("multiply", ops::Mul, x, m);
      return {api::binary_op("divide", ops::Div,
                             api::sum(kept, std::vector<int64_t>{steps}, keepdims_),
                             api::sum(m, std::vector<int64_t>{steps}, keepdims_))};
    }
    std::vector<int64_t> axes;
    int64_t first = format_ == DataFormat::channels_last ? 1 : 2;
    for (int i = 0; i < Rank; ++i) axes.push_back(first + i);
    if (Rank == 1) axes = {first};
    return {Kind == api::PoolKind::max ? api::max(x, axes, keepdims_)
                                       : api::mean(x, axes, keepdims_)};
  }

 private:
  DataFormat format_;
  bool keepdims_;  // Keras 3 and tf.keras 2.6+: the pooled axes kept as dims of 1
};

// AdaptiveAveragePooling1D-3D and AdaptiveMaxPooling1D-3D (Keras 3): output_size windows per
// spatial axis, window i covering [floor(i * n / m), ceil((i + 1) * n / m)) of the axis' n
// values. Both pool one axis at a time (a window's mean or max over a box is that of its
// axes'): the average as a constant (m, n) matrix of window means, the max as the windows'
// maxima concatenated.
template <api::PoolKind Kind, int Rank>
class AdaptivePooling : public Layer {
 public:
  explicit AdaptivePooling(const Json& c)
      : Layer(std::string(Kind == api::PoolKind::max ? "AdaptiveMaxPooling"
                                                     : "AdaptiveAveragePooling") +
                  std::to_string(Rank) + "D",
              c),
        sizes_(ints_or(c, "output_size", size_t(Rank), -1, where())),
        format_(data_format_of(c, where())) {
    for (int64_t s : sizes_)
      check(s > 0, Status::invalid_argument, where(), ": output_size must be positive");
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr x = single(inputs);
    check(x->shape().rank_known && x->rank() == Rank + 2, Status::shape, where(),
          ": needs one input of rank ", Rank + 2);
    int64_t first = format_ == DataFormat::channels_last ? 1 : 2;
    for (int i = 0; i < Rank; ++i) {
      int64_t axis = first + i, n = x->shape().dims[size_t(axis)], m = sizes_[size_t(i)];
      check(n > 0, Status::shape, where(), ": the spatial dims must be known");
      x = Kind == api::PoolKind::max ? max_windows(x, axis, n, m) : mean_windows(x, axis, n, m);
    }
    return {x};
  }

 private:
  static int64_t window_start(int64_t i, int64_t n, int64_t m) { return i * n / m; }
  static int64_t window_end(int64_t i, int64_t n, int64_t m) { return ((i + 1) * n + m - 1) / m; }
  static NodePtr mean_windows(const NodePtr& x, int64_t axis, int64_t n, int64_t m) {
    auto b = Buffer::make(DType::f64, {m, n});
    double* w = b->as<double>();
    std::fill(w, w + m * n, 0.0);
    for (int64_t i = 0; i < m; ++i) {
      int64_t s = window_start(i, n, m), e = window_end(i, n, m);
      for (int64_t j = s; j < e; ++j) w[i * n + j] = 1.0 / double(e - s);
    }
    return contract_axis(x, axis, api::constant(b, x->dtype(), std::nullopt, ""));
  }
  static NodePtr max_windows(const NodePtr& x, int64_t axis, int64_t n, int64_t m) {
    Tensors parts;
    for (int64_t i = 0; i < m; ++i) {
      std::vector<int64_t> start(size_t(x->rank()), 0), size(size_t(x->rank()), -1);
      start[size_t(axis)] = window_start(i, n, m);
      size[size_t(axis)] = window_end(i, n, m) - start[size_t(axis)];
      parts.push_back(api::max(api::slice(x, start, size), std::vector<int64_t>{axis}, true));
    }
    return api::concatenate(parts, axis);
  }
  std::vector<int64_t> sizes_;
  DataFormat format_;
};

using api::PoolKind;
const LayerRegistrar rows[] = {
    {"AdaptiveAveragePooling1D", make_layer_of<AdaptivePooling<PoolKind::avg, 1>>},
    {"AdaptiveAveragePooling2D", make_layer_of<AdaptivePooling<PoolKind::avg, 2>>},
    {"AdaptiveAveragePooling3D", make_layer_of<AdaptivePooling<PoolKind::avg, 3>>},
    {"AdaptiveMaxPooling1D", make_layer_of<AdaptivePooling<PoolKind::max, 1>>},
    {"AdaptiveMaxPooling2D", make_layer_of<AdaptivePooling<PoolKind::max, 2>>},
    {"AdaptiveMaxPooling3D", make_layer_of<AdaptivePooling<PoolKind::max, 3>>},
    {"MaxPooling1D", make_layer_of<Pooling<PoolKind::max, 1>>},
    {"MaxPooling2D", make_layer_of<Pooling<PoolKind::max, 2>>},
    {"MaxPooling3D", make_layer_of<Pooling<PoolKind::max, 3>>},
    {"AveragePooling1D", make_layer_of<Pooling<PoolKind::avg, 1>>},
    {"AveragePooling2D", make_layer_of<Pooling<PoolKind::avg, 2>>},
    {"AveragePooling3D", make_layer_of<Pooling<PoolKind::avg, 3>>},
    {"GlobalMaxPooling1D", make_layer_of<GlobalPooling<PoolKind::max, 1>>},
    {"GlobalMaxPooling2D", make_layer_of<GlobalPooling<PoolKind::max, 2>>},
    {"GlobalMaxPooling3D", make_layer_of<GlobalPooling<PoolKind::max, 3>>},
    {"GlobalAveragePooling1D", make_layer_of<GlobalPooling<PoolKind::avg, 1>>},
    {"GlobalAveragePooling2D", make_layer_of<GlobalPooling<PoolKind::avg, 2>>},
    {"GlobalAveragePooling3D", make_layer_of<GlobalPooling<PoolKind::avg, 3>>},
    // Keras' aliases
    {"MaxPool1D", make_layer_of<Pooling<PoolKind::max, 1>>},
    {"MaxPool2D", make_layer_of<Pooling<PoolKind::max, 2>>},
    {"MaxPool3D", make_layer_of<Pooling<PoolKind::max, 3>>},
    {"AvgPool1D", make_layer_of<Pooling<PoolKind::avg, 1>>},
    {"AvgPool2D", make_layer_of<Pooling<PoolKind::avg, 2>>},
    {"AvgPool3D", make_layer_of<Pooling<PoolKind::avg, 3>>},
};

}  // namespace
}  // namespace kb::model
