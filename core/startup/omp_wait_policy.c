/* Chooses how the OpenMP runtime's idle threads wait, before the runtime starts: libgomp reads
 * OMP_WAIT_POLICY and GOMP_SPINCOUNT once, in its own constructor. Left alone, an idle thread
 * spins for 300000 iterations (milliseconds) after every parallel region. On a machine whose cores
 * are shared (a CPU quota, a service beside the job, several ranks per host) a spinning thread uses
 * up its time slice: when the next region starts it waits behind the other process for a whole
 * slice, and the region's barrier waits for it (an LSTM beside one busy core took 12 times its
 * quiet time). A short spin keeps the quiet speed, as a region that follows soon still finds its
 * threads awake, and lets an idle thread sleep, which the scheduler wakes at once when work comes.
 *
 * This library holds nothing else. libkbackend.so lists it after libgomp among the libraries it
 * needs, so the dynamic loader runs this constructor before libgomp's (libraries that do not
 * depend on each other are initialized in the reverse of their load order). A variable the user
 * set is kept, and a process that started libgomp before loading kbackend keeps its policy. */
#include <stdlib.h>

/* libgomp's own spin count for a machine with more threads than CPUs: about 50 microseconds. */
static const char kSpinCount[] = "1000";

__attribute__((constructor)) static void choose_omp_wait_policy(void) {
  if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
    setenv("GOMP_SPINCOUNT", kSpinCount, 0);
}
