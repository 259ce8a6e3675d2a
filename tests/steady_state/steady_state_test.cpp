// A compiled function's steady state asks the heap for nothing: calls through
// kb_function_call_into with the same tensors, after a few warm-up calls, are counted with the
// allocation counter of the benchmarks (the malloc family defined in this executable). oneDNN's
// own allocations (its sgemm's workspace, one block per product) are told apart by their call
// stacks and reported, not failed on: they are oneDNN's to remove.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "../../bench/alloc_counter.h"
#include "capi/helpers.h"

using namespace kbt;

namespace {

// Allocations outside oneDNN made by `calls` calls of f after `warmup` calls (the handle arrays
// are made before counting).
uint64_t allocations_per_run(const Function& f, const std::vector<kb_tensor*>& inputs,
                             const std::vector<kb_tensor*>& outputs, int warmup = 3,
                             int calls = 50) {
  auto step = [&] {
    ok(kb_function_call_into(f.get(), inputs.data(), inputs.size(), outputs.data(), outputs.size()),
       "call_into");
  };
  for (int i = 0; i < warmup; ++i) step();
  kb_bench::attribute_allocations(true);
  uint64_t before = kb_bench::heap_allocations(), onednn_before = kb_bench::onednn_allocations();
  for (int i = 0; i < calls; ++i) step();
  uint64_t all = kb_bench::heap_allocations() - before;
  uint64_t onednn = kb_bench::onednn_allocations() - onednn_before;
  kb_bench::attribute_allocations(false);
  std::printf("  %d calls: %llu allocations inside oneDNN, %llu elsewhere\n", calls,
              (unsigned long long)onednn, (unsigned long long)(all - onednn));
  return all - onednn;
}

Tensor random_variable(std::vector<int64_t> shape, int64_t seed) {
  return make([&](kb_tensor** o) {
    return kb_random_normal_variable(shape.data(), shape.size(), 0, 0.3, KB_FLOAT32, "w", &seed, o);
  });
}

Tensor data(const std::vector<int64_t>& shape, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = scale * float((i * 37) % 11 - 5);
  return constant_f32(v, shape);
}

// SGD updates w -= 0.1 * dloss/dw for every parameter; the new values as update tensors.
std::vector<Tensor> sgd(kb_tensor* loss, const std::vector<kb_tensor*>& params) {
  kb_tensor_list* grads = nullptr;
  ok(kb_gradients(loss, params.data(), params.size(), &grads), "gradients");
  List g(grads);
  Tensor lr = scalar_f32(0.1f);
  std::vector<Tensor> updates;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor step = bin(kb_multiply, at(g, i).get(), lr.get());
    updates.push_back(make([&](kb_tensor** o) { return kb_update_sub(params[i], step.get(), o); }));
  }
  return updates;
}

}  // namespace

TEST(SteadyState, TinyFunctionCallAllocatesNothing) {
  Tensor a = placeholder({1}), b = placeholder({1});
  Tensor c = bin(kb_add, a.get(), b.get());
  Function f = function({a.get(), b.get()}, {c.get()});
  Tensor da = constant_f32({1}, {1}), db = constant_f32({2}, {1}), out = constant_f32({0}, {1});
  EXPECT_EQ(allocations_per_run(f, {da.get(), db.get()}, {out.get()}, 3, 1000), 0u);
  expect_near(values_f32(out), {3});
}

TEST(SteadyState, MlpTrainingStepAllocatesNothing) {
  // 32 x 20 -> 16 (relu) -> 4 (softmax), categorical crossentropy, SGD.
  Tensor x = placeholder({32, 20}), y = placeholder({32, 4});
  Tensor w1 = random_variable({20, 16}, 1), w2 = random_variable({16, 4}, 2);
  Tensor b1 = make([](kb_tensor** o) {
    int64_t s = 16;
    return kb_zeros(&s, 1, KB_FLOAT32, "b1", o);
  });
  Tensor z1 = make([&](kb_tensor** o) {
    return kb_bias_add(bin(kb_dot, x.get(), w1.get()).get(), b1.get(), KB_CHANNELS_LAST, o);
  });
  Tensor h = make([&](kb_tensor** o) { return kb_relu(z1.get(), 0, nullptr, 0, o); });
  Tensor p =
      make([&](kb_tensor** o) { return kb_softmax(bin(kb_dot, h.get(), w2.get()).get(), -1, o); });
  Tensor ce =
      make([&](kb_tensor** o) { return kb_categorical_crossentropy(y.get(), p.get(), 0, -1, o); });
  Tensor loss = make([&](kb_tensor** o) { return kb_mean(ce.get(), nullptr, 0, 0, o); });
  std::vector<Tensor> updates = sgd(loss.get(), {w1.get(), b1.get(), w2.get()});
  Function f = function({x.get(), y.get()}, {loss.get()},
                        {updates[0].get(), updates[1].get(), updates[2].get()});
  Tensor dx = data({32, 20}, 0.1f);
  std::vector<float> onehot(32 * 4, 0.f);
  for (int i = 0; i < 32; ++i) onehot[size_t(i * 4 + i % 4)] = 1.f;
  Tensor dy = constant_f32(onehot, {32, 4});
  Tensor out = scalar_f32(0);
  std::vector<kb_tensor*> ins = {dx.get(), dy.get()}, outs = {out.get()};
  ok(kb_function_call_into(f.get(), ins.data(), 2, outs.data(), 1), "call_into");
  float first = values_f32(out)[0];
  EXPECT_EQ(allocations_per_run(f, ins, outs), 0u);
  EXPECT_LT(values_f32(out)[0], first);  // it trains
}

namespace {
// h_t = tanh(x_t W + h_{t-1} U); user_data holds {W, U}.
kb_status rnn_step(void* user_data, kb_tensor* input, kb_tensor* const* states, size_t,
                   kb_tensor** output, kb_tensor_list** new_states) {
  auto* wu = static_cast<kb_tensor**>(user_data);
  kb_tensor *xw, *hu, *sum, *h;
  kb_dot(input, wu[0], &xw);
  kb_dot(states[0], wu[1], &hu);
  kb_add(xw, hu, &sum);
  kb_tanh(sum, &h);
  kb_tensor_release(xw);
  kb_tensor_release(hu);
  kb_tensor_release(sum);
  kb_tensor_list_new(&h, 1, new_states);
  *output = h;
  return KB_OK;
}
}  // namespace

TEST(SteadyState, RnnTrainingStepAllocatesNothing) {
  // 8 sequences of 6 steps of 5 features, 12 units; loss = mean of the outputs squared.
  Tensor x = placeholder({8, 6, 5});
  Tensor w = random_variable({5, 12}, 3), u = random_variable({12, 12}, 4);
  Tensor h0 = make([](kb_tensor** o) {
    int64_t s[2] = {8, 12};
    return kb_zeros(s, 2, KB_FLOAT32, "h0", o);
  });
  kb_tensor* wu[2] = {w.get(), u.get()};
  kb_tensor *last = nullptr, *outputs = nullptr;
  kb_tensor_list* states = nullptr;
  kb_tensor* init[1] = {h0.get()};
  ok(kb_rnn(rnn_step, wu, x.get(), init, 1, 0, nullptr, nullptr, 0, 0, nullptr, &last, &outputs,
            &states),
     "rnn");
  Tensor last_t = Tensor::adopt(last), outputs_t = Tensor::adopt(outputs);
  List states_l(states);
  Tensor sq = un(kb_square, outputs_t.get());
  Tensor loss = make([&](kb_tensor** o) { return kb_mean(sq.get(), nullptr, 0, 0, o); });
  std::vector<Tensor> updates = sgd(loss.get(), {w.get(), u.get()});
  Function f =
      function({x.get()}, {loss.get(), last_t.get()}, {updates[0].get(), updates[1].get()});
  Tensor dx = data({8, 6, 5}, 0.2f);
  Tensor out_loss = scalar_f32(0),
         out_last = constant_f32(std::vector<float>(8 * 12, 0.f), {8, 12});
  std::vector<kb_tensor*> ins = {dx.get()}, outs = {out_loss.get(), out_last.get()};
  ok(kb_function_call_into(f.get(), ins.data(), 1, outs.data(), 2), "call_into");
  float first = values_f32(out_loss)[0];
  EXPECT_EQ(allocations_per_run(f, ins, outs), 0u);
  EXPECT_LT(values_f32(out_loss)[0], first);
}
