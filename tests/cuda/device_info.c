/* Prints the number of usable GPUs and why CUDA is not used (for the fallback test). */
#include <kbackend.h>
#include <stdio.h>

int main(void) {
  int64_t n = -1;
  if (kb_device_count(KB_DEVICE_CUDA, &n) != KB_OK) return 1;
  printf("cuda devices: %lld\nreason: %s\n", (long long)n, kb_cuda_unavailable_reason());
  return 0;
}
