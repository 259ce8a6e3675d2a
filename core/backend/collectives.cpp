#include "core/backend/collectives.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/backend/device.h"
#include "core/backend/plugin_file.h"
#include "core/graph/dispatch.h"
#include "core/ops/collective_ops.h"
#include "core/util/error.h"

namespace kb::dist {
namespace {

enum class State { single, running, finalized };

constexpr double kDefaultTimeoutSeconds = 300;

// The engine's thread: large collectives and started ones run there, one at a time in the order
// they were posted, so that a caller can stop waiting at its deadline while the engine stays
// blocked in a collective whose partners never come (MPI's blocking collectives cannot be
// interrupted; they are faster than its nonblocking ones), or compute while it runs.
struct Engine {
  std::mutex mu;
  std::condition_variable work, done;
  std::deque<std::pair<uint64_t, CommOp>> jobs;  // (ticket, op), posted and not yet run
  bool stop = false;  // the thread ends (MPI itself is finalized by the thread that started it)
  uint64_t posted = 0, finished = 0;  // tickets
  uint64_t failed = 0;  // the first ticket that failed (0: none): it and every later one fail
  char reason[512] = {0};
  std::thread thread;

  bool idle() const { return posted == finished; }

  void loop(const CommApi& api) {
    for (;;) {
      std::pair<uint64_t, CommOp> job;
      bool skip = false;
      {
        std::unique_lock<std::mutex> lock(mu);
        work.wait(lock, [&] { return !jobs.empty() || stop; });
        if (stop) return;
        job = jobs.front();
        jobs.pop_front();
        skip = failed != 0;  // after a failure MPI's state is unknown: nothing more runs
      }
      char why[512] = {0};
      int32_t result = skip ? 0 : api.run(&job.second, why, sizeof why);
      {
        std::lock_guard<std::mutex> lock(mu);
        if (result != 0 && failed == 0) {
          failed = job.first;
          std::memcpy(reason, why, sizeof reason);
        }
        finished = job.first;
      }
      done.notify_all();
    }
  }
};

struct World {
  std::mutex mu;  // one collective at a time: every rank must issue them in the same order
  State state = State::single;
  CommApi api{};
  std::string failure;    // the first failed collective's message: later ones fail with it
  uint64_t sequence = 0;  // collectives started, for messages
  double timeout = kDefaultTimeoutSeconds;
  bool timeout_set = false;  // by set_timeout_seconds, over KB_DIST_TIMEOUT
  // Buffers of collectives that never completed: the engine may still write into them, so they
  // are never freed.
  std::vector<std::shared_ptr<void>> abandoned;
  Engine engine;
  std::string device_engine;  // set_device_engine
};
// Never destroyed: a rank may run a collective from a static destructor of its own.
World& world() {
  static World* w = new World;
  return *w;
}

double timeout_from_environment() {
  const char* env = std::getenv("KB_DIST_TIMEOUT");
  if (!env || !*env) return kDefaultTimeoutSeconds;
  char* end = nullptr;
  double v = std::strtod(env, &end);
  check(end && *end == '\0' && v > 0 && v < 1e9, Status::invalid_argument, "KB_DIST_TIMEOUT=", env,
        " is not a positive number of seconds");
  return v;
}

// "what (rank 1 of 2, collective 7)": the prefix of every message of a collective.
std::string where(const World& w, const std::string& what, uint64_t n) {
  return what + " (rank " + std::to_string(w.api.rank) + " of " + std::to_string(w.api.size) +
         (n ? ", collective " + std::to_string(n) : "") + ")";
}

std::string seconds_text(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

[[noreturn]] void fail_world(World& w, const std::string& message) {
  w.failure = message;
  fail(Status::distributed, message);
}

// How long a rank whose deadline passed listens for the others' reports of how far they got.
constexpr double kReportGraceSeconds = 1.0;

// Which ranks did not reach collective n, from the others' reports (asked for now; a rank waiting
// on a collective answers while it waits). may_ask: whether this thread may call MPI now.
std::string stragglers(World& w, uint64_t n, bool may_ask) {
  if (!may_ask)
    return "which rank stalled is unknown (MPI was started without MPI_THREAD_MULTIPLE)";
  std::vector<int64_t> reached(size_t(w.api.size), -1);
  std::vector<int32_t> gave_up(size_t(w.api.size), 0);
  char reason[512] = {0};
  if (w.api.reached(int64_t(n), kReportGraceSeconds, reached.data(), gave_up.data(), reason,
                    sizeof reason) != 0)
    return std::string("which rank stalled is unknown: ") + reason;
  // "rank 1 has" / "ranks 1, 3 have": the ranks for which `pick` holds, "" when none.
  auto ranks = [&](auto pick, const char* one, const char* many) {
    std::string list;
    int count = 0;
    for (int32_t r = 0; r < w.api.size; ++r)
      if (r != w.api.rank && pick(size_t(r))) {
        list += (list.empty() ? "" : ", ") + std::to_string(r);
        ++count;
      }
    if (count == 0) return std::string();
    return (count == 1 ? "rank " : "ranks ") + list + (count == 1 ? one : many);
  };
  std::string late = ranks([&](size_t r) { return reached[r] < int64_t(n); }, " has", " have");
  if (!late.empty())
    return late + " not reached it (no report of collective " + std::to_string(n) + " within " +
           seconds_text(kReportGraceSeconds) + " s after this deadline)";
  // Every rank reached it: one that gave up on it first left this one waiting for good.
  std::string quit = ranks([&](size_t r) { return gave_up[r] != 0; }, " has", " have");
  if (!quit.empty())
    return quit + " given up on it (its deadline passed before this rank's; the job was failed " +
           "there)";
  return "every rank reached it and waits on it, yet it did not complete (the engine or the "
         "network between the ranks stalled)";
}

[[noreturn]] void fail_deadline(World& w, const std::string& what, uint64_t n,
                                std::initializer_list<std::shared_ptr<void>> owners, bool may_ask) {
  for (const auto& o : owners) w.abandoned.push_back(o);
  fail_world(w, where(w, what, n) + " did not complete within " + seconds_text(w.timeout) +
                    " s: " + stragglers(w, n, may_ask));
}

std::chrono::steady_clock::time_point deadline_of(const World& w) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(w.timeout));
}

// Collectives up to this size run on the calling thread, which polls the engine's nonblocking
// collective: their time is mostly latency, which a hand-over between threads would add to.
constexpr int64_t kInlineBytes = 64 << 10;

int64_t bytes_of(const CommOp& op) {
  bool sum = CommKind(op.kind) == CommKind::all_reduce_sum ||
             CommKind(op.kind) == CommKind::reduce_scatter_sum;
  return sum ? op.count * int64_t(dtype_size(DType(op.dtype))) : op.count;
}

// Starts op on the calling thread and polls it (progress happens inside the engine's test
// calls): at full speed, then yielding the core, then sleeping, so a long wait costs no CPU.
void run_inline(World& w, const CommOp& op, const std::string& what, uint64_t n,
                std::initializer_list<std::shared_ptr<void>> owners) {
  char reason[512] = {0};
  void* request = nullptr;
  if (w.api.start(&op, &request, reason, sizeof reason) != 0)
    fail_world(w, where(w, what, n) + ": " + reason);
  auto begin = std::chrono::steady_clock::now();
  auto deadline = deadline_of(w);
  for (uint64_t polls = 0;; ++polls) {
    int32_t done = 0;
    if (w.api.test(request, &done, reason, sizeof reason) != 0)
      fail_world(w, where(w, what, n) + ": " + reason);
    if (done) return;
    if (polls < 1024 || polls % 64 != 0) continue;
    w.api.serve(int64_t(n));  // a rank whose deadline passed may ask how far this one got
    auto now = std::chrono::steady_clock::now();
    if (now > deadline) fail_deadline(w, what, n, owners, true);
    if (now - begin > std::chrono::milliseconds(100))
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    else if (now - begin > std::chrono::milliseconds(2))
      std::this_thread::yield();
  }
}

// Hands op to the engine's thread: its ticket.
uint64_t post(World& w, const CommOp& op) {
  Engine& e = w.engine;
  std::lock_guard<std::mutex> lock(e.mu);
  uint64_t ticket = ++e.posted;
  e.jobs.emplace_back(ticket, op);
  e.work.notify_one();
  return ticket;
}

// Waits for the engine to finish `ticket` (collective n), in slices, answering other ranks'
// reports between them where MPI allows it.
void await(World& w, uint64_t ticket, const std::string& what, uint64_t n,
           std::initializer_list<std::shared_ptr<void>> owners) {
  Engine& e = w.engine;
  std::unique_lock<std::mutex> lock(e.mu);
  auto deadline = deadline_of(w);
  bool multiple = w.api.thread_multiple != 0;
  while (!e.done.wait_until(
      lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)),
      [&] { return e.finished >= ticket; })) {
    lock.unlock();
    if (std::chrono::steady_clock::now() >= deadline) fail_deadline(w, what, n, owners, multiple);
    if (multiple) w.api.serve(int64_t(n));
    lock.lock();
  }
  if (e.failed != 0 && e.failed <= ticket) {
    std::string reason = e.reason;
    lock.unlock();
    fail_world(w, where(w, what, n) + ": " + reason);
  }
}

// Whether op runs on the calling thread: a small one, while no collective is still the
// engine's (they run in posting order).
bool runs_inline(World& w, const CommOp& op) {
  if (bytes_of(op) > kInlineBytes) return false;
  std::lock_guard<std::mutex> lock(w.engine.mu);
  return w.engine.idle();
}

void check_not_failed(const World& w, const std::string& what) {
  if (!w.failure.empty())
    fail(Status::distributed, where(w, what, 0), ": an earlier collective failed: ", w.failure);
}

void run(World& w, const CommOp& op, const std::string& what,
         std::initializer_list<std::shared_ptr<void>> owners) {
  check_not_failed(w, what);
  uint64_t n = ++w.sequence;
  if (runs_inline(w, op)) return run_inline(w, op, what, n, owners);
  await(w, post(w, op), what, n, owners);
}

// The average of `size` processes' values from their sum (average_of_sum).
void divide(Buffer& v, int32_t size) {
  dispatch_dtype(v.dtype, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_arithmetic_v<T>) {
      T* p = v.as<T>();
      int64_t count = v.numel();
#pragma omp simd
      for (int64_t i = 0; i < count; ++i) p[i] = average_of_sum(p[i], size);
    }
  });
}

// Whether collectives go to the engine (a job of several processes) or are the identity.
bool distributed(const World& w) { return w.state == State::running && w.api.size > 1; }

std::string reason_of(const char* what, const std::string& path) {
  const char* e = dlerror();
  return std::string(what) + (e ? e : path);
}

}  // namespace

void init() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.state == State::running) return;
  check(w.state != State::finalized, Status::invalid_argument,
        "dist_init: the distributed runtime was finalized; it cannot start again in a process");
  if (!w.timeout_set) w.timeout = timeout_from_environment();
  bool named = false;
  std::string path = plugin_file("KB_MPI_PLUGIN", "libkbackend_mpi.so", &named);
  check(!path.empty(), Status::unavailable, "dist_init: cannot locate the core library");
  // A file KB_MPI_PLUGIN names is the program's choice: its absence is that, not the build's.
  check(access(path.c_str(), R_OK) == 0 || !named, Status::unavailable,
        "dist_init: KB_MPI_PLUGIN names ", path, ", which cannot be read");
  check(access(path.c_str(), R_OK) == 0, Status::unavailable, "dist_init: the MPI plugin ", path,
        " is not there (the library was built without MPI: install an MPI such as Debian's "
        "libopenmpi-dev and rebuild)");
  // RTLD_GLOBAL: Open MPI loads its components as modules that resolve symbols of libmpi.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  check(
      h != nullptr, Status::unavailable,
      reason_of("dist_init: the MPI plugin did not load (is the MPI library installed?): ", path));
  auto start = reinterpret_cast<CommInitFn>(dlsym(h, "kb_comm_plugin_init"));
  check(start != nullptr, Status::unavailable, "dist_init: ", path, " has no kb_comm_plugin_init");
  char reason[512] = {0};
  CommApi api{};
  if (start(kCommPluginVersion, &api, reason, sizeof reason) != 0)
    fail(Status::unavailable, "dist_init: ", reason);
  w.api = api;
  w.engine.thread = std::thread([&w] { w.engine.loop(w.api); });
  w.state = State::running;
}

bool initialized() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.state == State::running;
}

int32_t rank() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.state == State::running ? w.api.rank : 0;
}

int32_t size() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.state == State::running ? w.api.size : 1;
}

int32_t local_rank() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.state == State::running ? w.api.local_rank : 0;
}

std::string engine() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.state != State::running || !w.api.engine) return "";
  return w.api.engine + (w.device_engine.empty() ? "" : "; " + w.device_engine);
}

void all_reduce(const Buffer& send, Buffer& recv, bool average, const std::string& what) {
  check_summable_across_processes(send.dtype, what);
  check(send.dtype == recv.dtype && send.numel() == recv.numel(), Status::internal, what,
        ": operand and result differ");
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (!distributed(w)) {
    copy_within(Device::cpu, recv.data(), send.data(), send.nbytes());
    return;
  }
  CommOp op{int32_t(CommKind::all_reduce_sum),
            int32_t(send.dtype),
            send.data(),
            recv.data(),
            send.numel(),
            0};
  run(w, op, what, {send.storage, recv.storage});
  if (average) divide(recv, w.api.size);
}

void all_reduce_start(Buffer& data, const std::string& what, PendingCollective& pending) {
  check_summable_across_processes(data.dtype, what);
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (pending.ticket != 0) {
    // A run that failed between the start and the wait: the collective completes (it is in
    // every rank's sequence) before its buffer is reduced again.
    std::shared_ptr<void> owner = std::move(pending.owner);
    uint64_t ticket = pending.ticket;
    pending.ticket = 0;
    await(w, ticket, pending.what, pending.number, {owner});
  }
  if (!distributed(w)) return;
  check_not_failed(w, what);
  CommOp op{int32_t(CommKind::all_reduce_sum),
            int32_t(data.dtype),
            data.data(),
            data.data(),
            data.numel(),
            0};
  uint64_t n = ++w.sequence;
  // A small one costs latency, not bandwidth: done at once, with no hand-over and back.
  if (runs_inline(w, op)) return run_inline(w, op, what, n, {data.storage});
  pending.number = n;
  pending.what = what;
  pending.owner = data.storage;
  pending.ticket = post(w, op);
}

void all_reduce_finish(Buffer& data, bool average, PendingCollective& pending) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (pending.ticket != 0) {
    uint64_t ticket = pending.ticket;
    pending.ticket = 0;
    std::shared_ptr<void> owner = std::move(pending.owner);
    await(w, ticket, pending.what, pending.number, {owner});
  }
  if (average && distributed(w)) divide(data, w.api.size);
}

void broadcast(Buffer& data, int32_t root, const std::string& what) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  int32_t n = distributed(w) ? w.api.size : 1;
  check(root >= 0 && root < n, Status::invalid_argument, what, ": root ", root,
        " is not a rank of ", n);
  if (!distributed(w)) return;
  CommOp op{int32_t(CommKind::broadcast),
            int32_t(data.dtype),
            data.data(),
            data.data(),
            int64_t(data.nbytes()),
            root};
  run(w, op, what, {data.storage});
}

void all_gather(const Buffer& part, Buffer& out, const std::string& what) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  int64_t n = distributed(w) ? w.api.size : 1;
  check(out.nbytes() == part.nbytes() * size_t(n), Status::internal, what,
        ": the result does not hold ", n, " parts");
  if (n == 1) {
    copy_within(Device::cpu, out.data(), part.data(), part.nbytes());
    return;
  }
  CommOp op{int32_t(CommKind::all_gather),
            int32_t(part.dtype),
            part.data(),
            out.data(),
            int64_t(part.nbytes()),
            0};
  run(w, op, what, {part.storage, out.storage});
}

void reduce_scatter_sum(const Buffer& blocks, Buffer& block, const std::string& what) {
  check_summable_across_processes(blocks.dtype, what);
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  int64_t n = distributed(w) ? w.api.size : 1;
  check(blocks.dtype == block.dtype && blocks.numel() == block.numel() * n, Status::internal, what,
        ": the operand does not hold ", n, " blocks");
  if (n == 1) {
    copy_within(Device::cpu, block.data(), blocks.data(), block.nbytes());
    return;
  }
  CommOp op{int32_t(CommKind::reduce_scatter_sum),
            int32_t(blocks.dtype),
            blocks.data(),
            block.data(),
            block.numel(),
            0};
  run(w, op, what, {blocks.storage, block.storage});
}

void check_same_on_every_rank(uint64_t value, const std::string& what) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (!distributed(w)) return;
  auto mine = Buffer::make(DType::i64, Dims{1});
  *mine->as<int64_t>() = int64_t(value);
  auto all = Buffer::make(DType::i64, Dims{w.api.size});
  CommOp op{int32_t(CommKind::all_gather),
            int32_t(DType::i64),
            mine->data(),
            all->data(),
            int64_t(sizeof(int64_t)),
            0};
  run(w, op, what, {mine->storage, all->storage});
  std::string differ;
  const int64_t* v = all->as<int64_t>();
  for (int32_t r = 1; r < w.api.size; ++r)
    if (v[r] != v[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (differ.empty()) return;
  fail_world(w,
             where(w, what, 0) + ": the processes issue different collectives: rank" +
                 (differ.find(',') == std::string::npos ? " " + differ + " differs"
                                                        : "s " + differ + " differ") +
                 " from rank 0 (every process must build the same graphs, with the same shapes)");
}

void barrier(const std::string& what) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (!distributed(w)) return;
  CommOp op{int32_t(CommKind::barrier), 0, nullptr, nullptr, 0, 0};
  run(w, op, what, {});
}

void finalize() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.state != State::running) return;
  bool was_distributed = distributed(w);
  w.state = State::finalized;  // whatever happens below: MPI does not start twice
  try {
    CommOp op{int32_t(CommKind::barrier), 0, nullptr, nullptr, 0, 0};
    if (was_distributed) run(w, op, "dist_finalize", {});
  } catch (...) {
    // The engine's thread may be blocked in a collective for good: the process keeps it, and MPI
    // is left as it is (finalizing it would wait for that collective).
    w.engine.thread.detach();
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(w.engine.mu);
    w.engine.stop = true;
  }
  w.engine.work.notify_one();
  w.engine.thread.join();
  char reason[512] = {0};
  check(w.api.finalize(reason, sizeof reason) == 0, Status::distributed, "dist_finalize: ", reason);
}

void abort_job(int32_t code) {
  World& w = world();
  std::fflush(nullptr);  // neither MPI_Abort nor _Exit flushes what the program printed
  // Not under w.mu, which a collective that never completes may hold for good; the state only
  // changes in init and finalize, which the program calls from this thread (MPI's rule).
  if (w.state == State::running && w.api.abort) w.api.abort(code);
  std::_Exit(code);
}

uint64_t collectives_run() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.sequence;
}

uint64_t begin_device_collective(const std::string& what) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  if (!w.failure.empty())
    fail(Status::distributed, where(w, what, 0), ": an earlier collective failed: ", w.failure);
  return distributed(w) ? ++w.sequence : 0;
}

void fail_job(const std::string& what, uint64_t collective, const std::string& reason) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  fail_world(w, where(w, what, collective) + ": " + reason);
}

void set_device_engine(const std::string& name) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  w.device_engine = name;
}

double timeout_seconds() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.timeout;
}

void set_timeout_seconds(double seconds) {
  check(seconds > 0 && seconds < 1e9, Status::invalid_argument,
        "dist_set_timeout: seconds must be positive, got ", seconds);
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mu);
  w.timeout = seconds;
  w.timeout_set = true;
}

}  // namespace kb::dist
