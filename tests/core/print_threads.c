/* Prints the default size of the CPU pool (tests/core/cgroup_quota_test.sh). */
#include <stdio.h>

#include "kbackend.h"

int main(void) {
  int32_t n = 0;
  if (kb_num_threads(&n) != KB_OK) return 1;
  printf("%d\n", n);
  return 0;
}
