// kb_function_call_into: results written into the caller's tensors, the same values as
// kb_function_call, and every bad tensor rejected before anything runs.
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

kb_status call_into(const Function& f, const std::vector<kb_tensor*>& inputs,
                    const std::vector<kb_tensor*>& outputs) {
  return kb_function_call_into(f.get(), inputs.data(), inputs.size(), outputs.data(),
                               outputs.size());
}

std::vector<float> variable_values(kb_tensor* v) {
  return values_f32(make([&](kb_tensor** o) { return kb_get_value(v, o); }));
}

// y = x * 3 + 1, s = sum(x), and v += x as an update.
struct Fixture {
  Tensor x = placeholder({3});
  Tensor v = variable_f32({0, 0, 0}, {3}, "v");
  Tensor three = scalar_f32(3), one = scalar_f32(1);
  Tensor y = bin(kb_add, bin(kb_multiply, x.get(), three.get()).get(), one.get());
  Tensor s = make([&](kb_tensor** o) { return kb_sum(x.get(), nullptr, 0, 0, o); });
  Tensor upd = make([&](kb_tensor** o) { return kb_update_add(v.get(), x.get(), o); });
  Function f = function({x.get()}, {y.get(), s.get()}, {upd.get()});
};

}  // namespace

TEST(FunctionCallInto, WritesTheResultsOfEveryCall) {
  Fixture t;
  Tensor out_y = constant_f32({0, 0, 0}, {3});
  Tensor out_s = scalar_f32(0);
  for (int i = 1; i <= 4; ++i) {
    Tensor in = constant_f32({1.f * i, 2.f * i, -1.f * i}, {3});
    ok(call_into(t.f, {in.get()}, {out_y.get(), out_s.get()}), "call_into");
    expect_near(values_f32(out_y), {3.f * i + 1, 6.f * i + 1, -3.f * i + 1});
    expect_near(values_f32(out_s), {2.f * i});
    // The same values through kb_function_call on a fresh function of the same graph.
    Function g = function({t.x.get()}, {t.y.get(), t.s.get()});
    List r = call(g, {in.get()});
    expect_near(values_f32(out_y), out_f32(r, 0));
    expect_near(values_f32(out_s), out_f32(r, 1));
  }
  expect_near(variable_values(t.v.get()), {10, 20, -10});  // the update ran once per call
}

TEST(FunctionCallInto, EarlierResultsKeepTheirValues) {
  Fixture t;
  Tensor in = constant_f32({1, 2, 3}, {3});
  List r = call(t.f, {in.get()});
  Tensor earlier = at(r, 0);
  Tensor out_s = scalar_f32(0);
  // Writing into a tensor a call returned: another handle to the same value sees it; a value
  // it was copied from does not change.
  Tensor in2 = constant_f32({5, 5, 5}, {3});
  ok(call_into(t.f, {in2.get()}, {earlier.get(), out_s.get()}), "call_into");
  expect_near(values_f32(earlier), {16, 16, 16});
  expect_near(out_f32(r, 0), {16, 16, 16});  // the list holds the same tensor
  expect_near(values_f32(in), {1, 2, 3});
}

TEST(FunctionCallInto, AnOutputThatIsAlsoAnInputReadsItsOldValue) {
  Tensor x = placeholder({2});
  Tensor two = scalar_f32(2);
  Tensor y = bin(kb_multiply, x.get(), two.get());
  Function f = function({x.get()}, {y.get()});
  Tensor buf = constant_f32({1, 3}, {2});
  for (float k : {2.f, 4.f, 8.f}) {
    ok(call_into(f, {buf.get()}, {buf.get()}), "call_into");
    expect_near(values_f32(buf), {k, 3 * k});
  }
}

TEST(FunctionCallInto, ACompiledConstantKeepsItsValue) {
  // c is folded into g's plan; writing a result into c gives c a new value without changing
  // what g computes with.
  Tensor c = constant_f32({10, 20}, {2});
  Tensor x = placeholder({2});
  Tensor g_out = bin(kb_add, x.get(), c.get());
  Function g = function({x.get()}, {g_out.get()});
  Tensor zero = constant_f32({0, 0}, {2});
  expect_near(out_f32(call(g, {zero.get()}), 0), {10, 20});
  Tensor neg = un(kb_negative, x.get());
  Function f = function({x.get()}, {neg.get()});
  Tensor in = constant_f32({1, 2}, {2});
  ok(call_into(f, {in.get()}, {c.get()}), "call_into");
  expect_near(values_f32(c), {-1, -2});
  expect_near(out_f32(call(g, {zero.get()}), 0), {10, 20});
}

TEST(FunctionCallInto, RejectsBadTensorsBeforeRunning) {
  Fixture t;
  Tensor in = constant_f32({1, 1, 1}, {3});
  Tensor out_y = constant_f32({7, 7, 7}, {3});
  Tensor out_s = scalar_f32(7);
  Tensor wrong_shape = constant_f32({7, 7}, {2});
  Tensor wrong_dtype = constant<double>({7}, {});
  auto unchanged = [&] {
    expect_near(values_f32(out_y), {7, 7, 7});
    expect_near(values_f32(out_s), {7});
    expect_near(variable_values(t.v.get()), {0, 0, 0});
  };
  EXPECT_EQ(call_into(t.f, {in.get()}, {wrong_shape.get(), out_s.get()}), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: output tensor 0 has shape"))
      << kb_last_error_message();
  EXPECT_EQ(call_into(t.f, {in.get()}, {out_y.get(), wrong_dtype.get()}), KB_ERROR_DTYPE);
  const std::string v_name = tensor_name(t.v.get());  // read before: a call sets the error
  EXPECT_EQ(call_into(t.f, {in.get()}, {out_y.get(), t.v.get()}), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(kb_last_error_message(),
                          "function: output tensor 1 ('" + v_name + "') is a variable"))
      << kb_last_error_message();
  EXPECT_EQ(call_into(t.f, {in.get()}, {out_y.get(), t.s.get()}), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call_into(t.f, {in.get()}, {out_y.get(), out_y.get()}), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call_into(t.f, {in.get()}, {out_y.get()}), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call_into(t.f, {in.get()}, {out_y.get(), nullptr}), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_function_call_into(t.f.get(), nullptr, 1, nullptr, 0), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_function_call_into(nullptr, nullptr, 0, nullptr, 0), KB_ERROR_INVALID_ARGUMENT);
  Tensor bad_in = constant_f32({1, 1}, {2});
  EXPECT_EQ(call_into(t.f, {bad_in.get()}, {out_y.get(), out_s.get()}), KB_ERROR_SHAPE);
  unchanged();
  ok(call_into(t.f, {in.get()}, {out_y.get(), out_s.get()}), "call_into");
  expect_near(values_f32(out_y), {4, 4, 4});
  expect_near(variable_values(t.v.get()), {1, 1, 1});
}
