// Data-parallel fit of a Keras model (kb_model_fit with {"distributed": true}): n processes with
// batch_size b each end with the weights, optimizer state and history of one process fitting the
// same model with batch_size n*b (shuffled alike, a short last batch split unevenly, and one
// where a process has no row), bitwise equal on every process; the processes start from
// different weights and must take rank 0's. A stop decided by one process stops all.
#include <cmath>
#include <random>
#include <string>

#include "capi/helpers.h"

using namespace kbt;

namespace {

constexpr int64_t kIn = 5, kClasses = 3, kBatch = 4;

const char* kMlp =
    R"({"class_name": "Sequential", "config": {"name": "mlp", "layers": [)"
    R"({"class_name": "Dense", "config": {"name": "hidden", "units": 7, "activation": "tanh",)"
    R"( "batch_input_shape": [null, 5]}},)"
    R"({"class_name": "Dense", "config": {"name": "out", "units": 3, "activation": "softmax"}}]}})";

const char* kNormalized =
    R"({"class_name": "Sequential", "config": {"name": "bn", "layers": [)"
    R"({"class_name": "Dense", "config": {"name": "hidden", "units": 6, "batch_input_shape": [null, 5]}},)"
    R"({"class_name": "BatchNormalization", "config": {"name": "norm"}},)"
    R"({"class_name": "Dense", "config": {"name": "out", "units": 3, "activation": "softmax"}}]}})";

struct Model {
  kb_model* m = nullptr;
  ~Model() { kb_model_release(m); }
};

int32_t rank_of() {
  int32_t r = 0;
  ok(kb_dist_rank(&r));
  return r;
}

int32_t size_of() {
  int32_t n = 0;
  ok(kb_dist_size(&n));
  return n;
}

// A model made under `seed`, compiled with Adam and clipnorm (the clipping applies to the
// global batch's gradient).
void make_model(Model& model, const char* json, int64_t seed) {
  ok(kb_set_random_seed(seed), "set_random_seed");
  ok(kb_model_from_json(json, &model.m), "from_json");
  const char* losses[1] = {"categorical_crossentropy"};
  const char* metrics[1] = {"accuracy"};
  ok(kb_model_compile(model.m, "adam", losses, 1, metrics, 1,
                      R"({"optimizer": {"lr": 0.05, "clipnorm": 1.0}})"),
     "compile");
}

// The same samples on every process: x in [-1, 1), one-hot labels.
void samples(int64_t n, Tensor& x, Tensor& y) {
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> xs(size_t(n * kIn)), ys(size_t(n * kClasses), 0.f);
  for (auto& v : xs) v = u(gen);
  for (int64_t i = 0; i < n; ++i) ys[size_t(i * kClasses + gen() % kClasses)] = 1.f;
  x = constant_f32(xs, {n, kIn});
  y = constant_f32(ys, {n, kClasses});
}

std::string fit(Model& model, const Tensor& x, const Tensor& y, int64_t batch, int64_t epochs,
                const std::string& options, kb_model_callback callback = nullptr,
                void* user = nullptr) {
  kb_tensor* xs[1] = {x.get()};
  kb_tensor* ys[1] = {y.get()};
  const char* history = nullptr;
  ok(kb_model_fit(model.m, xs, 1, ys, 1, batch, epochs, 0, options.c_str(), callback, user,
                  &history),
     "fit");
  return history;
}

// Every weight of the model (BatchNormalization's moving statistics too).
std::vector<std::vector<float>> state_of(Model& model) {
  std::vector<std::vector<float>> out;
  kb_tensor_list* raw = nullptr;
  ok(kb_model_weights(model.m, &raw), "weights");
  List list(raw);
  for (size_t i = 0; i < kb_tensor_list_size(raw); ++i) out.push_back(values_f32(at(list, i)));
  return out;
}

// Whether this process' values are rank 0's, bit for bit.
void expect_same_as_rank0(const std::vector<std::vector<float>>& state) {
  for (size_t i = 0; i < state.size(); ++i) {
    Tensor mine = constant_f32(state[i], {int64_t(state[i].size())});
    Tensor root = make([&](kb_tensor** o) { return kb_broadcast(mine.get(), 0, o); });
    auto theirs = values_f32(root);
    EXPECT_EQ(std::memcmp(theirs.data(), state[i].data(), state[i].size() * sizeof(float)), 0)
        << "variable " << i << " differs from rank 0's";
  }
}

void expect_close(const std::vector<std::vector<float>>& got,
                  const std::vector<std::vector<float>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << "variable " << i;
    for (size_t k = 0; k < got[i].size(); ++k)
      EXPECT_NEAR(got[i][k], want[i][k], 2e-5f * std::max(1.f, std::fabs(want[i][k])))
          << "variable " << i << " entry " << k;
  }
}

// The numbers of a history, in order of appearance ("loss": [..], "val_loss": [..]).
std::vector<double> numbers_of(const std::string& history) {
  std::vector<double> out;
  for (size_t i = 0; i < history.size();) {
    char c = history[i];
    if ((c >= '0' && c <= '9') || c == '-') {
      size_t used = 0;
      out.push_back(std::stod(history.substr(i), &used));
      i += used;
    } else {
      ++i;
    }
  }
  return out;
}

void expect_equivalent(int64_t samples_count, const std::string& extra) {
  int32_t n = size_of();
  Tensor x, y;
  samples(samples_count, x, y);
  std::string options = R"({"distributed": true, "seed": 3)" + extra + "}";
  Model shared, alone;
  make_model(shared, kMlp, 100 + rank_of());  // other weights on every process at first
  make_model(alone, kMlp, 100);               // rank 0's
  std::string h_shared = fit(shared, x, y, kBatch, 3, options);
  std::string h_alone = fit(alone, x, y, kBatch * n, 3, R"({"seed": 3)" + extra + "}");
  expect_close(state_of(shared), state_of(alone));
  expect_same_as_rank0(state_of(shared));
  auto a = numbers_of(h_shared), b = numbers_of(h_alone);
  ASSERT_EQ(a.size(), b.size()) << h_shared << " against " << h_alone;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0, std::fabs(b[i])))
        << h_shared << " against " << h_alone;
}

TEST(DistributedFit, EqualsOneProcessWithTheGlobalBatch) {
  // 29 training rows: a last global batch of 5 (of 8 on two processes), split 2 and 3.
  expect_equivalent(36, R"(, "validation_split": 0.2)");
}

TEST(DistributedFit, AShortLastBatchLeavesAProcessWithoutRows) {
  // 2 * 8 + 1 rows: the last global batch is one row, which the last process takes alone.
  expect_equivalent(2 * kBatch * size_of() + 1, R"(, "shuffle": false)");
}

TEST(DistributedFit, MovingStatisticsAreAveragedAlike) {
  Tensor x, y;
  samples(40, x, y);
  Model model;
  make_model(model, kNormalized, 7 + rank_of());
  fit(model, x, y, kBatch, 2, R"({"distributed": true})");
  expect_same_as_rank0(state_of(model));
}

int32_t stop_on_last_rank(void* user, int64_t epoch, int64_t batch, const char*) {
  auto* batches = static_cast<int64_t*>(user);
  if (batch >= 0) ++*batches;
  return epoch == 0 && batch == 1 && rank_of() == size_of() - 1 ? 1 : 0;
}

TEST(DistributedFit, AStopOneProcessDecidesStopsEveryProcess) {
  Tensor x, y;
  samples(64, x, y);
  Model model;
  make_model(model, kMlp, 11);
  int64_t batches = 0;
  std::string h =
      fit(model, x, y, kBatch, 3, R"({"distributed": true})", stop_on_last_rank, &batches);
  EXPECT_EQ(batches, 2) << h;
  EXPECT_EQ(numbers_of(h).size(), 2u) << h;  // one epoch: its loss and accuracy
  expect_same_as_rank0(state_of(model));
}

TEST(DistributedFit, ThenOneProcessAloneAgain) {
  // A model trained across the processes trains alone afterwards (its step made again) from the
  // optimizer state it reached: as one that took both fits alone with the global batch.
  int32_t n = size_of();
  Tensor x, y;
  samples(24, x, y);
  Model both, alone;
  make_model(both, kMlp, 5);
  make_model(alone, kMlp, 5);
  fit(both, x, y, kBatch, 1, R"({"distributed": true})");
  fit(both, x, y, kBatch * n, 2, R"({"shuffle": false})");
  fit(alone, x, y, kBatch * n, 1, "{}");
  fit(alone, x, y, kBatch * n, 2, R"({"shuffle": false})");
  expect_close(state_of(both), state_of(alone));
}

}  // namespace
