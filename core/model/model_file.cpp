#include "core/model/model_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "core/api/api.h"
#include "core/compile/function.h"
#include "core/model/hdf5_file.h"
#include "core/model/losses.h"
#include "core/model/optimizers.h"
#include "core/model/saving/file_errors.h"
#include "core/model/saving/keras3_config.h"
#include "core/model/saving/keras3_file.h"
#include "core/model/saving/zip_archive.h"
#include "core/model/training.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

const char* kKerasVersion = "2.2.4";
const char* kBackend = "tensorflow";  // TensorFlow's conventions (kernel layouts), as Keras reads

// A missing file is not_found (each language's file-not-found error), any other failure io.
void check_readable(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int e = errno;
    check(e != ENOENT && e != ENOTDIR, Status::not_found, path, ": no such file");
    fail(Status::io, path, ": cannot be read (", std::strerror(e), ")");
  }
  std::fclose(f);
}

// The size of a readable file in bytes.
uint64_t file_size(const std::string& path) {
  struct stat st;
  check(::stat(path.c_str(), &st) == 0, Status::io, path, ": its size cannot be read");
  return uint64_t(st.st_size);
}

// A weight's value, its shape compared with the variable's before the file's values are read.
std::shared_ptr<Buffer> fitted(const Hdf5Group& g, const std::string& name, const Weight& w) {
  const NodePtr& v = w.variable;
  Dims dims = g.dataset_dims(name);
  check(dims == v->shape().dims, Status::shape, g.where(), ": weight '", name, "' has shape ",
        dims_str(dims), " in the file, the layer needs ", dims_str(v->shape().dims));
  return convert_buffer(g.read_dataset(name), v->dtype());
}

// The layer groups of a weights group with weights in them, in the file's order.
std::vector<std::string> layers_with_weights(const Hdf5Group& g) {
  std::vector<std::string> out;
  for (const auto& name : g.strings_attr("layer_names"))
    if (!g.group(name).strings_attr("weight_names").empty()) out.push_back(name);
  return out;
}

// Reads every value first and assigns only when all fit, so a bad file changes nothing.
void load_weights_group(Model& model, const Hdf5Group& g, bool by_name) {
  std::vector<std::pair<NodePtr, std::shared_ptr<Buffer>>> assign;
  auto pair_up = [&](const Layer& layer, const Hdf5Group& lg) {
    auto names = lg.strings_attr("weight_names");
    auto weights = layer.weights();
    check(names.size() == weights.size(), Status::invalid_argument, lg.where(), ": ", names.size(),
          " weights in the file, ", layer.where(), " has ", weights.size());
    for (size_t i = 0; i < names.size(); ++i)
      assign.emplace_back(weights[i].variable, fitted(lg, names[i], weights[i]));
  };
  if (by_name) {
    for (const auto& name : g.strings_attr("layer_names"))
      if (auto layer = model.layer(name)) pair_up(*layer, g.group(name));
  } else {
    std::vector<std::shared_ptr<Layer>> layers;
    for (const auto& l : model.layers())
      if (!l->weights().empty()) layers.push_back(l);
    auto names = layers_with_weights(g);
    check(names.size() == layers.size(), Status::invalid_argument, g.where(), ": a weight file of ",
          names.size(), " layers with weights for a model of ", layers.size());
    for (size_t k = 0; k < names.size(); ++k) pair_up(*layers[k], g.group(names[k]));
  }
  for (auto& [var, value] : assign) api::set_value(var, value);
}

// Keras' names are unique within a group: a repeated one gets _1, _2... as Keras does.
std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    std::string u = n;
    for (int i = 1; std::find(out.begin(), out.end(), u) != out.end(); ++i)
      u = n + "_" + std::to_string(i);
    out.push_back(u);
  }
  return out;
}

void save_weights_group(Model& model, const Hdf5Group& g) {
  std::vector<std::string> layer_names;
  for (const auto& l : model.layers()) layer_names.push_back(l->name());
  g.set_strings_attr("layer_names", layer_names);
  g.set_string_attr("backend", kBackend);
  g.set_string_attr("keras_version", kKerasVersion);
  for (const auto& l : model.layers()) {
    Hdf5Group lg = g.create_group(l->name());
    std::vector<std::string> names;
    for (const auto& w : l->weights()) names.push_back(w.name);
    names = unique_names(names);
    lg.set_strings_attr("weight_names", names);
    auto weights = l->weights();
    for (size_t i = 0; i < weights.size(); ++i)
      lg.write_dataset(names[i], *evaluate(weights[i].variable));
  }
}

// A loss or metric as a name: a string, or tf.keras' {"class_name", "config": {"name", "fn"}}.
std::string score_name(const Json& v, const char* what) {
  if (v.is_string()) return v.get<std::string>();
  check(v.is_object(), Status::invalid_argument, "training_config: a ", what,
        " that is neither a name nor {class_name, config}");
  const Json& c = v.contains("config") ? v["config"] : Json::object();
  check(number_or(c, "label_smoothing", 0, "training_config") == 0, Status::not_implemented,
        "training_config: a ", what, " with label_smoothing");
  if (bool_or(c, "from_logits", false, "training_config")) {
    // A crossentropy of logits: its own row of the losses' table (losses.h).
    std::string base =
        loss_by_name(required_string(v, "class_name", "training_config"), "training_config").name;
    check(base.find("crossentropy") != std::string::npos, Status::not_implemented,
          "training_config: a ", what, " '", base, "' from logits");
    return of_logits(base);
  }
  if (c.is_object() && c.contains("name") && c["name"].is_string()) {
    std::string name = c["name"].get<std::string>();
    if (name == "accuracy" || name == "acc" || !c.contains("fn")) return name;
  }
  if (c.is_object() && c.contains("fn") && c["fn"].is_string()) return c["fn"].get<std::string>();
  return required_string(v, "class_name", "training_config");
}

std::vector<std::string> string_list(const Json& v, const std::vector<std::string>& outputs,
                                     const char* what) {
  std::vector<std::string> out;
  if (v.is_string() || (v.is_object() && v.contains("class_name"))) return {score_name(v, what)};
  if (v.is_array()) {
    for (const auto& s : v) {
      if (s.is_array()) {  // tf.keras: a list per output
        for (auto& inner : string_list(s, outputs, what)) out.push_back(inner);
        continue;
      }
      out.push_back(score_name(s, what));
    }
    return out;
  }
  if (v.is_object()) {  // {output name: loss}
    for (const auto& o : outputs) {
      check(v.contains(o), Status::invalid_argument, "training_config: no ", what, " for output '",
            o, "'");
      out.push_back(score_name(v[o], what));
    }
    return out;
  }
  check(v.is_null(), Status::invalid_argument, "training_config: ", what, " of an unknown form");
  return out;
}

// tf.keras 2.11+ saves "iteration" then each variable's slots ("Adam/m/dense/kernel:0",
// "Adam/v/dense/kernel:0", ...). Keras 2.2.4 keeps the iterations (where it keeps them) then
// each kind of slot for all variables: the names in that order, the iteration set apart.
std::vector<std::string> tf_keras_state_order(const std::vector<std::string>& names,
                                              Optimizer& optimizer, const Hdf5Group& g) {
  api::set_value(optimizer.iterations(),
                 convert_buffer(g.read_dataset(names[0]), optimizer.iterations()->dtype()));
  std::vector<std::string> kinds;
  std::map<std::string, std::vector<std::string>> by_kind;
  for (size_t i = 1; i < names.size(); ++i) {
    // "<Optimizer>/<kind>/<variable>"
    size_t a = names[i].find('/'), b = a == std::string::npos ? a : names[i].find('/', a + 1);
    std::string kind = b == std::string::npos ? "?" : names[i].substr(a + 1, b - a - 1);
    if (!by_kind.count(kind)) kinds.push_back(kind);
    by_kind[kind].push_back(names[i]);
  }
  std::vector<std::string> out;
  const auto& weights = optimizer.weights();
  if (!weights.empty() && weights[0] == optimizer.iterations()) out.push_back(names[0]);
  for (const auto& k : kinds)
    for (auto& n : by_kind[k]) out.push_back(n);
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Sets the optimizer's state from a file's optimizer_weights (Keras 2.2.4's order, tf.keras',
// or Keras 3's: iteration, learning_rate, then its slots as in an archive; `params` is the
// number of trained variables, which Keras 3's order needs).
void restore_optimizer_state(Optimizer& optimizer, const Hdf5Group& g, size_t params,
                             const std::string& path) {
  const auto& slots = optimizer.weights();
  auto names = g.strings_attr("weight_names");
  std::vector<NodePtr> targets;
  if (!names.empty() && ends_with(names[0], "/iteration")) {
    if (auto t = keras3_state_targets(optimizer, params, names.size(), true)) targets = *t;
  } else {
    bool tf_keras = !names.empty() && names[0].rfind("iteration:", 0) == 0;
    if (tf_keras) names = tf_keras_state_order(names, optimizer, g);
    // tf.keras' Adam keeps no vhat without amsgrad, where Keras 2.2.4 keeps a zero per variable.
    if (tf_keras ? names.size() <= slots.size() : names.size() == slots.size())
      targets.assign(slots.begin(), slots.begin() + long(names.size()));
  }
  restore_optimizer_values(g, names, targets, path);
}

}  // namespace

void restore_optimizer_values(const Hdf5Group& g, const std::vector<std::string>& names,
                              const std::vector<NodePtr>& targets, const std::string& path) {
  bool fits = targets.size() == names.size();
  std::vector<std::shared_ptr<Buffer>> values;
  for (size_t i = 0; i < names.size() && fits; ++i) {
    if (!targets[i]) {
      values.push_back(nullptr);
      continue;
    }
    fits = g.dataset_dims(names[i]) == targets[i]->shape().dims;
    if (fits) values.push_back(g.read_dataset(names[i]));
  }
  if (!fits) {
    std::fprintf(stderr,
                 "%s: the saved optimizer state does not fit the optimizer; it starts afresh\n",
                 path.c_str());
    return;
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (targets[i]) api::set_value(targets[i], convert_buffer(values[i], targets[i]->dtype()));
}

void compile_from_config(Model& model, const Json& tc) {
  check(tc.is_object(), Status::invalid_argument, "training_config: not an object");
  auto losses = string_list(required(tc, "loss", "training_config"), model.output_names(), "loss");
  std::vector<std::string> metrics;
  if (tc.contains("metrics") && tc["metrics"].is_object()) {
    // {output: [metrics]}: the metrics of the first output stand for all here.
    for (const auto& [k, v] : tc["metrics"].items())
      for (auto& m : string_list(v, model.output_names(), "metric")) metrics.push_back(m);
  } else if (tc.contains("metrics")) {
    metrics = string_list(tc["metrics"], model.output_names(), "metric");
  }
  std::vector<double> loss_weights;
  if (tc.contains("loss_weights") && tc["loss_weights"].is_array()) {
    for (const auto& w : tc["loss_weights"]) {
      check(w.is_number(), Status::invalid_argument,
            "training_config: a loss weight is not a number");
      loss_weights.push_back(w.get<double>());
    }
  } else if (tc.contains("loss_weights") && tc["loss_weights"].is_object()) {
    // {output name: weight}: an output left out weighs 1, as in Keras.
    const Json& by_name = tc["loss_weights"];
    for (const auto& [k, w] : by_name.items()) {
      const auto& names = model.output_names();
      check(std::find(names.begin(), names.end(), k) != names.end(), Status::invalid_argument,
            "training_config: loss_weights names '", k, "', which is not an output");
      check(w.is_number(), Status::invalid_argument, "training_config: the loss weight of '", k,
            "' is not a number");
    }
    for (const auto& name : model.output_names())
      loss_weights.push_back(by_name.contains(name) ? by_name[name].get<double>() : 1.0);
  }
  model.set_training(std::make_unique<Training>(model,
                                                required(tc, "optimizer_config", "training_config"),
                                                Json(), losses, metrics, loss_weights));
}

std::shared_ptr<Model> load_model(const std::string& path, bool compile) {
  return naming_file(path, [&] {
    check_readable(path);
    // Keras 3's archive by its content, whatever the file is called (as Keras' load_model).
    if (is_zip_file(path)) return load_keras_archive(path, compile);
    Hdf5Group f = Hdf5File::open_read(path);
    check(f.has_attr("model_config"), Status::invalid_argument, path,
          ": no model_config (a weights-only file? load it with load_weights)");
    Json config = parse_json(f.string_attr("model_config"), path + ": model_config");
    // Keras 3 writes HDF5 files too (and so does the library for a model that trains by Keras
    // 3's rules): a model from one trains by them.
    std::string version = f.has_attr("keras_version") ? f.string_attr("keras_version") : "";
    KerasRules by_version = keras_rules_of_version(version);
    bool keras3 = by_version == KerasRules::keras3;
    KerasRulesScope rules(by_version);
    // Keras 3 writes its HDF5 files' configs in its own form (functional nodes as arguments).
    if (keras3) config = model_config_of_keras3(config, path + ": model_config");
    std::shared_ptr<Model> model;
    {
      WeightBudget budget(WeightBudget::of_file(file_size(path)), "the file's weights", true);
      model = Model::from_config(config);
    }
    model->set_keras_version(version);
    // Keras 2.2 keeps the weights under model_weights; a file of weights alone at the root.
    load_weights_group(*model, f.has_group("model_weights") ? f.group("model_weights") : f, false);
    if (compile && f.has_attr("training_config")) {
      compile_from_config(*model,
                          parse_json(f.string_attr("training_config"), path + ": training_config"));
      if (f.has_group("optimizer_weights"))
        restore_optimizer_state(model->training()->optimizer(), f.group("optimizer_weights"),
                                model->trainable_variables().size(), path);
    }
    return model;
  });
}

void save_model(Model& model, const std::string& path, bool include_optimizer) {
  // Keras 3's archive by the extension, as Keras' model.save picks it.
  const std::string ext = ".keras";
  if (path.size() > ext.size() && ends_with(path, ext))
    return save_keras_archive(model, path, include_optimizer);
  Hdf5Group f = Hdf5File::create(path);
  // The Keras whose rules the model trains by: its file's, for a model of Keras 3's or
  // tf.keras' rules.
  const std::string& from = model.keras_version();
  std::string version = kKerasVersion;
  if (model.rules() != KerasRules::keras2 && keras_rules_of_version(from) == model.rules())
    version = from;
  f.set_string_attr("keras_version", version);
  f.set_string_attr("backend", kBackend);
  f.set_string_attr("model_config", model.config().dump());
  save_weights_group(model, f.create_group("model_weights"));
  Training* t = model.training();
  if (include_optimizer && t) {
    f.set_string_attr("training_config", t->config().dump());
    const auto& slots = t->optimizer().weights();
    Hdf5Group g = f.create_group("optimizer_weights");
    std::vector<std::string> names;
    for (const auto& v : slots) names.push_back(v->name);
    names = unique_names(names);
    g.set_strings_attr("weight_names", names);
    for (size_t i = 0; i < slots.size(); ++i) g.write_dataset(names[i], *evaluate(slots[i]));
  }
}

void load_weights(Model& model, const std::string& path, bool by_name) {
  naming_file(path, [&] {
    check_readable(path);
    Hdf5Group f = Hdf5File::open_read(path);
    // Keras 3's .weights.h5 (no layer_names: its layers group, as in an archive).
    if (!f.has_attr("layer_names") && !f.has_group("model_weights"))
      return load_keras3_weights(model, f, path);
    load_weights_group(model, f.has_group("model_weights") ? f.group("model_weights") : f, by_name);
  });
}

void save_weights(Model& model, const std::string& path) {
  // Keras 3's layout by the extension Keras 3 requires for it.
  if (ends_with(path, ".weights.h5")) return save_keras3_weights(model, path);
  Hdf5Group f = Hdf5File::create(path);
  save_weights_group(model, f);
}

}  // namespace kb::model
