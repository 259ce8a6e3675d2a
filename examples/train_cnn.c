/* Trains a small convolutional network on the 8x8 handwritten digits with SGD and momentum,
 * using only the kbackend C ABI:
 *   x (batch, 8, 8, 1) -> conv2d 3x3 'same' 16 + bias + relu -> max pool 2x2   (4, 4, 16)
 *                      -> conv2d 3x3 'same' 32 + bias + relu -> max pool 2x2   (2, 2, 32)
 *                      -> batch_flatten (128) -> dense 10 + bias -> softmax
 * with categorical crossentropy; the gradients come from kb_gradients and the momentum and
 * parameter updates run inside the compiled training function. Exits with status 2 when the test
 * accuracy is below 95%.
 * Started by an MPI launcher (mpirun -np 2 train_cnn), it trains data-parallel: each process takes
 * its share of every batch of batch x processes digits, the gradients are averaged across the
 * processes inside the training function, and rank 0's initial weights are given to all.
 * Usage: train_cnn [digits.csv]        mpirun -np 2 train_cnn [digits.csv] */
#include <kbackend.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_MAX 2000
#define SIDE 8
#define N_FEAT (SIDE * SIDE)
#define N_CLASS 10
#define N_PARAMS 6
#define MIN_ACCURACY 95.0

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

/* Images as (n, 8, 8, 1) (channels_last; the pixels are stored row by row) or one-hot labels as
 * (n, 10). */
static kb_tensor* batch_tensor(const int* idx, int n, int labels) {
  static float buf[N_MAX * N_FEAT];
  int64_t image_shape[4] = {n, SIDE, SIDE, 1}, label_shape[2] = {n, N_CLASS};
  for (int i = 0; i < n; ++i) {
    if (labels) {
      for (int c = 0; c < N_CLASS; ++c) buf[i * N_CLASS + c] = (Y[idx[i]] == c) ? 1.0f : 0.0f;
    } else {
      memcpy(buf + i * N_FEAT, X[idx[i]], sizeof X[0]);
    }
  }
  kb_tensor* t;
  if (labels)
    CHECK(kb_tensor_from_data(buf, KB_FLOAT32, label_shape, 2, &t));
  else
    CHECK(kb_tensor_from_data(buf, KB_FLOAT32, image_shape, 4, &t));
  return t;
}

/* A scalar float32 constant. */
static kb_tensor* scalar(float v, const char* name) {
  kb_tensor* t;
  CHECK(kb_constant(&v, KB_FLOAT32, NULL, 0, KB_FLOAT32, NULL, 0, name, &t));
  return t;
}

/* Tensors of the graph, released at the end. */
static kb_tensor* keep_list[64];
static int n_keep = 0;
static kb_tensor* keep(kb_tensor* t) {
  if (n_keep == (int)(sizeof keep_list / sizeof keep_list[0])) {
    fprintf(stderr, "too many graph tensors\n");
    exit(1);
  }
  keep_list[n_keep++] = t;
  return t;
}

/* conv2d 3x3 'same' + bias + relu + max pool 2x2 (channels_last). */
static kb_tensor* conv_block(kb_tensor* x, kb_tensor* kernel, kb_tensor* bias) {
  int64_t two[2] = {2, 2};
  kb_tensor *c, *cb, *a, *p;
  CHECK(kb_conv2d(x, kernel, NULL, 0, KB_PADDING_SAME, KB_CHANNELS_LAST, NULL, 0, &c));
  CHECK(kb_bias_add(keep(c), bias, KB_CHANNELS_LAST, &cb));
  CHECK(kb_relu(keep(cb), 0.0, NULL, 0.0, &a));
  CHECK(kb_pool2d(keep(a), two, 2, two, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, KB_POOL_MAX, &p));
  return keep(p);
}

int main(int argc, char** argv) {
  clock_t started = clock();
  const char* path = argc > 1 ? argv[1] : "examples/data/digits.csv";
  int n = load(path);
  int idx[N_MAX];
  for (int i = 0; i < n; ++i) idx[i] = i;
  unsigned state = 42;
  shuffle(idx, n, &state);
  int n_test = n / 5, n_train = n - n_test;
  int* train = idx;
  int* test = idx + n_train;
  /* One process of a job, or alone (no launcher, or no MPI: rank 0 of 1). */
  kb_status joined = kb_dist_init();
  if (joined != KB_OK && joined != KB_ERROR_UNAVAILABLE) CHECK(joined);
  int32_t rank = 0, size = 1;
  CHECK(kb_dist_rank(&rank));
  CHECK(kb_dist_size(&size));
  if (rank == 0)
    printf("kbackend %s: %d training and %d test digits\n", kb_version(), n_train, n_test);
  if (size > 1 && rank == 0) printf("%d processes (%s)\n", size, kb_dist_engine());

  /* Parameters: He-normal kernels, zero biases. */
  int64_t k1s[4] = {3, 3, 1, 16}, k2s[4] = {3, 3, 16, 32}, ws[2] = {2 * 2 * 32, N_CLASS};
  int64_t b1s[1] = {16}, b2s[1] = {32}, bws[1] = {N_CLASS};
  int64_t seed1 = 1, seed2 = 2, seed3 = 3;
  kb_tensor *k1, *b1, *k2, *b2, *w, *bw;
  CHECK(kb_random_normal_variable(k1s, 4, 0.0, 0.47, KB_FLOAT32, "k1", &seed1, &k1));
  CHECK(kb_random_normal_variable(k2s, 4, 0.0, 0.118, KB_FLOAT32, "k2", &seed2, &k2));
  CHECK(kb_random_normal_variable(ws, 2, 0.0, 0.125, KB_FLOAT32, "w", &seed3, &w));
  CHECK(kb_zeros(b1s, 1, KB_FLOAT32, "b1", &b1));
  CHECK(kb_zeros(b2s, 1, KB_FLOAT32, "b2", &b2));
  CHECK(kb_zeros(bws, 1, KB_FLOAT32, "bw", &bw));
  kb_tensor* params[N_PARAMS] = {k1, b1, k2, b2, w, bw};
  CHECK(kb_dist_broadcast_variables(params, N_PARAMS, 0)); /* every process starts alike */
  const int64_t* shapes[N_PARAMS] = {k1s, b1s, k2s, b2s, ws, bws};
  const size_t ranks[N_PARAMS] = {4, 1, 4, 1, 2, 1};

  /* The model */
  int64_t x_shape[4] = {-1, SIDE, SIDE, 1}, y_shape[2] = {-1, N_CLASS};
  kb_tensor *x, *y;
  CHECK(kb_placeholder(x_shape, 4, 4, KB_FLOAT32, 0, "x", &x));
  CHECK(kb_placeholder(y_shape, 2, 2, KB_FLOAT32, 0, "y", &y));
  kb_tensor* h = conv_block(x, k1, b1);
  h = conv_block(h, k2, b2);
  kb_tensor *flat, *logits, *logits_b, *probs, *losses, *loss;
  CHECK(kb_batch_flatten(h, &flat));
  CHECK(kb_dot(keep(flat), w, &logits));
  CHECK(kb_bias_add(keep(logits), bw, KB_CHANNELS_LAST, &logits_b));
  CHECK(kb_softmax(keep(logits_b), -1, &probs));
  CHECK(kb_categorical_crossentropy(y, keep(probs), 0, -1, &losses));
  CHECK(kb_mean(keep(losses), NULL, 0, 0, &loss));
  keep(loss);

  /* SGD with momentum: v <- mu * v - lr * grad, param <- param + v (both from the values before
   * the step: the updates of one call all read the old values). */
  kb_tensor_list* grads;
  CHECK(kb_gradients(loss, params, N_PARAMS, &grads));
  kb_tensor* lr = keep(scalar(0.05f, "lr"));
  kb_tensor* mu = keep(scalar(0.9f, "momentum"));
  kb_tensor* updates[2 * N_PARAMS];
  for (int i = 0; i < N_PARAMS; ++i) {
    kb_tensor *g, *v, *mv, *step, *v_new, *p_new;
    CHECK(kb_tensor_list_get(grads, (size_t)i, &g));
    if (size > 1) { /* the average of the processes' gradients: the whole batch's */
      kb_tensor* local = keep(g);
      CHECK(kb_all_reduce(local, KB_REDUCE_AVERAGE, &g));
    }
    CHECK(kb_zeros(shapes[i], ranks[i], KB_FLOAT32, "velocity", &v)); /* a variable */
    CHECK(kb_multiply(mu, keep(v), &mv));
    CHECK(kb_multiply(lr, keep(g), &step));
    CHECK(kb_subtract(keep(mv), keep(step), &v_new));
    CHECK(kb_add(params[i], keep(v_new), &p_new));
    CHECK(kb_update(v, v_new, &updates[2 * i]));
    CHECK(kb_update(params[i], keep(p_new), &updates[2 * i + 1]));
  }
  kb_tensor* train_inputs[2] = {x, y};
  kb_compiled_function *train_step, *predict;
  CHECK(kb_function(train_inputs, 2, &loss, 1, updates, 2 * N_PARAMS, &train_step));
  CHECK(kb_function(&x, 1, &probs, 1, NULL, 0, &predict));

  /* Every process shuffles alike and takes its part of each batch of batch x size digits. */
  const int batch = 32, epochs = 15;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int steps = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    shuffle(train, n_train, &state);
    double total = 0;
    int batches = 0;
    for (int s = 0; s < n_train; s += batch * size) {
      int left = n_train - s;
      int m = (left < batch * size ? left : batch * size) / size; /* a smaller last batch */
      if (m == 0) break;
      const int* rows = train + s + rank * m;
      kb_tensor* feed[2] = {batch_tensor(rows, m, 0), batch_tensor(rows, m, 1)};
      kb_tensor_list* out;
      CHECK(kb_function_call(train_step, feed, 2, &out));
      kb_tensor* l;
      float lv;
      CHECK(kb_tensor_list_get(out, 0, &l));
      CHECK(kb_tensor_copy_to(l, &lv, sizeof lv));
      total += lv;
      ++batches;
      ++steps;
      kb_tensor_release(l);
      kb_tensor_list_release(out);
      kb_tensor_release(feed[0]);
      kb_tensor_release(feed[1]);
    }
    if (size > 1 && (epoch == 1 || epoch % 5 == 0))
      printf("rank %d epoch %2d  loss %.4f\n", rank, epoch, total / batches);
    else if (epoch == 1 || epoch % 5 == 0)
      printf("epoch %2d  loss %.4f\n", epoch, total / batches);
  }

  clock_gettime(CLOCK_MONOTONIC, &t1);
  double step_ms =
      ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / steps;

  /* Test accuracy */
  kb_tensor* tx = batch_tensor(test, n_test, 0);
  kb_tensor_list* out;
  CHECK(kb_function_call(predict, &tx, 1, &out));
  kb_tensor* p;
  CHECK(kb_tensor_list_get(out, 0, &p));
  float* pv = malloc(sizeof(float) * (size_t)n_test * N_CLASS);
  if (!pv) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  CHECK(kb_tensor_copy_to(p, pv, sizeof(float) * (size_t)n_test * N_CLASS));
  int correct = 0;
  for (int i = 0; i < n_test; ++i) {
    int best = 0;
    for (int c = 1; c < N_CLASS; ++c)
      if (pv[i * N_CLASS + c] > pv[i * N_CLASS + best]) best = c;
    correct += best == Y[test[i]];
  }
  double accuracy = 100.0 * correct / n_test;
  if (rank == 0)
    printf("test accuracy %.2f%% (%d/%d), %.1f s of CPU time, %.2f ms per training step\n",
           accuracy, correct, n_test, (double)(clock() - started) / CLOCKS_PER_SEC, step_ms);
  free(pv);
  kb_tensor_release(p);
  kb_tensor_list_release(out);
  kb_tensor_release(tx);
  for (int i = 0; i < 2 * N_PARAMS; ++i) kb_tensor_release(updates[i]);
  for (int i = 0; i < n_keep; ++i) kb_tensor_release(keep_list[i]);
  for (int i = 0; i < N_PARAMS; ++i) kb_tensor_release(params[i]);
  kb_tensor_release(x);
  kb_tensor_release(y);
  kb_tensor_list_release(grads);
  kb_function_release(train_step);
  kb_function_release(predict);
  if (joined == KB_OK) CHECK(kb_dist_finalize());
  if (accuracy < MIN_ACCURACY) {
    fprintf(stderr, "test accuracy %.2f%% is below %.0f%%\n", accuracy, MIN_ACCURACY);
    return 2;
  }
  return 0;
}
