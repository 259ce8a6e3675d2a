// The C ABI used from several threads at once: threads that build and train their own models,
// threads sharing one compiled function, handles released on other threads than the ones that
// made them, process-wide settings changed while others train. Every result must equal, bit for
// bit, the same work done on one thread. scripts/test.sh also runs these under ThreadSanitizer.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

constexpr int kThreads = 4;

// Deterministic data of a given seed (no library random numbers involved).
std::vector<float> data(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1u << 24) - 0.5f;
  }
  return v;
}

// A dense softmax classifier trained 20 SGD steps; returns its final weights and loss values.
std::vector<float> train_model(uint32_t seed) {
  const int64_t n = 16, in = 8, classes = 4;
  Tensor w = variable_f32(data(size_t(in * classes), seed), {in, classes});
  Tensor b = variable_f32(std::vector<float>(size_t(classes), 0.0f), {classes});
  Tensor x = placeholder({-1, in});
  Tensor y = placeholder({-1, classes});
  Tensor logits = make([&](kb_tensor** o) {
    Tensor xw = bin(kb_dot, x.get(), w.get());
    return kb_bias_add(xw.get(), b.get(), KB_CHANNELS_LAST, o);
  });
  Tensor losses = make(
      [&](kb_tensor** o) { return kb_categorical_crossentropy(y.get(), logits.get(), 1, -1, o); });
  Tensor loss = make([&](kb_tensor** o) { return kb_mean(losses.get(), nullptr, 0, 0, o); });
  kb_tensor* params[2] = {w.get(), b.get()};
  kb_tensor_list* grads_raw = nullptr;
  ok(kb_gradients(loss.get(), params, 2, &grads_raw), "gradients");
  List grads(grads_raw);
  Tensor lr = scalar_f32(0.5f);
  std::vector<Tensor> updates;
  for (size_t i = 0; i < 2; ++i) {
    Tensor g = at(grads, i);
    Tensor step = bin(kb_multiply, g.get(), lr.get());
    updates.push_back(make([&](kb_tensor** o) { return kb_update_sub(params[i], step.get(), o); }));
  }
  Function f = function({x.get(), y.get()}, {loss.get()}, {updates[0].get(), updates[1].get()});
  std::vector<float> xs = data(size_t(n * in), seed + 1);
  std::vector<float> ys(size_t(n * classes), 0.0f);
  for (int64_t r = 0; r < n; ++r) ys[size_t(r * classes + (r * 7 + seed) % classes)] = 1.0f;
  Tensor xv = constant_f32(xs, {n, in}), yv = constant_f32(ys, {n, classes});
  std::vector<float> out;
  for (int step = 0; step < 20; ++step) out.push_back(out_f32(call(f, {xv.get(), yv.get()}), 0)[0]);
  for (float v : values_f32(eval(w.get()).get())) out.push_back(v);
  for (float v : values_f32(eval(b.get()).get())) out.push_back(v);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Concurrency, ThreadsTrainingTheirOwnModelsMatchOneThread) {
  std::vector<std::vector<float>> alone;
  for (int t = 0; t < kThreads; ++t) alone.push_back(train_model(uint32_t(t + 1)));
  std::vector<std::vector<float>> together(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { together[size_t(t)] = train_model(uint32_t(t + 1)); });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(same_bits(alone[size_t(t)], together[size_t(t)]));
}

TEST(Concurrency, ThreadsSharingOneCompiledFunction) {
  const int64_t n = 32, in = 16, out = 8;
  Tensor w = constant_f32(data(size_t(in * out), 7), {in, out});
  Tensor x = placeholder({-1, in});
  Tensor h = make([&](kb_tensor** o) {
    Tensor xw = bin(kb_dot, x.get(), w.get());
    return kb_softmax(xw.get(), -1, o);
  });
  Function f = function({x.get()}, {h.get()});
  std::vector<Tensor> inputs;
  std::vector<std::vector<float>> alone;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(constant_f32(data(size_t(n * in), uint32_t(100 + t)), {n, in}));
    alone.push_back(out_f32(call(f, {inputs.back().get()}), 0));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 100; ++k)
        if (!same_bits(out_f32(call(f, {inputs[size_t(t)].get()}), 0), alone[size_t(t)]))
          ++mismatches;
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches, 0);
}

TEST(Concurrency, HandlesReleasedOnOtherThreads) {
  std::vector<kb_tensor*> made(200, nullptr);
  std::thread maker([&] {
    Tensor x = placeholder({-1, 3});
    for (kb_tensor*& t : made) {
      ok(kb_square(x.get(), &t), "square");
      kb_tensor_retain(t);  // two references, dropped by two other threads
    }
  });
  maker.join();
  std::thread a([&] {
    for (size_t i = 0; i < made.size(); i += 2) kb_tensor_release(made[i]);
    for (size_t i = 1; i < made.size(); i += 2) kb_tensor_release(made[i]);
  });
  std::thread b([&] {
    for (size_t i = 1; i < made.size(); i += 2) kb_tensor_release(made[i]);
    for (size_t i = 0; i < made.size(); i += 2) kb_tensor_release(made[i]);
  });
  a.join();
  b.join();
}

TEST(Concurrency, SettingsChangedWhileOthersTrain) {
  std::vector<std::vector<float>> alone;
  for (int t = 0; t < 2; ++t) alone.push_back(train_model(uint32_t(t + 11)));
  std::atomic<bool> stop{false};
  // Settings that no training graph here reads: each change must neither race nor leak into the
  // other threads' results.
  std::thread changer([&] {
    int64_t uid = 0;
    while (!stop) {
      ok(kb_name_scope_push("scope"), "name_scope_push");
      ok(kb_get_uid("layer", &uid), "get_uid");
      ok(kb_name_scope_pop(), "name_scope_pop");
      ok(kb_learning_phase_scope_push(1), "learning_phase_scope_push");
      ok(kb_learning_phase_scope_pop(), "learning_phase_scope_pop");
      ok(kb_set_image_data_format(KB_CHANNELS_FIRST), "set_image_data_format");
      ok(kb_set_image_data_format(KB_CHANNELS_LAST), "set_image_data_format");
      int32_t n = 0;
      ok(kb_num_threads(&n), "num_threads");
    }
  });
  std::vector<std::vector<float>> together(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] { together[size_t(t)] = train_model(uint32_t(t + 11)); });
  for (std::thread& th : threads) th.join();
  stop = true;
  changer.join();
  for (int t = 0; t < 2; ++t) EXPECT_TRUE(same_bits(alone[size_t(t)], together[size_t(t)]));
}

}  // namespace
