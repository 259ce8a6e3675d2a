// The dims of a reshape: shared by the Reshape and ReshapeTo primitives' shape inference and by
// the kernels that resolve a target known only when a function runs (CPU and CUDA).
#pragma once
#include "core/graph/shape.h"
#include "core/util/error.h"

namespace kb {

// x reshaped to `spec`: sizes >= 0, at most one -1 (inferred from x's element count). Where x's
// count is unknown the -1 stays.
inline Dims reshape_dims(const Shape& x, const Dims& spec) {
  int infer_at = -1;
  int64_t known = 1, nonzero = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == -1) {
      check(infer_at < 0, Status::invalid_argument, "reshape: more than one -1 in the shape ",
            dims_str(spec));
      infer_at = int(i);
    } else {
      check(spec[i] >= 0, Status::invalid_argument, "reshape: invalid dimension ", spec[i]);
      // numel()'s limit, on the nonzero dims: a 0 empties the result, but the strides of the
      // other axes must still fit (NumPy rejects (0, 2^62, 2^62) too).
      if (spec[i] != 0 &&
          (__builtin_mul_overflow(nonzero, spec[i], &nonzero) || nonzero > kMaxElements))
        fail(Status::invalid_argument, "reshape: the shape ", dims_str(spec),
             " has too many elements");
      known *= spec[i];  // 0, or the product of the nonzero dims: no overflow
    }
  }
  Dims out = spec;
  int64_t n = x.numel();
  if (n >= 0) {
    if (infer_at >= 0) {
      check(known > 0 && n % known == 0, Status::shape, "reshape: cannot reshape ", x.str(),
            " into ", dims_str(spec));
      out[size_t(infer_at)] = n / known;
    } else {
      check(n == known, Status::shape, "reshape: cannot reshape ", x.str(), " (", n,
            " elements) into ", dims_str(spec), " (", known, " elements)");
    }
  }
  return out;
}

}  // namespace kb
