// What crosses between the core and a collectives plugin (libkbackend_mpi.so, core/mpi): the
// core never links MPI, so a process without it still loads and runs the library. Plain C types
// only, as for the CUDA plugin (core/backend/device.h).
#pragma once
#include <cstddef>
#include <cstdint>

namespace kb {

enum class CommKind : int32_t {
  all_reduce_sum = 0,
  broadcast = 1,
  all_gather = 2,
  barrier = 3,
  reduce_scatter_sum = 4,
};

// One collective, the same on every rank.
struct CommOp {
  int32_t kind;      // CommKind
  int32_t dtype;     // DType of the elements of the sums; broadcast and all_gather move bytes
  const void* send;  // all_reduce_sum: the operand (== recv: in place); all_gather: this rank's
                     // part; reduce_scatter_sum: every rank's blocks
  void* recv;        // all_reduce_sum: the sum; broadcast: the data, in place; all_gather: the
                     // parts; reduce_scatter_sum: this rank's block of the sum
  int64_t count;     // all_reduce_sum: elements; broadcast: bytes; all_gather: bytes per rank;
                     // reduce_scatter_sum: elements per block
  int32_t root;      // broadcast
};

// Every function returns 0 on success, else writes a NUL-terminated reason into reason. They are
// called from one thread at a time (the core's engine thread, or a caller it lets through), and
// run() may block for good if a peer never comes: the core then gives up waiting on it.
struct CommApi {
  int32_t rank, size, local_rank;
  const char* engine;  // "Open MPI v4.1.4, ..."
  // Runs op to completion (the engine's blocking collectives, its fastest for large buffers).
  int32_t (*run)(const CommOp* op, char* reason, size_t reason_size);
  // Starts op and hands back a request for test(); the buffers must live until it completes.
  int32_t (*start)(const CommOp* op, void** request, char* reason, size_t reason_size);
  // *done becomes 1 once the request completed (it is then freed), else 0. Never blocks.
  int32_t (*test)(void* request, int32_t* done, char* reason, size_t reason_size);
  int32_t (*finalize)(char* reason, size_t reason_size);
  // After a deadline: which collective each rank reached. reached() tells every other rank that
  // this one gave up on collective n, then for grace_seconds collects what the others tell
  // (reached[r]: the latest collective rank r reported, -1 if none; gave_up[r]: 1 where r gave up
  // on it, its deadline passed, 0 where it waits on it; size entries each). serve() answers such
  // reports with n (waiting), once per asking rank, without waiting: a rank calls it while it
  // waits.
  int32_t (*reached)(int64_t n, double grace_seconds, int64_t* reached, int32_t* gave_up,
                     char* reason, size_t reason_size);
  int32_t (*serve)(int64_t n);
  // Ends every process of the job with exit status `code` (MPI_Abort); does not return.
  void (*abort)(int32_t code);
  // Whether MPI takes calls from several threads at once (MPI_THREAD_MULTIPLE): then a caller may
  // serve() while the engine's thread is inside a collective.
  int32_t thread_multiple;
};

// Changes whenever these structures do.
constexpr int32_t kCommPluginVersion = 5;
// The plugin's entry point `kb_comm_plugin_init`: starts the engine (MPI_Init_thread) and fills
// *api. Called once per process.
using CommInitFn = int32_t (*)(int32_t version, CommApi* api, char* reason, size_t reason_size);

}  // namespace kb
