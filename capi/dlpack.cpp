// DLPack: tensors lent to and taken from other libraries (core/backend/dlpack.h).
#include "capi/handles.h"
#include "core/backend/dlpack.h"
#include "core/compile/function.h"
#include "core/ops/build.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;

namespace {

dlpack::Copy copy_arg(const kb_dlpack_copy& copy, const char* who) {
  switch (capi::raw_enum(copy)) {
    case KB_DLPACK_COPY_NEVER:
      return dlpack::Copy::never;
    case KB_DLPACK_COPY_IF_NEEDED:
      return dlpack::Copy::if_needed;
    case KB_DLPACK_COPY_ALWAYS:
      return dlpack::Copy::always;
    default:
      fail(Status::invalid_argument, who, ": copy ", capi::raw_enum(copy),
           " is not a kb_dlpack_copy");
  }
}

// The value lent: a constant's or variable's own, else the tensor evaluated.
template <class M, class Export>
void lend(kb_tensor* t, const kb_dlpack_copy& copy, M** out, const char* who, Export make) {
  out_arg(out, who);
  const NodePtr& n = tensor_arg(t, who, "tensor");
  bool copied = copy_arg(copy, who) == dlpack::Copy::always;
  *out = make(evaluate(n), n->is(ops::Constant), copied);
}

template <class M, class Import>
void take(M* managed, const kb_dlpack_copy& copy, kb_tensor** out, const char* who, Import import) {
  out_arg(out, who);
  dlpack::Taken taken = import(managed, copy_arg(copy, who), who);
  kb_tensor* h = capi::wrap(constant_node(taken.buffer));
  taken.commit();  // nothing after this throws: the managed tensor is the library's
  *out = h;
}

}  // namespace

extern "C" {

KB_API kb_status kb_tensor_to_dlpack(kb_tensor* t, kb_dlpack_copy copy,
                                     DLManagedTensorVersioned** out) {
  return guard("tensor_to_dlpack", [&] {
    lend(t, copy, out, "tensor_to_dlpack", [](auto value, bool read_only, bool copied) {
      return dlpack::export_versioned(std::move(value), read_only, copied);
    });
  });
}

KB_API kb_status kb_tensor_to_dlpack_unversioned(kb_tensor* t, kb_dlpack_copy copy,
                                                 DLManagedTensor** out) {
  return guard("tensor_to_dlpack_unversioned", [&] {
    lend(t, copy, out, "tensor_to_dlpack_unversioned", [](auto value, bool, bool copied) {
      return dlpack::export_unversioned(std::move(value), copied);
    });
  });
}

KB_API kb_status kb_tensor_from_dlpack(DLManagedTensorVersioned* managed, kb_dlpack_copy copy,
                                       kb_tensor** out) {
  return guard("tensor_from_dlpack",
               [&] { take(managed, copy, out, "tensor_from_dlpack", dlpack::import_versioned); });
}

KB_API kb_status kb_tensor_from_dlpack_unversioned(DLManagedTensor* managed, kb_dlpack_copy copy,
                                                   kb_tensor** out) {
  return guard("tensor_from_dlpack_unversioned", [&] {
    take(managed, copy, out, "tensor_from_dlpack_unversioned", dlpack::import_unversioned);
  });
}

KB_API void kb_dlpack_release(DLManagedTensorVersioned* managed) { dlpack::release(managed); }

KB_API void kb_dlpack_release_unversioned(DLManagedTensor* managed) { dlpack::release(managed); }

}  // extern "C"
