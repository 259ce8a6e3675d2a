// keras.layers.MultiHeadAttention (Keras 3, tf.keras 2.4+): query, key and value projected by
// EinsumDense layers into heads, dot-product attention over the attention axes with the masks
// Keras derives (the inputs' masks, attention_mask, use_causal_mask), and the heads projected
// back. Its masked softmax is that of the Keras whose rules the layer follows: Keras 3 sets a
// masked score to -1e9 and a masked weight to 0 (or, on its fused path, to -0.7 * FLT_MAX),
// tf.keras adds -1e9. Attention and AdditiveAttention follow.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "core/api/control.h"
#include "core/api/random.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

std::string letters(int64_t from, int64_t count) {
  std::string s;
  for (int64_t i = 0; i < count; ++i) s += char('a' + from + i);
  return s;
}

// Keras' _build_proj_equation: (free dims, bound dims) x (bound, output) -> (free, output).
struct Projection {
  std::string equation, bias_axes;
  int64_t output_rank;
};
Projection projection(int64_t free_dims, int64_t bound_dims, int64_t output_dims) {
  std::string free = letters(0, free_dims), bound = letters(free_dims, bound_dims),
              out = letters(free_dims + bound_dims, output_dims);
  return {free + bound + "," + bound + out + "->" + free + out, out, free_dims + output_dims};
}

// Keras' _build_attention_equation for projected tensors of `rank` over `axes`: the scores'
// equation (key, query -> scores), the combination's (scores, value -> output) and the rank
// of the scores.
struct AttentionEquations {
  std::string dot, combine;
  int64_t scores_rank;
};
AttentionEquations attention_equations(int64_t rank, const std::vector<int64_t>& axes) {
  std::string target = letters(0, rank), source;
  auto in_axes = [&](int64_t i) { return std::find(axes.begin(), axes.end(), i) != axes.end(); };
  int64_t offset = rank;
  for (int64_t i = 0; i < rank; ++i)
    source += !in_axes(i) || i == rank - 1 ? target[size_t(i)] : char('a' + offset++);
  std::string product;
  for (int64_t i = 0; i < rank; ++i)
    if (!in_axes(i) && i != rank - 1) product += target[size_t(i)];
  for (int64_t a : axes) product += target[size_t(a)];
  for (int64_t a : axes) product += source[size_t(a)];
  return {source + "," + target + "->" + product, product + "," + source + "->" + target,
          int64_t(product.size())};
}

// A (batch?, T, 1)-shaped ones tensor's cumulative count: 1..T along axis 1 of x's leading
// slice, for the causal and sliding-window masks.
NodePtr positions(const NodePtr& x) {
  std::vector<int64_t> start(size_t(x->rank()), 0), size(size_t(x->rank()), 1);
  size[1] = -1;
  NodePtr one = api::slice(x, start, size);
  NodePtr p = api::cumsum(api::ones_like(one, DType::f32, ""), 1);
  Dims shape{1, -1, 1};
  return api::reshape(p, shape);
}

// GroupedQueryAttention (Keras 3) is the same with num_key_value_heads heads for the key and the
// value, each repeated for its group of the num_query_heads query heads, over inputs of rank 3.
class MultiHeadAttention : public Layer {
 public:
  MultiHeadAttention(const std::string& cls, const Json& c, bool grouped)
      : Layer(cls, c),
        grouped_(grouped),
        heads_(int_or(c, grouped ? "num_query_heads" : "num_heads", 0, where())),
        kv_heads_(grouped ? int_or(c, "num_key_value_heads", 0, where()) : heads_),
        key_dim_(int_or(c, grouped ? "head_dim" : "key_dim", 0, where())),
        value_dim_(grouped ? key_dim_ : int_or(c, "value_dim", key_dim_, where())),
        dropout_(number_or(c, "dropout", 0.0, where())),
        use_bias_(bool_or(c, "use_bias", true, where())),
        use_gate_(bool_or(c, "use_gate", false, where())) {
    check(heads_ > 0 && key_dim_ > 0 && value_dim_ > 0 && kv_heads_ > 0 && heads_ % kv_heads_ == 0,
          Status::invalid_argument, where(),
          ": the heads and their dims must be positive, the query's heads a multiple of the "
          "key's and value's");
    check(dropout_ >= 0 && dropout_ < 1, Status::invalid_argument, where(),
          ": dropout must be in [0, 1)");
    check(!c.contains("activity_regularizer") || c["activity_regularizer"].is_null(),
          Status::not_implemented, where(), ": an activity_regularizer");
    if (c.contains("sliding_window") && !c["sliding_window"].is_null()) {
      check(c["sliding_window"].is_number_integer() && c["sliding_window"].get<int64_t>() > 0,
            Status::invalid_argument, where(), ": sliding_window is not a positive int");
      window_ = c["sliding_window"].get<int64_t>();
    }
    if (c.contains("output_shape") && !c["output_shape"].is_null())
      output_shape_ =
          c["output_shape"].is_array() ? c["output_shape"] : Json::array({c["output_shape"]});
  }
  bool supports_masking() const override { return true; }
  std::vector<std::string> tensor_parameters() const override {
    return {"value", "key", "query_mask", "value_mask", "key_mask", "attention_mask"};
  }
  std::vector<std::string> keras3_weight_paths() const override {
    std::vector<std::string> paths;
    for (const char* d :
         {"query_dense", "key_dense", "gate_dense", "value_dense", "output_dense"}) {
      if (std::string(d) == "gate_dense" && !use_gate_) continue;
      std::string at = (grouped_ ? "_" : "") + std::string(d);  // no public property there
      paths.push_back(at + "/vars/0");
      if (use_bias_) paths.push_back(at + "/vars/1");
    }
    return paths;
  }
  Tensors compute_mask(const Tensors&, const Tensors& outputs) override {
    Tensors out(outputs.size());
    out[0] = masks().empty() ? nullptr : masks()[0];
    return out;
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& query = single(inputs);
    const CallArguments& args = arguments();
    auto tensor = [&](const char* name) {
      auto t = args.tensors.find(name);
      return t == args.tensors.end() ? nullptr : t->second;
    };
    auto flag = [&](const char* name) {
      return args.values.contains(name) && args.values[name].is_boolean() &&
             args.values[name].get<bool>();
    };
    NodePtr value = tensor("value");
    check(value != nullptr, Status::invalid_argument, where(), ": called without a value");
    NodePtr key = tensor("key") ? tensor("key") : value;
    check(query->shape().rank_known && value->shape().rank_known && key->shape().rank_known &&
              query->rank() >= 3 && value->rank() == key->rank(),
          Status::shape, where(), ": needs query, value and key of rank 3 or more");
    bool scores_out = flag("return_attention_scores"), causal = flag("use_causal_mask");
    if (!built_sublayers_) make_sublayers(query->shape(), key->rank(), value->rank());
    NodePtr mask = attention_mask(query, value, tensor("key") != nullptr, causal);
    NameScope scope(name());
    NodePtr gate = use_gate_ ? (*gate_)({query})[0] : nullptr;
    NodePtr q = (*query_)({query})[0], k = (*key_)({key})[0], v = (*value_)({value})[0];
    if (grouped_ && heads_ != kv_heads_) {  // each key and value head for its query heads
      k = api::repeat_elements(k, heads_ / kv_heads_, 2);
      v = api::repeat_elements(v, heads_ / kv_heads_, 2);
    }
    // Keras 3 runs its fused dot-product attention where it can, which masks with
    // -0.7 * FLT_MAX and leaves a fully masked row uniform.
    bool fused = rules() == KerasRules::keras3 && dropout_ == 0 && !scores_out && q->rank() == 4;
    q = times(q, number(q, 1.0 / std::sqrt(double(key_dim_))));
    NodePtr scores = grouped_ ? api::einsum(eq_.dot, {q, k}) : api::einsum(eq_.dot, {k, q});
    // (batch, T, S) -> the scores' rank, new axes before the query's attention axes.
    while (mask && mask->rank() < scores->rank())
      mask = api::expand_dims(mask, -2 * int64_t(axes_.size()) - 1);
    NodePtr weights = masked_softmax(scores, mask, fused);
    NodePtr dropped = weights;
    if (dropout_ > 0)
      dropped = api::in_train_phase(
          [&] { return api::dropout(weights, dropout_, std::nullopt, std::nullopt); },
          [&] { return weights; }, nullptr, std::nullopt, "MultiHeadAttention");
    NodePtr attended = api::einsum(eq_.combine, {dropped, v});
    if (gate) attended = times(attended, gate);
    NodePtr out = (*output_)({attended})[0];
    if (!adopted_) {
      for (const auto& l : {query_, key_, gate_, value_, output_})
        if (l) adopt(*l);
      adopted_ = true;
    }
    if (scores_out) return {out, weights};
    return {out};
  }

 private:
  Json sublayer_config(const std::string& name, const Projection& p, const Json& output_shape,
                       const char* activation) const {
    Json c = {{"name", name},
              {"equation", p.equation},
              {"output_shape", output_shape},
              {"bias_axes", use_bias_ ? Json(p.bias_axes) : Json()},
              {"activation", activation}};
    for (const char* key :
         {"kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
          "kernel_constraint", "bias_constraint", "dtype", "trainable"})
      if (config().contains(key)) c[key] = config()[key];
    return c;
  }
  // Keras' _get_output_shape: the last dims known, unknown (null) before them.
  static Json output_dims(int64_t rank, const std::vector<int64_t>& last) {
    Json dims = Json::array();
    for (int64_t i = 0; i < rank - int64_t(last.size()); ++i) dims.push_back(nullptr);
    for (int64_t d : last) dims.push_back(d);
    return dims;
  }
  void make_sublayers(const Shape& query, int64_t key_rank, int64_t value_rank) {
    int64_t query_rank = query.rank();
    if (grouped_) {
      check(query_rank == 3 && key_rank == 3 && value_rank == 3, Status::shape, where(),
            ": takes query, value and key of rank 3");
      check(query.dims.back() > 0, Status::shape, where(), ": the query's last dim must be known");
      Projection q{"bqm,muh->bquh", "uh", 4}, kv{"bkm,mvh->bkvh", "vh", 4},
          o{"bquh,uhm->bqm", "m", 3};
      Json q_dims = Json::array({nullptr, heads_, key_dim_}),
           kv_dims = Json::array({nullptr, kv_heads_, key_dim_});
      query_ = make_layer("EinsumDense", sublayer_config("query", q, q_dims, "linear"));
      key_ = make_layer("EinsumDense", sublayer_config("key", kv, kv_dims, "linear"));
      if (use_gate_)
        gate_ = make_layer("EinsumDense", sublayer_config("gate", q, q_dims, "sigmoid"));
      value_ = make_layer("EinsumDense", sublayer_config("value", kv, kv_dims, "linear"));
      output_ = make_layer("EinsumDense",
                           sublayer_config("attention_output", o,
                                           Json::array({nullptr, query.dims.back()}), "linear"));
      axes_ = {1};
      eq_ = {"bquh,bkuh->buqk", "buqk,bkuh->bquh", 4};
      built_sublayers_ = true;
      return;
    }
    Projection pq = projection(query_rank - 1, 1, 2), pk = projection(key_rank - 1, 1, 2),
               pv = projection(value_rank - 1, 1, 2);
    query_ =
        make_layer("EinsumDense",
                   sublayer_config("query", pq, output_dims(pq.output_rank - 1, {heads_, key_dim_}),
                                   "linear"));
    key_ = make_layer(
        "EinsumDense",
        sublayer_config("key", pk, output_dims(pk.output_rank - 1, {heads_, key_dim_}), "linear"));
    if (use_gate_)
      gate_ = make_layer(
          "EinsumDense",
          sublayer_config("gate", pq, output_dims(pq.output_rank - 1, {heads_, value_dim_}),
                          "sigmoid"));
    value_ = make_layer(
        "EinsumDense",
        sublayer_config("value", pv, output_dims(pv.output_rank - 1, {heads_, value_dim_}),
                        "linear"));
    int64_t rank = pv.output_rank;  // the projected tensors' rank
    const Json& given = config().value("attention_axes", Json());
    if (given.is_null()) {
      for (int64_t a = 1; a < rank - 2; ++a) axes_.push_back(a);
    } else {
      for (const Json& a : given.is_array() ? given : Json::array({given})) {
        check(a.is_number_integer(), Status::invalid_argument, where(),
              ": attention_axes holds something other than ints");
        int64_t v = a.get<int64_t>();
        v = v >= 0 ? v : rank - 1 + v;
        check(v >= 1 && v < rank - 2, Status::invalid_argument, where(), ": attention axis ",
              a.get<int64_t>(), " is not an axis of the inputs' features");
        axes_.push_back(v);
      }
    }
    eq_ = attention_equations(rank, axes_);
    std::vector<int64_t> out_last;
    if (!output_shape_.is_null()) {
      for (const Json& d : output_shape_) {
        check(d.is_number_integer() && d.get<int64_t>() > 0, Status::invalid_argument, where(),
              ": output_shape holds something other than positive dims");
        out_last.push_back(d.get<int64_t>());
      }
    }
    if (out_last.empty()) {  // the query's features
      check(query.dims.back() > 0, Status::shape, where(), ": the query's last dim must be known");
      out_last.push_back(query.dims.back());
    }
    Projection po = projection(query_rank - 1, 2, int64_t(out_last.size()));
    output_ = make_layer("EinsumDense",
                         sublayer_config("attention_output", po,
                                         output_dims(po.output_rank - 1, out_last), "linear"));
    built_sublayers_ = true;
  }
  // The boolean (batch or 1, T, S) mask of the attention, null when nothing masks it.
  NodePtr attention_mask(const NodePtr& query, const NodePtr& value, bool key_given, bool causal) {
    const CallArguments& args = arguments();
    auto mask_of = [&](const char* param, const char* tensor) -> NodePtr {
      auto given = args.tensors.find(param);
      if (given != args.tensors.end()) return given->second;
      auto m = args.masks.find(tensor);
      return m == args.masks.end() ? nullptr : m->second;
    };
    NodePtr query_mask = args.tensors.count("query_mask") ? args.tensors.at("query_mask")
                         : masks().empty()                ? nullptr
                                                          : masks()[0];
    NodePtr value_mask = mask_of("value_mask", "value");
    NodePtr key_mask = key_given ? mask_of("key_mask", "key") : nullptr;
    NodePtr combined;  // float32 ones and zeros, multiplied
    auto with = [&](const NodePtr& m) {
      NodePtr f = m->dtype() == DType::f32 ? m : api::cast(m, DType::f32);
      combined = combined ? times(combined, f) : f;
    };
    if (query_mask) with(api::expand_dims(query_mask, -1));
    if (value_mask) with(api::expand_dims(value_mask, -2));
    if (key_mask) with(api::expand_dims(key_mask, -2));
    if (causal || window_ > 0) {
      check(query->rank() == 3, Status::not_implemented, where(),
            ": a causal or sliding-window mask over inputs of rank ", query->rank());
      NodePtr rows = positions(query), cols = api::permute_dimensions(positions(value), {0, 2, 1});
      if (causal) with(api::cast(greater_equal(rows, cols), DType::f32));
      if (window_ > 0)
        with(api::cast(less(api::abs(minus(rows, cols)), number(rows, double(window_))),
                       DType::f32));
    }
    if (NodePtr given =
            args.tensors.count("attention_mask") ? args.tensors.at("attention_mask") : nullptr)
      with(api::cast(api::cast(given, DType::b8), DType::f32));
    return combined ? greater(combined, number(combined, 0.5)) : nullptr;
  }
  NodePtr masked_softmax(const NodePtr& scores, const NodePtr& mask, bool fused) const {
    NodePtr x = scores;
    if (mask) {
      if (rules() == KerasRules::keras3)
        x = select(mask, scores, number(scores, fused ? -0.7 * double(FLT_MAX) : -1e9));
      else  // tf.keras' Softmax: (1 - mask) * -1e9 added
        x = plus(scores, times(minus(number(scores, 1.0), api::cast(mask, scores->dtype())),
                               number(scores, -1e9)));
    }
    NodePtr y;
    if (axes_.size() == 1) {
      y = api::softmax(x, -1);
    } else {
      std::vector<int64_t> last;
      for (size_t i = 0; i < axes_.size(); ++i)
        last.push_back(x->rank() - int64_t(axes_.size()) + int64_t(i));
      y = api::exp(minus(x, api::logsumexp(x, last, true)));
    }
    if (mask && rules() == KerasRules::keras3 && !fused) y = select(mask, y, number(y, 0.0));
    return y;
  }

  bool grouped_;
  int64_t heads_, kv_heads_, key_dim_, value_dim_;
  double dropout_;
  bool use_bias_, use_gate_;
  int64_t window_ = 0;
  Json output_shape_;
  std::vector<int64_t> axes_;
  AttentionEquations eq_;
  std::shared_ptr<Layer> query_, key_, gate_, value_, output_;
  bool built_sublayers_ = false, adopted_ = false;
};

// keras.layers.Attention (Luong's dot or concat scores) and AdditiveAttention (Bahdanau's), on
// [query, value] or [query, value, key]: scores masked by the value's mask and use_causal_mask
// (minus 1e9 where masked), softmax, the weighted values, zeros where the query is masked.
class DotAttention : public Layer {
 public:
  DotAttention(const char* cls, const Json& c, bool additive)
      : Layer(cls, c),
        additive_(additive),
        use_scale_(bool_or(c, "use_scale", additive, where())),
        concat_(string_or(c, "score_mode", "dot", where()) == "concat"),
        dropout_(number_or(c, "dropout", 0.0, where())) {
    std::string mode = string_or(c, "score_mode", "dot", where());
    check(additive || mode == "dot" || mode == "concat", Status::invalid_argument, where(),
          ": score_mode is 'dot' or 'concat', not '", mode, "'");
    check(dropout_ >= 0 && dropout_ < 1, Status::invalid_argument, where(),
          ": dropout must be in [0, 1)");
  }
  bool supports_masking() const override { return true; }
  Tensors compute_mask(const Tensors&, const Tensors& outputs) override {
    Tensors out(outputs.size());
    out[0] = masks().empty() ? nullptr : masks()[0];
    return out;
  }
  void build(const std::vector<Shape>& shapes) override {
    check((shapes.size() == 2 || shapes.size() == 3) && shapes[0].rank() == 3 &&
              shapes[1].rank() == 3,
          Status::shape, where(), ": takes [query, value] or [query, value, key] of rank 3");
    if (use_scale_) {
      if (additive_) {
        int64_t dim = shapes[0].dims.back();
        check(dim > 0, Status::shape, where(), ": the query's last dim must be known");
        scale_ = add_weight_initialized("scale", {dim}, "glorot_uniform", nullptr, nullptr, true);
      } else {
        scale_ = add_weight_initialized("scale", {}, "ones", nullptr, nullptr, true);
      }
    }
    if (concat_ && !additive_)
      concat_weight_ =
          add_weight_initialized("concat_score_weight", {}, "ones", nullptr, nullptr, true);
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr &q = inputs[0], &v = inputs[1];
    const NodePtr& k = inputs.size() > 2 ? inputs[2] : v;
    const Json& values = arguments().values;
    auto flag = [&](const char* name) {
      return values.contains(name) && values[name].is_boolean() && values[name].get<bool>();
    };
    NodePtr scores;
    if (additive_ || concat_) {  // sum(tanh(q[:, :, None] + k[:, None]) (* scale), -1)
      NodePtr sum = plus(api::expand_dims(q, -2), api::expand_dims(k, -3));
      if (additive_) {
        NodePtr t = api::tanh(sum);
        scores = api::sum(scale_ ? times(t, scale_) : t, std::vector<int64_t>{-1}, false);
      } else {
        scores = times(concat_weight_, api::sum(api::tanh(scale_ ? times(scale_, sum) : sum),
                                                std::vector<int64_t>{-1}, false));
      }
    } else {
      scores = matmul(q, k, false, true);
      if (scale_) scores = times(scores, scale_);
    }
    NodePtr q_mask = masks().size() > 0 ? masks()[0] : nullptr;
    NodePtr v_mask = masks().size() > 1 ? masks()[1] : nullptr;
    NodePtr keep;  // float ones where a score counts
    if (v_mask) keep = api::expand_dims(api::cast(v_mask, scores->dtype()), -2);
    if (flag("use_causal_mask")) {
      NodePtr causal =
          api::cast(greater_equal(positions(q), api::permute_dimensions(positions(v), {0, 2, 1})),
                    scores->dtype());
      keep = keep ? times(keep, causal) : causal;
    }
    if (keep)
      scores = select(less(keep, number(keep, 0.5)), minus(scores, number(scores, 1e9)), scores);
    NodePtr weights = api::softmax(scores, -1);
    NodePtr dropped = weights;
    if (dropout_ > 0)
      dropped = api::in_train_phase(
          [&] { return api::dropout(weights, dropout_, std::nullopt, std::nullopt); },
          [&] { return weights; }, nullptr, std::nullopt, class_name().c_str());
    NodePtr out = matmul(dropped, v, false, false);
    if (q_mask) out = times(out, api::expand_dims(api::cast(q_mask, out->dtype()), -1));
    if (flag("return_attention_scores")) return {out, weights};
    return {out};
  }

 private:
  bool additive_, use_scale_, concat_;
  double dropout_;
  NodePtr scale_, concat_weight_;
};

const LayerRegistrar rows[] = {
    {"MultiHeadAttention",
     [](const Json& c) {
       return std::make_shared<MultiHeadAttention>("MultiHeadAttention", c, false);
     }},
    {"GroupedQueryAttention",
     [](const Json& c) {
       return std::make_shared<MultiHeadAttention>("GroupedQueryAttention", c, true);
     }},
    {"GroupQueryAttention",  // Keras' other name of the class, which files and paths name
     [](const Json& c) {
       return std::make_shared<MultiHeadAttention>("GroupedQueryAttention", c, true);
     }},
    {"Attention",
     [](const Json& c) { return std::make_shared<DotAttention>("Attention", c, false); }},
    {"AdditiveAttention",
     [](const Json& c) { return std::make_shared<DotAttention>("AdditiveAttention", c, true); }},
};

}  // namespace
}  // namespace kb::model
