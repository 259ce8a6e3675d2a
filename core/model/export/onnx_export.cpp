#include "core/model/export/onnx_export.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/compile/function.h"
#include "core/graph/scalar.h"
#include "core/model/export/onnx_graph.h"
#include "core/model/export/onnx_ops.h"
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/ops/op_names.h"
#include "core/ops/substitute.h"
#include "core/util/error.h"

namespace kb::model {

namespace {

using onnx_export::Graph;

// The opset whose operator forms the rules write.
constexpr int64_t kOpset = 17;

class Exporter {
 public:
  Exporter(const Model& m, Graph& g, const char* who) : g_(g), who_(who) { index_layers(m); }

  void bind_input(const NodePtr& placeholder, const std::string& name) {
    names_[placeholder.get()] = name;
    inputs_.insert(placeholder.get());
  }

  // The ONNX value holding `root`, emitting what it needs first (post-order without recursion:
  // models are deep).
  std::string value_of(const NodePtr& root) {
    std::vector<std::pair<NodePtr, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      NodePtr n = stack.back().first;
      size_t& next = stack.back().second;
      if (names_.count(n.get())) {
        stack.pop_back();
      } else if (!reads_input(n)) {
        names_[n.get()] = fold(n);
        stack.pop_back();
      } else if (n->is(ops::Switch) && !reads_input(n->inputs[0])) {
        // A choice by a condition known now (the learning phase: 0) takes one branch only.
        const NodePtr& taken = condition(n->inputs[0]) ? n->inputs[1] : n->inputs[2];
        if (auto it = names_.find(taken.get()); it != names_.end()) {
          names_[n.get()] = it->second;
          stack.pop_back();
        } else {
          stack.push_back({taken, 0});
        }
      } else if (next < n->inputs.size()) {
        NodePtr in = n->inputs[next++];
        if (!names_.count(in.get())) stack.push_back({in, 0});
      } else {
        names_[n.get()] = lower(*n, stack);
        stack.pop_back();
      }
    }
    return names_.at(root.get());
  }

 private:
  // Whether n depends on a model input (memoized, without recursion).
  bool reads_input(const NodePtr& root) {
    std::vector<const Node*> stack{root.get()};
    while (!stack.empty()) {
      const Node* n = stack.back();
      if (reads_.count(n)) {
        stack.pop_back();
        continue;
      }
      if (n->is(ops::Placeholder)) {
        check(inputs_.count(n) != 0, Status::invalid_argument, who_,
              ": the model's graph reads the placeholder '", n->name,
              "', which is not one of its inputs");
        reads_[n] = true;
        stack.pop_back();
        continue;
      }
      bool pending = false, reads = false;
      for (const NodePtr& in : n->inputs) {
        auto it = reads_.find(in.get());
        if (it == reads_.end()) {
          stack.push_back(in.get());
          pending = true;
        } else {
          reads = reads || it->second;
        }
      }
      if (pending) continue;
      reads_[n] = reads;
      stack.pop_back();
    }
    return reads_.at(root.get());
  }

  bool condition(const NodePtr& c) {
    refuse_random(c);
    auto b = evaluate(c);
    return read_scalar(b->dtype, b->data()) != 0;
  }

  // A value that depends on no input (a weight, or what is computed from weights): computed
  // now, an initializer.
  std::string fold(const NodePtr& n) {
    refuse_random(n);
    return g_.initializer(n->name.empty() ? "const" : n->name, evaluate(n));
  }

  void refuse_random(const NodePtr& root) {
    std::vector<const Node*> stack{root.get()};
    std::unordered_set<const Node*> seen;
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      check(!n->is(ops::Random), Status::not_implemented, who_,
            ": the inference graph draws random numbers ('", n->name,
            "'), which an ONNX graph of known values cannot");
      for (const NodePtr& in : n->inputs) stack.push_back(in.get());
    }
  }

  // Each layer's outputs, nested models' layers too, for naming the layer of a node.
  void index_layers(const Model& m) {
    for (const auto& layer : m.layers()) {
      for (uint64_t id : layer->output_ids()) layer_of_.emplace(id, layer->where());
      if (const Model* inner = layer->nested_model()) index_layers(*inner);
    }
  }

  // The layer a node being lowered belongs to: the first layer output on its way to the
  // model's outputs (the stack of the walk).
  std::string layer_of(const std::vector<std::pair<NodePtr, size_t>>& stack) const {
    for (size_t i = stack.size(); i-- > 0;)
      if (auto it = layer_of_.find(stack[i].first->id); it != layer_of_.end()) return it->second;
    return "the model";
  }

  std::string lower(const Node& n, const std::vector<std::pair<NodePtr, size_t>>& stack) {
    std::vector<std::string> in;
    for (const NodePtr& x : n.inputs) in.push_back(names_.at(x.get()));
    const std::string hint = n.name.empty() ? n.op->name : n.name;
    if (n.is(ops::Switch))  // a condition computed from the inputs: both branches, chosen
      return g_.node("Where", {in[0], in[1], in[2]}, {}, hint);
    const onnx_export::Rule* rule = onnx_export::rule_for(n.op->name);
    check(rule != nullptr, Status::not_implemented, who_, ": ", layer_of(stack),
          " computes with the operation ", n.op->name, ", which has no ONNX form here");
    return (*rule)({g_, n, in, hint});
  }

  Graph& g_;
  const char* who_;
  std::unordered_map<const Node*, std::string> names_;
  std::unordered_map<const Node*, bool> reads_;
  std::unordered_set<const Node*> inputs_;
  std::unordered_map<uint64_t, std::string> layer_of_;
};

// A graph input or output of `node`'s type; unknown dims named, the first "batch" (fixed to
// batch_size when it is given).
onnx_export::Value value_info(const std::string& name, const Node& node, int64_t batch_size,
                              const char* who) {
  check(node.shape().rank_known, Status::not_implemented, who, ": '", name,
        "' has an unknown rank, which an ONNX graph's inputs and outputs cannot");
  onnx_export::Value v{name, node.dtype(), node.shape().dims, {}};
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i == 0 && batch_size > 0 && v.dims[0] < 0) v.dims[0] = batch_size;
    v.dim_params.push_back(v.dims[i] >= 0 ? "" : i == 0 ? "batch" : "d" + std::to_string(i));
  }
  return v;
}

}  // namespace

OnnxExportOptions onnx_export_options_from_json(const Json& o, const std::string& who) {
  OnnxExportOptions opts;
  opts.opset = int_or(o, "opset", opts.opset, who);
  opts.batch_size = int_or(o, "batch_size", 0, who);
  return opts;
}

void export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options,
                 const char* who) {
  check(options.opset == kOpset, Status::not_implemented, who, ": opset ", options.opset,
        "; the export writes ONNX opset ", kOpset, "'s operators");
  check(options.batch_size >= 0, Status::invalid_argument, who, ": batch_size ", options.batch_size,
        " is negative");
  Graph g(options.opset);
  Exporter ex(model, g, who);
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const NodePtr& x = model.inputs()[i];
    onnx_export::Value v = value_info(model.input_names()[i], *x, options.batch_size, who);
    ex.bind_input(x, v.name);
    g.add_input(std::move(v));
  }
  // The graph predict runs: the learning phase a constant 0.
  Tensors outputs = model.outputs();
  if (const NodePtr& phase = model.phase()) {
    auto zero = Buffer::make(phase->dtype(), {});
    std::memset(zero->data(), 0, zero->nbytes());
    try {
      outputs = substituted(outputs, phase, constant_node(zero, "learning_phase"));
    } catch (const Error& e) {  // a loop's body reads it: a recurrent layer's dropout
      fail(Status::not_implemented, who,
           ": a recurrent layer reads the learning phase in its "
           "loop (dropout), which the export cannot fix to 0 there (",
           e.what(), ")");
    }
  }
  // The outputs' names first, so that no value made on the way takes one.
  std::vector<onnx_export::Value> outs;
  for (size_t k = 0; k < outputs.size(); ++k) {
    outs.push_back(value_info(model.output_names()[k], *outputs[k], options.batch_size, who));
    outs.back().name = g.fresh(outs.back().name);  // an output named as an input: its own name
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    g.node_into("Identity", {ex.value_of(outputs[k])}, {}, outs[k].name);
    g.add_output(std::move(outs[k]));
  }
  g.write(path, model.name(), "Keras model '" + model.name() + "' exported by kbackend", who);
}

}  // namespace kb::model
