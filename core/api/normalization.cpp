// batch_normalization and normalize_batch_in_training (docs/keras_semantics.md section 11):
// the three paths of Keras' TensorFlow backend on the CPU (fused for 4-D channels_last, regular
// for "all axes but the last", broadcast otherwise), with the fused path's epsilon floor and its
// Bessel-corrected returned variance. batch_normalization is a composition (one fused step, which
// an activation after it joins); normalize_batch_in_training takes the primitives BatchNorm and
// BatchCenteredDot where the kept axes are adjacent with known dims, a composition elsewhere.
#include <algorithm>

#include "core/api/api.h"
#include "core/api/normalization.h"
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

// TensorFlow's fused batch norm raises epsilon to at least this.
constexpr double kFusedEpsilonFloor = 1.001e-5;

void check_param(const NodePtr& p, const NodePtr& x, const char* who, const char* what) {
  require(p, who, what);
  check(p->dtype() == x->dtype(), Status::dtype, who, ": ", what, " is ", dtype_name(p->dtype()),
        " but x is ", dtype_name(x->dtype()));
  check(p->shape().rank_known, Status::shape, who, ": the rank of ", what, " is unknown");
}

void check_x(const NodePtr& x, const char* who) {
  require(x, who, "x");
  check(is_floating(x->dtype()), Status::dtype, who, ": x must be floating, got ",
        dtype_name(x->dtype()));
  check(x->shape().rank_known, Status::shape, who, ": the rank of x is unknown");
}

// A parameter broadcast against x (tf.nn.batch_normalization's rule).
void check_broadcast(const NodePtr& p, const NodePtr& x, const char* who, const char* what) {
  std::string w = std::string(who) + ": " + what;
  broadcast_shapes(x->shape(), p->shape(), w);
}

// tf.nn.batch_normalization: x * inv + (beta - mean * inv), inv = gamma / sqrt(var + eps).
NodePtr normalize(const NodePtr& x, const NodePtr& mean, const NodePtr& var, const NodePtr& beta,
                  const NodePtr& gamma, double epsilon) {
  NodePtr inv = unary(ops::Reciprocal, unary(ops::Sqrt, add(var, scalar_like(var, epsilon))));
  if (gamma) inv = mul(inv, gamma);
  NodePtr shift = beta ? sub(beta, mul(mean, inv)) : neg(mul(mean, inv));
  return add(mul(x, inv), shift);
}

// A parameter of the fused path: flattened, with C elements.
NodePtr channel_vector(const NodePtr& p, int64_t c, const char* who, const char* what) {
  int64_t n = p->shape().numel();
  check(n < 0 || c < 0 || n == c, Status::shape, who, ": ", what, " has shape ", p->shape().str(),
        " (", n, " elements) but x has ", c, " channels");
  if (p->rank() == 1) return p;
  return kb::reshape(p, {-1});
}

// The kept axes [begin, end) of x when the reduction leaves one run of adjacent axes whose dims
// are known (the channels of BatchNorm); false otherwise.
bool kept_run(const NodePtr& x, const std::vector<int64_t>& axes, int64_t& begin, int64_t& end) {
  begin = -1;
  end = -1;
  for (int64_t i = 0; i < x->rank(); ++i) {
    if (std::binary_search(axes.begin(), axes.end(), i)) continue;
    if (x->shape().dims[size_t(i)] < 0 || (end >= 0 && end != i)) return false;
    if (begin < 0) begin = i;
    end = i + 1;
  }
  return begin >= 0;
}

// Whether p, aligned to x's last axes as broadcasting aligns it, has x's dims on the kept axes
// [begin, end) and 1 elsewhere: one value per channel, in the channels' order.
bool per_channel_shape(const NodePtr& p, const NodePtr& x, int64_t begin, int64_t end) {
  if (!p) return true;
  const Dims &pd = p->shape().dims, &xd = x->shape().dims;
  if (pd.size() > xd.size()) return false;
  size_t lead = xd.size() - pd.size();
  for (size_t i = 0; i < xd.size(); ++i) {
    int64_t d = i < lead ? 1 : pd[i - lead];
    bool kept = int64_t(i) >= begin && int64_t(i) < end;
    if (d != (kept ? xd[i] : 1)) return false;
  }
  return true;
}

// normalize_batch_in_training through BatchNorm and BatchCenteredDot (core/ops/batch_norm_ops.cpp)
// for x's kept axes [begin, end), gamma and beta (channels,) vectors or null: the mean, the
// population variance and the normalized x, as the compositions compute them, in three passes
// over x and three in the gradient.
NormalizedBatch batch_norm_primitives(const NodePtr& x, const NodePtr& gamma, const NodePtr& beta,
                                      const std::vector<int64_t>& axes, int64_t begin, int64_t end,
                                      double epsilon) {
  NodePtr mean = kb::reshape(api::mean(x, axes, false), {-1});
  NodePtr dot = make_node(ops::BatchCenteredDot, {x, x, mean},
                          {{attr::begin, begin}, {attr::end, end}, {attr::center, int64_t(1)}});
  NodePtr var = div(dot, size_of(x, axes, x->dtype()));
  NodePtr g = gamma ? gamma : fill_like(mean, 1.0, x->dtype());
  NodePtr b = beta ? beta : fill_like(mean, 0.0, x->dtype());
  NodePtr normed = make_node(ops::BatchNorm, {x, mean, var, g, b},
                             {{attr::begin, begin}, {attr::end, end}, {attr::epsilon, epsilon}});
  return {normed, mean, var};
}

// The composition: tf.nn.moments over the axes (population statistics, the reduced axes
// dropped), then tf.nn.batch_normalization with the parameters as given.
NormalizedBatch moments_then_normalize(const NodePtr& x, const NodePtr& gamma, const NodePtr& beta,
                                       const std::vector<int64_t>& axes, double epsilon) {
  NodePtr mean = api::mean(x, axes, false);
  NodePtr d = sub(x, mean);
  NodePtr var = api::mean(mul(d, d), axes, false);
  return {normalize(x, mean, var, beta, gamma, epsilon), mean, var};
}

// A parameter as a (channels,) vector (or null).
NodePtr flat(const NodePtr& p) { return p && p->rank() != 1 ? kb::reshape(p, {-1}) : p; }

}  // namespace

NodePtr batch_normalization(const NodePtr& x, const NodePtr& mean, const NodePtr& var,
                            const NodePtr& beta, const NodePtr& gamma, int64_t axis,
                            double epsilon) {
  const char* who = "batch_normalization";
  check_x(x, who);
  check_param(mean, x, who, "mean");
  check_param(var, x, who, "var");
  if (beta) check_param(beta, x, who, "beta");
  if (gamma) check_param(gamma, x, who, "gamma");
  check(epsilon >= 0, Status::invalid_argument, who, ": epsilon must be non-negative, got ",
        epsilon);
  // Keras' CPU path: 4-D x with axis -1 or 3 goes through the fused kernel (parameters flattened
  // to (C,), epsilon floored); every other case broadcasts the parameters against x and ignores
  // axis (channels_first needs a GPU for the fused kernel).
  if (x->rank() == 4 && (axis == -1 || axis == 3)) {
    int64_t c = x->shape().dims[3];
    NodePtr m = channel_vector(mean, c, who, "mean");
    NodePtr v = channel_vector(var, c, who, "var");
    NodePtr b = beta ? channel_vector(beta, c, who, "beta") : nullptr;
    NodePtr g = gamma ? channel_vector(gamma, c, who, "gamma") : nullptr;
    return normalize(x, m, v, b, g, std::max(epsilon, kFusedEpsilonFloor));
  }
  check_broadcast(mean, x, who, "mean");
  check_broadcast(var, x, who, "var");
  if (beta) check_broadcast(beta, x, who, "beta");
  if (gamma) check_broadcast(gamma, x, who, "gamma");
  return normalize(x, mean, var, beta, gamma, epsilon);
}

NormalizedBatch normalize_by_population_moments(const NodePtr& x, const NodePtr& gamma,
                                                const NodePtr& beta,
                                                const std::vector<int64_t>& axes, double epsilon) {
  const char* who = "batch_normalization";
  auto same_dtype = [&](const NodePtr& p) { return !p || p->dtype() == x->dtype(); };
  if (!x || !is_floating(x->dtype()) || !x->shape().rank_known || !same_dtype(gamma) ||
      !same_dtype(beta))
    return {};
  std::vector<int64_t> reduced = normalize_axes(axes, x->rank(), who);
  int64_t begin = 0, end = 0;
  if (!kept_run(x, reduced, begin, end)) return {};
  int64_t kept = 1;
  for (int64_t i = begin; i < end; ++i) kept *= x->shape().dims[size_t(i)];
  auto fits = [&](const NodePtr& p) { return !p || p->shape().numel() == kept; };
  if (!fits(gamma) || !fits(beta)) return {};
  return batch_norm_primitives(x, flat(gamma), flat(beta), reduced, begin, end, epsilon);
}

NormalizedBatch normalize_batch_in_training(const NodePtr& x, const NodePtr& gamma,
                                            const NodePtr& beta,
                                            const std::vector<int64_t>& reduction_axes,
                                            double epsilon) {
  const char* who = "normalize_batch_in_training";
  check_x(x, who);
  if (gamma) check_param(gamma, x, who, "gamma");
  if (beta) check_param(beta, x, who, "beta");
  check(epsilon >= 0, Status::invalid_argument, who, ": epsilon must be non-negative, got ",
        epsilon);
  int64_t r = x->rank();
  std::vector<int64_t> axes = normalize_axes(reduction_axes, r, who);
  const Dims& xd = x->shape().dims;

  int64_t begin = 0, end = 0;
  bool channels = kept_run(x, axes, begin, end);
  if (r == 4 && reduction_axes == std::vector<int64_t>{0, 1, 2}) {
    // Fused (NHWC): population statistics normalize; the returned variance is the unbiased one,
    // var * N / (N - 1) with N the count over the reduced axes (1 when N is 1).
    int64_t c = xd[3];
    NodePtr g = gamma ? channel_vector(gamma, c, who, "gamma") : nullptr;
    NodePtr b = beta ? channel_vector(beta, c, who, "beta") : nullptr;
    double e = std::max(epsilon, kFusedEpsilonFloor);
    NormalizedBatch p = channels ? batch_norm_primitives(x, g, b, axes, begin, end, e)
                                 : moments_then_normalize(x, g, b, axes, e);
    NodePtr n = size_of(x, axes, x->dtype());
    NodePtr n1 = binary(ops::Maximum, sub(n, scalar_like(x, 1.0)), scalar_like(x, 1.0));
    return {p.normed, p.mean, mul(p.var, div(n, n1))};
  }

  std::vector<int64_t> all_but_last;
  for (int64_t i = 0; i + 1 < r; ++i) all_but_last.push_back(i);
  if (axes == all_but_last) {
    // Regular: tf.nn.moments over the axes, parameters broadcast as given.
    if (gamma) check_broadcast(gamma, x, who, "gamma");
    if (beta) check_broadcast(beta, x, who, "beta");
    if (channels && per_channel_shape(gamma, x, begin, end) &&
        per_channel_shape(beta, x, begin, end))
      return batch_norm_primitives(x, flat(gamma), flat(beta), axes, begin, end, epsilon);
    return moments_then_normalize(x, gamma, beta, axes, epsilon);
  }

  // Broadcast: moments kept with size-1 reduced axes; gamma and beta reshaped to that shape; the
  // returned moments are squeezed.
  int64_t kept = 1;
  for (int64_t i = 0; i < r; ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i))
      kept = xd[i] < 0 || kept < 0 ? -1
                                   : checked_mul(kept, xd[i], who, ": x ", x->shape().str(),
                                                 " has more than INT64_MAX positions outside the "
                                                 "reduction axes");
  auto checked = [&](const NodePtr& p, const char* what) {
    if (!p) return;
    int64_t n = p->shape().numel();
    check(n < 0 || kept < 0 || n == kept, Status::shape, who, ": ", what, " has shape ",
          p->shape().str(), " (", n, " elements) but x ", x->shape().str(), " has ", kept,
          " positions outside the reduction axes");
  };
  checked(beta, "beta");
  checked(gamma, "gamma");
  if (channels) {  // the kept axes adjacent: gamma and beta in the channels' order
    NormalizedBatch p =
        batch_norm_primitives(x, flat(gamma), flat(beta), axes, begin, end, epsilon);
    std::vector<int64_t> kept_dims(xd.begin() + begin, xd.begin() + end);
    return {p.normed, kb::reshape(p.mean, kept_dims), kb::reshape(p.var, kept_dims)};
  }
  NodePtr mean_k = api::mean(x, axes, true);
  NodePtr d = sub(x, mean_k);
  NodePtr var_k = api::mean(mul(d, d), axes, true);
  auto reshaped = [&](const NodePtr& p) { return p ? reshape_like(p, mean_k) : p; };
  NodePtr normed = normalize(x, mean_k, var_k, reshaped(beta), reshaped(gamma), epsilon);
  NodePtr mean = mean_k, var = var_k;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    mean = kb::squeeze(mean, *it);
    var = kb::squeeze(var, *it);
  }
  return {normed, mean, var};
}

}  // namespace kb::api
