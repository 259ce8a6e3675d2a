// glibc's own allocator entry points, for an executable that defines the malloc family itself
// (the dynamic linker binds the executable's ahead of the C library's for every shared object)
// and forwards to these: bench/alloc_counter.cpp counts, tests/alloc_failure fails on request.
#pragma once
#include <cstddef>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}
