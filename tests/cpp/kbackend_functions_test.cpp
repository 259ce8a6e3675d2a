// include/kbackend_functions.hpp (generated from the API description): the functions it adds to
// namespace kbackend against known values, their Keras defaults, tuples of results, and bad
// input as kbackend::Error; and the model bridge of kbackend_models.hpp.
#include <kbackend_models.hpp>

#include "hpp_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace K = kbackend;
using K::DType;
using K::Tensor;

namespace {

using kb_test::error_of;
using kb_test::expect_near;
using kb_test::values;

TEST(GeneratedFunctions, CtcDecodeGivesPathsAndTheirLogProbability) {
  // Best path: classes 0, 0, 1 (2 is the blank): repeats merged gives [0, 1].
  Tensor probs = Tensor::from(
      std::vector<float>{0.7f, 0.2f, 0.1f, 0.6f, 0.3f, 0.1f, 0.1f, 0.8f, 0.1f}, {1, 3, 3});
  Tensor lengths = Tensor::from(std::vector<int32_t>{3}, {1});
  auto [decoded, log_prob] = K::ctc_decode(probs, lengths, true, 100, 1);
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  double eps = K::epsilon();
  float want = float(-(std::log(0.7 + eps) + std::log(0.6 + eps) + std::log(0.8 + eps)));
  expect_near(values(log_prob), {want});
}

TEST(GeneratedFunctions, CtcBatchCostIsTheNegativeLogLikelihood) {
  // One step, label [0]: the only path is class 0, cost -log(0.6).
  Tensor y_pred = Tensor::from(std::vector<float>{0.6f, 0.4f}, {1, 1, 2});
  Tensor labels = Tensor::from(std::vector<int32_t>{0}, {1, 1});
  Tensor one = Tensor::from(std::vector<int32_t>{1}, {1, 1});
  expect_near(values(K::ctc_batch_cost(labels, y_pred, one, one)), {float(-std::log(0.6))}, 1e-4f);
}

TEST(GeneratedFunctions, SwitchAndLearningPhaseSelection) {
  Tensor x = Tensor::from(std::vector<float>{1, 2}, {2});
  Tensor alt = Tensor::from(std::vector<float>{5, 6}, {2});
  Tensor condition = K::cast(Tensor::from(std::vector<int32_t>{1, 0}, {2}), DType::bool_);
  expect_near(values(K::switch_(condition, x, alt)), {1, 6});
  expect_near(values(K::in_train_phase(x, alt, std::nullopt, K::Training::true_)), {1, 2});
  expect_near(values(K::in_test_phase(x, alt, std::nullopt, K::Training::true_)), {5, 6});
  expect_near(values(K::in_train_phase(x, alt, std::nullopt, K::Training::false_)), {5, 6});
}

TEST(HandWrittenControl, BranchesAsCallables) {
  Tensor x = Tensor::from(std::vector<float>{1, 2}, {2});
  Tensor alt = Tensor::from(std::vector<float>{5, 6}, {2});
  int x_calls = 0, alt_calls = 0;
  auto x_fn = [&] {
    ++x_calls;
    return x * 2.0;
  };
  auto alt_fn = [&] {
    ++alt_calls;
    return alt;
  };
  // A fixed phase calls only the chosen branch.
  expect_near(values(K::in_train_phase(x_fn, alt_fn, std::nullopt, K::Training::true_)), {2, 4});
  EXPECT_EQ(x_calls, 1);
  EXPECT_EQ(alt_calls, 0);
  expect_near(values(K::in_test_phase(x_fn, alt_fn, std::nullopt, K::Training::true_)), {5, 6});
  // A scalar condition known when the function runs: both branches built, one computed.
  Tensor c = K::placeholder({}, DType::bool_, "c");
  Tensor chosen = K::switch_(c, x_fn, alt_fn);
  K::Function f({c}, {chosen});
  expect_near(values(f({Tensor::scalar(true)})[0]), {2, 4});
  expect_near(values(f({Tensor::scalar(false)})[0]), {5, 6});
  // What a branch throws comes out unchanged; an empty branch is an error.
  EXPECT_THROW(K::switch_(
                   c, [&]() -> Tensor { throw std::out_of_range("branch"); }, alt_fn),
               std::out_of_range);
  EXPECT_THROW(K::switch_(c, K::BranchFunction(), alt_fn), K::Error);
}

TEST(HandWrittenControl, SparseFromCsr) {
  // [[1, 0, 2], [0, 0, 3]]
  Tensor s = K::sparse_from_csr<float>({0, 2, 3}, {0, 2, 2}, {1, 2, 3}, 2, 3);
  EXPECT_TRUE(K::is_sparse(s));
  expect_near(values(K::to_dense(s)), {1, 0, 2, 0, 0, 3});
  EXPECT_THROW(K::sparse_from_csr<float>({0, 2}, {0, 2, 2}, {1, 2, 3}, 2, 3), K::Error);
  EXPECT_THROW(K::sparse_from_csr<float>({0, 2, 3}, {0, 2, 9}, {1, 2, 3}, 2, 3), K::Error);
}

TEST(GeneratedFunctions, ShapesFromTensors) {
  Tensor x = Tensor::from(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor shape = Tensor::from(std::vector<int64_t>{3, 2}, {2});
  Tensor r = K::reshape_to(x, shape);
  EXPECT_EQ(r.eval().shape(), (std::vector<int64_t>{3, 2}));
  Tensor start = Tensor::from(std::vector<int64_t>{0, 1}, {2});
  Tensor size = Tensor::from(std::vector<int64_t>{2, 2}, {2});
  expect_near(values(K::slice_to(x, start, size)), {2, 3, 5, 6});
  Tensor n = Tensor::from(std::vector<int64_t>{1, 2}, {2});
  EXPECT_EQ(K::tile_to(x, n).eval().shape(), (std::vector<int64_t>{2, 6}));
  Tensor classes = Tensor::from(std::vector<int32_t>{3}, {});
  Tensor indices = Tensor::from(std::vector<int32_t>{2, 0}, {2});
  expect_near(values(K::one_hot_to(indices, classes)), {0, 0, 1, 1, 0, 0});
  Tensor a =
      K::arange_to(Tensor::from(std::vector<float>{1}, {}), Tensor::from(std::vector<float>{4}, {}),
                   Tensor::from(std::vector<float>{1}, {}), DType::int32);
  EXPECT_EQ(a.eval().to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
}

TEST(GeneratedFunctions, RandomLikeIsSeededAndShapedLikeItsInput) {
  Tensor like = K::zeros({4, 5});
  Tensor a = K::random_uniform_like(like, 0.0, 1.0, DType::none, 3);
  Tensor b = K::random_uniform_like(like, 0.0, 1.0, DType::none, 3);
  std::vector<float> va = values(a.eval()), vb = values(b.eval());
  EXPECT_EQ(va, vb);
  ASSERT_EQ(va.size(), 20u);
  for (float v : va) EXPECT_TRUE(v >= 0.f && v < 1.f) << v;
  std::vector<float> bits = values(K::random_binomial_like(like, 1.0, DType::none, 1).eval());
  for (float v : bits) EXPECT_EQ(v, 1.f);
}

TEST(GeneratedFunctions, LocalConvolutionWithUnsharedWeights) {
  // local_conv1d: 3 steps, kernel 2, stride 1 -> 2 outputs, each its own 2x1 kernel.
  Tensor x = Tensor::from(std::vector<float>{1, 2, 3}, {1, 3, 1});
  Tensor kernel = Tensor::from(std::vector<float>{1, 1, 1, -1}, {2, 2, 1});
  expect_near(values(K::local_conv1d(x, kernel, {2}, {1})), {3, -1});
}

TEST(GeneratedFunctions, SparsePartsAndEnumsOfStrings) {
  Tensor indices = Tensor::from(std::vector<int64_t>{0, 1, 1, 0}, {2, 2});
  Tensor vals = Tensor::from(std::vector<float>{5, 7}, {2});
  Tensor s = K::sparse_tensor(indices, vals, {2, 2});
  auto [idx, v, shape] = K::sparse_parts(s);
  expect_near(values(v.eval()), {5, 7});
  EXPECT_EQ(shape.eval().to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
  expect_near(values(K::to_dense(s).eval()), {0, 5, 7, 0});
  EXPECT_EQ(K::parse_reduce_op("average"), K::Reduce::average);
  K::Error e = error_of([] { K::parse_reduce_op(std::string("sum\0x", 5)); });
  EXPECT_EQ(e.status(), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("NUL"), std::string::npos) << e.what();
  EXPECT_EQ(error_of([] { K::parse_reduce_op("median"); }).status(), KB_ERROR_INVALID_ARGUMENT);
}

TEST(GeneratedFunctions, ThreadsAndOneProcess) {
  int32_t before = K::num_threads();
  K::set_num_threads(1);
  EXPECT_EQ(K::num_threads(), 1);
  K::set_num_threads(before);
  EXPECT_FALSE(K::dist::initialized());
  EXPECT_EQ(K::dist::rank(), 0);
  EXPECT_EQ(K::dist::size(), 1);
}

const char* const kDense =
    R"({"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Dense",
        "config": {"name": "d", "units": 2, "activation": "linear",
        "batch_input_shape": [null, 3]}}]}})";

TEST(GeneratedFunctions, ModelBridgeGivesTheLossAsAGraphValue) {
  K::Model model = K::Model::from_json(kDense);
  model.set_layer_weights(0, {Tensor::from(std::vector<float>{1, 0, 0, 1, 1, 1}, {3, 2}),
                              Tensor::from(std::vector<float>{0.5f, -0.5f}, {2})});
  model.compile("sgd", {"mse"}, {});
  Tensor loss = model.total_loss();
  std::vector<Tensor> inputs = model.inputs(), targets = model.targets();
  std::vector<Tensor> weights = model.sample_weights();
  ASSERT_EQ(inputs.size(), 1u);
  ASSERT_EQ(targets.size(), 1u);
  ASSERT_EQ(weights.size(), 1u);
  EXPECT_FALSE(model.updates().empty());
  // prediction (4.5, 4.5) against target (0, 0): mse 20.25
  K::Function f({inputs[0], targets[0], weights[0]}, {loss});
  std::vector<Tensor> out =
      f({Tensor::from(std::vector<float>{1, 2, 3}, {1, 3}),
         Tensor::from(std::vector<float>{0, 0}, {1, 2}), Tensor::from(std::vector<float>{1}, {1})});
  expect_near(values(out[0]), {20.25f}, 1e-4f);
  model.add_loss(K::sum(K::square(model.weights()[1])));
  model.reset_states();
}

}  // namespace
