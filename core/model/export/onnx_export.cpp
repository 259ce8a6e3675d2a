#include "core/model/export/onnx_export.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/compile/function.h"
#include "core/graph/subgraph.h"
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
  Exporter(const Model& m, Graph& g, const char* who) : g_(g), who_(who), folded_(&own_folded_) {
    index_layers(m);
  }
  // For one step of a loop's body: the same graph, the values folded so far shared, messages
  // naming the layer of the loop.
  Exporter(const Exporter& outer, std::string layer)
      : g_(outer.g_), who_(outer.who_), folded_(outer.folded_), context_(std::move(layer)) {}

  // A placeholder whose value is known now (the learning phase predict feeds: 0).
  void bind_known(const NodePtr& placeholder, std::shared_ptr<Buffer> value) {
    known_[placeholder.get()] = {placeholder, constant_node(std::move(value), placeholder->name)};
  }

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
        auto it = folded_->find(n.get());
        names_[n.get()] = it != folded_->end() ? it->second : ((*folded_)[n.get()] = fold(n));
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
      if (known_.count(n)) {  // the learning phase: a constant
        reads_[n] = false;
        stack.pop_back();
        continue;
      }
      if (inputs_.count(n)) {  // bound: a model input, or a loop body's per-step value
        reads_[n] = true;
        stack.pop_back();
        continue;
      }
      if (n->is(ops::Placeholder))  // bound ones were answered above
        fail(Status::invalid_argument, who_, ": the model's graph reads the placeholder '", n->name,
             "', which is not one of its inputs");
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
    auto b = computed(c);
    return read_scalar(b->dtype, b->data()) != 0;
  }

  // A value that depends on no input (a weight, or what is computed from weights and the
  // learning phase): computed now, an initializer.
  std::string fold(const NodePtr& n) {
    return g_.initializer(n->name.empty() ? "const" : n->name, computed(n));
  }

  std::shared_ptr<Buffer> computed(const NodePtr& n) {
    refuse_random(n);
    NodePtr root = n;
    for (const auto& [node, known] : known_)
      root = substituted({root}, known.first, known.second)[0];
    return evaluate(root);
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
    return context_.empty() ? "the model" : context_;
  }

  // A Loop unrolled over its sequences' known length: per step, the body lowered with its
  // per-step inputs (Gather of index t), the states so far and the captured values bound; the
  // step outputs stacked in index order. parts_ keeps what TupleGet reads: the stacked outputs,
  // then the final states.
  std::string lower_loop(const Node& n, const std::vector<std::string>& in,
                         const std::string& layer) {
    const auto& body = *n.attrs.graph(attr::body);
    const size_t n_seq = size_t(n.attrs.i(attr::n_seq)), n_state = size_t(n.attrs.i(attr::n_state)),
                 n_out = size_t(n.attrs.i(attr::n_out));
    const bool reverse = n.attrs.i(attr::reverse) != 0;
    check(n_seq > 0 && n.inputs[0]->shape().rank_known && n.inputs[0]->shape().dims[0] > 0,
          Status::not_implemented, who_, ": ", layer,
          " loops over a sequence of unknown length, which the export unrolls only when known");
    const int64_t steps = n.inputs[0]->shape().dims[0];
    std::vector<std::string> states(in.begin() + int64_t(n_seq),
                                    in.begin() + int64_t(n_seq + n_state));
    std::vector<std::vector<std::string>> outs(n_out, std::vector<std::string>(size_t(steps)));
    for (int64_t k = 0; k < steps; ++k) {
      const int64_t t = reverse ? steps - 1 - k : k;
      Exporter step(*this, layer);
      std::string at = g_.scalar(double(t), DType::i64, "t");
      for (size_t i = 0; i < n_seq; ++i)
        step.bind_input(body.inputs[i],
                        g_.node("Gather", {in[i], at}, {onnx_export::Attr::of_int("axis", 0)}));
      for (size_t i = 0; i < n_state; ++i) step.bind_input(body.inputs[n_seq + i], states[i]);
      for (size_t i = n_seq + n_state; i < body.inputs.size(); ++i) {
        step.bind_input(body.inputs[i], in[i]);
        if (auto it = known_.find(n.inputs[i].get()); it != known_.end())  // the phase, captured
          step.known_[body.inputs[i].get()] = {body.inputs[i], it->second.second};
      }
      for (size_t i = 0; i < n_out; ++i) outs[i][size_t(t)] = step.value_of(body.outputs[i]);
      for (size_t i = 0; i < n_state; ++i) states[i] = step.value_of(body.outputs[n_out + i]);
    }
    std::vector<std::string>& parts = parts_[&n];
    for (size_t i = 0; i < n_out; ++i) {
      std::vector<std::string> rows;
      for (const std::string& v : outs[i])
        rows.push_back(g_.node("Unsqueeze", {v, g_.int64s({0}, "axes")}));
      parts.push_back(g_.node("Concat", rows, {onnx_export::Attr::of_int("axis", 0)}));
    }
    parts.insert(parts.end(), states.begin(), states.end());
    return "";  // the loop's results are read through TupleGet
  }

  std::string lower(const Node& n, const std::vector<std::pair<NodePtr, size_t>>& stack) {
    std::vector<std::string> in;
    for (const NodePtr& x : n.inputs) in.push_back(names_.at(x.get()));
    const std::string hint = n.name.empty() ? n.op->name : n.name;
    if (n.is(ops::Switch))  // a condition computed from the inputs: both branches, chosen
      return g_.node("Where", {in[0], in[1], in[2]}, {}, hint);
    if (n.is(ops::Loop)) return lower_loop(n, in, layer_of(stack));
    if (n.is(ops::TupleGet) && n.inputs[0]->is(ops::Loop)) {
      const std::vector<std::string>& parts = parts_.at(n.inputs[0].get());
      const int64_t k = n.attrs.i(attr::index);
      check(k >= 0 && size_t(k) < parts.size(), Status::not_implemented, who_, ": ",
            layer_of(stack), " reads its loop's per-step states, which inference does not");
      return g_.node("Identity", {parts[size_t(k)]}, {}, hint);
    }
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
  std::unordered_map<const Node*, std::vector<std::string>> parts_;  // of the loops lowered
  // Values that read no input, folded once for every step of every loop.
  std::unordered_map<const Node*, std::string> own_folded_;
  std::unordered_map<const Node*, std::string>* folded_;
  std::string context_;  // in a loop's body: the layer of the loop
  // Placeholders of known values and the constants standing for them.
  std::unordered_map<const Node*, std::pair<NodePtr, NodePtr>> known_;
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
  // The graph predict runs: the learning phase 0.
  const Tensors& outputs = model.outputs();
  if (const NodePtr& phase = model.phase()) {
    auto zero = Buffer::make(phase->dtype(), {});
    std::memset(zero->data(), 0, zero->nbytes());
    ex.bind_known(phase, zero);
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
