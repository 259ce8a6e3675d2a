// Keras 3's layers that turn numbers into categories inside a model: CategoryEncoding (integer
// ids to one-hot, multi-hot or count vectors) and Discretization (numbers to the ids of their
// bins, encoded the same ways). No weights; the same computation in training and inference.
#include <algorithm>

#include "core/api/api.h"
#include "core/graph/session.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

enum class Encoding { ids, one_hot, multi_hot, count };

// output_mode: "int" where the layer has ids to give, and the encodings ("binary" is Keras'
// older name of multi_hot).
Encoding encoding_of(const Json& config, const char* fallback, bool ids, const std::string& where) {
  std::string mode = string_or(config, "output_mode", fallback, where);
  if (ids && mode == "int") return Encoding::ids;
  if (mode == "one_hot") return Encoding::one_hot;
  if (mode == "multi_hot" || mode == "binary") return Encoding::multi_hot;
  if (mode == "count") return Encoding::count;
  fail(Status::invalid_argument, where, ": output_mode '", mode, "' is not ", ids ? "int, " : "",
       "one_hot, multi_hot or count");
}

void refuse_sparse(const Json& config, const std::string& where) {
  check(!bool_or(config, "sparse", false, where), Status::not_implemented, where,
        ": sparse outputs are not available (sparse=false gives the same values, dense)");
}

// (..., depth): 1 where x equals the id, compared in x's dtype as Keras' one_hot does (a
// fraction or an id out of [0, depth) matches none).
NodePtr hot(const NodePtr& x, int64_t depth) {
  NodePtr ids = api::arange(0, double(depth), 1, x->dtype());
  return api::binary_op("equal", ops::Equal, api::expand_dims(x, x->rank()), ids);
}

// Keras' encode_categorical_inputs (keras/src/utils/numerical_utils.py): one_hot appends the
// depth axis (dropping a last axis of 1); multi_hot and count fold axis 1 of 2-D inputs, or
// the only axis of 1-D ones (the batch: one sample, as Keras has it).
NodePtr encoded(NodePtr x, Encoding mode, int64_t depth, DType dtype, const std::string& where) {
  if (mode == Encoding::ids) return api::cast(x, dtype);
  int64_t rank = x->rank();
  check(rank == 1 || rank == 2, Status::shape, where, ": takes 1-D or 2-D inputs, got rank ", rank);
  if (mode == Encoding::one_hot) {
    if (rank == 2 && x->shape().dims[1] == 1) x = api::squeeze(x, 1);
    return api::cast(hot(x, depth), dtype);
  }
  if (mode == Encoding::multi_hot) {  // Keras' multi_hot truncates to int32 first
    if (!is_integer(x->dtype())) x = api::cast(x, DType::i32);
    return api::max(api::cast(hot(x, depth), dtype), {{rank - 1}}, false);
  }
  return api::sum(api::cast(hot(x, depth), dtype), {{rank - 1}}, false);
}

class CategoryEncoding : public Layer {
 public:
  explicit CategoryEncoding(const Json& c)
      : Layer("CategoryEncoding", c),
        tokens_(int_or(c, "num_tokens", 0, where())),
        mode_(encoding_of(c, "multi_hot", false, where())) {
    check(tokens_ >= 1, Status::invalid_argument, where(), ": num_tokens must be >= 1");
    refuse_sparse(c, where());
  }
  Tensors call(const Tensors& inputs) override {
    return {encoded(single(inputs), mode_, tokens_, dtype(), where())};
  }

 private:
  int64_t tokens_;
  Encoding mode_;
};

class Discretization : public Layer {
 public:
  explicit Discretization(const Json& c)
      : Layer("Discretization", c), mode_(encoding_of(c, "int", true, where())) {
    refuse_sparse(c, where());
    const Json& bounds = c.value("bin_boundaries", Json());
    check(!bounds.is_null(), Status::invalid_argument, where(),
          ": no bin_boundaries (a Discretization given num_bins has them once adapted)");
    Dims dims;
    nested_numbers(bounds, 1, false, dims, bounds_, where() + ": bin_boundaries");
    check(dims.size() == 1, Status::invalid_argument, where(), ": bin_boundaries is not a list");
    check(std::is_sorted(bounds_.begin(), bounds_.end()), Status::invalid_argument, where(),
          ": bin_boundaries must ascend");
  }
  Tensors call(const Tensors& inputs) override {
    // Keras' digitize (searchsorted on the right): the id of x is the number of boundaries at
    // or below it, here len - the number above it, so that NaN takes the last bin as in Keras.
    NodePtr x = single(inputs);
    DType floatx = Session::get().floatx();
    if (x->dtype() != floatx) x = api::cast(x, floatx);
    auto b = Buffer::make(DType::f64, {int64_t(bounds_.size())});
    std::copy(bounds_.begin(), bounds_.end(), b->as<double>());
    NodePtr bounds = api::constant(b, floatx, std::nullopt, "");
    NodePtr above = api::binary_op("less", ops::Less, api::expand_dims(x, x->rank()), bounds);
    NodePtr count = api::sum(api::cast(above, DType::i32), {{x->rank()}}, false);
    NodePtr ids = minus(scalar_constant(double(bounds_.size()), DType::i32), count);
    int64_t depth = int64_t(bounds_.size()) + 1;
    return {encoded(ids, mode_, depth, mode_ == Encoding::ids ? DType::i32 : dtype(), where())};
  }

 private:
  Encoding mode_;
  std::vector<double> bounds_;
};

const LayerRegistrar rows[] = {
    {"CategoryEncoding", make_layer_of<CategoryEncoding>},
    {"Discretization", make_layer_of<Discretization>},
};

}  // namespace
}  // namespace kb::model
