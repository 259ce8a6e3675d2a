/* A program outside the project: builds y = x * 2 + 1 through the installed C ABI, runs it on
 * [1, 2, 3] and checks [3, 5, 7]. Prints OK and exits 0 on success. */
#include <kbackend.h>
#include <math.h>
#include <stdio.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    if ((call) != KB_OK) {                                                          \
      fprintf(stderr, "consumer: %s failed: %s\n", #call, kb_last_error_message()); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

int main(void) {
  if (kb_abi_version() != KB_ABI_VERSION) {
    fprintf(stderr, "consumer: header ABI %d, library ABI %d\n", KB_ABI_VERSION,
            (int)kb_abi_version());
    return 1;
  }
  int64_t shape[1] = {-1};
  kb_tensor *x, *two, *one, *x2, *y;
  float c2 = 2.0f, c1 = 1.0f;
  CHECK(kb_placeholder(shape, 1, 1, KB_FLOAT32, 0, "x", &x));
  CHECK(kb_constant(&c2, KB_FLOAT32, NULL, 0, KB_FLOAT32, NULL, 0, "two", &two));
  CHECK(kb_constant(&c1, KB_FLOAT32, NULL, 0, KB_FLOAT32, NULL, 0, "one", &one));
  CHECK(kb_multiply(x, two, &x2));
  CHECK(kb_add(x2, one, &y));
  kb_compiled_function* f;
  CHECK(kb_function(&x, 1, &y, 1, NULL, 0, &f));

  float data[3] = {1, 2, 3};
  int64_t dims[1] = {3};
  kb_tensor* in;
  CHECK(kb_tensor_from_data(data, KB_FLOAT32, dims, 1, &in));
  kb_tensor_list* out;
  CHECK(kb_function_call(f, &in, 1, &out));
  kb_tensor* r;
  CHECK(kb_tensor_list_get(out, 0, &r));
  float got[3];
  CHECK(kb_tensor_copy_to(r, got, sizeof got));
  int ok = 1;
  for (int i = 0; i < 3; ++i) ok = ok && fabsf(got[i] - (data[i] * 2 + 1)) < 1e-6f;

  kb_tensor_release(r);
  kb_tensor_list_release(out);
  kb_tensor_release(in);
  kb_function_release(f);
  kb_tensor_release(y);
  kb_tensor_release(x2);
  kb_tensor_release(one);
  kb_tensor_release(two);
  kb_tensor_release(x);
  if (!ok) {
    fprintf(stderr, "consumer: got [%g %g %g], want [3 5 7]\n", got[0], got[1], got[2]);
    return 1;
  }
  printf("OK (kbackend %s)\n", kb_version());
  return 0;
}
