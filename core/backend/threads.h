// The number of threads the CPU kernels use: one OpenMP pool, shared with oneDNN and Eigen.
#pragma once

namespace kb {

// n >= 1, or 0 for the default: KB_NUM_THREADS when set, else OMP_NUM_THREADS when set, else the
// CPUs the process may use (usable_cpus: its affinity mask and its cgroup's CPU quota). Applies to
// calls from every thread from their next entry into the library. Refuses n above max_threads(),
// and a count of threads the process cannot start.
void set_num_threads(int n);
int max_threads();
int num_threads();

// OpenMP's thread count is a per-thread setting: a thread entering the library applies ours, less
// the CPUs other processes are keeping busy (threads_left_free).
void use_num_threads();

}  // namespace kb
