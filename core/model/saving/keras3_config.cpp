#include "core/model/saving/keras3_config.h"

#include <cctype>
#include <map>

#include "core/util/error.h"

namespace kb::model {
namespace {

bool is_keras_tensor(const Json& v) {
  return v.is_object() && v.contains("class_name") && v["class_name"] == "__keras_tensor__";
}

bool holds_keras_tensor(const Json& v) {
  if (is_keras_tensor(v)) return true;
  if (v.is_array() || v.is_object())
    for (const auto& item : v)
      if (holds_keras_tensor(item)) return true;
  return false;
}

bool is_model_class(const std::string& cls) {
  return cls == "Sequential" || cls == "Functional" || cls == "Model";
}

// [layer, node, tensor] of a __keras_tensor__. Keras 3 numbers a nested Sequential's nodes from
// 0 where Keras 2 (whose reader this feeds) counted the model's own node first.
Json tensor_ref_of(const Json& t, const std::map<std::string, std::string>& classes,
                   const std::string& where) {
  const Json& config = required(t, "config", where);
  const Json& h = required(config, "keras_history", where);
  check(h.is_array() && h.size() == 3 && h[0].is_string() && h[1].is_number_integer() &&
            h[2].is_number_integer(),
        Status::invalid_argument, where, ": keras_history is not [layer, node, tensor]");
  std::string layer = h[0].get<std::string>();
  int64_t node = h[1].get<int64_t>();
  auto c = classes.find(layer);
  if (c != classes.end() && c->second == "Sequential") node += 1;
  return Json::array({layer, node, h[2].get<int64_t>(), Json::object()});
}

// A call of one of keras.ops' operations in a functional model (x + y, ops.not_equal(x, 0)):
// its tensor arguments as references, and every positional argument under "#<position>" beside
// the first (a tensor as {"input": i}, the i-th reference, a list of tensors as {"inputs": [i,
// ...]}; a constant as the file wrote it).
Json op_node_of(const Json& node, const std::map<std::string, std::string>& classes,
                const std::string& where) {
  check(node.is_object(), Status::invalid_argument, where, ": an inbound node is not an object");
  const Json& args = required(node, "args", where);
  check(args.is_array(), Status::invalid_argument, where, ": an inbound node has no arguments");
  Json refs = Json::array(), kwargs = Json::object();
  for (size_t i = 0; i < args.size(); ++i) {
    bool list = args[i].is_array() && !args[i].empty();
    for (const auto& t : list ? args[i] : Json::array()) list = list && is_keras_tensor(t);
    if (is_keras_tensor(args[i])) {
      kwargs["#" + std::to_string(i)] = {{"input", refs.size()}};
      refs.push_back(tensor_ref_of(args[i], classes, where));
    } else if (list) {  // a list of tensors (ops.concatenate): {"inputs": [i, j, ...]}
      Json indices = Json::array();
      for (const auto& t : args[i]) {
        indices.push_back(refs.size());
        refs.push_back(tensor_ref_of(t, classes, where));
      }
      kwargs["#" + std::to_string(i)] = {{"inputs", indices}};
    } else {
      check(!holds_keras_tensor(args[i]), Status::not_implemented, where,
            ": called with a structure of tensors as its argument ", i + 1);
      kwargs["#" + std::to_string(i)] = args[i];
    }
  }
  if (node.contains("kwargs") && node["kwargs"].is_object())
    for (const auto& [key, value] : node["kwargs"].items()) {
      check(!holds_keras_tensor(value), Status::not_implemented, where,
            ": called with a tensor as its keyword argument '", key, "'");
      kwargs[key] = value;
    }
  check(!refs.empty(), Status::not_implemented, where, ": an operation on constants alone");
  for (auto& r : refs) r[3] = kwargs;
  return refs;
}

// One call of a layer: its tensors (the first positional argument: a tensor or a list of them)
// as Keras 2's list of references.
Json node_of(const Json& node, const std::map<std::string, std::string>& classes,
             const std::string& where) {
  if (node.is_array()) return node;  // already Keras 2's form (tf.keras' .keras files)
  check(node.is_object(), Status::invalid_argument, where, ": an inbound node is not an object");
  const Json& args = required(node, "args", where);
  check(args.is_array() && !args.empty(), Status::invalid_argument, where,
        ": an inbound node has no arguments");
  // The other arguments as tf.keras writes them beside the first tensor: tensors as [layer,
  // node, tensor], positional ones under "#<position>".
  Json kwargs = Json::object();
  auto argument = [&](const std::string& key, const Json& value, const std::string& what) {
    if (is_keras_tensor(value)) {
      Json ref = tensor_ref_of(value, classes, where);
      ref.erase(3);
      kwargs[key] = ref;
    } else {
      check(!holds_keras_tensor(value), Status::not_implemented, where,
            ": called with a structure of tensors as its ", what);
      kwargs[key] = value;
    }
  };
  for (size_t i = 1; i < args.size(); ++i)
    argument("#" + std::to_string(i), args[i], "positional argument " + std::to_string(i + 1));
  if (node.contains("kwargs") && node["kwargs"].is_object())
    for (const auto& [key, value] : node["kwargs"].items())
      argument(key, value, "keyword argument '" + key + "'");
  Json refs = Json::array();
  const Json& first = args[0];
  if (is_keras_tensor(first)) {
    refs.push_back(tensor_ref_of(first, classes, where));
  } else {
    check(first.is_array() && !first.empty(), Status::invalid_argument, where,
          ": an inbound node's first argument is neither a tensor nor a list of tensors");
    for (const auto& t : first) {
      check(is_keras_tensor(t), Status::not_implemented, where,
            ": called with a nested structure of tensors");
      refs.push_back(tensor_ref_of(t, classes, where));
    }
  }
  for (auto& r : refs) r[3] = kwargs;
  return refs;
}

std::string layer_label(const Json& entry) {
  if (entry.is_object() && entry.contains("name") && entry["name"].is_string())
    return "layer '" + entry["name"].get<std::string>() + "'";
  if (entry.is_object() && entry.contains("config") && entry["config"].is_object() &&
      entry["config"].contains("name") && entry["config"]["name"].is_string())
    return "layer '" + entry["config"]["name"].get<std::string>() + "'";
  return "a layer";
}

Json model_body(const std::string& cls, const Json& config, const std::string& where, bool keras3);

// A layer entry of a model's config, nested models converted too.
Json layer_entry(const Json& entry, bool functional,
                 const std::map<std::string, std::string>& classes, const std::string& where,
                 bool keras3) {
  std::string lw = where + ", " + layer_label(entry);
  check(entry.is_object(), Status::invalid_argument, lw, ": not an object");
  std::string cls = required_string(entry, "class_name", lw);
  const Json& config = required(entry, "config", lw);
  // keras.ops' operations are named as the library registers them ("ops.Add", apart from the
  // Add layer).
  bool op = entry.contains("module") && entry["module"].is_string() &&
            entry["module"].get<std::string>().rfind("keras.src.ops.", 0) == 0;
  if (op) cls = "ops." + cls;
  Json out = {{"class_name", cls},
              {"config", is_model_class(cls) ? model_body(cls, config, lw, keras3) : config}};
  if (!functional) return out;
  out["name"] = required_string(entry, "name", lw);
  Json nodes = Json::array();
  const Json& in = required(entry, "inbound_nodes", lw);
  check(in.is_array(), Status::invalid_argument, lw, ": inbound_nodes is not a list");
  for (const auto& node : in)
    nodes.push_back(op ? op_node_of(node, classes, lw) : node_of(node, classes, lw));
  out["inbound_nodes"] = nodes;
  return out;
}

Json model_body(const std::string& cls, const Json& config, const std::string& where, bool keras3) {
  check(config.is_object(), Status::invalid_argument, where,
        ": the model's config is not an object");
  const Json& layers = required(config, "layers", where);
  check(layers.is_array(), Status::invalid_argument, where, ": layers is not a list");
  bool functional = cls != "Sequential";
  std::map<std::string, std::string> classes;  // layer name -> class, for node numbering
  if (functional)
    for (const auto& entry : layers)
      if (entry.is_object() && entry.contains("name") && entry["name"].is_string() &&
          entry.contains("class_name") && entry["class_name"].is_string())
        classes[entry["name"].get<std::string>()] = entry["class_name"].get<std::string>();
  Json out = config;
  Json list = Json::array();
  for (const auto& entry : layers)
    list.push_back(layer_entry(entry, functional, classes, where, keras3));
  out["layers"] = list;
  if (functional) {
    // input_layers and output_layers name nested Sequential models' nodes as the nodes do.
    for (const char* key : {"input_layers", "output_layers"}) {
      Json refs = required(config, key, where);
      bool bare = refs.is_array() && !refs.empty() && refs[0].is_string();
      Json items = bare ? Json::array({refs}) : refs;
      check(items.is_array(), Status::invalid_argument, where, ": ", key, " is not a list");
      for (auto& r : items)
        if (keras3 && r.is_array() && r.size() >= 2 && r[0].is_string() &&
            r[1].is_number_integer()) {
          auto c = classes.find(r[0].get<std::string>());
          if (c != classes.end() && c->second == "Sequential") r[1] = r[1].get<int64_t>() + 1;
        }
      out[key] = bare ? items[0] : items;
    }
  }
  return out;
}

}  // namespace

namespace {

// Whether a model's layers call each other in Keras 3's form (nodes as {"args", "kwargs"}),
// where a nested Sequential's nodes count from 0; Keras 2's form (lists) counts its own first.
bool keras3_nodes(const Json& config) {
  if (!config.is_object() || !config.contains("layers") || !config["layers"].is_array())
    return false;
  for (const auto& entry : config["layers"])
    if (entry.is_object() && entry.contains("inbound_nodes") && entry["inbound_nodes"].is_array())
      for (const auto& node : entry["inbound_nodes"])
        if (node.is_object()) return true;
  return false;
}

}  // namespace

Json model_config_of_keras3(const Json& serialized, const std::string& where, bool keras3) {
  check(serialized.is_object(), Status::invalid_argument, where, ": not an object");
  std::string cls = required_string(serialized, "class_name", where);
  if (!is_model_class(cls)) {
    std::string module = serialized.contains("module") && serialized["module"].is_string()
                             ? serialized["module"].get<std::string>()
                             : "?";
    fail(Status::not_implemented, where, ": a model of class '", cls, "' (module '", module,
         "'): only Sequential and functional models load; a subclassed model's call() is "
         "Python code, which a file cannot carry");
  }
  if (cls == "Model") cls = "Functional";
  return {{"class_name", cls},
          {"config", model_body(cls, required(serialized, "config", where), where,
                                keras3 && keras3_nodes(serialized["config"]))}};
}

Json training_config_of_keras3(const Json& cc, const std::string& where) {
  check(cc.is_object(), Status::invalid_argument, where, ": compile_config is not an object");
  Json tc = Json::object();
  tc["optimizer_config"] = required(cc, "optimizer", where);
  tc["loss"] = required(cc, "loss", where);
  for (const char* key : {"metrics", "loss_weights"})
    if (cc.contains(key) && !cc[key].is_null()) tc[key] = cc[key];
  return tc;
}

std::string keras_snake_case(const std::string& class_name) {
  std::string s;
  for (char c : class_name)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') s += c;  // \W+ dropped
  // (.)([A-Z][a-z]+) -> \1_\2, then ([a-z])([A-Z]) -> \1_\2, then lower case.
  std::string a;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && std::isupper(static_cast<unsigned char>(s[i])) && i + 1 < s.size() &&
        std::islower(static_cast<unsigned char>(s[i + 1])))
      a += '_';
    a += s[i];
  }
  std::string b;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i > 0 && std::isupper(static_cast<unsigned char>(a[i])) &&
        std::islower(static_cast<unsigned char>(a[i - 1])))
      b += '_';
    b += char(std::tolower(static_cast<unsigned char>(a[i])));
  }
  return b;
}

}  // namespace kb::model
