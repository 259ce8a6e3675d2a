#include "core/ops/infer_util.h"

#include <algorithm>

#include "core/util/error.h"

namespace kb {

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& who) {
  if (!a.rank_known || !b.rank_known) return Shape::unknown_rank();
  size_t r = std::max(a.dims.size(), b.dims.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.dims.size() ? 1 : a.dims[i - (r - a.dims.size())];
    int64_t db = i < r - b.dims.size() ? 1 : b.dims[i - (r - b.dims.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0) {
      out[i] = db;
    } else if (db < 0) {
      out[i] = da;
    } else if (da == db) {
      out[i] = da;
    } else {
      fail(Status::shape, who, ": shapes ", a.str(), " and ", b.str(), " cannot be broadcast");
    }
  }
  return Shape(out);
}

Dims broadcast_dims(const Dims& a, const Dims& b) {
  return broadcast_shapes(Shape(a), Shape(b), "broadcast").dims;
}

void check_domain(DType t, ScalarDomain d, const std::string& who) {
  bool ok = true;
  switch (d) {
    case ScalarDomain::F:
      ok = is_floating(t);
      break;
    case ScalarDomain::N:
      ok = !is_bool(t);
      break;
    case ScalarDomain::A:
      ok = true;
      break;
  }
  if (!ok) {
    const char* want = d == ScalarDomain::F ? "a floating dtype" : "a numeric dtype";
    fail(Status::dtype, who, ": expected ", want, ", got ", dtype_name(t));
  }
}

void check_arity(const std::vector<TensorType>& in, size_t n, const std::string& who) {
  check(in.size() == n, Status::internal, who, ": expected ", n, " inputs, got ", in.size());
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const char* who) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(normalize_axis(a, rank, who));
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i)
    check(out[i] != out[i - 1], Status::invalid_argument, who, ": axis ", out[i], " is repeated");
  return out;
}

}  // namespace kb
