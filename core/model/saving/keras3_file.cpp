#include "core/model/saving/keras3_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

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

// What model.weights.h5 may hold for `model`: each weight with as many optimizer slots as a
// Keras 3 optimizer keeps (Adam's amsgrad and Adafactor three, an average with use_ema one
// more), and HDF5's own bytes for each dataset and its groups. An entry that declares more is
// refused before it is inflated.
uint64_t weights_entry_bound(const Model& model) {
  constexpr uint64_t copies = 5, per_dataset = 8 << 10;
  uint64_t bound = uint64_t(1) << 20;
  for (const auto& layer : model.layers())
    for (const Weight& w : layer->weights()) {
      uint64_t bytes = dtype_size(w.variable->dtype()) * uint64_t(numel(w.variable->shape().dims));
      bound += copies * (bytes + per_dataset);
    }
  return bound;
}

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

// The datasets 0, 1, ..., n-1 of a group of n (a saveable's vars, the optimizer's), checked
// present; nothing is read yet.
size_t numbered_datasets(const Hdf5Group& g) {
  size_t n = g.members().size();
  for (size_t i = 0; i < n; ++i)
    check(g.has(std::to_string(i)), Status::invalid_argument, g.where(), ": variable ", i, " of ",
          n, " is missing");
  return n;
}

// A variable of the weights file: its group, its name there and its path from the root.
struct StoredVariable {
  Hdf5Group group;
  std::string name, path;
};

// The variables `g` (at `path` in the file) holds for one saveable, in Keras 3's order: its
// own (vars/0, vars/1, ...), then each child's, children in Keras' order (an LSTM's cell, a
// wrapper's layer).
void collect_variables(const Hdf5Group& g, const std::string& path,
                       std::vector<StoredVariable>& out, int depth) {
  check(depth < 32, Status::invalid_argument, g.where(), ": nested too deeply");
  if (g.has_group("vars")) {
    Hdf5Group vars = g.group("vars");
    size_t n = numbered_datasets(vars);
    for (size_t i = 0; i < n; ++i)
      out.push_back({vars, std::to_string(i), path + "/vars/" + std::to_string(i)});
  }
  std::vector<std::string> children;
  for (const auto& m : g.members())
    if (m != "vars" && g.has_group(m)) children.push_back(m);
  std::sort(children.begin(), children.end(), before);
  for (const auto& c : children) collect_variables(g.group(c), path + "/" + c, out, depth + 1);
}

// Each layer's weights from `layers` (the group at `path` of model.layers, named by class as
// Keras 3 names them); a nested model's from its own layers group. Each variable's shape is
// compared with its weight's before its values are read. Records where each lies.
void load_layers(const std::vector<std::shared_ptr<Layer>>& layers, const Hdf5Group& group,
                 const std::string& path, Keras3Origin& origin, int depth) {
  check(depth < 32, Status::invalid_argument, group.where(), ": models nested too deeply");
  std::map<std::string, int> used;
  for (const auto& layer : layers) {
    std::string name = unique_name(keras_snake_case(layer->class_name()), used);
    bool present = group.has_group(name);
    if (const Model* nested = layer->nested_model()) {
      check(present && group.group(name).has_group("layers"), Status::invalid_argument,
            group.where(), ": no weights for ", layer->where(), " (", name, "/layers)");
      load_layers(nested->layers(), group.group(name).group("layers"),
                  path + "/" + name + "/layers", origin, depth + 1);
      continue;
    }
    std::vector<StoredVariable> stored;
    if (present) {
      Hdf5Group g = group.group(name);
      // A Bidirectional layer's weights are its forward layer's, then its backward one's (the
      // file's names sort the other way).
      std::vector<std::string> own = layer->keras3_weight_paths();
      if (!own.empty()) {
        for (const auto& p : own) {
          if (p.empty()) {  // not in the file: zeros
            stored.push_back({g, "", ""});
            continue;
          }
          Hdf5Group at = g;
          size_t start = 0;
          for (size_t slash; (slash = p.find('/', start)) != std::string::npos; start = slash + 1) {
            std::string part = p.substr(start, slash - start);
            check(at.has_group(part), Status::invalid_argument, at.where(), ": no group '", part,
                  "' for the weights of ", layer->where());
            at = at.group(part);
          }
          std::string leaf = p.substr(start);
          check(at.has(leaf), Status::invalid_argument, at.where(), ": no variable '", leaf,
                "' for the weights of ", layer->where());
          stored.push_back({at, leaf, path + "/" + name + "/" + p});
        }
      } else if (layer->class_name() == "Bidirectional" && g.has_group("forward_layer") &&
                 g.has_group("backward_layer")) {
        for (const char* half : {"forward_layer", "backward_layer"})
          collect_variables(g.group(half), path + "/" + name + "/" + half, stored, 1);
      } else {
        collect_variables(g, path + "/" + name, stored, 0);
      }
    }
    std::vector<Weight> weights = layer->weights();
    check(stored.size() == weights.size(), Status::invalid_argument, group.where(), "/", name, ": ",
          stored.size(), " variables for ", layer->where(), ", which has ", weights.size(),
          " weights");
    std::vector<std::shared_ptr<Buffer>> values;
    for (size_t i = 0; i < stored.size(); ++i) {
      const StoredVariable& v = stored[i];
      if (v.name.empty()) {
        auto zeros = Buffer::make(weights[i].variable->dtype(), weights[i].variable->shape().dims);
        std::memset(zeros->data(), 0, zeros->nbytes());
        values.push_back(zeros);
        continue;
      }
      Dims dims = v.group.dataset_dims(v.name);
      check(dims == weights[i].variable->shape().dims, Status::shape, v.group.where(), "/", v.name,
            ": shape ", dims_str(dims), " for weight '", weights[i].name, "' of ", layer->where(),
            ", which needs ", dims_str(weights[i].variable->shape().dims));
      values.push_back(v.group.read_dataset(v.name));
    }
    if (values.empty()) continue;
    layer->set_weights(values);
    for (size_t i = 0; i < weights.size(); ++i)
      if (!stored[i].path.empty())
        origin.weights.emplace_back(stored[i].path, layer->keras3_saved_value(i));
    for (const auto& [copy, i] : layer->keras3_weight_copies())
      if (i < weights.size())
        origin.weights.emplace_back(path + "/" + name + "/" + copy, weights[i].variable);
  }
}

// The slot kinds of a Keras 3 optimizer as its build() makes them: each inner list one call of
// add_optimizer_variables, which interleaves its kinds variable by variable (tf.keras 2.11+
// builds its slots in the same order). Read from the optimizer's own class and config, so that
// a config naming it by a string ("rmsprop") is read alike.
std::vector<std::vector<std::string>> keras3_slot_groups(const Optimizer& optimizer) {
  const std::string& cls = optimizer.class_name();
  const Json spec = optimizer.config();
  const Json& c = spec["config"];
  auto number = [&](const char* key) {
    return c.contains(key) && c[key].is_number() ? c[key].get<double>() : 0.0;
  };
  auto flag = [&](const char* key) { return c.contains(key) && c[key].is_boolean() && c[key]; };
  if (cls == "SGD")
    return number("momentum") != 0 ? std::vector<std::vector<std::string>>{{"momentum"}}
                                   : std::vector<std::vector<std::string>>{};
  if (cls == "Adam" || cls == "AdamW") {
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
  if (cls == "Nadam") return {{"momentum", "velocity"}};  // then u_product (trailing_state)
  if (cls == "Lion") return {{"momentum"}};
  if (cls == "Lamb") return {{"momentum", "velocity"}};
  if (cls == "Ftrl") return {{"accumulator", "linear"}};
  if (cls == "Adafactor")
    return {{"r", "c", "velocity"}};  // r and c factored (scalars below rank 2)
  return {};
}

// Keras 3's order of an optimizer's state after iterations (and the learning rate), as the
// optimizer's variables: use_ema's averages, then each add_optimizer_variables call's slots
// interleaved variable by variable, then the state Keras 3 keeps after them (Nadam's
// u_product); none when the optimizer keeps fewer kinds than Keras 3's.
std::optional<std::vector<NodePtr>> keras3_slot_order(Optimizer& optimizer, size_t params) {
  std::vector<std::vector<std::string>> groups = keras3_slot_groups(optimizer);
  size_t kinds = 0;
  for (const auto& gr : groups) kinds += gr.size();
  const auto& ours = optimizer.weights();
  size_t first_slot = !ours.empty() && ours[0] == optimizer.iterations() ? 1 : 0;
  if (first_slot + kinds * params > ours.size()) return std::nullopt;
  // use_ema's averages first (Keras 3's base build() adds them before the optimizer's slots).
  std::vector<NodePtr> order = optimizer.leading_state();
  // Kind k of parameter j is at first_slot + k * params + j in ours.
  size_t kind_base = 0;
  for (const auto& gr : groups) {
    for (size_t j = 0; j < params; ++j)
      for (size_t k = 0; k < gr.size(); ++k)
        order.push_back(ours[first_slot + (kind_base + k) * params + j]);
    kind_base += gr.size();
  }
  for (const auto& v : optimizer.trailing_state()) order.push_back(v);
  return order;
}

// Where the slots start in that state: after iterations and the learning rate (Keras 3), or
// after iterations alone (a schedule's rate in Keras 3, any in tf.keras 2.11+'s optimizers).
size_t first_slot_index(const Optimizer& optimizer, bool keras3) {
  return keras3 && !optimizer.scheduled() ? 2 : 1;
}

// The optimizer's state from optimizer/vars (datasets 0, 1, ...).
void restore_keras3_optimizer(Optimizer& optimizer, bool keras3, const Hdf5Group& g, size_t params,
                              const std::string& path) {
  size_t n = numbered_datasets(g);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  std::optional<std::vector<NodePtr>> targets = keras3_state_targets(optimizer, params, n, keras3);
  restore_optimizer_values(g, names, targets ? *targets : std::vector<NodePtr>(), path);
}

// Writes `value` at `path` ("layers/dense/vars/0") of the file, its groups made as needed.
void write_at(const Hdf5Group& root, const std::string& path, const Buffer& value) {
  size_t slash = path.rfind('/');
  Hdf5Group g = slash == std::string::npos ? root : root.create_group(path.substr(0, slash));
  g.write_dataset(slash == std::string::npos ? path : path.substr(slash + 1), value);
}

// Each weight's path in model.weights.h5 as Keras 3 walks `layers` (the group at `base`): a
// layer's own variables at <class>/vars/<i>, a recurrent layer's in its cell, a wrapper's in
// its layer (Bidirectional: forward_layer and backward_layer), a nested model's in its layers.
void keras3_weight_paths(const std::vector<std::shared_ptr<Layer>>& layers, const std::string& base,
                         std::vector<std::pair<std::string, NodePtr>>& out) {
  auto recurrent = [](const std::string& cls) {
    return cls == "SimpleRNN" || cls == "LSTM" || cls == "GRU";
  };
  std::map<std::string, int> used;
  for (const auto& layer : layers) {
    std::string path = base + "/" + unique_name(keras_snake_case(layer->class_name()), used);
    if (const Model* nested = layer->nested_model()) {
      keras3_weight_paths(nested->layers(), path + "/layers", out);
      continue;
    }
    std::vector<Weight> ws = layer->weights();
    std::vector<std::string> own = layer->keras3_weight_paths();
    for (const auto& [copy, i] : layer->keras3_weight_copies())
      if (i < ws.size()) out.emplace_back(path + "/" + copy, ws[i].variable);
    if (!own.empty()) {
      for (size_t i = 0; i < ws.size() && i < own.size(); ++i)
        if (!own[i].empty()) out.emplace_back(path + "/" + own[i], layer->keras3_saved_value(i));
      continue;
    }
    const std::string& cls = layer->class_name();
    std::string inner;
    if (cls == "TimeDistributed" || cls == "Bidirectional") {
      const Json& spec = layer->config().value("layer", Json::object());
      inner = spec.is_object() ? spec.value("class_name", "") : "";
    }
    std::string cell = recurrent(inner) ? "/cell" : "";
    for (size_t i = 0; i < ws.size(); ++i) {
      std::string at;
      if (cls == "Bidirectional")  // the forward layer's weights, then the backward one's
        at = path + (2 * i < ws.size() ? "/forward_layer" : "/backward_layer") + cell + "/vars/" +
             std::to_string(2 * i < ws.size() ? i : i - ws.size() / 2);
      else if (cls == "TimeDistributed")
        at = path + "/layer" + cell + "/vars/" + std::to_string(i);
      else
        at = path + (recurrent(cls) ? "/cell" : "") + "/vars/" + std::to_string(i);
      out.emplace_back(at, ws[i].variable);
    }
  }
}

// A Sequential config of Keras 2's form whose first layer carries batch_input_shape, with an
// InputLayer of that batch_shape first instead: Keras 3's legacy reader takes a layer's
// batch_input_shape for its input_shape, batch and all.
void explicit_input(Json& sequential) {
  if (!sequential.is_object() || !sequential.contains("layers")) return;
  Json& layers = sequential["layers"];
  if (!layers.is_array() || layers.empty() || !layers[0].is_object()) return;
  Json& first = layers[0];
  if (first.value("class_name", "") == "InputLayer" || !first.contains("config") ||
      !first["config"].is_object() || !first["config"].contains("batch_input_shape"))
    return;
  Json& c = first["config"];
  Json input = {{"class_name", "InputLayer"},
                {"config",
                 {{"batch_shape", c["batch_input_shape"]},
                  {"dtype", c.value("dtype", Json("float32"))},
                  {"name", c.value("name", std::string("layer")) + "_input"}}}};
  c.erase("batch_input_shape");
  layers.insert(layers.begin(), input);
}

// A layer config of Keras 2's form as Keras 3's legacy reader takes it: what Keras 3 would read
// otherwise set (GRU's reset_after, whose default Keras 3 changed), what it refuses dropped
// (tf.keras' time_major); nested models' and wrappers' layers too.
void keras3_legacy_layer(Json& entry) {
  if (!entry.is_object() || !entry.contains("config") || !entry["config"].is_object()) return;
  std::string cls = entry.value("class_name", "");
  Json& c = entry["config"];
  if (cls == "GRU" && !c.contains("reset_after")) c["reset_after"] = false;
  if (cls == "SimpleRNN" || cls == "LSTM" || cls == "GRU") c.erase("time_major");
  if (cls == "Sequential") explicit_input(c);
  if (c.contains("layer")) keras3_legacy_layer(c["layer"]);
  if (c.contains("layers") && c["layers"].is_array())
    for (auto& l : c["layers"]) keras3_legacy_layer(l);
}

// Keras 3's compile_config of a Training made here: the optimizer as a keras.optimizers object
// (learning_rate for lr; Keras 2.2.4's decay as the InverseTimeDecay it is), the losses,
// metrics and loss weights as given.
Json keras3_compile_config(const Training& t, bool& decay_as_schedule) {
  Json tc = t.config();
  Json oc = tc["optimizer_config"].value("config", Json::object());
  double lr = oc.value("lr", 0.001), decay = oc.value("decay", 0.0);
  decay_as_schedule = decay > 0;
  oc.erase("lr");
  oc.erase("decay");
  // Keras 3's Nadam has its own schedule; the others are tf.keras' own, which Keras 3 refuses.
  for (const char* key : {"schedule_decay", "is_legacy_optimizer", "jit_compile"}) oc.erase(key);
  oc["learning_rate"] = decay_as_schedule ? Json{{"module", "keras.optimizers.schedules"},
                                                 {"class_name", "InverseTimeDecay"},
                                                 {"config",
                                                  {{"initial_learning_rate", lr},
                                                   {"decay_steps", 1},
                                                   {"decay_rate", decay},
                                                   {"staircase", false}}},
                                                 {"registered_name", nullptr}}
                                          : Json(lr);
  return {{"optimizer",
           {{"module", "keras.optimizers"},
            {"class_name", tc["optimizer_config"].value("class_name", "")},
            {"config", oc},
            {"registered_name", nullptr}}},
          {"loss", tc.value("loss", Json())},
          {"loss_weights", tc.value("loss_weights", Json())},
          {"metrics", tc.value("metrics", Json())},
          {"weighted_metrics", nullptr},
          {"run_eagerly", false},
          {"steps_per_execution", 1},
          {"jit_compile", false}};
}

}  // namespace

std::optional<std::vector<NodePtr>> keras3_state_targets(Optimizer& optimizer, size_t params,
                                                         size_t entries, bool keras3) {
  std::optional<std::vector<NodePtr>> order = keras3_slot_order(optimizer, params);
  size_t first = first_slot_index(optimizer, keras3);
  // An optimizer Keras never built (a model saved before training) keeps no slots.
  bool unbuilt = entries == first;
  if (!order || (entries != first + order->size() && !unbuilt)) return std::nullopt;
  std::vector<NodePtr> targets = {optimizer.iterations()};
  if (first == 2) targets.push_back(nullptr);
  if (!unbuilt) targets.insert(targets.end(), order->begin(), order->end());
  return targets;
}

std::shared_ptr<Keras3Origin> keras3_origin_of(const Model& model) {
  auto o = std::make_shared<Keras3Origin>();
  Json mc = model.config();
  bool sequential = mc.value("class_name", "") == "Sequential";
  Json body = mc["config"];
  if (body.is_object() && body.contains("layers") && body["layers"].is_array())
    for (auto& l : body["layers"]) keras3_legacy_layer(l);
  if (sequential) explicit_input(body);
  o->serialized = sequential ? Json{{"module", "keras"},
                                    {"class_name", "Sequential"},
                                    {"config", body},
                                    {"registered_name", nullptr}}
                             : Json{{"module", "keras.src.models.functional"},
                                    {"class_name", "Functional"},
                                    {"config", body},
                                    {"registered_name", "Functional"}};
  if (const Training* t = model.training()) {
    o->serialized["compile_config"] = keras3_compile_config(*t, o->decay_as_schedule);
    o->training = t;
  }
  o->metadata = {{"keras_version", "3.0.0"}};
  keras3_weight_paths(model.layers(), "layers", o->weights);
  return o;
}

std::shared_ptr<Model> load_keras_archive(const std::string& path, bool compile) {
  // tf.keras 2.13-2.15 writes archives of the same layout; its configs number nodes as Keras 2
  // does, and its optimizers keep no learning-rate variable. Each trains by its own rules.
  ZipReader zip(path);
  for (const char* entry : {"config.json", "model.weights.h5"})
    check(zip.has(entry), Status::invalid_argument, path, ": a .keras archive without ", entry);
  auto origin = std::make_shared<Keras3Origin>();
  if (zip.has("metadata.json"))
    origin->metadata =
        parse_json(zip.read("metadata.json", kMaxJsonBytes), path + ":metadata.json");
  const Json& version = origin->metadata.is_object() && origin->metadata.contains("keras_version")
                            ? origin->metadata["keras_version"]
                            : Json();
  origin->keras3 = !version.is_string() || version.get<std::string>().rfind("2.", 0) != 0;
  KerasRulesScope rules(origin->keras3 ? KerasRules::keras3 : KerasRules::tf_keras);
  Json serialized = parse_json(zip.read("config.json", kMaxJsonBytes), path + ":config.json");
  Json config = model_config_of_keras3(serialized, path + ":config.json", origin->keras3);
  uint64_t declared = zip.size("model.weights.h5");
  std::shared_ptr<Model> model;
  {
    WeightBudget budget(WeightBudget::of_file(declared), "the archive's weights", true);
    model = Model::from_config(config);
  }
  uint64_t bound = weights_entry_bound(*model);
  check(declared <= bound, Status::invalid_argument, path, ":model.weights.h5: ", declared,
        " bytes for a model whose weights take at most ", bound, " with the optimizer's");
  std::string weights = zip.read("model.weights.h5", kMaxWeightsBytes);
  Hdf5Group root = Hdf5File::open_image(weights, path + ":model.weights.h5");
  weights.clear();
  weights.shrink_to_fit();
  origin->serialized = serialized;
  if (root.has_group("layers")) {
    load_layers(model->layers(), root.group("layers"), "layers", *origin, 0);
  } else {
    for (const auto& l : model->layers())
      check(l->weights().empty(), Status::invalid_argument, root.where(), ": no layers group, but ",
            l->where(), " has weights");
  }
  // An uncompiled model's archive has an empty compile_config.
  if (compile && serialized.contains("compile_config") &&
      serialized["compile_config"].is_object() && !serialized["compile_config"].empty()) {
    const Json& cc = serialized["compile_config"];
    compile_from_config(*model, training_config_of_keras3(cc, path + ":compile_config"));
    if (root.has_group("optimizer") && root.group("optimizer").has_group("vars")) {
      size_t params = model->trainable_variables().size();
      restore_keras3_optimizer(model->training()->optimizer(), origin->keras3,
                               root.group("optimizer").group("vars"), params, path);
    }
    origin->training = model->training();
  }
  model->set_keras3_origin(origin);
  model->set_keras_version(version.is_string() ? version.get<std::string>() : "3.0.0");
  return model;
}

namespace {

// The origin to write `model` by: its archive's, or one made for it (`made` keeps it).
const Keras3Origin& origin_to_write(const Model& model, std::shared_ptr<const Keras3Origin>& made) {
  if (model.keras3_origin()) return *model.keras3_origin();
  made = keras3_origin_of(model);
  return *made;
}

// Whether the optimizer's state goes with the weights: the compile the origin describes (the
// archive's, or the model's own for one made here) is the model's.
bool with_optimizer(const Model& model, const Keras3Origin& o, bool include_optimizer) {
  Training* t = model.training();
  return include_optimizer && t != nullptr && t == o.training;
}

// What model.weights.h5 holds, into `root`: the weights where Keras 3 walks them and, with
// `optimizer`, the optimizer's variables.
void write_keras3_weights(Model& model, const Keras3Origin& o, const Hdf5Group& root,
                          bool optimizer, const std::string& path) {
  for (const auto& [at, variable] : o.weights) write_at(root, at, *evaluate(variable));
  if (!optimizer) return;
  Optimizer& opt = model.training()->optimizer();
  std::optional<std::vector<NodePtr>> order =
      keras3_slot_order(opt, model.trainable_variables().size());
  check(order.has_value(), Status::internal, path, ": the optimizer keeps fewer slots than ",
        "Keras 3's ", opt.class_name());
  auto iterations = convert_buffer(evaluate(opt.iterations()), DType::i64);
  write_at(root, "optimizer/vars/0", *iterations);
  size_t first = o.decay_as_schedule ? 1 : first_slot_index(opt, o.keras3);
  if (first == 2) {
    auto lr = Buffer::make(DType::f32, {});
    *lr->as<float>() = float(opt.learning_rate());
    write_at(root, "optimizer/vars/1", *lr);
  }
  for (size_t i = 0; i < order->size(); ++i)
    write_at(root, "optimizer/vars/" + std::to_string(i + first), *evaluate((*order)[i]));
}

}  // namespace

void save_keras3_weights(Model& model, const std::string& path) {
  std::shared_ptr<const Keras3Origin> made;
  const Keras3Origin& o = origin_to_write(model, made);
  write_keras3_weights(model, o, Hdf5File::create(path), with_optimizer(model, o, true), path);
}

void load_keras3_weights(Model& model, const Hdf5Group& root, const std::string& path) {
  std::shared_ptr<const Keras3Origin> made;
  Keras3Origin o = origin_to_write(model, made);
  check(root.has_group("layers") || model.weights().empty(), Status::invalid_argument, path,
        ": not a Keras 3 weights file (no layers group)");
  if (root.has_group("layers")) load_layers(model.layers(), root.group("layers"), "layers", o, 0);
  if (model.training() && root.has_group("optimizer") && root.group("optimizer").has_group("vars"))
    restore_keras3_optimizer(model.training()->optimizer(), o.keras3,
                             root.group("optimizer").group("vars"),
                             model.trainable_variables().size(), path);
}

void save_keras_archive(Model& model, const std::string& path, bool include_optimizer) {
  std::shared_ptr<const Keras3Origin> made;
  const Keras3Origin* o = &origin_to_write(model, made);
  Json config = o->serialized;
  // The archive's compile_config goes with the Training made from it, and with it alone.
  bool with_training = with_optimizer(model, *o, include_optimizer);
  if (!with_training) config.erase("compile_config");
  Hdf5Group root = Hdf5File::create_image(path + ":model.weights.h5");
  write_keras3_weights(model, *o, root, with_training, path);
  Json metadata = o->metadata.is_object() ? o->metadata : Json::object();
  if (!metadata.contains("keras_version")) metadata["keras_version"] = "3.0.0";
  ZipWriter zip(path);
  zip.add("metadata.json", metadata.dump());
  zip.add("config.json", config.dump());
  zip.add("model.weights.h5", Hdf5File::image(root));
  zip.close();
}

}  // namespace kb::model
