// A model's inference graph as an ONNX model (kb_model_export_onnx): the graph predict runs (the
// learning phase 0), each primitive by its rule (onnx_ops.h), the weights and every value that
// depends on no input as initializers, the inputs' unknown dims named ("batch" first).
#pragma once
#include <cstdint>
#include <string>

#include "core/model/model.h"

namespace kb::model {

struct OnnxExportOptions {
  int64_t opset = 17;      // of ONNX's default domain: 17 or newer
  int64_t batch_size = 0;  // > 0: the inputs' and outputs' first dim fixed to it
};

// The options from kb_model_export_onnx's options_json (checked against its option set); `who`
// names them in messages.
OnnxExportOptions onnx_export_options_from_json(const Json& options, const std::string& who);

// Writes the model to `path`; a primitive with no ONNX form fails naming it and its layer.
void export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options,
                 const char* who);

}  // namespace kb::model
