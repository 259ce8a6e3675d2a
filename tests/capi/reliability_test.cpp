// Defects an outside test of the C ABI found, each reproduced here: a deep graph released on a
// small stack, thread counts the OpenMP runtime cannot start, bool bytes other than 0 and 1,
// out-of-range scalar arguments on integer tensors, and empty matrix products.
#include <pthread.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

// Runs f on a thread with a stack of `stack_bytes` (the JVM's default is 1 MiB).
template <class F>
void run_on_small_stack(size_t stack_bytes, F f) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t t;
  auto body = [](void* p) -> void* {
    (*static_cast<F*>(p))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&t, &attr, body, &f), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(DeepGraph, ReleasingALongChainOnASmallStackDoesNotRecurse) {
  constexpr int kLength = 200000;
  Tensor x = placeholder({2});
  kb_tensor* last = nullptr;
  kb_tensor_retain(x.get());
  last = x.get();
  for (int i = 0; i < kLength; ++i) {
    kb_tensor* next = nullptr;
    ok(kb_negative(last, &next), "negative");
    kb_tensor_release(last);  // the chain is held only by its last node
    last = next;
  }
  x = Tensor();
  run_on_small_stack(size_t(1) << 20, [last] { kb_tensor_release(last); });
  // The library still builds and runs after the release.
  Tensor y = un(kb_negative, constant_f32({1, -2}, {2}).get());
  EXPECT_EQ(values_f32(eval(y.get()).get()), (std::vector<float>{-1, 2}));
}

// The largest thread count kb_set_num_threads accepts (galloping, then bisecting).
int32_t largest_accepted_thread_count() {
  int32_t good = 1, bad = 2;
  while (kb_set_num_threads(bad) == KB_OK) {
    good = bad;
    bad = bad > (1 << 29) ? std::numeric_limits<int32_t>::max() : bad * 2;
  }
  while (bad - good > 1) {
    int32_t mid = good + (bad - good) / 2;
    (kb_set_num_threads(mid) == KB_OK ? good : bad) = mid;
  }
  kb_clear_error();
  return good;
}

// A sum over a million elements: a parallel region of the current thread count.
float parallel_sum() {
  std::vector<float> ones(1 << 20, 1.0f);
  Tensor x = constant_f32(ones, {int64_t(ones.size())});
  Tensor s = make([&](kb_tensor** o) { return kb_sum(x.get(), nullptr, 0, 0, o); });
  return values_f32(eval(s.get()).get())[0];
}

TEST(ThreadCount, RefusesCountsTheRuntimeCannotStart) {
  for (int32_t n : {-1, 100000, 1 << 30, std::numeric_limits<int32_t>::max()}) {
    EXPECT_EQ(kb_set_num_threads(n), KB_ERROR_INVALID_ARGUMENT) << n;
    EXPECT_TRUE(starts_with(kb_last_error_message(), "set_num_threads: ")) << n;
  }
  int32_t limit = largest_accepted_thread_count();
  EXPECT_GE(limit, 8);
  EXPECT_LT(limit, 100000);
  EXPECT_EQ(kb_set_num_threads(limit + 1), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kb_last_error_message()).find(std::to_string(limit)), std::string::npos)
      << "the message names the limit: " << kb_last_error_message();
  // At the limit, a parallel kernel runs with every thread.
  ok(kb_set_num_threads(limit), "set_num_threads");
  int32_t got = 0;
  ok(kb_num_threads(&got), "num_threads");
  EXPECT_EQ(got, limit);
  EXPECT_EQ(parallel_sum(), float(1 << 20));
  ok(kb_set_num_threads(0), "set_num_threads");
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// With too little address space for the threads' stacks, the count is refused with an error
// instead of the OpenMP runtime ending the process when it starts the team. Run in a fresh
// process (a death test re-executes the binary) so that the limit stays there.
TEST(ThreadCountDeathTest, RefusesThreadsTheProcessCannotCreate) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ok(kb_set_num_threads(1), "set_num_threads");
        // Room for the process as it is plus 64 MiB: not for 63 more 8 MiB thread stacks.
        rlimit as{};
        getrlimit(RLIMIT_AS, &as);
        long pages = 0;
        if (FILE* f = std::fopen("/proc/self/statm", "r")) {
          if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
          std::fclose(f);
        }
        as.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(64) << 20);
        if (setrlimit(RLIMIT_AS, &as) != 0) std::exit(3);
        kb_status st = kb_set_num_threads(64);
        if (st != KB_ERROR_OUT_OF_MEMORY) std::exit(4);
        int32_t now = 0;
        if (kb_num_threads(&now) != KB_OK || now != 1) std::exit(5);
        if (parallel_sum() != float(1 << 20)) std::exit(6);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}
#endif

// Bytes other than 0 and 1 copied into bool tensors read as true, as C and NumPy read them.
TEST(BoolBytes, NonzeroBytesAreTrueEverywhereTheyEnter) {
  const std::vector<uint8_t> bytes = {0, 1, 2, 254, 0, 128};
  const std::vector<int32_t> want = {0, 1, 1, 1, 0, 1};
  const Shape shape = {6};
  auto as_int = [](kb_tensor* t) {
    Tensor c = make([&](kb_tensor** o) { return kb_cast(t, KB_INT32, o); });
    return values<int32_t>(eval(c.get()).get());
  };
  Tensor c = make([&](kb_tensor** o) {
    return kb_tensor_from_data(bytes.data(), KB_BOOL, shape.data(), 1, o);
  });
  EXPECT_EQ(as_int(c.get()), want);
  std::vector<uint8_t> raw(6);
  ok(kb_tensor_copy_to(c.get(), raw.data(), raw.size()), "copy_to");
  EXPECT_EQ(raw, (std::vector<uint8_t>{0, 1, 1, 1, 0, 1}));

  Tensor t = constant<bool>({true, true, true, true, true, true}, shape);
  Tensor eq = bin(kb_equal, c.get(), t.get());
  EXPECT_EQ(as_int(eq.get()), want);

  Tensor v = make([&](kb_tensor** o) {
    return kb_variable(bytes.data(), KB_BOOL, shape.data(), 1, KB_BOOL, nullptr, o);
  });
  EXPECT_EQ(as_int(v.get()), want);
  const std::vector<uint8_t> reversed(bytes.rbegin(), bytes.rend());
  ok(kb_set_value_data(v.get(), reversed.data(), KB_BOOL, shape.data(), 1), "set_value_data");
  EXPECT_EQ(as_int(v.get()), std::vector<int32_t>(want.rbegin(), want.rend()));

  // As a function input.
  Tensor p = placeholder(shape, KB_BOOL);
  Tensor pi = make([&](kb_tensor** o) { return kb_cast(p.get(), KB_INT32, o); });
  Function f = function({p.get()}, {pi.get()});
  List out = call(f, {c.get()});
  EXPECT_EQ(values<int32_t>(at(out, 0).get()), want);
}

// all() over an empty axis is true, stored as the byte 1 (bool reduces as uint8, whose min
// over nothing was 255; the fuzzer found the invalid bool value).
TEST(BoolBytes, AllOverAnEmptyAxisIsOne) {
  std::vector<uint8_t> none;
  const Shape shape = {0, 3};
  Tensor x = make(
      [&](kb_tensor** o) { return kb_tensor_from_data(none.data(), KB_BOOL, shape.data(), 2, o); });
  const int64_t axis = 0;
  for (auto f : {kb_all, kb_min, kb_any, kb_max}) {
    Tensor r = make([&](kb_tensor** o) { return f(x.get(), &axis, 1, 0, o); });
    std::vector<uint8_t> raw(3, 7);
    ok(kb_tensor_copy_to(eval(r.get()).get(), raw.data(), raw.size()), "copy_to");
    uint8_t want = f == kb_all || f == kb_min ? 1 : 0;
    EXPECT_EQ(raw, std::vector<uint8_t>(3, want));
  }
}

// clip(x, lo, hi) of an integer tensor: bounds beyond the type saturate instead of wrapping.
template <class T>
void check_clip_saturates(kb_data_type dtype) {
  const std::vector<T> data = {std::numeric_limits<T>::lowest(), T(-3), T(0), T(5),
                               std::numeric_limits<T>::max()};
  const Shape shape = {int64_t(data.size())};
  Tensor x = make(
      [&](kb_tensor** o) { return kb_tensor_from_data(data.data(), dtype, shape.data(), 1, o); });
  auto clipped = [&](double lo, double hi) {
    Tensor y = make([&](kb_tensor** o) { return kb_clip(x.get(), lo, hi, o); });
    std::vector<T> out(data.size());
    ok(kb_tensor_copy_to(eval(y.get()).get(), out.data(), out.size() * sizeof(T)), "copy_to");
    return out;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const char* name = kb_dtype_name(dtype);
  EXPECT_EQ(clipped(-1e300, 1e300), data) << name;
  EXPECT_EQ(clipped(-inf, inf), data) << name;
  EXPECT_EQ(clipped(1e300, inf), std::vector<T>(data.size(), std::numeric_limits<T>::max()))
      << name;
  EXPECT_EQ(clipped(-inf, -1e300), std::vector<T>(data.size(), std::numeric_limits<T>::lowest()))
      << name;
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_clip(x.get(), std::nan(""), 1.0, &out), KB_ERROR_INVALID_ARGUMENT) << name;
  EXPECT_EQ(out, nullptr);
}

TEST(ScalarArguments, OutOfRangeBoundsSaturateOnIntegerTensors) {
  check_clip_saturates<int8_t>(KB_INT8);
  check_clip_saturates<int16_t>(KB_INT16);
  check_clip_saturates<int32_t>(KB_INT32);
  check_clip_saturates<int64_t>(KB_INT64);
  check_clip_saturates<uint8_t>(KB_UINT8);
}

// A constant of float64 values made an integer tensor saturates the same way.
TEST(ScalarArguments, ConstantsOfOutOfRangeValuesSaturate) {
  const std::vector<double> data = {1e300, -1e300, INFINITY, -INFINITY, NAN, -3.7};
  const Shape shape = {6};
  Tensor c = make([&](kb_tensor** o) {
    return kb_constant(data.data(), KB_FLOAT64, shape.data(), 1, KB_INT32, nullptr, 0, nullptr, o);
  });
  const int32_t hi = std::numeric_limits<int32_t>::max(), lo = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(values<int32_t>(c.get()), (std::vector<int32_t>{hi, lo, hi, lo, 0, -3}));
  // A scalar filling a shape goes through the single-scalar path.
  const double one = -1e300;
  const Shape filled = {3};
  Tensor f = make([&](kb_tensor** o) {
    return kb_constant(&one, KB_FLOAT64, nullptr, 0, KB_INT64, filled.data(), 1, nullptr, o);
  });
  EXPECT_EQ(values<int64_t>(f.get()),
            std::vector<int64_t>(3, std::numeric_limits<int64_t>::lowest()));
}

// Integer arithmetic that overflows wraps around, as NumPy's (it was undefined behaviour).
TEST(IntegerOverflow, WrapsAsNumPy) {
  Tensor x = constant<int32_t>({46341, std::numeric_limits<int32_t>::max()}, {2});
  Tensor sq = un(kb_square, x.get());
  EXPECT_EQ(values<int32_t>(eval(sq.get()).get()), (std::vector<int32_t>{-2147479015, 1}));
  Tensor sum = bin(kb_add, x.get(), x.get());
  EXPECT_EQ(values<int32_t>(eval(sum.get()).get()), (std::vector<int32_t>{92682, -2}));
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor y = constant<int64_t>({big, big, 2}, {3});
  Tensor total = make([&](kb_tensor** o) { return kb_sum(y.get(), nullptr, 0, 0, o); });
  EXPECT_EQ(values<int64_t>(eval(total.get()).get()), (std::vector<int64_t>{0}));
}

// Products with an empty result or an empty inner dimension, of every dtype the products take.
template <class T>
void check_empty_products(kb_data_type dtype) {
  struct Case {
    Shape a, b, want;
  };
  const int64_t big = int64_t(1) << 31;
  const std::vector<Case> cases = {
      {{0, big}, {big, 0}, {0, 0}}, {{2, 0}, {0, 3}, {2, 3}}, {{0, 3}, {3, 4}, {0, 4}},
      {{3, 0}, {0, 0}, {3, 0}},     {{0, 0}, {0, 5}, {0, 5}}, {{4, 2}, {2, 0}, {4, 0}},
  };
  for (const Case& c : cases) {
    auto ones = [&](const Shape& s) {
      Shape dims = s;
      std::vector<T> data(size_t(s[0] * s[1]), T(1));  // every case has a factor 0 or is small
      return make([&](kb_tensor** o) {
        return kb_tensor_from_data(data.data(), dtype, dims.data(), dims.size(), o);
      });
    };
    Tensor a = ones(c.a), b = ones(c.b);
    Tensor d = bin(kb_dot, a.get(), b.get());
    Tensor v = eval(d.get());
    EXPECT_EQ(int_shape(v.get()), c.want) << kb_dtype_name(dtype);
    size_t nbytes = 0;
    ok(kb_tensor_nbytes(v.get(), &nbytes), "nbytes");
    std::vector<T> out(nbytes / sizeof(T), T(7));
    if (nbytes) ok(kb_tensor_copy_to(v.get(), out.data(), nbytes), "copy_to");
    for (T e : out) EXPECT_EQ(e, T(0)) << kb_dtype_name(dtype);
  }
}

TEST(EmptyProducts, EveryShapeAndDtype) {
  check_empty_products<float>(KB_FLOAT32);
  check_empty_products<double>(KB_FLOAT64);
  check_empty_products<int32_t>(KB_INT32);
  check_empty_products<int64_t>(KB_INT64);
  check_empty_products<uint16_t>(KB_FLOAT16);  // zeros are zero bits in float16 too
}

TEST(EmptyProducts, BatchedWithEmptyBatchAndInnerAxes) {
  for (Shape a_shape : {Shape{0, 2, 3}, Shape{2, 3, 0}}) {
    Shape b_shape = {a_shape[0], a_shape[2], 4};
    std::vector<float> none;
    Tensor a = make([&](kb_tensor** o) {
      return kb_tensor_from_data(none.data(), KB_FLOAT32, a_shape.data(), 3, o);
    });
    std::vector<float> bvals(size_t(b_shape[0] * b_shape[1] * b_shape[2]), 1.0f);
    Tensor b = make([&](kb_tensor** o) {
      return kb_tensor_from_data(bvals.data(), KB_FLOAT32, b_shape.data(), 3, o);
    });
    const int64_t axes[2] = {2, 1};
    Tensor d = make([&](kb_tensor** o) { return kb_batch_dot(a.get(), b.get(), axes, o); });
    Tensor v = eval(d.get());
    EXPECT_EQ(int_shape(v.get()), (Shape{a_shape[0], a_shape[1], 4}));
    for (float e : values_f32(v.get())) EXPECT_EQ(e, 0.0f);
  }
}

}  // namespace
