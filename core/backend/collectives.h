// The processes of a data-parallel job and the collectives between them, through the plugin of
// core/backend/comm_plugin.h. Until dist_init succeeds the world is this process alone (rank 0
// of 1) and every collective is the identity, so the same program runs without a launcher.
//
// Every collective waits at most the deadline (set_timeout_seconds; KB_DIST_TIMEOUT, default
// 300 s). One that fails or passes its deadline fails with Status::distributed, and so does every
// later collective: a rank must not go on with a partner whose sequence it has lost.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/backend/comm_plugin.h"
#include "core/graph/buffer.h"
#include "core/graph/dtype.h"

namespace kb::dist {

// Loads the plugin (KB_MPI_PLUGIN, else libkbackend_mpi.so beside the core library) and starts
// the engine; Status::unavailable naming what is missing. Once per process: a later call is a
// no-op, and after finalize it fails (MPI cannot start twice).
void init();
bool initialized();
int32_t rank();
int32_t size();
int32_t local_rank();
std::string engine();  // "" before init; "Open MPI v4.1.4, ...; NCCL 2.28.3"

// Host buffers; the identity for one process. `what` names the collective in errors
// ("all_reduce of 'x'"). send and recv may be the same buffer. The average of integers
// truncates toward zero.
void all_reduce(const Buffer& send, Buffer& recv, bool average, const std::string& what);

// An all-reduce in place that runs while the caller computes: all_reduce_start posts it to the
// engine's thread (one of at most 64 KiB, latency more than bandwidth, it runs at once) and
// all_reduce_finish waits for it (with the deadline) and divides for the average. Collectives
// issued between the two run after it, in order. A gradient bucket's
// (core/compile/bucket_collectives.cpp): started when its last gradient is computed, finished
// before the first step that reads it.
struct PendingCollective {
  uint64_t ticket = 0;  // the engine's; 0: none pending (one process: the identity)
  uint64_t number = 0;  // in the job's sequence, for messages
  std::string what;
  std::shared_ptr<void> owner;  // the buffer, alive until the engine is done with it
};
void all_reduce_start(Buffer& data, const std::string& what, PendingCollective& pending);
void all_reduce_finish(Buffer& data, bool average, PendingCollective& pending);
void broadcast(Buffer& data, int32_t root, const std::string& what);
// out holds size() parts of part's bytes, rank r's at r.
void all_gather(const Buffer& part, Buffer& out, const std::string& what);
// The sum of every rank's `blocks`, of which this rank receives the rank-th block in `block`.
void reduce_scatter_sum(const Buffer& blocks, Buffer& block, const std::string& what);
void barrier(const std::string& what);
// Fails with Status::distributed, naming the ranks whose value differs from rank 0's, unless
// every process passes the same `value` (a fingerprint of `what`); the job is then failed.
void check_same_on_every_rank(uint64_t value, const std::string& what);
// Ends the engine after waiting for every rank (a barrier); the world is one process again.
void finalize();
// Ends every process of the job (the engine's abort: the launcher reports `code`), or this one
// alone outside a job, with exit status `code`, at once; does not return.
[[noreturn]] void abort_job(int32_t code);

// Collectives this process ran through the engine (a bucket counts once; none in one process).
uint64_t collectives_run();

// A device's own collectives (the CUDA plugin's, over NCCL) run beside the engine, in the job's
// one sequence. As one is queued: fails if an earlier collective failed, else counts it as the
// engine counts its own and returns its number.
uint64_t begin_device_collective(const std::string& what);
// Fails with Status::distributed, "what (rank r of n, collective c): reason", and every later
// collective with it.
[[noreturn]] void fail_job(const std::string& what, uint64_t collective, const std::string& reason);
// The device's engine ("NCCL 2.28.3"), named by engine() after the host's.
void set_device_engine(const std::string& name);

double timeout_seconds();
void set_timeout_seconds(double seconds);  // > 0

}  // namespace kb::dist
