// DLPack (github.com/dmlc/dlpack, 1.x): a Buffer lent to another library, and another library's
// memory taken as a Buffer, without copying. The structs below are the standard's C layout; the
// two managed ones complete the C ABI's DLManagedTensor and DLManagedTensorVersioned (under those
// names, so that a deleter is called through the very type its producer gave it), and
// tests/core/dlpack_layout_test.cpp holds them to a dlpack.h.
#pragma once
#include <cstdint>
#include <memory>

#include "core/graph/buffer.h"

namespace kb::dlpack {

// DLDeviceType values this library meets.
enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kCUDAManaged = 13 };
// DLDataTypeCode values.
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kBool = 6 };
// DLManagedTensorVersioned::flags bits.
constexpr uint64_t kFlagReadOnly = 1u << 0;
constexpr uint64_t kFlagIsCopied = 1u << 1;
// The version this library writes (and the major version it reads).
constexpr uint32_t kMajorVersion = 1, kMinorVersion = 1;

struct Version {
  uint32_t major, minor;
};
struct DeviceRef {
  int32_t device_type;  // DLDeviceType
  int32_t device_id;
};
struct DataType {
  uint8_t code, bits;
  uint16_t lanes;
};
struct Tensor {
  void* data;
  DeviceRef device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL: compact row-major
  uint64_t byte_offset;
};

}  // namespace kb::dlpack

struct DLManagedTensor {
  kb::dlpack::Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLManagedTensorVersioned {
  kb::dlpack::Version version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  kb::dlpack::Tensor dl_tensor;
};

namespace kb::dlpack {

using Managed = ::DLManagedTensor;
using ManagedVersioned = ::DLManagedTensorVersioned;

// What to do with memory the library cannot read in place (strides other than row-major
// compact, data not aligned to its element).
enum class Copy { never, if_needed, always };

// A managed tensor over `value`'s storage (host memory), holding a reference to it until the
// consumer calls its deleter (from any thread, once). copy: a fresh copy instead.
ManagedVersioned* export_versioned(std::shared_ptr<Buffer> value, bool read_only, bool copy);
Managed* export_unversioned(std::shared_ptr<Buffer> value, bool copy);

// A managed tensor being taken in: `buffer` reads its memory (or a copy of it). Until commit()
// the managed tensor is still the caller's, and dropping the Taken leaves it as it was; commit()
// hands it to the buffer (its deleter runs when the last reference to the storage goes) or, when
// the data was copied, calls its deleter now.
class Taken {
 public:
  std::shared_ptr<Buffer> buffer;
  void commit() noexcept;

  // (for the importers)
  struct Claim;
  std::shared_ptr<Claim> claim;  // the storage's owner; null when the data was copied
  void* managed = nullptr;
  void (*release)(void* managed) = nullptr;
};

// Checks a managed tensor (naming `who` in every failure: an exception, `m` untouched) and reads
// its memory in place, or through a copy where `copy` asks for one or allows one it needs.
Taken import_versioned(ManagedVersioned* m, Copy copy, const char* who);
Taken import_unversioned(Managed* m, Copy copy, const char* who);

// Calls a managed tensor's deleter (nothing for NULL, or a NULL deleter).
void release(ManagedVersioned* m) noexcept;
void release(Managed* m) noexcept;

}  // namespace kb::dlpack
