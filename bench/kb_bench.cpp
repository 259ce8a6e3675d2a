// kbackend side of the benchmark workloads that exist so far (BENCHMARKS.md): W3 (dot of square
// float32 matrices), W7 (one MLP 784-512-512-10 training step, batch 128) and W9 (call overhead
// of a compiled function adding two 1-element tensors). Prints one JSON line per measurement.
// Usage: kb_bench cpu|cuda [repeats]
#include <kbackend.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

void ok(kb_status s, const char* what) {
  if (s != KB_OK) {
    std::fprintf(stderr, "%s: %s\n", what, kb_last_error_message());
    std::exit(1);
  }
}

kb_tensor* data(const std::vector<int64_t>& shape, unsigned seed, double scale = 1.0) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.f, float(scale));
  for (auto& x : v) x = g(rng);
  kb_tensor* t;
  ok(kb_tensor_from_data(v.data(), KB_FLOAT32, shape.data(), shape.size(), &t), "data");
  return t;
}

// Median and spread (max-min)/median of `repeats` timed calls after `warmup` calls, in ms.
void measure(const char* workload, const char* device, int warmup, int repeats,
             const std::function<void()>& call, double flops = 0) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  double med = ms[ms.size() / 2];
  double spread = (ms.back() - ms.front()) / med;
  std::printf(
      "{\"system\":\"kbackend\",\"workload\":\"%s\",\"device\":\"%s\",\"median_ms\":%.6f,"
      "\"spread\":%.3f",
      workload, device, med, spread);
  if (flops > 0) std::printf(",\"gflops\":%.1f", flops / (med * 1e6));
  std::printf("}\n");
  std::fflush(stdout);
}

void call_once(kb_compiled_function* f, std::vector<kb_tensor*> ins) {
  kb_tensor_list* out;
  ok(kb_function_call(f, ins.data(), ins.size(), &out), "call");
  kb_tensor_list_release(out);
}

// The matrices are variables (they stay on the device) and the product is reduced to one number,
// so that the time is the GEMM's and not the transfers'.
void w3(kb_device_kind dev, const char* name, int repeats) {
  for (int64_t n : {512, 1024, 2048}) {
    kb_tensor* da = data({n, n}, 1);
    kb_tensor* db = data({n, n}, 2);
    kb_tensor *a, *b, *c, *s;
    ok(kb_variable_from_tensor(da, KB_FLOAT32, "a", &a), "variable");
    ok(kb_variable_from_tensor(db, KB_FLOAT32, "b", &b), "variable");
    ok(kb_dot(a, b, &c), "dot");
    ok(kb_sum(c, nullptr, 0, 0, &s), "sum");
    kb_compiled_function* f;
    ok(kb_function(nullptr, 0, &s, 1, nullptr, 0, &f), "function");
    ok(kb_function_set_device(f, dev), "device");
    std::string w = "W3 dot n=" + std::to_string(n);
    measure(
        w.c_str(), name, 3, repeats, [&] { call_once(f, {}); }, 2.0 * n * n * n);
    kb_function_release(f);
    for (auto* t : {a, b, c, s, da, db}) kb_tensor_release(t);
  }
}

void w7(kb_device_kind dev, const char* name, int repeats) {
  int64_t xs[2] = {-1, 784}, ys[2] = {-1, 10};
  kb_tensor *x, *y;
  ok(kb_placeholder(xs, 2, 2, KB_FLOAT32, 0, "x", &x), "x");
  ok(kb_placeholder(ys, 2, 2, KB_FLOAT32, 0, "y", &y), "y");
  std::vector<std::vector<int64_t>> wshapes = {{784, 512}, {512, 512}, {512, 10}};
  std::vector<kb_tensor*> params, temps;
  kb_tensor* h = x;
  for (size_t i = 0; i < wshapes.size(); ++i) {
    kb_tensor *w, *b, *z, *zb;
    int64_t seed = int64_t(i) + 1;
    ok(kb_random_normal_variable(wshapes[i].data(), 2, 0, 0.05, KB_FLOAT32, "w", &seed, &w), "w");
    ok(kb_zeros(&wshapes[i][1], 1, KB_FLOAT32, "b", &b), "b");
    params.push_back(w);
    params.push_back(b);
    ok(kb_dot(h, w, &z), "dot");
    ok(kb_bias_add(z, b, KB_CHANNELS_LAST, &zb), "bias_add");
    temps.push_back(z);
    temps.push_back(zb);
    if (i + 1 < wshapes.size()) {
      kb_tensor* a;
      ok(kb_relu(zb, 0, nullptr, 0, &a), "relu");
      temps.push_back(a);
      h = a;
    } else {
      h = zb;
    }
  }
  kb_tensor *p, *lv, *loss;
  ok(kb_softmax(h, -1, &p), "softmax");
  ok(kb_categorical_crossentropy(y, p, 0, -1, &lv), "xent");
  ok(kb_mean(lv, nullptr, 0, 0, &loss), "mean");
  kb_tensor_list* grads;
  ok(kb_gradients(loss, params.data(), params.size(), &grads), "gradients");
  float lr = 0.01f;
  kb_tensor* lrt;
  ok(kb_constant(&lr, KB_FLOAT32, nullptr, 0, KB_FLOAT32, nullptr, 0, "lr", &lrt), "lr");
  std::vector<kb_tensor*> ups;
  for (size_t i = 0; i < params.size(); ++i) {
    kb_tensor *g, *s, *u;
    ok(kb_tensor_list_get(grads, i, &g), "grad");
    ok(kb_multiply(lrt, g, &s), "mul");
    ok(kb_update_sub(params[i], s, &u), "update");
    ups.push_back(u);
    kb_tensor_release(g);
    kb_tensor_release(s);
  }
  kb_tensor* ins[2] = {x, y};
  kb_compiled_function* f;
  ok(kb_function(ins, 2, &loss, 1, ups.data(), ups.size(), &f), "function");
  ok(kb_function_set_device(f, dev), "device");
  kb_tensor* dx = data({128, 784}, 3);
  std::vector<float> onehot(128 * 10, 0.f);
  for (int i = 0; i < 128; ++i) onehot[size_t(i * 10 + i % 10)] = 1.f;
  int64_t yshape[2] = {128, 10};
  kb_tensor* dy;
  ok(kb_tensor_from_data(onehot.data(), KB_FLOAT32, yshape, 2, &dy), "y data");
  measure("W7 mlp step", name, 5, repeats, [&] { call_once(f, {dx, dy}); });
  kb_function_release(f);
  for (auto* t : ups) kb_tensor_release(t);
  for (auto* t : params) kb_tensor_release(t);
  for (auto* t : temps) kb_tensor_release(t);
  for (auto* t : {x, y, p, lv, loss, lrt, dx, dy}) kb_tensor_release(t);
  kb_tensor_list_release(grads);
}

void w9(kb_device_kind dev, const char* name, int repeats) {
  int64_t s[1] = {1};
  kb_tensor *a, *b, *c;
  ok(kb_placeholder(s, 1, 1, KB_FLOAT32, 0, "a", &a), "a");
  ok(kb_placeholder(s, 1, 1, KB_FLOAT32, 0, "b", &b), "b");
  ok(kb_add(a, b, &c), "add");
  kb_tensor* ins[2] = {a, b};
  kb_compiled_function* f;
  ok(kb_function(ins, 2, &c, 1, nullptr, 0, &f), "function");
  ok(kb_function_set_device(f, dev), "device");
  kb_tensor* da = data({1}, 4);
  kb_tensor* db = data({1}, 5);
  // Time batches of 1000 calls; report per call.
  measure("W9 call overhead x1000", name, 2, std::max(5, repeats / 4), [&] {
    for (int i = 0; i < 1000; ++i) call_once(f, {da, db});
  });
  kb_function_release(f);
  for (auto* t : {a, b, c, da, db}) kb_tensor_release(t);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dev = argc > 1 ? argv[1] : "cpu";
  int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  kb_device_kind kind = dev == "cuda" ? KB_DEVICE_CUDA : KB_DEVICE_CPU;
  if (kind == KB_DEVICE_CUDA) {
    int64_t n = 0;
    kb_device_count(KB_DEVICE_CUDA, &n);
    if (n == 0) {
      std::fprintf(stderr, "no GPU: %s\n", kb_cuda_unavailable_reason());
      return 1;
    }
  }
  w3(kind, dev.c_str(), repeats);
  w7(kind, dev.c_str(), repeats);
  w9(kind, dev.c_str(), repeats);
  return 0;
}
