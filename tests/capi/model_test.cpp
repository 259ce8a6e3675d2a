// Keras models through the C ABI (kb_model_*): values against a hand computation, a save/load
// round trip, and bad input of every kind (NULLs, missing and damaged files, configs that are
// not JSON or name unknown layers, wrong array counts): a status and a message, never a crash,
// and the library usable after. Keras' own numerics are compared in the Python suite
// (bindings/python/keras_tests/test_native_*.py).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

#include "capi/helpers.h"

namespace {

using kbt::ok;

const char* kDense =
    R"({"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Dense",)"
    R"( "config": {"name": "d", "units": 2, "activation": "linear", "use_bias": true,)"
    R"( "batch_input_shape": [null, 3], "dtype": "float32"}}]}})";

struct Model {
  kb_model* m = nullptr;
  Model() = default;
  explicit Model(kb_model* p) : m(p) {}
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model() { kb_model_release(m); }
};

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "kb_model_" + std::to_string(getpid()) + "_" + name;
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

// W = [[1, 2], [3, 4], [5, 6]], b = [0.5, -1]
void set_dense(kb_model* m) {
  auto w = kbt::constant_f32({1, 2, 3, 4, 5, 6}, {3, 2});
  auto b = kbt::constant_f32({0.5f, -1}, {2});
  kb_tensor* values[2] = {w.get(), b.get()};
  ok(kb_model_layer_set_weights(m, 0, values, 2), "set_weights");
}

std::vector<float> predict(kb_model* m, const kbt::Tensor& x) {
  kb_tensor* xs[1] = {x.get()};
  kb_tensor_list* out = nullptr;
  ok(kb_model_predict(m, xs, 1, 32, 0, &out), "predict");
  kbt::List list(out);
  return kbt::out_f32(list, 0);
}

TEST(Model, DenseFromJsonPredictsAndTrainsByHand) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  set_dense(m.m);
  auto x = kbt::constant_f32({1, 0, 2, -1, 1, 0}, {2, 3});
  // x W + b: [1 + 10 + 0.5, 2 + 12 - 1] and [-1 + 3 + 0.5, -2 + 4 - 1]
  EXPECT_EQ(predict(m.m, x), (std::vector<float>{11.5f, 13, 2.5f, 1}));

  const char* losses[1] = {"mse"};
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, R"({"optimizer": {"lr": 0.1}})"),
     "compile");
  auto y = kbt::constant_f32({11, 13, 2.5f, 0}, {2, 2});
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y.get()};
  kb_tensor* loss = nullptr;
  ok(kb_model_train_on_batch(m.m, xs, 1, ys, 1, &loss), "train_on_batch");
  kbt::Tensor loss_t = kbt::Tensor::adopt(loss);
  // errors e = [[0.5, 0], [0, 1]]: loss = mean(e^2) = 1.25 / 4
  auto v = kbt::values<double>(loss);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NEAR(v[0], 0.3125, 1e-6);
  // dL/db = 2/4 * sum over rows of e = [0.25, 0.5]; b -= 0.1 * that
  kb_tensor_list* weights = nullptr;
  ok(kb_model_layer_get_weights(m.m, 0, &weights), "get_weights");
  kbt::List wl(weights);
  auto b = kbt::out_f32(wl, 1);
  EXPECT_NEAR(b[0], 0.5f - 0.025f, 1e-6);
  EXPECT_NEAR(b[1], -1.0f - 0.05f, 1e-6);
  const char* names = nullptr;
  ok(kb_model_metrics_names(m.m, &names), "metrics_names");
  EXPECT_STREQ(names, R"(["loss"])");
}

TEST(Model, SaveAndLoadRoundTrip) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  set_dense(m.m);
  const char* losses[1] = {"mean_absolute_error"};
  ok(kb_model_compile(m.m, "adam", losses, 1, nullptr, 0, nullptr), "compile");
  std::string path = temp_path("roundtrip.h5");
  ok(kb_model_save(m.m, path.c_str(), 1), "save");
  kb_model* again = nullptr;
  ok(kb_model_load(path.c_str(), 1, &again), "load");
  Model loaded(again);
  auto x = kbt::constant_f32({1, 2, 3}, {1, 3});
  EXPECT_EQ(predict(loaded.m, x), predict(m.m, x));
  const char* json = nullptr;
  ok(kb_model_to_json(loaded.m, &json), "to_json");
  EXPECT_NE(std::string(json).find("\"Sequential\""), std::string::npos);
  const char* summary = nullptr;
  ok(kb_model_summary(loaded.m, &summary), "summary");
  EXPECT_NE(std::string(summary).find("Total params: 8"), std::string::npos);
  std::remove(path.c_str());
}

void expect_fails(kb_status s, kb_status code, const char* part) {
  EXPECT_EQ(s, code);
  EXPECT_NE(std::string(kb_last_error_message()).find(part), std::string::npos)
      << kb_last_error_message();
}

TEST(Model, BadArgumentsFailWithMessages) {
  kb_model* out = nullptr;
  expect_fails(kb_model_load(nullptr, 1, &out), KB_ERROR_INVALID_ARGUMENT, "path is NULL");
  expect_fails(kb_model_load("/nonexistent/m.h5", 1, nullptr), KB_ERROR_INVALID_ARGUMENT,
               "output pointer");
  expect_fails(kb_model_load("/nonexistent/m.h5", 1, &out), KB_ERROR_NOT_FOUND,
               "/nonexistent/m.h5: no such file");
  expect_fails(kb_model_from_json("{", &out), KB_ERROR_INVALID_ARGUMENT, "not JSON");
  expect_fails(
      kb_model_from_json(
          R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "Lambda", "config": {"name": "f"}}]}})",
          &out),
      KB_ERROR_NOT_IMPLEMENTED, "layer 'f': class 'Lambda'");
  expect_fails(
      kb_model_from_json(
          R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", "config": {"name": "d", "units": -3, "batch_input_shape": [null, 2]}}]}})",
          &out),
      KB_ERROR_INVALID_ARGUMENT, "units");
  EXPECT_EQ(out, nullptr);
  size_t count = 0;
  expect_fails(kb_model_layer_count(nullptr, &count), KB_ERROR_INVALID_ARGUMENT, "model is NULL");

  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  auto x = kbt::constant_f32({1, 2, 3}, {1, 3});
  kb_tensor* xs[2] = {x.get(), x.get()};
  const char* history = nullptr;
  expect_fails(kb_model_fit(m.m, xs, 1, xs, 1, 32, 1, 0, nullptr, nullptr, nullptr, &history),
               KB_ERROR_INVALID_ARGUMENT, "not compiled");
  kb_tensor_list* preds = nullptr;
  expect_fails(kb_model_predict(m.m, xs, 2, 32, 0, &preds), KB_ERROR_INVALID_ARGUMENT,
               "2 input arrays");
  expect_fails(kb_model_predict(m.m, xs, 1, 0, 0, &preds), KB_ERROR_INVALID_ARGUMENT, "batch_size");
  const char* losses[1] = {"nope"};
  expect_fails(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, nullptr),
               KB_ERROR_NOT_IMPLEMENTED, "unknown loss 'nope'");
  expect_fails(kb_model_compile(m.m, "sgd", nullptr, 0, nullptr, 0, nullptr),
               KB_ERROR_INVALID_ARGUMENT, "no loss");
  losses[0] = "mse";
  expect_fails(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, "[1"), KB_ERROR_INVALID_ARGUMENT,
               "options_json");
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, nullptr), "compile");
  auto y = kbt::constant_f32({1, 2}, {1, 2});
  auto y3 = kbt::constant_f32({1, 2, 3, 4}, {2, 2});
  kb_tensor* ys[1] = {y3.get()};
  expect_fails(kb_model_fit(m.m, xs, 1, ys, 1, 32, 1, 0, nullptr, nullptr, nullptr, &history),
               KB_ERROR_SHAPE, "samples");
  ys[0] = y.get();
  expect_fails(kb_model_fit(m.m, xs, 1, ys, 1, 32, 1, 0, R"({"validation_split": 2})", nullptr,
                            nullptr, &history),
               KB_ERROR_INVALID_ARGUMENT, "validation_split");
  kb_tensor_list* w = nullptr;
  expect_fails(kb_model_layer_get_weights(m.m, 7, &w), KB_ERROR_INVALID_ARGUMENT, "layer 7");
  kb_tensor* one[1] = {x.get()};
  expect_fails(kb_model_layer_set_weights(m.m, 0, one, 1), KB_ERROR_INVALID_ARGUMENT, "1 values");
  // Still usable.
  ok(kb_model_fit(m.m, xs, 1, ys, 1, 32, 2, 0, nullptr, nullptr, nullptr, &history), "fit");
  EXPECT_NE(std::string(history).find("\"loss\""), std::string::npos);
}

int32_t stop_at_first_epoch_end(void* user, int64_t epoch, int64_t batch, const char* logs) {
  auto* calls = static_cast<std::vector<std::string>*>(user);
  calls->push_back(std::to_string(epoch) + ":" + std::to_string(batch) + ":" + logs);
  return batch == -1 ? 1 : 0;
}

TEST(Model, CallbackSeesBatchesAndStops) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  const char* losses[1] = {"mse"};
  const char* metrics[1] = {"mae"};
  ok(kb_model_compile(m.m, "rmsprop", losses, 1, metrics, 1, nullptr), "compile");
  std::vector<float> xd(30), yd(20);
  for (size_t i = 0; i < xd.size(); ++i) xd[i] = float(i % 7) / 7;
  auto x = kbt::constant_f32(xd, {10, 3});
  auto y = kbt::constant_f32(yd, {10, 2});
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y.get()};
  std::vector<std::string> calls;
  const char* history = nullptr;
  ok(kb_model_fit(m.m, xs, 1, ys, 1, 4, 5, 0, R"({"shuffle": false})", stop_at_first_epoch_end,
                  &calls, &history),
     "fit");
  ASSERT_EQ(calls.size(), 4u);  // three batches of 4, 4 and 2, then the epoch's end
  EXPECT_EQ(calls[0].rfind("0:0:", 0), 0u);
  EXPECT_EQ(calls[3].rfind("0:-1:", 0), 0u);
  EXPECT_NE(calls[3].find("\"mae\""), std::string::npos);
  EXPECT_NE(std::string(history).find("\"mae\":["), std::string::npos);
}

// Damaged copies of a saved file (truncated, bytes flipped): each load fails with a status or
// gives a model, never crashes; the intact file loads after.
// Loads copies of a model file cut short and with bytes flipped, at `path`: each load fails
// with a message, or gives a model that predicts on x.
void load_damaged_copies(const std::vector<char>& bytes, const std::string& path, kb_tensor* x,
                         unsigned seed) {
  auto try_load = [&](const std::vector<char>& b) {
    write_file(path, b);
    kb_model* loaded = nullptr;
    kb_status s = kb_model_load(path.c_str(), 1, &loaded);
    if (s != KB_OK) {
      EXPECT_EQ(loaded, nullptr);
      EXPECT_GT(std::strlen(kb_last_error_message()), 0u);
      return;
    }
    Model held(loaded);
    kb_tensor* xs[1] = {x};
    kb_tensor_list* out = nullptr;
    if (kb_model_predict(held.m, xs, 1, 8, 0, &out) == KB_OK) kb_tensor_list_release(out);
  };
  for (size_t cut = 0; cut < bytes.size(); cut += bytes.size() / 16 + 1)
    try_load(std::vector<char>(bytes.begin(), bytes.begin() + long(cut)));
  std::mt19937 rng(seed);
  for (int i = 0; i < 150; ++i) {
    std::vector<char> b = bytes;
    for (int k = 0; k < 4; ++k) b[rng() % b.size()] ^= char(1 + rng() % 255);
    try_load(b);
  }
}

TEST(Model, DamagedFilesNeverCrash) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  const char* losses[1] = {"mse"};
  ok(kb_model_compile(m.m, "adam", losses, 1, nullptr, 0, nullptr), "compile");
  std::string good = temp_path("good.h5"), bad = temp_path("bad.h5");
  ok(kb_model_save(m.m, good.c_str(), 1), "save");
  // A file that cannot be written is an I/O failure, one that does not exist not found.
  expect_fails(kb_model_save(m.m, "/nonexistent/folder/m.h5", 1), KB_ERROR_IO,
               "/nonexistent/folder/m.h5: cannot be created");
  expect_fails(kb_model_load_weights(m.m, "/nonexistent/w.h5", 0), KB_ERROR_NOT_FOUND,
               "no such file");
  std::vector<char> bytes = read_file(good);
  ASSERT_GT(bytes.size(), 1000u);
  auto x = kbt::constant_f32({1, 2, 3}, {1, 3});
  load_damaged_copies(bytes, bad, x.get(), 7);
  kb_model* again = nullptr;
  ok(kb_model_load(good.c_str(), 1, &again), "load the intact file");
  kb_model_release(again);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

// Keras 3's archive (a committed fixture) cut short and with bytes flipped.
TEST(Model, DamagedKerasArchivesNeverCrash) {
  std::vector<char> bytes =
      read_file(std::string(KB_SOURCE_DIR) + "/tests/model_files/keras3/mlp.keras");
  ASSERT_GT(bytes.size(), 1000u);
  std::string path = temp_path("bad.keras");
  auto x = kbt::constant_f32(std::vector<float>(8, 0.5f), {1, 8});
  write_file(path, bytes);
  kb_model* intact = nullptr;
  ok(kb_model_load(path.c_str(), 1, &intact), "load the intact archive");
  kb_model_release(intact);
  load_damaged_copies(bytes, path, x.get(), 11);
  std::remove(path.c_str());
}

}  // namespace

namespace {

// A custom "Scale" layer: x * w, w of the input's last dim (ones at first); "Broken" fails.
kb_status scale_layer(void* user, kb_layer* layer, const char* config, kb_tensor* const* inputs,
                      size_t n, kb_tensor** outputs, size_t capacity, size_t* count) {
  ++*static_cast<int*>(user);
  if (n != 1 || capacity < 1) return KB_ERROR_INVALID_ARGUMENT;
  if (std::string(config).find("\"broken\":true") != std::string::npos) {  // compact JSON
    kb_set_error(KB_ERROR_NOT_IMPLEMENTED, "Scale: broken on purpose");
    return KB_ERROR_NOT_IMPLEMENTED;
  }
  int64_t dims[4] = {0, 0, 0, 0};
  int64_t rank = 0;
  kb_status s = kb_int_shape(inputs[0], dims, 4, &rank);
  if (s != KB_OK) return s;
  int64_t shape[1] = {dims[rank - 1]};
  kb_tensor* w = nullptr;
  s = kb_model_layer_weight(layer, "scale", shape, 1, "ones", 1, &w);
  if (s != KB_OK) return s;
  s = kb_multiply(inputs[0], w, &outputs[0]);
  kb_tensor_release(w);
  *count = 1;
  return s;
}

const char* kScaled =
    R"({"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Dense",)"
    R"( "config": {"name": "d", "units": 2, "batch_input_shape": [null, 3]}},)"
    R"( {"class_name": "Scale", "config": {"name": "scale_1"}}]}})";

TEST(Model, CustomLayerBuildsTrainsAndSaves) {
  int calls = 0;
  ok(kb_model_register_layer("Scale", scale_layer, &calls), "register");
  expect_fails(kb_model_register_layer("Dense", scale_layer, &calls), KB_ERROR_INVALID_ARGUMENT,
               "built-in");
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kScaled, &raw), "from_json");
  Model m(raw);
  EXPECT_EQ(calls, 1);
  set_dense(m.m);
  kb_tensor_list* weights = nullptr;
  ok(kb_model_layer_get_weights(m.m, 1, &weights), "get_weights");
  kbt::List wl(weights);
  EXPECT_EQ(kbt::out_f32(wl, 0), (std::vector<float>{1, 1}));  // the ones it asked for
  auto x = kbt::constant_f32({1, 0, 2}, {1, 3});
  EXPECT_EQ(predict(m.m, x), (std::vector<float>{11.5f, 13}));
  const char* losses[1] = {"mse"};
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, nullptr), "compile");
  auto y = kbt::constant_f32({10, 10}, {1, 2});
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y.get()};
  kb_tensor* loss = nullptr;
  ok(kb_model_train_on_batch(m.m, xs, 1, ys, 1, &loss), "train");
  kb_tensor_release(loss);
  kb_tensor_list* after = nullptr;
  ok(kb_model_layer_get_weights(m.m, 1, &after), "get_weights");
  kbt::List al(after);
  EXPECT_LT(kbt::out_f32(al, 0)[0], 1.0f);  // trained: the output was too large
  std::string path = temp_path("custom.h5");
  ok(kb_model_save(m.m, path.c_str(), 1), "save");
  kb_model* again = nullptr;
  ok(kb_model_load(path.c_str(), 1, &again), "load");
  Model loaded(again);
  EXPECT_EQ(predict(loaded.m, x), predict(m.m, x));
  std::remove(path.c_str());

  std::string broken = kScaled;
  broken.replace(broken.find("\"name\": \"scale_1\""), 17,
                 "\"name\": \"scale_1\", \"broken\": true");
  kb_model* bad = nullptr;
  expect_fails(kb_model_from_json(broken.c_str(), &bad), KB_ERROR_NOT_IMPLEMENTED,
               "layer 'scale_1' (Scale): Scale: broken on purpose");
  EXPECT_EQ(bad, nullptr);
  kb_tensor* w = nullptr;
  int64_t shape[1] = {2};
  expect_fails(kb_model_layer_weight(nullptr, "w", shape, 1, "ones", 1, &w),
               KB_ERROR_INVALID_ARGUMENT, "layer is NULL");
}

}  // namespace

namespace {

// The bridge: a term added to the loss, the training graph as tensors, a function of one's own.
TEST(Model, TrainingGraphAsTensors) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  set_dense(m.m);
  kb_tensor_list* weights = nullptr;
  ok(kb_model_weights(m.m, &weights), "weights");
  kbt::List wl(weights);
  kbt::Tensor kernel = kbt::at(wl, 0);
  // 0.01 * sum(kernel^2) = 0.01 * 91
  kbt::Tensor sq = kbt::un(kb_square, kernel.get());
  kbt::Tensor total = kbt::make([&](kb_tensor** o) { return kb_sum(sq.get(), nullptr, 0, 0, o); });
  kbt::Tensor term = kbt::bin(kb_multiply, total.get(), kbt::scalar_f32(0.01f).get());
  ok(kb_model_add_loss(m.m, term.get()), "add_loss");
  const char* losses[1] = {"mse"};
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, nullptr), "compile");
  auto x = kbt::constant_f32({1, 0, 2, -1, 1, 0}, {2, 3});
  auto y = kbt::constant_f32({11, 13, 2.5f, 0}, {2, 2});
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y.get()};
  kb_tensor* scores = nullptr;
  ok(kb_model_test_on_batch(m.m, xs, 1, ys, 1, &scores), "test_on_batch");
  kbt::Tensor scores_t = kbt::Tensor::adopt(scores);
  EXPECT_NEAR(kbt::values<double>(scores)[0], 0.3125 + 0.91, 1e-5);

  // The same loss through a function compiled here from the model's tensors.
  kb_tensor_list *inputs = nullptr, *targets = nullptr, *sw = nullptr;
  ok(kb_model_inputs(m.m, &inputs), "inputs");
  ok(kb_model_targets(m.m, &targets), "targets");
  ok(kb_model_sample_weights(m.m, &sw), "sample_weights");
  kbt::List il(inputs), tl(targets), sl(sw);
  kb_tensor* loss = nullptr;
  ok(kb_model_total_loss(m.m, &loss), "total_loss");
  kbt::Tensor loss_t = kbt::Tensor::adopt(loss);
  kbt::Tensor ins[3] = {kbt::at(il, 0), kbt::at(tl, 0), kbt::at(sl, 0)};
  kb_tensor* in_handles[3] = {ins[0].get(), ins[1].get(), ins[2].get()};
  kb_compiled_function* f = nullptr;
  ok(kb_function(in_handles, 3, &loss, 1, nullptr, 0, &f), "function");
  kbt::Function fn = kbt::Function::adopt(f);
  auto w = kbt::constant_f32({1, 1}, {2});
  kbt::List out = kbt::call(fn, {x.get(), y.get(), w.get()});
  EXPECT_NEAR(kbt::out_f32(out, 0)[0], 0.3125f + 0.91f, 1e-5);
  kb_tensor_list* updates = nullptr;
  ok(kb_model_updates(m.m, &updates), "updates");
  kbt::List ul(updates);
  // SGD: iterations, then a moment and the weight for the kernel and the bias
  EXPECT_EQ(kb_tensor_list_size(updates), 5u);
  expect_fails(kb_model_add_loss(m.m, x.get()), KB_ERROR_INVALID_ARGUMENT, "scalar");
}

// Keras' count_params: every weight's values (a Dense 3 -> 2: 3 x 2 kernel and 2 biases).
TEST(Model, CountParams) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  int64_t n = 0;
  ok(kb_model_count_params(m.m, &n), "count_params");
  EXPECT_EQ(n, 8);
  expect_fails(kb_model_count_params(nullptr, &n), KB_ERROR_INVALID_ARGUMENT, "model_count_params");
  expect_fails(kb_model_count_params(m.m, nullptr), KB_ERROR_INVALID_ARGUMENT, "output pointer");
}

// compile's and fit's options_json take the keys of their sets in api/kbackend.toml: anything
// else is refused before training starts, naming the key and the keys the set knows.
TEST(Model, OptionsOutsideTheirSetAreRefused) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  const char* losses[1] = {"mse"};
  expect_fails(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, R"({"loss_weight": [1]})"),
               KB_ERROR_INVALID_ARGUMENT,
               "model_compile: options_json: unknown key 'loss_weight' (did you mean "
               "'loss_weights'?); the compile options are: optimizer, loss_weights");
  expect_fails(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, R"({"loss_weights": [1, "a"]})"),
               KB_ERROR_INVALID_ARGUMENT, "'loss_weights' must be a list of numbers, not a list");
  expect_fails(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, R"({"optimizer": 0.1})"),
               KB_ERROR_INVALID_ARGUMENT, "'optimizer' must be an object, not a number");
  auto x = kbt::constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto y = kbt::constant_f32({1, 2, 3, 4}, {2, 2});
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y.get()};
  const char* history = nullptr;
  // A refused compile leaves the model uncompiled.
  expect_fails(kb_model_fit(m.m, xs, 1, ys, 1, 2, 1, 0, nullptr, nullptr, nullptr, &history),
               KB_ERROR_INVALID_ARGUMENT, "not compiled");
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0,
                      R"({"optimizer": {"lr": 0.01}, "loss_weights": [2]})"),
     "compile");
  auto fit = [&](const char* options) {
    return kb_model_fit(m.m, xs, 1, ys, 1, 2, 1, 0, options, nullptr, nullptr, &history);
  };
  expect_fails(fit(R"({"shufle": true})"), KB_ERROR_INVALID_ARGUMENT,
               "model_fit: options_json: unknown key 'shufle' (did you mean 'shuffle'?); the fit "
               "options are: shuffle, seed, validation_split, initial_epoch, class_weight, "
               "callbacks");
  expect_fails(fit(R"({"callbacks": {}})"), KB_ERROR_INVALID_ARGUMENT,
               "option 'callbacks' must be a list of {\"class_name\", \"config\"} objects");
  expect_fails(fit(R"({"callbacks": [{"class_name": "History"}]})"), KB_ERROR_INVALID_ARGUMENT,
               "callbacks[0]: no callback class 'History' (fit runs EarlyStopping, "
               "ModelCheckpoint, ReduceLROnPlateau, CSVLogger, BackupAndRestore, TerminateOnNaN, "
               "TensorBoard)");
  expect_fails(fit(R"({"callbacks": [{"class_name": "EarlyStopping", "config": {"mode": 1}}]})"),
               KB_ERROR_INVALID_ARGUMENT,
               "callbacks[0] (EarlyStopping): option 'mode' must be a string, not an integer");
  expect_fails(fit(R"({"shuffle": "yes"})"), KB_ERROR_INVALID_ARGUMENT,
               "option 'shuffle' must be a bool, not a string");
  expect_fails(fit(R"({"seed": 1.5})"), KB_ERROR_INVALID_ARGUMENT,
               "option 'seed' must be an integer, not a number");
  expect_fails(fit(R"({"validation_split": true})"), KB_ERROR_INVALID_ARGUMENT,
               "option 'validation_split' must be a number, not a bool");
  expect_fails(fit(R"({"class_weight": {"a": 1}})"), KB_ERROR_INVALID_ARGUMENT,
               "option 'class_weight' must be an object of {class index: number}");
  expect_fails(fit("[1]"), KB_ERROR_INVALID_ARGUMENT, "the fit options are not a JSON object");
  kb_tensor* none[1] = {nullptr};
  expect_fails(kb_model_fit_weighted(m.m, xs, 1, ys, 1, none, 0, none, 0, none, 0, none, 0, 2, 1, 0,
                                     R"({"shufle": true})", nullptr, nullptr, &history),
               KB_ERROR_INVALID_ARGUMENT, "model_fit_weighted: options_json: unknown key 'shufle'");
  // Null is an absent key; an integer may be written as a float.
  ok(fit(R"({"shuffle": null, "seed": 3.0, "class_weight": {"0": 1, "-1": 2.5}})"), "fit");
  ok(fit(R"({"class_weight": null, "initial_epoch": null})"), "fit with nulls");
  EXPECT_NE(std::string(history).find("\"loss\""), std::string::npos);
}

// Arrays that do not fit the model fail before a step runs, as Keras' standardize_input_data
// does: naming the input or output and both shapes, not an internal op.
TEST(Model, ArraysOfTheWrongShapeNameTheLayer) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  const char* losses[1] = {"mse"};
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, nullptr), "compile");
  auto x = kbt::constant_f32(std::vector<float>(12, 1), {4, 3});
  auto x4 = kbt::constant_f32(std::vector<float>(16, 1), {4, 4});
  auto y3 = kbt::constant_f32(std::vector<float>(12, 1), {4, 3});
  auto y = kbt::constant_f32(std::vector<float>(8, 1), {4, 2});
  auto y3d = kbt::constant_f32(std::vector<float>(8, 1), {4, 2, 1});
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y3.get()};
  const char* history = nullptr;
  expect_fails(kb_model_fit(m.m, xs, 1, ys, 1, 2, 1, 0, nullptr, nullptr, nullptr, &history),
               KB_ERROR_SHAPE,
               "fit: error when checking target: expected 'd' to have shape (None, 2) but got an "
               "array of shape (4, 3)");
  ys[0] = y3d.get();
  kb_tensor* scores = nullptr;
  expect_fails(kb_model_evaluate(m.m, xs, 1, ys, 1, 2, 0, &scores), KB_ERROR_SHAPE,
               "evaluate: error when checking target: expected 'd' to have 2 dimensions (None, 2), "
               "but got an array of shape (4, 2, 1)");
  ys[0] = y.get();
  xs[0] = x4.get();
  expect_fails(kb_model_train_on_batch(m.m, xs, 1, ys, 1, &scores), KB_ERROR_SHAPE,
               "train_on_batch: error when checking input: expected ");
  expect_fails(kb_model_train_on_batch(m.m, xs, 1, ys, 1, &scores), KB_ERROR_SHAPE,
               "to have shape (None, 3) but got an array of shape (4, 4)");
  kb_tensor_list* preds = nullptr;
  expect_fails(kb_model_predict(m.m, xs, 1, 2, 0, &preds), KB_ERROR_SHAPE,
               "predict: error when checking input");
  xs[0] = x.get();
  ok(kb_model_fit(m.m, xs, 1, ys, 1, 2, 1, 0, nullptr, nullptr, nullptr, &history), "fit");

  // sparse_categorical_crossentropy takes one class index per sample, not the output's width.
  losses[0] = "sparse_categorical_crossentropy";
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, nullptr), "compile");
  auto classes = kbt::constant_f32({0, 1, 1, 0}, {4, 1});
  ys[0] = classes.get();
  ok(kb_model_train_on_batch(m.m, xs, 1, ys, 1, &scores), "sparse targets");
  kb_tensor_release(scores);
  ys[0] = y.get();
  expect_fails(kb_model_train_on_batch(m.m, xs, 1, ys, 1, &scores), KB_ERROR_SHAPE,
               "expected 'd' to have shape (None, 1) but got an array of shape (4, 2)");
}

}  // namespace

// Keras 3's callbacks from C: the rate halves on each epoch without an improvement of 100, and
// training stops once patience runs out (what Keras 3 decides is checked in
// bindings/python/tests/test_fit_callbacks.py).
TEST(Model, KerasCallbacksRunInFit) {
  kb_model* raw = nullptr;
  ok(kb_model_from_json(kDense, &raw), "from_json");
  Model m(raw);
  const char* losses[1] = {"mse"};
  ok(kb_model_compile(m.m, "sgd", losses, 1, nullptr, 0, R"({"optimizer": {"lr": 0.01}})"),
     "compile");
  auto x = kbt::constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto y = kbt::constant_f32({1, 2, 3, 4}, {2, 2});
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y.get()};
  const char* history = nullptr;
  ok(kb_model_fit(m.m, xs, 1, ys, 1, 2, 10, 0,
                  R"({"callbacks": [
                    {"class_name": "ReduceLROnPlateau",
                     "config": {"monitor": "loss", "patience": 1, "factor": 0.5, "min_delta": 100}},
                    {"class_name": "EarlyStopping",
                     "config": {"monitor": "loss", "patience": 3, "min_delta": 100}}]})",
                  nullptr, nullptr, &history),
     "fit");
  std::string h = history;
  // Four epochs, each logging the rate it trained with (float32 values, printed as doubles).
  EXPECT_NE(h.find("\"learning_rate\":[0.009999999776482582,0.009999999776482582,"
                   "0.004999999888241291,0.0024999999441206455]"),
            std::string::npos)
      << h;
}
