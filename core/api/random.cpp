// random_uniform, random_normal, truncated_normal, random_binomial and dropout over the stateful
// Random primitive (docs/keras_semantics.md sections 11 and 14).
#include <cmath>
#include <mutex>
#include <random>

#include "core/api/api.h"
#include "core/api/random.h"
#include "core/ops/build.h"
#include "core/util/error.h"
#include "core/ops/random_spec.h"

namespace kb::api {

namespace {

// The sequence set_random_seed starts: its seed and how many were drawn from it.
struct SeedSequence {
  std::mutex mutex;
  bool set = false;
  uint64_t seed = 0, drawn = 0;
};

SeedSequence& seeds() {
  static SeedSequence s;
  return s;
}

// SplitMix64's finalizer: consecutive counters give unrelated seeds.
uint64_t mixed(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

NodePtr random_node(const char* who, RandomDist dist, const Dims& shape, double a, double b,
                    std::optional<DType> dtype, std::optional<int64_t> seed,
                    const NodePtr& like = nullptr) {
  DType t = resolve_dtype(dtype);
  check(is_floating(t), Status::dtype, who, ": dtype must be floating, got ", dtype_name(t));
  check(std::isfinite(a) && std::isfinite(b), Status::invalid_argument, who,
        ": the distribution's parameters must be finite, got ", a, " and ", b);
  for (int64_t d : shape)
    check(d >= 0 || (like && d == -1), Status::invalid_argument, who, ": shape ", dims_str(shape),
          " has a negative or unknown dimension");
  Attrs attrs{{attr::dist, int64_t(dist)},
              {attr::a, a},
              {attr::b, b},
              {attr::seed, int64_t(seed_or_drawn(seed))},
              {attr::dtype, int64_t(t)},
              {attr::dims, shape},
              {attr::who, std::string(who)}};
  if (like) return make_node(ops::Random, {like}, attrs);
  return make_node(ops::Random, {}, attrs);
}

}  // namespace

void set_random_seed(int64_t seed) {
  SeedSequence& s = seeds();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.set = true;
  s.seed = uint64_t(seed);
  s.drawn = 0;
}

uint64_t seed_or_drawn(std::optional<int64_t> seed) {
  if (seed) return uint64_t(*seed);
  SeedSequence& s = seeds();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.set) return mixed(s.seed + 0x9e3779b97f4a7c15ULL * ++s.drawn);
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

NodePtr random_uniform(const Dims& shape, double minval, double maxval, std::optional<DType> dtype,
                       std::optional<int64_t> seed) {
  return random_node("random_uniform", kUniform, shape, minval, maxval, dtype, seed);
}

NodePtr random_normal(const Dims& shape, double mean, double stddev, std::optional<DType> dtype,
                      std::optional<int64_t> seed) {
  return random_node("random_normal", kNormal, shape, mean, stddev, dtype, seed);
}

NodePtr truncated_normal(const Dims& shape, double mean, double stddev, std::optional<DType> dtype,
                         std::optional<int64_t> seed) {
  return random_node("truncated_normal", kTruncatedNormal, shape, mean, stddev, dtype, seed);
}

NodePtr random_binomial(const Dims& shape, double p, std::optional<DType> dtype,
                        std::optional<int64_t> seed) {
  const char* who = "random_binomial";
  check(!std::isnan(p), Status::invalid_argument, who, ": p is NaN");
  // 1 where U[0, 1) <= p (U drawn in dtype, p converted to dtype), else 0.
  NodePtr u = random_node(who, kUniform, shape, 0.0, 1.0, dtype, seed);
  return kb::cast(less_equal(u, scalar_like(u, p)), u->dtype());
}

namespace {

// like's dims, -1 where unknown now (the Random node reads them from `like` when it runs).
Dims like_dims(const NodePtr& like, const char* who) {
  require(like, who, "like");
  check(like->shape().rank_known, Status::shape, who, ": the rank of like is unknown");
  return like->shape().dims;
}

}  // namespace

NodePtr random_uniform_like(const NodePtr& like, double minval, double maxval,
                            std::optional<DType> dtype, std::optional<int64_t> seed) {
  const char* who = "random_uniform_like";
  return random_node(who, kUniform, like_dims(like, who), minval, maxval, dtype, seed, like);
}

NodePtr random_normal_like(const NodePtr& like, double mean, double stddev,
                           std::optional<DType> dtype, std::optional<int64_t> seed) {
  const char* who = "random_normal_like";
  return random_node(who, kNormal, like_dims(like, who), mean, stddev, dtype, seed, like);
}

NodePtr truncated_normal_like(const NodePtr& like, double mean, double stddev,
                              std::optional<DType> dtype, std::optional<int64_t> seed) {
  const char* who = "truncated_normal_like";
  return random_node(who, kTruncatedNormal, like_dims(like, who), mean, stddev, dtype, seed, like);
}

NodePtr random_binomial_like(const NodePtr& like, double p, std::optional<DType> dtype,
                             std::optional<int64_t> seed) {
  const char* who = "random_binomial_like";
  check(!std::isnan(p), Status::invalid_argument, who, ": p is NaN");
  NodePtr u = random_node(who, kUniform, like_dims(like, who), 0.0, 1.0, dtype, seed, like);
  return kb::cast(less_equal(u, scalar_like(u, p)), u->dtype());
}

NodePtr dropout(const NodePtr& x, double level, const std::optional<Dims>& noise_shape,
                std::optional<int64_t> seed) {
  const char* who = "dropout";
  require(x, who, "x");
  check(is_floating(x->dtype()), Status::dtype, who, ": x must be floating, got ",
        dtype_name(x->dtype()));
  check(level >= 0 && level < 1, Status::invalid_argument, who,
        ": level must be in the interval [0, 1), got ", level);
  if (level == 0) return kb::identity(x);  // TF: keep_prob 1 returns x
  check(x->shape().rank_known, Status::shape, who, ": the rank of x is unknown");
  const Dims& xd = x->shape().dims;
  Dims noise = noise_shape ? *noise_shape : Dims(xd.size(), -1);
  check(noise.size() <= xd.size(), Status::shape, who, ": noise_shape ", dims_str(noise),
        " has more dimensions than x ", x->shape().str());
  // The keep mask broadcasts against x: each entry is 1, x's dimension, or -1 (x's dimension).
  bool need_like = false;
  size_t off = xd.size() - noise.size();
  for (size_t i = 0; i < noise.size(); ++i) {
    int64_t xdim = xd[off + i], n = noise[i];
    check(n >= -1, Status::invalid_argument, who, ": invalid noise_shape ", dims_str(noise));
    if (n == -1) {
      if (xdim >= 0)
        noise[i] = xdim;
      else
        need_like = true;
      continue;
    }
    check(n == 1 || xdim < 0 || n == xdim, Status::shape, who, ": noise_shape ",
          dims_str(*noise_shape), " does not broadcast against x ", x->shape().str());
  }
  double retain = 1.0 - level;
  // tf.nn.dropout: x / keep_prob * floor(keep_prob + U[0, 1)).
  NodePtr u =
      random_node(who, kUniform, noise, 0.0, 1.0, x->dtype(), seed, need_like ? x : nullptr);
  NodePtr mask = unary(ops::Floor, add(scalar_like(x, retain), u));
  return mul(div(x, scalar_like(x, retain)), mask);
}

}  // namespace kb::api
