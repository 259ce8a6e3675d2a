// The MPI engine of the collectives (core/backend/comm_plugin.h), a module the core loads at run
// time: the core never links MPI. Collectives run on a duplicate of MPI_COMM_WORLD, so a program's
// own MPI traffic never matches the library's, with errors returned rather than fatal. Large ones
// are MPI's blocking collectives (Open MPI's tuned algorithms, faster than its nonblocking ones),
// run on the core's engine thread while the caller waits with a deadline; small ones the
// nonblocking collectives, which the caller polls itself (no hand-over between threads).
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <chrono>
#include <new>
#include <thread>
#include <vector>
#include <string>

#include "core/backend/comm_plugin.h"
#include "core/graph/dtype.h"

namespace {

using kb::CommApi;
using kb::CommKind;
using kb::CommOp;
using kb::DType;

MPI_Comm g_comm = MPI_COMM_NULL;
// A second duplicate for what ranks tell each other after a deadline (kReachedTag messages: the
// collective a rank waits on), so that it never mixes with the collectives.
MPI_Comm g_side = MPI_COMM_NULL;
constexpr int kReachedTag = 1;
int g_rank = 0, g_size = 1;
std::vector<char> g_answered;    // per rank: its report was answered
std::vector<int64_t> g_heard;    // per rank: the latest collective it reported, or -1
std::vector<int32_t> g_gave_up;  // per rank: whether it gave up on that collective
bool g_started_mpi = false;      // false when the program had initialized MPI itself
char g_engine[256] = {0};

int32_t say(char* reason, size_t size, const std::string& text) {
  if (reason && size) std::snprintf(reason, size, "%s", text.c_str());
  return 1;
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, size_t(length));
}

MPI_Datatype mpi_type(int32_t dtype) {
  switch (DType(dtype)) {
    case DType::f32:
      return MPI_FLOAT;
    case DType::f64:
      return MPI_DOUBLE;
    case DType::i8:
      return MPI_INT8_T;
    case DType::i16:
      return MPI_INT16_T;
    case DType::i32:
      return MPI_INT32_T;
    case DType::i64:
      return MPI_INT64_T;
    case DType::u8:
      return MPI_UINT8_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

// Runs op with MPI's blocking collective, or starts its nonblocking one into *request.
int32_t issue(const CommOp* op, MPI_Request* request, char* reason, size_t reason_size) {
  if (op->count < 0 || op->count > INT_MAX)
    return say(reason, reason_size,
               "a collective of " + std::to_string(op->count) + " elements exceeds MPI's count");
  int count = int(op->count), rc = MPI_SUCCESS;
  switch (CommKind(op->kind)) {
    case CommKind::all_reduce_sum:
    case CommKind::reduce_scatter_sum: {
      MPI_Datatype t = mpi_type(op->dtype);
      if (t == MPI_DATATYPE_NULL)
        return say(reason, reason_size, "no MPI type for dtype " + std::to_string(op->dtype));
      if (CommKind(op->kind) == CommKind::reduce_scatter_sum) {
        rc = request
                 ? MPI_Ireduce_scatter_block(op->send, op->recv, count, t, MPI_SUM, g_comm, request)
                 : MPI_Reduce_scatter_block(op->send, op->recv, count, t, MPI_SUM, g_comm);
      } else {
        const void* send = op->send == op->recv ? MPI_IN_PLACE : op->send;
        rc = request ? MPI_Iallreduce(send, op->recv, count, t, MPI_SUM, g_comm, request)
                     : MPI_Allreduce(send, op->recv, count, t, MPI_SUM, g_comm);
      }
      break;
    }
    case CommKind::broadcast:
      rc = request ? MPI_Ibcast(op->recv, count, MPI_BYTE, op->root, g_comm, request)
                   : MPI_Bcast(op->recv, count, MPI_BYTE, op->root, g_comm);
      break;
    case CommKind::all_gather:
      rc = request ? MPI_Iallgather(op->send, count, MPI_BYTE, op->recv, count, MPI_BYTE, g_comm,
                                    request)
                   : MPI_Allgather(op->send, count, MPI_BYTE, op->recv, count, MPI_BYTE, g_comm);
      break;
    case CommKind::barrier:
      rc = request ? MPI_Ibarrier(g_comm, request) : MPI_Barrier(g_comm);
      break;
    default:
      return say(reason, reason_size, "unknown collective " + std::to_string(op->kind));
  }
  return rc == MPI_SUCCESS ? 0 : say(reason, reason_size, mpi_error(rc));
}

int32_t run(const CommOp* op, char* reason, size_t reason_size) {
  return issue(op, nullptr, reason, reason_size);
}

int32_t start(const CommOp* op, void** request, char* reason, size_t reason_size) {
  auto* r = new (std::nothrow) MPI_Request(MPI_REQUEST_NULL);
  if (!r) return say(reason, reason_size, "out of memory");
  if (issue(op, r, reason, reason_size) != 0) {
    delete r;
    return 1;
  }
  *request = r;
  return 0;
}

int32_t test(void* request, int32_t* done, char* reason, size_t reason_size) {
  auto* r = static_cast<MPI_Request*>(request);
  int flag = 0;
  int rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return say(reason, reason_size, mpi_error(rc));
  *done = flag ? 1 : 0;
  if (flag) delete r;
  return 0;
}

// Sends {n, gave_up} to rank `to` without waiting; the message's buffer lives on (a failed job's
// last words).
void tell(int to, int64_t n, bool gave_up) {
  auto* value = new (std::nothrow) int64_t[2]{n, gave_up ? 1 : 0};
  if (!value) return;
  MPI_Request q = MPI_REQUEST_NULL;
  if (MPI_Isend(value, 2, MPI_INT64_T, to, kReachedTag, g_side, &q) == MPI_SUCCESS)
    MPI_Request_free(&q);
}

// Receives every report waiting into g_heard; calls on_report(from) for each.
template <class F>
void receive_reports(F&& on_report) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kReachedTag, g_side, &flag, &st) != MPI_SUCCESS || !flag) return;
    int64_t value[2] = {-1, 0};
    if (MPI_Recv(value, 2, MPI_INT64_T, st.MPI_SOURCE, kReachedTag, g_side, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
      return;
    size_t from = size_t(st.MPI_SOURCE);
    if (value[0] > g_heard[from] || (value[0] == g_heard[from] && value[1] != 0)) {
      g_heard[from] = value[0];
      g_gave_up[from] = value[1] != 0 ? 1 : 0;
    }
    on_report(st.MPI_SOURCE);
  }
}

int32_t serve(int64_t n) {
  receive_reports([&](int from) {
    if (g_answered[size_t(from)]) return;
    g_answered[size_t(from)] = 1;
    tell(from, n, false);
  });
  return 0;
}

int32_t reached(int64_t n, double grace_seconds, int64_t* reached, int32_t* gave_up, char*,
                size_t) {
  for (int r = 0; r < g_size; ++r) {
    reached[r] = -1;
    gave_up[r] = 0;
  }
  reached[g_rank] = n;
  gave_up[g_rank] = 1;
  // Every other rank is told, even one whose report was answered while this one waited: that
  // this rank gave up is news.
  for (int r = 0; r < g_size; ++r) {
    if (r == g_rank) continue;
    g_answered[size_t(r)] = 1;  // told now: a later report from r needs no answer
    tell(r, n, true);
  }
  double end = MPI_Wtime() + grace_seconds;
  for (;;) {
    receive_reports([](int) {});
    bool all = true;
    for (int r = 0; r < g_size; ++r) {
      if (r != g_rank) {
        reached[r] = g_heard[size_t(r)];
        gave_up[r] = reached[r] == n ? g_gave_up[size_t(r)] : 0;
      }
      all = all && reached[r] >= n;
    }
    if (all || MPI_Wtime() >= end) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void abort_job(int32_t code) { MPI_Abort(MPI_COMM_WORLD, code); }

int32_t finalize(char* reason, size_t reason_size) {
  MPI_Comm_free(&g_side);
  int rc = MPI_Comm_free(&g_comm);
  if (rc != MPI_SUCCESS) return say(reason, reason_size, mpi_error(rc));
  if (g_started_mpi) {
    rc = MPI_Finalize();
    if (rc != MPI_SUCCESS) return say(reason, reason_size, mpi_error(rc));
  }
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t kb_comm_plugin_init(int32_t version,
                                                                              CommApi* api,
                                                                              char* reason,
                                                                              size_t reason_size) {
  if (version != kb::kCommPluginVersion)
    return say(reason, reason_size,
               "the MPI plugin is of another kbackend version (interface " +
                   std::to_string(kb::kCommPluginVersion) + ", the core's " +
                   std::to_string(version) + ")");
  int already = 0, provided = 0;
  MPI_Initialized(&already);
  if (already) {
    MPI_Query_thread(&provided);
  } else {
    // MULTIPLE where MPI offers it: a waiting caller may then answer other ranks' reports while
    // the engine's thread is inside a collective. SERIALIZED is what the collectives need.
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) return say(reason, reason_size, "MPI_Init_thread: " + mpi_error(rc));
    g_started_mpi = true;
  }
  if (provided < MPI_THREAD_SERIALIZED)
    return say(reason, reason_size,
               "MPI was initialized without MPI_THREAD_SERIALIZED support, which the library "
               "needs (collectives may come from any thread)");
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  if (rc != MPI_SUCCESS) return say(reason, reason_size, "MPI_Comm_dup: " + mpi_error(rc));
  MPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN);
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &g_side);
  if (rc != MPI_SUCCESS) return say(reason, reason_size, "MPI_Comm_dup: " + mpi_error(rc));
  MPI_Comm_set_errhandler(g_side, MPI_ERRORS_RETURN);
  int rank = 0, size = 1, local_rank = 0;
  MPI_Comm_rank(g_comm, &rank);
  MPI_Comm_size(g_comm, &size);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(g_comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) ==
      MPI_SUCCESS) {
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
  }
  char version_text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  MPI_Get_library_version(version_text, &length);
  std::string first_line(version_text, size_t(length));
  first_line = first_line.substr(0, first_line.find('\n'));
  std::snprintf(g_engine, sizeof g_engine, "%s", first_line.c_str());
  g_rank = rank;
  g_size = size;
  g_answered.assign(size_t(size), 0);
  g_heard.assign(size_t(size), -1);
  g_gave_up.assign(size_t(size), 0);
  api->rank = rank;
  api->size = size;
  api->local_rank = local_rank;
  api->engine = g_engine;
  api->run = run;
  api->start = start;
  api->test = test;
  api->finalize = finalize;
  api->reached = reached;
  api->serve = serve;
  api->abort = abort_job;
  api->thread_multiple = provided >= MPI_THREAD_MULTIPLE ? 1 : 0;
  return 0;
}
