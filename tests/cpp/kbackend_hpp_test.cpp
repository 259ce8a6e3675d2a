// include/kbackend.hpp: values in and out, operators, errors as exceptions, ownership, reductions
// with Keras' axis arguments, gradients, functions with updates, rnn / map_fn / foldl / foldr
// with lambdas (exceptions thrown inside come back out), scopes and configuration. Built as
// C++17 against the installed-style include directory only (no core headers).
#include <dlpack/dlpack.h>  // Debian's (libdlpack-dev): the unversioned struct's fields
#include <kbackend.hpp>

#include "hpp_test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace K = kbackend;
using K::DType;
using K::Tensor;

namespace {

using kb_test::error_of;
using kb_test::expect_near;
using kb_test::values;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Puts back process-wide state a test changes.
struct SessionGuard {
  ~SessionGuard() {
    kb_clear_session();
    kb_clear_error();
  }
};

}  // namespace

static_assert(!std::is_copy_constructible_v<K::Function>, "Function is move-only");
static_assert(std::is_nothrow_move_constructible_v<K::Function>);
static_assert(std::is_copy_constructible_v<Tensor>, "Tensor copies retain");
static_assert(std::is_nothrow_move_constructible_v<Tensor>);
static_assert(!std::is_copy_constructible_v<K::NameScope>);
static_assert(!std::is_constructible_v<Tensor, double>, "no implicit numbers-to-Tensor");

// ---- values -------------------------------------------------------------------------------

TEST(HppValues, RoundTripsEveryElementType) {
  EXPECT_EQ(Tensor::from({1.5f, -2.0f}, {2}).to_vector<float>(), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(Tensor::from({1.25, 3.0}).to_vector<double>(), (std::vector<double>{1.25, 3}));
  EXPECT_EQ(Tensor::from<int8_t>({-3, 4}).to_vector<int8_t>(), (std::vector<int8_t>{-3, 4}));
  EXPECT_EQ(Tensor::from<int16_t>({-300, 4}).to_vector<int16_t>(), (std::vector<int16_t>{-300, 4}));
  EXPECT_EQ(Tensor::from<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Tensor::from<int64_t>({int64_t(1) << 40}).to_vector<int64_t>(),
            (std::vector<int64_t>{int64_t(1) << 40}));
  EXPECT_EQ(Tensor::from<uint8_t>({0, 255}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(Tensor::from(std::vector<bool>{true, false, true}).to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Tensor::scalar(7.5).item<double>(), 7.5);
}

TEST(HppValues, ShapeDtypeNameId) {
  K::clear_session();  // names are unique in a session: these tests read them back
  Tensor c = Tensor::from<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(c.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c.ndim(), 2);
  EXPECT_EQ(c.dtype(), DType::float32);
  EXPECT_EQ(K::to_string(c.dtype()), "float32");

  Tensor p = K::placeholder({-1, 3}, DType::float64, "inputs");
  EXPECT_EQ(p.shape(), (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(K::int_shape(p), (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(p.dtype(), DType::float64);
  EXPECT_EQ(p.name(), "inputs");
  EXPECT_TRUE(K::is_placeholder(p));
  EXPECT_FALSE(K::is_placeholder(c));
  EXPECT_TRUE(K::is_tensor(p));

  Tensor unknown = K::placeholder_ndim(-1);
  EXPECT_FALSE(unknown.int_shape().has_value());
  EXPECT_EQ(unknown.ndim(), -1);
  EXPECT_EQ(error_of([&] { (void)unknown.shape(); }).status(), KB_ERROR_SHAPE);
  EXPECT_EQ(K::placeholder_ndim(3).shape(), (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(K::placeholder({}).shape(), (std::vector<int64_t>{}));  // a scalar
  EXPECT_EQ(K::placeholder({2}).dtype(), K::floatx());              // dtype none: floatx

  Tensor same = p;  // a copy names the same graph value
  EXPECT_EQ(same.id(), p.id());
  EXPECT_TRUE(same.same_as(p));
  EXPECT_NE(K::identity(p).id(), p.id());
}

TEST(HppValues, VariablesConstantsAndSetValue) {
  K::clear_session();  // names are unique in a session: this test reads one back
  Tensor v = K::variable({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2}, DType::none, "v");
  EXPECT_EQ(v.dtype(), K::floatx());  // Keras: dtype None is floatx
  EXPECT_EQ(v.name(), "v");
  expect_near(values(K::get_value(v)), {1, 2, 3, 4});
  K::set_value(v, {5.0f, 6.0f, 7.0f, 8.0f}, {2, 2});
  expect_near(values(v), {5, 6, 7, 8});
  K::set_value(v, Tensor::from({0.f, 0.f, 1.f, 1.f}, {2, 2}));
  expect_near(values(v), {0, 0, 1, 1});
  EXPECT_EQ(K::count_params(v), 4);
  EXPECT_EQ(K::get_variable_shape(v), (std::vector<int64_t>{2, 2}));

  Tensor vi = K::variable(std::vector<int32_t>{1, 2}, {2}, DType::int32);
  EXPECT_EQ(vi.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
  Tensor from_tensor = K::variable(K::ones({3}), DType::float64);
  EXPECT_EQ(from_tensor.to_vector<double>(), (std::vector<double>{1, 1, 1}));

  Tensor filled = K::constant(2.5, DType::float32, {2, 3});  // a scalar fills the shape
  EXPECT_EQ(filled.shape(), (std::vector<int64_t>{2, 3}));
  expect_near(values(filled), {2.5, 2.5, 2.5, 2.5, 2.5, 2.5});
  Tensor c = K::constant({1, 2, 3}, {3}, DType::float64);
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{1, 2, 3}));

  K::batch_set_value(
      {{v, Tensor::from({9.f, 9.f, 9.f, 9.f}, {2, 2})}, {vi, Tensor::from<int32_t>({7, 8})}});
  std::vector<Tensor> got = K::batch_get_value({v, vi});
  ASSERT_EQ(got.size(), 2u);
  expect_near(values(got[0]), {9, 9, 9, 9});
  EXPECT_EQ(got[1].to_vector<int32_t>(), (std::vector<int32_t>{7, 8}));
}

TEST(HppValues, DLPackBothWaysWithOwners) {
  Tensor c = Tensor::from({1.f, 2.f, 3.f, 4.f}, {2, 2});
  K::DLPackTensorUnversioned lent = c.to_dlpack_unversioned();
  ASSERT_NE(lent, nullptr);
  EXPECT_EQ(lent->dl_tensor.ndim, 2);
  const void* memory = lent->dl_tensor.data;
  EXPECT_EQ(static_cast<const float*>(memory)[3], 4.f);
  Tensor back = Tensor::from_dlpack(lent);  // taken: the owner let go
  EXPECT_EQ(lent, nullptr);
  expect_near(values(back), {1, 2, 3, 4});
  EXPECT_EQ(back.to_dlpack_unversioned()->dl_tensor.data, memory);  // no copy on the way

  K::DLPackTensor versioned = (c * 2.f).to_dlpack();
  Tensor doubled = Tensor::from_dlpack(versioned);
  expect_near(values(doubled), {2, 4, 6, 8});
  K::DLPackTensor dropped = c.to_dlpack(K::DLPackCopy::always);  // its deleter runs here

  K::DLPackTensorUnversioned on_gpu = c.to_dlpack_unversioned(K::DLPackCopy::always);
  on_gpu->dl_tensor.device = {kDLCUDA, 0};
  EXPECT_EQ(error_of([&] { Tensor::from_dlpack(on_gpu); }).status(), KB_ERROR_DEVICE);
  EXPECT_NE(on_gpu, nullptr);  // refused: still this program's, released by its owner
}

TEST(HppValues, CreationFunctions) {
  expect_near(values(K::zeros({2, 2}, DType::float32)), {0, 0, 0, 0});
  expect_near(values(K::ones({3}, DType::float32)), {1, 1, 1});
  expect_near(values(K::eye(2, DType::float32)), {1, 0, 0, 1});
  Tensor x = Tensor::from<int32_t>({1, 2, 3});
  EXPECT_EQ(K::zeros_like(x).dtype(), DType::int32);
  EXPECT_EQ(K::ones_like(x, DType::float64).to_vector<double>(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(K::arange(4).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(K::arange(1, 7, 2).to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 5}));
  Tensor u = K::random_uniform_variable({100}, -1, 1, DType::float32, "u", 7);
  for (float f : values(u)) {
    EXPECT_GE(f, -1.0f);
    EXPECT_LT(f, 1.0f);
  }
  Tensor n1 = K::random_normal_variable({5}, 0, 1, DType::float32, {}, 3);
  Tensor n2 = K::random_normal_variable({5}, 0, 1, DType::float32, {}, 3);
  EXPECT_EQ(values(n1), values(n2));  // same seed, same values
  Tensor fx = K::cast_to_floatx(std::vector<int32_t>{1, 2, 3});
  EXPECT_EQ(fx.dtype(), K::floatx());
  expect_near(values(fx), {1, 2, 3});
}

// ---- operators ------------------------------------------------------------------------------

TEST(HppOperators, ArithmeticWithTensorsAndScalars) {
  Tensor a = Tensor::from({1.f, 2.f, 3.f});
  Tensor b = Tensor::from({4.f, 5.f, 6.f});
  expect_near(values(a + b), {5, 7, 9});
  expect_near(values(b - a), {3, 3, 3});
  expect_near(values(a * b), {4, 10, 18});
  expect_near(values(b / a), {4, 2.5f, 2});
  expect_near(values(-a), {-1, -2, -3});
  expect_near(values(+a), {1, 2, 3});
  expect_near(values(a * 2), {2, 4, 6});
  expect_near(values(1.0 - a), {0, -1, -2});
  expect_near(values(6.0 / a), {6, 3, 2});
  expect_near(values((a + 1) * (b - 1) / 2.0), {3, 6, 10});
  Tensor c = a;
  c += b;
  c *= 2.0;
  expect_near(values(c), {10, 14, 18});
  expect_near(values(a), {1, 2, 3});  // a still names its own value
}

TEST(HppOperators, ScalarsTakeTheTensorsDtype) {
  Tensor i = Tensor::from<int32_t>({1, 2, 3});
  Tensor r = i * 2 + 1;
  EXPECT_EQ(r.dtype(), DType::int32);
  EXPECT_EQ(r.to_vector<int32_t>(), (std::vector<int32_t>{3, 5, 7}));
  Tensor d = Tensor::from({0.5, 1.5});
  EXPECT_EQ((d * 2).dtype(), DType::float64);
}

TEST(HppOperators, ComparisonsAndElementwise) {
  Tensor a = Tensor::from({1.f, 2.f, 3.f});
  Tensor b = Tensor::from({3.f, 2.f, 1.f});
  EXPECT_EQ(K::greater(a, b).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(K::greater_equal(a, 2.0).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(K::less(a, b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(K::less_equal(2.0, a).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(K::equal(a, b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(K::not_equal(a, 2.0).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  expect_near(values(K::maximum(a, b)), {3, 2, 3});
  expect_near(values(K::minimum(a, 2.0)), {1, 2, 2});
  expect_near(values(K::square(a)), {1, 4, 9});
  expect_near(values(K::sqrt(K::square(a))), {1, 2, 3});
  expect_near(values(K::abs(-a)), {1, 2, 3});
  expect_near(values(K::pow(a, 3)), {1, 8, 27});
  expect_near(values(K::clip(a, 1.5, 2.5)), {1.5, 2, 2.5});
  expect_near(values(K::clip(a, 2.5)), {2.5, 2.5, 3});  // max_value None
  expect_near(values(K::exp(K::log(a))), {1, 2, 3}, 1e-5f);
  expect_near(values(K::sign(a - 2)), {-1, 0, 1});
  EXPECT_EQ(K::cast(a, DType::int64).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  expect_near(values(K::relu(a - 2)), {0, 0, 1});
  expect_near(values(K::relu(a, 0.0, 2.0)), {1, 2, 2});
  expect_near(values(K::sigmoid(a * 0)), {0.5, 0.5, 0.5});
}

// ---- reductions and shapes --------------------------------------------------------------------

TEST(HppReduce, AxesAreNoneAnIntOrAList) {
  Tensor x = Tensor::from<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_near(values(K::sum(x)), {21});
  EXPECT_EQ(K::sum(x).shape(), (std::vector<int64_t>{}));
  expect_near(values(K::sum(x, 0)), {5, 7, 9});
  expect_near(values(K::sum(x, 1)), {6, 15});
  expect_near(values(K::sum(x, -1, true)), {6, 15});
  EXPECT_EQ(K::sum(x, -1, true).shape(), (std::vector<int64_t>{2, 1}));
  expect_near(values(K::sum(x, {0, 1})), {21});
  expect_near(values(K::mean(x, std::optional<std::vector<int64_t>>{{0}})), {2.5, 3.5, 4.5});
  expect_near(values(K::mean(x, std::nullopt, true)), {3.5});
  expect_near(values(K::max(x, 1)), {3, 6});
  expect_near(values(K::min(x)), {1});
  expect_near(values(K::prod(x, 0)), {4, 10, 18});
  expect_near(values(K::var(x, 1)), {2.f / 3, 2.f / 3});
  expect_near(values(K::std(x, 1)), {std::sqrt(2.f / 3), std::sqrt(2.f / 3)});
  expect_near(values(K::logsumexp(Tensor::from({0.f, 0.f}))), {std::log(2.f)});
  EXPECT_EQ(K::argmax(x).to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(K::argmin(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  expect_near(values(K::cumsum(x, 1)), {1, 3, 6, 4, 9, 15});
  Tensor flags = Tensor::from(std::vector<bool>{true, false});
  EXPECT_EQ(K::any(flags).to_vector<bool>(), (std::vector<bool>{true}));
  EXPECT_EQ(K::all(flags).to_vector<bool>(), (std::vector<bool>{false}));
}

TEST(HppShape, ShapeFunctions) {
  Tensor x = Tensor::from<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(K::reshape(x, {3, 2}).shape(), (std::vector<int64_t>{3, 2}));
  expect_near(values(K::transpose(x)), {1, 4, 2, 5, 3, 6});
  expect_near(values(K::permute_dimensions(x, {1, 0})), {1, 4, 2, 5, 3, 6});
  EXPECT_EQ(K::concatenate({x, x}, 0).shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(K::concatenate({x, x}).shape(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(K::stack({x, x}).shape(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(K::expand_dims(x).shape(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(K::squeeze(K::expand_dims(x, 0), 0).shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(K::flatten(x).shape(), (std::vector<int64_t>{6}));
  EXPECT_EQ(K::batch_flatten(K::reshape(x, {2, 3, 1})).shape(), (std::vector<int64_t>{2, 3}));
  expect_near(values(K::tile(x, {1, 2})), {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  expect_near(values(K::repeat_elements(x, 2, 0)), {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  EXPECT_EQ(K::repeat(K::ones({2, 3}), 4).shape(), (std::vector<int64_t>{2, 4, 3}));
  expect_near(values(K::reverse(x, 1)), {3, 2, 1, 6, 5, 4});
  expect_near(values(K::slice(x, {0, 1}, {2, 2})), {2, 3, 5, 6});
  expect_near(values(K::strided_slice(x, {0, 0}, {2, 3}, {1, 2})), {1, 3, 4, 6});
  expect_near(values(K::gather(x, Tensor::from<int32_t>({1}))), {4, 5, 6});
  expect_near(values(K::one_hot(Tensor::from<int32_t>({2, 0}), 3)), {0, 0, 1, 1, 0, 0});
  EXPECT_EQ(K::shape(x).to_vector<int32_t>(), (std::vector<int32_t>{2, 3}));
}

TEST(HppLinalg, DotAndBatchDot) {
  Tensor x = Tensor::from<float>({1, 2, 3, 4}, {2, 2});
  Tensor y = Tensor::from<float>({5, 6, 7, 8}, {2, 2});
  expect_near(values(K::dot(x, y)), {19, 22, 43, 50});
  expect_near(values(K::batch_dot(x, y, 1)), {17, 53});
  expect_near(values(K::batch_dot(x, y, {1, 1})), {17, 53});
  EXPECT_EQ(error_of([&] { K::batch_dot(x, y, {0, 1, 2}); }).status(), KB_ERROR_INVALID_ARGUMENT);
}

TEST(HppNn, LossesAndActivations) {
  Tensor logits = Tensor::from<float>({1, 2, 3, 1, 1, 1}, {2, 3});
  Tensor p = K::softmax(logits);
  std::vector<float> pv = values(p);
  EXPECT_NEAR(pv[0] + pv[1] + pv[2], 1.0f, 1e-6f);
  expect_near({pv[3], pv[4], pv[5]}, {1.f / 3, 1.f / 3, 1.f / 3});
  Tensor target = Tensor::from<float>({0, 0, 1, 1, 0, 0}, {2, 3});
  Tensor ce = K::categorical_crossentropy(target, p);
  Tensor ce_logits = K::categorical_crossentropy(target, logits, true);
  expect_near(values(ce), values(ce_logits), 1e-5f);
  expect_near({values(ce)[1]}, {std::log(3.f)}, 1e-5f);
  Tensor sparse = K::sparse_categorical_crossentropy(Tensor::from<int32_t>({2, 0}), p);
  expect_near(values(sparse), values(ce), 1e-5f);
  Tensor bce = K::binary_crossentropy(Tensor::from({1.f}), Tensor::from({0.5f}));
  expect_near(values(bce), {std::log(2.f)}, 1e-4f);
  expect_near(values(K::l2_normalize(Tensor::from({3.f, 4.f}))), {0.6f, 0.8f});
  expect_near(values(K::bias_add(logits, Tensor::from({1.f, 0.f, -1.f}))), {2, 2, 2, 2, 1, 0});
  EXPECT_EQ(K::in_top_k(logits, Tensor::from<int32_t>({2, 1}), 1).to_vector<bool>(),
            (std::vector<bool>{true, true}));
  expect_near(values(K::elu(Tensor::from({-100.f, 2.f}))), {-1, 2});
  expect_near(values(K::tanh(Tensor::from({0.f}))), {0});
}

TEST(HppConv, ConvAndPoolWithEnums) {
  // One 4x4 image with one channel, channels_last.
  std::vector<float> img(16);
  for (int i = 0; i < 16; ++i) img[size_t(i)] = float(i);
  Tensor x = Tensor::from(img, {1, 4, 4, 1});
  Tensor mx = K::pool2d(x, {2, 2}, {2, 2}, K::Padding::valid, K::DataFormat::channels_last);
  expect_near(values(mx), {5, 7, 13, 15});
  Tensor avg = K::pool2d(x, {2, 2}, {2, 2}, K::parse_padding("valid"), K::DataFormat::none,
                         K::PoolMode::avg);
  expect_near(values(avg), {2.5, 4.5, 10.5, 12.5});
  Tensor kernel = K::ones({2, 2, 1, 1}, DType::float32);
  Tensor conv = K::conv2d(x, kernel, {2, 2});
  expect_near(values(conv), {10, 18, 42, 50});
  EXPECT_EQ(K::conv2d(x, kernel, {1, 1}, K::Padding::same).shape(),
            (std::vector<int64_t>{1, 4, 4, 1}));
  EXPECT_EQ(K::parse_pool_mode("avg"), K::PoolMode::avg);
  EXPECT_EQ(K::parse_data_format("channels_first"), K::DataFormat::channels_first);
  EXPECT_EQ(K::parse_dtype("int16"), DType::int16);
}

TEST(HppPadding, PaddingsAndResize) {
  Tensor x = Tensor::from<float>({1, 2}, {1, 2, 1});
  expect_near(values(K::temporal_padding(x)), {0, 1, 2, 0});
  expect_near(values(K::temporal_padding(x, {0, 2})), {1, 2, 0, 0});
  Tensor img = Tensor::from<float>({1, 2, 3, 4}, {1, 2, 2, 1});
  EXPECT_EQ(K::spatial_2d_padding(img, {{1, 0}, {0, 1}}).shape(),
            (std::vector<int64_t>{1, 3, 3, 1}));
  Tensor big = K::resize_images(img, 2, 2, K::DataFormat::channels_last);
  EXPECT_EQ(big.shape(), (std::vector<int64_t>{1, 4, 4, 1}));
  expect_near(values(K::sum(big)), {40});
}

TEST(HppNormalization, BatchNormalization) {
  Tensor x = Tensor::from<float>({1, 3, 5, 7}, {2, 2});
  Tensor mean = Tensor::from({2.f, 4.f});
  Tensor var = Tensor::from({1.f, 4.f});
  expect_near(values(K::batch_normalization(x, mean, var, std::nullopt, std::nullopt, -1, 0)),
              {-1, -0.5, 3, 1.5});
  Tensor beta = Tensor::from({10.f, 10.f});
  Tensor gamma = Tensor::from({2.f, 2.f});
  expect_near(values(K::batch_normalization(x, mean, var, beta, gamma, -1, 0)), {8, 9, 16, 13});
  auto [normed, m, v] = K::normalize_batch_in_training(x, gamma, beta, {0});
  expect_near(values(m), {3, 5});
  expect_near(values(v), {4, 4});
  EXPECT_EQ(normed.shape(), (std::vector<int64_t>{2, 2}));
}

TEST(HppRandom, OpsDrawOnEveryCall) {
  Tensor u = K::random_uniform({1000}, -2, 2, DType::float32, 5);
  K::Function f({}, {u});
  std::vector<float> a = values(f({})[0]), b = values(f({})[0]);
  EXPECT_NE(a, b);  // new numbers on every call
  for (float v : a) {
    EXPECT_GE(v, -2.f);
    EXPECT_LT(v, 2.f);
  }
  EXPECT_EQ(K::random_normal({3, 4}).shape(), (std::vector<int64_t>{3, 4}));
  for (float v : values(K::truncated_normal({200}, 0, 1, DType::float32, 1))) {
    EXPECT_LE(std::fabs(v), 2.f);
  }
  for (float v : values(K::random_binomial({100}, 0.5, DType::float32, 2))) {
    EXPECT_TRUE(v == 0.f || v == 1.f);
  }
  Tensor ones = K::ones({1000}, DType::float32);
  std::vector<float> d = values(K::dropout(ones, 0.5, std::nullopt, 3));
  for (float v : d) EXPECT_TRUE(v == 0.f || v == 2.f) << v;
  expect_near(values(K::dropout(ones, 0.0)), std::vector<float>(1000, 1.f));
  EXPECT_THROW(K::dropout(ones, 1.0), K::Error);
}

// ---- errors -------------------------------------------------------------------------------

TEST(HppErrors, StatusesBecomeExceptionsWithTheLibrarysMessage) {
  Tensor x = Tensor::from<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  K::Error e = error_of([&] { K::reshape(x, {4, 2}); });
  EXPECT_EQ(e.status(), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(e.what(), "reshape: ")) << e.what();

  e = error_of([&] { (void)x.to_vector<double>(); });
  EXPECT_EQ(e.status(), KB_ERROR_DTYPE);
  EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos) << e.what();

  e = error_of([&] { K::dot(x, x); });
  EXPECT_EQ(e.status(), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(e.what(), "dot: ")) << e.what();

  e = error_of([&] { Tensor::from({1.f, 2.f, 3.f}, {2, 2}); });
  EXPECT_EQ(e.status(), KB_ERROR_SHAPE);

  e = error_of([&] { K::add(Tensor(), x); });  // an empty Tensor
  EXPECT_EQ(e.status(), KB_ERROR_INVALID_ARGUMENT);

  e = error_of([&] { K::placeholder_ndim(-1, DType::float32, "", /*sparse=*/true); });
  EXPECT_EQ(e.status(), KB_ERROR_NOT_IMPLEMENTED);  // a sparse placeholder needs a rank

  e = error_of([&] { K::sparse_from_coo<float>({0, 1, 2}, {1.f, 2.f}, {2, 2}); });
  EXPECT_EQ(e.status(), KB_ERROR_INVALID_ARGUMENT);

  e = error_of([] { K::parse_padding("sideways"); });
  EXPECT_EQ(e.status(), KB_ERROR_INVALID_ARGUMENT);

  // A value that needs a placeholder cannot be read.
  Tensor p = K::placeholder({2});
  EXPECT_THROW((void)(p * 2).to_vector<float>(), K::Error);

  // Error is a std::runtime_error; check() throws it.
  EXPECT_THROW(K::check(KB_ERROR_INTERNAL), std::runtime_error);
  EXPECT_NO_THROW(K::check(KB_OK));
  kb_clear_error();
}

TEST(HppErrors, FunctionInputsAreChecked) {
  Tensor x = K::placeholder({-1, 2}, DType::float32, "x");
  K::Function f({x}, {x * 2});
  EXPECT_THROW(f({}), K::Error);  // one input expected
  K::Error e = error_of([&] { f({Tensor::from({1.f, 2.f, 3.f})}); });
  EXPECT_EQ(e.status(), KB_ERROR_SHAPE);
  // The function still works afterwards.
  expect_near(values(f({Tensor::from({1.f, 2.f}, {1, 2})})[0]), {2, 4});
}

TEST(Hpp, SparseTensors) {
  // [[0, 2, 0], [1, 0, 3]] as COO
  Tensor s = K::sparse_from_coo<double>({0, 1, 1, 0, 1, 2}, {2, 1, 3}, {2, 3}, DType::float32);
  EXPECT_TRUE(K::is_sparse(s));
  EXPECT_FALSE(K::is_sparse(K::to_dense(s)));
  expect_near(values(K::to_dense(s)), {0, 2, 0, 1, 0, 3});
  Tensor w = Tensor::from<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_near(values(K::dot(s, w)), {6, 8, 16, 20});
  // fed through a sparse placeholder with an unknown batch size
  Tensor x = K::placeholder({-1, 3}, DType::float32, "x", /*sparse=*/true);
  K::Function f({x}, {K::dot(x, w)});
  expect_near(values(f({s})[0]), {6, 8, 16, 20});
  Tensor one_row = K::sparse_from_coo<float>({0, 2}, {10}, {1, 3});
  expect_near(values(f({one_row})[0]), {50, 60});
  Tensor labels = Tensor::from<int32_t>({7, 8, 9, 4, 5, 6}, {2, 3});
  Tensor sp = K::ctc_label_dense_to_sparse(labels, Tensor::from<int32_t>({1, 3}));
  EXPECT_EQ(K::to_dense(sp).eval().to_vector<int32_t>(), (std::vector<int32_t>{7, 0, 0, 4, 5, 6}));
}

// ---- ownership ----------------------------------------------------------------------------

TEST(HppOwnership, CopiesRetainMovesTransfer) {
  Tensor a = Tensor::from({1.f, 2.f});
  uint64_t id = a.id();
  Tensor b = a;  // retain
  {
    Tensor c = a;
    c = b;  // assign over a copy
    Tensor& alias = c;
    c = alias;  // self-assignment keeps the reference
    EXPECT_EQ(c.id(), id);
  }
  a = Tensor();  // drops one reference; b keeps the value alive
  EXPECT_FALSE(a);
  expect_near(values(b), {1, 2});

  Tensor moved = std::move(b);
  EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(moved.id(), id);
  Tensor& self = moved;
  moved = std::move(self);  // self-move keeps the reference
  EXPECT_TRUE(moved);

  // release / adopt / borrow round trip through raw handles.
  kb_tensor* raw = moved.release();
  EXPECT_FALSE(moved);
  Tensor borrowed = Tensor::borrow(raw);  // +1
  Tensor adopted = Tensor::adopt(raw);    // takes the released reference
  EXPECT_EQ(borrowed.id(), adopted.id());
}

TEST(HppOwnership, ManyDroppedTensorsAndListsLeakNothing) {
  // Under AddressSanitizer (scripts/test.sh) a leaked reference fails the run.
  Tensor x = K::placeholder({-1, 4}, DType::float32, "x");
  Tensor w = K::variable({1.f, 2.f, 3.f, 4.f}, {4, 1});
  K::Function f({x}, {K::dot(x, w), K::sum(x)});
  for (int i = 0; i < 2000; ++i) {
    Tensor in = Tensor::from({1.f, 1.f, 1.f, 1.f}, {1, 4});
    std::vector<Tensor> out = f({in});
    ASSERT_EQ(out.size(), 2u);
    Tensor tmp = (in + 1.0) * in - in / 2.0;
    std::vector<Tensor> grads = K::gradients(K::sum(K::dot(x, w)), {w, x});
    ASSERT_EQ(grads.size(), 2u);
  }
  expect_near(values(f({Tensor::from({1.f, 0.f, 0.f, 1.f}, {1, 4})})[0]), {5});
}

TEST(HppOwnership, TensorsCrossThreads) {
  Tensor a = Tensor::from({1.f, 2.f});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([a] {
      for (int i = 0; i < 200; ++i) {
        Tensor copy = a;
        Tensor r = copy * 2.0;
        (void)r;
      }
    });
  for (auto& t : threads) t.join();
  expect_near(values(a), {1, 2});
}

TEST(HppOwnership, FunctionIsMoveOnly) {
  Tensor x = K::placeholder({2}, DType::float32);
  K::Function f = K::function({x}, {x + 1});
  K::Function g = std::move(f);
  EXPECT_FALSE(f);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(g);
  expect_near(values(g.call({Tensor::from({1.f, 2.f})})[0]), {2, 3});
  K::Function h;
  h = std::move(g);
  expect_near(values(h({Tensor::from({0.f, 0.f})})[0]), {1, 1});
}

TEST(HppFunction, CallIntoWritesTheCallersTensors) {
  Tensor x = K::placeholder({2}, DType::float32);
  K::Function f = K::function({x}, {x * 3.0});
  Tensor out = f.call({Tensor::from({1.f, 2.f})})[0];
  f.call_into({Tensor::from({5.f, -1.f})}, {out});
  expect_near(values(out), {15, -3});
  Tensor wrong = Tensor::from({0.f, 0.f, 0.f});
  EXPECT_THROW(f.call_into({Tensor::from({1.f, 1.f})}, {wrong}), K::Error);
  expect_near(values(out), {15, -3});
}

// ---- gradients, functions, updates --------------------------------------------------------

TEST(HppGradients, OfSquaresAndThroughAPlaceholder) {
  Tensor w = K::variable({1.f, -2.f, 3.f}, {3}, DType::float32, "w");
  std::vector<Tensor> g = K::gradients(K::sum(K::square(w)), {w});
  ASSERT_EQ(g.size(), 1u);
  expect_near(values(g[0]), {2, -4, 6});

  // d/dw mean((x w - y)^2) for a batch fed through a Function.
  Tensor x = K::placeholder({-1, 3}, DType::float32, "x");
  Tensor y = K::placeholder({-1, 1}, DType::float32, "y");
  Tensor wm = K::variable({1.f, 1.f, 1.f}, {3, 1});
  Tensor loss = K::mean(K::square(K::dot(x, wm) - y));
  std::vector<Tensor> gw = K::gradients(loss, {wm});
  K::Function f({x, y}, {loss, gw[0]});
  std::vector<Tensor> out = f({Tensor::from({1.f, 0.f, 2.f}, {1, 3}), Tensor::from({1.f}, {1, 1})});
  expect_near(values(out[0]), {4});        // (1 + 2 - 1)^2
  expect_near(values(out[1]), {4, 0, 8});  // 2 * 2 * x
  // Not connected: zeros.
  Tensor other = K::variable({5.f}, {1});
  expect_near(values(K::gradients(loss, {other})[0]), {0});
  // stop_gradient cuts the path.
  expect_near(values(K::gradients(K::sum(K::stop_gradient(w) * w), {w})[0]), {1, -2, 3});
}

TEST(HppFunction, UpdatesRunOnEveryCall) {
  Tensor v = K::variable({1.f, 2.f}, {2}, DType::float32, "v");
  Tensor step = K::placeholder({2}, DType::float32, "step");
  Tensor counter = K::variable({0.f}, {1});
  K::Function f({step}, {v * 10}, {K::update_add(v, step), K::update_add(counter, K::ones({1}))});
  std::vector<Tensor> r1 = f({Tensor::from({0.5f, 1.f})});
  expect_near(values(r1[0]), {10, 20});  // outputs see the old value
  expect_near(values(v), {1.5, 3});
  std::vector<Tensor> r2 = f({Tensor::from({0.5f, 1.f})});
  expect_near(values(r2[0]), {15, 30});
  expect_near(values(v), {2, 4});
  expect_near(values(counter), {2});
  expect_near(values(r1[0]), {10, 20});  // earlier results keep their values

  K::Function g({}, {}, {K::update(v, K::zeros_like(v)), K::update_sub(counter, counter)});
  EXPECT_TRUE(g({}).empty());
  expect_near(values(v), {0, 0});
  expect_near(values(counter), {0});

  Tensor avg = K::variable({0.f}, {1});
  K::Function m({}, {}, {K::moving_average_update(avg, K::ones({1}) * 2, 0.75)});
  m({});
  expect_near(values(avg), {2});  // zero-debiased (Keras 2.2): the first update sets the value

  f.set_device(K::Device::cpu);
  EXPECT_EQ(f.device(), K::Device::cpu);
  expect_near(values(f({Tensor::from({0.f, 0.f})})[0]), {0, 0});
  f.set_device("cpu");
  EXPECT_EQ(f.device_name(), "cpu");
  EXPECT_THROW(f.set_device("tpu"), K::Error);
  EXPECT_THROW(f.set_device(std::string("cpu\0x", 5)), K::Error);
  std::vector<K::DeviceInfo> devices = K::list_devices();
  ASSERT_EQ(devices.size(), size_t(1 + K::device_count(K::Device::cuda)));
  EXPECT_EQ(devices[0].kind, K::Device::cpu);
  EXPECT_EQ(devices[0].index, 0);
  EXPECT_FALSE(devices[0].name.empty());
  EXPECT_GT(devices[0].memory, int64_t(1) << 26);
}

TEST(HppFunction, TrainsALinearModel) {
  // y = 2 x0 - x1 + 0.5 by SGD.
  Tensor x = K::placeholder({-1, 2}, DType::float32, "x");
  Tensor y = K::placeholder({-1, 1}, DType::float32, "y");
  Tensor w = K::zeros({2, 1}, DType::float32);
  Tensor b = K::zeros({1}, DType::float32);
  Tensor loss = K::mean(K::square(K::bias_add(K::dot(x, w), b) - y));
  std::vector<Tensor> params{w, b};
  std::vector<Tensor> grads = K::gradients(loss, params);
  std::vector<Tensor> updates;
  for (size_t i = 0; i < params.size(); ++i)
    updates.push_back(K::update_sub(params[i], grads[i] * 0.1));
  K::Function train({x, y}, {loss}, updates);
  Tensor xs = Tensor::from<float>({0, 0, 1, 0, 0, 1, 1, 1, 2, 1, 1, 2}, {6, 2});
  Tensor ys = Tensor::from<float>({0.5f, 2.5f, -0.5f, 1.5f, 3.5f, 0.5f}, {6, 1});
  float last = 0;
  for (int i = 0; i < 2000; ++i) last = train({xs, ys})[0].item<float>();
  EXPECT_LT(last, 1e-4f);
  expect_near(values(w), {2, -1}, 1e-2f);
  expect_near(values(b), {0.5f}, 1e-2f);
}

// ---- loops --------------------------------------------------------------------------------

namespace {
struct StepFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
  int code = 42;
};

// inputs (batch 2, time 3, features 1): 1..6.
Tensor sequence() { return Tensor::from<float>({1, 2, 3, 4, 5, 6}, {2, 3, 1}); }
}  // namespace

TEST(HppRnn, LambdaStepFunction) {
  for (bool unroll : {false, true}) {
    int calls = 0;
    float scale = 2;  // captured
    auto step = [&](const Tensor& in,
                    const std::vector<Tensor>& states) -> std::pair<Tensor, std::vector<Tensor>> {
      ++calls;
      EXPECT_EQ(states.size(), 1u);
      Tensor total = states[0] + in * scale;
      return {total, {total}};
    };
    auto [last, outputs, states] = K::rnn(step, sequence(), {K::zeros({2, 1}, DType::float32)},
                                          false, std::nullopt, {}, unroll);
    EXPECT_EQ(calls, unroll ? 3 : 1);
    expect_near(values(outputs), {2, 6, 12, 8, 18, 30});
    expect_near(values(last), {12, 30});
    ASSERT_EQ(states.size(), 1u);
    expect_near(values(states[0]), {12, 30});
  }
}

TEST(HppRnn, BackwardsMaskAndConstants) {
  auto step = [](const Tensor& in, const std::vector<Tensor>& states) {
    EXPECT_EQ(states.size(), 2u);  // the state, then the constant
    Tensor total = states[0] + in * states[1];
    return std::make_pair(total, std::vector<Tensor>{total});
  };
  Tensor k = Tensor::from({10.f}, {1, 1});
  K::RnnResult r =
      K::rnn(step, sequence(), {K::zeros({2, 1}, DType::float32)}, true, std::nullopt, {k});
  expect_near(values(r.last_output), {60, 150});
  // A mask that drops the last step keeps the state there.
  Tensor mask = Tensor::from(std::vector<bool>{true, true, false, true, true, true}, {2, 3});
  K::RnnResult m = K::rnn(step, sequence(), {K::zeros({2, 1}, DType::float32)}, false, mask, {k});
  expect_near(values(m.new_states[0]), {30, 150});
}

TEST(HppRnn, ExceptionsFromTheLambdaComeBackOut) {
  for (bool unroll : {false, true}) {
    int calls = 0;
    auto step = [&](const Tensor&,
                    const std::vector<Tensor>&) -> std::pair<Tensor, std::vector<Tensor>> {
      ++calls;
      StepFailed e("my step failed");
      e.code = 7;
      throw e;
    };
    try {
      K::rnn(step, sequence(), {K::zeros({2, 1}, DType::float32)}, false, std::nullopt, {}, unroll);
      ADD_FAILURE() << "rnn did not throw";
    } catch (const StepFailed& e) {  // the original exception, same type and content
      EXPECT_STREQ(e.what(), "my step failed");
      EXPECT_EQ(e.code, 7);
    }
    EXPECT_EQ(calls, 1);
  }
  // A kbackend::Error from inside (a failing op) keeps its status.
  auto bad = [](const Tensor& in, const std::vector<Tensor>& states) {
    Tensor wrong = K::reshape(in, {7});
    return std::make_pair(wrong, states);
  };
  K::Error e = error_of([&] { K::rnn(bad, sequence(), {K::zeros({2, 1}, DType::float32)}); });
  EXPECT_EQ(e.status(), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(e.what(), "reshape: ")) << e.what();
  // Any type of exception.
  auto throws_int = [](const Tensor&,
                       const std::vector<Tensor>&) -> std::pair<Tensor, std::vector<Tensor>> {
    throw 17;
  };
  try {
    K::rnn(throws_int, sequence(), {K::zeros({2, 1}, DType::float32)});
    ADD_FAILURE() << "rnn did not throw";
  } catch (int v) {
    EXPECT_EQ(v, 17);
  }
  // A wrong result (no states) is the library's error.
  auto no_states = [](const Tensor& in, const std::vector<Tensor>&) {
    return std::make_pair(in, std::vector<Tensor>{});
  };
  EXPECT_THROW(K::rnn(no_states, sequence(), {K::zeros({2, 1}, DType::float32)}), K::Error);
  // An empty output Tensor is reported, not dereferenced.
  auto empty = [](const Tensor&, const std::vector<Tensor>& states) {
    return std::make_pair(Tensor(), states);
  };
  EXPECT_EQ(error_of([&] {
              K::rnn(empty, sequence(), {K::zeros({2, 1}, DType::float32)});
            }).status(),
            KB_ERROR_INVALID_ARGUMENT);
  // Everything still works afterwards.
  auto ok = [](const Tensor& in, const std::vector<Tensor>& states) {
    return std::make_pair(in, std::vector<Tensor>{states[0] + in});
  };
  expect_near(values(K::rnn(ok, sequence(), {K::zeros({2, 1}, DType::float32)}).new_states[0]),
              {6, 15});
}

TEST(HppLoops, MapFnFoldlFoldr) {
  Tensor elems = Tensor::from<float>({1, 2, 3, 4}, {4});
  expect_near(values(K::map_fn([](const Tensor& x) { return x * x; }, elems)), {1, 4, 9, 16});
  Tensor as_int = K::map_fn([](const Tensor& x) { return K::cast(x, DType::int32); }, elems);
  EXPECT_EQ(as_int.dtype(), DType::int32);
  expect_near(values(K::foldl([](const Tensor& acc, const Tensor& x) { return acc - x; }, elems)),
              {1 - 2 - 3 - 4});
  expect_near(values(K::foldr([](const Tensor& acc, const Tensor& x) { return acc - x; }, elems)),
              {4 - 3 - 2 - 1});
  Tensor init = Tensor::scalar(100.f);
  expect_near(
      values(K::foldl([](const Tensor& acc, const Tensor& x) { return acc + x; }, elems, init)),
      {110});

  // Exceptions come back out of map_fn / foldl / foldr unchanged.
  EXPECT_THROW(K::map_fn([](const Tensor&) -> Tensor { throw StepFailed("map"); }, elems),
               StepFailed);
  EXPECT_THROW(
      K::foldl([](const Tensor&, const Tensor&) -> Tensor { throw std::out_of_range("l"); }, elems),
      std::out_of_range);
  EXPECT_THROW(K::foldr([](const Tensor&, const Tensor&) -> Tensor { throw std::logic_error("r"); },
                        elems, init),
               std::logic_error);
  EXPECT_EQ(error_of([&] { K::map_fn([](const Tensor&) { return Tensor(); }, elems); }).status(),
            KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error_of([&] { K::map_fn(K::MapFunction(), elems); }).status(),
            KB_ERROR_INVALID_ARGUMENT);
  // Gradients flow through a loop.
  Tensor v = K::variable({1.f, 2.f, 3.f}, {3});
  Tensor s = K::foldl([](const Tensor& acc, const Tensor& x) { return acc + x * x; }, v,
                      Tensor::scalar(0.f));
  expect_near(values(K::gradients(s, {v})[0]), {2, 4, 6});
}

// ---- scopes, config, printing -------------------------------------------------------------

TEST(HppScopes, NameScopeNamesTensors) {
  SessionGuard restore;
  K::clear_session();  // names are unique in a session: this test reads them back
  {
    K::NameScope outer("outer");
    {
      auto inner = K::name_scope("inner");
      EXPECT_EQ(K::placeholder({2}, DType::float32, "x").name(), "outer/inner/x");
    }
    EXPECT_EQ(K::variable({1.f}, {1}, DType::none, "w").name(), "outer/w");
  }
  EXPECT_EQ(K::placeholder({2}, DType::float32, "y").name(), "y");
  EXPECT_EQ(error_of([] { K::NameScope bad(""); }).status(), KB_ERROR_INVALID_ARGUMENT);
}

TEST(HppScopes, LearningPhaseScope) {
  SessionGuard restore;
  Tensor x = K::placeholder({2}, DType::float32, "x");
  Tensor y = x + K::cast(K::learning_phase(), DType::float32);
  EXPECT_TRUE(y.uses_learning_phase());
  EXPECT_FALSE(x.uses_learning_phase());
  K::Function f({x}, {y});
  Tensor in = Tensor::from({10.f, 20.f});
  expect_near(values(f({in})[0]), {10, 20});
  {
    K::LearningPhaseScope train(1);
    expect_near(values(f({in})[0]), {11, 21});
    {
      auto test = K::learning_phase_scope(0);
      expect_near(values(f({in})[0]), {10, 20});
    }
    expect_near(values(f({in})[0]), {11, 21});
  }
  expect_near(values(f({in})[0]), {10, 20});
  EXPECT_THROW(K::LearningPhaseScope(2), K::Error);
  K::set_learning_phase(1);
  EXPECT_EQ(K::learning_phase().eval().to_vector<bool>(), (std::vector<bool>{true}));
}

TEST(HppConfig, Settings) {
  EXPECT_EQ(K::backend(), "kbackend");
  EXPECT_FALSE(K::version().empty());
  EXPECT_EQ(K::abi_version(), KB_ABI_VERSION);
  double eps = K::epsilon();
  K::set_epsilon(1e-4);
  EXPECT_DOUBLE_EQ(K::epsilon(), 1e-4);
  K::set_epsilon(eps);

  DType fx = K::floatx();
  K::set_floatx(DType::float64);
  EXPECT_EQ(K::floatx(), DType::float64);
  EXPECT_EQ(K::placeholder({1}).dtype(), DType::float64);
  EXPECT_EQ(K::constant(1.0).dtype(), DType::float64);
  K::set_floatx(fx);

  K::DataFormat format = K::image_data_format();
  K::set_image_data_format(K::DataFormat::channels_first);
  EXPECT_EQ(K::image_data_format(), K::DataFormat::channels_first);
  EXPECT_EQ(K::image_dim_ordering(), K::DimOrdering::th);
  K::set_image_data_format(format);
  EXPECT_THROW(K::set_floatx(DType::none), K::Error);

  K::reset_uids();
  EXPECT_EQ(K::get_uid("dense"), 1);
  EXPECT_EQ(K::get_uid("dense"), 2);
  EXPECT_EQ(K::get_uid(), 1);
  K::manual_variable_initialization(false);
  EXPECT_GE(K::device_count(K::Device::cpu), 1);
  if (K::device_count(K::Device::cuda) == 0) {
    EXPECT_FALSE(K::cuda_unavailable_reason().empty());
  }
}

// One process without kb_dist_init: rank 0 of 1, collectives the identity (tests/dist runs them
// on two processes through the C ABI).
TEST(HppDist, OneProcessIsRankZeroOfOneAndCollectivesAreTheIdentity) {
  EXPECT_EQ(K::dist::rank(), 0);
  EXPECT_EQ(K::dist::size(), 1);
  EXPECT_EQ(K::dist::local_rank(), 0);
  EXPECT_EQ(K::dist::engine(), "");
  Tensor x = K::variable({1.f, -2.f, 3.f}, {3});
  EXPECT_EQ(values(K::all_reduce(x)), (std::vector<float>{1.f, -2.f, 3.f}));
  EXPECT_EQ(values(K::all_reduce(x, K::Reduce::sum)), (std::vector<float>{1.f, -2.f, 3.f}));
  EXPECT_EQ(values(K::broadcast(x)), (std::vector<float>{1.f, -2.f, 3.f}));
  EXPECT_EQ(values(K::all_gather(x)), (std::vector<float>{1.f, -2.f, 3.f}));
  EXPECT_EQ(K::dist::all_reduce(std::vector<int32_t>{4, 5}, K::Reduce::sum),
            (std::vector<int32_t>{4, 5}));
  K::dist::broadcast_variables({x});
  EXPECT_EQ(values(x), (std::vector<float>{1.f, -2.f, 3.f}));
  K::dist::barrier();
  EXPECT_EQ(K::dist::collectives(), 0);
  try {
    K::broadcast(x, 1);
    FAIL() << "root 1 of 1 process";
  } catch (const K::Error& e) {
    EXPECT_EQ(e.status(), KB_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("root 1 is not a rank"), std::string::npos);
  }
  EXPECT_THROW(K::dist::set_timeout(0), K::Error);
}

TEST(HppPrint, PrintTensorThroughAStdFunctionSink) {
  std::vector<std::string> lines;
  K::set_print_sink([&](const std::string& text) { lines.push_back(text); });
  Tensor v = K::variable({1.f, 2.5f}, {2});
  Tensor printed = K::print_tensor(v, "value: ");
  K::Function f({}, {printed});
  expect_near(values(f({})[0]), {1, 2.5});
  K::set_print_sink(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "value: [1 2.5]\n");
}

namespace {
// Resident memory in MiB (Linux).
double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  double size = 0, resident = 0;
  statm >> size >> resident;
  return resident * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}
}  // namespace

// The sanitizers' allocators keep freed memory (ASan's quarantine): RSS says nothing there. GCC
// says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KB_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KB_TEST_SANITIZED 1
#endif
#endif

TEST(HppMemory, DroppingTensorsDoesNotGrowMemory) {
#ifdef KB_TEST_SANITIZED
  GTEST_SKIP() << "the sanitizer's allocator keeps freed memory";
#endif
  Tensor a = Tensor::from(std::vector<float>(16, 1.f), {16});
  auto churn = [&](int n) {
    for (int i = 0; i < n; ++i) {
      Tensor b = a * 2.0 + double(i);  // several graph values per iteration, all dropped
      Tensor c = K::exp(b);
    }
  };
  churn(5000);
  double before = rss_mib();
  churn(100000);
  EXPECT_LT(rss_mib() - before, 8.0) << "memory grew while 100k tensors were dropped";
  // and the measure sees tensors that are kept
  before = rss_mib();
  std::vector<Tensor> kept;
  for (int i = 0; i < 100; ++i) kept.push_back(Tensor::from(std::vector<float>(1 << 16, 1.f)));
  EXPECT_GT(rss_mib() - before, 16.0);
}
