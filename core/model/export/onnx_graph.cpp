#include "core/model/export/onnx_graph.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>

#include "core/backend/plugin_file.h"
#include "core/graph/scalar.h"
#include "core/model/export/onnx_plugin.h"
#include "core/util/error.h"

namespace kb::model::onnx_export {

Attr Attr::of_int(std::string name, int64_t v) {
  Attr a;
  a.name = std::move(name);
  a.kind = onnx::kAttrInt;
  a.i = v;
  return a;
}
Attr Attr::of_float(std::string name, double v) {
  Attr a;
  a.name = std::move(name);
  a.kind = onnx::kAttrFloat;
  a.f = float(v);
  return a;
}
Attr Attr::of_string(std::string name, std::string v) {
  Attr a;
  a.name = std::move(name);
  a.kind = onnx::kAttrString;
  a.s = std::move(v);
  return a;
}
Attr Attr::of_ints(std::string name, std::vector<int64_t> v) {
  Attr a;
  a.name = std::move(name);
  a.kind = onnx::kAttrInts;
  a.ints = std::move(v);
  return a;
}

int32_t elem_type(DType t) {
  switch (t) {
    case DType::f16:
      return onnx::kFloat16;
    case DType::f32:
      return onnx::kFloat;
    case DType::f64:
      return onnx::kDouble;
    case DType::bf16:
      return onnx::kBfloat16;
    case DType::i8:
      return onnx::kInt8;
    case DType::i16:
      return onnx::kInt16;
    case DType::i32:
      return onnx::kInt32;
    case DType::i64:
      return onnx::kInt64;
    case DType::u8:
      return onnx::kUint8;
    case DType::b8:
      return onnx::kBool;
  }
  fail(Status::internal, "export_onnx: no ONNX type for dtype ", int(t));
}

std::string Graph::fresh(const std::string& hint) {
  // ONNX names are free text; ':' and spaces are kept out for the tools that print them.
  std::string base = hint.empty() ? "v" : hint;
  for (char& c : base)
    if (c == ':' || c == ' ') c = '_';
  std::string name = base;
  while (!names_.insert(name).second) name = base + "_" + std::to_string(++counter_);
  return name;
}

std::string Graph::node(const std::string& op_type, std::vector<std::string> inputs,
                        std::vector<Attr> attrs, const std::string& hint) {
  std::string out = fresh(hint.empty() ? op_type : hint);
  node_into(op_type, std::move(inputs), std::move(attrs), out);
  return out;
}

void Graph::node_into(const std::string& op_type, std::vector<std::string> inputs,
                      std::vector<Attr> attrs, const std::string& output) {
  names_.insert(output);
  nodes_.push_back(
      {op_type, fresh(output + "/" + op_type), std::move(inputs), {output}, std::move(attrs)});
}

std::string Graph::initializer(const std::string& hint, std::shared_ptr<Buffer> value) {
  check(value && value->device == Device::cpu, Status::internal,
        "export_onnx: an initializer's value is not in host memory");
  std::string name = fresh(hint);
  initializers_.push_back({name, std::move(value)});
  return name;
}

std::string Graph::int64s(const std::vector<int64_t>& values, const std::string& hint) {
  return initializer(hint, Buffer::from_bytes(DType::i64, {int64_t(values.size())}, values.data()));
}

std::string Graph::scalar(double value, DType dtype, const std::string& hint) {
  auto b = Buffer::make(dtype, {});
  write_scalar(dtype, b->data(), value);
  return initializer(hint, b);
}

namespace {

onnx::WriteFn load_writer(const char* who) {
  static std::mutex mu;
  static onnx::WriteFn writer = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (writer) return writer;
  bool named = false;
  std::string path = plugin_file("KB_ONNX_PLUGIN", "libkbackend_onnx.so", &named);
  check(!path.empty(), Status::unavailable, who, ": cannot locate the core library");
  check(access(path.c_str(), R_OK) == 0, Status::unavailable, who, ": the ONNX plugin ", path,
        " is not there (the library was built without ONNX: install Debian's libonnx-dev and "
        "libprotobuf-dev and rebuild)");
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    fail(Status::unavailable, who,
         ": the ONNX plugin did not load (are libonnx1 and libprotobuf "
         "installed?): ",
         path, ": ", e ? e : "");
  }
  writer = reinterpret_cast<onnx::WriteFn>(dlsym(h, onnx::kWriteSymbol));
  check(writer != nullptr, Status::unavailable, who, ": ", path, " has no ", onnx::kWriteSymbol);
  return writer;
}

}  // namespace

void Graph::write(const std::string& path, const std::string& graph_name, const std::string& doc,
                  const char* who) const {
  onnx::WriteFn writer = load_writer(who);
  // The plain view the plugin reads, over this graph's strings and buffers.
  std::vector<std::vector<const char*>> names;
  std::vector<std::vector<onnx::AttrDesc>> attrs;
  std::vector<onnx::NodeDesc> nodes;
  names.reserve(nodes_.size() * 2 + inputs_.size() + outputs_.size());
  attrs.reserve(nodes_.size());
  for (const NodeRow& n : nodes_) {
    auto& ins = names.emplace_back();
    for (const auto& s : n.inputs) ins.push_back(s.c_str());
    auto& outs = names.emplace_back();
    for (const auto& s : n.outputs) outs.push_back(s.c_str());
    auto& as = attrs.emplace_back();
    for (const Attr& a : n.attrs)
      as.push_back({a.name.c_str(), a.kind, a.i, a.f, a.s.c_str(), a.ints.data(), a.floats.data(),
                    a.kind == onnx::kAttrInts ? a.ints.size() : a.floats.size()});
    nodes.push_back({n.op_type.c_str(), n.name.c_str(), ins.data(), ins.size(), outs.data(),
                     outs.size(), as.data(), as.size()});
  }
  std::vector<onnx::TensorDesc> inits;
  for (const Init& i : initializers_)
    inits.push_back({i.name.c_str(), elem_type(i.value->dtype), i.value->dims.data(),
                     i.value->dims.size(), i.value->data(), i.value->nbytes()});
  auto values = [&](const std::vector<Value>& vs) {
    std::vector<onnx::ValueDesc> out;
    for (const Value& v : vs) {
      auto& params = names.emplace_back();
      for (const auto& p : v.dim_params) params.push_back(p.empty() ? nullptr : p.c_str());
      out.push_back(
          {v.name.c_str(), elem_type(v.dtype), v.dims.data(), params.data(), v.dims.size()});
    }
    return out;
  };
  std::vector<onnx::ValueDesc> ins = values(inputs_), outs = values(outputs_);
  onnx::GraphDesc g{graph_name.c_str(), opset_,       "kbackend",   KBACKEND_VERSION_STRING,
                    doc.c_str(),        nodes.data(), nodes.size(), inits.data(),
                    inits.size(),       ins.data(),   ins.size(),   outs.data(),
                    outs.size()};
  char reason[4096] = {0};
  int32_t rc = writer(&g, path.c_str(), reason, sizeof reason);
  if (rc == 1) fail(Status::not_implemented, who, ": ", reason);
  if (rc == 2) fail(Status::io, who, ": ", reason);
  check(rc == 0, Status::internal, who, ": the ONNX plugin failed: ", reason);
}

}  // namespace kb::model::onnx_export
