// How many CPUs other work leaves to this process: its pool shrinks while another process keeps
// some of its CPUs busy, so that no parallel region waits for a thread the scheduler has taken
// away. On two cores beside one busy core a CNN step took 64 ms with two threads and 40 ms with
// one (28 ms with two on idle cores).
#pragma once

#include <string>
#include <string_view>

namespace kb {

// The CPUs, of the `mask_cpus` this process may run on, that others did not use over a window:
// mask_cpus less (the mask's busy time - this process' CPU time) / the window's length. Times in
// any one unit; `window` is wall time (the mask's total time / mask_cpus).
double free_cpus(double mask_cpus, double busy, double own, double window);

// Busy and total time (clock ticks) of the CPUs in the calling thread's affinity mask, from
// root + /proc/stat; steal time counts as busy (the host gave it to someone else). False when
// unreadable.
bool mask_cpu_times(const std::string& root, double* busy, double* total, int* cpus);
// This process' CPU time (user + system, clock ticks) from root + /proc/self/stat.
bool own_cpu_time(const std::string& root, double* ticks);
// The fields after the command name of a /proc/<pid>/stat line (the name may hold spaces and
// parentheses), or an empty view.
std::string_view stat_fields(std::string_view line);

// The team a call should use: `pool` less the CPUs of the mask that other work kept busy (at
// least 1), so a pool larger than the mask stays larger while the CPUs are free. Samples /proc at
// most every 200 ms; between samples, the last answer. KB_ADAPT_THREADS=0 turns it off (then always
// `pool`).
int threads_left_free(int pool);

}  // namespace kb
