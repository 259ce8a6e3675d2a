#include <algorithm>

#include "core/model/callbacks/callback.h"
#include "core/model/option_sets.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

struct Maker {
  const char* class_name;
  std::shared_ptr<Callback> (*make)(const Json&, const std::string&);
};

// Every class api/kbackend.toml's [callbacks] describes, and nothing else.
constexpr Maker kMakers[] = {
    {"EarlyStopping", make_early_stopping},
    {"ModelCheckpoint", make_model_checkpoint},
    {"ReduceLROnPlateau", make_reduce_lr_on_plateau},
    {"CSVLogger", make_csv_logger},
    {"BackupAndRestore", make_backup_and_restore},
    {"TerminateOnNaN", make_terminate_on_nan},
    {"TensorBoard", make_tensorboard},
};

}  // namespace

Callbacks make_callbacks(const Json& list, const std::string& where) {
  Callbacks out;
  if (list.is_null()) return out;
  check(list.is_array(), Status::invalid_argument, where, ": callbacks is not a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& spec = list[i];
    std::string at = where + ": callbacks[" + std::to_string(i) + "]";
    check(spec.is_object(), Status::invalid_argument, at, " is not a {class_name, config} object");
    std::string name = required_string(spec, "class_name", at);
    for (auto it = spec.begin(); it != spec.end(); ++it)
      check(it.key() == "class_name" || it.key() == "config", Status::invalid_argument, at,
            ": unknown key '", it.key(), "' (a callback is {class_name, config})");
    const Maker* maker = std::find_if(std::begin(kMakers), std::end(kMakers),
                                      [&](const Maker& m) { return name == m.class_name; });
    const OptionSet* set = callback_option_set(name);
    if (maker == std::end(kMakers) || set == nullptr) {
      std::string known;
      for (const Maker& m : kMakers)
        known += (known.empty() ? "" : ", ") + std::string(m.class_name);
      fail(Status::invalid_argument, at, ": no callback class '", name, "' (fit runs ", known, ")");
    }
    at += " (" + name + ")";
    Json config =
        spec.contains("config") && !spec["config"].is_null() ? spec["config"] : Json::object();
    check_options(config, *set, at);
    for (const auto& k : set->keys)
      check(k.fallback != nullptr || k.type == OptionType::number ||
                (config.contains(k.name) && !config[k.name].is_null()),
            Status::invalid_argument, at, ": ", k.name, " is required");
    out.push_back(maker->make(with_defaults(config, *set), at));
  }
  return out;
}

}  // namespace kb::model
