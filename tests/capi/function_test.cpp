// kb_function semantics: pre-update outputs, updates, moving averages, the plan cache, input
// checking, eval, get/set_value and print_tensor.
#include <string>
#include <thread>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

Tensor scaled(kb_tensor* x, float k) {
  Tensor c = scalar_f32(k);
  return bin(kb_multiply, x, c.get());
}

std::vector<float> get_value_f32(kb_tensor* v) {
  return values_f32(make([&](kb_tensor** o) { return kb_get_value(v, o); }));
}

}  // namespace

TEST(Function, OutputsSeeOldValuesAndUpdatesApplyAfter) {
  Tensor v = variable_f32({1, 2}, {2}, "v");
  Tensor out = scaled(v.get(), 2);
  Tensor ten = scalar_f32(10);
  Tensor plus = bin(kb_add, v.get(), ten.get());
  Tensor upd = make([&](kb_tensor** o) { return kb_update(v.get(), plus.get(), o); });
  // Outputs: an expression of v, v itself and the update op (whose value is the new value).
  Function f = function({}, {out.get(), v.get(), upd.get()}, {upd.get()});

  List r1 = call(f);
  ASSERT_EQ(kb_tensor_list_size(r1.get()), 3u);
  expect_near(out_f32(r1, 0), {2, 4});
  expect_near(out_f32(r1, 1), {1, 2});
  expect_near(out_f32(r1, 2), {11, 12});
  expect_near(get_value_f32(v.get()), {11, 12});

  List r2 = call(f);
  expect_near(out_f32(r2, 0), {22, 24});
  expect_near(out_f32(r2, 1), {11, 12});
  expect_near(get_value_f32(v.get()), {21, 22});
  // Results of the first call keep their values.
  expect_near(out_f32(r1, 1), {1, 2});
}

TEST(Function, UpdateAddAndUpdateSub) {
  Tensor a = variable_f32({1, 2}, {2});
  Tensor b = variable_f32({10, 20}, {2});
  Tensor inc = constant_f32({0.5f, 1.5f}, {2});
  Tensor ua = make([&](kb_tensor** o) { return kb_update_add(a.get(), inc.get(), o); });
  Tensor us = make([&](kb_tensor** o) { return kb_update_sub(b.get(), inc.get(), o); });
  Function f = function({}, {a.get(), b.get()}, {ua.get(), us.get()});
  List r = call(f);
  expect_near(out_f32(r, 0), {1, 2});
  expect_near(out_f32(r, 1), {10, 20});
  expect_near(get_value_f32(a.get()), {1.5f, 3.5f});
  expect_near(get_value_f32(b.get()), {9.5f, 18.5f});
  List r2 = call(f);
  expect_near(get_value_f32(a.get()), {2, 5});
  expect_near(get_value_f32(b.get()), {9, 17});
}

TEST(Function, UpdateAddConvertsTheIncrementDtype) {
  Tensor a = variable_f32({1, 2}, {2});
  Tensor inc = constant<int32_t>({3, 4}, {2});
  Tensor ua = make([&](kb_tensor** o) { return kb_update_add(a.get(), inc.get(), o); });
  Function f = function({}, {}, {ua.get()});
  List r = call(f);
  EXPECT_EQ(kb_tensor_list_size(r.get()), 0u);
  expect_near(get_value_f32(a.get()), {4, 6});
}

TEST(Function, TwoUpdatesInOneCallSwapValues) {
  // Every update value is computed from the old values before any variable is written.
  Tensor a = variable_f32({1, 2}, {2}, "a");
  Tensor b = variable_f32({3, 4}, {2}, "b");
  Tensor ua = make([&](kb_tensor** o) { return kb_update(a.get(), b.get(), o); });
  Tensor ub = make([&](kb_tensor** o) { return kb_update(b.get(), a.get(), o); });
  Function f = function({}, {}, {ua.get(), ub.get()});
  List r = call(f);
  expect_near(get_value_f32(a.get()), {3, 4});
  expect_near(get_value_f32(b.get()), {1, 2});

  // After a = b, the two variables are independent: changing b leaves a alone.
  Function copy = function({}, {}, {ua.get()});
  List r2 = call(copy);
  expect_near(get_value_f32(a.get()), {1, 2});
  Tensor one = scalar_f32(1);
  Tensor bump = make([&](kb_tensor** o) { return kb_update_add(b.get(), one.get(), o); });
  Function g = function({}, {}, {bump.get()});
  List r3 = call(g);
  expect_near(get_value_f32(b.get()), {2, 3});
  expect_near(get_value_f32(a.get()), {1, 2});
  KB_EXPECT_OK(kb_set_value_data(b.get(), std::vector<float>{7, 8}.data(), KB_FLOAT32,
                                 std::vector<int64_t>{2}.data(), 1));
  expect_near(get_value_f32(a.get()), {1, 2});
}

TEST(Function, UpdatesFedFromAPlaceholder) {
  Tensor w = variable_f32({0, 0, 0}, {3});
  Tensor n = variable_f32({0}, {});
  Tensor p = placeholder({3}, KB_FLOAT32, "delta");
  Tensor uw = make([&](kb_tensor** o) { return kb_update_add(w.get(), p.get(), o); });
  Tensor one = scalar_f32(1);
  Tensor un_ = make([&](kb_tensor** o) { return kb_update_add(n.get(), one.get(), o); });
  Function f = function({p.get()}, {w.get()}, {uw.get(), un_.get()});
  Tensor d1 = constant_f32({1, 2, 3}, {3});
  Tensor d2 = constant_f32({10, 20, 30}, {3});
  List r1 = call(f, {d1.get()});
  expect_near(out_f32(r1, 0), {0, 0, 0});
  List r2 = call(f, {d2.get()});
  expect_near(out_f32(r2, 0), {1, 2, 3});
  expect_near(get_value_f32(w.get()), {11, 22, 33});
  expect_near(get_value_f32(n.get()), {2});
}

TEST(Function, MovingAverageUpdateIsZeroDebiased) {
  const double m = 0.9;
  Tensor x = variable_f32({5, -5}, {2}, "moving_mean");
  Tensor p = placeholder({2}, KB_FLOAT32, "batch_mean");
  Tensor u = make([&](kb_tensor** o) { return kb_moving_average_update(x.get(), p.get(), m, o); });
  Function f = function({p.get()}, {x.get()}, {u.get()});

  std::vector<std::vector<float>> feeds = {{2, 4}, {4, 0}, {1, 1}, {-3, 8}};
  std::vector<double> biased = {0, 0};
  for (size_t step = 1; step <= feeds.size(); ++step) {
    Tensor in = constant_f32(feeds[step - 1], {2});
    List r = call(f, {in.get()});
    std::vector<float> now = get_value_f32(x.get());
    ASSERT_EQ(now.size(), 2u);
    if (step == 1) {
      // The first run ignores x's old value and sets x = value.
      EXPECT_FLOAT_EQ(now[0], 2.0f);
      EXPECT_FLOAT_EQ(now[1], 4.0f);
      expect_near(out_f32(r, 0), {5, -5});
    }
    double debias = 1 - std::pow(m, double(step));
    for (size_t i = 0; i < 2; ++i) {
      biased[i] = m * biased[i] + (1 - m) * feeds[step - 1][i];
      EXPECT_NEAR(now[i], biased[i] / debias, 1e-4) << "step " << step << " index " << i;
    }
  }
}

TEST(Function, MovingAverageUpdateRejectsIntegerVariables) {
  Tensor x = variable<int32_t>({1, 2}, {2});
  Tensor v = constant<int32_t>({1, 2}, {2});
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_moving_average_update(x.get(), v.get(), 0.9, &out), KB_ERROR_DTYPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "moving_average_update: "))
      << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
}

TEST(Function, PlanCacheWithChangingBatchSize) {
  Tensor p = placeholder({-1, 3}, KB_FLOAT32, "rows");
  Tensor bias = variable_f32({1, 2, 3}, {3});
  Tensor y = bin(kb_add, p.get(), bias.get());
  int64_t axis = 1;
  Tensor s = make([&](kb_tensor** o) { return kb_sum(y.get(), &axis, 1, 0, o); });
  Function f = function({p.get()}, {y.get(), s.get()});

  auto feed = [&](int64_t rows) {
    std::vector<float> data(size_t(rows * 3));
    for (size_t i = 0; i < data.size(); ++i) data[i] = float(i) + 100.0f * float(rows);
    Tensor in = constant_f32(data, {rows, 3});
    List r = call(f, {in.get()});
    Tensor y0 = at(r, 0);
    Tensor s0 = at(r, 1);
    EXPECT_EQ(int_shape(y0.get()), (Shape{rows, 3}));
    EXPECT_EQ(int_shape(s0.get()), (Shape{rows}));
    std::vector<float> want_y(data.size()), want_s(size_t(rows), 0);
    for (size_t i = 0; i < data.size(); ++i) {
      want_y[i] = data[i] + float(i % 3 + 1);
      want_s[i / 3] += want_y[i];
    }
    expect_near(values_f32(y0), want_y);
    expect_near(values_f32(s0), want_s);
  };
  feed(4);
  feed(2);
  feed(4);
  feed(1);
}

TEST(Function, AShapeThePlaceholderRejectsIsAShapeError) {
  Tensor p = placeholder({-1, 3}, KB_FLOAT32, "rows");
  Tensor y = scaled(p.get(), 2);
  Function f = function({p.get()}, {y.get()});
  Tensor bad = constant_f32({1, 2, 3, 4}, {2, 2});
  kb_tensor_list* out = nullptr;
  kb_tensor* ins[] = {bad.get()};
  EXPECT_EQ(kb_function_call(f.get(), ins, 1, &out), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_NE(std::string(kb_last_error_message()).find("'" + tensor_name(p.get()) + "'"),
            std::string::npos)
      << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
  // A good call still works afterwards.
  Tensor good = constant_f32({1, 2, 3}, {1, 3});
  List r = call(f, {good.get()});
  expect_near(out_f32(r, 0), {2, 4, 6});
}

TEST(Function, MissingInputIsAnErrorNamingThePlaceholder) {
  Tensor p = placeholder({2}, KB_FLOAT32, "images");
  Tensor q = placeholder({2}, KB_FLOAT32, "labels");
  Tensor y = bin(kb_add, p.get(), q.get());
  kb_compiled_function* f = nullptr;
  kb_tensor* ins[] = {p.get()};
  kb_tensor* outs[] = {y.get()};
  EXPECT_EQ(kb_function(ins, 1, outs, 1, nullptr, 0, &f), KB_ERROR_INVALID_ARGUMENT);
  std::string msg = kb_last_error_message();
  EXPECT_TRUE(starts_with(msg, "function: ")) << msg;
  EXPECT_NE(msg.find("'" + tensor_name(q.get()) + "'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("'" + tensor_name(p.get()) + "'"), std::string::npos) << msg;
  EXPECT_EQ(f, nullptr);
  kb_clear_error();
  EXPECT_EQ(kb_last_error_code(), KB_OK);

  // A placeholder needed only by an update is missing too.
  Tensor v = variable_f32({0, 0}, {2});
  Tensor u = make([&](kb_tensor** o) { return kb_update(v.get(), q.get(), o); });
  kb_tensor* ups[] = {u.get()};
  EXPECT_EQ(kb_function(ins, 1, nullptr, 0, ups, 1, &f), KB_ERROR_INVALID_ARGUMENT);
  msg = kb_last_error_message();
  EXPECT_TRUE(starts_with(msg, "function: ")) << msg;
  EXPECT_NE(msg.find("'" + tensor_name(q.get()) + "'"), std::string::npos) << msg;
  EXPECT_EQ(f, nullptr);
  kb_clear_error();
}

TEST(Function, WrongNumberOfInputs) {
  Tensor p = placeholder({2}, KB_FLOAT32, "x");
  Tensor y = scaled(p.get(), 3);
  Function f = function({p.get()}, {y.get()});
  Tensor a = constant_f32({1, 2}, {2});
  kb_tensor* two[] = {a.get(), a.get()};
  kb_tensor_list* sentinel = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x10));
  kb_tensor_list* out = sentinel;
  EXPECT_EQ(kb_function_call(f.get(), nullptr, 0, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_NE(std::string(kb_last_error_message()).find("expected 1 inputs, got 0"),
            std::string::npos)
      << kb_last_error_message();
  EXPECT_EQ(out, sentinel);
  EXPECT_EQ(kb_function_call(f.get(), two, 2, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_EQ(out, sentinel);
  kb_clear_error();
  List r = call(f, {a.get()});
  expect_near(out_f32(r, 0), {3, 6});
}

TEST(Function, InputsAreConvertedToThePlaceholderDtype) {
  Tensor p = placeholder({-1, 2}, KB_FLOAT32, "x");
  Tensor y = scaled(p.get(), 0.5f);
  Function f = function({p.get()}, {y.get()});
  Tensor d = constant<double>({1, 2, 3, 4}, {2, 2});
  List r = call(f, {d.get()});
  Tensor out = at(r, 0);
  EXPECT_EQ(dtype_of(out.get()), KB_FLOAT32);
  expect_near(values_f32(out), {0.5f, 1, 1.5f, 2});
  Tensor i = constant<int32_t>({2, 4}, {1, 2});
  List r2 = call(f, {i.get()});
  expect_near(out_f32(r2, 0), {1, 2});
  // And float32 again (a different cached plan key must not confuse anything).
  Tensor g = constant_f32({8, 6}, {1, 2});
  List r3 = call(f, {g.get()});
  expect_near(out_f32(r3, 0), {4, 3});
}

TEST(Function, AnInputMustBeAConcreteValue) {
  Tensor p = placeholder({2}, KB_FLOAT32, "x");
  Tensor y = scaled(p.get(), 3);
  Function f = function({p.get()}, {y.get()});
  kb_tensor* ins[] = {p.get()};  // a placeholder is not a value
  kb_tensor_list* out = nullptr;
  EXPECT_EQ(kb_function_call(f.get(), ins, 1, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
}

TEST(Function, BuildTimeErrors) {
  Tensor p = placeholder({2}, KB_FLOAT32, "x");
  Tensor v = variable_f32({1, 2}, {2});
  Tensor y = scaled(p.get(), 3);
  kb_compiled_function* f = nullptr;
  struct Case {
    std::vector<kb_tensor*> ins, outs, ups;
    const char* needle;
  };
  std::vector<Case> cases = {
      {{v.get()}, {y.get()}, {}, "is not a placeholder"},
      {{y.get()}, {y.get()}, {}, "is not a placeholder"},
      {{p.get(), p.get()}, {y.get()}, {}, "given twice"},
      {{p.get()}, {y.get()}, {y.get()}, "is not an update"},
  };
  for (auto& c : cases) {
    EXPECT_EQ(kb_function(c.ins.data(), c.ins.size(), c.outs.data(), c.outs.size(), c.ups.data(),
                          c.ups.size(), &f),
              KB_ERROR_INVALID_ARGUMENT);
    std::string msg = kb_last_error_message();
    EXPECT_TRUE(starts_with(msg, "function: ")) << msg;
    EXPECT_NE(msg.find(c.needle), std::string::npos) << msg;
    EXPECT_EQ(f, nullptr);
    kb_clear_error();
  }
}

TEST(Function, NoInputsNoOutputs) {
  Function f = function({}, {});
  List r = call(f);
  EXPECT_EQ(kb_tensor_list_size(r.get()), 0u);
}

TEST(Function, ReleasingHandlesKeepsTheFunctionUsable) {
  Function f;
  {
    Tensor p = placeholder({2}, KB_FLOAT32, "x");
    Tensor v = variable_f32({1, 1}, {2});
    Tensor y = bin(kb_add, p.get(), v.get());
    f = function({p.get()}, {y.get()});
  }
  Tensor in = constant_f32({1, 2}, {2});
  List r = call(f, {in.get()});
  Tensor o = at(r, 0);
  r.reset();
  f = Function();
  expect_near(values_f32(o), {2, 3});  // an output outlives its list and the function
}

// ---- eval ------------------------------------------------------------------------------------

TEST(Eval, VariableAndConstantExpressions) {
  Tensor v = variable_f32({1, 2, 3}, {3});
  Tensor c = constant_f32({2, 2, 2}, {3});
  Tensor prod = bin(kb_multiply, v.get(), c.get());
  Tensor one = scalar_f32(1);
  Tensor e = bin(kb_add, prod.get(), one.get());
  Tensor r = eval(e.get());
  expect_near(values_f32(r), {3, 5, 7});
  expect_near(values_f32(eval(v.get())), {1, 2, 3});
  expect_near(values_f32(eval(c.get())), {2, 2, 2});
  // copy_to evaluates too.
  std::vector<float> buf(3);
  KB_EXPECT_OK(kb_tensor_copy_to(e.get(), buf.data(), buf.size() * sizeof(float)));
  expect_near(buf, {3, 5, 7});
  // eval sees the current variable value.
  KB_EXPECT_OK(kb_set_value_data(v.get(), std::vector<float>{0, 0, 1}.data(), KB_FLOAT32,
                                 std::vector<int64_t>{3}.data(), 1));
  expect_near(values_f32(eval(e.get())), {1, 1, 3});
  expect_near(values_f32(r), {3, 5, 7});  // an earlier result is a snapshot
}

TEST(Eval, NeedingAPlaceholderIsAnErrorNamingIt) {
  Tensor p = placeholder({3}, KB_FLOAT32, "features");
  Tensor v = variable_f32({1, 2, 3}, {3});
  Tensor e = bin(kb_add, p.get(), v.get());
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_eval(e.get(), &out), KB_ERROR_INVALID_ARGUMENT);
  std::string msg = kb_last_error_message();
  EXPECT_TRUE(starts_with(msg, "eval: ")) << msg;
  EXPECT_NE(msg.find("'" + tensor_name(p.get()) + "'"), std::string::npos) << msg;
  EXPECT_EQ(out, nullptr);
  kb_clear_error();

  std::vector<float> buf(3, -1);
  EXPECT_EQ(kb_tensor_copy_to(e.get(), buf.data(), 12), KB_ERROR_INVALID_ARGUMENT);
  msg = kb_last_error_message();
  EXPECT_TRUE(starts_with(msg, "tensor_copy_to: ")) << msg;
  EXPECT_NE(msg.find("'" + tensor_name(p.get()) + "'"), std::string::npos) << msg;
  EXPECT_EQ(buf, (std::vector<float>{-1, -1, -1}));
  kb_clear_error();

  EXPECT_EQ(kb_eval(p.get(), &out), KB_ERROR_INVALID_ARGUMENT);
  msg = kb_last_error_message();
  EXPECT_TRUE(starts_with(msg, "eval: ")) << msg;
  EXPECT_NE(msg.find("'" + tensor_name(p.get()) + "'"), std::string::npos) << msg;
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
}

// ---- values ----------------------------------------------------------------------------------

TEST(Values, GetAndSetValue) {
  Tensor v = variable_f32({1, 2, 3, 4}, {2, 2}, "w");
  Tensor snapshot = make([&](kb_tensor** o) { return kb_get_value(v.get(), o); });
  expect_near(values_f32(snapshot), {1, 2, 3, 4});

  // set_value from a tensor, and from data of another dtype (converted).
  Tensor nv = constant_f32({5, 6, 7, 8}, {2, 2});
  KB_ASSERT_OK(kb_set_value(v.get(), nv.get()));
  expect_near(get_value_f32(v.get()), {5, 6, 7, 8});
  std::vector<double> d = {0.5, 1.5, 2.5, 3.5};
  int64_t shape[] = {2, 2};
  KB_ASSERT_OK(kb_set_value_data(v.get(), d.data(), KB_FLOAT64, shape, 2));
  EXPECT_EQ(dtype_of(v.get()), KB_FLOAT32);
  expect_near(get_value_f32(v.get()), {0.5f, 1.5f, 2.5f, 3.5f});
  expect_near(values_f32(snapshot), {1, 2, 3, 4});  // the earlier value is a copy

  // set_value from an expression of the variable itself.
  Tensor twice = scaled(v.get(), 2);
  KB_ASSERT_OK(kb_set_value(v.get(), twice.get()));
  expect_near(get_value_f32(v.get()), {1, 3, 5, 7});

  // A wrong shape is a shape error and changes nothing.
  Tensor wrong = constant_f32({1, 2, 3}, {3});
  EXPECT_EQ(kb_set_value(v.get(), wrong.get()), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "set_value: ")) << kb_last_error_message();
  kb_clear_error();
  int64_t shape3[] = {3};
  EXPECT_EQ(kb_set_value_data(v.get(), d.data(), KB_FLOAT64, shape3, 1), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "set_value: ")) << kb_last_error_message();
  kb_clear_error();
  expect_near(get_value_f32(v.get()), {1, 3, 5, 7});

  // Only variables can be set.
  EXPECT_EQ(kb_set_value(nv.get(), wrong.get()), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "set_value: ")) << kb_last_error_message();
  kb_clear_error();
}

TEST(Values, BatchGetValue) {
  Tensor a = variable_f32({1, 2}, {2});
  Tensor b = variable<int32_t>({7}, {1});
  Tensor c = constant_f32({3}, {});
  kb_tensor* xs[] = {a.get(), b.get(), c.get()};
  kb_tensor_list* raw = nullptr;
  KB_ASSERT_OK(kb_batch_get_value(xs, 3, &raw));
  List l(raw);
  ASSERT_EQ(kb_tensor_list_size(l.get()), 3u);
  expect_near(out_f32(l, 0), {1, 2});
  EXPECT_EQ(values<int32_t>(at(l, 1).get()), (std::vector<int32_t>{7}));
  expect_near(out_f32(l, 2), {3});

  // batch_get_value([]) -> []
  kb_tensor_list* empty = nullptr;
  KB_ASSERT_OK(kb_batch_get_value(nullptr, 0, &empty));
  List e(empty);
  EXPECT_EQ(kb_tensor_list_size(e.get()), 0u);
}

TEST(Values, BatchSetValueIsAllOrNothing) {
  Tensor a = variable_f32({1, 2}, {2});
  Tensor b = variable_f32({3, 4, 5}, {3});
  Tensor va = constant<double>({10, 20}, {2});
  Tensor vb = constant_f32({30, 40, 50}, {3});
  Tensor bad_shape = constant_f32({1, 2}, {2});
  Tensor not_var = constant_f32({0, 0}, {2});

  {
    kb_tensor* xs[] = {a.get(), b.get()};
    kb_tensor* vs[] = {va.get(), bad_shape.get()};
    EXPECT_EQ(kb_batch_set_value(xs, vs, 2), KB_ERROR_SHAPE);
    EXPECT_TRUE(starts_with(kb_last_error_message(), "batch_set_value: "))
        << kb_last_error_message();
    kb_clear_error();
  }
  {
    kb_tensor* xs[] = {a.get(), not_var.get()};
    kb_tensor* vs[] = {va.get(), va.get()};
    EXPECT_EQ(kb_batch_set_value(xs, vs, 2), KB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(starts_with(kb_last_error_message(), "batch_set_value: "))
        << kb_last_error_message();
    kb_clear_error();
  }
  {
    kb_tensor* xs[] = {a.get(), b.get()};
    kb_tensor* vs[] = {va.get(), nullptr};
    EXPECT_EQ(kb_batch_set_value(xs, vs, 2), KB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(starts_with(kb_last_error_message(), "batch_set_value: "))
        << kb_last_error_message();
    kb_clear_error();
  }
  {
    Tensor p = placeholder({3}, KB_FLOAT32, "later");
    kb_tensor* xs[] = {a.get(), b.get()};
    kb_tensor* vs[] = {va.get(), p.get()};
    EXPECT_EQ(kb_batch_set_value(xs, vs, 2), KB_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(starts_with(kb_last_error_message(), "batch_set_value: "))
        << kb_last_error_message();
    kb_clear_error();
  }
  expect_near(get_value_f32(a.get()), {1, 2});
  expect_near(get_value_f32(b.get()), {3, 4, 5});

  kb_tensor* xs[] = {a.get(), b.get()};
  kb_tensor* vs[] = {va.get(), vb.get()};
  KB_ASSERT_OK(kb_batch_set_value(xs, vs, 2));
  expect_near(get_value_f32(a.get()), {10, 20});
  expect_near(get_value_f32(b.get()), {30, 40, 50});
  EXPECT_EQ(dtype_of(a.get()), KB_FLOAT32);
  KB_EXPECT_OK(kb_batch_set_value(nullptr, nullptr, 0));
}

// ---- print_tensor ----------------------------------------------------------------------------

namespace {
void collect(const char* text, void* user_data) {
  static_cast<std::vector<std::string>*>(user_data)->push_back(text);
}
struct SinkGuard {
  ~SinkGuard() { kb_set_print_sink(nullptr, nullptr); }
};
}  // namespace

TEST(PrintTensor, WritesMessageAndValueThroughTheSink) {
  std::vector<std::string> lines;
  SinkGuard restore;
  KB_ASSERT_OK(kb_set_print_sink(collect, &lines));

  Tensor v = variable_f32({1, 2.5f}, {2});
  Tensor pv = make([&](kb_tensor** o) { return kb_print_tensor(v.get(), "value: ", o); });
  EXPECT_TRUE(lines.empty());  // building prints nothing
  EXPECT_EQ(int_shape(pv.get()), (Shape{2}));
  Function f = function({}, {pv.get()});
  List r = call(f);
  expect_near(out_f32(r, 0), {1, 2.5f});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "value: [1 2.5]\n");

  // Each call prints again, with the current value.
  KB_ASSERT_OK(kb_set_value_data(v.get(), std::vector<float>{3, 4}.data(), KB_FLOAT32,
                                 std::vector<int64_t>{2}.data(), 1));
  List r2 = call(f);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "value: [3 4]\n");

  // A printed constant is not folded away, and a NULL message is the empty message.
  Tensor c = constant<int32_t>({1, 2, 3, 4}, {2, 2});
  Tensor pc = make([&](kb_tensor** o) { return kb_print_tensor(c.get(), nullptr, o); });
  Tensor e = eval(pc.get());
  EXPECT_EQ(values<int32_t>(e.get()), (std::vector<int32_t>{1, 2, 3, 4}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "[[1 2]\n [3 4]]\n");

  // With the default sink restored, nothing more comes here.
  KB_ASSERT_OK(kb_set_print_sink(nullptr, nullptr));
  testing::internal::CaptureStderr();
  List r3 = call(f);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines.size(), 3u);
  EXPECT_EQ(err, "value: [3 4]\n");
}

TEST(Function, AFailingCallChangesNoVariable) {
  // Updates are written only after every value is computed: a run-time error leaves all alone.
  Tensor a = variable_f32({1, 2}, {2}, "a");
  Tensor b = variable_f32({1, 2, 3, 4, 5, 6}, {2, 3}, "b");
  Tensor idx = placeholder({-1}, KB_INT32, "idx");
  Tensor ten = scalar_f32(10);
  Tensor ua = make([&](kb_tensor** o) { return kb_update_add(a.get(), ten.get(), o); });
  Tensor g = make([&](kb_tensor** o) { return kb_gather(b.get(), idx.get(), o); });
  Tensor ub = make([&](kb_tensor** o) { return kb_update(b.get(), g.get(), o); });
  Function f = function({idx.get()}, {}, {ua.get(), ub.get()});
  Tensor bad = constant<int32_t>({1, 7}, {2});
  kb_tensor* ins[] = {bad.get()};
  kb_tensor_list* out = nullptr;
  EXPECT_EQ(kb_function_call(f.get(), ins, 1, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
  expect_near(get_value_f32(a.get()), {1, 2});
  expect_near(get_value_f32(b.get()), {1, 2, 3, 4, 5, 6});

  // An update whose value has the wrong shape for these inputs is a shape error at call time.
  Tensor three = constant<int32_t>({1, 0, 1}, {3});
  kb_tensor* ins3[] = {three.get()};
  EXPECT_EQ(kb_function_call(f.get(), ins3, 1, &out), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
  expect_near(get_value_f32(a.get()), {1, 2});
  expect_near(get_value_f32(b.get()), {1, 2, 3, 4, 5, 6});

  // The right shape works.
  Tensor swap = constant<int32_t>({1, 0}, {2});
  List r = call(f, {swap.get()});
  expect_near(get_value_f32(a.get()), {11, 12});
  expect_near(get_value_f32(b.get()), {4, 5, 6, 1, 2, 3});
}

TEST(Function, LearningPhaseFedWithAWrongShape) {
  Tensor x = placeholder({2}, KB_FLOAT32, "x");
  Tensor phase = make([](kb_tensor** o) { return kb_learning_phase(o); });
  Tensor pf = make([&](kb_tensor** o) { return kb_cast(phase.get(), KB_FLOAT32, o); });
  Tensor y = bin(kb_add, x.get(), pf.get());
  Function f = function({x.get(), phase.get()}, {y.get()});
  Tensor in = constant_f32({1, 2}, {2});
  Tensor two = constant<bool>({true, false}, {2});
  kb_tensor* ins[] = {in.get(), two.get()};
  kb_tensor_list* out = nullptr;
  EXPECT_EQ(kb_function_call(f.get(), ins, 2, &out), KB_ERROR_SHAPE);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_EQ(out, nullptr);
  kb_clear_error();
}

TEST(Function, SameOutputTwiceAndConstantOutputs) {
  Tensor p = placeholder({2}, KB_FLOAT32, "x");
  Tensor y = scaled(p.get(), 2);
  Tensor c = constant_f32({5, 6}, {2});
  Tensor cc = bin(kb_add, c.get(), c.get());  // folded at plan time
  Function f = function({p.get()}, {y.get(), y.get(), cc.get(), p.get()});
  Tensor in = constant_f32({1, 2}, {2});
  List r = call(f, {in.get()});
  ASSERT_EQ(kb_tensor_list_size(r.get()), 4u);
  expect_near(out_f32(r, 0), {2, 4});
  expect_near(out_f32(r, 1), {2, 4});
  expect_near(out_f32(r, 2), {10, 12});
  expect_near(out_f32(r, 3), {1, 2});
}

TEST(Function, ConcurrentCalls) {
  // Distinct functions on several threads, and one shared function called from all of them.
  Tensor sp = placeholder({-1}, KB_FLOAT32, "shared_x");
  Tensor sy = scaled(sp.get(), 3);
  Function shared = function({sp.get()}, {sy.get()});
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        Tensor p = placeholder({-1}, KB_FLOAT32, "x");
        Tensor k = scalar_f32(float(t + 1));
        Tensor y = bin(kb_multiply, p.get(), k.get());
        Function own = function({p.get()}, {y.get()});
        for (int i = 0; i < 50; ++i) {
          int64_t n = 1 + (i + t) % 5;
          std::vector<float> data(static_cast<size_t>(n), static_cast<float>(i));
          Tensor in = constant_f32(data, {n});
          std::vector<float> a = out_f32(call(own, {in.get()}), 0);
          std::vector<float> b = out_f32(call(shared, {in.get()}), 0);
          if (a != std::vector<float>(size_t(n), float(i) * float(t + 1))) ++failures[size_t(t)];
          if (b != std::vector<float>(size_t(n), float(i) * 3)) ++failures[size_t(t)];
        }
      } catch (...) {
        ++failures[size_t(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}
