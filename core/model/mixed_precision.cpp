#include "core/model/mixed_precision.h"

#include "core/model/layer.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// Gives `policy` to every layer config below `value` whose variables are float32: an object
// whose class_name is a layer's (built in or registered) with a config, InputLayer aside.
void give_policy(Json& value, const Json& policy, size_t depth) {
  check(depth < 256, Status::invalid_argument, "with_dtype_policy: the config nests too deeply");
  if (value.is_array()) {
    for (Json& v : value) give_policy(v, policy, depth + 1);
    return;
  }
  if (!value.is_object()) return;
  if (value.contains("class_name") && value["class_name"].is_string() && value.contains("config") &&
      value["config"].is_object()) {
    Json& c = value["config"];
    std::string cls = value["class_name"].get<std::string>();
    if (cls != "InputLayer" && is_layer_class(cls)) {
      const std::string where = "with_dtype_policy: layer " + c.value("name", Json(cls)).dump();
      bool float32 = !c.contains("dtype") || c["dtype"].is_null() ||
                     dtype_policy_of(c["dtype"], where).variable == DType::f32;
      if (float32) c["dtype"] = policy;
    }
  }
  for (auto& [key, v] : value.items())
    if (key != "dtype") give_policy(v, policy, depth + 1);
}

}  // namespace

std::shared_ptr<Model> with_dtype_policy(const Model& model, const std::string& policy) {
  DTypePolicy p = dtype_policy_of(Json(policy), "with_dtype_policy");
  check(p.variable == DType::f32, Status::invalid_argument, "with_dtype_policy: '", policy,
        "' does not keep float32 variables (the model's weights)");
  // Keras 3's form, which Keras 2's loaders here read as well.
  Json named = {{"module", "keras"},
                {"class_name", "DTypePolicy"},
                {"config", {{"name", policy}}},
                {"registered_name", nullptr}};
  Json config = model.config();
  give_policy(config, named, 0);
  std::shared_ptr<Model> copy;
  {
    KerasRulesScope rules(model.rules());
    // Zeros rather than the initializers' draws: every weight is then set from the model's.
    WeightBudget budget(host_memory_bytes(), "this host's memory", true);
    copy = Model::from_config(config);
  }
  const auto& from = model.layers();
  const auto& to = copy->layers();
  check(from.size() == to.size(), Status::internal, "with_dtype_policy: ", to.size(),
        " layers rebuilt for ", from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    std::vector<std::shared_ptr<Buffer>> values;
    for (const auto& w : from[i]->weights()) values.push_back(w.variable->value);
    to[i]->set_weights(values);
  }
  // Saved, it is a model from a config (an archive's origin names the first model's variables).
  copy->set_keras_version(model.keras_version());
  return copy;
}

}  // namespace kb::model
