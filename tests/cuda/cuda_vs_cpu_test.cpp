// Every CUDA kernel against the CPU: the same graph compiled twice, one function per device, fed
// the same random inputs. Skips itself when no GPU is usable.
#include <gtest/gtest.h>
#include <kbackend.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

bool have_gpu() {
  int64_t n = 0;
  return kb_device_count(KB_DEVICE_CUDA, &n) == KB_OK && n > 0;
}

// A step that the GPU's kernel declines fails its plan rather than passing on the CPU unseen;
// the test of the fallback itself turns this off.
const int kFallbackIsError = setenv("KB_DEVICE_FALLBACK", "error", 1);

#define SKIP_WITHOUT_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no GPU: " << kb_cuda_unavailable_reason()

void ok(kb_status s) { ASSERT_EQ(s, KB_OK) << kb_last_error_message(); }

// Stops the enclosing function when a call fails (after recording the failure).
#define OK_OR_RETURN(call)                                       \
  do {                                                           \
    kb_status s_ = (call);                                       \
    if (s_ != KB_OK) {                                           \
      ADD_FAILURE() << #call << ": " << kb_last_error_message(); \
      return;                                                    \
    }                                                            \
  } while (0)

struct Input {
  std::vector<int64_t> shape;
  kb_data_type dtype;
  std::vector<double> values;
  bool batch_unknown = false;  // the placeholder's first dim is unknown until the call

  std::vector<int64_t> declared_shape() const {
    std::vector<int64_t> d = shape;
    if (batch_unknown && !d.empty()) d[0] = -1;
    return d;
  }
};

Input random_input(std::vector<int64_t> shape, kb_data_type t, unsigned seed, double lo = -2,
                   double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  int64_t n = 1;
  for (auto d : shape) n *= d;
  Input in{shape, t, {}};
  for (int64_t i = 0; i < n; ++i) in.values.push_back(u(rng));
  return in;
}

kb_tensor* make_data(const Input& in) {
  kb_tensor* t = nullptr;
  if (in.dtype == KB_FLOAT32) {
    std::vector<float> v(in.values.begin(), in.values.end());
    kb_tensor_from_data(v.data(), KB_FLOAT32, in.shape.data(), in.shape.size(), &t);
  } else if (in.dtype == KB_INT64) {
    std::vector<int64_t> v(in.values.begin(), in.values.end());
    kb_tensor_from_data(v.data(), KB_INT64, in.shape.data(), in.shape.size(), &t);
  } else {
    kb_tensor_from_data(in.values.data(), KB_FLOAT64, in.shape.data(), in.shape.size(), &t);
  }
  return t;
}

std::vector<double> read(kb_tensor* t) {
  kb_data_type dt;
  kb_dtype(t, &dt);
  size_t nbytes = 0;
  kb_tensor_nbytes(t, &nbytes);
  std::vector<double> out;
  if (dt == KB_FLOAT32) {
    std::vector<float> v(nbytes / 4);
    kb_tensor_copy_to(t, v.data(), nbytes);
    out.assign(v.begin(), v.end());
  } else if (dt == KB_FLOAT64) {
    out.resize(nbytes / 8);
    kb_tensor_copy_to(t, out.data(), nbytes);
  } else if (dt == KB_BOOL) {
    std::vector<uint8_t> v(nbytes);
    kb_tensor_copy_to(t, v.data(), nbytes);
    out.assign(v.begin(), v.end());
  } else if (dt == KB_INT64) {
    std::vector<int64_t> v(nbytes / 8);
    kb_tensor_copy_to(t, v.data(), nbytes);
    out.assign(v.begin(), v.end());
  }
  return out;
}

// The values of y, a function of no inputs, over `calls` calls on the CPU (dev 0) or the GPU;
// empty after a failure (recorded).
std::vector<double> values_without_inputs(kb_tensor* y, int dev, int calls = 1) {
  std::vector<double> values;
  kb_compiled_function* f = nullptr;
  if (kb_function(nullptr, 0, &y, 1, nullptr, 0, &f) != KB_OK ||
      kb_function_set_device(f, dev ? KB_DEVICE_CUDA : KB_DEVICE_CPU) != KB_OK) {
    ADD_FAILURE() << kb_last_error_message();
    kb_function_release(f);
    return {};
  }
  for (int call = 0; call < calls; ++call) {
    kb_tensor_list* out = nullptr;
    kb_tensor* v = nullptr;
    if (kb_function_call(f, nullptr, 0, &out) != KB_OK || kb_tensor_list_get(out, 0, &v) != KB_OK) {
      ADD_FAILURE() << kb_last_error_message();
      kb_tensor_list_release(out);
      values.clear();
      break;
    }
    std::vector<double> got = read(v);
    values.insert(values.end(), got.begin(), got.end());
    kb_tensor_release(v);
    kb_tensor_list_release(out);
  }
  kb_function_release(f);
  return values;
}

// Builds placeholders for the inputs, the graph with `build`, and runs it on both devices.
void compare(const std::vector<Input>& inputs,
             const std::function<kb_tensor*(const std::vector<kb_tensor*>&)>& build, double rtol) {
  std::vector<kb_tensor*> phs;
  for (auto& in : inputs) {
    kb_tensor* p;
    std::vector<int64_t> shape = in.declared_shape();
    ok(kb_placeholder(shape.data(), shape.size(), -1, in.dtype, 0, "in", &p));
    phs.push_back(p);
  }
  kb_tensor* y = build(phs);
  ASSERT_NE(y, nullptr) << kb_last_error_message();
  std::vector<double> results[2];
  for (int dev = 0; dev < 2; ++dev) {
    kb_compiled_function* f;
    OK_OR_RETURN(kb_function(phs.data(), phs.size(), &y, 1, nullptr, 0, &f));
    OK_OR_RETURN(kb_function_set_device(f, dev ? KB_DEVICE_CUDA : KB_DEVICE_CPU));
    std::vector<kb_tensor*> data;
    for (auto& in : inputs) data.push_back(make_data(in));
    kb_tensor_list* out;
    OK_OR_RETURN(kb_function_call(f, data.data(), data.size(), &out));
    kb_tensor* r;
    OK_OR_RETURN(kb_tensor_list_get(out, 0, &r));
    results[dev] = read(r);
    kb_tensor_release(r);
    kb_tensor_list_release(out);
    for (auto* d : data) kb_tensor_release(d);
    kb_function_release(f);
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  ASSERT_FALSE(results[0].empty());
  for (size_t i = 0; i < results[0].size(); ++i) {
    double a = results[0][i], b = results[1][i];
    if (std::isnan(a)) {
      EXPECT_TRUE(std::isnan(b)) << "at " << i;
      continue;
    }
    if (std::isinf(a)) {
      EXPECT_EQ(a, b) << "at " << i;
      continue;
    }
    EXPECT_NEAR(a, b, rtol * (1 + std::fabs(a))) << "at " << i;
  }
  kb_tensor_release(y);
  for (auto* p : phs) kb_tensor_release(p);
}

// Builds the graph over placeholders for the inputs, runs it on the GPU and expects the call to
// fail with `status` and a message containing `text` (bad data found on the device's path).
void expect_device_error(const std::vector<Input>& inputs,
                         const std::function<kb_tensor*(const std::vector<kb_tensor*>&)>& build,
                         kb_status status, const std::string& text) {
  std::vector<kb_tensor*> phs, data;
  for (auto& in : inputs) {
    kb_tensor* p;
    ok(kb_placeholder(in.shape.data(), in.shape.size(), -1, in.dtype, 0, "in", &p));
    phs.push_back(p);
    data.push_back(make_data(in));
  }
  kb_tensor* y = build(phs);
  ASSERT_NE(y, nullptr) << kb_last_error_message();
  kb_compiled_function* f = nullptr;
  ok(kb_function(phs.data(), phs.size(), &y, 1, nullptr, 0, &f));
  ok(kb_function_set_device(f, KB_DEVICE_CUDA));
  kb_tensor_list* out = nullptr;
  EXPECT_EQ(kb_function_call(f, data.data(), data.size(), &out), status);
  EXPECT_NE(std::string(kb_last_error_message()).find(text), std::string::npos)
      << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_function_release(f);
  kb_tensor_release(y);
  for (auto* t : phs) kb_tensor_release(t);
  for (auto* t : data) kb_tensor_release(t);
}

using UnaryFn = kb_status (*)(kb_tensor*, kb_tensor**);
using BinaryFn = kb_status (*)(kb_tensor*, kb_tensor*, kb_tensor**);

struct DtypeCase {
  kb_data_type t;
  double rtol;
};
const DtypeCase kDtypes[] = {{KB_FLOAT32, 2e-5}, {KB_FLOAT64, 1e-12}};

TEST(CudaVsCpu, Unary) {
  SKIP_WITHOUT_GPU();
  std::vector<std::pair<const char*, UnaryFn>> fns = {
      {"square", kb_square},     {"abs", kb_abs},
      {"exp", kb_exp},           {"sin", kb_sin},
      {"cos", kb_cos},           {"erf", kb_erf},
      {"tanh", kb_tanh},         {"sigmoid", kb_sigmoid},
      {"softplus", kb_softplus}, {"sign", kb_sign},
      {"round", kb_round},       {"negative", kb_negative},
      {"softsign", kb_softsign}, {"hard_sigmoid", kb_hard_sigmoid},
      {"sqrt", kb_sqrt}};  // NaN below 0
  for (auto& dc : kDtypes)
    for (auto& [name, fn] : fns) {
      SCOPED_TRACE(name);
      compare(
          {random_input({7, 33}, dc.t, 1)},
          [fn = fn](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = nullptr;
            fn(x[0], &y);
            return y;
          },
          dc.rtol);
    }
  for (auto& dc : kDtypes) {
    compare(
        {random_input({5, 9}, dc.t, 2, 0.1, 3)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor *a, *y;
          kb_log(x[0], &a);
          kb_sqrt(a, &y);
          kb_tensor_release(a);
          return y;
        },
        dc.rtol);
  }
}

// Chains the plan fuses into one FusedElementwise step on either device: broadcast operands, a
// comparison cast to the float type, a cast from another dtype, and a chain too long for the
// CUDA kernel's program (it stays unfused there).
TEST(CudaVsCpu, FusedElementwiseChains) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes) {
    compare(
        {random_input({6, 40}, dc.t, 11), random_input({40}, dc.t, 12),
         random_input({6, 1}, dc.t, 13)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor *xw, *z, *s, *t, *y;
          kb_multiply(x[0], x[2], &xw);
          kb_add(xw, x[1], &z);
          kb_sigmoid(z, &s);
          kb_tanh(x[0], &t);
          kb_multiply(s, t, &y);
          for (kb_tensor* v : {xw, z, s, t}) kb_tensor_release(v);
          return y;
        },
        dc.rtol);
    compare(
        {random_input({5, 7, 3}, dc.t, 14), random_input({5, 7, 3}, dc.t, 15)},
        [dc](const std::vector<kb_tensor*>& x) {
          kb_tensor *zero, *g, *mask, *y;
          double z = 0;
          kb_constant(&z, KB_FLOAT64, nullptr, 0, dc.t, nullptr, 0, "zero", &zero);
          kb_greater(x[0], zero, &g);
          kb_cast(g, dc.t, &mask);
          kb_multiply(mask, x[1], &y);
          for (kb_tensor* v : {zero, g, mask}) kb_tensor_release(v);
          return y;
        },
        dc.rtol);
    compare(
        {random_input({9, 4}, KB_INT64, 16, -50, 50), random_input({9, 4}, dc.t, 17)},
        [dc](const std::vector<kb_tensor*>& x) {
          kb_tensor *c, *e, *y;
          kb_cast(x[0], dc.t, &c);
          kb_exp(x[1], &e);
          kb_add(c, e, &y);
          kb_tensor_release(c);
          kb_tensor_release(e);
          return y;
        },
        dc.rtol);
    compare(
        {random_input({3, 11}, dc.t, 18, -1, 1)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y = nullptr;
          kb_sin(x[0], &y);
          for (int i = 0; i < 60; ++i) {
            kb_tensor *a, *b;
            kb_cos(y, &a);
            kb_add(a, x[0], &b);
            kb_tensor_release(a);
            kb_tensor_release(y);
            y = b;
          }
          return y;
        },
        dc.rtol * 10);
  }
}

TEST(CudaVsCpu, BinaryBroadcast) {
  SKIP_WITHOUT_GPU();
  std::vector<std::pair<const char*, BinaryFn>> fns = {{"add", kb_add},
                                                       {"subtract", kb_subtract},
                                                       {"multiply", kb_multiply},
                                                       {"divide", kb_divide},
                                                       {"maximum", kb_maximum},
                                                       {"minimum", kb_minimum},
                                                       {"greater", kb_greater},
                                                       {"less_equal", kb_less_equal},
                                                       {"equal", kb_equal},
                                                       {"not_equal", kb_not_equal},
                                                       {"greater_equal", kb_greater_equal},
                                                       {"less", kb_less}};
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{4, 5, 6}, {4, 5, 6}}, {{4, 5, 6}, {6}}, {{4, 1, 6}, {1, 5, 1}}, {{3, 1}, {}}};
  for (auto& dc : kDtypes)
    for (auto& [name, fn] : fns)
      for (auto& [sa, sb] : shapes) {
        SCOPED_TRACE(name);
        compare(
            {random_input(sa, dc.t, 3), random_input(sb, dc.t, 4)},
            [fn = fn](const std::vector<kb_tensor*>& x) {
              kb_tensor* y = nullptr;
              fn(x[0], x[1], &y);
              return y;
            },
            dc.rtol);
      }
}

TEST(CudaVsCpu, PowClipReluEluCast) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes) {
    compare(
        {random_input({6, 7}, dc.t, 5, 0.1, 2)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          kb_pow(x[0], 1.7, &y);
          return y;
        },
        dc.rtol);
    compare(
        {random_input({6, 7}, dc.t, 6)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          kb_clip(x[0], -0.5, 0.7, &y);
          return y;
        },
        dc.rtol);
    compare(
        {random_input({6, 7}, dc.t, 7)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          double mv = 1.5;
          kb_relu(x[0], 0.1, &mv, 0.2, &y);
          return y;
        },
        dc.rtol);
    compare(
        {random_input({6, 7}, dc.t, 8)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          kb_elu(x[0], 0.7, &y);
          return y;
        },
        dc.rtol);
    compare(
        {random_input({6, 7}, dc.t, 9, -100, 100)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor *a, *b;
          kb_cast(x[0], KB_INT32, &a);
          kb_cast(a, KB_FLOAT64, &b);
          kb_tensor_release(a);
          return b;
        },
        dc.rtol);
  }
}

TEST(CudaVsCpu, Reductions) {
  SKIP_WITHOUT_GPU();
  using ReduceFn = kb_status (*)(kb_tensor*, const int64_t*, size_t, int32_t, kb_tensor**);
  std::vector<std::pair<const char*, ReduceFn>> fns = {{"sum", kb_sum},
                                                       {"max", kb_max},
                                                       {"min", kb_min},
                                                       {"mean", kb_mean},
                                                       {"prod", kb_prod},
                                                       {"var", kb_var},
                                                       {"logsumexp", kb_logsumexp}};
  std::vector<std::vector<int64_t>> axes_list = {{}, {0}, {2}, {1}, {0, 2}, {-1, 0, 1}};
  for (auto& dc : kDtypes)
    for (auto& [name, fn] : fns)
      for (size_t ai = 0; ai < axes_list.size(); ++ai) {
        SCOPED_TRACE(std::string(name) + " axes#" + std::to_string(ai));
        auto axes = axes_list[ai];
        compare(
            {random_input({5, 6, 300}, dc.t, 10, 0.5, 1.5)},
            [fn = fn, axes](const std::vector<kb_tensor*>& x) {
              kb_tensor* y = nullptr;
              fn(x[0], axes.empty() ? nullptr : axes.data(), axes.size(), 0, &y);
              return y;
            },
            dc.rtol * 10);
      }
}

// Few long rows take the two-pass (multi-block) reduction path.
TEST(CudaVsCpu, LongRowReductions) {
  SKIP_WITHOUT_GPU();
  using ReduceFn = kb_status (*)(kb_tensor*, const int64_t*, size_t, int32_t, kb_tensor**);
  for (auto& dc : kDtypes)
    for (ReduceFn fn : {kb_sum, kb_max, kb_min, kb_mean}) {
      compare(
          {random_input({3, 200000}, dc.t, 30, 0.5, 1.5)},
          [fn](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = nullptr;
            int64_t axis = 1;
            fn(x[0], &axis, 1, 0, &y);
            return y;
          },
          dc.rtol * 20);
      compare(
          {random_input({700, 400}, dc.t, 31, 0.5, 1.5)},
          [fn](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = nullptr;
            fn(x[0], nullptr, 0, 0, &y);
            return y;
          },
          dc.rtol * 20);
      // Few long strided columns (a bias gradient's shape) are made rows first.
      compare(
          {random_input({3000, 7}, dc.t, 32, 0.5, 1.5)},
          [fn](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = nullptr;
            int64_t axis = 0;
            fn(x[0], &axis, 1, 0, &y);
            return y;
          },
          dc.rtol * 20);
    }
}

TEST(CudaVsCpu, SoftmaxAndLosses) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes) {
    for (int64_t axis : {-1, 1, 0}) {
      compare(
          {random_input({4, 50, 3}, dc.t, 11, -5, 5)},
          [axis](const std::vector<kb_tensor*>& x) {
            kb_tensor* y;
            kb_softmax(x[0], axis, &y);
            return y;
          },
          dc.rtol);
    }
    compare(
        {random_input({8, 10}, dc.t, 12, 0, 1), random_input({8, 10}, dc.t, 13, -3, 3)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          kb_categorical_crossentropy(x[0], x[1], 1, -1, &y);
          return y;
        },
        dc.rtol);
  }
}

TEST(CudaVsCpu, MatmulFamily) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes) {
    compare(
        {random_input({33, 17}, dc.t, 14), random_input({17, 9}, dc.t, 15)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          kb_dot(x[0], x[1], &y);
          return y;
        },
        dc.rtol * 10);
    compare(
        {random_input({2, 3, 17}, dc.t, 16), random_input({4, 17, 5}, dc.t, 17)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          kb_dot(x[0], x[1], &y);
          return y;
        },
        dc.rtol * 10);
    for (auto axes : std::vector<std::vector<int64_t>>{{2, 1}, {1, 1}, {2, 2}, {1, 2}}) {
      std::vector<int64_t> sa = {6, 7, 7}, sb = {6, 7, 7};
      compare(
          {random_input(sa, dc.t, 18), random_input(sb, dc.t, 19)},
          [axes](const std::vector<kb_tensor*>& x) {
            kb_tensor* y;
            kb_batch_dot(x[0], x[1], axes.data(), &y);
            return y;
          },
          dc.rtol * 10);
    }
    compare(
        {random_input({3, 4, 5, 6}, dc.t, 20)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y;
          int64_t perm[4] = {2, 0, 3, 1};
          kb_permute_dimensions(x[0], perm, 4, &y);
          return y;
        },
        dc.rtol);
  }
}

// y = f(x) and the gradient of sum(y * w) with respect to x, for one builder f.
kb_tensor* grad_of(kb_tensor* x, kb_tensor* y, unsigned seed) {
  int64_t nd = 0;
  int64_t dims[8];
  kb_int_shape(y, dims, 8, &nd);
  std::vector<int64_t> shape(dims, dims + nd);
  kb_data_type t;
  kb_dtype(y, &t);
  bool sixteen_bit = t == KB_FLOAT16 || t == KB_BFLOAT16;  // random_input makes neither
  kb_tensor* w = make_data(random_input(shape, sixteen_bit ? KB_FLOAT32 : t, seed));
  if (sixteen_bit) {
    kb_tensor* h = nullptr;
    kb_cast(w, t, &h);
    kb_tensor_release(w);
    w = h;
  }
  kb_tensor *p = nullptr, *s = nullptr;
  kb_multiply(y, w, &p);
  kb_sum(p, nullptr, 0, 0, &s);
  kb_tensor_list* g;
  kb_tensor* gx = nullptr;
  if (kb_gradients(s, &x, 1, &g) == KB_OK) {
    kb_tensor_list_get(g, 0, &gx);
    kb_tensor_list_release(g);
  }
  for (auto* r : {w, p, s, y}) kb_tensor_release(r);
  return gx;
}

TEST(CudaVsCpu, IndexingAndMovement) {
  SKIP_WITHOUT_GPU();
  using Builder = std::function<kb_tensor*(kb_tensor*)>;
  std::vector<std::pair<const char*, Builder>> fns = {
      {"strided_slice",
       [](kb_tensor* x) {
         int64_t b[3] = {1, -1, 0}, e[3] = {4, 0, 7}, s[3] = {2, -1, 3};
         kb_tensor* y;
         kb_strided_slice(x, b, e, s, 3, 0, 0, 0, 0, &y);
         return y;
       }},
      {"slice",
       [](kb_tensor* x) {
         int64_t st[3] = {1, 0, 2}, sz[3] = {2, -1, 3};
         kb_tensor* y;
         kb_slice(x, st, sz, 3, &y);
         return y;
       }},
      {"concatenate",
       [](kb_tensor* x) {
         kb_tensor *a, *y;
         kb_square(x, &a);
         kb_tensor* parts[3] = {x, a, x};
         kb_concatenate(parts, 3, 1, &y);
         kb_tensor_release(a);
         return y;
       }},
      {"stack",
       [](kb_tensor* x) {
         kb_tensor* parts[2] = {x, x};
         kb_tensor* y;
         kb_stack(parts, 2, -1, &y);
         return y;
       }},
      {"tile",
       [](kb_tensor* x) {
         int64_t n[3] = {2, 1, 3};
         kb_tensor* y;
         kb_tile(x, n, 3, &y);
         return y;
       }},
      {"repeat_elements",
       [](kb_tensor* x) {
         kb_tensor* y;
         kb_repeat_elements(x, 3, 1, &y);
         return y;
       }},
      {"reverse",
       [](kb_tensor* x) {
         int64_t ax[2] = {0, -1};
         kb_tensor* y;
         kb_reverse(x, ax, 2, &y);
         return y;
       }},
      {"cumsum",
       [](kb_tensor* x) {
         kb_tensor* y;
         kb_cumsum(x, 1, &y);
         return y;
       }},
      {"cumprod",
       [](kb_tensor* x) {
         kb_tensor* y;
         kb_cumprod(x, 2, &y);
         return y;
       }},
  };
  for (auto& dc : kDtypes)
    for (auto& [name, fn] : fns) {
      SCOPED_TRACE(name);
      compare(
          {random_input({5, 6, 7}, dc.t, 40, 0.5, 1.5)},
          [fn = fn](const std::vector<kb_tensor*>& x) { return fn(x[0]); }, dc.rtol * 10);
      compare(
          {random_input({5, 6, 7}, dc.t, 41, 0.5, 1.5)},
          [fn = fn](const std::vector<kb_tensor*>& x) { return grad_of(x[0], fn(x[0]), 42); },
          dc.rtol * 10);
    }
}

TEST(CudaVsCpu, GatherArgmaxInTopK) {
  SKIP_WITHOUT_GPU();
  std::vector<int64_t> idx = {3, 0, 3, 9, 1, 1, 7};
  int64_t ishape[1] = {7};
  for (auto& dc : kDtypes) {
    auto gather = [&](kb_tensor* ref) {
      kb_tensor *it, *y;
      kb_tensor_from_data(idx.data(), KB_INT64, ishape, 1, &it);
      kb_gather(ref, it, &y);
      kb_tensor_release(it);
      return y;
    };
    compare(
        {random_input({10, 4}, dc.t, 50)},
        [&](const std::vector<kb_tensor*>& x) { return gather(x[0]); }, dc.rtol);
    compare(
        {random_input({10, 4}, dc.t, 51)},
        [&](const std::vector<kb_tensor*>& x) { return grad_of(x[0], gather(x[0]), 52); }, dc.rtol);
    for (int64_t axis : {0, 1, -1}) {
      compare(
          {random_input({6, 9, 4}, dc.t, 53)},
          [axis](const std::vector<kb_tensor*>& x) {
            kb_tensor* y;
            kb_argmax(x[0], axis, &y);
            return y;
          },
          0);
      compare(
          {random_input({6, 9, 4}, dc.t, 54)},
          [axis](const std::vector<kb_tensor*>& x) {
            kb_tensor* y;
            kb_argmin(x[0], axis, &y);
            return y;
          },
          0);
    }
  }
  // Long rows (a warp per row on the GPU): many ties (values on a grid of quarters), a NaN first
  // in row 1 and inside row 2, a row of one value; then integer rows (cast inside the graph).
  const int64_t length = 3000;
  Input long_rows = random_input({5, length}, KB_FLOAT32, 57);
  for (double& v : long_rows.values) v = std::round(v * 4) / 4;
  Input int_rows = long_rows;
  long_rows.values[size_t(length)] = NAN;
  long_rows.values[size_t(2 * length + 17)] = NAN;
  for (int64_t i = 0; i < length; ++i) long_rows.values[size_t(4 * length + i)] = 1.5;
  for (kb_data_type t : {KB_FLOAT32, KB_FLOAT64, KB_INT8, KB_INT32, KB_INT64})
    for (int is_max = 0; is_max < 2; ++is_max) {
      SCOPED_TRACE("long rows, type " + std::to_string(int(t)) + (is_max ? " argmax" : " argmin"));
      bool is_int = t != KB_FLOAT32 && t != KB_FLOAT64;
      compare(
          {is_int ? int_rows : long_rows},
          [t, is_max](const std::vector<kb_tensor*>& x) {
            kb_tensor *c = nullptr, *y = nullptr;
            kb_cast(x[0], t, &c);
            (is_max ? kb_argmax : kb_argmin)(c, 1, &y);
            kb_tensor_release(c);
            return y;
          },
          0);
    }
  // An out-of-range index on the device is an error, not a crash.
  {
    int64_t rshape[2] = {10, 4}, bad_idx[2] = {2, 12}, bshape[1] = {2};
    kb_tensor *ref, *it, *y;
    ok(kb_placeholder(rshape, 2, 2, KB_FLOAT32, 0, "ref", &ref));
    ok(kb_tensor_from_data(bad_idx, KB_INT64, bshape, 1, &it));
    ok(kb_gather(ref, it, &y));
    kb_compiled_function* f;
    ok(kb_function(&ref, 1, &y, 1, nullptr, 0, &f));
    ok(kb_function_set_device(f, KB_DEVICE_CUDA));
    kb_tensor* d = make_data(random_input({10, 4}, KB_FLOAT32, 56));
    kb_tensor_list* out = nullptr;
    EXPECT_NE(kb_function_call(f, &d, 1, &out), KB_OK);
    EXPECT_NE(std::string(kb_last_error_message()).find("out of range"), std::string::npos)
        << kb_last_error_message();
    kb_function_release(f);
    for (auto* t : {ref, it, y, d}) kb_tensor_release(t);
  }
  std::vector<int32_t> targets = {0, 3, 9, 2, 5, 5};
  int64_t tshape[1] = {6};
  compare(
      {random_input({6, 10}, KB_FLOAT32, 55)},
      [&](const std::vector<kb_tensor*>& x) {
        kb_tensor *t, *y;
        kb_tensor_from_data(targets.data(), KB_INT32, tshape, 1, &t);
        kb_in_top_k(x[0], t, 3, &y);
        kb_tensor_release(t);
        return y;
      },
      0);
}

// A tanh cell h' = tanh(x W + h U) for kb_rnn; user_data holds W and U.
kb_status tanh_cell(void* user_data, kb_tensor* x, kb_tensor* const* states, size_t,
                    kb_tensor** output, kb_tensor_list** new_states) {
  auto** wu = static_cast<kb_tensor**>(user_data);
  kb_tensor *a, *b, *c, *h;
  kb_dot(x, wu[0], &a);
  kb_dot(states[0], wu[1], &b);
  kb_add(a, b, &c);
  kb_tanh(c, &h);
  kb_tensor_list_new(&h, 1, new_states);
  *output = h;
  for (auto* t : {a, b, c}) kb_tensor_release(t);
  return KB_OK;
}

TEST(CudaVsCpu, RnnAndItsGradient) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes)
    for (int unroll = 0; unroll < 2; ++unroll)
      for (int grad = 0; grad < 2; ++grad) {
        SCOPED_TRACE(unroll ? "unrolled" : "symbolic");
        compare(
            {random_input({4, 7, 5}, dc.t, 60), random_input({4, 6}, dc.t, 61),
             random_input({5, 6}, dc.t, 62, -0.5, 0.5), random_input({6, 6}, dc.t, 63, -0.5, 0.5)},
            [unroll, grad](const std::vector<kb_tensor*>& x) {
              kb_tensor* wu[2] = {x[2], x[3]};
              kb_tensor *last, *outs;
              kb_tensor_list* states;
              kb_rnn(tanh_cell, wu, x[0], &x[1], 1, 0, nullptr, nullptr, 0, unroll, nullptr, &last,
                     &outs, &states);
              kb_tensor_list_release(states);
              kb_tensor_release(last);
              return grad ? grad_of(x[2], outs, 64) : outs;
            },
            dc.rtol * 50);
      }
}

// Convolutions and pooling: cuDNN against oneDNN / the reference loops, values and gradients
// with respect to the input and the kernel (backward data and backward filter).
TEST(CudaVsCpu, ConvolutionsAndPooling) {
  SKIP_WITHOUT_GPU();
  struct Case {
    const char* name;
    std::vector<int64_t> x, k;
    kb_data_format f;
    kb_padding pad;
    int64_t stride, dilation;
  };
  std::vector<Case> cases = {
      {"3x3 same nhwc", {2, 9, 9, 4}, {3, 3, 4, 5}, KB_CHANNELS_LAST, KB_PADDING_SAME, 1, 1},
      {"3x3 same nchw", {2, 4, 9, 9}, {3, 3, 4, 5}, KB_CHANNELS_FIRST, KB_PADDING_SAME, 1, 1},
      {"5x5 valid stride 2",
       {2, 11, 11, 3},
       {5, 5, 3, 6},
       KB_CHANNELS_LAST,
       KB_PADDING_VALID,
       2,
       1},
      {"3x3 dilation 2", {1, 12, 10, 2}, {3, 3, 2, 3}, KB_CHANNELS_LAST, KB_PADDING_SAME, 1, 2},
      {"2x2 same nchw (explicit padding)",
       {2, 3, 7, 6},
       {2, 2, 3, 4},
       KB_CHANNELS_FIRST,
       KB_PADDING_SAME,
       1,
       1},
      {"odd same stride 2 (explicit padding)",
       {2, 8, 8, 3},
       {3, 3, 3, 4},
       KB_CHANNELS_LAST,
       KB_PADDING_SAME,
       2,
       1},
  };
  for (auto& dc : kDtypes)
    for (auto& c : cases)
      for (int wrt = 0; wrt < 3; ++wrt) {
        SCOPED_TRACE(std::string(c.name) + " wrt " + std::to_string(wrt));
        compare(
            {random_input(c.x, dc.t, 70), random_input(c.k, dc.t, 71, -0.5, 0.5)},
            [&c, wrt](const std::vector<kb_tensor*>& x) {
              int64_t st[2] = {c.stride, c.stride}, dil[2] = {c.dilation, c.dilation};
              kb_tensor* y = nullptr;
              kb_conv2d(x[0], x[1], st, 2, c.pad, c.f, dil, 2, &y);
              if (wrt == 0) return y;
              return grad_of(x[wrt - 1], y, 72);
            },
            dc.rtol * 50);
      }
  for (auto& dc : kDtypes) {
    // conv1d (cuDNN sees it as 2-D with a height of 1), depthwise, 3-D.
    compare(
        {random_input({3, 17, 4}, dc.t, 73), random_input({3, 4, 6}, dc.t, 74)},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y = nullptr;
          kb_conv1d(x[0], x[1], 1, KB_PADDING_CAUSAL, KB_CHANNELS_LAST, 2, &y);
          return grad_of(x[1], y, 75);
        },
        dc.rtol * 50);
    compare(
        {random_input({2, 8, 8, 3}, dc.t, 76), random_input({3, 3, 3, 2}, dc.t, 77)},
        [](const std::vector<kb_tensor*>& x) {
          int64_t st[2] = {1, 1}, dil[2] = {1, 1};
          kb_tensor* y = nullptr;
          kb_depthwise_conv2d(x[0], x[1], st, 2, KB_PADDING_SAME, KB_CHANNELS_LAST, dil, 2, &y);
          return grad_of(x[0], y, 78);
        },
        dc.rtol * 50);
    compare(
        {random_input({2, 5, 6, 7, 2}, dc.t, 79), random_input({3, 3, 3, 2, 3}, dc.t, 80)},
        [](const std::vector<kb_tensor*>& x) {
          int64_t st[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
          kb_tensor* y = nullptr;
          kb_conv3d(x[0], x[1], st, 3, KB_PADDING_SAME, KB_CHANNELS_LAST, dil, 3, &y);
          return grad_of(x[1], y, 81);
        },
        dc.rtol * 50);
    for (kb_pool_mode mode : {KB_POOL_MAX, KB_POOL_AVG})
      for (kb_padding pad : {KB_PADDING_VALID, KB_PADDING_SAME})
        for (int grad = 0; grad < 2; ++grad)
          compare(
              {random_input({2, 9, 9, 3}, dc.t, 82)},
              [mode, pad, grad](const std::vector<kb_tensor*>& x) {
                int64_t ps[2] = {3, 3}, st[2] = {2, 2};
                kb_tensor* y = nullptr;
                kb_pool2d(x[0], ps, 2, st, 2, pad, KB_CHANNELS_LAST, mode, &y);
                return grad ? grad_of(x[0], y, 83) : y;
              },
              dc.rtol * 10);
  }
}

// Depthwise convolutions (cuDNN's grouped filters: the Keras kernel regrouped) in both formats,
// values and both gradients; and max pooling's gradient where windows hold tied maxima: the
// first maximum takes it on both devices.
TEST(CudaVsCpu, GroupedConvolutionsAndTiedMaxima) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes)
    for (kb_data_format f : {KB_CHANNELS_LAST, KB_CHANNELS_FIRST})
      for (int wrt = 0; wrt < 3; ++wrt) {
        SCOPED_TRACE(std::string(f == KB_CHANNELS_LAST ? "channels_last" : "channels_first") +
                     " wrt " + std::to_string(wrt));
        std::vector<int64_t> xs{2, 8, 7, 3};
        if (f == KB_CHANNELS_FIRST) xs = {2, 3, 8, 7};
        compare(
            {random_input(xs, dc.t, 126), random_input({3, 3, 3, 2}, dc.t, 127)},
            [f, wrt](const std::vector<kb_tensor*>& x) {
              int64_t st[2] = {1, 1}, dil[2] = {1, 1};
              kb_tensor* y = nullptr;
              kb_depthwise_conv2d(x[0], x[1], st, 2, KB_PADDING_SAME, f, dil, 2, &y);
              return wrt ? grad_of(x[wrt - 1], y, 128) : y;
            },
            dc.rtol * 50);
      }
  for (auto& dc : kDtypes) {
    Input x = random_input({2, 8, 8, 3}, dc.t, 129, -1.5, 1.5);
    for (double& v : x.values) v = std::round(v);  // -1, 0 and 1: most windows tie
    compare(
        {x},
        [](const std::vector<kb_tensor*>& x) {
          int64_t ps[2] = {2, 2}, st[2] = {2, 2};
          kb_tensor* y = nullptr;
          kb_pool2d(x[0], ps, 2, st, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, KB_POOL_MAX, &y);
          return grad_of(x[0], y, 130);
        },
        dc.rtol);
  }
}

// A whole training step: gradients (SumToLike, BroadcastLike, Select, MatMul with transposes)
// and updates, run five times on each device from the same initial weights.
TEST(CudaVsCpu, MlpTrainingSteps) {
  SKIP_WITHOUT_GPU();
  std::vector<double> final_w[2];
  for (int dev = 0; dev < 2; ++dev) {
    int64_t xs[2] = {-1, 12}, ys[2] = {-1, 4};
    kb_tensor *x, *y, *w, *b, *h, *hb, *a, *loss_vec, *loss;
    ok(kb_placeholder(xs, 2, 2, KB_FLOAT64, 0, "x", &x));
    ok(kb_placeholder(ys, 2, 2, KB_FLOAT64, 0, "y", &y));
    int64_t ws[2] = {12, 4}, bs[1] = {4}, seed = 3;
    ok(kb_random_normal_variable(ws, 2, 0, 0.3, KB_FLOAT64, "w", &seed, &w));
    ok(kb_zeros(bs, 1, KB_FLOAT64, "b", &b));
    ok(kb_dot(x, w, &h));
    ok(kb_bias_add(h, b, KB_CHANNELS_LAST, &hb));
    ok(kb_softmax(hb, -1, &a));
    ok(kb_categorical_crossentropy(y, a, 0, -1, &loss_vec));
    ok(kb_mean(loss_vec, nullptr, 0, 0, &loss));
    kb_tensor* params[2] = {w, b};
    kb_tensor_list* grads;
    ok(kb_gradients(loss, params, 2, &grads));
    kb_tensor* ups[2];
    double lr = 0.3;
    kb_tensor* lrt;
    ok(kb_constant(&lr, KB_FLOAT64, nullptr, 0, KB_FLOAT64, nullptr, 0, "lr", &lrt));
    for (int i = 0; i < 2; ++i) {
      kb_tensor *g, *s;
      ok(kb_tensor_list_get(grads, size_t(i), &g));
      ok(kb_multiply(lrt, g, &s));
      ok(kb_update_sub(params[i], s, &ups[i]));
      kb_tensor_release(g);
      kb_tensor_release(s);
    }
    kb_tensor* ins[2] = {x, y};
    kb_compiled_function* f;
    ok(kb_function(ins, 2, &loss, 1, ups, 2, &f));
    ok(kb_function_set_device(f, dev ? KB_DEVICE_CUDA : KB_DEVICE_CPU));
    Input xi = random_input({16, 12}, KB_FLOAT64, 21);
    Input yi = random_input({16, 4}, KB_FLOAT64, 22, 0, 1);
    for (int step = 0; step < 5; ++step) {
      kb_tensor* data[2] = {make_data(xi), make_data(yi)};
      kb_tensor_list* out;
      ok(kb_function_call(f, data, 2, &out));
      kb_tensor_list_release(out);
      kb_tensor_release(data[0]);
      kb_tensor_release(data[1]);
    }
    final_w[dev] = read(w);
    kb_function_release(f);
    for (auto* t : {x, y, w, b, h, hb, a, loss_vec, loss, lrt, ups[0], ups[1]})
      kb_tensor_release(t);
    kb_tensor_list_release(grads);
  }
  ASSERT_EQ(final_w[0].size(), final_w[1].size());
  for (size_t i = 0; i < final_w[0].size(); ++i) EXPECT_NEAR(final_w[0][i], final_w[1][i], 1e-10);
}

// float16 and bfloat16 on both devices: float32 inputs cast to the type inside the graph (others,
// such as indices, stay as they are), the operation in it (computed in float, stored rounded), the
// result cast back to float32.
using Build = std::function<kb_tensor*(const std::vector<kb_tensor*>&)>;
Build in_type(kb_data_type t, Build op) {
  return [t, op](const std::vector<kb_tensor*>& x) {
    std::vector<kb_tensor*> h(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      kb_data_type xt = KB_FLOAT32;
      kb_dtype(x[i], &xt);
      if (xt == KB_FLOAT32)
        kb_cast(x[i], t, &h[i]);
      else
        kb_tensor_retain(x[i]), h[i] = x[i];
    }
    kb_tensor* y = op(h);
    kb_tensor* r = nullptr;
    if (y) kb_cast(y, KB_FLOAT32, &r);
    for (kb_tensor* v : h) kb_tensor_release(v);
    kb_tensor_release(y);
    return r;
  };
}

void sixteen_bit_floats(kb_data_type t) {
  // bfloat16 keeps 8 significant bits, float16 11: tolerances 8 times wider.
  const double scale = t == KB_FLOAT16 ? 1 : 8;
  const double rtol = 4e-3 * scale;
  compare({random_input({6, 33}, KB_FLOAT32, 81), random_input({33}, KB_FLOAT32, 82)},
          in_type(t,
                  [](const std::vector<kb_tensor*>& x) {
                    kb_tensor *a, *b, *c, *y;
                    kb_multiply(x[0], x[1], &a);
                    kb_tanh(a, &b);
                    kb_add(b, x[1], &c);
                    kb_exp(c, &y);
                    for (kb_tensor* v : {a, b, c}) kb_tensor_release(v);
                    return y;
                  }),
          rtol);
  compare({random_input({6, 33}, KB_FLOAT32, 83), random_input({6, 1}, KB_FLOAT32, 84)},
          in_type(t,
                  [t](const std::vector<kb_tensor*>& x) {
                    kb_tensor *g, *y;
                    kb_greater(x[0], x[1], &g);
                    kb_cast(g, t, &y);
                    kb_tensor_release(g);
                    return y;
                  }),
          0);
  for (int axis = 0; axis < 2; ++axis) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    compare({random_input({37, 70}, KB_FLOAT32, 85)},
            in_type(t,
                    [axis](const std::vector<kb_tensor*>& x) {
                      int64_t ax = axis;
                      kb_tensor *s, *m, *p, *y;
                      kb_sum(x[0], &ax, 1, 1, &s);
                      kb_max(x[0], &ax, 1, 1, &m);
                      kb_softmax(x[0], axis, &p);
                      kb_tensor *sm, *ps;
                      kb_add(s, m, &sm);
                      kb_multiply(p, sm, &ps);
                      kb_cumsum(ps, axis, &y);
                      for (kb_tensor* v : {s, m, p, sm, ps}) kb_tensor_release(v);
                      return y;
                    }),
            2e-2 * scale);
  }
  compare({random_input({3, 17, 24}, KB_FLOAT32, 86), random_input({24, 9}, KB_FLOAT32, 87)},
          in_type(t,
                  [](const std::vector<kb_tensor*>& x) {
                    kb_tensor* y = nullptr;
                    kb_dot(x[0], x[1], &y);
                    return y;
                  }),
          2e-2 * scale);
  for (int wrt = 0; wrt < 3; ++wrt) {
    SCOPED_TRACE("conv wrt " + std::to_string(wrt));
    compare({random_input({2, 9, 9, 4}, KB_FLOAT32, 88),
             random_input({3, 3, 4, 8}, KB_FLOAT32, 89, -0.5, 0.5)},
            in_type(t,
                    [wrt](const std::vector<kb_tensor*>& x) {
                      int64_t st[2] = {1, 1}, dil[2] = {1, 1}, ps[2] = {2, 2};
                      kb_tensor *c, *y;
                      kb_conv2d(x[0], x[1], st, 2, KB_PADDING_SAME, KB_CHANNELS_LAST, dil, 2, &c);
                      kb_pool2d(c, ps, 2, ps, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, KB_POOL_MAX,
                                &y);
                      kb_tensor_release(c);
                      if (wrt == 0) return y;
                      return grad_of(x[wrt - 1], y, 90);
                    }),
            3e-2 * scale);
  }
  // Scattered sums of 3000 terms into one element (gather's gradient, a sparse product with
  // duplicates): float accumulators rounded once on both devices, so they differ by the order of
  // float sums alone (16-bit sums would stall at 2048 or 256).
  std::vector<int64_t> rows(3000, 1), coo;
  rows.insert(rows.end(), {0, 3, 3});
  for (int64_t r : rows) coo.insert(coo.end(), {r % 2, r});
  auto index = [](std::vector<int64_t>& v, std::vector<int64_t> shape) {
    kb_tensor* i = nullptr;
    kb_tensor_from_data(v.data(), KB_INT64, shape.data(), shape.size(), &i);
    return i;
  };
  compare({random_input({4, 5}, KB_FLOAT32, 92)},
          in_type(t,
                  [&](const std::vector<kb_tensor*>& x) {
                    kb_tensor *i = index(rows, {int64_t(rows.size())}), *y = nullptr;
                    kb_gather(x[0], i, &y);
                    kb_tensor_release(i);
                    return grad_of(x[0], y, 93);
                  }),
          1e-3 * scale);
  compare(
      {random_input({int64_t(rows.size())}, KB_FLOAT32, 94, 0, 1),
       random_input({4, 3}, KB_FLOAT32, 95)},
      in_type(t,
              [&](const std::vector<kb_tensor*>& x) {
                kb_tensor *i = index(coo, {int64_t(rows.size()), 2}), *sp = nullptr, *y = nullptr;
                int64_t shape[2] = {2, 4};
                kb_sparse_tensor(i, x[0], shape, 2, "sp", &sp);
                kb_dot(sp, x[1], &y);
                for (kb_tensor* v : {i, sp}) kb_tensor_release(v);
                return y;
              }),
      1e-3 * scale);
  compare({random_input({5, 7}, KB_FLOAT32, 91)},
          in_type(t,
                  [t](const std::vector<kb_tensor*>& x) {
                    kb_tensor *a, *y;
                    kb_argmax(x[0], 1, &a);
                    kb_cast(a, t, &y);
                    kb_tensor_release(a);
                    return y;
                  }),
          0);
}

// The kernels that sixteen_bit_floats leaves out, each in float16 or bfloat16 (the CUDA plugin
// takes both wherever it takes float32, except for the float32-only fused products and CTC,
// whose inputs are float32 or float64).
void more_sixteen_bit_kernels(kb_data_type t) {
  const double rtol = t == KB_FLOAT16 ? 4e-3 : 3e-2;
  auto check = [&](const char* name, std::vector<Input> inputs, Build op, double tol) {
    SCOPED_TRACE(name);
    compare(inputs, in_type(t, std::move(op)), tol);
  };
  const std::pair<const char*, UnaryFn> unary[] = {
      {"abs", kb_abs},           {"cos", kb_cos},   {"log", kb_log},     {"sigmoid", kb_sigmoid},
      {"sin", kb_sin},           {"sign", kb_sign}, {"round", kb_round}, {"square", kb_square},
      {"softplus", kb_softplus}, {"erf", kb_erf}};
  for (auto& [name, fn] : unary)
    check(
        name, {random_input({6, 11}, KB_FLOAT32, 130, 0.1, 3)},
        [fn = fn](const std::vector<kb_tensor*>& x) {
          kb_tensor* y = nullptr;
          fn(x[0], &y);
          return y;
        },
        rtol);
  const std::pair<const char*, BinaryFn> binary[] = {{"maximum", kb_maximum},
                                                     {"minimum", kb_minimum},
                                                     {"equal", kb_equal},
                                                     {"not_equal", kb_not_equal},
                                                     {"greater_equal", kb_greater_equal},
                                                     {"less", kb_less},
                                                     {"less_equal", kb_less_equal}};
  for (auto& [name, fn] : binary)
    check(
        name, {random_input({4, 1, 6}, KB_FLOAT32, 131), random_input({5, 1}, KB_FLOAT32, 132)},
        [fn = fn](const std::vector<kb_tensor*>& x) {
          kb_tensor *r = nullptr, *y = nullptr;
          kb_round(x[0], &r);  // ties, for the comparisons
          fn(r, x[1], &y);
          kb_tensor_release(r);
          return y;
        },
        rtol);
  check(
      "pow, relu", {random_input({6, 7}, KB_FLOAT32, 133, 0.1, 2)},
      [](const std::vector<kb_tensor*>& x) {
        kb_tensor *p = nullptr, *y = nullptr;
        kb_pow(x[0], 1.7, &p);
        kb_relu(p, 0, nullptr, 0, &y);
        kb_tensor_release(p);
        return grad_of(x[0], y, 134);
      },
      rtol * 4);
  for (int wrt = 0; wrt < 2; ++wrt)
    check(
        "binary_crossentropy from logits",
        {random_input({6, 9}, KB_FLOAT32, 135, 0, 1), random_input({6, 9}, KB_FLOAT32, 136, -6, 6)},
        [wrt](const std::vector<kb_tensor*>& x) {
          kb_tensor* y = nullptr;
          kb_binary_crossentropy(x[0], x[1], 1, &y);
          return wrt ? grad_of(x[1], y, 137) : y;
        },
        rtol * 4);
  for (int grad = 0; grad < 2; ++grad) {
    check(
        "categorical_crossentropy from logits, logsumexp",
        {random_input({8, 10}, KB_FLOAT32, 138, 0, 1), random_input({8, 10}, KB_FLOAT32, 139)},
        [grad](const std::vector<kb_tensor*>& x) {
          kb_tensor *c = nullptr, *l = nullptr, *y = nullptr;
          int64_t axis = 1;
          kb_categorical_crossentropy(x[0], x[1], 1, -1, &c);
          kb_logsumexp(x[1], &axis, 1, 0, &l);
          kb_add(c, l, &y);
          kb_tensor_release(c);
          kb_tensor_release(l);
          return grad ? grad_of(x[1], y, 140) : y;
        },
        rtol * 4);
    check(
        "select, switch on a computed condition",
        {random_input({3, 4}, KB_FLOAT32, 141), random_input({3, 4}, KB_FLOAT32, 142)},
        [grad](const std::vector<kb_tensor*>& x) {
          kb_tensor *g = nullptr, *sel = nullptr, *sx = nullptr, *cond = nullptr, *y = nullptr;
          kb_greater(x[0], x[1], &g);
          kb_switch(g, x[0], x[1], &sel);
          kb_sum(x[0], nullptr, 0, 0, &sx);
          kb_greater(sx, sx, &cond);  // false
          kb_switch(cond, x[1], sel, &y);
          for (kb_tensor* v : {g, sel, sx, cond}) kb_tensor_release(v);
          return grad ? grad_of(x[0], y, 143) : y;
        },
        rtol);
    check(
        "concatenate, spatial padding, reverse, slice, tile, permute, stop_gradient",
        {random_input({2, 3, 4, 5}, KB_FLOAT32, 144), random_input({5}, KB_FLOAT32, 145)},
        [grad](const std::vector<kb_tensor*>& x) {
          kb_tensor *b = nullptr, *st = nullptr, *parts[2] = {x[0], nullptr}, *c = nullptr,
                    *pd = nullptr, *rv = nullptr, *sl = nullptr, *tl = nullptr, *y = nullptr;
          kb_add(x[0], x[1], &b);  // its gradient: SumToLike
          kb_stop_gradient(b, &st);
          kb_square(b, &parts[1]);
          kb_concatenate(parts, 2, 1, &c);
          int64_t pads[4] = {1, 0, 2, 1}, axes[2] = {0, 2}, start[4] = {0, 1, 1, 0},
                  size[4] = {2, 4, 3, -1}, mult[4] = {1, 2, 1, 1}, perm[4] = {3, 1, 0, 2};
          kb_spatial_2d_padding(c, pads, 4, KB_CHANNELS_FIRST, &pd);
          kb_reverse(pd, axes, 2, &rv);
          kb_slice(rv, start, size, 4, &sl);
          kb_tile(sl, mult, 4, &tl);
          kb_permute_dimensions(tl, perm, 4, &y);
          for (kb_tensor* v : {b, st, parts[1], c, pd, rv, sl, tl}) kb_tensor_release(v);
          return grad ? grad_of(x[1], y, 146) : y;
        },
        rtol * 4);
    check(
        "resize_images, identity, max pooling's second derivative",
        {random_input({2, 4, 5, 3}, KB_FLOAT32, 147)},
        [grad](const std::vector<kb_tensor*>& x) {
          int64_t ps[2] = {2, 2};
          kb_tensor *r = nullptr, *id = nullptr, *p = nullptr, *sq = nullptr;
          // nearest: bilinear resizing computes in float32 whatever the type (as TensorFlow's)
          kb_resize_images(x[0], 2, 3, KB_CHANNELS_LAST, KB_INTERPOLATION_NEAREST, &r);
          kb_identity(r, "id", &id);
          kb_pool2d(id, ps, 2, ps, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, KB_POOL_MAX, &p);
          kb_square(p, &sq);
          for (kb_tensor* v : {r, id, p}) kb_tensor_release(v);
          return grad ? grad_of(x[0], grad_of(x[0], sq, 148), 149) : sq;
        },
        rtol * 8);
  }
  Input idx{{6, 2}, KB_INT64, {0, 1, 2, 3, 1, 0, 0, 1, 3, 2, 2, 0}};
  Input rows{{5}, KB_INT64, {3, 0, 3, 1, 2}};
  check(
      "gather, sparse tensor, to_dense, gather_nd, scatter_nd",
      {idx, rows, random_input({6}, KB_FLOAT32, 150), random_input({4, 5}, KB_FLOAT32, 151)},
      [](const std::vector<kb_tensor*>& x) {
        int64_t shape[2] = {4, 5};
        kb_tensor *sp = nullptr, *d = nullptr, *ad = nullptr, *a = nullptr, *gt = nullptr,
                  *p = nullptr, *s = nullptr, *gv = nullptr, *sv = nullptr, *g3 = nullptr,
                  *y = nullptr;
        kb_sparse_tensor(x[0], x[2], shape, 2, "sp", &sp);
        kb_to_dense(sp, &d);
        kb_add(sp, x[3], &ad);
        kb_add(ad, d, &a);
        kb_gather(a, x[1], &gt);
        kb_multiply(gt, gt, &p);
        kb_sum(p, nullptr, 0, 0, &s);
        kb_tensor_list* gl = nullptr;
        if (kb_gradients(s, &x[2], 1, &gl) == KB_OK) {  // GatherNd
          kb_tensor_list_get(gl, 0, &gv);
          kb_tensor_list_release(gl);
        }
        if (gv) {  // gv: GatherNd; its gradient: ScatterNdLike and ScatterAddLike
          kb_sum(gv, nullptr, 0, 0, &sv);
          g3 = grad_of(x[3], gv, 152);  // releases gv
          kb_multiply(g3, sv, &y);
        }
        for (kb_tensor* v : {sp, d, ad, a, gt, p, s, sv, g3}) kb_tensor_release(v);
        return y;
      },
      rtol * 8);
  check(
      "in_top_k", {random_input({6, 9}, KB_FLOAT32, 153), Input{{6}, KB_INT64, {0, 8, 3, 3, 5, 1}}},
      [](const std::vector<kb_tensor*>& x) {
        kb_tensor* y = nullptr;
        kb_in_top_k(x[0], x[1], 3, &y);
        return y;
      },
      0);
  compare(
      {Input{{3, 5}, KB_INT64, {4, 2, 7, 1, 1, 3, 3, 0, 5, 6, 9, 8, 2, 4, 4}},
       Input{{3}, KB_INT64, {2, 5, 0}}},
      [t](const std::vector<kb_tensor*>& x) {  // a fill after a step of run-time shape
        kb_tensor *sp = nullptr, *i, *v, *ds, *ones, *vt, *a, *y;
        kb_ctc_label_dense_to_sparse(x[0], x[1], &sp);
        kb_sparse_parts(sp, &i, &v, &ds);
        kb_ones_like(v, t, "ones", &ones);
        kb_cast(v, t, &vt);
        kb_add(ones, vt, &a);
        kb_cast(a, KB_FLOAT32, &y);
        for (kb_tensor* r : {sp, i, v, ds, ones, vt, a}) kb_tensor_release(r);
        return y;
      },
      0);
  // Draws (and dropout's floor) in the type: a fresh node per device (a node counts its runs).
  const int64_t seed = 55;
  for (int dropout = 0; dropout < 2; ++dropout) {
    SCOPED_TRACE(dropout ? "dropout" : "random_uniform");
    std::vector<double> runs[2];
    for (int dev = 0; dev < 2; ++dev) {
      const int64_t shape[2] = {9, 13};
      kb_tensor *r = nullptr, *y = nullptr;
      ok(kb_random_uniform(shape, 2, 0.5, 2.0, t, &seed, &r));
      if (dropout)
        ok(kb_dropout(r, 0.4, nullptr, 0, &seed, &y)), kb_tensor_release(r);
      else
        y = r;
      kb_tensor* y32 = nullptr;
      ok(kb_cast(y, KB_FLOAT32, &y32));
      runs[dev] = values_without_inputs(y32, dev);
      kb_tensor_release(y32);
      kb_tensor_release(y);
    }
    ASSERT_FALSE(runs[0].empty());
    ASSERT_EQ(runs[0], runs[1]);
  }
}

TEST(CudaVsCpu, SixteenBitFloats) {
  SKIP_WITHOUT_GPU();
  for (kb_data_type t : {KB_FLOAT16, KB_BFLOAT16}) {
    SCOPED_TRACE(t == KB_FLOAT16 ? "float16" : "bfloat16");
    sixteen_bit_floats(t);
    more_sixteen_bit_kernels(t);
  }
}

// The GPU draws the CPU's numbers: a fresh node per device (a node counts its runs), two runs
// each, every distribution and floating dtype.
TEST(CudaVsCpu, RandomDrawsTheCpuNumbers) {
  SKIP_WITHOUT_GPU();
  using Draw = kb_status (*)(const int64_t*, size_t, double, double, kb_data_type, const int64_t*,
                             kb_tensor**);
  const std::pair<const char*, Draw> draws[] = {{"uniform", kb_random_uniform},
                                                {"normal", kb_random_normal},
                                                {"truncated_normal", kb_truncated_normal}};
  const int64_t shape[2] = {37, 29}, seed = 1234;
  for (kb_data_type t : {KB_FLOAT32, KB_FLOAT64})
    for (auto& [name, draw] : draws) {
      SCOPED_TRACE(std::string(name) + (t == KB_FLOAT32 ? " float32" : " float64"));
      std::vector<double> runs[2];
      for (int dev = 0; dev < 2; ++dev) {
        kb_tensor* r = nullptr;
        ok(draw(shape, 2, 0.5, 2.0, t, &seed, &r));
        runs[dev] = values_without_inputs(r, dev, 2);
        kb_tensor_release(r);
      }
      ASSERT_EQ(runs[0].size(), runs[1].size());
      ASSERT_FALSE(runs[0].empty());
      for (size_t i = 0; i < runs[0].size(); ++i)
        ASSERT_NEAR(runs[0][i], runs[1][i], 1e-6 * (1 + std::fabs(runs[0][i]))) << "at " << i;
    }
}

TEST(CudaVsCpu, ZeroPadding) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes)
    for (kb_data_format f : {KB_CHANNELS_LAST, KB_CHANNELS_FIRST})
      for (int wrt = 0; wrt < 2; ++wrt)
        compare(
            {random_input({2, 5, 6, 3}, dc.t, 95)},
            [f, wrt](const std::vector<kb_tensor*>& x) {
              int64_t pads[4] = {1, 2, 0, 3};
              kb_tensor* y = nullptr;
              kb_spatial_2d_padding(x[0], pads, 4, f, &y);
              if (wrt == 0) return y;
              return grad_of(x[0], y, 96);
            },
            dc.rtol);
}

// Pooling whose padding cuDNN cannot describe ('same' with an odd remainder: the plugin's own
// kernels), and max pooling's second derivative (MaxPoolGradGrad).
TEST(CudaVsCpu, AsymmetricPoolingAndSecondOrder) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes)
    for (kb_data_format f : {KB_CHANNELS_LAST, KB_CHANNELS_FIRST})
      for (kb_pool_mode mode : {KB_POOL_MAX, KB_POOL_AVG})
        for (int order = 0; order < 3; ++order) {
          if (order == 2 && mode == KB_POOL_AVG) continue;  // linear: no second derivative
          SCOPED_TRACE("order " + std::to_string(order));
          compare(
              {random_input({2, 8, 6, 3}, dc.t, 86)},
              [f, mode, order](const std::vector<kb_tensor*>& x) {
                int64_t ps[2] = {3, 2}, st[2] = {2, 1};
                kb_tensor *y = nullptr, *sq = nullptr;
                kb_pool2d(x[0], ps, 2, st, 2, KB_PADDING_SAME, f, mode, &y);
                if (order == 0) return y;
                if (order == 1) return grad_of(x[0], y, 87);
                kb_square(y, &sq);
                return grad_of(x[0], grad_of(x[0], sq, 88), 89);
              },
              dc.rtol * 10);
        }
  for (auto& dc : kDtypes)
    for (int grad = 0; grad < 2; ++grad)
      compare(
          {random_input({1, 2, 5, 4, 6}, dc.t, 90)},
          [grad](const std::vector<kb_tensor*>& x) {
            int64_t ps[3] = {2, 2, 2}, st[3] = {2, 2, 2};
            kb_tensor* y = nullptr;
            kb_pool3d(x[0], ps, 3, st, 3, KB_PADDING_SAME, KB_CHANNELS_FIRST, KB_POOL_AVG, &y);
            return grad ? grad_of(x[0], y, 91) : y;
          },
          dc.rtol * 10);
}

// resize_images (nearest and bilinear, both layouts) and resize_volumes, values and gradients.
TEST(CudaVsCpu, ResizeImagesAndVolumes) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes)
    for (kb_data_format f : {KB_CHANNELS_LAST, KB_CHANNELS_FIRST})
      for (kb_interpolation how : {KB_INTERPOLATION_NEAREST, KB_INTERPOLATION_BILINEAR})
        for (int grad = 0; grad < 2; ++grad)
          compare(
              {random_input({2, 4, 5, 3}, dc.t, 92)},
              [f, how, grad](const std::vector<kb_tensor*>& x) {
                kb_tensor* y = nullptr;
                kb_resize_images(x[0], 2, 3, f, how, &y);
                return grad ? grad_of(x[0], y, 93) : y;
              },
              dc.rtol);
  // Integer images (nearest only), on the GPU too.
  for (kb_data_format f : {KB_CHANNELS_LAST, KB_CHANNELS_FIRST})
    compare(
        {random_input({2, 4, 5, 3}, KB_INT64, 95, -1000, 1000)},
        [f](const std::vector<kb_tensor*>& x) {
          kb_tensor* y = nullptr;
          kb_resize_images(x[0], 3, 2, f, KB_INTERPOLATION_NEAREST, &y);
          return y;
        },
        0);
  for (auto& dc : kDtypes)
    for (int grad = 0; grad < 2; ++grad)
      compare(
          {random_input({1, 3, 2, 3, 2}, dc.t, 94)},
          [grad](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = nullptr;
            kb_resize_volumes(x[0], 2, 1, 3, KB_CHANNELS_LAST, &y);
            return grad ? grad_of(x[0], y, 97) : y;
          },
          dc.rtol);
}

// K.switch on a condition the graph computes (no constant to resolve at plan time): both
// branches taken, values and gradient.
TEST(CudaVsCpu, SwitchOnComputedCondition) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes)
    for (int taken = 0; taken < 2; ++taken)
      for (int grad = 0; grad < 2; ++grad)
        compare(
            {random_input({3, 4}, dc.t, 98, taken ? 0 : -2, taken ? 2 : 0),
             random_input({3, 4}, dc.t, 99, taken ? -2 : 0, taken ? 0 : 2)},
            [grad](const std::vector<kb_tensor*>& x) {
              kb_tensor *sx = nullptr, *sy = nullptr, *cond = nullptr, *a = nullptr, *b = nullptr,
                        *y = nullptr;
              kb_sum(x[0], nullptr, 0, 0, &sx);
              kb_sum(x[1], nullptr, 0, 0, &sy);
              kb_greater(sx, sy, &cond);
              kb_square(x[0], &a);
              kb_exp(x[1], &b);
              kb_switch(cond, a, b, &y);
              return grad ? grad_of(x[0], y, 100) : y;
            },
            dc.rtol);
}

// ctc_batch_cost and its gradient: entries of different input and label lengths, repeated labels
// (which need a blank between them), a label that cannot fit its steps (+inf), a label >= the
// blank ending a sequence; then bad lengths, found on the device's path with the CPU's message.
TEST(CudaVsCpu, CtcLossAndGradient) {
  SKIP_WITHOUT_GPU();
  const int64_t batch = 5, steps = 9, classes = 6;
  Input labels{{batch, 4}, KB_INT64, {1, 1, 2,      0, /**/ 3, 3, 3,      3, /**/ 0, 4,
                                      5, 0, /**/ 2, 0, 0,      0, /**/ 4, 4, 4,      4}};
  Input label_length{{batch, 1}, KB_INT64, {3, 4, 2, 1, 4}};
  // entry 4 (4 4 4 4) needs 7 steps: given 5, its cost is +inf and its gradient the softmax
  Input input_length{{batch, 1}, KB_INT64, {9, 7, 4, 1, 5}};
  auto cost = [](const std::vector<kb_tensor*>& x) {
    kb_tensor* y = nullptr;
    kb_ctc_batch_cost(x[1], x[0], x[3], x[2], &y);
    return y;
  };
  // The whole batch in one chunk of scratch, then in chunks: an entry takes 1080 bytes of
  // scratch for the loss and 2160 for the gradient, so the budgets give chunks of 1, 2 and 4
  // entries (loss) and 1, 1 and 2 (gradient); a budget of 1 byte runs one entry at a time.
  const char* budgets[] = {nullptr, "1", "2500", "4500"};
  for (const char* budget : budgets) {
    SCOPED_TRACE(std::string("scratch budget ") + (budget ? budget : "default"));
    if (budget)
      setenv("KB_CUDA_CTC_SCRATCH_BYTES", budget, 1);
    else
      unsetenv("KB_CUDA_CTC_SCRATCH_BYTES");
    for (auto& dc : kDtypes)
      for (int grad = 0; grad < 2; ++grad)
        compare(
            {random_input({batch, steps, classes}, dc.t, 101, 0.05, 1), labels, label_length,
             input_length},
            [&](const std::vector<kb_tensor*>& x) {
              kb_tensor* y = cost(x);
              return grad ? grad_of(x[0], y, 102) : y;
            },
            dc.rtol * 10);
  }
  unsetenv("KB_CUDA_CTC_SCRATCH_BYTES");

  Input short_input = input_length;
  short_input.values[1] = 3;  // entry 1 has 4 labels
  expect_device_error({random_input({batch, steps, classes}, KB_FLOAT32, 103, 0.05, 1), labels,
                       label_length, short_input},
                      cost, KB_ERROR_INVALID_ARGUMENT, "input_length[1] = 3 is shorter than");
}

// normalize_batch_in_training through BatchNorm and BatchCenteredDot: channels last (several
// row chunks, a partial tile of 32 channels), channels first (runs longer than a chunk), a dense
// batch; the normalized values, the moments and the gradients of x and gamma; float32, float64
// and the 16-bit floats (computed in float on both devices).
TEST(CudaVsCpu, BatchNormalizationInTraining) {
  SKIP_WITHOUT_GPU();
  struct Case {
    std::vector<int64_t> shape, axes;
    int64_t channels;
  };
  const Case cases[] = {
      {{2, 40, 40, 40}, {0, 1, 2}, 40}, {{2, 3, 100, 100}, {0, 2, 3}, 3}, {{300, 24}, {0}, 24}};
  const DtypeCase types[] = {kDtypes[0], kDtypes[1], {KB_FLOAT16, 2e-2}, {KB_BFLOAT16, 1e-1}};
  for (const DtypeCase& dc : types)
    for (const Case& c : cases)
      for (int which = 0; which < 5; ++which) {
        SCOPED_TRACE("dtype " + std::to_string(int(dc.t)) + ", output " + std::to_string(which) +
                     ", rank " + std::to_string(c.shape.size()));
        bool narrow = dc.t == KB_FLOAT16 || dc.t == KB_BFLOAT16;
        Build outputs = [&c, which](const std::vector<kb_tensor*>& x) {
          kb_tensor *normed = nullptr, *mean = nullptr, *var = nullptr, *y = nullptr;
          kb_normalize_batch_in_training(x[0], x[1], nullptr, c.axes.data(), c.axes.size(), 1e-3,
                                         &normed, &mean, &var);
          if (which == 0) y = normed;
          if (which == 1) y = mean;
          if (which == 2) y = var;
          if (which >= 3) {
            y = grad_of(x[size_t(which - 3)], normed, 113);
            normed = nullptr;  // grad_of released it
          }
          for (kb_tensor* t : {normed, mean, var})
            if (t && t != y) kb_tensor_release(t);
          return y;
        };
        kb_data_type given = narrow ? KB_FLOAT32 : dc.t;  // the 16-bit ones cast from float32
        compare({random_input(c.shape, given, 111, 1, 3), random_input({c.channels}, given, 112)},
                narrow ? in_type(dc.t, outputs) : outputs, dc.rtol);
      }
}

// Sparse tensors: densified (duplicates add up; ranks 2 and 3), the sparse x dense product and
// its gradients (the dense operand: the adjoint product; the values), the values' gradient of a
// densified tensor (GatherNd) and its own gradient (ScatterNdLike); then an index out of range,
// found on the device's path with the CPU's message.
TEST(CudaVsCpu, SparseTensors) {
  SKIP_WITHOUT_GPU();
  Input idx2{{6, 2}, KB_INT64, {0, 1, 2, 3, 1, 0, 0, 1, 3, 2, 2, 0}};  // (0, 1) twice
  Input idx3{{4, 3}, KB_INT64, {0, 1, 2, 1, 0, 0, 1, 1, 1, 0, 1, 2}};  // (0, 1, 2) twice
  auto sparse = [](kb_tensor* idx, kb_tensor* val, std::vector<int64_t> shape) {
    kb_tensor* sp = nullptr;
    kb_sparse_tensor(idx, val, shape.data(), shape.size(), "sp", &sp);
    return sp;
  };
  auto dense = [&](kb_tensor* idx, kb_tensor* val, std::vector<int64_t> shape) {
    kb_tensor *sp = sparse(idx, val, shape), *d = nullptr;
    kb_to_dense(sp, &d);
    kb_tensor_release(sp);
    return d;
  };
  for (auto& dc : kDtypes)
    for (int grad = 0; grad < 2; ++grad) {
      compare(
          {idx2, random_input({6}, dc.t, 104)},
          [&](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = dense(x[0], x[1], {4, 5});
            return grad ? grad_of(x[1], y, 105) : y;
          },
          dc.rtol);
      compare(
          {idx3, random_input({4}, dc.t, 106)},
          [&](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = dense(x[0], x[1], {2, 2, 3});
            return grad ? grad_of(x[1], y, 107) : y;
          },
          dc.rtol);
      for (int wrt = 0; wrt < 2; ++wrt)
        compare(
            {idx2, random_input({6}, dc.t, 108), random_input({5, 3}, dc.t, 109)},
            [&](const std::vector<kb_tensor*>& x) {
              kb_tensor *sp = sparse(x[0], x[1], {4, 5}), *y = nullptr;
              kb_dot(sp, x[2], &y);
              kb_tensor_release(sp);
              return grad ? grad_of(x[wrt ? 2 : 1], y, 110) : y;
            },
            dc.rtol);
    }
  // Integer and boolean products and densified duplicates: exact sums, the same on both devices
  // whatever their order (int8 products of +-50 wrap, as the CPU's int8 sums do; bool sums are
  // ORs). The narrow types are cast from int64 inside the graph and the result cast back.
  for (kb_data_type t : {KB_INT64, KB_INT32, KB_INT16, KB_INT8, KB_UINT8, KB_BOOL}) {
    SCOPED_TRACE("dtype " + std::to_string(int(t)));
    auto in_t = [t](kb_tensor* x) {
      kb_tensor* y = nullptr;
      kb_cast(x, t, &y);
      return y;
    };
    auto as_int64 = [](kb_tensor* y) {
      kb_tensor* r = nullptr;
      kb_cast(y, KB_INT64, &r);
      kb_tensor_release(y);
      return r;
    };
    double lo = t == KB_UINT8 ? 0 : -50;
    compare(
        {idx2, random_input({6}, KB_INT64, 119, lo, 50),
         random_input({5, 3}, KB_INT64, 124, lo, 50)},
        [&](const std::vector<kb_tensor*>& x) {
          kb_tensor *v = in_t(x[1]), *b = in_t(x[2]), *sp = sparse(x[0], v, {4, 5}), *y = nullptr;
          kb_dot(sp, b, &y);
          for (auto* r : {v, b, sp}) kb_tensor_release(r);
          return as_int64(y);
        },
        0);
    compare(
        {idx2, random_input({6}, KB_INT64, 128, lo, 50)},
        [&](const std::vector<kb_tensor*>& x) {
          kb_tensor* v = in_t(x[1]);
          kb_tensor* y = dense(x[0], v, {4, 5});
          kb_tensor_release(v);
          return as_int64(y);
        },
        0);
  }
  // d(values) of sum(w * dense) is GatherNd(w, indices); its gradient with respect to w is
  // ScatterNdLike.
  for (auto& dc : kDtypes)
    compare(
        {idx2, random_input({6}, dc.t, 111), random_input({4, 5}, dc.t, 112)},
        [&](const std::vector<kb_tensor*>& x) {
          kb_tensor *d = dense(x[0], x[1], {4, 5}), *p = nullptr, *s = nullptr, *g = nullptr;
          kb_multiply(d, x[2], &p);
          kb_sum(p, nullptr, 0, 0, &s);
          kb_tensor_list* gl = nullptr;
          if (kb_gradients(s, &x[1], 1, &gl) == KB_OK) {
            kb_tensor_list_get(gl, 0, &g);
            kb_tensor_list_release(gl);
          }
          for (auto* r : {d, p, s}) kb_tensor_release(r);
          return g ? grad_of(x[2], g, 113) : nullptr;
        },
        dc.rtol);

  Input bad = idx2;
  bad.values[9] = 7;  // entry 4's column
  expect_device_error(
      {bad, random_input({6}, KB_FLOAT32, 114)},
      [&](const std::vector<kb_tensor*>& x) {
        return dense(x[0], x[1], {4, 5});
      },
      KB_ERROR_INVALID_ARGUMENT, "index 7 is out of range [0, 5) on axis 1");
  // With nothing to compute (b has no column) an entry out of range fails all the same.
  expect_device_error(
      {bad, random_input({6}, KB_FLOAT32, 125), Input{{5, 0}, KB_FLOAT32, {}}},
      [&](const std::vector<kb_tensor*>& x) {
        kb_tensor *sp = sparse(x[0], x[1], {4, 5}), *y = nullptr;
        kb_dot(sp, x[2], &y);
        kb_tensor_release(sp);
        return y;
      },
      KB_ERROR_INVALID_ARGUMENT, "sparse index (3, 7) is out of range for shape");
}

// What the epilogue rewrite fuses after a product p (whose reference it takes): form 0 a bias add
// and relu, 1 a bias add, 2 relu.
kb_tensor* with_epilogue(kb_tensor* p, kb_tensor* bias, kb_data_format format, int form) {
  kb_tensor* y = nullptr;
  if (form < 2) {
    kb_bias_add(p, bias, format, &y);
    kb_tensor_release(p);
    p = y;
  }
  if (form != 1) {
    kb_relu(p, 0, nullptr, 0, &y);
    kb_tensor_release(p);
    p = y;
  }
  return p;
}

// Dense layers as the epilogue rewrite fuses them (FusedMatMul: cuBLASLt's bias and relu
// epilogues on the GPU, oneDNN's post-ops on the CPU): bias + relu, bias alone, relu alone, and
// the gradients through a fused forward pass.
TEST(CudaVsCpu, FusedMatMulEpilogues) {
  SKIP_WITHOUT_GPU();
  for (int form = 0; form < 3; ++form)
    for (int grad = 0; grad < 2; ++grad)
      compare(
          {random_input({9, 33}, KB_FLOAT32, 115), random_input({33, 17}, KB_FLOAT32, 116),
           random_input({17}, KB_FLOAT32, 117)},
          [form, grad](const std::vector<kb_tensor*>& x) {
            kb_tensor* p = nullptr;
            kb_dot(x[0], x[1], &p);
            p = with_epilogue(p, x[2], KB_CHANNELS_LAST, form);
            return grad ? grad_of(x[form == 2 ? 0 : 2], p, 118) : p;
          },
          2e-5);
}

// Convolutions as the epilogue rewrite fuses them (FusedConv: cuDNN's fused forward pass or the
// convolution and an epilogue kernel on the GPU, oneDNN's post-ops on the CPU): bias + relu, bias
// alone, relu alone; 2-D in both data formats with an odd 'same' padding (the explicit border),
// causal 1-D, 3-D; values and the gradients through a fused forward pass.
TEST(CudaVsCpu, FusedConvEpilogues) {
  SKIP_WITHOUT_GPU();
  struct Case {
    const char* name;
    std::vector<int64_t> x, k;
    kb_data_format format;
  };
  const Case cases[] = {{"2-D channels_last", {2, 9, 8, 3}, {3, 3, 3, 5}, KB_CHANNELS_LAST},
                        {"2-D channels_first", {2, 3, 9, 8}, {3, 3, 3, 5}, KB_CHANNELS_FIRST},
                        {"1-D causal", {3, 11, 4}, {3, 4, 6}, KB_CHANNELS_LAST},
                        {"3-D", {2, 5, 4, 6, 2}, {2, 3, 2, 2, 4}, KB_CHANNELS_LAST}};
  for (const Case& c : cases)
    for (int form = 0; form < 3; ++form)
      for (int grad = 0; grad < 2; ++grad) {
        SCOPED_TRACE(std::string(c.name) + " form " + std::to_string(form) + " grad " +
                     std::to_string(grad));
        compare(
            {random_input(c.x, KB_FLOAT32, 120), random_input(c.k, KB_FLOAT32, 121, -0.5, 0.5),
             random_input({c.k.back()}, KB_FLOAT32, 122)},
            [&c, form, grad](const std::vector<kb_tensor*>& x) {
              kb_tensor* p = nullptr;
              size_t nsp = c.x.size() - 2;
              int64_t st[3] = {2, 1, 1}, dil[3] = {1, 1, 1};
              if (nsp == 1)
                kb_conv1d(x[0], x[1], 1, KB_PADDING_CAUSAL, c.format, 2, &p);
              else if (nsp == 2)
                kb_conv2d(x[0], x[1], st, 2, KB_PADDING_SAME, c.format, dil, 2, &p);
              else
                kb_conv3d(x[0], x[1], st, 3, KB_PADDING_SAME, c.format, dil, 3, &p);
              p = with_epilogue(p, x[2], c.format, form);
              return grad ? grad_of(x[form == 2 ? 1 : 2], p, 123) : p;
            },
            2e-5);
      }
}

// An integer matrix product has no GPU kernel (cuBLAS multiplies floating types): by default it
// runs on the CPU within the GPU's plan; with KB_DEVICE_FALLBACK=error that plan fails instead.
TEST(CudaVsCpu, DeclinedStepsAndFallbackErrors) {
  SKIP_WITHOUT_GPU();
  auto int_product = [](const std::vector<kb_tensor*>& x) {
    kb_tensor* y = nullptr;
    kb_dot(x[0], x[1], &y);
    return y;
  };
  std::vector<Input> inputs{random_input({4, 6}, KB_INT64, 126, -9, 9),
                            random_input({6, 3}, KB_INT64, 127, -9, 9)};
  unsetenv("KB_DEVICE_FALLBACK");
  compare(inputs, int_product, 0);
  setenv("KB_DEVICE_FALLBACK", "error", 1);
  expect_device_error(inputs, int_product, KB_ERROR_NOT_IMPLEMENTED,
                      "MatMul: the cuda kernel declines");

  // Tiling of rank 5 and its gradient interleave ten axes, more than a device map holds: the
  // table of the device's operations declines both (the emulated device too: it asks the same
  // table). The forward step is the first to decline.
  auto tile_grad = [](const std::vector<kb_tensor*>& x) {
    const int64_t mult[] = {2, 1, 2, 1, 2};
    kb_tensor *t = nullptr, *s = nullptr, *g = nullptr;
    kb_tile(x[0], mult, 5, &t);
    kb_sum(t, nullptr, 0, 0, &s);
    kb_tensor_list* grads = nullptr;
    if (kb_gradients(s, &x[0], 1, &grads) == KB_OK) {
      kb_tensor_list_get(grads, 0, &g);
      kb_tensor_list_release(grads);
    }
    kb_tensor_release(t);
    kb_tensor_release(s);
    return g;
  };
  std::vector<Input> deep{random_input({2, 3, 2, 1, 2}, KB_FLOAT32, 128)};
  unsetenv("KB_DEVICE_FALLBACK");
  compare(deep, tile_grad, 0);
  setenv("KB_DEVICE_FALLBACK", "error", 1);
  expect_device_error(deep, tile_grad, KB_ERROR_NOT_IMPLEMENTED, "Tile: the cuda kernel declines");

  // Above kMaxDeviceRank dims the compiler keeps any step on the CPU.
  auto absolute = [](const std::vector<kb_tensor*>& x) {
    kb_tensor* y = nullptr;
    kb_abs(x[0], &y);
    return y;
  };
  std::vector<Input> rank9{random_input({1, 2, 1, 2, 1, 2, 1, 2, 3}, KB_FLOAT32, 129)};
  unsetenv("KB_DEVICE_FALLBACK");
  compare(rank9, absolute, 0);
  setenv("KB_DEVICE_FALLBACK", "error", 1);
  expect_device_error(rank9, absolute, KB_ERROR_NOT_IMPLEMENTED, "Abs: the cuda kernel declines");
  unsetenv("KB_DEVICE_FALLBACK");
}

// What one call of a function gave: its status and message, its output and a variable's value.
struct CallRecord {
  kb_status status;
  std::string message;
  std::vector<double> output, variable;
};

// Calls f on `data` and reads its first output and the variable v (nullptr: none).
CallRecord call_and_record(kb_compiled_function* f, kb_tensor* data, kb_tensor* v) {
  CallRecord r;
  kb_tensor_list* out = nullptr;
  r.status = kb_function_call(f, &data, 1, &out);
  r.message = r.status == KB_OK ? "" : kb_last_error_message();
  if (out) {
    kb_tensor* y = nullptr;
    if (kb_tensor_list_get(out, 0, &y) == KB_OK) r.output = read(y);
    kb_tensor_release(y);
    kb_tensor_list_release(out);
  }
  if (v) r.variable = read(v);
  return r;
}

void expect_same_records(const std::vector<CallRecord>& cpu, const std::vector<CallRecord>& gpu) {
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t c = 0; c < cpu.size(); ++c) {
    EXPECT_EQ(cpu[c].status, gpu[c].status) << "call " << c << ": " << gpu[c].message;
    EXPECT_EQ(cpu[c].message, gpu[c].message) << "call " << c;
    if (cpu[c].status == KB_OK) {
      EXPECT_EQ(cpu[c].output, gpu[c].output) << "call " << c;
    }
    EXPECT_EQ(cpu[c].variable, gpu[c].variable) << "call " << c;
  }
}

kb_tensor* int64_data(const std::vector<int64_t>& v) {
  int64_t n = int64_t(v.size());
  kb_tensor* t = nullptr;
  kb_tensor_from_data(v.data(), KB_INT64, &n, 1, &t);
  return t;
}

// The GPU checks indices without waiting for its kernels and reports an error when the run
// settles, after later steps have run on what the failed step left: the error must still be the
// CPU's (the first in step order), and no update may take effect. Two chained gathers, the
// second indexing by the first's values, under an update that adds their sum to v.
TEST(CudaVsCpu, DeviceIndexErrorsAreTheFirstAndKeepVariables) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::vector<int64_t>> calls = {
      {12, 2},  // both gathers fail (table[2] = 7 >= 6): the first one's error
      {0, 3},   // fine: v changes
      {1, 2},   // only the second fails
      {3, 0}};  // fine again
  std::vector<CallRecord> records[2];
  for (int dev = 0; dev < 2; ++dev) {
    int64_t two = 2, rows_shape[2] = {6, 3};
    std::vector<float> rows_data(18);
    for (size_t i = 0; i < rows_data.size(); ++i) rows_data[i] = float(i) * 0.5f;
    float zero = 0;
    kb_tensor *idx, *table = int64_data({1, 4, 7, 0, 2, 3, 5, 1, 0, 2}), *rows, *first, *second,
                    *total, *v, *up;
    ok(kb_placeholder(&two, 1, 1, KB_INT64, 0, "idx", &idx));
    ok(kb_tensor_from_data(rows_data.data(), KB_FLOAT32, rows_shape, 2, &rows));
    ok(kb_gather(table, idx, &first));
    ok(kb_gather(rows, first, &second));
    ok(kb_sum(second, nullptr, 0, 0, &total));
    ok(kb_variable(&zero, KB_FLOAT32, nullptr, 0, KB_FLOAT32, "v", &v));
    ok(kb_update_add(v, total, &up));
    kb_compiled_function* f;
    ok(kb_function(&idx, 1, &second, 1, &up, 1, &f));
    ok(kb_function_set_device(f, dev ? KB_DEVICE_CUDA : KB_DEVICE_CPU));
    for (const auto& c : calls) {
      kb_tensor* data = int64_data(c);
      records[dev].push_back(call_and_record(f, data, v));
      kb_tensor_release(data);
    }
    kb_function_release(f);
    for (auto* t : {idx, table, rows, first, second, total, v, up}) kb_tensor_release(t);
  }
  ASSERT_NE(records[0][0].message.find("index 12 is out of range [0, 10)"), std::string::npos)
      << records[0][0].message;
  ASSERT_NE(records[0][2].message.find("index 7 is out of range [0, 6)"), std::string::npos)
      << records[0][2].message;
  expect_same_records(records[0], records[1]);
}

// The same through a run of 300 gathers, more than the GPU checks before it settles once within
// the run: a chain through a permutation of [0, 10), with the table at step `bad` of only 5
// rows. An error before that settling ends the run there; one after it, at the run's end. Ten
// steps later a second error is certain whatever the failed step left (index 7 of 3 rows, the
// chain's values times 0 plus 7): it is the one reported if the first is lost.
TEST(CudaVsCpu, DeviceIndexErrorsInLongRuns) {
  SKIP_WITHOUT_GPU();
  for (int bad : {-1, 100, 280}) {
    std::vector<CallRecord> records[2];
    for (int dev = 0; dev < 2; ++dev) {
      int64_t two = 2, zero = 0, seven = 7;
      kb_tensor *idx, *perm = int64_data({3, 7, 1, 9, 0, 4, 8, 2, 6, 5}),
                      *small = int64_data({4, 2, 0, 1, 3}), *tiny = int64_data({2, 0, 1}), *z, *s;
      ok(kb_placeholder(&two, 1, 1, KB_INT64, 0, "idx", &idx));
      ok(kb_constant(&zero, KB_INT64, nullptr, 0, KB_INT64, nullptr, 0, "zero", &z));
      ok(kb_constant(&seven, KB_INT64, nullptr, 0, KB_INT64, nullptr, 0, "seven", &s));
      std::vector<kb_tensor*> chain{idx};
      for (int step = 0; step < 300; ++step) {
        kb_tensor* next = nullptr;
        if (bad >= 0 && step == bad + 10) {
          kb_tensor *zeroed = nullptr, *sevens = nullptr;
          ok(kb_multiply(chain.back(), z, &zeroed));
          ok(kb_add(zeroed, s, &sevens));
          ok(kb_gather(tiny, sevens, &next));
          kb_tensor_release(zeroed);
          kb_tensor_release(sevens);
        } else {
          ok(kb_gather(step == bad ? small : perm, chain.back(), &next));
        }
        chain.push_back(next);
      }
      kb_compiled_function* f;
      ok(kb_function(&idx, 1, &chain.back(), 1, nullptr, 0, &f));
      ok(kb_function_set_device(f, dev ? KB_DEVICE_CUDA : KB_DEVICE_CPU));
      for (const auto& c : std::vector<std::vector<int64_t>>{{0, 1}, {5, 2}}) {
        kb_tensor* data = int64_data(c);
        records[dev].push_back(call_and_record(f, data, nullptr));
        kb_tensor_release(data);
      }
      kb_function_release(f);
      for (auto* t : chain) kb_tensor_release(t);
      for (auto* t : {perm, small, tiny, z, s}) kb_tensor_release(t);
    }
    SCOPED_TRACE("bad step " + std::to_string(bad));
    EXPECT_EQ(records[0][0].status, bad < 0 ? KB_OK : KB_ERROR_INVALID_ARGUMENT);
    expect_same_records(records[0], records[1]);
  }
}

// The GPU keeps each host thread's pending index checks apart (one stream serves them all): a
// thread whose gathers fail reports its own error every time, and another thread running a
// correct function at the same time never sees it.
TEST(CudaVsCpu, DeviceIndexErrorsStayWithTheirThread) {
  SKIP_WITHOUT_GPU();
  int64_t two = 2;
  kb_tensor *idx, *table = int64_data({1, 4, 7, 0, 2, 3, 5, 1, 0, 2}), *y;
  ok(kb_placeholder(&two, 1, 1, KB_INT64, 0, "idx", &idx));
  ok(kb_gather(table, idx, &y));
  kb_compiled_function* f[2];
  for (auto*& fn : f) {
    ok(kb_function(&idx, 1, &y, 1, nullptr, 0, &fn));
    ok(kb_function_set_device(fn, KB_DEVICE_CUDA));
  }
  constexpr int kCalls = 200;
  int failures[2] = {0, 0};
  std::string messages[2];
  auto run = [&](int who, std::vector<int64_t> indices) {
    kb_tensor* data = int64_data(indices);
    for (int c = 0; c < kCalls; ++c) {
      CallRecord r = call_and_record(f[who], data, nullptr);
      if (r.status != KB_OK) {
        ++failures[who];
        messages[who] = r.message;
      } else if (r.output != std::vector<double>{7, 0}) {
        ++failures[who];
        messages[who] = "wrong values";
      }
    }
    kb_tensor_release(data);
  };
  std::thread bad(run, 0, std::vector<int64_t>{2, 11});
  std::thread good(run, 1, std::vector<int64_t>{2, 3});
  bad.join();
  good.join();
  EXPECT_EQ(failures[0], kCalls);
  EXPECT_NE(messages[0].find("index 11 is out of range [0, 10)"), std::string::npos) << messages[0];
  EXPECT_EQ(failures[1], 0) << messages[1];
  for (auto* fn : f) kb_function_release(fn);
  for (auto* t : {idx, table, y}) kb_tensor_release(t);
}

}  // namespace

// Shapes and index types at the kernels' edges: integer max and min over an empty axis (the
// element type's lowest and highest value), argmax over an empty axis (the CPU's error), gather
// by int32 indices, and rank 9 (beyond the strided kernels: the CPU runs those steps, or the plan
// fails under KB_DEVICE_FALLBACK=error).
TEST(CudaVsCpu, EdgeShapesAndIndexTypes) {
  SKIP_WITHOUT_GPU();
  using ReduceFn = kb_status (*)(kb_tensor*, const int64_t*, size_t, int32_t, kb_tensor**);
  Input empty{{0, 3}, KB_FLOAT32, {}};
  for (ReduceFn fn : {kb_max, kb_min})
    for (kb_data_type t : {KB_INT8, KB_INT16, KB_INT32, KB_UINT8})
      compare(
          {empty},
          [fn, t](const std::vector<kb_tensor*>& x) {
            int64_t axis = 0;
            kb_tensor *c = nullptr, *m = nullptr, *y = nullptr;
            kb_cast(x[0], t, &c);
            fn(c, &axis, 1, 0, &m);
            kb_cast(m, KB_INT64, &y);
            kb_tensor_release(c);
            kb_tensor_release(m);
            return y;
          },
          0);
  {  // the axis's length known only when fed
    int64_t shape[2] = {-1, 3};
    kb_tensor *x = nullptr, *y = nullptr;
    ok(kb_placeholder(shape, 2, 2, KB_FLOAT32, 0, "x", &x));
    ok(kb_argmax(x, 0, &y));
    kb_compiled_function* f = nullptr;
    ok(kb_function(&x, 1, &y, 1, nullptr, 0, &f));
    ok(kb_function_set_device(f, KB_DEVICE_CUDA));
    kb_tensor* d = make_data(empty);
    kb_tensor_list* out = nullptr;
    EXPECT_EQ(kb_function_call(f, &d, 1, &out), KB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kb_last_error_message()).find("argmax: the reduction axis 0 is empty"),
              std::string::npos)
        << kb_last_error_message();
    EXPECT_EQ(out, nullptr);
    kb_function_release(f);
    for (kb_tensor* t : {x, y, d}) kb_tensor_release(t);
  }

  std::vector<int32_t> idx32 = {3, 0, 3, 9, 1};
  int64_t ishape[1] = {5};
  for (int grad = 0; grad < 2; ++grad)
    compare(
        {random_input({10, 4}, KB_FLOAT32, 60)},
        [&](const std::vector<kb_tensor*>& x) {
          kb_tensor *it = nullptr, *y = nullptr;
          kb_tensor_from_data(idx32.data(), KB_INT32, ishape, 1, &it);
          kb_gather(x[0], it, &y);
          kb_tensor_release(it);
          return grad ? grad_of(x[0], y, 61) : y;
        },
        2e-5);

  std::vector<int64_t> deep = {2, 1, 2, 1, 2, 1, 2, 1, 3};
  auto add_and_sum = [](const std::vector<kb_tensor*>& x) {
    int64_t axes[3] = {0, 4, 8};
    kb_tensor *s = nullptr, *y = nullptr;
    kb_add(x[0], x[1], &s);
    kb_sum(s, axes, 3, 0, &y);
    kb_tensor_release(s);
    return y;
  };
  std::vector<Input> deep_inputs{random_input(deep, KB_FLOAT32, 64),
                                 random_input(deep, KB_FLOAT32, 65)};
  unsetenv("KB_DEVICE_FALLBACK");
  compare(deep_inputs, add_and_sum, 2e-5);
  setenv("KB_DEVICE_FALLBACK", "error", 1);
  expect_device_error(deep_inputs, add_and_sum, KB_ERROR_NOT_IMPLEMENTED, "declines");
}

// Cells no window covers (10x10 by 5x5, valid, stride 2: the last row and column): the
// gradients of the input there are zero on both devices (backward data, average pooling's
// gradient); conv2d_transpose as its own op (values and both gradients); average pooling and its
// gradient in float16 and bfloat16.
TEST(CudaVsCpu, UncoveredCellsTransposedConvAndSixteenBitPooling) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes) {
    for (int wrt = 0; wrt < 2; ++wrt)
      compare(
          {random_input({2, 10, 10, 3}, dc.t, 140), random_input({5, 5, 3, 4}, dc.t, 141)},
          [wrt](const std::vector<kb_tensor*>& x) {
            int64_t st[2] = {2, 2}, dil[2] = {1, 1};
            kb_tensor* y = nullptr;
            kb_conv2d(x[0], x[1], st, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, dil, 2, &y);
            return grad_of(x[wrt], y, 142);
          },
          dc.rtol * 50);
    compare(
        {random_input({2, 3, 10, 10}, dc.t, 143)},
        [](const std::vector<kb_tensor*>& x) {
          int64_t ps[2] = {5, 5}, st[2] = {2, 2};
          kb_tensor* y = nullptr;
          kb_pool2d(x[0], ps, 2, st, 2, KB_PADDING_VALID, KB_CHANNELS_FIRST, KB_POOL_AVG, &y);
          return grad_of(x[0], y, 144);
        },
        dc.rtol * 10);
    for (kb_padding pad : {KB_PADDING_VALID, KB_PADDING_SAME})
      for (int wrt = 0; wrt < 3; ++wrt) {
        SCOPED_TRACE(std::string("conv2d_transpose ") +
                     (pad == KB_PADDING_SAME ? "same" : "valid") + " wrt " + std::to_string(wrt));
        compare(
            {random_input({2, 5, 4, 6}, dc.t, 145), random_input({3, 3, 4, 6}, dc.t, 146)},
            [pad, wrt](const std::vector<kb_tensor*>& x) {
              int64_t st[2] = {2, 2}, dil[2] = {1, 1};
              int64_t out_shape[4] = {-1, pad == KB_PADDING_SAME ? 10 : 11,
                                      pad == KB_PADDING_SAME ? 8 : 9, 4};
              kb_tensor* y = nullptr;
              kb_conv2d_transpose(x[0], x[1], out_shape, 4, st, 2, pad, KB_CHANNELS_LAST, dil, 2,
                                  &y);
              return wrt ? grad_of(x[wrt - 1], y, 147) : y;
            },
            dc.rtol * 50);
      }
  }
  for (kb_data_type t : {KB_FLOAT16, KB_BFLOAT16})
    for (int grad = 0; grad < 2; ++grad) {
      SCOPED_TRACE(std::string(t == KB_FLOAT16 ? "float16" : "bfloat16") + " average pooling" +
                   (grad ? " gradient" : ""));
      compare({random_input({2, 9, 9, 3}, KB_FLOAT32, 148)},
              in_type(t,
                      [grad](const std::vector<kb_tensor*>& x) {
                        int64_t ps[2] = {3, 3}, st[2] = {2, 2};
                        kb_tensor* y = nullptr;
                        kb_pool2d(x[0], ps, 2, st, 2, KB_PADDING_SAME, KB_CHANNELS_LAST,
                                  KB_POOL_AVG, &y);
                        return grad ? grad_of(x[0], y, 149) : y;
                      }),
              t == KB_FLOAT16 ? 4e-3 : 3e-2);
    }
}

// Kernels that Keras functions reach only inside others: log1p (binary crossentropy from
// logits), floor (dropout's mask, from the CPU's draws), fills of a shape known only when the
// function is called (zeros_like, ones_like), identity, and a sparse tensor used as a plain one.
TEST(CudaVsCpu, KernelsReachedThroughOtherFunctions) {
  SKIP_WITHOUT_GPU();
  for (auto& dc : kDtypes) {
    for (int wrt = 0; wrt < 2; ++wrt)
      compare(
          {random_input({6, 9}, dc.t, 120, 0, 1), random_input({6, 9}, dc.t, 121, -6, 6)},
          [wrt](const std::vector<kb_tensor*>& x) {
            kb_tensor* y = nullptr;
            kb_binary_crossentropy(x[0], x[1], 1, &y);
            return wrt ? grad_of(x[1], y, 122) : y;
          },
          dc.rtol);
    Input batch = random_input({5, 4}, dc.t, 123);
    batch.batch_unknown = true;
    compare(
        {batch},
        [dc](const std::vector<kb_tensor*>& x) {
          kb_tensor *zeros, *ones, *id, *a, *y;
          kb_zeros_like(x[0], dc.t, "zeros", &zeros);
          kb_ones_like(x[0], dc.t, "ones", &ones);
          kb_identity(x[0], "id", &id);
          kb_subtract(ones, zeros, &a);
          kb_multiply(a, id, &y);
          for (kb_tensor* v : {zeros, ones, id, a}) kb_tensor_release(v);
          return y;
        },
        dc.rtol);
    compare(
        {batch},
        [](const std::vector<kb_tensor*>& x) {
          kb_tensor* y = nullptr;
          kb_identity(x[0], "id", &y);
          return y;
        },
        0);
    // A fill of a shape known only after a step of data-dependent shape (Where) runs: the only
    // fill that is not folded into a constant when the plan is made.
    compare(
        {Input{{3, 5}, KB_INT64, {4, 2, 7, 1, 1, 3, 3, 0, 5, 6, 9, 8, 2, 4, 4}},
         Input{{3}, KB_INT64, {2, 5, 0}}},
        [dc](const std::vector<kb_tensor*>& x) {
          kb_tensor *sp = nullptr, *i, *v, *ds, *ones, *vt, *y;
          kb_ctc_label_dense_to_sparse(x[0], x[1], &sp);
          kb_sparse_parts(sp, &i, &v, &ds);
          kb_ones_like(v, dc.t, "ones", &ones);
          kb_cast(v, dc.t, &vt);
          kb_add(ones, vt, &y);
          for (kb_tensor* t : {sp, i, v, ds, ones, vt}) kb_tensor_release(t);
          return y;
        },
        0);
    Input idx{{4, 2}, KB_INT64, {0, 1, 2, 3, 0, 1, 1, 0}};  // (0, 1) twice
    for (int grad = 0; grad < 2; ++grad)
      compare(
          {idx, random_input({4}, dc.t, 124), random_input({3, 4}, dc.t, 125)},
          [grad](const std::vector<kb_tensor*>& x) {
            int64_t shape[2] = {3, 4};
            kb_tensor *sp = nullptr, *y = nullptr;
            kb_sparse_tensor(x[0], x[1], shape, 2, "sp", &sp);
            kb_add(sp, x[2], &y);
            kb_tensor_release(sp);
            return grad ? grad_of(x[1], y, 126) : y;
          },
          dc.rtol);
  }
  // Dropout draws the CPU's numbers on the GPU: a fresh node per device (a node counts its runs).
  const int64_t seed = 77;
  for (kb_data_type t : {KB_FLOAT32, KB_FLOAT64}) {
    std::vector<double> kept[2];
    for (int dev = 0; dev < 2; ++dev) {
      kb_tensor *x = make_data(random_input({13, 11}, t, 127, 0.5, 1.5)), *y = nullptr;
      ok(kb_dropout(x, 0.3, nullptr, 0, &seed, &y));
      kept[dev] = values_without_inputs(y, dev);
      kb_tensor_release(y);
      kb_tensor_release(x);
    }
    ASSERT_EQ(kept[0].size(), kept[1].size());
    ASSERT_FALSE(kept[0].empty());
    int zeros = 0;
    for (size_t i = 0; i < kept[0].size(); ++i) {
      EXPECT_NEAR(kept[0][i], kept[1][i], 1e-6 * (1 + std::fabs(kept[0][i]))) << "at " << i;
      zeros += kept[0][i] == 0;
    }
    EXPECT_GT(zeros, 0);
    EXPECT_LT(zeros, int(kept[0].size()));
  }
}

// reshape_to with a target the plan folds (from the fed shape: a view) and with one read from
// values when the function runs (the kernel reads it back from the device).
TEST(CudaVsCpu, ReshapeToTargetsKnownWhenRun) {
  SKIP_WITHOUT_GPU();
  Input x = random_input({2, 3, 6}, KB_FLOAT64, 91);
  x.batch_unknown = true;
  Input rows{{1}, KB_INT64, {4}};
  for (int from_values = 0; from_values < 2; ++from_values)
    compare(
        {x, rows},
        [from_values](const std::vector<kb_tensor*>& in) {
          int64_t zero = 0, minus_one = -1, one = 1;
          kb_tensor *shape = nullptr, *index = nullptr, *first = nullptr, *first64 = nullptr,
                    *rest = nullptr, *target = nullptr, *r = nullptr, *y = nullptr;
          ok(kb_shape(in[0], &shape));
          ok(kb_tensor_from_data(&zero, KB_INT64, &one, 1, &index));
          ok(kb_gather(shape, index, &first));
          ok(kb_cast(first, KB_INT64, &first64));
          ok(kb_tensor_from_data(&minus_one, KB_INT64, &one, 1, &rest));
          kb_tensor* parts[2] = {from_values ? in[1] : first64, rest};
          ok(kb_concatenate(parts, 2, 0, &target));
          ok(kb_reshape_to(in[0], target, &r));
          ok(kb_multiply(r, r, &y));
          for (kb_tensor* t : {shape, index, first, first64, rest, target, r}) kb_tensor_release(t);
          return y;
        },
        1e-12);
}

// The collectives in a process that is no job (no kb_dist_init): the identity on the GPU as on
// the CPU, for the sums (float32, float64, int64; two in a bucket), the moves of bytes (16-bit
// floats too) and their gradients (AllGather's is ReduceScatter). In a job they go through NCCL
// (tests/dist).
TEST(CudaVsCpu, CollectivesOfOneProcess) {
  SKIP_WITHOUT_GPU();
  for (kb_data_type t : {KB_FLOAT32, KB_FLOAT64, KB_INT64}) {
    SCOPED_TRACE(t);
    Input x = random_input({3, 4}, t, 17, -20, 20);
    if (t == KB_INT64)
      for (double& v : x.values) v = std::round(v);
    compare(
        {x},
        [](const std::vector<kb_tensor*>& in) {
          kb_tensor *sq = nullptr, *sum = nullptr, *sum2 = nullptr, *avg = nullptr, *sums = nullptr,
                    *both = nullptr, *b = nullptr, *y = nullptr;
          ok(kb_multiply(in[0], in[0], &sq));
          // Two sums: one bucket (Pack, AllReduce, Unpack).
          ok(kb_all_reduce(sq, KB_REDUCE_SUM, &sum));
          ok(kb_all_reduce(in[0], KB_REDUCE_SUM, &sum2));
          ok(kb_all_reduce(in[0], KB_REDUCE_AVERAGE, &avg));
          ok(kb_add(sum, sum2, &sums));
          ok(kb_add(sums, avg, &both));
          ok(kb_broadcast(both, 0, &b));
          ok(kb_all_gather(b, &y));
          for (kb_tensor* r : {sq, sum, sum2, avg, sums, both, b}) kb_tensor_release(r);
          return y;
        },
        0);
  }
  for (kb_data_type t : {KB_FLOAT16, KB_BFLOAT16}) {
    SCOPED_TRACE(t == KB_FLOAT16 ? "float16" : "bfloat16");
    compare(
        {random_input({5, 2}, KB_FLOAT32, 18)},
        [t](const std::vector<kb_tensor*>& in) {
          kb_tensor *h = nullptr, *b = nullptr, *g = nullptr, *y = nullptr;
          ok(kb_cast(in[0], t, &h));
          ok(kb_broadcast(h, 0, &b));
          ok(kb_all_gather(b, &g));
          ok(kb_cast(g, KB_FLOAT32, &y));
          for (kb_tensor* r : {h, b, g}) kb_tensor_release(r);
          return y;
        },
        0);
  }
  compare(
      {random_input({4, 3}, KB_FLOAT64, 19)},
      [](const std::vector<kb_tensor*>& in) {
        kb_tensor *sum = nullptr, *g = nullptr, *sq = nullptr, *s = nullptr, *gx = nullptr;
        ok(kb_all_reduce(in[0], KB_REDUCE_AVERAGE, &sum));
        ok(kb_all_gather(sum, &g));
        ok(kb_multiply(g, g, &sq));
        ok(kb_sum(sq, nullptr, 0, 0, &s));
        kb_tensor_list* grads = nullptr;
        ok(kb_gradients(s, &in[0], 1, &grads));
        ok(kb_tensor_list_get(grads, 0, &gx));
        kb_tensor_list_release(grads);
        for (kb_tensor* r : {sum, g, sq, s}) kb_tensor_release(r);
        return gx;
      },
      1e-12);
}
