// An ONNX graph being made (nodes, initializers, inputs, outputs by value name), and its writing
// through the ONNX plugin (libkbackend_onnx.so: onnx_plugin.h), which checks it with ONNX's
// checker first.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/graph/buffer.h"
#include "core/graph/dtype.h"

namespace kb::model::onnx_export {

struct Attr {
  std::string name;
  int32_t kind = 0;  // onnx::AttrKind
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;

  static Attr of_int(std::string name, int64_t v);
  static Attr of_float(std::string name, double v);
  static Attr of_string(std::string name, std::string v);
  static Attr of_ints(std::string name, std::vector<int64_t> v);
};

// A graph input or output: dims of -1 are named (dim_params: "batch" for the first, "d<i>").
struct Value {
  std::string name;
  DType dtype;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;  // "" for a dim of known size
};

// ONNX's element type of a dtype.
int32_t elem_type(DType t);

class Graph {
 public:
  explicit Graph(int64_t opset) : opset_(opset) {}
  int64_t opset() const { return opset_; }

  // A fresh value name from `hint` (a node's or a weight's name).
  std::string fresh(const std::string& hint);
  // A node of one output; returns the output's name.
  std::string node(const std::string& op_type, std::vector<std::string> inputs,
                   std::vector<Attr> attrs = {}, const std::string& hint = "");
  // The same with its output named `output`.
  void node_into(const std::string& op_type, std::vector<std::string> inputs,
                 std::vector<Attr> attrs, const std::string& output);
  // An initializer holding `value` (host memory); returns its name.
  std::string initializer(const std::string& hint, std::shared_ptr<Buffer> value);
  std::string int64s(const std::vector<int64_t>& values, const std::string& hint = "shape");
  std::string scalar(double value, DType dtype, const std::string& hint = "scalar");
  void add_input(Value v) {
    names_.insert(v.name);
    inputs_.push_back(std::move(v));
  }
  void add_output(Value v) { outputs_.push_back(std::move(v)); }

  // Checks and writes the model to `path` (fails naming `who`: the plugin missing, ONNX's
  // checker refusing the graph, the file not writable).
  void write(const std::string& path, const std::string& graph_name, const std::string& doc,
             const char* who) const;

 private:
  struct NodeRow {
    std::string op_type, name;
    std::vector<std::string> inputs, outputs;
    std::vector<Attr> attrs;
  };
  struct Init {
    std::string name;
    std::shared_ptr<Buffer> value;
  };
  int64_t opset_;
  std::vector<NodeRow> nodes_;
  std::vector<Init> initializers_;
  std::vector<Value> inputs_, outputs_;
  std::unordered_set<std::string> names_;
  size_t counter_ = 0;
};

}  // namespace kb::model::onnx_export
