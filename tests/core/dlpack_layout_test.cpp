// The library's DLPack structs (dlpack_layout_ours.cpp) against dlpack.h's layout: Debian's
// header (libdlpack-dev) for the unversioned structs and the codes, DLPack 1.x's stated layout
// for the versioned one (which that header predates).
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

std::vector<size_t> our_tensor_layout();
std::vector<size_t> our_managed_layout();
std::vector<size_t> our_versioned_layout();
std::vector<int> our_codes();

TEST(DLPackLayout, TheTensorAndTheUnversionedStructAreDlpackHs) {
  EXPECT_EQ(
      our_tensor_layout(),
      (std::vector<size_t>{sizeof(DLTensor), offsetof(DLTensor, data), offsetof(DLTensor, device),
                           offsetof(DLTensor, ndim), offsetof(DLTensor, dtype),
                           offsetof(DLTensor, shape), offsetof(DLTensor, strides),
                           offsetof(DLTensor, byte_offset), sizeof(DLDevice), sizeof(DLDataType)}));
  EXPECT_EQ(our_managed_layout(),
            (std::vector<size_t>{sizeof(DLManagedTensor), offsetof(DLManagedTensor, dl_tensor),
                                 offsetof(DLManagedTensor, manager_ctx),
                                 offsetof(DLManagedTensor, deleter)}));
}

TEST(DLPackLayout, TheVersionedStructIsTheStandards) {
  // version (two uint32), manager_ctx, deleter, uint64 flags, then the DLTensor.
  EXPECT_EQ(our_versioned_layout(), (std::vector<size_t>{32 + sizeof(DLTensor), 0, 8, 16, 24, 32}));
}

TEST(DLPackLayout, CodesMatchTheStandard) {
  EXPECT_EQ(our_codes(), (std::vector<int>{kDLCPU, kDLCUDA, kDLCUDAHost, 13, kDLInt, kDLUInt,
                                           kDLFloat, kDLBfloat, 6}));
}
