/* Loads a Keras model file (saved by Keras, e.g. by examples/make_keras_model.py) through the
 * kbackend C ABI, fine-tunes it on the 8x8 digits with Keras' progress bar, prints its test
 * accuracy and saves it again (a file Keras loads).
 * Usage: finetune_keras_model model.h5 [digits.csv] [out.h5] */
#include <kbackend.h>
#include <stdio.h>
#include <stdlib.h>

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

static float X[N_MAX][N_FEAT], Y[N_MAX][N_CLASS];
/* Every fifth digit is a test digit, the others train. */
static float X_TRAIN[N_MAX][N_FEAT], Y_TRAIN[N_MAX][N_CLASS], X_TEST[N_MAX][N_FEAT],
    Y_TEST[N_MAX][N_CLASS];

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
    int label = (int)strtol(p, &p, 10);
    for (int j = 0; j < N_FEAT; ++j) X[n][j] = strtof(p + 1, &p) / 16.0f;
    for (int c = 0; c < N_CLASS; ++c) Y[n][c] = c == label ? 1.0f : 0.0f;
    ++n;
  }
  fclose(f);
  return n;
}

static kb_tensor* table(const float* rows, int width, int n) {
  int64_t shape[2] = {n, width};
  kb_tensor* t;
  CHECK(kb_tensor_from_data(rows, KB_FLOAT32, shape, 2, &t));
  return t;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.h5 [digits.csv] [out.h5]\n", argv[0]);
    return 2;
  }
  int n = load(argc > 2 ? argv[2] : "examples/data/digits.csv");
  int n_train = 0, n_test = 0;
  for (int i = 0; i < n; ++i) {
    float(*xs)[N_FEAT] = i % 5 == 4 ? X_TEST : X_TRAIN;
    float(*ys)[N_CLASS] = i % 5 == 4 ? Y_TEST : Y_TRAIN;
    int* k = i % 5 == 4 ? &n_test : &n_train;
    for (int j = 0; j < N_FEAT; ++j) xs[*k][j] = X[i][j];
    for (int c = 0; c < N_CLASS; ++c) ys[*k][c] = Y[i][c];
    ++*k;
  }
  kb_model* model;
  CHECK(kb_model_load(argv[1], 1, &model));
  const char* summary;
  CHECK(kb_model_summary(model, &summary));
  printf("%s", summary);

  kb_tensor* x_train = table(&X_TRAIN[0][0], N_FEAT, n_train);
  kb_tensor* y_train = table(&Y_TRAIN[0][0], N_CLASS, n_train);
  kb_tensor* x_test = table(&X_TEST[0][0], N_FEAT, n_test);
  kb_tensor* y_test = table(&Y_TEST[0][0], N_CLASS, n_test);
  kb_tensor* scores;
  CHECK(kb_model_evaluate(model, &x_test, 1, &y_test, 1, 128, 0, &scores));
  double before[2];
  CHECK(kb_tensor_copy_to(scores, before, sizeof before));
  kb_tensor_release(scores);

  const char* history;
  CHECK(kb_model_fit(model, &x_train, 1, &y_train, 1, 32, 5, 1, "{\"seed\": 1}", NULL, NULL,
                     &history));
  printf("history: %s\n", history);
  CHECK(kb_model_evaluate(model, &x_test, 1, &y_test, 1, 128, 0, &scores));
  double after[2];
  CHECK(kb_tensor_copy_to(scores, after, sizeof after));
  kb_tensor_release(scores);
  printf("test accuracy: %.2f%% before fine-tuning, %.2f%% after (%d test digits)\n",
         100 * before[1], 100 * after[1], n_test);
  if (argc > 3) CHECK(kb_model_save(model, argv[3], 1));

  kb_tensor_release(x_train);
  kb_tensor_release(y_train);
  kb_tensor_release(x_test);
  kb_tensor_release(y_test);
  kb_model_release(model);
  return after[1] >= 0.9 ? 0 : 1;
}
