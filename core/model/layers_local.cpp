// keras.layers.local: LocallyConnected1D/2D (unshared weights per output position, 'valid'
// padding), as Keras 2.2.4 builds them.
#include "core/api/api.h"
#include "core/api/local_conv.h"
#include "core/model/activations.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// conv_utils.conv_output_length for 'valid' padding.
int64_t valid_length(int64_t size, int64_t kernel, int64_t stride) {
  return size < kernel ? 0 : (size - kernel + stride) / stride;
}

template <int Rank>
class LocallyConnected : public Layer {
 public:
  explicit LocallyConnected(const Json& c)
      : Layer(ranked("LocallyConnected", Rank), c),
        filters_(int_or(c, "filters", -1, where())),
        kernel_size_(ints_or(c, "kernel_size", Rank, -1, where())),
        strides_(ints_or(c, "strides", Rank, 1, where())),
        format_(data_format_of(c, Rank, where())),
        use_bias_(bool_or(c, "use_bias", true, where())) {
    check(filters_ > 0, Status::invalid_argument, where(), ": filters must be positive");
    check(padding_of(c, where()) == api::Padding::valid, Status::not_implemented, where(),
          ": only 'valid' padding (as Keras 2.2.4)");
    check(int_or(c, "implementation", 1, where()) == 1, Status::not_implemented, where(),
          ": implementation 2 and 3");
  }
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() == Rank + 2, Status::shape, where(),
          ": needs one input of rank ", Rank + 2);
    const Dims& d = shapes[0].dims;
    bool first = format_ == DataFormat::channels_first;
    int64_t channels = first ? d[1] : d[size_t(Rank + 1)];
    int64_t positions = 1, patch = channels;
    for (int i = 0; i < Rank; ++i) {
      int64_t size = d[size_t(first ? 2 + i : 1 + i)];
      check(size > 0 && channels > 0, Status::shape, where(),
            ": the spatial dims and the channels must be known");
      out_.push_back(valid_length(size, kernel_size_[size_t(i)], strides_[size_t(i)]));
      positions *= out_.back();
      patch *= kernel_size_[size_t(i)];
    }
    kernel_ = add_weight("kernel", {positions, patch, filters_}, "kernel_initializer",
                         "kernel_regularizer", "kernel_constraint");
    if (!use_bias_) return;
    Dims bias = out_;
    bias.push_back(filters_);
    bias_ = add_weight("bias", bias, "bias_initializer", "bias_regularizer", "bias_constraint");
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    NodePtr y = Rank == 1 ? api::local_conv1d(x, kernel_, kernel_size_, strides_, format_)
                          : api::local_conv2d(x, kernel_, kernel_size_, strides_, out_, format_);
    if (use_bias_) y = api::bias_add(y, bias_, format_);
    return {activate(config().value("activation", Json()), y, where(), rules())};
  }

 private:
  int64_t filters_;
  std::vector<int64_t> kernel_size_, strides_, out_;
  DataFormat format_;
  bool use_bias_;
  NodePtr kernel_, bias_;
};

const LayerRegistrar rows[] = {
    {"LocallyConnected1D", make_layer_of<LocallyConnected<1>>},
    {"LocallyConnected2D", make_layer_of<LocallyConnected<2>>},
};

}  // namespace
}  // namespace kb::model
