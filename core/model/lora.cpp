#include "core/model/lora.h"

#include "core/api/api.h"
#include "core/model/graph_math.h"
#include "core/util/error.h"

namespace kb::model {

Lora Lora::of(const Json& config, const char* constraint_key, const std::string& where) {
  Lora l;
  if (!config.contains("lora_rank") || config["lora_rank"].is_null()) return l;
  l.rank = int_or(config, "lora_rank", 0, where);
  check(l.rank >= 0 && l.rank <= (int64_t(1) << 20), Status::invalid_argument, where,
        ": lora_rank must be a positive integer");
  if (l.rank == 0) return l;
  l.alpha = number_or(config, "lora_alpha", double(l.rank), where);
  check(!config.contains(constraint_key) || config[constraint_key].is_null(),
        Status::invalid_argument, where, ": LoRA (lora_rank) excludes ", constraint_key,
        ", as in Keras");
  return l;
}

Json Lora::a_initializer() {
  return {{"class_name", "HeUniform"}, {"config", {{"seed", nullptr}}}};
}
Json Lora::b_initializer() { return {{"class_name", "Zeros"}, {"config", Json::object()}}; }

NodePtr Lora::merged(const NodePtr& kernel) const {
  if (!enabled()) return kernel;
  NodePtr delta = api::dot(a, b);
  return plus(kernel, times(number(delta, alpha / double(rank)), delta));
}

std::vector<std::string> Lora::keras3_paths(bool bias) const {
  if (!enabled()) return {};
  if (bias) return {"vars/0", "vars/1", "", ""};
  return {"vars/0", "", ""};
}

}  // namespace kb::model
