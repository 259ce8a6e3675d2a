// Static shapes: a dimension may be unknown (-1), and the rank itself may be unknown.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kb {

constexpr int64_t kUnknownDim = -1;

using Dims = std::vector<int64_t>;

struct Shape {
  Dims dims;
  bool rank_known = true;

  Shape() = default;
  Shape(Dims d) : dims(std::move(d)) {}  // NOLINT: implicit on purpose
  static Shape unknown_rank() {
    Shape s;
    s.rank_known = false;
    return s;
  }
  int64_t rank() const { return rank_known ? static_cast<int64_t>(dims.size()) : -1; }
  bool fully_known() const;
  int64_t numel() const;  // -1 when not fully known
  int64_t operator[](size_t i) const { return dims[i]; }
  bool operator==(const Shape& o) const { return rank_known == o.rank_known && dims == o.dims; }
  std::string str() const;
};

// At most this many elements, so that the byte size of any dtype fits in int64 too.
constexpr int64_t kMaxElements = INT64_MAX / 8;

// The element count; fails when it, or the product of the nonzero dims, exceeds kMaxElements
// (NumPy's rule: (0, 2^62, 2^62) is rejected too, since its strides would overflow).
int64_t numel(const Dims& dims);
std::string dims_str(const Dims& dims);
[[noreturn]] void fail_too_many_elements(const int64_t* dims, size_t n);

// Row-major element strides of `dims`, as a container of type Out (Dims, or a SmallVector for
// strides built on every call).
template <class Out = Dims, class In>
Out contiguous_strides_as(const In& dims) {
  Out s(dims.size(), 0);
  int64_t acc = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = acc;
    // Dims that numel() let through never overflow here; the others (a view's dims that no
    // allocation checked) fail rather than wrap. The product of all dims is no stride: not formed.
    if (i > 0 && __builtin_mul_overflow(acc, dims[i], &acc))
      fail_too_many_elements(dims.data(), dims.size());
  }
  return s;
}
inline Dims contiguous_strides(const Dims& dims) { return contiguous_strides_as<Dims>(dims); }
// stride[0, out.size()): element strides of row-major `in` seen from `out`'s index space (in
// right-aligned against out), 0 along broadcast axes.
void broadcast_strides(const Dims& in, const Dims& out, int64_t* stride);
inline Dims broadcast_strides(const Dims& in, const Dims& out) {
  Dims s(out.size());
  broadcast_strides(in, out, s.data());
  return s;
}
// A row-major tensor of dims `inner` inside one of dims `outer` with its origin at index `origin`
// (zero padding, cropping): both tensors' element strides and the origin's element offset.
struct Placement {
  Dims outer_strides, inner_strides;
  int64_t offset = 0;
};
Placement placement(const Dims& inner, const Dims& outer, const std::vector<int64_t>& origin);
// A row-major tensor of `dims` reversed along `axes` (negative ones count from the end), read as a
// strided view of it: the element offset of the view's first element and its strides (negative
// along `axes`).
struct Reversal {
  Dims strides;
  int64_t offset = 0;
};
Reversal reversal(const Dims& dims, const std::vector<int64_t>& axes);
// Normalizes a possibly negative axis against rank; fails naming `who` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* who);

}  // namespace kb
