// kb_gradients: a small MLP against hand-derived gradients, disconnected variables, second
// derivatives, stop_gradient, and a training step built from gradients and updates.
#include <cmath>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

List grads(kb_tensor* loss, const std::vector<kb_tensor*>& vars) {
  kb_tensor_list* out = nullptr;
  ok(kb_gradients(loss, vars.data(), vars.size(), &out), "gradients");
  return List(out);
}

// Row-major helpers for the reference computation.
using Mat = std::vector<double>;

struct Mlp {
  // x (N, D) -> tanh(x W1 + b1) (N, H) -> h W2 + b2 (N, 1); loss = mean((o - y)^2).
  static constexpr int N = 3, D = 2, H = 4;
  std::vector<float> x = {0.5f, -1.0f, 1.5f, 0.25f, -0.75f, 2.0f};
  std::vector<float> y = {1.0f, -0.5f, 0.25f};
  std::vector<float> w1 = {0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.25f, 0.15f, -0.1f};
  std::vector<float> b1 = {0.01f, -0.02f, 0.03f, 0.0f};
  std::vector<float> w2 = {0.5f, -0.3f, 0.2f, 0.7f};
  std::vector<float> b2 = {0.1f};

  // Reference loss and gradients in double precision.
  double loss = 0;
  Mat gw1 = Mat(D * H, 0), gb1 = Mat(H, 0), gw2 = Mat(H, 0), gb2 = Mat(1, 0);

  void reference() {
    Mat h(N * H), o(N), d_o(N);
    for (int n = 0; n < N; ++n) {
      for (int j = 0; j < H; ++j) {
        double z = b1[j];
        for (int i = 0; i < D; ++i) z += double(x[n * D + i]) * w1[i * H + j];
        h[n * H + j] = std::tanh(z);
      }
      o[n] = b2[0];
      for (int j = 0; j < H; ++j) o[n] += h[n * H + j] * w2[j];
      double r = o[n] - y[n];
      loss += r * r / N;
      d_o[n] = 2 * r / N;
    }
    for (int n = 0; n < N; ++n) {
      gb2[0] += d_o[n];
      for (int j = 0; j < H; ++j) {
        gw2[j] += h[n * H + j] * d_o[n];
        double dz = d_o[n] * w2[j] * (1 - h[n * H + j] * h[n * H + j]);
        gb1[j] += dz;
        for (int i = 0; i < D; ++i) gw1[i * H + j] += double(x[n * D + i]) * dz;
      }
    }
  }
};

std::vector<float> as_float(const Mat& m) { return std::vector<float>(m.begin(), m.end()); }

}  // namespace

TEST(Gradients, SmallMlpMatchesAnalyticGradients) {
  Mlp m;
  m.reference();
  Tensor x = constant_f32(m.x, {Mlp::N, Mlp::D});
  Tensor y = constant_f32(m.y, {Mlp::N, 1});
  Tensor w1 = variable_f32(m.w1, {Mlp::D, Mlp::H}, "w1");
  Tensor b1 = variable_f32(m.b1, {Mlp::H}, "b1");
  Tensor w2 = variable_f32(m.w2, {Mlp::H, 1}, "w2");
  Tensor b2 = variable_f32(m.b2, {1}, "b2");

  Tensor z = bin(kb_dot, x.get(), w1.get());
  Tensor zb =
      make([&](kb_tensor** o) { return kb_bias_add(z.get(), b1.get(), KB_CHANNELS_LAST, o); });
  Tensor h = un(kb_tanh, zb.get());
  Tensor o1 = bin(kb_dot, h.get(), w2.get());
  Tensor o = bin(kb_add, o1.get(), b2.get());
  Tensor r = bin(kb_subtract, o.get(), y.get());
  Tensor sq = un(kb_square, r.get());
  Tensor loss = make([&](kb_tensor** out) { return kb_mean(sq.get(), nullptr, 0, 0, out); });
  EXPECT_EQ(int_shape(loss.get()), Shape{});
  expect_near(values_f32(eval(loss.get())), {float(m.loss)}, 1e-5);

  List g = grads(loss.get(), {w1.get(), b1.get(), w2.get(), b2.get()});
  ASSERT_EQ(kb_tensor_list_size(g.get()), 4u);
  std::vector<Shape> shapes = {{Mlp::D, Mlp::H}, {Mlp::H}, {Mlp::H, 1}, {1}};
  std::vector<Mat> want = {m.gw1, m.gb1, m.gw2, m.gb2};
  for (size_t i = 0; i < 4; ++i) {
    Tensor gi = at(g, i);
    EXPECT_EQ(int_shape(gi.get()), shapes[i]) << "gradient " << i;
    EXPECT_EQ(dtype_of(gi.get()), KB_FLOAT32);
    expect_near(values_f32(eval(gi.get())), as_float(want[i]), 1e-4);
  }

  // The same gradients through a compiled function with the inputs as placeholders.
  Tensor px = placeholder({-1, Mlp::D}, KB_FLOAT32, "px");
  Tensor pz = bin(kb_dot, px.get(), w1.get());
  Tensor psum = un(kb_tanh, pz.get());
  Tensor pl = make([&](kb_tensor** out) { return kb_sum(psum.get(), nullptr, 0, 0, out); });
  List pg = grads(pl.get(), {w1.get()});
  Tensor pg0 = at(pg, 0);
  Function f = function({px.get()}, {pg0.get()});
  // d/dW1 sum(tanh(x W1)) = x^T (1 - tanh^2)
  Mat want_w1(Mlp::D * Mlp::H, 0);
  for (int n = 0; n < Mlp::N; ++n)
    for (int j = 0; j < Mlp::H; ++j) {
      double zz = 0;
      for (int i = 0; i < Mlp::D; ++i) zz += double(m.x[n * Mlp::D + i]) * m.w1[i * Mlp::H + j];
      double t = std::tanh(zz);
      for (int i = 0; i < Mlp::D; ++i) want_w1[i * Mlp::H + j] += m.x[n * Mlp::D + i] * (1 - t * t);
    }
  expect_near(out_f32(call(f, {x.get()}), 0), as_float(want_w1), 1e-4);
}

TEST(Gradients, DisconnectedVariableGetsZeros) {
  Tensor a = variable_f32({1, 2}, {2});
  Tensor u = variable_f32({5, 6, 7, 8, 9, 10}, {2, 3}, "unused");
  Tensor sq = un(kb_square, a.get());
  Tensor loss = make([&](kb_tensor** out) { return kb_sum(sq.get(), nullptr, 0, 0, out); });
  List g = grads(loss.get(), {u.get(), a.get()});
  ASSERT_EQ(kb_tensor_list_size(g.get()), 2u);
  Tensor gu = at(g, 0);
  EXPECT_EQ(int_shape(gu.get()), (Shape{2, 3}));
  expect_near(values_f32(eval(gu.get())), {0, 0, 0, 0, 0, 0});
  expect_near(values_f32(eval(at(g, 1).get())), {2, 4});

  // An empty variable list gives an empty list.
  List none = grads(loss.get(), {});
  EXPECT_EQ(kb_tensor_list_size(none.get()), 0u);
}

TEST(Gradients, StopGradientBlocks) {
  Tensor a = variable_f32({1, 2}, {2});
  Tensor sq = un(kb_square, a.get());
  Tensor stopped = un(kb_stop_gradient, sq.get());
  Tensor both = bin(kb_add, stopped.get(), a.get());
  Tensor loss = make([&](kb_tensor** out) { return kb_sum(both.get(), nullptr, 0, 0, out); });
  List g = grads(loss.get(), {a.get()});
  expect_near(values_f32(eval(at(g, 0).get())), {1, 1});
}

TEST(Gradients, GradientOfAGradient) {
  Tensor x = variable_f32({1, 2, -3}, {3}, "x");
  Tensor cube = make([&](kb_tensor** o) { return kb_pow(x.get(), 3, o); });
  Tensor y = make([&](kb_tensor** o) { return kb_sum(cube.get(), nullptr, 0, 0, o); });
  List g1 = grads(y.get(), {x.get()});
  Tensor dx = at(g1, 0);
  expect_near(values_f32(eval(dx.get())), {3, 12, 27}, 1e-5);  // 3x^2
  Tensor s = make([&](kb_tensor** o) { return kb_sum(dx.get(), nullptr, 0, 0, o); });
  List g2 = grads(s.get(), {x.get()});
  Tensor ddx = at(g2, 0);
  expect_near(values_f32(eval(ddx.get())), {6, 12, -18}, 1e-5);  // 6x
  Tensor s2 = make([&](kb_tensor** o) { return kb_sum(ddx.get(), nullptr, 0, 0, o); });
  List g3 = grads(s2.get(), {x.get()});
  expect_near(values_f32(eval(at(g3, 0).get())), {6, 6, 6}, 1e-5);

  // Mixed: d/dx of (d/dx sum(sin(x) * x)) = d/dx (cos(x) x + sin(x)) = 2 cos(x) - x sin(x).
  Tensor sn = un(kb_sin, x.get());
  Tensor p = bin(kb_multiply, sn.get(), x.get());
  Tensor l = make([&](kb_tensor** o) { return kb_sum(p.get(), nullptr, 0, 0, o); });
  Tensor d1 = at(grads(l.get(), {x.get()}), 0);
  Tensor sd1 = make([&](kb_tensor** o) { return kb_sum(d1.get(), nullptr, 0, 0, o); });
  Tensor d2 = at(grads(sd1.get(), {x.get()}), 0);
  std::vector<float> want;
  for (double v : {1.0, 2.0, -3.0}) want.push_back(float(2 * std::cos(v) - v * std::sin(v)));
  expect_near(values_f32(eval(d2.get())), want, 1e-5);
}

TEST(Gradients, ATrainingStepReducesTheLoss) {
  // Linear regression y = 2 x - 1 with SGD steps built from gradients and update_sub.
  Tensor w = variable_f32({0}, {1, 1}, "w");
  Tensor b = variable_f32({0}, {1}, "b");
  Tensor px = placeholder({-1, 1}, KB_FLOAT32, "x");
  Tensor py = placeholder({-1, 1}, KB_FLOAT32, "y");
  Tensor xw = bin(kb_dot, px.get(), w.get());
  Tensor pred = bin(kb_add, xw.get(), b.get());
  Tensor err = bin(kb_subtract, pred.get(), py.get());
  Tensor sq = un(kb_square, err.get());
  Tensor loss = make([&](kb_tensor** o) { return kb_mean(sq.get(), nullptr, 0, 0, o); });
  List g = grads(loss.get(), {w.get(), b.get()});
  Tensor lr = scalar_f32(0.1f);
  Tensor gw = at(g, 0), gb = at(g, 1);
  Tensor sw = bin(kb_multiply, gw.get(), lr.get());
  Tensor sb = bin(kb_multiply, gb.get(), lr.get());
  Tensor uw = make([&](kb_tensor** o) { return kb_update_sub(w.get(), sw.get(), o); });
  Tensor ub = make([&](kb_tensor** o) { return kb_update_sub(b.get(), sb.get(), o); });
  Function step = function({px.get(), py.get()}, {loss.get()}, {uw.get(), ub.get()});
  Tensor xs = constant_f32({-1, 0, 1, 2}, {4, 1});
  Tensor ys = constant_f32({-3, -1, 1, 3}, {4, 1});
  float first = 0, last = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<float> l = out_f32(call(step, {xs.get(), ys.get()}), 0);
    ASSERT_EQ(l.size(), 1u);
    if (i == 0) first = l[0];
    last = l[0];
  }
  EXPECT_NEAR(first, 5.0f, 1e-5);  // mean of y^2 with w = b = 0
  EXPECT_LT(last, 1e-3f);
  expect_near(values_f32(eval(w.get())), {2}, 2e-2);
  expect_near(values_f32(eval(b.get())), {-1}, 2e-2);
}

TEST(Gradients, Errors) {
  Tensor a = variable_f32({1, 2}, {2});
  Tensor ia = variable<int32_t>({1, 2}, {2});
  kb_tensor_list* out = nullptr;
  kb_tensor* vars[] = {a.get()};
  EXPECT_EQ(kb_gradients(ia.get(), vars, 1, &out), KB_ERROR_DTYPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "gradients: ")) << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
}

TEST(Gradients, OfANonScalarLossIsTheGradientOfItsSum) {
  Tensor x = variable_f32({1, -2, 3}, {3});
  Tensor p = placeholder({3}, KB_FLOAT32, "p");
  Tensor y = bin(kb_multiply, x.get(), x.get());
  List g = grads(y.get(), {x.get()});
  expect_near(values_f32(eval(at(g, 0).get())), {2, -4, 6});
  // With respect to a placeholder, evaluated through a function.
  Tensor py = bin(kb_multiply, p.get(), x.get());
  Tensor gp = at(grads(py.get(), {p.get()}), 0);
  Function f = function({p.get()}, {gp.get()});
  Tensor in = constant_f32({5, 5, 5}, {3});
  expect_near(out_f32(call(f, {in.get()}), 0), {1, -2, 3});
}
