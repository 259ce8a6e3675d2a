// The library's DLPack structs (core/backend/dlpack.h) as offsets and sizes, for
// dlpack_layout_test.cpp to compare with dlpack.h's in a translation unit of its own (both
// define DLManagedTensor).
#include <cstddef>
#include <vector>

#include "core/backend/dlpack.h"

namespace dl = kb::dlpack;

std::vector<size_t> our_tensor_layout() {
  return {sizeof(dl::Tensor),
          offsetof(dl::Tensor, data),
          offsetof(dl::Tensor, device),
          offsetof(dl::Tensor, ndim),
          offsetof(dl::Tensor, dtype),
          offsetof(dl::Tensor, shape),
          offsetof(dl::Tensor, strides),
          offsetof(dl::Tensor, byte_offset),
          sizeof(dl::DeviceRef),
          sizeof(dl::DataType)};
}

std::vector<size_t> our_managed_layout() {
  return {sizeof(DLManagedTensor), offsetof(DLManagedTensor, dl_tensor),
          offsetof(DLManagedTensor, manager_ctx), offsetof(DLManagedTensor, deleter)};
}

std::vector<size_t> our_versioned_layout() {
  return {sizeof(DLManagedTensorVersioned),
          offsetof(DLManagedTensorVersioned, version),
          offsetof(DLManagedTensorVersioned, manager_ctx),
          offsetof(DLManagedTensorVersioned, deleter),
          offsetof(DLManagedTensorVersioned, flags),
          offsetof(DLManagedTensorVersioned, dl_tensor)};
}

std::vector<int> our_codes() {
  return {dl::kCPU,  dl::kCUDA,  dl::kCUDAHost, dl::kCUDAManaged, dl::kInt,
          dl::kUInt, dl::kFloat, dl::kBfloat,   dl::kBool};
}
