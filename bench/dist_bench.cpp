// The collectives' overhead against raw MPI (docs/performance.md, data parallelism), on however
// many processes mpirun starts: a 4 MiB float32 all-reduce through MPI_Allreduce itself (in
// place, and from one buffer into another), the average through a compiled kbackend function
// (kb_function_call_into, so nothing but the collective runs), and 100 gradients of 40 KB reduced
// in one function. Rank 0 prints one JSON line per measurement (median milliseconds over `repeats`
// rounds of `calls` calls, after warm-up). Usage: mpirun -np 2 kb_dist_bench [repeats]
#include <kbackend.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

void ok(kb_status s, const char* what) {
  if (s == KB_OK) return;
  std::fprintf(stderr, "%s: %s\n", what, kb_last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Median milliseconds per call of f over `repeats` rounds, every rank starting each round
// together.
double median_ms(int repeats, int calls, const std::function<void()>& f) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        calls);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

kb_tensor* placeholder(int64_t n) {
  kb_tensor* t = nullptr;
  ok(kb_placeholder(&n, 1, 1, KB_FLOAT32, 0, nullptr, &t), "placeholder");
  return t;
}

kb_tensor* data(int64_t n, float v) {
  std::vector<float> d(size_t(n), v);
  kb_tensor* t = nullptr;
  ok(kb_tensor_from_data(d.data(), KB_FLOAT32, &n, 1, &t), "tensor_from_data");
  return t;
}

// A function all-reducing `parts` placeholders of n floats each; runs it into kept outputs.
// With `as_gradients`, it reduces 2*x (a value computed in the function, which dies at its
// all-reduce, as a gradient does) and adds the average to a variable, as an update would: the
// reduction in place, its readers taking views of a bucket.
struct Reduction {
  std::vector<kb_tensor*> inputs, outputs, updates, values, results;
  kb_compiled_function* f = nullptr;
  Reduction(int parts, int64_t n, bool as_gradients) {
    kb_tensor* two = nullptr;
    float v2 = 2.f;
    ok(kb_tensor_from_data(&v2, KB_FLOAT32, nullptr, 0, &two), "tensor_from_data");
    for (int i = 0; i < parts; ++i) {
      inputs.push_back(placeholder(n));
      values.push_back(data(n, 1.f + float(i)));
      kb_tensor* y = nullptr;
      if (!as_gradients) {
        ok(kb_all_reduce(inputs.back(), KB_REDUCE_AVERAGE, &y), "all_reduce");
        outputs.push_back(y);
        results.push_back(data(n, 0.f));
        continue;
      }
      kb_tensor *g = nullptr, *var = nullptr, *sum = nullptr, *u = nullptr;
      ok(kb_multiply(inputs.back(), two, &g), "multiply");
      ok(kb_all_reduce(g, KB_REDUCE_AVERAGE, &y), "all_reduce");
      std::vector<float> zeros(size_t(n), 0.f);
      ok(kb_variable(zeros.data(), KB_FLOAT32, &n, 1, KB_FLOAT32, nullptr, &var), "variable");
      ok(kb_add(var, y, &sum), "add");
      ok(kb_update(var, sum, &u), "update");
      updates.push_back(u);
    }
    ok(kb_function(inputs.data(), inputs.size(), outputs.data(), outputs.size(), updates.data(),
                   updates.size(), &f),
       "function");
  }
  void operator()() {
    ok(kb_function_call_into(f, values.data(), values.size(), results.data(), results.size()),
       "function_call_into");
  }
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int repeats = argc > 1 ? std::atoi(argv[1]) : 9;
  ok(kb_dist_init(), "dist_init");
  int32_t rank = 0, size = 1;
  kb_dist_rank(&rank);
  kb_dist_size(&size);
  const int64_t n = int64_t(4) << 18;  // 4 MiB of float32
  // MPI's own: in place, and from one buffer into another as a compiled function does.
  std::vector<float> buf(static_cast<size_t>(n), 1.f), sum(static_cast<size_t>(n));
  double raw_in_place = median_ms(repeats, 20, [&] {
    MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  double raw = median_ms(repeats, 20, [&] {
    MPI_Allreduce(buf.data(), sum.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  Reduction one(1, n, false);
  double kb = median_ms(repeats, 20, [&] { one(); });
  // As gradients: one of 4 MiB, and 100 of 40 KB (4000 KB in all), bucketed.
  Reduction one_gradient(1, n, true);
  double kb_one_gradient = median_ms(repeats, 20, [&] { one_gradient(); });
  Reduction many(100, 10240, true);
  double kb_many = median_ms(repeats, 20, [&] { many(); });
  if (rank == 0) {
    std::printf("{\"processes\": %d, \"case\": \"MPI_Allreduce 4 MiB in place\", \"ms\": %.3f}\n",
                size, raw_in_place);
    std::printf("{\"processes\": %d, \"case\": \"MPI_Allreduce 4 MiB\", \"ms\": %.3f}\n", size,
                raw);
    std::printf(
        "{\"processes\": %d, \"case\": \"kb all_reduce 4 MiB\", \"ms\": %.3f, \"vs_raw\": %.2f}\n",
        size, kb, kb / raw);
    std::printf("{\"processes\": %d, \"case\": \"kb gradient 4 MiB + update\", \"ms\": %.3f}\n",
                size, kb_one_gradient);
    std::printf(
        "{\"processes\": %d, \"case\": \"kb 100 gradients x 40 KB + updates\", \"ms\": %.3f, "
        "\"vs_one_4MiB\": %.2f}\n",
        size, kb_many, kb_many / kb_one_gradient);
  }
  ok(kb_dist_finalize(), "dist_finalize");
  MPI_Finalize();
  return 0;
}
