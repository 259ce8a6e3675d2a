// The ONNX form of each primitive a model's inference graph holds: one rule per op (a row of the
// table in onnx_ops.cpp), emitting ONNX nodes for a node whose inputs are already values of the
// ONNX graph. A primitive without a row has no ONNX form (the export names it and its layer).
#pragma once
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

}  // namespace kb::model::onnx_export
