// Host memory for buffers. Blocks of 64 KiB and more are kept after release and handed out again
// for the same size: a compiled function allocates the same sizes on every call, and fresh pages
// from the kernel cost a page fault each (about 15% of a CNN training step). The cache holds the
// larger of 256 MiB and the most the process had in use at once, or KB_HOST_CACHE_MB MiB when
// that is set (0 turns it off).
#pragma once
#include <cstddef>
#include <memory>

namespace kb {

// 64-byte aligned storage of at least `bytes` (never null; throws std::bad_alloc).
std::shared_ptr<void> host_allocate(size_t bytes);

}  // namespace kb
