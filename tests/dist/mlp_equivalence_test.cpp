// Data parallelism computes what one process would: an MLP trained with SGD and momentum on n
// processes, each on its b rows of every batch, with the gradients averaged by all_reduce inside
// the training function, ends with the weights of the same MLP trained in one process on the
// whole n*b rows (within float rounding), and with bitwise equal weights on every process. The
// processes start from different random weights: the broadcast of rank 0's must make them agree.
#include <cmath>
#include <random>

#include "capi/helpers.h"

using namespace kbt;

namespace {

constexpr int64_t kIn = 4, kHidden = 6, kOut = 3, kRowsPerRank = 5, kSteps = 20;
constexpr float kLearningRate = 0.1f, kMomentum = 0.9f;

struct Mlp {
  std::vector<Tensor> weights, velocities;
  Function step;
};

std::vector<float> random_values(std::mt19937& gen, size_t n) {
  std::normal_distribution<float> d(0.f, 0.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

// The MLP's training function: loss = mean((tanh(x w1 + b1) w2 + b2 - y)^2); with `distributed`
// the gradients are averaged over the processes.
Mlp build(std::mt19937& gen, bool distributed) {
  const std::vector<Shape> shapes = {{kIn, kHidden}, {kHidden}, {kHidden, kOut}, {kOut}};
  Mlp m;
  for (const Shape& s : shapes) {
    size_t n = 1;
    for (int64_t d : s) n *= size_t(d);
    m.weights.push_back(variable_f32(random_values(gen, n), s));
    m.velocities.push_back(variable_f32(std::vector<float>(n, 0.f), s));
  }
  Tensor x = placeholder({-1, kIn}), y = placeholder({-1, kOut});
  Tensor h =
      un(kb_tanh,
         bin(kb_add, bin(kb_dot, x.get(), m.weights[0].get()).get(), m.weights[1].get()).get());
  Tensor out = bin(kb_add, bin(kb_dot, h.get(), m.weights[2].get()).get(), m.weights[3].get());
  Tensor err = un(kb_square, bin(kb_subtract, out.get(), y.get()).get());
  Tensor loss = make([&](kb_tensor** o) { return kb_mean(err.get(), nullptr, 0, 0, o); });
  std::vector<kb_tensor*> vars;
  for (auto& w : m.weights) vars.push_back(w.get());
  kb_tensor_list* grads_raw = nullptr;
  ok(kb_gradients(loss.get(), vars.data(), vars.size(), &grads_raw), "gradients");
  List grads(grads_raw);
  Tensor lr = scalar_f32(kLearningRate), mu = scalar_f32(kMomentum);
  std::vector<Tensor> updates;
  for (size_t i = 0; i < vars.size(); ++i) {
    Tensor g = at(grads, i);
    if (distributed)
      g = make([&](kb_tensor** o) { return kb_all_reduce(g.get(), KB_REDUCE_AVERAGE, o); });
    Tensor v = bin(kb_subtract, bin(kb_multiply, mu.get(), m.velocities[i].get()).get(),
                   bin(kb_multiply, lr.get(), g.get()).get());
    updates.push_back(bin(kb_update, m.velocities[i].get(), v.get()));
    updates.push_back(bin(kb_update, vars[i], bin(kb_add, vars[i], v.get()).get()));
  }
  std::vector<kb_tensor*> update_handles;
  for (auto& u : updates) update_handles.push_back(u.get());
  m.step = function({x.get(), y.get()}, {loss.get()}, update_handles);
  return m;
}

// Batch `step` of the whole job: n*b rows, the same on every process.
void batch(int64_t step, int64_t rows, std::vector<float>& x, std::vector<float>& y) {
  std::mt19937 gen(1000 + uint32_t(step));
  x = random_values(gen, size_t(rows * kIn));
  y = random_values(gen, size_t(rows * kOut));
}

void train(Mlp& m, int64_t first_row, int64_t rows) {
  int32_t size = 0;
  ok(kb_dist_size(&size));
  for (int64_t s = 0; s < kSteps; ++s) {
    std::vector<float> x, y;
    batch(s, size * kRowsPerRank, x, y);
    std::vector<float> xs(x.begin() + first_row * kIn, x.begin() + (first_row + rows) * kIn);
    std::vector<float> ys(y.begin() + first_row * kOut, y.begin() + (first_row + rows) * kOut);
    Tensor xt = constant_f32(xs, {rows, kIn}), yt = constant_f32(ys, {rows, kOut});
    call(m.step, {xt.get(), yt.get()});
  }
}

TEST(DistMlp, TwoRanksWithBatchBEqualOneRankWithBatchNB) {
  int32_t rank = 0, size = 0;
  ok(kb_dist_rank(&rank));
  ok(kb_dist_size(&size));
  // Every rank draws different initial weights...
  std::mt19937 gen(7 + uint32_t(rank) * 7919);
  Mlp dist = build(gen, true);
  std::vector<kb_tensor*> all;
  for (auto& w : dist.weights) all.push_back(w.get());
  // ... and takes rank 0's.
  ok(kb_dist_broadcast_variables(all.data(), all.size(), 0));
  // The reference: the same start, every row, no collective.
  Mlp single = build(gen, false);
  for (size_t i = 0; i < dist.weights.size(); ++i) {
    auto v = values_f32(dist.weights[i]);
    Shape s = int_shape(dist.weights[i].get());
    ok(kb_set_value_data(single.weights[i].get(), v.data(), KB_FLOAT32, s.data(), s.size()));
  }
  train(dist, rank * kRowsPerRank, kRowsPerRank);
  train(single, 0, size * kRowsPerRank);
  for (size_t i = 0; i < dist.weights.size(); ++i) {
    auto got = values_f32(dist.weights[i]), want = values_f32(single.weights[i]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_NEAR(got[k], want[k], 1e-5f * std::max(1.f, std::fabs(want[k])))
          << "weight " << i << " entry " << k;
    // Bitwise equal across the ranks: rank 0's copy against this one's.
    Tensor mine = constant_f32(got, {int64_t(got.size())});
    Tensor root = make([&](kb_tensor** o) { return kb_broadcast(mine.get(), 0, o); });
    auto theirs = values_f32(root);
    EXPECT_EQ(std::memcmp(theirs.data(), got.data(), got.size() * sizeof(float)), 0)
        << "weight " << i << " differs from rank 0's";
  }
}

}  // namespace
