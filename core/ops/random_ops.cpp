// Random: a stateful primitive (never merged or folded) drawing from Philox 4x32-10 with the key
// `seed` and a counter that includes how many times the node has run (Node::runs), so each call
// of a compiled function draws new numbers and the same seed reproduces the same sequence.
//
// Attributes: dist (0 uniform in [a, b), 1 normal (mean a, stddev b), 2 truncated normal (values
// beyond 2 stddev re-drawn)), a, b, seed, dtype, dims. With an input (any tensor; only its shape
// is read), a -1 entry of dims takes that input's dimension, the dims right-aligned against it.
#include "core/ops/op.h"
#include "core/util/error.h"
#include "core/ops/random_spec.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;

TensorType infer_random(const Ins& in, const Attrs& a) {
  std::string who = a.has(attr::who) ? a.s(attr::who) : "random";
  check(in.size() <= 1, Status::internal, who, ": Random takes at most one input");
  int64_t dist = a.i(attr::dist);
  check(dist >= kUniform && dist <= kTruncatedNormal, Status::invalid_argument, who,
        ": unknown distribution ", dist);
  DType t = static_cast<DType>(a.i(attr::dtype));
  check(is_floating(t), Status::dtype, who, ": dtype must be floating, got ", dtype_name(t));
  Dims d = a.ints(attr::dims);
  if (!in.empty()) {
    const Shape& like = in[0].shape;
    check(like.rank_known && like.rank() >= int64_t(d.size()), Status::shape, who, ": shape ",
          dims_str(d), " has more dimensions than ", like.str());
    size_t off = like.dims.size() - d.size();
    for (size_t i = 0; i < d.size(); ++i)
      if (d[i] < 0) d[i] = like.dims[off + i];
  }
  for (int64_t v : d)
    check(v >= -1, Status::invalid_argument, who, ": invalid dimension in shape ", dims_str(d));
  return {t, Shape(d)};
}
OpRegistrar r1({ops::Random, infer_random, nullptr, /*stateful=*/true});

}  // namespace
}  // namespace kb
