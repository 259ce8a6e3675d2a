// The library's DLPack structs (core/backend/dlpack.h) against dlpack.h's layout: Debian's
// header for the unversioned structs, DLPack 1.x's stated layout for the versioned one.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "core/backend/dlpack.h"

namespace dl = kb::dlpack;

#define SAME_FIELD(ours, theirs, field) \
  static_assert(offsetof(ours, field) == offsetof(theirs, field), #field)

static_assert(sizeof(dl::Tensor) == sizeof(DLTensor));
SAME_FIELD(dl::Tensor, DLTensor, data);
SAME_FIELD(dl::Tensor, DLTensor, device);
SAME_FIELD(dl::Tensor, DLTensor, ndim);
SAME_FIELD(dl::Tensor, DLTensor, dtype);
SAME_FIELD(dl::Tensor, DLTensor, shape);
SAME_FIELD(dl::Tensor, DLTensor, strides);
SAME_FIELD(dl::Tensor, DLTensor, byte_offset);
static_assert(sizeof(dl::DeviceRef) == sizeof(DLDevice));
static_assert(sizeof(dl::DataType) == sizeof(DLDataType));
static_assert(sizeof(dl::Managed) == sizeof(DLManagedTensor));
SAME_FIELD(dl::Managed, DLManagedTensor, dl_tensor);
SAME_FIELD(dl::Managed, DLManagedTensor, manager_ctx);
SAME_FIELD(dl::Managed, DLManagedTensor, deleter);
// DLManagedTensorVersioned: version (two uint32), manager_ctx, deleter, uint64 flags, then the
// DLTensor.
static_assert(offsetof(dl::ManagedVersioned, manager_ctx) == 8);
static_assert(offsetof(dl::ManagedVersioned, deleter) == 16);
static_assert(offsetof(dl::ManagedVersioned, flags) == 24);
static_assert(offsetof(dl::ManagedVersioned, dl_tensor) == 32);
static_assert(sizeof(dl::ManagedVersioned) == 32 + sizeof(DLTensor));

TEST(DLPackLayout, CodesMatchTheStandard) {
  EXPECT_EQ(int(dl::kCPU), int(kDLCPU));
  EXPECT_EQ(int(dl::kCUDA), int(kDLCUDA));
  EXPECT_EQ(int(dl::kCUDAHost), int(kDLCUDAHost));
  EXPECT_EQ(int(dl::kCUDAManaged), 13);
  EXPECT_EQ(int(dl::kInt), int(kDLInt));
  EXPECT_EQ(int(dl::kUInt), int(kDLUInt));
  EXPECT_EQ(int(dl::kFloat), int(kDLFloat));
  EXPECT_EQ(int(dl::kBfloat), int(kDLBfloat));
  EXPECT_EQ(int(dl::kBool), 6);
}
