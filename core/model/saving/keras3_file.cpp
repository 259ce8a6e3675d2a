#include "core/model/saving/keras3_file.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/api/api.h"
#include "core/compile/function.h"
#include "core/model/hdf5_file.h"
#include "core/model/keras_rules.h"
#include "core/model/model_file.h"
#include "core/model/optimizers.h"
#include "core/model/saving/keras3_config.h"
#include "core/model/saving/zip_archive.h"
#include "core/model/training.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// What an archive's entries may hold before they are read: the JSON entries are small; the
// weights are bounded by what a host could hold.
constexpr uint64_t kMaxJsonBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxWeightsBytes = uint64_t(64) << 30;

// Keras' naming for a list of saveables: the first of a kind keeps its name, later ones get _1,
// _2, ... (saving_lib._get_unique_name).
std::string unique_name(const std::string& name, std::map<std::string, int>& used) {
  auto it = used.find(name);
  if (it == used.end()) {
    used[name] = 0;
    return name;
  }
  return name + "_" + std::to_string(++it->second);
}

// Keras' order of a saveable's children: attribute names sorted, private ones (a leading _)
// after the others (saving_lib._name_key).
bool before(const std::string& a, const std::string& b) {
  bool pa = !a.empty() && a[0] == '_', pb = !b.empty() && b[0] == '_';
  return pa != pb ? pb : a < b;
}

// The variables `g` holds for one saveable, in Keras 3's order: its own (vars/0, vars/1, ...),
// then each child's, children in Keras' order (an LSTM's cell, a wrapper's layer).
void collect_variables(const Hdf5Group& g, std::vector<std::shared_ptr<Buffer>>& out, int depth) {
  check(depth < 32, Status::invalid_argument, g.where(), ": nested too deeply");
  if (g.has_group("vars")) {
    Hdf5Group vars = g.group("vars");
    size_t n = vars.members().size();
    for (size_t i = 0; i < n; ++i) {
      check(vars.has(std::to_string(i)), Status::invalid_argument, vars.where(), ": variable ", i,
            " of ", n, " is missing");
      out.push_back(vars.read_dataset(std::to_string(i)));
    }
  }
  std::vector<std::string> children;
  for (const auto& m : g.members())
    if (m != "vars" && g.has_group(m)) children.push_back(m);
  std::sort(children.begin(), children.end(), before);
  for (const auto& c : children) collect_variables(g.group(c), out, depth + 1);
}

// Each layer's weights from `layers` (the group of model.layers, named by class as Keras 3
// names them); a nested model's from its own layers group.
void load_layers(const std::vector<std::shared_ptr<Layer>>& layers, const Hdf5Group& group,
                 int depth) {
  check(depth < 32, Status::invalid_argument, group.where(), ": models nested too deeply");
  std::map<std::string, int> used;
  for (const auto& layer : layers) {
    std::string name = unique_name(keras_snake_case(layer->class_name()), used);
    bool present = group.has_group(name);
    if (const Model* nested = layer->nested_model()) {
      check(present && group.group(name).has_group("layers"), Status::invalid_argument,
            group.where(), ": no weights for ", layer->where(), " (", name, "/layers)");
      load_layers(nested->layers(), group.group(name).group("layers"), depth + 1);
      continue;
    }
    std::vector<std::shared_ptr<Buffer>> values;
    if (present) collect_variables(group.group(name), values, 0);
    size_t want = layer->weights().size();
    check(values.size() == want, Status::invalid_argument, group.where(), "/", name, ": ",
          values.size(), " variables for ", layer->where(), ", which has ", want, " weights");
    if (want) layer->set_weights(values);
  }
}

// The slot kinds of a Keras 3 optimizer as its build() makes them: each inner list one call of
// add_optimizer_variables, which interleaves its kinds variable by variable.
std::vector<std::vector<std::string>> keras3_slot_groups(const Json& optimizer) {
  std::string cls = optimizer.value("class_name", "");
  const Json empty = Json::object();
  const Json& c = optimizer.contains("config") ? optimizer["config"] : empty;
  auto number = [&](const char* key) {
    return c.contains(key) && c[key].is_number() ? c[key].get<double>() : 0.0;
  };
  auto flag = [&](const char* key) { return c.contains(key) && c[key].is_boolean() && c[key]; };
  if (cls == "SGD")
    return number("momentum") != 0 ? std::vector<std::vector<std::string>>{{"momentum"}}
                                   : std::vector<std::vector<std::string>>{};
  if (cls == "Adam") {
    std::vector<std::vector<std::string>> g = {{"momentum", "velocity"}};
    if (flag("amsgrad")) g.push_back({"velocity_hat"});
    return g;
  }
  if (cls == "RMSprop") {
    std::vector<std::vector<std::string>> g = {{"velocity"}};
    if (number("momentum") > 0) g.push_back({"momentum"});
    if (flag("centered")) g.push_back({"average_gradient"});
    return g;
  }
  if (cls == "Adagrad") return {{"accumulator"}};
  if (cls == "Adadelta") return {{"accumulated_grad", "accumulated_delta_var"}};
  if (cls == "Adamax") return {{"m", "u"}};
  return {};
}

// The optimizer's state from optimizer/vars (iterations, the learning rate, then the slots in
// the order keras3_slot_groups says), in Keras 2.2.4's order (iterations, then each kind for
// every variable). A state that does not fit leaves the optimizer fresh, with a warning, as
// Keras does.
void restore_keras3_optimizer(Optimizer& optimizer, const Json& spec, const Hdf5Group& g,
                              size_t params, const std::string& path) {
  std::vector<std::shared_ptr<Buffer>> values;
  size_t n = g.members().size();
  for (size_t i = 0; i < n; ++i) {
    check(g.has(std::to_string(i)), Status::invalid_argument, g.where(), ": variable ", i, " of ",
          n, " is missing");
    values.push_back(g.read_dataset(std::to_string(i)));
  }
  std::vector<std::vector<std::string>> groups = keras3_slot_groups(spec);
  size_t kinds = 0;
  for (const auto& gr : groups) kinds += gr.size();
  const auto& ours = optimizer.weights();
  size_t first_slot = !ours.empty() && ours[0] == optimizer.iterations() ? 1 : 0;
  bool fits = n >= 2 && n == 2 + kinds * params && first_slot + kinds * params <= ours.size();
  // Keras 2.2.4's order: kind k of parameter j at first_slot + k * params + j.
  std::vector<std::pair<NodePtr, std::shared_ptr<Buffer>>> sets;
  size_t at = 2, kind_base = 0;
  for (size_t gi = 0; gi < groups.size() && fits; ++gi) {
    size_t width = groups[gi].size();
    for (size_t j = 0; j < params && fits; ++j)
      for (size_t k = 0; k < width && fits; ++k) {
        const NodePtr& slot = ours[first_slot + (kind_base + k) * params + j];
        const auto& v = values[at++];
        fits = v->dims == slot->shape().dims;
        sets.emplace_back(slot, v);
      }
    kind_base += width;
  }
  if (!fits) {
    std::fprintf(stderr,
                 "%s: the saved optimizer state does not fit the optimizer; it starts afresh\n",
                 path.c_str());
    return;
  }
  api::set_value(optimizer.iterations(),
                 convert_buffer(values[0], optimizer.iterations()->dtype()));
  for (auto& [slot, v] : sets) api::set_value(slot, convert_buffer(v, slot->dtype()));
}

}  // namespace

std::shared_ptr<Model> load_keras_archive(const std::string& path, bool compile) {
  KerasRulesScope rules(KerasRules::keras3);
  ZipReader zip(path);
  for (const char* entry : {"config.json", "model.weights.h5"})
    check(zip.has(entry), Status::invalid_argument, path, ": a .keras archive without ", entry);
  Json serialized = parse_json(zip.read("config.json", kMaxJsonBytes), path + ":config.json");
  auto model = Model::from_config(model_config_of_keras3(serialized, path + ":config.json"));
  std::string weights = zip.read("model.weights.h5", kMaxWeightsBytes);
  Hdf5Group root = Hdf5File::open_image(weights, path + ":model.weights.h5");
  weights.clear();
  weights.shrink_to_fit();
  if (root.has_group("layers")) {
    load_layers(model->layers(), root.group("layers"), 0);
  } else {
    for (const auto& l : model->layers())
      check(l->weights().empty(), Status::invalid_argument, root.where(), ": no layers group, but ",
            l->where(), " has weights");
  }
  if (compile && serialized.contains("compile_config") &&
      serialized["compile_config"].is_object()) {
    const Json& cc = serialized["compile_config"];
    compile_from_config(*model, training_config_of_keras3(cc, path + ":compile_config"));
    if (root.has_group("optimizer") && root.group("optimizer").has_group("vars")) {
      size_t params = model->trainable_variables().size();
      restore_keras3_optimizer(model->training()->optimizer(), cc["optimizer"],
                               root.group("optimizer").group("vars"), params, path);
    }
  }
  return model;
}

}  // namespace kb::model
