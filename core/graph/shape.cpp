#include "core/graph/shape.h"

#include "core/util/error.h"

namespace kb {

bool Shape::fully_known() const {
  if (!rank_known) return false;
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

int64_t Shape::numel() const { return fully_known() ? kb::numel(dims) : -1; }

int64_t numel(const Dims& dims) {
  int64_t n = 1;
  bool empty = false;
  // An if rather than check(): check() formats its message on every call, and this is hot.
  for (int64_t d : dims) {
    // A zero dim makes the count 0 but not the strides of the other axes: those must fit too.
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements || n < -kMaxElements)
      fail_too_many_elements(dims.data(), dims.size());
  }
  return empty ? 0 : n;
}

void fail_too_many_elements(const int64_t* dims, size_t n) {
  fail(Status::invalid_argument, "the shape ", dims_str(Dims(dims, dims + n)),
       " has too many elements");
}

std::string dims_str(const Dims& dims) {
  // Messages build this eagerly, often in loops over the dims (check(ok, ..., dims_str(d)) in a
  // loop is quadratic): past 64 dims only the first 32 and last 8 are shown, so it costs O(1).
  const size_t n = dims.size(), head = n > 64 ? 32 : n, tail = n > 64 ? 8 : 0;
  std::string s = "(";
  auto put = [&](size_t i) {
    if (s.size() > 1) s += ", ";
    s += dims[i] < 0 ? "None" : std::to_string(dims[i]);
  };
  for (size_t i = 0; i < head; ++i) put(i);
  if (tail) s += ", ... " + std::to_string(n - head - tail) + " more ...";
  for (size_t i = n - tail; i < n; ++i) put(i);
  if (n == 1) s += ",";
  return s + ")";
}

std::string Shape::str() const { return rank_known ? dims_str(dims) : "<unknown rank>"; }

void broadcast_strides(const Dims& in, const Dims& out, int64_t* stride) {
  size_t off = out.size() - in.size();
  for (size_t d = 0; d < off; ++d) stride[d] = 0;
  int64_t acc = 1;
  for (size_t d = in.size(); d-- > 0;) {
    stride[off + d] = in[d] == 1 ? 0 : acc;
    if (d > 0 && __builtin_mul_overflow(acc, in[d], &acc))
      fail_too_many_elements(in.data(), in.size());
  }
}

Placement placement(const Dims& inner, const Dims& outer, const std::vector<int64_t>& origin) {
  Placement p{contiguous_strides(outer), contiguous_strides(inner), 0};
  for (size_t i = 0; i < inner.size(); ++i) p.offset += origin[i] * p.outer_strides[i];
  return p;
}

Reversal reversal(const Dims& dims, const std::vector<int64_t>& axes) {
  Reversal r{contiguous_strides(dims), 0};
  for (int64_t ax : axes) {
    size_t a = size_t(ax < 0 ? ax + int64_t(dims.size()) : ax);
    r.offset += (dims[a] - 1) * r.strides[a];
    r.strides[a] = -r.strides[a];
  }
  return r;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* who) {
  check(axis >= -rank && axis < rank, Status::invalid_argument, who, ": axis ", axis,
        " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

}  // namespace kb
