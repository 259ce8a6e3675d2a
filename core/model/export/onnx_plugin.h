// What crosses between the core and the ONNX writer (libkbackend_onnx.so, core/onnx): a graph of
// ONNX nodes the core has made from a model, which the writer turns into ONNX's protobuf
// messages, checks with ONNX's checker and writes. The core never links protobuf, so a program
// that does not export loads nothing of it. Plain C types only, as for the other plugins.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kb::onnx {

// TensorProto.DataType codes.
enum ElemType : int32_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kBfloat16 = 16,
};

// A tensor of known values (an initializer, or a node's tensor attribute).
struct TensorDesc {
  const char* name;
  int32_t elem_type;  // ElemType
  const int64_t* dims;
  size_t ndim;
  const void* data;  // row-major, little-endian
  size_t nbytes;
};

enum AttrKind : int32_t {
  kAttrInt = 0,
  kAttrFloat = 1,
  kAttrString = 2,
  kAttrInts = 3,
  kAttrFloats = 4
};

struct AttrDesc {
  const char* name;
  int32_t kind;  // AttrKind
  int64_t i;
  float f;
  const char* s;
  const int64_t* ints;
  const float* floats;
  size_t count;  // of ints or floats
};

struct NodeDesc {
  const char* op_type;
  const char* name;
  const char* const* inputs;  // "" for an optional input left out
  size_t n_inputs;
  const char* const* outputs;
  size_t n_outputs;
  const AttrDesc* attrs;
  size_t n_attrs;
};

// A graph input or output: its type, each dim a size or (dim_params[i] != NULL) a name.
struct ValueDesc {
  const char* name;
  int32_t elem_type;
  const int64_t* dims;
  const char* const* dim_params;
  size_t ndim;
};

struct GraphDesc {
  const char* name;
  int64_t opset;  // of the default domain
  const char* producer_name;
  const char* producer_version;
  const char* doc;
  const NodeDesc* nodes;  // in topological order
  size_t n_nodes;
  const TensorDesc* initializers;
  size_t n_initializers;
  const ValueDesc* inputs;
  size_t n_inputs;
  const ValueDesc* outputs;
  size_t n_outputs;
};

// The plugin's one function (extern "C" kb_onnx_plugin_write): builds the model, runs ONNX's
// checker on it (with shape inference) and writes it to `path`. Returns 0, else writes a
// NUL-terminated reason and returns 1 (the checker's refusal), 2 (the file cannot be written) or
// 3 (another failure).
using WriteFn = int32_t (*)(const GraphDesc* graph, const char* path, char* reason,
                            size_t reason_size);
constexpr const char* kWriteSymbol = "kb_onnx_plugin_write";

}  // namespace kb::onnx
