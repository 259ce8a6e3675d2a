/* Trains a small LSTM, written with kb_rnn and a C step function, on a task generated here:
 * does the running sum of a sequence of 12 numbers in [-1, 1) ever exceed 1.5?
 * Prints the loss per epoch and the test accuracy (exit status 0 when above 85%). */
#include <kbackend.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T 12
#define H 16
#define N_TRAIN 2048
#define N_TEST 512
#define BATCH 64

#define CHECK(call)                                                                \
  do {                                                                             \
    if ((call) != KB_OK) {                                                         \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, kb_last_error_message()); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

/* Inside the step function a failure is reported by returning the status (kb_rnn then fails
 * with the library's message). */
#define TRY(call)                 \
  do {                            \
    kb_status st_ = (call);       \
    if (st_ != KB_OK) return st_; \
  } while (0)

/* The weights of the four gates: input, forget, output, candidate. */
typedef struct {
  kb_tensor* w[4]; /* (1, H) */
  kb_tensor* u[4]; /* (H, H) */
  kb_tensor* b[4]; /* (H,)   */
} lstm_weights;

/* gate k: x W_k + h U_k + b_k */
static kb_status gate(const lstm_weights* lw, int k, kb_tensor* x, kb_tensor* h, kb_tensor** out) {
  kb_tensor *xw, *hu, *s, *sb;
  TRY(kb_dot(x, lw->w[k], &xw));
  TRY(kb_dot(h, lw->u[k], &hu));
  TRY(kb_add(xw, hu, &s));
  TRY(kb_bias_add(s, lw->b[k], KB_CHANNELS_LAST, &sb));
  kb_tensor_release(xw);
  kb_tensor_release(hu);
  kb_tensor_release(s);
  *out = sb;
  return KB_OK;
}

/* states: h, c. Returns h' as the output and (h', c') as the new states. */
static kb_status lstm_step(void* user_data, kb_tensor* x, kb_tensor* const* states, size_t n,
                           kb_tensor** output, kb_tensor_list** new_states) {
  const lstm_weights* lw = user_data;
  kb_tensor *z[4], *i, *f, *o, *g, *fc, *ig, *c2, *tc, *h2;
  (void)n;
  for (int k = 0; k < 4; ++k) TRY(gate(lw, k, x, states[0], &z[k]));
  TRY(kb_sigmoid(z[0], &i));
  TRY(kb_sigmoid(z[1], &f));
  TRY(kb_sigmoid(z[2], &o));
  TRY(kb_tanh(z[3], &g));
  TRY(kb_multiply(f, states[1], &fc));
  TRY(kb_multiply(i, g, &ig));
  TRY(kb_add(fc, ig, &c2));
  TRY(kb_tanh(c2, &tc));
  TRY(kb_multiply(o, tc, &h2));
  kb_tensor* next[2] = {h2, c2};
  TRY(kb_tensor_list_new(next, 2, new_states));
  *output = h2; /* the list holds its own references; this one is handed over */
  kb_tensor* done[] = {z[0], z[1], z[2], z[3], i, f, o, g, fc, ig, c2, tc};
  for (size_t k = 0; k < sizeof done / sizeof done[0]; ++k) kb_tensor_release(done[k]);
  return KB_OK;
}

static unsigned rng_state = 7;
static float uniform(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / 16777216.0f;
}

/* x: (n, T, 1) in [-1, 1); y: (n, 1) = 1 when the running sum ever exceeds 1.5. */
static void make_data(float* x, float* y, int n) {
  for (int s = 0; s < n; ++s) {
    float sum = 0, hit = 0;
    for (int t = 0; t < T; ++t) {
      x[s * T + t] = 2 * uniform() - 1;
      sum += x[s * T + t];
      if (sum > 1.5f) hit = 1;
    }
    y[s] = hit;
  }
}

static kb_tensor* variable(const int64_t* shape, size_t ndim, double scale, int64_t seed) {
  kb_tensor* v;
  if (scale == 0)
    CHECK(kb_zeros(shape, ndim, KB_FLOAT32, "b", &v));
  else
    CHECK(kb_random_normal_variable(shape, ndim, 0, scale, KB_FLOAT32, "w", &seed, &v));
  return v;
}

int main(void) {
  static float x_train[N_TRAIN * T], y_train[N_TRAIN], x_test[N_TEST * T], y_test[N_TEST];
  make_data(x_train, y_train, N_TRAIN);
  make_data(x_test, y_test, N_TEST);

  lstm_weights lw;
  int64_t ws[2] = {1, H}, us[2] = {H, H}, bs[1] = {H};
  for (int k = 0; k < 4; ++k) {
    lw.w[k] = variable(ws, 2, 0.5, 1 + k);
    lw.u[k] = variable(us, 2, 0.25, 11 + k);
    lw.b[k] = variable(bs, 1, 0, 0);
  }
  int64_t vs[2] = {H, 1}, cs[1] = {1};
  kb_tensor* v = variable(vs, 2, 0.25, 21);
  kb_tensor* c = variable(cs, 1, 0, 0);

  int64_t xs[3] = {-1, T, 1}, ys[2] = {-1, 1};
  kb_tensor *x, *y, *h0, *last, *outs, *logit, *logit_b, *p, *losses, *loss;
  CHECK(kb_placeholder(xs, 3, 3, KB_FLOAT32, 0, "x", &x));
  CHECK(kb_placeholder(ys, 2, 2, KB_FLOAT32, 0, "y", &y));
  /* zero initial states shaped like x's batch: (batch, H) */
  kb_tensor *x0, *zeros_col, *zeros_h;
  int64_t b0[3] = {0, 0, 0}, sz[3] = {-1, 1, 1};
  CHECK(kb_slice(x, b0, sz, 3, &x0));
  CHECK(kb_zeros_like(x0, KB_DTYPE_DEFAULT, NULL, &zeros_col));
  int64_t flat[2] = {-1, 1};
  CHECK(kb_reshape(zeros_col, flat, 2, &h0));
  int64_t rep[2] = {1, H};
  CHECK(kb_tile(h0, rep, 2, &zeros_h));
  kb_tensor* init[2] = {zeros_h, zeros_h};
  kb_tensor_list* states;
  CHECK(kb_rnn(lstm_step, &lw, x, init, 2, 0, NULL, NULL, 0, 0, NULL, &last, &outs, &states));
  CHECK(kb_dot(last, v, &logit));
  CHECK(kb_bias_add(logit, c, KB_CHANNELS_LAST, &logit_b));
  CHECK(kb_sigmoid(logit_b, &p));
  CHECK(kb_binary_crossentropy(y, p, 0, &losses));
  CHECK(kb_mean(losses, NULL, 0, 0, &loss));

  kb_tensor* params[14];
  for (int k = 0; k < 4; ++k) params[k] = lw.w[k], params[4 + k] = lw.u[k], params[8 + k] = lw.b[k];
  params[12] = v, params[13] = c;
  kb_tensor_list* grads;
  CHECK(kb_gradients(loss, params, 14, &grads));
  float lr_value = 1.0f;
  kb_tensor* lr;
  CHECK(kb_constant(&lr_value, KB_FLOAT32, NULL, 0, KB_FLOAT32, NULL, 0, "lr", &lr));
  kb_tensor* updates[14];
  for (int k = 0; k < 14; ++k) {
    kb_tensor *g, *step;
    CHECK(kb_tensor_list_get(grads, (size_t)k, &g));
    CHECK(kb_multiply(lr, g, &step));
    CHECK(kb_update_sub(params[k], step, &updates[k]));
    kb_tensor_release(g);
    kb_tensor_release(step);
  }
  kb_tensor* ins[2] = {x, y};
  kb_compiled_function *train, *predict;
  CHECK(kb_function(ins, 2, &loss, 1, updates, 14, &train));
  CHECK(kb_function(&x, 1, &p, 1, NULL, 0, &predict));

  for (int epoch = 1; epoch <= 30; ++epoch) {
    double total = 0;
    for (int s = 0; s < N_TRAIN; s += BATCH) {
      int64_t xb[3] = {BATCH, T, 1}, yb[2] = {BATCH, 1};
      kb_tensor* feed[2];
      CHECK(kb_tensor_from_data(x_train + s * T, KB_FLOAT32, xb, 3, &feed[0]));
      CHECK(kb_tensor_from_data(y_train + s, KB_FLOAT32, yb, 2, &feed[1]));
      kb_tensor_list* out;
      CHECK(kb_function_call(train, feed, 2, &out));
      kb_tensor* l;
      float lv;
      CHECK(kb_tensor_list_get(out, 0, &l));
      CHECK(kb_tensor_copy_to(l, &lv, sizeof lv));
      total += lv;
      kb_tensor_release(l);
      kb_tensor_list_release(out);
      kb_tensor_release(feed[0]);
      kb_tensor_release(feed[1]);
    }
    if (epoch == 1 || epoch % 5 == 0)
      printf("epoch %2d  loss %.4f\n", epoch, total / (N_TRAIN / BATCH));
  }

  int64_t xt[3] = {N_TEST, T, 1};
  kb_tensor* tx;
  CHECK(kb_tensor_from_data(x_test, KB_FLOAT32, xt, 3, &tx));
  kb_tensor_list* out;
  CHECK(kb_function_call(predict, &tx, 1, &out));
  kb_tensor* pt;
  static float pv[N_TEST];
  CHECK(kb_tensor_list_get(out, 0, &pt));
  CHECK(kb_tensor_copy_to(pt, pv, sizeof pv));
  int correct = 0;
  for (int s = 0; s < N_TEST; ++s) correct += (pv[s] > 0.5f) == (y_test[s] > 0.5f);
  printf("test accuracy %.2f%% (%d/%d)\n", 100.0 * correct / N_TEST, correct, N_TEST);

  kb_tensor_release(pt);
  kb_tensor_list_release(out);
  kb_tensor_release(tx);
  for (int k = 0; k < 14; ++k) kb_tensor_release(updates[k]);
  kb_tensor_list_release(grads);
  kb_tensor_list_release(states);
  kb_tensor* all[] = {x,     y,       x0, zeros_col, h0,   zeros_h, last, outs,
                      logit, logit_b, p,  losses,    loss, lr,      v,    c};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) kb_tensor_release(all[k]);
  for (int k = 0; k < 4; ++k) {
    kb_tensor_release(lw.w[k]);
    kb_tensor_release(lw.u[k]);
    kb_tensor_release(lw.b[k]);
  }
  kb_function_release(train);
  kb_function_release(predict);
  return correct * 100 > N_TEST * 85 ? 0 : 2;
}
