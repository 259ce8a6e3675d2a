// A concrete value: dtype, concrete dims, and (shared) storage.
#pragma once
#include <cstring>
#include <memory>

#include "core/graph/dtype.h"
#include "core/graph/shape.h"

namespace kb {

enum class Device : int32_t { cpu = 0, cuda = 1 };

struct Buffer {
  DType dtype = DType::f32;
  Dims dims;
  std::shared_ptr<void> storage;  // may alias another buffer's storage (views)
  Device device = Device::cpu;    // where storage lives
  // The storage may be written outside the library (memory shared through DLPack): never assumed
  // to hold what it held on an earlier run. The library itself writes a storage only while
  // nothing else holds it, so a holder may count on its content (KernelArgs::stable).
  bool external = false;

  Buffer() = default;
  Buffer(DType t, Dims d) : dtype(t), dims(std::move(d)) {}

  int64_t numel() const { return kb::numel(dims); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  void* data() const { return storage.get(); }
  template <class T>
  T* as() const {
    return static_cast<T*>(storage.get());
  }
  // Entry i of an index buffer (int32 or int64; the caller checked the dtype).
  int64_t index(int64_t i) const {
    return dtype == DType::i32 ? int64_t(as<int32_t>()[i]) : as<int64_t>()[i];
  }
  // Allocates fresh storage for dims on `device` (host memory is 64-byte aligned).
  void allocate();
  static std::shared_ptr<Buffer> make(DType t, Dims d);
  static std::shared_ptr<Buffer> from_bytes(DType t, Dims d, const void* src);
};

// Where device memory comes from: the device layer (core/backend/device.cpp) installs it when a
// device registers. Storage of `bytes` (at least one) on `device`, or an exception.
using DeviceAllocator = std::shared_ptr<void> (*)(Device device, size_t bytes);
void set_device_allocator(DeviceAllocator allocator);

}  // namespace kb
