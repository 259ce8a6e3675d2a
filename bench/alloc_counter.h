// Heap allocations made by this process (every thread, the library's included): the benchmark
// reports them per call, to show what a compiled function allocates in its steady state.
#pragma once
#include <cstdint>

namespace kb_bench {

// malloc, calloc, realloc, aligned_alloc, posix_memalign and memalign calls so far (operator new
// goes through malloc).
uint64_t heap_allocations();

// With KB_ALLOC_TRACE=1 in the environment, prints the call stack of every allocation made while
// tracing is on (to stderr: object + offset per frame, for addr2line), to find where a steady
// state still allocates.
void trace_allocations(bool on);

// While on, each allocation's call stack is walked: one whose nearest library frame is oneDNN's
// (its primitives' argument tables, its sgemm's workspace) is also counted here. Slow (a
// backtrace per allocation): for a few calls, not for timing.
void attribute_allocations(bool on);
uint64_t onednn_allocations();

}  // namespace kb_bench
