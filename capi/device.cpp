// Device queries and per-function device choice.
#include "capi/handles.h"
#include "core/backend/device.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;

static Device device_arg(kb_device_kind kind, const char* who) {
  check(kind == KB_DEVICE_CPU || kind == KB_DEVICE_CUDA, Status::invalid_argument, who,
        ": unknown device kind ", int(kind));
  return Device(kind);
}

extern "C" {

KB_API kb_status kb_device_count(kb_device_kind kind, int64_t* out) {
  return guard("device_count", [&] {
    out_arg(out, "device_count");
    *out = device_count(device_arg(kind, "device_count"));
  });
}

KB_API const char* kb_cuda_unavailable_reason(void) {
  static thread_local std::string reason;
  try {
    reason = cuda_unavailable_reason();
  } catch (...) {
    reason = "unknown";
  }
  return reason.c_str();
}

KB_API kb_status kb_function_set_device(kb_compiled_function* f, kb_device_kind kind) {
  return guard("function_set_device", [&] {
    check(f != nullptr && f->fn != nullptr, Status::invalid_argument,
          "function_set_device: f is NULL");
    f->fn->set_device(device_arg(kind, "function_set_device"));
  });
}

KB_API kb_status kb_device_index(kb_device_kind kind, int64_t position, int64_t* out) {
  return guard("device_index", [&] {
    out_arg(out, "device_index");
    *out = device_info(device_arg(kind, "device_index"), position).index;
  });
}

KB_API kb_status kb_device_name(kb_device_kind kind, int64_t position, const char** out) {
  return guard("device_name", [&] {
    out_arg(out, "device_name");
    static thread_local std::string name;
    name = device_info(device_arg(kind, "device_name"), position).name;
    *out = name.c_str();
  });
}

KB_API kb_status kb_device_memory(kb_device_kind kind, int64_t position, int64_t* out) {
  return guard("device_memory", [&] {
    out_arg(out, "device_memory");
    *out = device_info(device_arg(kind, "device_memory"), position).memory;
  });
}

KB_API kb_status kb_function_set_device_name(kb_compiled_function* f, const char* device) {
  return guard("function_set_device_name", [&] {
    check(f != nullptr && f->fn != nullptr, Status::invalid_argument,
          "function_set_device_name: f is NULL");
    check(device != nullptr, Status::invalid_argument, "function_set_device_name: device is NULL");
    f->fn->set_device(parse_device(device));
  });
}

KB_API kb_status kb_function_device_name(kb_compiled_function* f, const char** out) {
  return guard("function_device_name", [&] {
    out_arg(out, "function_device_name");
    check(f != nullptr && f->fn != nullptr, Status::invalid_argument,
          "function_device_name: f is NULL");
    static thread_local std::string label;
    label = device_label(f->fn->device());
    *out = label.c_str();
  });
}

KB_API kb_status kb_function_device(kb_compiled_function* f, kb_device_kind* out) {
  return guard("function_device", [&] {
    out_arg(out, "function_device");
    check(f != nullptr && f->fn != nullptr, Status::invalid_argument, "function_device: f is NULL");
    *out = kb_device_kind(f->fn->device());
  });
}

}  // extern "C"
