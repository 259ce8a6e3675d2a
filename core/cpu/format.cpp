#include "core/cpu/format.h"

#include <sstream>

#include "core/graph/scalar.h"

namespace kb::cpu {

static void render(std::ostringstream& os, const Buffer& b, size_t axis, int64_t& pos) {
  if (axis == b.dims.size()) {
    double v = read_scalar(b.dtype,
                           static_cast<const char*>(b.data()) + pos * int64_t(dtype_size(b.dtype)));
    if (b.dtype == DType::b8)
      os << (v != 0 ? "True" : "False");
    else
      os << v;
    ++pos;
    return;
  }
  os << "[";
  for (int64_t i = 0; i < b.dims[axis]; ++i) {
    if (i) os << (axis + 1 == b.dims.size() ? " " : "\n ");
    render(os, b, axis + 1, pos);
  }
  os << "]";
}

std::string format_buffer(const Buffer& b) {
  std::ostringstream os;
  int64_t pos = 0;
  render(os, b, 0, pos);
  return os.str();
}

}  // namespace kb::cpu
