// Library, errors, handles, data, configuration.
#include <cstring>

#include "capi/handles.h"
#include "core/api/api.h"
#include "core/api/control.h"
#include "core/backend/threads.h"
#include "core/graph/session.h"
#include "core/ops/build.h"

namespace kb::capi {
kb_status last_code();
const char* last_message();
}  // namespace kb::capi

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API const char* kb_version(void) { return KBACKEND_VERSION_STRING; }
KB_API int32_t kb_abi_version(void) { return KB_ABI_VERSION; }
KB_API kb_status kb_last_error_code(void) { return capi::last_code(); }
KB_API const char* kb_last_error_message(void) { return capi::last_message(); }
KB_API void kb_clear_error(void) { capi::clear_error(); }
KB_API void kb_set_error(kb_status code, const char* message) {
  capi::set_error(code, message ? message : "");
}

KB_API const char* kb_dtype_name(kb_data_type dtype) {
  return is_valid_dtype(int32_t(dtype)) ? dtype_name(DType(dtype)) : nullptr;
}

KB_API kb_status kb_parse_dtype(const char* name, kb_data_type* out) {
  return guard("parse_dtype", [&] {
    out_arg(out, "parse_dtype");
    check(name != nullptr, Status::invalid_argument, "parse_dtype: name is NULL");
    auto t = parse_dtype(name);
    check(t.has_value(), Status::invalid_argument, "parse_dtype: unknown dtype '", name, "'");
    *out = kb_data_type(*t);
  });
}

KB_API kb_status kb_parse_data_format(const char* name, kb_data_format* out) {
  return capi::parse_option(
      "parse_data_format", "data_format", name, out,
      {{"channels_last", KB_CHANNELS_LAST}, {"channels_first", KB_CHANNELS_FIRST}});
}

KB_API void kb_tensor_retain(kb_tensor* t) {
  if (t) t->refs.fetch_add(1);
}
KB_API void kb_tensor_release(kb_tensor* t) {
  if (t && t->refs.fetch_sub(1) == 1) delete t;
}

KB_API kb_status kb_tensor_from_data(const void* data, kb_data_type dtype, const int64_t* shape,
                                     size_t ndim, kb_tensor** out) {
  return guard("tensor_from_data", [&] {
    out_arg(out, "tensor_from_data");
    auto b = capi::buffer_from(data, dtype, shape, ndim, "tensor_from_data");
    *out = wrap(constant_node(b));
  });
}

KB_API kb_status kb_tensor_copy_to(kb_tensor* t, void* dst, size_t nbytes) {
  return guard("tensor_copy_to", [&] {
    const NodePtr& n = tensor_arg(t, "tensor_copy_to", "tensor");
    auto b = evaluate(n);
    check(dst != nullptr || b->nbytes() == 0, Status::invalid_argument,
          "tensor_copy_to: dst is NULL");
    check(nbytes == b->nbytes(), Status::invalid_argument, "tensor_copy_to: the value has ",
          b->nbytes(), " bytes (shape ", dims_str(b->dims), ", ", dtype_name(b->dtype),
          "), the destination ", nbytes);
    if (nbytes) std::memcpy(dst, b->data(), nbytes);
  });
}

KB_API kb_status kb_tensor_nbytes(kb_tensor* t, size_t* out) {
  return guard("tensor_nbytes", [&] {
    out_arg(out, "tensor_nbytes");
    const NodePtr& n = tensor_arg(t, "tensor_nbytes", "tensor");
    if (n->value) {
      *out = n->value->nbytes();
      return;
    }
    int64_t c = n->shape().numel();
    check(c >= 0, Status::shape, "tensor_nbytes: the shape ", n->shape().str(),
          " is not fully known");
    *out = size_t(c) * dtype_size(n->dtype());
  });
}

KB_API kb_status kb_tensor_name(kb_tensor* t, const char** out) {
  return guard("tensor_name", [&] {
    out_arg(out, "tensor_name");
    *out = tensor_arg(t, "tensor_name", "tensor")->name.c_str();
  });
}

KB_API kb_status kb_tensor_id(kb_tensor* t, uint64_t* out) {
  return guard("tensor_id", [&] {
    out_arg(out, "tensor_id");
    *out = tensor_arg(t, "tensor_id", "tensor")->id;
  });
}

KB_API kb_status kb_tensor_set_keras_tensor(kb_tensor* t, int32_t flag) {
  return guard("tensor_set_keras_tensor", [&] {
    tensor_arg(t, "tensor_set_keras_tensor", "tensor")->keras_tensor = flag != 0;
  });
}

KB_API kb_status kb_tensor_uses_learning_phase(kb_tensor* t, int32_t* out) {
  return guard("tensor_uses_learning_phase", [&] {
    out_arg(out, "tensor_uses_learning_phase");
    *out = tensor_arg(t, "tensor_uses_learning_phase", "tensor")->uses_learning_phase;
  });
}

KB_API size_t kb_tensor_list_size(const kb_tensor_list* list) {
  return list ? list->items.size() : 0;
}

KB_API kb_status kb_tensor_list_get(const kb_tensor_list* list, size_t index, kb_tensor** out) {
  return guard("tensor_list_get", [&] {
    out_arg(out, "tensor_list_get");
    check(list != nullptr, Status::invalid_argument, "tensor_list_get: list is NULL");
    check(index < list->items.size(), Status::invalid_argument, "tensor_list_get: index ", index,
          " is out of range for a list of ", list->items.size());
    *out = wrap(list->items[index]);
  });
}

KB_API void kb_tensor_list_release(kb_tensor_list* list) { delete list; }

// ---- config ----------------------------------------------------------------------------------
KB_API const char* kb_backend(void) { return "kbackend"; }

KB_API kb_status kb_epsilon(double* out) {
  return guard("epsilon", [&] { *out_arg(out, "epsilon") = Session::get().epsilon(); });
}
KB_API kb_status kb_set_epsilon(double value) {
  return guard("set_epsilon", [&] { Session::get().set_epsilon(value); });
}
KB_API kb_status kb_num_threads(int32_t* out) {
  return guard("num_threads", [&] { *out_arg(out, "num_threads") = int32_t(num_threads()); });
}
KB_API kb_status kb_set_num_threads(int32_t n) {
  return guard("set_num_threads", [&] { set_num_threads(int(n)); });
}
KB_API kb_status kb_floatx(kb_data_type* out) {
  return guard("floatx", [&] { *out_arg(out, "floatx") = kb_data_type(Session::get().floatx()); });
}
KB_API kb_status kb_set_floatx(kb_data_type dtype) {
  return guard("set_floatx",
               [&] { Session::get().set_floatx(capi::dtype_arg(dtype, "set_floatx")); });
}

KB_API kb_status kb_cast_to_floatx(const void* src, kb_data_type src_dtype, size_t count,
                                   void* dst) {
  return guard("cast_to_floatx", [&] {
    int64_t n = int64_t(count);
    check(count == 0 || (src && dst), Status::invalid_argument, "cast_to_floatx: NULL buffer");
    auto b = capi::buffer_from(src, src_dtype, &n, 1, "cast_to_floatx");
    auto c = convert_buffer(b, Session::get().floatx());
    if (c->nbytes()) std::memcpy(dst, c->data(), c->nbytes());
  });
}

KB_API kb_status kb_image_data_format(kb_data_format* out) {
  return guard("image_data_format", [&] {
    *out_arg(out, "image_data_format") = kb_data_format(Session::get().image_data_format());
  });
}
KB_API kb_status kb_set_image_data_format(kb_data_format format) {
  return guard("set_image_data_format", [&] {
    check(format == KB_CHANNELS_LAST || format == KB_CHANNELS_FIRST, Status::invalid_argument,
          "set_image_data_format: unknown data_format ", int(format));
    Session::get().set_image_data_format(DataFormat(format));
  });
}
KB_API kb_status kb_image_dim_ordering(kb_dim_ordering* out) {
  return guard("image_dim_ordering", [&] {
    *out_arg(out, "image_dim_ordering") =
        Session::get().image_data_format() == DataFormat::channels_first ? KB_DIM_ORDERING_TH
                                                                         : KB_DIM_ORDERING_TF;
  });
}
KB_API kb_status kb_set_image_dim_ordering(kb_dim_ordering ordering) {
  return guard("set_image_dim_ordering", [&] {
    check(ordering == KB_DIM_ORDERING_TF || ordering == KB_DIM_ORDERING_TH,
          Status::invalid_argument, "set_image_dim_ordering: unknown dim ordering ", int(ordering),
          " (expected tf or th)");
    Session::get().set_image_data_format(
        ordering == KB_DIM_ORDERING_TH ? DataFormat::channels_first : DataFormat::channels_last);
  });
}

KB_API kb_status kb_get_uid(const char* prefix, int64_t* out) {
  return guard("get_uid",
               [&] { *out_arg(out, "get_uid") = Session::get().get_uid(capi::name_arg(prefix)); });
}
KB_API kb_status kb_reset_uids(void) {
  return guard("reset_uids", [&] { Session::get().reset_uids(); });
}
KB_API kb_status kb_clear_session(void) {
  return guard("clear_session", [&] { Session::get().clear_session(); });
}
KB_API kb_status kb_manual_variable_initialization(int32_t value) {
  return guard("manual_variable_initialization",
               [&] { Session::get().set_manual_variable_initialization(value != 0); });
}
KB_API kb_status kb_learning_phase(kb_tensor** out) {
  return guard("learning_phase", [&] {
    out_arg(out, "learning_phase");
    *out = wrap(api::learning_phase());
  });
}
KB_API kb_status kb_set_learning_phase(int32_t value) {
  return guard("set_learning_phase", [&] { Session::get().set_learning_phase(value); });
}
KB_API kb_status kb_learning_phase_scope_push(int32_t value) {
  return guard("learning_phase_scope", [&] { Session::get().push_learning_phase(value); });
}
KB_API kb_status kb_learning_phase_scope_pop(void) {
  return guard("learning_phase_scope", [&] { Session::get().pop_learning_phase(); });
}
KB_API kb_status kb_name_scope_push(const char* name) {
  return guard("name_scope", [&] {
    check(name != nullptr, Status::invalid_argument, "name_scope: name is NULL");
    Session::get().push_name_scope(name);
  });
}
KB_API kb_status kb_name_scope_pop(void) {
  return guard("name_scope", [&] { Session::get().pop_name_scope(); });
}

}  // extern "C"
