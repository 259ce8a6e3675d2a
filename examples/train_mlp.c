/* Trains a two-layer MLP (64 -> 64 relu -> 10 softmax) on the 8x8 handwritten digits with SGD,
 * using only the kbackend C ABI: placeholders, variables, dot, bias_add, relu, softmax,
 * categorical_crossentropy, gradients, update ops and a compiled function.
 * Usage: train_mlp [digits.csv] */
#include <kbackend.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_MAX 2000
#define N_FEAT 64
#define N_CLASS 10

#define CHECK(call)                                                                \
  do {                                                                             \
    if ((call) != KB_OK) {                                                         \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, kb_last_error_message()); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static float X[N_MAX][N_FEAT];
static int Y[N_MAX];

static int load(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(1);
  }
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof line, f) && n < N_MAX) {
    if (line[0] == '#') continue;
    char* p = line;
    Y[n] = (int)strtol(p, &p, 10);
    for (int j = 0; j < N_FEAT; ++j) X[n][j] = strtof(p + 1, &p) / 16.0f;
    ++n;
  }
  fclose(f);
  return n;
}

/* A fixed pseudo-random permutation so that the split is the same on every run. */
static void shuffle(int* idx, int n, unsigned* state) {
  for (int i = n - 1; i > 0; --i) {
    *state = *state * 1103515245u + 12345u;
    int j = (int)((*state >> 8) % (unsigned)(i + 1));
    int t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
}

static kb_tensor* batch_tensor(const int* idx, int n, int labels) {
  static float buf[N_MAX * N_FEAT];
  int64_t shape[2] = {n, labels ? N_CLASS : N_FEAT};
  for (int i = 0; i < n; ++i) {
    if (labels) {
      for (int c = 0; c < N_CLASS; ++c) buf[i * N_CLASS + c] = (Y[idx[i]] == c) ? 1.0f : 0.0f;
    } else {
      memcpy(buf + i * N_FEAT, X[idx[i]], sizeof X[0]);
    }
  }
  kb_tensor* t;
  CHECK(kb_tensor_from_data(buf, KB_FLOAT32, shape, 2, &t));
  return t;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "examples/data/digits.csv";
  int n = load(path);
  int idx[N_MAX];
  for (int i = 0; i < n; ++i) idx[i] = i;
  unsigned state = 42;
  shuffle(idx, n, &state);
  int n_test = n / 5, n_train = n - n_test;
  int* train = idx;
  int* test = idx + n_train;
  printf("kbackend %s: %d training and %d test digits\n", kb_version(), n_train, n_test);

  /* The model */
  int64_t x_shape[2] = {-1, N_FEAT}, y_shape[2] = {-1, N_CLASS};
  kb_tensor *x, *y, *w1, *b1, *w2, *b2;
  CHECK(kb_placeholder(x_shape, 2, 2, KB_FLOAT32, 0, "x", &x));
  CHECK(kb_placeholder(y_shape, 2, 2, KB_FLOAT32, 0, "y", &y));
  int64_t seed1 = 1, seed2 = 2, w1s[2] = {N_FEAT, 64}, w2s[2] = {64, N_CLASS};
  int64_t b1s[1] = {64}, b2s[1] = {N_CLASS};
  CHECK(kb_random_normal_variable(w1s, 2, 0.0, 0.125, KB_FLOAT32, "w1", &seed1, &w1));
  CHECK(kb_random_normal_variable(w2s, 2, 0.0, 0.125, KB_FLOAT32, "w2", &seed2, &w2));
  CHECK(kb_zeros(b1s, 1, KB_FLOAT32, "b1", &b1));
  CHECK(kb_zeros(b2s, 1, KB_FLOAT32, "b2", &b2));

  kb_tensor *h, *h_b, *h_act, *logits, *logits_b, *probs, *losses, *loss;
  CHECK(kb_dot(x, w1, &h));
  CHECK(kb_bias_add(h, b1, KB_CHANNELS_LAST, &h_b));
  CHECK(kb_relu(h_b, 0.0, NULL, 0.0, &h_act));
  CHECK(kb_dot(h_act, w2, &logits));
  CHECK(kb_bias_add(logits, b2, KB_CHANNELS_LAST, &logits_b));
  CHECK(kb_softmax(logits_b, -1, &probs));
  CHECK(kb_categorical_crossentropy(y, probs, 0, -1, &losses));
  CHECK(kb_mean(losses, NULL, 0, 0, &loss));

  /* SGD: param <- param - lr * grad */
  kb_tensor* params[4] = {w1, b1, w2, b2};
  kb_tensor_list* grads;
  CHECK(kb_gradients(loss, params, 4, &grads));
  float lr_value = 0.5f;
  kb_tensor* lr;
  CHECK(kb_constant(&lr_value, KB_FLOAT32, NULL, 0, KB_FLOAT32, NULL, 0, "lr", &lr));
  kb_tensor* updates[4];
  for (int i = 0; i < 4; ++i) {
    kb_tensor *g, *step;
    CHECK(kb_tensor_list_get(grads, (size_t)i, &g));
    CHECK(kb_multiply(lr, g, &step));
    CHECK(kb_update_sub(params[i], step, &updates[i]));
    kb_tensor_release(g);
    kb_tensor_release(step);
  }
  kb_tensor* train_inputs[2] = {x, y};
  kb_compiled_function *train_step, *predict;
  CHECK(kb_function(train_inputs, 2, &loss, 1, updates, 4, &train_step));
  CHECK(kb_function(&x, 1, &probs, 1, NULL, 0, &predict));

  const int batch = 32, epochs = 30;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    shuffle(train, n_train, &state);
    double total = 0;
    int batches = 0;
    for (int s = 0; s < n_train; s += batch) {
      int m = n_train - s < batch ? n_train - s : batch; /* a smaller last batch */
      kb_tensor* feed[2] = {batch_tensor(train + s, m, 0), batch_tensor(train + s, m, 1)};
      kb_tensor_list* out;
      CHECK(kb_function_call(train_step, feed, 2, &out));
      kb_tensor* l;
      float lv;
      CHECK(kb_tensor_list_get(out, 0, &l));
      CHECK(kb_tensor_copy_to(l, &lv, sizeof lv));
      total += lv;
      ++batches;
      kb_tensor_release(l);
      kb_tensor_list_release(out);
      kb_tensor_release(feed[0]);
      kb_tensor_release(feed[1]);
    }
    if (epoch == 1 || epoch % 5 == 0) printf("epoch %2d  loss %.4f\n", epoch, total / batches);
  }

  /* Test accuracy */
  kb_tensor* tx = batch_tensor(test, n_test, 0);
  kb_tensor_list* out;
  CHECK(kb_function_call(predict, &tx, 1, &out));
  kb_tensor* p;
  CHECK(kb_tensor_list_get(out, 0, &p));
  float* pv = malloc(sizeof(float) * (size_t)n_test * N_CLASS);
  CHECK(kb_tensor_copy_to(p, pv, sizeof(float) * (size_t)n_test * N_CLASS));
  int correct = 0;
  for (int i = 0; i < n_test; ++i) {
    int best = 0;
    for (int c = 1; c < N_CLASS; ++c)
      if (pv[i * N_CLASS + c] > pv[i * N_CLASS + best]) best = c;
    correct += best == Y[test[i]];
  }
  printf("test accuracy %.2f%% (%d/%d)\n", 100.0 * correct / n_test, correct, n_test);
  free(pv);
  kb_tensor_release(p);
  kb_tensor_list_release(out);
  kb_tensor_release(tx);
  for (int i = 0; i < 4; ++i) kb_tensor_release(updates[i]);
  kb_tensor* all[] = {x,     y,      w1,       b1,    w2,     b2,   h, h_b,
                      h_act, logits, logits_b, probs, losses, loss, lr};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kb_tensor_release(all[i]);
  kb_tensor_list_release(grads);
  kb_function_release(train_step);
  kb_function_release(predict);
  return correct * 10 > n_test * 9 ? 0 : 2;
}
