// NumPy's .npy files as constants (core/model/data/npy_file.h).
#include "capi/handles.h"
#include "core/backend/device.h"
#include "core/compile/function.h"
#include "core/model/data/npy_file.h"
#include "core/ops/build.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::string_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API kb_status kb_tensor_from_npy(const char* path, int32_t mapped, kb_tensor** out) {
  return guard("tensor_from_npy", [&] {
    out_arg(out, "tensor_from_npy");
    *out = wrap(
        constant_node(model::read_npy(string_arg(path, "tensor_from_npy", "path"), mapped != 0)));
  });
}

KB_API kb_status kb_tensor_save_npy(kb_tensor* t, const char* path) {
  return guard("tensor_save_npy", [&] {
    const NodePtr& n = tensor_arg(t, "tensor_save_npy", "tensor");
    model::write_npy(*to_host(evaluate(n)), string_arg(path, "tensor_save_npy", "path"));
  });
}

}  // extern "C"
