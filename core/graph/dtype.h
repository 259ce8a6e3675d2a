// Element types of tensors. The numeric values equal kb_dtype in the C ABI.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kb {

enum class DType : int32_t {
  f16 = 0,
  f32 = 1,
  f64 = 2,
  i8 = 3,
  i16 = 4,
  i32 = 5,
  i64 = 6,
  u8 = 7,
  b8 = 8,
  bf16 = 9,
};

constexpr int kNumDTypes = 10;

size_t dtype_size(DType t);
const char* dtype_name(DType t);
std::optional<DType> parse_dtype(const std::string& name);
bool is_valid_dtype(int32_t raw);
inline bool is_floating(DType t) {
  return t == DType::f16 || t == DType::f32 || t == DType::f64 || t == DType::bf16;
}
// float16 and bfloat16: stored in 16 bits, computed in float.
inline bool is_narrow_float(DType t) { return t == DType::f16 || t == DType::bf16; }
inline bool is_integer(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64 || t == DType::u8;
}
inline bool is_bool(DType t) { return t == DType::b8; }

}  // namespace kb
