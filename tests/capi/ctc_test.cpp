// kb_ctc_batch_cost and kb_ctc_decode through the C ABI: values on inputs with a known answer,
// and bad input found when the graph is built (status, message, untouched out-parameters) and
// when a compiled function runs (lengths are data).
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

kb_tensor* const kT = reinterpret_cast<kb_tensor*>(uintptr_t(0x5a5a5a50));
kb_tensor_list* const kL = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x5a5a5a60));

Tensor cost(kb_tensor* y_true, kb_tensor* y_pred, kb_tensor* il, kb_tensor* ll) {
  return make([&](kb_tensor** o) { return kb_ctc_batch_cost(y_true, y_pred, il, ll, o); },
              "ctc_batch_cost");
}

struct Decoded {
  List paths;
  Tensor log_prob;
};
Decoded decode(kb_tensor* y_pred, kb_tensor* il, int32_t greedy, int64_t width, int64_t top) {
  kb_tensor_list* l = nullptr;
  kb_tensor* lp = nullptr;
  ok(kb_ctc_decode(y_pred, il, greedy, width, top, &l, &lp), "ctc_decode");
  return {List(l), Tensor::adopt(lp)};
}

std::vector<double> uniform(int64_t b, int64_t t, int64_t c) {
  return std::vector<double>(size_t(b * t * c), 1.0 / double(c));
}

}  // namespace

TEST(Ctc, BatchCostOfUniformProbabilities) {
  ConfigGuard config;
  // 15 = C(4 + 2, 4) alignments of a 2-label sequence in 4 steps, each of probability 3^-4.
  Tensor p = constant<float>(std::vector<float>(2 * 4 * 3, 1.0f / 3), {2, 4, 3});
  Tensor y = constant<int32_t>({0, 1, 1, 0}, {2, 2});
  Tensor il = constant<int32_t>({4, 3}, {2, 1});
  Tensor ll = constant<int32_t>({2, 1}, {2, 1});
  Tensor c = cost(y.get(), p.get(), il.get(), ll.get());
  EXPECT_EQ(int_shape(c.get()), (Shape{2, 1}));
  // second entry: label [1] in 3 steps: C(3 + 1, 2) = 6 alignments
  expect_near(values_f32(eval(c.get())), {float(4 * std::log(3.0) - std::log(15.0)),
                                          float(3 * std::log(3.0) - std::log(6.0))});
}

TEST(Ctc, DecodeGravesExample) {
  ConfigGuard config;
  ok(kb_set_epsilon(1e-12));
  // P(a) = 0.58 beats the best path "--" (0.42).
  Tensor p = constant<double>({0.3, 0.7, 0.4, 0.6}, {1, 2, 2});
  Tensor il = constant<int32_t>({2}, {1});
  Decoded g = decode(p.get(), il.get(), 1, 100, 1);
  ASSERT_EQ(kb_tensor_list_size(g.paths.get()), 1u);
  // paths are as wide as their longest sequence: blank blank decodes to nothing
  EXPECT_EQ(int_shape(at(g.paths, 0).get()), (Shape{1, -1}));
  EXPECT_EQ(int_shape(eval(at(g.paths, 0).get()).get()), (Shape{1, 0}));
  expect_near(values<double>(eval(g.log_prob.get()).get()), {-std::log(0.7) - std::log(0.6)}, 1e-9);

  Decoded b = decode(p.get(), il.get(), 0, 3, 2);
  ASSERT_EQ(kb_tensor_list_size(b.paths.get()), 2u);
  EXPECT_EQ(values<int64_t>(eval(at(b.paths, 0).get()).get()), (std::vector<int64_t>{0}));
  EXPECT_EQ(int_shape(eval(at(b.paths, 1).get()).get()), (Shape{1, 0}));
  expect_near(values<double>(eval(b.log_prob.get()).get()), {std::log(0.58 / 0.42), 0.0}, 1e-9);
}

TEST(Ctc, BadInputWhenBuilding) {
  ConfigGuard config;
  Tensor p = constant<double>(uniform(2, 5, 3), {2, 5, 3});
  Tensor p2 = constant<double>(uniform(1, 2, 5), {2, 5});
  Tensor pi = constant<int32_t>(std::vector<int32_t>(30, 1), {2, 5, 3});
  Tensor y = constant<int32_t>({0, 1, 1, 0}, {2, 2});
  Tensor y1 = constant<int32_t>({0, 1}, {2});
  Tensor y3 = constant<int32_t>({0, 1, 1, 0, 0, 1}, {3, 2});
  Tensor yb = constant<bool>({true, false, true, false}, {2, 2});
  Tensor n21 = constant<int32_t>({2, 2}, {2, 1});
  Tensor n2 = constant<int32_t>({5, 5}, {2});
  Tensor n31 = constant<int32_t>({2, 2, 2}, {3, 1});
  Tensor n3 = constant<int32_t>({5, 5, 5}, {3});
  Tensor n22 = constant<int32_t>({2, 2, 2, 2}, {2, 2});
  Tensor unk =
      make([](kb_tensor** o) { return kb_placeholder(nullptr, 0, -1, KB_FLOAT64, 0, "unk", o); });
  const kb_status INVALID = KB_ERROR_INVALID_ARGUMENT, SHAPE = KB_ERROR_SHAPE,
                  DTYPE = KB_ERROR_DTYPE;
  struct Case {
    std::string label;
    kb_status want;
    std::function<kb_status(kb_tensor**)> run;
  };
  auto B = [&](kb_tensor* yt, kb_tensor* yp, kb_tensor* il, kb_tensor* ll) {
    return [=](kb_tensor** o) { return kb_ctc_batch_cost(yt, yp, il, ll, o); };
  };
  std::vector<Case> cost_cases = {
      {"NULL y_true", INVALID, B(nullptr, p.get(), n21.get(), n21.get())},
      {"NULL y_pred", INVALID, B(y.get(), nullptr, n21.get(), n21.get())},
      {"NULL input_length", INVALID, B(y.get(), p.get(), nullptr, n21.get())},
      {"NULL label_length", INVALID, B(y.get(), p.get(), n21.get(), nullptr)},
      {"y_pred rank 2", SHAPE, B(y.get(), p2.get(), n21.get(), n21.get())},
      {"y_pred rank unknown", SHAPE, B(y.get(), unk.get(), n21.get(), n21.get())},
      {"y_pred int", DTYPE, B(y.get(), pi.get(), n21.get(), n21.get())},
      {"y_true rank 1", SHAPE, B(y1.get(), p.get(), n21.get(), n21.get())},
      {"y_true bool", DTYPE, B(yb.get(), p.get(), n21.get(), n21.get())},
      {"y_true batch 3", SHAPE, B(y3.get(), p.get(), n21.get(), n21.get())},
      {"input_length (B,)", SHAPE, B(y.get(), p.get(), n2.get(), n21.get())},
      {"input_length (B, 2)", SHAPE, B(y.get(), p.get(), n22.get(), n21.get())},
      {"label_length batch 3", SHAPE, B(y.get(), p.get(), n21.get(), n31.get())},
      {"input_length batch 3", SHAPE, B(y.get(), p.get(), n31.get(), n21.get())},
  };
  for (const Case& c : cost_cases) {
    SCOPED_TRACE(c.label);
    kb_tensor* out = kT;
    EXPECT_EQ(c.run(&out), c.want);
    std::string msg = kb_last_error_message();
    EXPECT_TRUE(starts_with(msg, "ctc_batch_cost: ")) << msg;
    EXPECT_EQ(out, kT);
    EXPECT_EQ(kb_last_error_code(), c.want);
  }
  EXPECT_EQ(kb_ctc_batch_cost(y.get(), p.get(), n21.get(), n21.get(), nullptr), INVALID);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "ctc_batch_cost: "));

  struct DCase {
    std::string label;
    kb_status want;
    kb_tensor* y_pred;
    kb_tensor* il;
    int32_t greedy;
    int64_t width, top;
  };
  std::vector<DCase> decode_cases = {
      {"NULL y_pred", INVALID, nullptr, n2.get(), 1, 1, 1},
      {"NULL input_length", INVALID, p.get(), nullptr, 1, 1, 1},
      {"y_pred rank 2", SHAPE, p2.get(), n2.get(), 1, 1, 1},
      {"y_pred int", DTYPE, pi.get(), n2.get(), 1, 1, 1},
      {"input_length (B, 1)", SHAPE, p.get(), n21.get(), 1, 1, 1},
      {"batch mismatch", SHAPE, p.get(), n3.get(), 0, 4, 1},
      {"top_paths > beam_width", INVALID, p.get(), n2.get(), 0, 2, 3},
      {"beam_width 0", INVALID, p.get(), n2.get(), 0, 0, 1},
      {"beam_width < 0", INVALID, p.get(), n2.get(), 0, -5, 1},
      {"top_paths 0", INVALID, p.get(), n2.get(), 0, 4, 0},
  };
  for (const DCase& c : decode_cases) {
    SCOPED_TRACE(c.label);
    kb_tensor_list* paths = kL;
    kb_tensor* lp = kT;
    EXPECT_EQ(kb_ctc_decode(c.y_pred, c.il, c.greedy, c.width, c.top, &paths, &lp), c.want);
    std::string msg = kb_last_error_message();
    EXPECT_TRUE(starts_with(msg, "ctc_decode: ")) << msg;
    EXPECT_EQ(paths, kL);
    EXPECT_EQ(lp, kT);
  }
  kb_tensor_list* paths = kL;
  kb_tensor* lp = kT;
  EXPECT_EQ(kb_ctc_decode(p.get(), n2.get(), 1, 1, 1, nullptr, &lp), INVALID);
  EXPECT_EQ(kb_ctc_decode(p.get(), n2.get(), 1, 1, 1, &paths, nullptr), INVALID);
  EXPECT_EQ(paths, kL);
  EXPECT_EQ(lp, kT);
}

TEST(Ctc, BadLengthsWhenRunning) {
  ConfigGuard config;
  Tensor p = placeholder({-1, 5, 3}, KB_FLOAT32, "y_pred");
  Tensor y = placeholder({-1, 2}, KB_INT32, "y_true");
  Tensor il = placeholder({-1, 1}, KB_INT32, "input_length");
  Tensor ll = placeholder({-1, 1}, KB_INT32, "label_length");
  Tensor c = cost(y.get(), p.get(), il.get(), ll.get());
  Function f = function({p.get(), y.get(), il.get(), ll.get()}, {c.get()});
  Tensor pv = constant<float>(std::vector<float>(30, 1.0f / 3), {2, 5, 3});
  Tensor yv = constant<int32_t>({0, 1, 1, 1}, {2, 2});
  struct Case {
    std::string label;
    std::vector<int32_t> il, ll;
    std::string text;
  };
  std::vector<Case> cases = {
      {"input_length > T", {5, 6}, {2, 1}, "input_length[1] = 6 is outside [0, 5]"},
      {"negative input_length", {-1, 5}, {1, 1}, "input_length[0] = -1"},
      {"label_length > L", {5, 5}, {3, 1}, "label_length[0] = 3 exceeds"},
      {"negative label_length", {5, 5}, {1, -2}, "label_length[1] = -2 is negative"},
      {"label_length 0", {5, 5}, {0, 1}, "label_length[0] is 0"},
      {"input shorter than label", {5, 1}, {2, 2}, "input_length[1] = 1 is shorter"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.label);
    Tensor ilv = constant<int32_t>(k.il, {2, 1});
    Tensor llv = constant<int32_t>(k.ll, {2, 1});
    std::vector<kb_tensor*> ins = {pv.get(), yv.get(), ilv.get(), llv.get()};
    kb_tensor_list* out = kL;
    EXPECT_EQ(kb_function_call(f.get(), ins.data(), ins.size(), &out), KB_ERROR_INVALID_ARGUMENT);
    std::string msg = kb_last_error_message();
    EXPECT_NE(msg.find("ctc_batch_cost: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(k.text), std::string::npos) << msg;
    EXPECT_EQ(out, kL);
  }
  // the same function still works with good lengths
  Tensor ilv = constant<int32_t>({5, 2}, {2, 1});
  Tensor llv = constant<int32_t>({2, 2}, {2, 1});
  List r = call(f, {pv.get(), yv.get(), ilv.get(), llv.get()});
  std::vector<float> v = out_f32(r, 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(std::isfinite(v[0]));
  // "1 1" needs a blank between the repeats: no alignment fits in 2 steps, +inf as in TensorFlow
  EXPECT_TRUE(std::isinf(v[1]) && v[1] > 0);

  // decoding: input_length beyond T
  Tensor dl = placeholder({-1}, KB_INT32, "lengths");
  Decoded d = decode(p.get(), dl.get(), 0, 4, 2);
  Function g = function({p.get(), dl.get()}, {at(d.paths, 0).get(), d.log_prob.get()});
  Tensor bad = constant<int32_t>({5, 7}, {2});
  std::vector<kb_tensor*> ins = {pv.get(), bad.get()};
  kb_tensor_list* out = kL;
  EXPECT_EQ(kb_function_call(g.get(), ins.data(), ins.size(), &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kb_last_error_message()).find("ctc_decode: input_length[1] = 7"),
            std::string::npos)
      << kb_last_error_message();
  EXPECT_EQ(out, kL);
}
