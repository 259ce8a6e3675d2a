#include "core/model/layer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "core/api/api.h"
#include "core/backend/device.h"
#include "core/compile/function.h"
#include "core/graph/session.h"
#include "core/model/initializers.h"
#include "core/model/regularizers.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

std::map<std::string, LayerFactory>& registry() {
  static std::map<std::string, LayerFactory> table;
  return table;
}

// Built-in rows register while the library loads; custom classes at run time, from any thread.
std::mutex& registry_mutex() {
  static std::mutex mu;
  return mu;
}

// Keras 2.2.4's defaults for the initializers a config may leave out.
const char* default_initializer(const std::string& key) {
  static const std::map<std::string, const char*> defaults = {
      {"kernel_initializer", "glorot_uniform"},    {"recurrent_initializer", "orthogonal"},
      {"depthwise_initializer", "glorot_uniform"}, {"pointwise_initializer", "glorot_uniform"},
      {"embeddings_initializer", "uniform"},       {"gamma_initializer", "ones"},
      {"moving_variance_initializer", "ones"},
  };
  auto it = defaults.find(key);
  return it == defaults.end() ? "zeros" : it->second;  // biases, beta, moving_mean, alpha
}

thread_local WeightBudget* budget_in_scope = nullptr;

std::string bytes_text(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char text[64];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

}  // namespace

WeightBudget::WeightBudget(uint64_t bytes, std::string source, bool from_file)
    : left_(bytes), source_(std::move(source)), from_file_(from_file), outer_(budget_in_scope) {
  budget_in_scope = this;
}

WeightBudget::~WeightBudget() { budget_in_scope = outer_; }

WeightBudget* WeightBudget::current() { return budget_in_scope; }

void WeightBudget::take(const Dims& shape, DType dtype, const std::string& weight,
                        const std::string& where) {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t d : shape) {
    check(d >= 0, Status::invalid_argument, where, ": weight '", weight, "' has a negative dim");
    // Past 2^62 bytes nothing fits: the product stops growing there, without overflow.
    bytes = d != 0 && bytes > (uint64_t(1) << 62) / uint64_t(d) ? uint64_t(1) << 62
                                                                : bytes * uint64_t(d);
  }
  check(bytes <= left_, Status::invalid_argument, where, ": weight '", weight, "' of shape ",
        dims_str(shape), " needs ", bytes_text(bytes), ", more than ", source_, " leave for it (",
        bytes_text(left_), ")");
  left_ -= bytes;
}

uint64_t host_memory_bytes() {
  int64_t memory = device_info(Device::cpu, 0).memory;  // 0 where the host does not say
  return memory > 0 ? uint64_t(memory) : uint64_t(1) << 40;
}

std::set<std::string>& builtin_classes() {
  static std::set<std::string> names;
  return names;
}

LayerRegistrar::LayerRegistrar(const char* class_name, LayerFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[class_name] = std::move(factory);
  builtin_classes().insert(class_name);
}

bool is_layer_class(const std::string& class_name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry().count(class_name) > 0;
}

void register_layer_class(const std::string& class_name, LayerFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  check(!builtin_classes().count(class_name), Status::invalid_argument, "'", class_name,
        "' is a built-in Keras layer");
  registry()[class_name] = std::move(factory);
}

namespace {
// Keras' built-in layers that are not here, and why: the refusal says so instead of calling
// them custom.
const char* why_not_builtin(const std::string& class_name) {
  static const std::map<std::string, const char*> reasons = {
      {"StringLookup", "it looks strings up, and a model here computes on numbers"},
      {"TextVectorization", "it splits strings into tokens, and a model here computes on numbers"},
      {"Hashing", "its hash (FarmHash of each value's text) is not available"},
      {"HashedCrossing", "its hash (FarmHash of each value's text) is not available"},
      {"IntegerLookup", "its vocabulary lookup is not available"},
      {"TorchModuleWrapper", "it runs PyTorch code, which a model file here never runs"},
      {"JaxLayer", "it runs JAX code, which a model file here never runs"},
      {"FlaxLayer", "it runs Flax code, which a model file here never runs"},
  };
  auto it = reasons.find(class_name);
  return it == reasons.end() ? nullptr : it->second;
}
}  // namespace

std::shared_ptr<Layer> make_layer(const std::string& class_name, const Json& config) {
  std::string name = config.is_object() && config.contains("name") && config["name"].is_string()
                         ? config["name"].get<std::string>()
                         : std::string("?");
  LayerFactory factory;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(class_name);
    const char* why = it == registry().end() ? why_not_builtin(class_name) : nullptr;
    check(why == nullptr, Status::not_implemented, "layer '", name, "': Keras' ", class_name,
          " is not available: ", why);
    check(it != registry().end(), Status::not_implemented, "layer '", name, "': class '",
          class_name,
          "' is not a built-in Keras layer (a Lambda or custom layer: register it with "
          "kb_model_register_layer)");
    factory = it->second;
  }
  return factory(config);
}

Layer::Layer(std::string class_name, Json config)
    : class_name_(std::move(class_name)), config_(std::move(config)) {
  check(config_.is_object(), Status::invalid_argument, "a ", class_name_,
        " layer's config is not an object");
  where_ = "layer (" + class_name_ + ")";
  name_ = required_string(config_, "name", where_);
  where_ = "layer '" + name_ + "' (" + class_name_ + ")";
  trainable_ = bool_or(config_, "trainable", true, where_);
  DTypePolicy policy{Session::get().floatx(), Session::get().floatx()};
  if (config_.contains("dtype") && !config_["dtype"].is_null())
    policy = dtype_policy_of(config_["dtype"], where_);
  dtype_ = policy.variable;
  compute_dtype_ = policy.compute;
}

void Layer::build(const std::vector<Shape>&) {}

Applied Layer::apply(const Tensors& inputs, const Tensors& masks, const CallArguments& arguments) {
  std::vector<std::string> named = tensor_parameters();
  for (const auto& [key, value] : arguments.tensors)
    check(std::find(named.begin(), named.end(), key) != named.end(), Status::not_implemented,
          where_, ": called with a tensor as its argument '", key, "'");
  arguments_ = arguments;
  if (!built_) {
    std::vector<Shape> shapes;
    for (const auto& x : inputs) shapes.push_back(x->shape());
    {
      NameScope scope(name_);
      build(shapes);
    }
    built_ = true;
  }
  masks_ = masks;
  masks_.resize(inputs.size());
  Tensors out = converted_call(inputs);
  // Keras' activity_regularizer (ActivityRegularization's l1/l2): a loss term per output.
  Json activity = class_name_ == "ActivityRegularization"
                      ? Json{{"class_name", "L1L2"}, {"config", config_}}
                      : config_.value("activity_regularizer", Json());
  for (const auto& y : out)
    if (NodePtr term = regularization(activity, y, where_)) losses_.push_back(term);
  if (output_shapes_.empty())
    for (const auto& y : out) output_shapes_.push_back(y->shape());
  for (const auto& y : out) output_ids_.push_back(y->id);
  Tensors out_masks = compute_mask(inputs, out);
  out_masks.resize(out.size());
  return {out, out_masks};
}

namespace {

// Keras 3's conversion of a layer's inputs: floating ones to the dtype it computes in. Only
// where a 16-bit dtype is involved, as the layers of Keras 2 files, which had no conversion,
// were float32 or float64 throughout.
NodePtr converted(const NodePtr& x, DType to) {
  if (!x || !is_floating(x->dtype()) || x->dtype() == to) return x;
  if (!is_narrow_float(x->dtype()) && !is_narrow_float(to)) return x;
  return api::cast(x, to);
}

}  // namespace

Tensors Layer::converted_call(const Tensors& inputs) {
  DType to = autocast() ? compute_dtype_ : dtype_;
  Tensors in;
  for (const auto& x : inputs) in.push_back(converted(x, to));
  for (auto& [key, x] : arguments_.tensors) x = converted(x, to);
  Tensors out = call(in);
  if (compute_dtype_ != dtype_ && !autocast())
    for (auto& y : out) y = converted(y, compute_dtype_);
  return out;
}

bool Layer::masked() const {
  for (const auto& m : masks_)
    if (m) return true;
  return false;
}

Tensors Layer::compute_mask(const Tensors&, const Tensors& outputs) {
  // Keras 2.2.4's Layer.compute_mask: the input's mask passed on, where the layer supports
  // masking; a mask given to a layer that does not is an error (Keras 3 drops it there).
  if (rules_ == KerasRules::keras3 && !supports_masking()) return Tensors(outputs.size());
  check(supports_masking() || !masked(), Status::invalid_argument, where_,
        ": does not support masking, but its input is masked (Masking, Embedding mask_zero)");
  if (!supports_masking() || masks_.empty()) return Tensors(outputs.size());
  return Tensors(outputs.size(), masks_[0]);
}

const NodePtr& Layer::single(const Tensors& inputs) const {
  check(inputs.size() == 1, Status::invalid_argument, where_, ": takes one input, given ",
        inputs.size());
  return inputs[0];
}

NodePtr Layer::add_weight(const std::string& name, const Dims& shape, const char* initializer_key,
                          const char* regularizer_key, const char* constraint_key, bool trainable) {
  Json init = config_.contains(initializer_key) && !config_[initializer_key].is_null()
                  ? config_[initializer_key]
                  : Json(default_initializer(initializer_key));
  return add_weight_initialized(name, shape, init, regularizer_key, constraint_key, trainable);
}

NodePtr Layer::add_weight_initialized(const std::string& name, const Dims& shape,
                                      const Json& initializer, const char* regularizer_key,
                                      const char* constraint_key, bool trainable) {
  return attach_weight(name, first_value(name, shape, dtype_, initializer), regularizer_key,
                       constraint_key, trainable, dtype_);
}

NodePtr Layer::add_weight_of(const std::string& name, const Dims& shape, DType dtype,
                             const Json& initializer, bool trainable) {
  return attach_weight(name, first_value(name, shape, dtype, initializer), nullptr, nullptr,
                       trainable, dtype);
}

std::shared_ptr<Buffer> Layer::first_value(const std::string& name, const Dims& shape, DType dtype,
                                           const Json& initializer) const {
  WeightBudget* budget = WeightBudget::current();
  if (budget) budget->take(shape, dtype, name, where_);
  if (budget && budget->from_file()) {
    auto value = Buffer::make(dtype, shape);
    if (value->nbytes()) std::memset(value->data(), 0, value->nbytes());
    return value;
  }
  return initial_value(initializer, shape, dtype, where_);
}

NodePtr Layer::add_weight_value(const std::string& name, const std::shared_ptr<Buffer>& value,
                                const char* regularizer_key, const char* constraint_key,
                                bool trainable) {
  if (WeightBudget* budget = WeightBudget::current())
    budget->take(value->dims, dtype_, name, where_);
  return attach_weight(name, value, regularizer_key, constraint_key, trainable, dtype_);
}

NodePtr Layer::attach_weight(const std::string& name, const std::shared_ptr<Buffer>& value,
                             const char* regularizer_key, const char* constraint_key,
                             bool trainable, DType dtype) {
  std::string var_name = Session::get().unique_name(name);
  NodePtr v = api::variable(value, dtype, var_name);
  Json constraint =
      constraint_key && config_.contains(constraint_key) ? config_[constraint_key] : Json();
  weights_.push_back({var_name, v, trainable && trainable_, constraint, name});
  if (regularizer_key && config_.contains(regularizer_key))
    if (NodePtr term = regularization(config_[regularizer_key], v, where_)) losses_.push_back(term);
  // Keras 3's autocast: under a mixed policy the layer reads its trainable floating weights as
  // its compute dtype (the Cast's gradient reaches the float32 variable). The others (moving
  // statistics, the vectors a layer assigns) stay the variables its updates write.
  if (compute_dtype_ != dtype_ && autocast() && trainable && is_floating(dtype) &&
      dtype != compute_dtype_)
    return api::cast(v, compute_dtype_);
  return v;
}

void Layer::adopt(const Layer& inner) {
  for (const auto& w : inner.weights_) {
    Weight mine = w;
    mine.trainable = w.trainable && trainable_;
    weights_.push_back(mine);
  }
  losses_.insert(losses_.end(), inner.losses_.begin(), inner.losses_.end());
  updates_.insert(updates_.end(), inner.updates_.begin(), inner.updates_.end());
  state_updates_.insert(state_updates_.end(), inner.state_updates_.begin(),
                        inner.state_updates_.end());
}

NodePtr Layer::keras3_saved_value(size_t i) const { return weights().at(i).variable; }

std::vector<Weight> Layer::weights() const {
  if (weights_as_added_) return weights_;
  std::vector<Weight> out;
  for (const auto& w : weights_)
    if (w.trainable) out.push_back(w);
  for (const auto& w : weights_)
    if (!w.trainable) out.push_back(w);
  return out;
}

void Layer::set_weights(const std::vector<std::shared_ptr<Buffer>>& values) const {
  auto ws = weights();
  check(values.size() == ws.size(), Status::invalid_argument, values.size(), " values for ", where_,
        " of ", ws.size(), " weights");
  for (size_t i = 0; i < ws.size(); ++i)
    check(values[i]->dims == ws[i].variable->shape().dims, Status::shape, "value ", i,
          " has shape ", dims_str(values[i]->dims), ", weight '", ws[i].name, "' ",
          dims_str(ws[i].variable->shape().dims));
  for (size_t i = 0; i < ws.size(); ++i)
    api::set_value(ws[i].variable, convert_buffer(values[i], ws[i].variable->dtype()));
}

std::vector<NodePtr> Layer::trainable_variables() const {
  std::vector<NodePtr> out;
  for (const auto& w : weights_)
    if (w.trainable) out.push_back(w.variable);
  return out;
}

}  // namespace kb::model
