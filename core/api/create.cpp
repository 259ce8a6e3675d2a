// create: variables, constants, placeholders, filled tensors, random variables, arange.
#include <cmath>
#include <cstring>
#include <random>

#include "core/api/api.h"
#include "core/api/random.h"
#include "core/compile/function.h"
#include "core/graph/scalar.h"
#include "core/ops/build.h"
#include "core/util/error.h"
#include "core/util/philox.h"
#include "core/kernel_plans/random_draw.h"

namespace kb::api {

void require(const NodePtr& x, const char* who, const char* what) {
  check(x != nullptr, Status::invalid_argument, who, ": ", what, " is NULL");
}

DType resolve_dtype(std::optional<DType> t) { return t ? *t : Session::get().floatx(); }

static void check_dims(const Dims& d, const char* who) {
  for (int64_t x : d)
    check(x >= 0, Status::invalid_argument, who, ": shape ", dims_str(d),
          " has a negative or unknown dimension");
}

NodePtr variable(const std::shared_ptr<Buffer>& value, DType dtype, const std::string& name) {
  check(value != nullptr, Status::invalid_argument, "variable: the value is NULL");
  auto v = convert_buffer(value, dtype);
  if (v == value) v = Buffer::from_bytes(value->dtype, value->dims, value->data());
  return make_leaf(ops::Variable, {dtype, Shape(v->dims)}, name.empty() ? "variable" : name, {}, v);
}

NodePtr constant(const std::shared_ptr<Buffer>& value, DType dtype,
                 const std::optional<Dims>& shape, const std::string& name) {
  check(value != nullptr, Status::invalid_argument, "constant: the value is NULL");
  auto v = convert_buffer(value, dtype);
  if (shape) {
    check_dims(*shape, "constant");
    int64_t n = numel(*shape), have = v->numel();
    check(have >= 1 || n == 0, Status::invalid_argument, "constant: empty value for shape ",
          dims_str(*shape));
    check(have <= n || have == n, Status::shape, "constant: ", have, " values do not fit shape ",
          dims_str(*shape));
    auto out = Buffer::make(dtype, *shape);
    size_t es = dtype_size(dtype);
    // A scalar fills the shape; a shorter list repeats its last element (tf.constant).
    for (int64_t i = 0; i < n; ++i) {
      int64_t src = i < have ? i : have - 1;
      std::memcpy(static_cast<char*>(out->data()) + i * int64_t(es),
                  static_cast<const char*>(v->data()) + src * int64_t(es), es);
    }
    v = out;
  } else if (v == value) {
    v = Buffer::from_bytes(value->dtype, value->dims, value->data());
  }
  return constant_node(v, name);
}

NodePtr placeholder(const Shape& shape, DType dtype, const std::string& name) {
  for (int64_t d : shape.dims)
    check(d >= -1, Status::invalid_argument, "placeholder: invalid dimension ", d);
  return make_leaf(ops::Placeholder, {dtype, shape}, name.empty() ? "placeholder" : name);
}

static NodePtr filled(const Dims& shape, DType dtype, const std::string& name, double v,
                      const char* who) {
  check_dims(shape, who);
  auto b = Buffer::make(dtype, shape);
  size_t es = dtype_size(dtype);
  std::vector<char> one(es);
  write_scalar(dtype, one.data(), v);
  for (int64_t i = 0; i < b->numel(); ++i)
    std::memcpy(static_cast<char*>(b->data()) + i * int64_t(es), one.data(), es);
  // Keras returns a variable unless a dimension is 0.
  for (int64_t d : shape)
    if (d == 0) return constant_node(b, name);
  return make_leaf(ops::Variable, {dtype, Shape(shape)}, name.empty() ? who : name, {}, b);
}

NodePtr zeros(const Dims& shape, DType dtype, const std::string& name) {
  return filled(shape, dtype, name, 0.0, "zeros");
}
NodePtr ones(const Dims& shape, DType dtype, const std::string& name) {
  return filled(shape, dtype, name, 1.0, "ones");
}

NodePtr eye(int64_t size, DType dtype, const std::string& name) {
  check(size >= 0, Status::invalid_argument, "eye: negative size ", size);
  auto b = Buffer::make(dtype, {size, size});
  std::memset(b->data(), 0, b->nbytes());
  size_t es = dtype_size(dtype);
  for (int64_t i = 0; i < size; ++i)
    write_scalar(dtype, static_cast<char*>(b->data()) + (i * size + i) * int64_t(es), 1.0);
  return make_leaf(ops::Variable, {dtype, Shape(Dims{size, size})}, name.empty() ? "eye" : name, {},
                   b);
}

NodePtr zeros_like(const NodePtr& x, std::optional<DType> dtype, const std::string& name) {
  require(x, "zeros_like", "x");
  auto n = fill_like(x, 0.0, dtype.value_or(x->dtype()));
  if (!name.empty()) n->name = Session::get().unique_name(name);
  return n;
}
NodePtr ones_like(const NodePtr& x, std::optional<DType> dtype, const std::string& name) {
  require(x, "ones_like", "x");
  auto n = fill_like(x, 1.0, dtype.value_or(x->dtype()));
  if (!name.empty()) n->name = Session::get().unique_name(name);
  return n;
}
NodePtr identity(const NodePtr& x, const std::string& name) {
  require(x, "identity", "x");
  return make_node(ops::Identity, {x}, {}, name);
}

static NodePtr random_variable(const Dims& shape, DType dtype, const std::string& name,
                               std::optional<int64_t> seed, const char* who, bool normal, double a,
                               double b) {
  check_dims(shape, who);
  check(is_floating(dtype), Status::dtype, who, ": dtype must be floating, got ",
        dtype_name(dtype));
  auto buf = Buffer::make(dtype, shape);
  PhiloxStream rng(seed_or_drawn(seed));
  size_t es = dtype_size(dtype);
  // u keeps as many bits as the dtype holds, as the Random primitive's
  // (core/kernel_plans/random_draw.h).
  double bits = std::ldexp(1.0, uniform_bits(dtype));
  for (int64_t i = 0; i < buf->numel(); ++i) {
    double v =
        normal ? a + b * rng.normal() : a + (b - a) * (std::floor(rng.uniform() * bits) / bits);
    write_scalar(dtype, static_cast<char*>(buf->data()) + i * int64_t(es), v);
  }
  return make_leaf(ops::Variable, {dtype, Shape(shape)}, name.empty() ? who : name, {}, buf);
}

NodePtr random_uniform_variable(const Dims& shape, double low, double high, DType dtype,
                                const std::string& name, std::optional<int64_t> seed) {
  return random_variable(shape, dtype, name, seed, "random_uniform_variable", false, low, high);
}
NodePtr random_normal_variable(const Dims& shape, double mean, double scale, DType dtype,
                               const std::string& name, std::optional<int64_t> seed) {
  return random_variable(shape, dtype, name, seed, "random_normal_variable", true, mean, scale);
}

NodePtr arange(double start, std::optional<double> stop, double step, DType dtype) {
  if (!stop) {
    stop = start < 0 ? 0.0 : start;
    start = 0;
  }
  return constant_node(range_values(start, *stop, step, dtype));
}

NodePtr arange_to(const NodePtr& start, const NodePtr& stop, const NodePtr& step, DType dtype) {
  require(start, "arange", "start");
  require(step, "arange", "step");
  NodePtr from = stop ? start : scalar_constant(0, start->dtype());
  NodePtr to = stop ? stop : start;  // arange(n): [0, n), as Keras'
  NodePtr range =
      make_node(ops::RangeTo, {from, to, step}, {{attr::dtype, int64_t(dtype)}});  // checks
  auto a = static_scalar(from), b = static_scalar(to), c = static_scalar(step);
  if (a && b && c) return constant_node(range_values(*a, *b, *c, dtype));  // known now
  return range;
}

int64_t count_params(const NodePtr& x) {
  require(x, "count_params", "x");
  check(x->shape().fully_known(), Status::shape, "count_params: the shape ", x->shape().str(),
        " is not fully known");
  return x->shape().numel();
}

}  // namespace kb::api
