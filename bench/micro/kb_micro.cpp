// Google Benchmark microbenchmarks of a few primitives through the C ABI, each a compiled function
// called on inputs from host memory: elementwise add, sigmoid, a fused LSTM gate, the sum over the
// last axis, softmax,
// dot, and the call overhead of a 1-element add. Built only where find_package(benchmark) finds
// Google Benchmark (target kb_micro); run alone: build/kb_micro [--benchmark_filter=...].
#include <benchmark/benchmark.h>
#include <kbackend.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

namespace {

void ok(kb_status s, const char* what) {
  if (s != KB_OK) {
    std::fprintf(stderr, "%s: %s\n", what, kb_last_error_message());
    std::exit(1);
  }
}

kb_tensor* data(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0.f, 1.f);
  for (auto& x : v) x = g(rng);
  kb_tensor* t;
  ok(kb_tensor_from_data(v.data(), KB_FLOAT32, shape.data(), shape.size(), &t), "data");
  return t;
}

// Compiles f(inputs) = build(inputs) for placeholders of `shapes`, and times calls of it on
// random data of those shapes. `bytes` per call, when given, is reported as bytes_per_second.
void run(benchmark::State& state, const std::vector<std::vector<int64_t>>& shapes,
         const std::function<kb_tensor*(const std::vector<kb_tensor*>&)>& build, double bytes = 0) {
  std::vector<kb_tensor*> ph, in;
  for (const auto& s : shapes) {
    kb_tensor* p;
    ok(kb_placeholder(s.data(), s.size(), int64_t(s.size()), KB_FLOAT32, 0, "x", &p), "ph");
    ph.push_back(p);
    in.push_back(data(s));
  }
  kb_tensor* y = build(ph);
  kb_compiled_function* f;
  ok(kb_function(ph.data(), ph.size(), &y, 1, nullptr, 0, &f), "function");
  for (auto _ : state) {
    kb_tensor_list* out;
    ok(kb_function_call(f, in.data(), in.size(), &out), "call");
    kb_tensor_list_release(out);
  }
  if (bytes > 0) state.SetBytesProcessed(int64_t(bytes * double(state.iterations())));
  kb_function_release(f);
  kb_tensor_release(y);
  for (auto* t : ph) kb_tensor_release(t);
  for (auto* t : in) kb_tensor_release(t);
}

void BM_add(benchmark::State& state) {
  int64_t n = state.range(0);
  run(
      state, {{n}, {n}},
      [](const std::vector<kb_tensor*>& x) {
        kb_tensor* y;
        ok(kb_add(x[0], x[1], &y), "add");
        return y;
      },
      3.0 * double(n) * sizeof(float));
}
BENCHMARK(BM_add)->Arg(1 << 10)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMicrosecond);

void BM_sigmoid(benchmark::State& state) {
  int64_t n = state.range(0);
  run(
      state, {{n}},
      [](const std::vector<kb_tensor*>& x) {
        kb_tensor* y;
        ok(kb_sigmoid(x[0], &y), "sigmoid");
        return y;
      },
      2.0 * double(n) * sizeof(float));
}
BENCHMARK(BM_sigmoid)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMicrosecond);

// An LSTM gate as the loops run it: sigmoid(x W + h U + b) on (rows, 256), one fused pass.
void BM_fused_gate(benchmark::State& state) {
  int64_t n = state.range(0);
  run(
      state, {{n, 256}, {n, 256}, {256}},
      [](const std::vector<kb_tensor*>& x) {
        kb_tensor *s, *z, *y;
        ok(kb_add(x[0], x[1], &s), "add");
        ok(kb_bias_add(s, x[2], KB_CHANNELS_LAST, &z), "bias_add");
        ok(kb_sigmoid(z, &y), "sigmoid");
        kb_tensor_release(s);
        kb_tensor_release(z);
        return y;
      },
      3.0 * double(n) * 256 * sizeof(float));
}
BENCHMARK(BM_fused_gate)->Arg(64)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_sum_last_axis(benchmark::State& state) {
  int64_t n = state.range(0);
  run(
      state, {{n, n}},
      [](const std::vector<kb_tensor*>& x) {
        kb_tensor* y;
        int64_t axis = -1;
        ok(kb_sum(x[0], &axis, 1, 0, &y), "sum");
        return y;
      },
      double(n * n) * sizeof(float));
}
BENCHMARK(BM_sum_last_axis)->Arg(1024)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_softmax(benchmark::State& state) {
  int64_t n = state.range(0);
  run(
      state, {{n, n}},
      [](const std::vector<kb_tensor*>& x) {
        kb_tensor* y;
        ok(kb_softmax(x[0], -1, &y), "softmax");
        return y;
      },
      2.0 * double(n * n) * sizeof(float));
}
BENCHMARK(BM_softmax)->Arg(1024)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_dot(benchmark::State& state) {
  int64_t n = state.range(0);
  run(state, {{n, n}, {n, n}}, [](const std::vector<kb_tensor*>& x) {
    kb_tensor* y;
    ok(kb_dot(x[0], x[1], &y), "dot");
    return y;
  });
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * double(n * n * n) * 1e-9 * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_dot)->Arg(128)->Arg(512)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_call_overhead(benchmark::State& state) {
  run(state, {{1}, {1}}, [](const std::vector<kb_tensor*>& x) {
    kb_tensor* y;
    ok(kb_add(x[0], x[1], &y), "add");
    return y;
  });
}
BENCHMARK(BM_call_overhead);

}  // namespace

BENCHMARK_MAIN();
