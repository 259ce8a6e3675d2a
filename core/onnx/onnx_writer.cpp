// libkbackend_onnx.so: the graph the core made (core/model/export/onnx_plugin.h) as ONNX's
// protobuf messages (Debian's libonnx: onnx-ml.proto's generated classes), checked by ONNX's own
// checker and shape inference, then written. Nothing here knows Keras.
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>

#include "core/model/export/onnx_plugin.h"

namespace {

using namespace kb::onnx;

void fill_tensor(const TensorDesc& t, ::onnx::TensorProto* p) {
  p->set_name(t.name);
  p->set_data_type(t.elem_type);
  for (size_t i = 0; i < t.ndim; ++i) p->add_dims(t.dims[i]);
  p->set_raw_data(t.data, t.nbytes);
}

void fill_value(const ValueDesc& v, ::onnx::ValueInfoProto* p) {
  p->set_name(v.name);
  auto* tensor = p->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(v.elem_type);
  auto* shape = tensor->mutable_shape();
  for (size_t i = 0; i < v.ndim; ++i) {
    auto* d = shape->add_dim();
    if (v.dim_params && v.dim_params[i])
      d->set_dim_param(v.dim_params[i]);
    else
      d->set_dim_value(v.dims[i]);
  }
}

void fill_node(const NodeDesc& n, ::onnx::NodeProto* p) {
  p->set_op_type(n.op_type);
  p->set_name(n.name);
  for (size_t i = 0; i < n.n_inputs; ++i) p->add_input(n.inputs[i]);
  for (size_t i = 0; i < n.n_outputs; ++i) p->add_output(n.outputs[i]);
  for (size_t k = 0; k < n.n_attrs; ++k) {
    const AttrDesc& a = n.attrs[k];
    auto* q = p->add_attribute();
    q->set_name(a.name);
    switch (a.kind) {
      case kAttrInt:
        q->set_type(::onnx::AttributeProto::INT);
        q->set_i(a.i);
        break;
      case kAttrFloat:
        q->set_type(::onnx::AttributeProto::FLOAT);
        q->set_f(a.f);
        break;
      case kAttrString:
        q->set_type(::onnx::AttributeProto::STRING);
        q->set_s(a.s);
        break;
      case kAttrInts:
        q->set_type(::onnx::AttributeProto::INTS);
        for (size_t i = 0; i < a.count; ++i) q->add_ints(a.ints[i]);
        break;
      case kAttrFloats:
        q->set_type(::onnx::AttributeProto::FLOATS);
        for (size_t i = 0; i < a.count; ++i) q->add_floats(a.floats[i]);
        break;
    }
  }
}

void say(char* reason, size_t size, const std::string& text) {
  if (size) std::snprintf(reason, size, "%s", text.c_str());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t kb_onnx_plugin_write(const GraphDesc* g,
                                                                               const char* path,
                                                                               char* reason,
                                                                               size_t reason_size) {
  try {
    ::onnx::ModelProto model;
    model.set_ir_version(::onnx::IR_VERSION);
    model.set_producer_name(g->producer_name);
    model.set_producer_version(g->producer_version);
    if (g->doc) model.set_doc_string(g->doc);
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(g->opset);
    auto* graph = model.mutable_graph();
    graph->set_name(g->name);
    for (size_t i = 0; i < g->n_nodes; ++i) fill_node(g->nodes[i], graph->add_node());
    for (size_t i = 0; i < g->n_initializers; ++i)
      fill_tensor(g->initializers[i], graph->add_initializer());
    for (size_t i = 0; i < g->n_inputs; ++i) fill_value(g->inputs[i], graph->add_input());
    for (size_t i = 0; i < g->n_outputs; ++i) fill_value(g->outputs[i], graph->add_output());
    try {
      ::onnx::checker::check_model(model);
      ::onnx::ModelProto inferred = model;  // shape inference in strict mode, as a check only
      ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(),
                                           ::onnx::ShapeInferenceOptions(true, 1, false));
    } catch (const std::exception& e) {
      say(reason, reason_size, std::string("ONNX's checker refuses the graph: ") + e.what());
      return 1;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out || !model.SerializeToOstream(&out) || !out.flush()) {
      say(reason, reason_size, std::string("cannot write ") + path + ": " + std::strerror(errno));
      return 2;
    }
    return 0;
  } catch (const std::exception& e) {
    say(reason, reason_size, e.what());
    return 3;
  } catch (...) {
    say(reason, reason_size, "an exception of unknown type");
    return 3;
  }
}
