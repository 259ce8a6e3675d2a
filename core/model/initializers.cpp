#include "core/model/initializers.h"

#include <cmath>
#include <map>

#include "core/api/api.h"
#include "core/api/random.h"
#include "core/compile/function.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// keras.initializers._compute_fans: dense kernels (in, out); convolution kernels
// (spatial..., in, out) with the receptive field counted in both (channels_last layout).
std::pair<double, double> fans(const Dims& shape) {
  if (shape.size() == 2) return {double(shape[0]), double(shape[1])};
  if (shape.size() >= 3) {
    double field = 1;
    for (size_t i = 0; i + 2 < shape.size(); ++i) field *= double(shape[i]);
    return {double(shape[shape.size() - 2]) * field, double(shape.back()) * field};
  }
  double n = std::sqrt(double(numel(shape)));
  return {n, n};
}

std::optional<int64_t> seed_of(const Json& config, const std::string& where) {
  auto s = opt_number(config, "seed", where);
  if (!s) return std::nullopt;
  return static_cast<int64_t>(*s);
}

NodePtr variance_scaling(const Dims& shape, DType dtype, double scale, const std::string& mode,
                         const std::string& distribution, std::optional<int64_t> seed,
                         const std::string& where) {
  auto [fan_in, fan_out] = fans(shape);
  double n = mode == "fan_in"    ? fan_in
             : mode == "fan_out" ? fan_out
             : mode == "fan_avg" ? (fan_in + fan_out) / 2
                                 : -1;
  check(n >= 0, Status::invalid_argument, where, ": VarianceScaling mode '", mode, "'");
  scale /= std::max(1.0, n);
  if (distribution == "normal" || distribution == "truncated_normal")
    // Keras 2.2.4: a normal truncated at two deviations, its stddev sqrt(scale)
    return api::truncated_normal(shape, 0, std::sqrt(scale), dtype, seed);
  if (distribution == "untruncated_normal")
    return api::random_normal(shape, 0, std::sqrt(scale), dtype, seed);
  check(distribution == "uniform", Status::invalid_argument, where,
        ": VarianceScaling distribution '", distribution, "'");
  double limit = std::sqrt(3 * scale);
  return api::random_uniform(shape, -limit, limit, dtype, seed);
}

// keras.initializers.Orthogonal: a random normal (rows, prod(rest)) matrix made orthonormal
// along its shorter side (Gram-Schmidt, where Keras takes an SVD: another draw of the same law).
NodePtr orthogonal(const Dims& shape, DType dtype, double gain, std::optional<int64_t> seed,
                   const std::string& where) {
  check(shape.size() >= 2, Status::invalid_argument, where,
        ": the Orthogonal initializer needs a weight of rank 2 or more");
  int64_t rows = shape[0], cols = numel(shape) / std::max<int64_t>(rows, 1);
  auto a = evaluate(api::random_normal({rows, cols}, 0, 1, DType::f64, seed));
  double* m = a->as<double>();
  // Orthonormal rows when rows <= cols, else orthonormal columns.
  bool by_rows = rows <= cols;
  int64_t count = by_rows ? rows : cols, length = by_rows ? cols : rows;
  auto at = [&](int64_t v, int64_t i) -> double& {
    return by_rows ? m[v * cols + i] : m[i * cols + v];
  };
  for (int64_t v = 0; v < count; ++v) {
    for (int64_t u = 0; u < v; ++u) {
      double dot = 0;
      for (int64_t i = 0; i < length; ++i) dot += at(v, i) * at(u, i);
      for (int64_t i = 0; i < length; ++i) at(v, i) -= dot * at(u, i);
    }
    double norm = 0;
    for (int64_t i = 0; i < length; ++i) norm += at(v, i) * at(v, i);
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < length; ++i) at(v, i) = norm > 0 ? at(v, i) / norm : 0;
  }
  for (int64_t i = 0; i < rows * cols; ++i) m[i] *= gain;
  return api::constant(a, dtype, shape, "");
}

// Keras' names of the variance-scaling family: (scale, mode, distribution).
struct Scaling {
  double scale;
  const char* mode;
  const char* distribution;
};
const std::map<std::string, Scaling>& scalings() {
  static const std::map<std::string, Scaling> table = {
      {"glorotuniform", {1, "fan_avg", "uniform"}}, {"glorotnormal", {1, "fan_avg", "normal"}},
      {"heuniform", {2, "fan_in", "uniform"}},      {"henormal", {2, "fan_in", "normal"}},
      {"lecununiform", {1, "fan_in", "uniform"}},   {"lecunnormal", {1, "fan_in", "normal"}},
  };
  return table;
}

// "glorot_uniform", "GlorotUniform" and "glorotuniform" name one initializer.
std::string key_of(std::string name) {
  std::string k;
  for (char c : name)
    if (c != '_') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}

NodePtr build(const std::string& name, const Json& config, const Dims& shape, DType dtype,
              const std::string& where) {
  std::string k = key_of(name);
  if (k == "zeros" || k == "zero") return api::zeros(shape, dtype, "");
  if (k == "ones" || k == "one") return api::ones(shape, dtype, "");
  if (k == "constant") {
    auto v = Buffer::make(DType::f64, {});
    *v->as<double>() = number_or(config, "value", 0, where);
    return api::constant(v, dtype, shape, "");
  }
  if (k == "randomnormal" || k == "normal")
    return api::random_normal(shape, number_or(config, "mean", 0, where),
                              number_or(config, "stddev", 0.05, where), dtype,
                              seed_of(config, where));
  if (k == "randomuniform" || k == "uniform")
    return api::random_uniform(shape, number_or(config, "minval", -0.05, where),
                               number_or(config, "maxval", 0.05, where), dtype,
                               seed_of(config, where));
  if (k == "truncatednormal")
    return api::truncated_normal(shape, number_or(config, "mean", 0, where),
                                 number_or(config, "stddev", 0.05, where), dtype,
                                 seed_of(config, where));
  if (k == "variancescaling")
    return variance_scaling(shape, dtype, number_or(config, "scale", 1, where),
                            string_or(config, "mode", "fan_in", where),
                            string_or(config, "distribution", "normal", where),
                            seed_of(config, where), where);
  if (k == "identity") {
    check(shape.size() == 2, Status::invalid_argument, where,
          ": the Identity initializer needs a 2-D weight");
    auto v = Buffer::make(DType::f64, shape);
    double gain = number_or(config, "gain", 1, where);
    for (int64_t i = 0; i < shape[0]; ++i)
      for (int64_t j = 0; j < shape[1]; ++j) v->as<double>()[i * shape[1] + j] = i == j ? gain : 0;
    return api::constant(v, dtype, std::nullopt, "");
  }
  if (k == "orthogonal")
    return orthogonal(shape, dtype, number_or(config, "gain", 1, where), seed_of(config, where),
                      where);
  auto it = scalings().find(k);
  check(it != scalings().end(), Status::not_implemented, where, ": unknown initializer '", name,
        "'");
  return variance_scaling(shape, dtype, it->second.scale, it->second.mode, it->second.distribution,
                          seed_of(config, where), where);
}

}  // namespace

std::shared_ptr<Buffer> initial_value(const Json& initializer, const Dims& shape, DType dtype,
                                      const std::string& where) {
  if (initializer.is_string())
    return evaluate(build(initializer.get<std::string>(), Json::object(), shape, dtype, where));
  check(initializer.is_object(), Status::invalid_argument, where,
        ": an initializer is neither a name nor {class_name, config}");
  const Json& config = initializer.contains("config") ? initializer["config"] : Json::object();
  return evaluate(
      build(required_string(initializer, "class_name", where), config, shape, dtype, where));
}

}  // namespace kb::model
