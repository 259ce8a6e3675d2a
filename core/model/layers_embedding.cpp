// keras.layers.Embedding: rows of a (input_dim, output_dim) table gathered by integer ids.
#include "core/model/layer_options.h"
#include "core/model/lora.h"
#include "core/api/api.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

class Embedding : public Layer {
 public:
  // Keras 3 looks up float32 rows and casts them.
  bool autocast() const override { return false; }
  explicit Embedding(const Json& c)
      : Layer("Embedding", with_initializer(c)),
        input_dim_(int_or(c, "input_dim", -1, where())),
        output_dim_(int_or(c, "output_dim", -1, where())),
        lora_(Lora::of(c, "embeddings_constraint", where())) {
    check(input_dim_ > 0 && output_dim_ > 0, Status::invalid_argument, where(),
          ": input_dim and output_dim must be positive");
    mask_zero_ = bool_or(c, "mask_zero", false, where());
    weights_as_added_ = lora_.enabled();
  }
  // Keras 3 keeps the table merged with its LoRA.
  std::vector<std::string> keras3_weight_paths() const override {
    return lora_.keras3_paths(false);
  }
  NodePtr keras3_saved_value(size_t i) const override {
    return i == 0 && lora_.enabled() ? lora_.merged(table_) : Layer::keras3_saved_value(i);
  }
  // mask_zero: id 0 is padding, masked out for the layers after (RNNs, the loss).
  Tensors compute_mask(const Tensors& inputs, const Tensors& outputs) override {
    if (!mask_zero_) return Layer::compute_mask(inputs, outputs);
    const NodePtr& ids = inputs[0];
    return {api::binary_op("not_equal", ops::NotEqual, ids, scalar_like(ids, 0))};
  }
  void build(const std::vector<Shape>&) override {
    table_ = add_weight("embeddings", {input_dim_, output_dim_}, "embeddings_initializer",
                        "embeddings_regularizer", "embeddings_constraint", !lora_.enabled());
    if (lora_.enabled()) {
      lora_.a =
          add_weight_initialized("lora_embeddings_a", {input_dim_, lora_.rank},
                                 Lora::a_initializer(), "embeddings_regularizer", nullptr, true);
      lora_.b =
          add_weight_initialized("lora_embeddings_b", {lora_.rank, output_dim_},
                                 Lora::b_initializer(), "embeddings_regularizer", nullptr, true);
    }
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr ids = single(inputs);
    if (ids->dtype() != DType::i32) ids = api::cast(ids, DType::i32);
    return {api::gather(lora_.merged(table_), ids)};
  }

 private:
  static Json with_initializer(Json c) {
    if (!c.contains("embeddings_initializer")) c["embeddings_initializer"] = "uniform";
    return c;
  }
  int64_t input_dim_, output_dim_;
  Lora lora_;
  bool mask_zero_ = false;
  NodePtr table_;
};

const LayerRegistrar rows[] = {{"Embedding", make_layer_of<Embedding>}};

}  // namespace
}  // namespace kb::model
