#include "core/graph/buffer.h"

#include "core/graph/host_pool.h"

#include <atomic>
#include <new>

#include "core/util/error.h"

namespace kb {

namespace {
std::atomic<DeviceAllocator> g_device_allocator{nullptr};
}  // namespace

void set_device_allocator(DeviceAllocator allocator) { g_device_allocator.store(allocator); }

void Buffer::allocate() {
  size_t bytes = nbytes();
  if (device != Device::cpu) {
    DeviceAllocator a = g_device_allocator.load();
    check(a != nullptr, Status::device, "no device is registered to hold a buffer");
    storage = a(device, bytes);
    return;
  }
  storage = host_allocate(bytes);
}

std::shared_ptr<Buffer> Buffer::make(DType t, Dims d) {
  auto b = std::make_shared<Buffer>(t, std::move(d));
  b->allocate();
  return b;
}

std::shared_ptr<Buffer> Buffer::from_bytes(DType t, Dims d, const void* src) {
  auto b = make(t, std::move(d));
  if (b->nbytes()) std::memcpy(b->data(), src, b->nbytes());
  return b;
}

}  // namespace kb
