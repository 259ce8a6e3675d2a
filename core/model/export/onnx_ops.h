// The ONNX form of each primitive a model's inference graph holds: one rule per op (rows
// registered by family: onnx_ops.cpp, onnx_ops_conv.cpp, ...), emitting ONNX nodes for a node
// whose inputs are already values of the ONNX graph. A primitive without a row has no ONNX form
// (the export names it and its layer).
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "core/graph/node.h"
#include "core/model/export/onnx_graph.h"

namespace kb::model::onnx_export {

struct Lowering {
  Graph& g;
  const Node& node;
  const std::vector<std::string>& in;  // the ONNX values of node.inputs
  const std::string& hint;             // a name for the node's value
};

// Emits the node's ONNX form; returns the value holding its result.
using Rule = std::string (*)(const Lowering& l);

const Rule* rule_for(const std::string& op_name);  // null: no ONNX form

struct RuleRow {
  const char* op;  // ops::X.c_str()
  Rule rule;
};
// Registers a family's rows (at load time).
struct RuleRegistrar {
  RuleRegistrar(std::initializer_list<RuleRow> rows);
};

// Helpers the families share.
std::string transposed(Graph& g, const std::string& x, const std::vector<int64_t>& perm);
// channels last -> first and back for a tensor of rank r.
std::vector<int64_t> to_channels_first(int64_t r);
std::vector<int64_t> to_channels_last(int64_t r);

}  // namespace kb::model::onnx_export
