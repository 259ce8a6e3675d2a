// kbackend side of the benchmark workloads W1-W10 (docs/performance.md): W1 (sigmoid(x*w + b) *
// tanh(x) of 16M floats), W2 (sum and softmax over the last axis of 4096x4096), W3 (dot of square
// float32 matrices), W4 (conv2d 3x3, 64 channels, 56x56, batch 32), W5 (max pooling 2x2 of
// 32x64x56x56), W6 (LSTM through kb_rnn, 100 steps), W7 (one MLP 784-512-512-10 training step,
// batch 128), W8 (one CNN training step), W9 (call overhead of a compiled function adding two
// 1-element tensors) and W10 (peak resident memory of W7 and W8, each in a fresh process). Prints
// one JSON line per measurement: the median wall time, its spread, and the median CPU time of the
// process per call (cpu_ms), the median heap allocations (malloc and friends, all threads:
// allocs_per_call; of one more call, those inside oneDNN: onednn_allocs_per_call of
// attributed_allocs) and minor page faults (faults_per_call); W1/W2 add the bytes a call must move
// at least, W3/W4 the flops. "machine" lines give the limits of this machine (memory bandwidth of a
// large copy, fp32 FMA peak from /proc/cpuinfo). Usage: kb_bench cpu|cuda [repeats] [workloads,
// e.g. W4,W5,machine]
//        kb_bench cpu rss W7|W8   (internal: runs one step workload, prints its peak memory)
#include <kbackend.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.h"

extern char** environ;

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

// CPU time of the whole process (all threads), in ms: with OMP_NUM_THREADS=1 it measures the work
// of a call even while other processes share the cores (wall time then mostly measures them).
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

// Minor page faults of the process so far: fresh pages touched (memory not reused).
double minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_minflt);
}

// Median and spread (max-min)/median of `repeats` timed calls after `warmup` calls, in ms.
// flops: floating-point operations of one call (adds gflops); bytes: the bytes one call must at
// least read and write in memory (W1, W2: the table compares bytes / time with the bandwidth).
void measure(const char* workload, const char* device, int warmup, int repeats,
             const std::function<void()>& call, double flops = 0, double bytes = 0) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> ms, cpu, allocs, faults;
  for (int i = 0; i < repeats; ++i) {
    double c0 = cpu_ms();
    double f0 = minor_faults();
    kb_bench::trace_allocations(i == repeats - 1);  // one call's stacks, with KB_ALLOC_TRACE=1
    auto a0 = kb_bench::heap_allocations();
    auto t0 = std::chrono::steady_clock::now();
    call();
    auto t1 = std::chrono::steady_clock::now();
    kb_bench::trace_allocations(false);
    allocs.push_back(double(kb_bench::heap_allocations() - a0));
    faults.push_back(minor_faults() - f0);
    cpu.push_back(cpu_ms() - c0);
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  // One more call, its allocations told apart: those inside oneDNN (its primitives' argument
  // tables, its sgemm's workspace) are not kbackend's to remove.
  kb_bench::attribute_allocations(true);
  auto a0 = kb_bench::heap_allocations(), d0 = kb_bench::onednn_allocations();
  call();
  double onednn = double(kb_bench::onednn_allocations() - d0);
  double attributed = double(kb_bench::heap_allocations() - a0);
  kb_bench::attribute_allocations(false);
  for (auto* v : {&ms, &cpu, &allocs, &faults}) std::sort(v->begin(), v->end());
  double med = ms[ms.size() / 2];
  double spread = (ms.back() - ms.front()) / med;
  std::printf(
      "{\"system\":\"kbackend\",\"workload\":\"%s\",\"device\":\"%s\",\"median_ms\":%.6f,"
      "\"spread\":%.3f,\"cpu_ms\":%.3f,\"allocs_per_call\":%.0f,\"faults_per_call\":%.0f,"
      "\"onednn_allocs_per_call\":%.0f,\"attributed_allocs\":%.0f",
      workload, device, med, spread, cpu[cpu.size() / 2], allocs[allocs.size() / 2],
      faults[faults.size() / 2], onednn, attributed);
  if (flops > 0) std::printf(",\"flops\":%.0f,\"gflops\":%.1f", flops, flops / (med * 1e6));
  if (bytes > 0) std::printf(",\"bytes\":%.0f,\"gbps\":%.2f", bytes, bytes / (med * 1e6));
  std::printf("}\n");
  std::fflush(stdout);
}

void call_once(kb_compiled_function* f, std::vector<kb_tensor*> ins) {
  kb_tensor_list* out;
  ok(kb_function_call(f, ins.data(), ins.size(), &out), "call");
  kb_tensor_list_release(out);
}

// The tensors of a first call's results, written into by every later call.
class Outputs {
 public:
  Outputs(kb_compiled_function* f, std::vector<kb_tensor*> ins) : f_(f), ins_(std::move(ins)) {
    kb_tensor_list* first;
    ok(kb_function_call(f_, ins_.data(), ins_.size(), &first), "call");
    for (size_t i = 0; i < kb_tensor_list_size(first); ++i) {
      kb_tensor* t;
      ok(kb_tensor_list_get(first, i, &t), "result");
      outs_.push_back(t);
    }
    kb_tensor_list_release(first);
  }
  ~Outputs() {
    for (kb_tensor* t : outs_) kb_tensor_release(t);
  }
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;
  void operator()() {
    ok(kb_function_call_into(f_, ins_.data(), ins_.size(), outs_.data(), outs_.size()),
       "call_into");
  }

 private:
  kb_compiled_function* f_;
  std::vector<kb_tensor*> ins_, outs_;
};

// A call of f writing into the tensors its first call returned (kb_function_call_into): how a
// program calling a compiled function in a loop keeps its steady state free of allocations.
// The workloads are timed this way; W9 also through kb_function_call (new result handles).
std::function<void()> calls(kb_compiled_function* f, std::vector<kb_tensor*> ins) {
  auto outs = std::make_shared<Outputs>(f, std::move(ins));
  return [outs] { (*outs)(); };
}

// W1, W2, W4 and W5 on the GPU keep x on the device (a variable) and read back one number per
// result (its sum), as the PyTorch peer keeps its tensors there: the time is the kernels', not
// tens of MB over PCIe each way. On the CPU x is fed per call (as a training batch is) and the
// results are returned.
struct ResidentInputBench {
  kb_tensor* x = nullptr;        // placeholder (CPU) or variable (GPU)
  kb_tensor* xd = nullptr;       // the data
  std::vector<kb_tensor*> keep;  // released at the end
  bool resident = false;

  ResidentInputBench(kb_device_kind dev, const std::vector<int64_t>& xs, unsigned seed) {
    resident = dev == KB_DEVICE_CUDA;
    xd = data(xs, seed);
    if (resident)
      ok(kb_variable_from_tensor(xd, KB_FLOAT32, "x", &x), "x");
    else
      ok(kb_placeholder(xs.data(), xs.size(), int64_t(xs.size()), KB_FLOAT32, 0, "x", &x), "x");
    keep = {x, xd};
  }
  // A function of x returning outs (or, resident, their sums) on dev.
  kb_compiled_function* function(std::vector<kb_tensor*> outs, kb_device_kind dev) {
    if (resident)
      for (auto& o : outs) {
        kb_tensor* s;
        ok(kb_sum(o, nullptr, 0, 0, &s), "sum");
        keep.push_back(s);
        o = s;
      }
    kb_compiled_function* f;
    ok(kb_function(resident ? nullptr : &x, resident ? 0 : 1, outs.data(), outs.size(), nullptr, 0,
                   &f),
       "function");
    ok(kb_function_set_device(f, dev), "device");
    return f;
  }
  std::function<void()> call(kb_compiled_function* f) {
    return resident ? calls(f, {}) : calls(f, {xd});
  }
  ~ResidentInputBench() {
    for (auto* t : keep) kb_tensor_release(t);
  }
};

// W1: y = sigmoid(x * w + b) * tanh(x), x of 4096x4096 float32 fed per call (resident on the
// GPU), w and b (4096,) variables broadcast over the rows; y comes back to the caller (its sum on
// the GPU). At least 128 MiB move per call (x read, y written).
void w1(kb_device_kind dev, const char* name, int repeats) {
  const int64_t rows = 4096, cols = 4096;
  ResidentInputBench in(dev, {rows, cols}, 23);
  kb_tensor *w, *b, *xw, *xwb, *sg, *th, *y;
  kb_tensor* dw = data({cols}, 21);
  kb_tensor* db = data({cols}, 22);
  ok(kb_variable_from_tensor(dw, KB_FLOAT32, "w", &w), "w");
  ok(kb_variable_from_tensor(db, KB_FLOAT32, "b", &b), "b");
  ok(kb_multiply(in.x, w, &xw), "multiply");
  ok(kb_add(xw, b, &xwb), "add");
  ok(kb_sigmoid(xwb, &sg), "sigmoid");
  ok(kb_tanh(in.x, &th), "tanh");
  ok(kb_multiply(sg, th, &y), "multiply");
  kb_compiled_function* f = in.function({y}, dev);
  double bytes = 2.0 * double(rows * cols) * sizeof(float);
  measure("W1 sigmoid(x*w+b)*tanh(x) 16M", name, 3, repeats, in.call(f), 0, bytes);
  kb_function_release(f);
  for (auto* t : {w, b, xw, xwb, sg, th, y, dw, db}) kb_tensor_release(t);
}

// W2: the sum over the last axis, and the softmax over the last axis, of a 4096x4096 float32 fed
// per call (resident on the GPU). The sum reads 64 MiB; the softmax reads 64 MiB and writes 64 MiB.
void w2(kb_device_kind dev, const char* name, int repeats) {
  const int64_t n = 4096;
  int64_t last = -1;
  ResidentInputBench in(dev, {n, n}, 24);
  kb_tensor *s, *p;
  ok(kb_sum(in.x, &last, 1, 0, &s), "sum");
  ok(kb_softmax(in.x, -1, &p), "softmax");
  kb_compiled_function* fs = in.function({s}, dev);
  kb_compiled_function* fp = in.function({p}, dev);
  double mat = double(n * n) * sizeof(float);
  measure("W2 sum last axis 4096x4096", name, 3, repeats, in.call(fs), 0, mat);
  measure("W2 softmax last axis 4096x4096", name, 3, repeats, in.call(fp), 0, 2 * mat);
  kb_function_release(fs);
  kb_function_release(fp);
  for (auto* t : {s, p}) kb_tensor_release(t);
}

// W6: an LSTM (Keras' LSTMCell: four gates, each x W_k + h U_k + b_k) through kb_rnn with a C step
// function; 100 steps, batch 64, input 128, hidden 256, zero initial states. The forward pass
// returns sum(outputs); forward + backward also returns its gradients for the 12 weights.
constexpr int64_t kLstmHidden = 256;

struct LstmWeights {
  kb_tensor* w[4];  // (input, hidden)
  kb_tensor* u[4];  // (hidden, hidden)
  kb_tensor* b[4];  // (hidden,)
};

kb_status lstm_gate(const LstmWeights* lw, int k, kb_tensor* x, kb_tensor* h, kb_tensor** out) {
  kb_tensor *xw, *hu, *s;
  kb_status st = kb_dot(x, lw->w[k], &xw);
  if (st != KB_OK) return st;
  if ((st = kb_dot(h, lw->u[k], &hu)) != KB_OK) return st;
  if ((st = kb_add(xw, hu, &s)) != KB_OK) return st;
  st = kb_bias_add(s, lw->b[k], KB_CHANNELS_LAST, out);
  for (auto* t : {xw, hu, s}) kb_tensor_release(t);
  return st;
}

kb_status lstm_step(void* user_data, kb_tensor* x, kb_tensor* const* states, size_t,
                    kb_tensor** output, kb_tensor_list** new_states) {
  const auto* lw = static_cast<const LstmWeights*>(user_data);
  kb_tensor *z[4], *i, *f, *o, *g, *fc, *ig, *c2, *tc, *h2;
  for (int k = 0; k < 4; ++k) {
    kb_status st = lstm_gate(lw, k, x, states[0], &z[k]);
    if (st != KB_OK) return st;
  }
  for (auto st :
       {kb_sigmoid(z[0], &i), kb_sigmoid(z[1], &f), kb_sigmoid(z[2], &o), kb_tanh(z[3], &g)})
    if (st != KB_OK) return st;
  for (auto st : {kb_multiply(f, states[1], &fc), kb_multiply(i, g, &ig)})
    if (st != KB_OK) return st;
  if (kb_status st = kb_add(fc, ig, &c2); st != KB_OK) return st;
  if (kb_status st = kb_tanh(c2, &tc); st != KB_OK) return st;
  if (kb_status st = kb_multiply(o, tc, &h2); st != KB_OK) return st;
  kb_tensor* next[2] = {h2, c2};
  if (kb_status st = kb_tensor_list_new(next, 2, new_states); st != KB_OK) return st;
  *output = h2;
  for (auto* t : {z[0], z[1], z[2], z[3], i, f, o, g, fc, ig, c2, tc}) kb_tensor_release(t);
  return KB_OK;
}

void w6(kb_device_kind dev, const char* name, int repeats) {
  const int64_t batch = 64, steps = 100, in = 128, hid = kLstmHidden;
  LstmWeights lw{};
  std::vector<kb_tensor*> params, temps;
  int64_t seed = 31;
  auto var = [&](std::vector<int64_t> shape, double scale) {
    kb_tensor* v;
    if (scale == 0)
      ok(kb_zeros(shape.data(), shape.size(), KB_FLOAT32, "b", &v), "zeros");
    else
      ok(kb_random_normal_variable(shape.data(), shape.size(), 0, scale, KB_FLOAT32, "w", &seed,
                                   &v),
         "w");
    ++seed;
    params.push_back(v);
    return v;
  };
  for (int k = 0; k < 4; ++k) {
    lw.w[k] = var({in, hid}, 0.05);
    lw.u[k] = var({hid, hid}, 0.05);
    lw.b[k] = var({hid}, 0);
  }
  int64_t xs[3] = {batch, steps, in}, hs[2] = {batch, hid};
  kb_tensor *x, *h0, *last, *outs, *loss;
  ok(kb_placeholder(xs, 3, 3, KB_FLOAT32, 0, "x", &x), "x");
  ok(kb_zeros(hs, 2, KB_FLOAT32, "h0", &h0), "h0");
  kb_tensor* init[2] = {h0, h0};
  kb_tensor_list* states;
  ok(kb_rnn(lstm_step, &lw, x, init, 2, 0, nullptr, nullptr, 0, 0, nullptr, &last, &outs, &states),
     "rnn");
  ok(kb_sum(outs, nullptr, 0, 0, &loss), "sum");
  kb_tensor_list* grads;
  ok(kb_gradients(loss, params.data(), params.size(), &grads), "gradients");
  std::vector<kb_tensor*> outputs = {loss};
  for (size_t i = 0; i < params.size(); ++i) {
    kb_tensor* g;
    ok(kb_tensor_list_get(grads, i, &g), "grad");
    outputs.push_back(g);
  }
  kb_compiled_function *f, *fb;
  ok(kb_function(&x, 1, &loss, 1, nullptr, 0, &f), "function");
  ok(kb_function(&x, 1, outputs.data(), outputs.size(), nullptr, 0, &fb), "function");
  ok(kb_function_set_device(f, dev), "device");
  ok(kb_function_set_device(fb, dev), "device");
  kb_tensor* xd = data({batch, steps, in}, 32);
  measure("W6 lstm fwd", name, 2, repeats, calls(f, {xd}));
  measure("W6 lstm fwd+bwd", name, 2, repeats, calls(fb, {xd}));
  kb_function_release(f);
  kb_function_release(fb);
  for (size_t i = 1; i < outputs.size(); ++i) kb_tensor_release(outputs[i]);
  kb_tensor_list_release(grads);
  kb_tensor_list_release(states);
  for (auto* t : params) kb_tensor_release(t);
  for (auto* t : {x, h0, last, outs, loss, xd}) kb_tensor_release(t);
}

// Peak resident memory of this process in MiB: getrusage's ru_maxrss, and VmHWM of
// /proc/self/status (the high-water mark of this process image alone; ru_maxrss can also carry
// the peak of the process that spawned it, so the spawner is kept small).
void print_peak_rss(const char* workload, const char* device) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double hwm_kib = 0;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) hwm_kib = std::atof(line.c_str() + 6);
  std::printf(
      "{\"system\":\"kbackend\",\"workload\":\"%s\",\"device\":\"%s\",\"peak_rss_mib\":%.1f,"
      "\"ru_maxrss_mib\":%.1f}\n",
      workload, device, hwm_kib / 1024, double(ru.ru_maxrss) / 1024);
  std::fflush(stdout);
}

// W10: runs W7 and W8 each in a fresh process (this program, spawned with "rss W7"), whose
// measurement lines are dropped and whose peak memory line is passed on.
void w10(const char* self, const char* name) {
  for (const char* w : {"W7", "W8"}) {
    int fds[2];
    if (pipe(fds) != 0) std::exit(1);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::string dev = name;
    char arg_rss[] = "rss";
    std::string wl = w;
    char* argv[] = {const_cast<char*>(self), dev.data(), arg_rss, wl.data(), nullptr};
    pid_t pid;
    if (posix_spawn(&pid, self, &fa, nullptr, argv, environ) != 0) {
      std::fprintf(stderr, "W10: cannot spawn %s\n", self);
      std::exit(1);
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (line.find("peak_rss_mib") != std::string::npos) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
}

// The machine's limits, printed as one "machine" line: the memory bandwidth of copying a 256 MiB
// buffer (read + write bytes per second, all cores each copying a part, best of 7), and the fp32
// FMA peak = cores x clock (cpu MHz) x SIMD lanes (16 with AVX-512, 8 with AVX2) x 2 FMA units x
// 2 flops. The two FMA units are an assumption (true of server Xeons with AVX-512).
void machine() {
  const size_t bytes = size_t(256) << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        size_t lo = bytes / threads * t, hi = t + 1 == threads ? bytes : bytes / threads * (t + 1);
        std::memcpy(dst.data() + lo, src.data() + lo, hi - lo);
      });
    for (auto& th : pool) th.join();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double gbps = 2.0 * double(bytes) / best / 1e9;
  std::ifstream cpuinfo("/proc/cpuinfo");
  double mhz = 0;
  int lanes = 4, cores = 0;
  std::string model;
  for (std::string line; std::getline(cpuinfo, line);) {
    auto value = [&] { return line.substr(line.find(':') + 1); };
    if (line.rfind("processor", 0) == 0) ++cores;
    if (line.rfind("cpu MHz", 0) == 0 && mhz == 0) mhz = std::atof(value().c_str());
    if (line.rfind("model name", 0) == 0 && model.empty()) model = value().substr(1);
    if (line.rfind("flags", 0) == 0) {
      std::string flags = value() + " ";
      if (flags.find(" avx512f ") != std::string::npos)
        lanes = std::max(lanes, 16);
      else if (flags.find(" avx2 ") != std::string::npos)
        lanes = std::max(lanes, 8);
    }
  }
  double peak = double(cores) * mhz * 1e-3 * lanes * 2 * 2;
  std::printf(
      "{\"system\":\"machine\",\"workload\":\"machine\",\"model\":\"%s\",\"cores\":%d,"
      "\"mhz\":%.0f,\"fp32_lanes\":%d,\"fma_units\":2,\"peak_gflops\":%.1f,\"copy_mib\":256,"
      "\"bandwidth_gbps\":%.2f}\n",
      model.c_str(), cores, mhz, lanes, peak, gbps);
  std::fflush(stdout);
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
    measure(w.c_str(), name, 3, repeats, calls(f, {}), 2.0 * n * n * n);
    kb_function_release(f);
    for (auto* t : {a, b, c, s, da, db}) kb_tensor_release(t);
  }
}

// A compiled SGD training step: softmax crossentropy of `logits` against `y`, gradients of the
// mean loss, param -= 0.01 * grad. `keep` receives 4 tensors for the caller to release.
kb_compiled_function* sgd_step(kb_tensor* x, kb_tensor* y, kb_tensor* logits,
                               const std::vector<kb_tensor*>& params, kb_device_kind dev,
                               kb_tensor* keep[4]) {
  kb_tensor* h = logits;
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
  for (auto* t : ups) kb_tensor_release(t);
  kb_tensor_list_release(grads);
  keep[0] = p, keep[1] = lv, keep[2] = loss, keep[3] = lrt;
  return f;
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
  kb_tensor* f_keep[4];
  kb_compiled_function* f = sgd_step(x, y, h, params, dev, f_keep);
  kb_tensor* dx = data({128, 784}, 3);
  std::vector<float> onehot(128 * 10, 0.f);
  for (int i = 0; i < 128; ++i) onehot[size_t(i * 10 + i % 10)] = 1.f;
  int64_t yshape[2] = {128, 10};
  kb_tensor* dy;
  ok(kb_tensor_from_data(onehot.data(), KB_FLOAT32, yshape, 2, &dy), "y data");
  measure("W7 mlp step", name, 5, repeats, calls(f, {dx, dy}));
  kb_function_release(f);
  for (auto* t : params) kb_tensor_release(t);
  for (auto* t : temps) kb_tensor_release(t);
  for (auto* t : f_keep) kb_tensor_release(t);
  for (auto* t : {x, y, dx, dy}) kb_tensor_release(t);
}

// One-hot labels (128, 10) as a constant.
kb_tensor* onehot_labels() {
  std::vector<float> onehot(128 * 10, 0.f);
  for (int i = 0; i < 128; ++i) onehot[size_t(i * 10 + i % 10)] = 1.f;
  int64_t yshape[2] = {128, 10};
  kb_tensor* dy;
  ok(kb_tensor_from_data(onehot.data(), KB_FLOAT32, yshape, 2, &dy), "y data");
  return dy;
}

// W8: conv 32 3x3, relu, maxpool 2, conv 64 3x3, relu, maxpool 2, dense 128 relu, dense 10.
void w8(kb_device_kind dev, const char* name, int repeats) {
  int64_t xs[4] = {-1, 28, 28, 1}, ys[2] = {-1, 10};
  kb_tensor *x, *y;
  ok(kb_placeholder(xs, 4, 4, KB_FLOAT32, 0, "x", &x), "x");
  ok(kb_placeholder(ys, 2, 2, KB_FLOAT32, 0, "y", &y), "y");
  std::vector<kb_tensor*> params, temps;
  auto param = [&](std::vector<int64_t> shape, double scale, int64_t seed) {
    kb_tensor* v;
    ok(kb_random_normal_variable(shape.data(), shape.size(), 0, scale, KB_FLOAT32, "w", &seed, &v),
       "w");
    params.push_back(v);
    return v;
  };
  auto keep = [&](kb_tensor* t) {
    temps.push_back(t);
    return t;
  };
  kb_tensor* h = x;
  int64_t one[2] = {1, 1}, two[2] = {2, 2};
  int64_t seed = 10;
  for (int64_t filters : {32, 64}) {
    int64_t cin = filters == 32 ? 1 : 32;
    kb_tensor* k = param({3, 3, cin, filters}, 0.1, seed++);
    kb_tensor* b = param({filters}, 0.0, seed++);
    kb_tensor *c, *cb, *a, *p;
    ok(kb_conv2d(h, k, one, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, one, 2, &c), "conv2d");
    ok(kb_bias_add(keep(c), b, KB_CHANNELS_LAST, &cb), "bias_add");
    ok(kb_relu(keep(cb), 0, nullptr, 0, &a), "relu");
    ok(kb_pool2d(keep(a), two, 2, two, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, KB_POOL_MAX, &p),
       "pool2d");
    h = keep(p);
  }
  kb_tensor* flat;
  ok(kb_batch_flatten(h, &flat), "batch_flatten");
  h = keep(flat);
  for (auto [in, out] : {std::pair<int64_t, int64_t>{1600, 128}, {128, 10}}) {
    kb_tensor* w = param({in, out}, 0.05, seed++);
    kb_tensor* b = param({out}, 0.0, seed++);
    kb_tensor *z, *zb;
    ok(kb_dot(h, w, &z), "dot");
    ok(kb_bias_add(keep(z), b, KB_CHANNELS_LAST, &zb), "bias_add");
    h = keep(zb);
    if (out == 128) {
      kb_tensor* a;
      ok(kb_relu(h, 0, nullptr, 0, &a), "relu");
      h = keep(a);
    }
  }
  kb_tensor* f_keep[4];
  kb_compiled_function* f = sgd_step(x, y, h, params, dev, f_keep);
  kb_tensor* dx = data({128, 28, 28, 1}, 4);
  kb_tensor* dy = onehot_labels();
  measure("W8 cnn step", name, 3, repeats, calls(f, {dx, dy}));
  kb_function_release(f);
  for (auto* t : params) kb_tensor_release(t);
  for (auto* t : temps) kb_tensor_release(t);
  for (auto* t : f_keep) kb_tensor_release(t);
  for (auto* t : {x, y, dx, dy}) kb_tensor_release(t);
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
  auto into = calls(f, {da, db});
  measure("W9 call overhead x1000", name, 2, std::max(5, repeats / 4), [&] {
    for (int i = 0; i < 1000; ++i) into();
  });
  measure("W9 call returning new handles x1000", name, 2, std::max(5, repeats / 4), [&] {
    for (int i = 0; i < 1000; ++i) call_once(f, {da, db});
  });
  kb_function_release(f);
  for (auto* t : {a, b, c, da, db}) kb_tensor_release(t);
}

// W4: conv2d 3x3 'same', batch 32, 64 -> 64 channels, 56x56, in both data formats; the forward
// pass alone, and forward + backward (the gradients of sum(y) with respect to x and the kernel).
// The kernel is a variable.
void w4(kb_device_kind dev, const char* name, int repeats) {
  const int64_t n = 32, c = 64, hw = 56;
  for (kb_data_format df : {KB_CHANNELS_LAST, KB_CHANNELS_FIRST}) {
    const char* fmt = df == KB_CHANNELS_LAST ? "channels_last" : "channels_first";
    std::vector<int64_t> xs = df == KB_CHANNELS_LAST ? std::vector<int64_t>{n, hw, hw, c}
                                                     : std::vector<int64_t>{n, c, hw, hw};
    ResidentInputBench b(dev, xs, 12);
    kb_tensor *k, *y, *s;
    int64_t kshape[4] = {3, 3, c, c};
    int64_t seed = 11;
    ok(kb_random_normal_variable(kshape, 4, 0, 0.05, KB_FLOAT32, "k", &seed, &k), "k");
    ok(kb_conv2d(b.x, k, nullptr, 0, KB_PADDING_SAME, df, nullptr, 0, &y), "conv2d");
    ok(kb_sum(y, nullptr, 0, 0, &s), "sum");
    kb_tensor* wrt[2] = {b.x, k};
    kb_tensor_list* grads;
    ok(kb_gradients(s, wrt, 2, &grads), "gradients");
    kb_tensor *dx, *dk;
    ok(kb_tensor_list_get(grads, 0, &dx), "dx");
    ok(kb_tensor_list_get(grads, 1, &dk), "dk");
    b.keep.insert(b.keep.end(), {k, y, s, dx, dk});
    kb_compiled_function* f = b.function({y}, dev);
    kb_compiled_function* fb = b.function({y, dx, dk}, dev);
    double flops = 2.0 * n * hw * hw * c * c * 9;
    std::string w = std::string("W4 conv2d fwd ") + fmt;
    measure(w.c_str(), name, 3, repeats, b.call(f), flops);
    w = std::string("W4 conv2d fwd+bwd ") + fmt;
    measure(w.c_str(), name, 3, repeats, b.call(fb), 3 * flops);
    kb_function_release(f);
    kb_function_release(fb);
    kb_tensor_list_release(grads);
  }
}

// W5: max pooling 2x2 (strides 2) of 32x64x56x56 values in both data formats; forward, and
// forward + backward (the gradient of sum(y) with respect to x).
void w5(kb_device_kind dev, const char* name, int repeats) {
  const int64_t n = 32, c = 64, hw = 56;
  for (kb_data_format df : {KB_CHANNELS_LAST, KB_CHANNELS_FIRST}) {
    const char* fmt = df == KB_CHANNELS_LAST ? "channels_last" : "channels_first";
    std::vector<int64_t> xs = df == KB_CHANNELS_LAST ? std::vector<int64_t>{n, hw, hw, c}
                                                     : std::vector<int64_t>{n, c, hw, hw};
    ResidentInputBench b(dev, xs, 13);
    kb_tensor *y, *s;
    int64_t pool[2] = {2, 2};
    ok(kb_pool2d(b.x, pool, 2, pool, 2, KB_PADDING_VALID, df, KB_POOL_MAX, &y), "pool2d");
    ok(kb_sum(y, nullptr, 0, 0, &s), "sum");
    kb_tensor_list* grads;
    ok(kb_gradients(s, &b.x, 1, &grads), "gradients");
    kb_tensor* dx;
    ok(kb_tensor_list_get(grads, 0, &dx), "dx");
    b.keep.insert(b.keep.end(), {y, s, dx});
    kb_compiled_function* f = b.function({y}, dev);
    kb_compiled_function* fb = b.function({y, dx}, dev);
    std::string w = std::string("W5 pool2d max fwd ") + fmt;
    measure(w.c_str(), name, 3, repeats, b.call(f));
    w = std::string("W5 pool2d max fwd+bwd ") + fmt;
    measure(w.c_str(), name, 3, repeats, b.call(fb));
    kb_function_release(f);
    kb_function_release(fb);
    kb_tensor_list_release(grads);
  }
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
  // "rss W7": one step workload in this (fresh) process, then its peak memory (W10).
  if (argc > 3 && std::string(argv[2]) == "rss") {
    std::string w = argv[3];
    if (w == "W7") w7(kind, dev.c_str(), 5);
    if (w == "W8") w8(kind, dev.c_str(), 5);
    print_peak_rss(("W10 peak RSS " + w).c_str(), dev.c_str());
    return 0;
  }
  // An optional third argument selects workloads: "W4,W5" (default: all, and the machine line).
  std::string only = argc > 3 ? argv[3] : "";
  auto want = [&](const char* w) {
    if (only.empty()) return true;
    std::string rest = only + ",";
    return rest.find(std::string(w) + ",") != std::string::npos;
  };
  // W10 first, while this process is still small (see print_peak_rss).
  if (want("W10")) w10("/proc/self/exe", dev.c_str());
  if (want("machine")) machine();
  if (want("W1")) w1(kind, dev.c_str(), repeats);
  if (want("W2")) w2(kind, dev.c_str(), repeats);
  if (want("W3")) w3(kind, dev.c_str(), repeats);
  if (want("W4")) w4(kind, dev.c_str(), repeats);
  if (want("W5")) w5(kind, dev.c_str(), repeats);
  if (want("W6")) w6(kind, dev.c_str(), repeats);
  if (want("W7")) w7(kind, dev.c_str(), repeats);
  if (want("W8")) w8(kind, dev.c_str(), repeats);
  if (want("W9")) w9(kind, dev.c_str(), repeats);
  return 0;
}
