// One process of a job that goes wrong (tests/dist/failures_test.sh runs it under mpirun and reads
// what each rank prints). Modes:
//   stall        rank 1 arrives 8 s late at an all_reduce whose deadline is 2 s: the others must
//                fail with KB_ERROR_DISTRIBUTED within the deadline plus 2 s, naming rank 1, and
//                their next collective at once.
//                Rank 0 then waits for rank 1's own failure, whose message must say that
//                rank 0 gave up on that collective.
//   stall-large  the same for an all_reduce of 4 MiB (the engine's thread runs it).
//   abort        as stall, then rank 0 leaves with kb_dist_abort(3): the launcher must end the
//                job at once with exit status 3.
//   differ       the ranks build all_reduce over different shapes: both must fail with the
//                fingerprint error naming rank 1, well before the deadline.
//   kill         rank 1 dies during the job; the launcher must end the job.
// Each rank prints "rank R: <result>" lines; the process never calls kb_dist_finalize after a
// failure (the job is broken) and leaves with _exit.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "capi/helpers.h"

using namespace kbt;
using Clock = std::chrono::steady_clock;

namespace {

int32_t g_rank = 0;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Evaluates all_reduce(x) for x of n floats; the status, and the time it took.
kb_status reduce(int64_t n, double* took) {
  Tensor x = constant_f32(std::vector<float>(size_t(n), 1.f), {n});
  kb_tensor* y = nullptr;
  ok(kb_all_reduce(x.get(), KB_REDUCE_SUM, &y));
  Tensor held = Tensor::adopt(y);
  std::vector<float> out(static_cast<size_t>(n));
  auto start = Clock::now();
  kb_status s = kb_tensor_copy_to(y, out.data(), out.size() * sizeof(float));
  *took = seconds_since(start);
  return s;
}

void report(const char* what, kb_status s, double took) {
  std::printf("rank %d: %s status %d after %.2f s: %s\n", g_rank, what, int(s), took,
              s == KB_OK ? "" : kb_last_error_message());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (kb_dist_init() != KB_OK) {
    std::printf("kb_dist_init: %s\n", kb_last_error_message());
    return 1;
  }
  kb_dist_rank(&g_rank);
  double took = 0;
  if (mode == "stall" || mode == "stall-large" || mode == "abort") {
    ok(kb_dist_set_timeout(2));
    // A function run once by all (its collectives compared, its plan built), then again with
    // rank 1 late: the all-reduce itself waits.
    int64_t n = mode == "stall" ? 4 : 1 << 20;
    Tensor x = constant_f32(std::vector<float>(size_t(n), 1.f), {n});
    Tensor y = make([&](kb_tensor** o) { return kb_all_reduce(x.get(), KB_REDUCE_SUM, o); });
    Function f = function({}, {y.get()});
    call(f);
    if (g_rank == 1) std::this_thread::sleep_for(std::chrono::seconds(8));
    kb_tensor_list* out = nullptr;
    auto begin = Clock::now();
    kb_status s = kb_function_call(f.get(), nullptr, 0, &out);
    took = seconds_since(begin);
    kb_tensor_list_release(out);
    report("all_reduce", s, took);
    auto start = Clock::now();
    report("barrier", kb_dist_barrier(), seconds_since(start));
    if (g_rank == 0 && mode == "abort") {
      kb_dist_abort(3);
      report("abort returned", kb_dist_abort(3), 0);
    }
    // Rank 1 arrives at 8 s and gives up at 10 s: rank 0 stays until then (a process leaving
    // ends the job).
    if (g_rank == 0 && mode == "stall") std::this_thread::sleep_for(std::chrono::seconds(9));
  } else if (mode == "differ") {
    ok(kb_dist_set_timeout(60));
    kb_status s = reduce(g_rank == 1 ? 5 : 4, &took);
    report("all_reduce", s, took);
  } else if (mode == "kill") {
    ok(kb_dist_set_timeout(120));
    kb_status s = reduce(4, &took);
    report("all_reduce", s, took);
    if (g_rank == 1) raise(SIGKILL);
    s = reduce(4, &took);
    report("all_reduce", s, took);
  } else {
    std::printf("usage: kb_dist_failures stall|stall-large|abort|differ|kill\n");
    return 2;
  }
  std::fflush(stdout);
  _exit(0);
}
