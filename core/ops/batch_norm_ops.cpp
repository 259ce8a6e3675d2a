// Batch normalization in training (normalize_batch_in_training, core/api/normalization.cpp) as
// two primitives over x viewed as (outer, channels, inner), the channels being x's kept axes
// [begin, end) (attrs "begin", "end") flattened:
// - BatchNorm(x, mean, var, gamma, beta), attr epsilon: (x - mean) / sqrt(var + epsilon) * gamma
//   + beta per channel, the parameters (channels,) vectors; one pass over x where the
//   composition of scalar ops took one, and its gradient three passes where the composition's
//   took about ten;
// - BatchCenteredDot(a, x, mean), attr center (0 or 1): per channel, the sum over the reduced
//   positions of (a - center * mean) * (x - mean): the variance's sum (a = x, center 1) and the
//   gradient's sum of dy * (x - mean) (center 0), in one pass each.
// The mean itself is an ordinary Reduce. Both gradients are compositions, so that second
// derivatives work.
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

// The number of channels of x (-1 when a kept dim is unknown), after checking the attributes.
int64_t channels_of(const TensorType& x, const Attrs& a, const char* who) {
  check(is_floating(x.dtype), Status::dtype, who, ": x must be floating, got ",
        dtype_name(x.dtype));
  check(x.shape.rank_known, Status::shape, who, ": the rank of x is unknown");
  int64_t begin = a.i(attr::begin), end = a.i(attr::end), r = x.shape.rank();
  check(0 <= begin && begin < end && end <= r, Status::internal, who, ": kept axes [", begin, ", ",
        end, ") of a rank ", r, " tensor");
  int64_t c = 1;
  for (int64_t i = begin; i < end; ++i) {
    int64_t d = x.shape.dims[size_t(i)];
    if (d < 0) return -1;
    c = checked_mul(c, d, who, ": the kept axes of x ", x.shape.str(),
                    " hold more than INT64_MAX channels");
  }
  return c;
}

void check_vector(const TensorType& p, const TensorType& x, int64_t c, const char* who,
                  const char* what) {
  check(p.dtype == x.dtype, Status::dtype, who, ": ", what, " is ", dtype_name(p.dtype),
        " but x is ", dtype_name(x.dtype));
  check(p.shape.rank_known && p.shape.rank() == 1, Status::shape, who, ": ", what,
        " must be a vector, got ", p.shape.str());
  int64_t n = p.shape.dims[0];
  check(n < 0 || c < 0 || n == c, Status::shape, who, ": ", what, " has ", n, " values but x has ",
        c, " channels");
}

TensorType infer_batch_norm(const Ins& in, const Attrs& a) {
  const char* who = "normalize_batch_in_training";
  check(in.size() == 5, Status::internal, who, ": BatchNorm takes 5 inputs");
  int64_t c = channels_of(in[0], a, who);
  const char* names[] = {"mean", "var", "gamma", "beta"};
  for (size_t i = 1; i < 5; ++i) check_vector(in[i], in[0], c, who, names[i - 1]);
  return in[0];
}

TensorType infer_centered_dot(const Ins& in, const Attrs& a) {
  const char* who = "normalize_batch_in_training";
  check(in.size() == 3, Status::internal, who, ": BatchCenteredDot takes 3 inputs");
  int64_t c = channels_of(in[1], a, who);
  check(in[0].dtype == in[1].dtype, Status::dtype, who, ": the operands' dtypes differ (",
        dtype_name(in[0].dtype), " and ", dtype_name(in[1].dtype), ")");
  check(in[0].shape.rank_known && in[0].shape.rank() == in[1].shape.rank(), Status::shape, who,
        ": the operands' shapes differ (", in[0].shape.str(), " and ", in[1].shape.str(), ")");
  for (size_t i = 0; i < in[0].shape.dims.size(); ++i) {
    int64_t p = in[0].shape.dims[i], q = in[1].shape.dims[i];
    check(p < 0 || q < 0 || p == q, Status::shape, who, ": the operands' shapes differ (",
          in[0].shape.str(), " and ", in[1].shape.str(), ")");
  }
  check_vector(in[2], in[1], c, who, "mean");
  return {in[1].dtype, Shape(Dims{c})};
}

// The reduced axes of x for a node's kept axes [begin, end).
std::vector<int64_t> reduced_axes(const NodePtr& x, const Attrs& a) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < x->rank(); ++i)
    if (i < a.i(attr::begin) || i >= a.i(attr::end)) axes.push_back(i);
  return axes;
}

// A (channels,) vector reshaped to broadcast against x: size 1 on the reduced axes.
NodePtr per_channel(const NodePtr& v, const NodePtr& x, const Attrs& a) {
  std::vector<int64_t> dims(size_t(x->rank()), 1);
  for (int64_t i = a.i(attr::begin); i < a.i(attr::end); ++i)
    dims[size_t(i)] = x->shape().dims[size_t(i)];
  return reshape(v, dims);
}

// Sums over the reduced axes, as a (channels,) vector.
NodePtr channel_sums(const NodePtr& t, const Attrs& a) {
  return reshape(reduce_sum(t, reduced_axes(t, a), false), {-1});
}

NodePtr centered_dot(const NodePtr& a, const NodePtr& x, const NodePtr& mean, const Attrs& attrs,
                     int64_t center) {
  return make_node(ops::BatchCenteredDot, {a, x, mean},
                   {{attr::begin, attrs.i(attr::begin)},
                    {attr::end, attrs.i(attr::end)},
                    {attr::center, center}});
}

Grads grad_batch_norm(const NodePtr& n, const NodePtr& dy) {
  const NodePtr &x = n->inputs[0], &mean = n->inputs[1], &var = n->inputs[2], &gamma = n->inputs[3];
  const Attrs& a = n->attrs;
  NodePtr inv =
      unary(ops::Reciprocal, unary(ops::Sqrt, add(var, scalar_like(var, a.f(attr::epsilon)))));
  NodePtr scale = mul(inv, gamma);
  NodePtr sum_dy = channel_sums(dy, a);
  NodePtr dot = centered_dot(dy, x, mean, a, 0);  // sum of dy * (x - mean)
  NodePtr dx = mul(dy, per_channel(scale, x, a));
  NodePtr dmean = neg(mul(sum_dy, scale));
  // d/dvar of (x - mean) * gamma * (var + eps)^(-1/2): -1/2 (x - mean) gamma inv^3.
  NodePtr dvar = mul(mul(dot, mul(scale, mul(inv, inv))), scalar_like(var, -0.5));
  return {dx, dmean, dvar, mul(dot, inv), sum_dy};
}

Grads grad_centered_dot(const NodePtr& n, const NodePtr& g) {
  const NodePtr &a = n->inputs[0], &x = n->inputs[1], &mean = n->inputs[2];
  const Attrs& at = n->attrs;
  bool center = at.i(attr::center) != 0;
  NodePtr gb = per_channel(g, x, at);
  NodePtr mb = per_channel(mean, x, at);
  NodePtr da = mul(gb, sub(x, mb));
  NodePtr dx = mul(gb, center ? sub(a, mb) : a);
  // d/dmean: -(center * sum(x - mean) + sum(a - center * mean)), the sums written through the
  // plain sums so that a sum of x the forward pass computed for the mean is shared.
  NodePtr n_reduced = size_of(x, reduced_axes(x, at), x->dtype());
  NodePtr sum_a = channel_sums(a, at);
  NodePtr dmean;
  if (center) {
    NodePtr both = add(channel_sums(x, at), sum_a);
    dmean = sub(mul(mul(n_reduced, mean), scalar_like(mean, 2.0)), both);
  } else {
    dmean = neg(sum_a);
  }
  return {da, dx, mul(g, dmean)};
}

OpRegistrar r1({ops::BatchNorm, infer_batch_norm, grad_batch_norm});
OpRegistrar r2({ops::BatchCenteredDot, infer_centered_dot, grad_centered_dot});

}  // namespace
}  // namespace kb
