#include "core/graph/dtype.h"

namespace kb {

namespace {
struct DTypeInfo {
  const char* name;
  size_t size;
};
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"float16", 2}, {"float32", 4}, {"float64", 8}, {"int8", 1}, {"int16", 2},
    {"int32", 4},   {"int64", 8},   {"uint8", 1},   {"bool", 1}, {"bfloat16", 2},
};
}  // namespace

size_t dtype_size(DType t) { return kInfo[static_cast<int>(t)].size; }
const char* dtype_name(DType t) { return kInfo[static_cast<int>(t)].name; }
bool is_valid_dtype(int32_t raw) { return raw >= 0 && raw < kNumDTypes; }

std::optional<DType> parse_dtype(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == kInfo[i].name) return static_cast<DType>(i);
  return std::nullopt;
}

}  // namespace kb
