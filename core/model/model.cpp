#include "core/model/model.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/api/api.h"
#include "core/api/control.h"
#include "core/graph/session.h"
#include "core/model/training.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// An InputLayer's placeholder: batch_input_shape (Keras 2) or batch_shape (tf.keras 2.13+).
NodePtr input_placeholder(const Json& config, const std::string& name, const std::string& where) {
  const Json* shape = nullptr;
  for (const char* key : {"batch_input_shape", "batch_shape"})
    if (config.contains(key) && !config[key].is_null()) shape = &config[key];
  check(shape != nullptr, Status::invalid_argument, where, ": no batch_input_shape");
  DType dtype = config.contains("dtype") && !config["dtype"].is_null()
                    ? dtype_of(config["dtype"], where)
                    : Session::get().floatx();
  return api::placeholder(Shape(dims_of(*shape, where)), dtype, name);
}

std::string layer_where(const Json& entry) {
  std::string name = "?";
  if (entry.is_object() && entry.contains("config") && entry["config"].is_object() &&
      entry["config"].contains("name") && entry["config"]["name"].is_string())
    name = entry["config"]["name"].get<std::string>();
  return "layer '" + name + "'";
}

// [layer name, node index, tensor index]: an entry of input_layers, output_layers or of an
// inbound node (Keras 2 lists; tf.keras may add a kwargs dict as a fourth item).
struct TensorRef {
  std::string layer;
  int64_t node = 0, tensor = 0;
};

TensorRef tensor_ref(const Json& ref, const std::string& where) {
  check(ref.is_array() && ref.size() >= 3 && ref[0].is_string() && ref[1].is_number_integer() &&
            ref[2].is_number_integer(),
        Status::invalid_argument, where, ": a tensor reference is not [layer, node, tensor]");
  return {ref[0].get<std::string>(), ref[1].get<int64_t>(), ref[2].get<int64_t>()};
}

// Models nested in models (Keras' nested Sequential and functional models) as deep as a real
// model might be; each level builds its own, so the bound keeps a file's demand linear.
constexpr int kMaxNestedModels = 32;
thread_local int nested_models = 0;

struct NestingLevel {
  NestingLevel() {
    check(nested_models < kMaxNestedModels, Status::invalid_argument,
          "model_config: models nested more than ", kMaxNestedModels, " deep");
    ++nested_models;
  }
  ~NestingLevel() { --nested_models; }
  NestingLevel(const NestingLevel&) = delete;
  NestingLevel& operator=(const NestingLevel&) = delete;
};

}  // namespace

Model::~Model() = default;

void Model::set_training(std::unique_ptr<Training> t) { training_ = std::move(t); }

std::shared_ptr<Model> Model::from_config(const Json& model_config) {
  const std::string where = "model_config";
  check(model_config.is_object(), Status::invalid_argument, where, ": not an object");
  NestingLevel level;
  // A config alone may ask for what the host holds; a file's loader sets a budget of its own.
  std::optional<WeightBudget> host;
  if (!WeightBudget::current()) host.emplace(host_memory_bytes(), "this host's memory", false);
  std::shared_ptr<Model> m(new Model());
  m->class_name_ = required_string(model_config, "class_name", where);
  m->config_ = model_config;
  const Json& config = required(model_config, "config", where);
  if (m->class_name_ == "Sequential")
    m->build_sequential(config, nullptr);
  else if (m->class_name_ == "Model" || m->class_name_ == "Functional")
    m->build_functional(config, nullptr);
  else
    fail(Status::not_implemented, where, ": a model of class '", m->class_name_,
         "' (Sequential, Model or Functional)");
  NodePtr phase = api::learning_phase();
  if (phase->is(ops::LearningPhase)) m->phase_ = phase;
  return m;
}

Function& Model::predict_function() {
  if (!predict_) {
    Tensors ins = inputs_;
    if (phase_) ins.push_back(phase_);
    predict_ = std::make_unique<Function>(ins, outputs_, state_updates());
    predict_->set_device(Device::cpu);  // results are read in host memory (training.cpp)
  }
  return *predict_;
}

Tensors Model::build_sequential(const Json& config, const Tensors* given) {
  // Keras 2.0/2.1 wrote the list of layers itself; 2.2 and tf.keras {"name", "layers"}.
  const Json& list = config.is_array() ? config : required(config, "layers", "Sequential config");
  name_ = config.is_object() ? string_or(config, "name", "sequential", "Sequential config")
                             : "sequential";
  check(list.is_array() && !list.empty(), Status::invalid_argument, "model '", name_,
        "': a Sequential model with no layers");
  if (given) {  // again, on other inputs: the same layers
    check(given->size() == 1, Status::invalid_argument, "model '", name_, "': takes one input");
    NodePtr y = (*given)[0];
    for (const auto& layer : layers_) {
      Tensors out = (*layer)({y});
      y = out[0];
    }
    return {y};
  }
  NodePtr x, mask;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& entry = list[i];
    std::string where = layer_where(entry);
    check(entry.is_object(), Status::invalid_argument, where, ": not {class_name, config}");
    std::string cls = required_string(entry, "class_name", where);
    const Json& lc = required(entry, "config", where);
    auto layer = make_layer(cls, lc);  // an unknown class is the first thing to report
    if (i == 0) {
      // The input: an InputLayer of its own (tf.keras), or the first layer's batch_input_shape
      // (Keras 2.2.4 names the placeholder after it: "dense_1_input").
      std::string input_name = cls == "InputLayer" ? required_string(lc, "name", where)
                                                   : required_string(lc, "name", where) + "_input";
      x = input_placeholder(lc, input_name, where);
      inputs_ = {x};
      input_names_ = {input_name};
      if (cls == "InputLayer") continue;
    }
    check(cls != "InputLayer", Status::invalid_argument, where,
          ": an InputLayer after the first layer of a Sequential model");
    Applied out = layer->apply({x}, {mask});
    check(out.outputs.size() == 1, Status::invalid_argument, layer->where(),
          ": a Sequential model's layer gives one output");
    x = out.outputs[0];
    mask = out.masks[0];
    layers_.push_back(layer);
  }
  outputs_ = {x};
  output_masks_ = {mask};
  output_names_ = {layers_.empty() ? input_names_[0] : layers_.back()->name()};
  return outputs_;
}

Tensors Model::build_functional(const Json& config, const Tensors* given) {
  name_ = string_or(config, "name", "model", "model config");
  std::string where = "model '" + name_ + "'";
  const Json& list = required(config, "layers", where);
  check(list.is_array(), Status::invalid_argument, where, ": layers is not a list");
  // Each layer's config entry, and the outputs of each node made so far: (layer, node) ->.
  std::vector<const Json*> entries;
  std::map<std::string, size_t> index;
  std::map<std::pair<std::string, int64_t>, Applied> made;
  std::vector<size_t> nodes_done;
  // Applied again (a nested model called on other tensors): the given inputs stand for the
  // input layers, in input_layers' order, and the layers made the first time are reused.
  std::map<std::string, NodePtr> given_for;
  if (given) {
    const Json& ins = required(config, "input_layers", where);
    bool bare = ins.is_array() && ins.size() >= 3 && ins[0].is_string();
    size_t n = bare ? 1 : ins.size();
    check(given->size() == n, Status::invalid_argument, where, ": takes ", n, " inputs, given ",
          given->size());
    for (size_t k = 0; k < n; ++k)
      given_for[tensor_ref(bare ? ins : ins[k], where).layer] = (*given)[k];
  }
  bool first = layers_.empty();
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& entry = list[i];
    std::string lw = layer_where(entry);
    check(entry.is_object(), Status::invalid_argument, lw, ": not {class_name, config}");
    std::string cls = required_string(entry, "class_name", lw);
    const Json& lc = required(entry, "config", lw);
    auto layer = first ? make_layer(cls, lc) : layers_.at(i);
    check(!first || index.emplace(layer->name(), layers_.size()).second, Status::invalid_argument,
          where, ": two layers named '", layer->name(), "'");
    if (cls == "InputLayer") {
      auto g = given_for.find(layer->name());
      made[{layer->name(), 0}] = layer->apply(
          {g != given_for.end() ? g->second : input_placeholder(lc, layer->name(), lw)}, {});
    }
    if (first) layers_.push_back(layer);
    entries.push_back(&entry);
    nodes_done.push_back(cls == "InputLayer" ? 1 : 0);
  }
  std::map<std::string, int> consumers;  // how many nodes read each tensor (the summary's form)
  // Keras' from_config: nodes whose inputs exist are made, in rounds, until all are.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < layers_.size(); ++i) {
      const Json& entry = *entries[i];
      if (layers_[i]->class_name() == "InputLayer") continue;
      const Json& nodes = required(entry, "inbound_nodes", layers_[i]->where());
      check(nodes.is_array(), Status::invalid_argument, layers_[i]->where(),
            ": inbound_nodes is not a list");
      while (nodes_done[i] < nodes.size()) {
        const Json& node = nodes[nodes_done[i]];
        check(node.is_array() && !node.empty(), Status::invalid_argument, layers_[i]->where(),
              ": an inbound node is not a list of tensors");
        Tensors in, in_masks;
        std::vector<std::string> names;
        // The tensor `ref` names (false while its layer has not made it).
        auto resolve = [&](const Json& ref, NodePtr& t, NodePtr& m) {
          TensorRef r = tensor_ref(ref, layers_[i]->where());
          auto it = made.find({r.layer, r.node});
          if (it == made.end()) return false;
          check(r.tensor >= 0 && size_t(r.tensor) < it->second.outputs.size(),
                Status::invalid_argument, layers_[i]->where(), ": input tensor ", r.tensor,
                " of layer '", r.layer, "' does not exist");
          t = it->second.outputs[size_t(r.tensor)];
          m = it->second.masks[size_t(r.tensor)];
          names.push_back(r.layer + "[" + std::to_string(r.node) + "][" + std::to_string(r.tensor) +
                          "]");
          return true;
        };
        for (const Json& ref : node) {
          NodePtr t, m;
          if (!resolve(ref, t, m)) break;
          in.push_back(t);
          in_masks.push_back(m);
        }
        if (in.size() < node.size()) break;  // waits for a layer further down the list
        // The call's other arguments: tf.keras' kwargs beside the first tensor, where a tensor
        // is [layer, node, tensor]; Keras 3's positional ones come as "#1", "#2", ...
        CallArguments args;
        bool waiting = false;
        std::vector<std::string> params = layers_[i]->tensor_parameters();
        const Json& head = node[0];
        if (head.is_array() && head.size() >= 4 && head[3].is_object()) {
          for (const auto& [key, value] : head[3].items()) {
            bool tensor = value.is_array() && value.size() == 3 && value[0].is_string() &&
                          value[1].is_number_integer() && value[2].is_number_integer();
            if (!tensor) {
              args.values[key] = value;
              continue;
            }
            std::string name = key;
            if (key == "mask" && std::find(params.begin(), params.end(), key) == params.end()) {
              // Keras 3 writes the mask a layer is called with: it stands for the input's.
              check(in.size() == 1, Status::not_implemented, layers_[i]->where(),
                    ": one mask given for several inputs");
              NodePtr t, m;
              if (!resolve(value, t, m)) {
                waiting = true;
                break;
              }
              in_masks[0] = t;
              continue;
            }
            if (!key.empty() && key[0] == '#') {
              bool digits = key.size() >= 2 && key.size() <= 4 &&
                            std::all_of(key.begin() + 1, key.end(),
                                        [](char c) { return c >= '0' && c <= '9'; });
              check(digits, Status::invalid_argument, layers_[i]->where(), ": argument '", key,
                    "' is not a position");
              size_t k = size_t(std::stoul(key.substr(1)));
              check(k >= 1 && k <= params.size(), Status::not_implemented, layers_[i]->where(),
                    ": called with a tensor as its positional argument ", k + 1);
              name = params[k - 1];
            }
            NodePtr t, m;
            if (!resolve(value, t, m)) {
              waiting = true;
              break;
            }
            args.tensors[name] = t;
            args.masks[name] = m;
          }
        }
        if (waiting) break;
        // A nested model's node 0 is the one its own inputs made (Keras numbers from there).
        const std::string& cls = layers_[i]->class_name();
        int64_t first_node = cls == "Sequential" || cls == "Model" || cls == "Functional" ? 1 : 0;
        made[{layers_[i]->name(), first_node + int64_t(nodes_done[i])}] =
            layers_[i]->apply(in, in_masks, args);
        if (first) {
          connections_.resize(layers_.size());
          for (auto& n : names) {
            if (++consumers[n] > 1) sequential_like_ = false;
            connections_[i].push_back(n);
          }
          if (names.size() > 1 || nodes_done[i] > 0) sequential_like_ = false;
        }
        ++nodes_done[i];
        progress = true;
      }
    }
  }
  for (size_t i = 0; i < layers_.size(); ++i)
    if (layers_[i]->class_name() != "InputLayer")
      check(nodes_done[i] == (*entries[i])["inbound_nodes"].size(), Status::invalid_argument,
            layers_[i]->where(), ": its inputs never come from the model's inputs");
  Tensors masks;
  auto refs = [&](const char* key, Tensors& tensors, std::vector<std::string>& names) {
    const Json& list = required(config, key, where);
    check(list.is_array() && !list.empty(), Status::invalid_argument, where, ": ", key,
          " is not a list of tensors");
    // A single reference may be written bare: [name, node, tensor].
    bool bare = list.size() >= 3 && list[0].is_string();
    std::vector<Json> items =
        bare ? std::vector<Json>{list} : std::vector<Json>(list.begin(), list.end());
    for (const Json& ref : items) {
      TensorRef r = tensor_ref(ref, where);
      auto it = made.find({r.layer, r.node});
      check(it != made.end() && r.tensor >= 0 && size_t(r.tensor) < it->second.outputs.size(),
            Status::invalid_argument, where, ": ", key, " names a tensor of '", r.layer,
            "' that does not exist");
      tensors.push_back(it->second.outputs[size_t(r.tensor)]);
      masks.push_back(it->second.masks[size_t(r.tensor)]);
      names.push_back(r.layer);
    }
  };
  if (given) {
    Tensors outs;
    std::vector<std::string> names;
    refs("output_layers", outs, names);
    return outs;
  }
  refs("input_layers", inputs_, input_names_);
  masks.clear();
  refs("output_layers", outputs_, output_names_);
  output_masks_ = masks;
  connections_.resize(layers_.size());
  if (inputs_.size() > 1 || outputs_.size() > 1) sequential_like_ = false;
  for (const auto& x : inputs_)
    check(x->is(ops::Placeholder), Status::invalid_argument, where,
          ": an input is not an InputLayer's tensor");
  return outputs_;
}

Tensors Model::apply(const Tensors& inputs) {
  const Json& config = config_["config"];
  return class_name_ == "Sequential" ? build_sequential(config, &inputs)
                                     : build_functional(config, &inputs);
}

std::shared_ptr<Layer> Model::layer(const std::string& name) const {
  for (const auto& l : layers_)
    if (l->name() == name) return l;
  return nullptr;
}

std::vector<Weight> Model::weights() const {
  std::vector<Weight> out;
  for (const auto& l : layers_)
    for (auto& w : l->weights()) out.push_back(w);
  return out;
}

int64_t Model::count_params() const {
  int64_t n = 0;
  for (const auto& w : weights()) n += std::max<int64_t>(w.variable->shape().numel(), 0);
  return n;
}

std::vector<NodePtr> Model::trainable_variables() const {
  std::vector<NodePtr> out;
  for (const auto& l : layers_)
    for (auto& v : l->trainable_variables()) out.push_back(v);
  return out;
}

std::map<const Node*, Json> Model::constraints() const {
  std::map<const Node*, Json> out;
  for (const auto& w : weights())
    if (w.trainable && !w.constraint.is_null()) out[w.variable.get()] = w.constraint;
  return out;
}

Tensors Model::losses() const {
  Tensors out;
  for (const auto& l : layers_) out.insert(out.end(), l->losses().begin(), l->losses().end());
  out.insert(out.end(), added_losses_.begin(), added_losses_.end());
  return out;
}

void Model::add_loss(const NodePtr& term) {
  check(term && term->rank() == 0 && is_floating(term->dtype()), Status::invalid_argument,
        "model_add_loss: the term must be a floating-point scalar");
  added_losses_.push_back(term);
}

Tensors Model::state_updates() const {
  Tensors out;
  for (const auto& l : layers_)
    out.insert(out.end(), l->state_updates().begin(), l->state_updates().end());
  return out;
}

void Model::reset_states() {
  for (const auto& l : layers_) l->reset_states();
}

Tensors Model::updates() const {
  Tensors out;
  for (const auto& l : layers_) out.insert(out.end(), l->updates().begin(), l->updates().end());
  return out;
}

}  // namespace kb::model
