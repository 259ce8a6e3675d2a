// Configuration and process-wide session state: epsilon, floatx, image data format, threads,
// uids, name scopes and the learning phase. Every test puts back what it changes.
#include <sched.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

// Undoes set_learning_phase / scope pushes / name scopes left by a failing test.
struct SessionGuard {
  ~SessionGuard() {
    kb_clear_session();
    kb_clear_error();
  }
};

void expect_error(kb_status got, kb_status want, const std::string& prefix) {
  EXPECT_EQ(got, want);
  std::string msg = kb_last_error_message();
  EXPECT_TRUE(starts_with(msg, prefix + ": ")) << msg;
  EXPECT_EQ(kb_last_error_code(), want);
  kb_clear_error();
  EXPECT_EQ(kb_last_error_code(), KB_OK);
  EXPECT_STREQ(kb_last_error_message(), "");
}

}  // namespace

TEST(Config, Backend) { EXPECT_STREQ(kb_backend(), "kbackend"); }

TEST(Config, Epsilon) {
  ConfigGuard restore;
  double e = 0;
  KB_ASSERT_OK(kb_epsilon(&e));
  EXPECT_GT(e, 0);
  KB_ASSERT_OK(kb_set_epsilon(1e-4));
  KB_ASSERT_OK(kb_epsilon(&e));
  EXPECT_EQ(e, 1e-4);
  KB_ASSERT_OK(kb_set_epsilon(0.5));
  KB_ASSERT_OK(kb_epsilon(&e));
  EXPECT_EQ(e, 0.5);
}

// Without KB_NUM_THREADS or OMP_NUM_THREADS the pool has at most one thread per CPU of the
// affinity mask (ctest's threads_follow_affinity runs this under `taskset -c 0`).
TEST(Config, DefaultThreadsAreUsableCpus) {
  if (std::getenv("KB_NUM_THREADS") || std::getenv("OMP_NUM_THREADS"))
    GTEST_SKIP() << "a thread count is set in the environment";
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  KB_ASSERT_OK(kb_set_num_threads(0));
  int32_t n = 0;
  KB_ASSERT_OK(kb_num_threads(&n));
  EXPECT_GE(n, 1);
  EXPECT_LE(n, CPU_COUNT(&set));
}

TEST(Config, NumThreads) {
  int32_t n = 0;
  KB_ASSERT_OK(kb_num_threads(&n));
  EXPECT_GE(n, 1);
  // The same values with one thread and with three (from this thread and from another one):
  // reductions combine partial results in a fixed order.
  std::vector<float> data(size_t(600 * 700));
  for (size_t i = 0; i < data.size(); ++i) data[i] = float((i * 7919) % 1000) / 997.0f - 0.5f;
  Tensor x = constant_f32(data, {600, 700});
  int64_t last = -1;
  Tensor s = make([&](kb_tensor** o) { return kb_sum(x.get(), &last, 1, 0, o); });
  Tensor p = make([&](kb_tensor** o) { return kb_softmax(x.get(), -1, o); });
  Tensor all = make([&](kb_tensor** o) { return kb_sum(x.get(), nullptr, 0, 0, o); });
  Function f = function({}, {s.get(), p.get(), all.get()});
  auto run = [&] {
    List l = call(f);
    return std::vector<std::vector<float>>{out_f32(l, 0), out_f32(l, 1), out_f32(l, 2)};
  };
  KB_ASSERT_OK(kb_set_num_threads(1));
  KB_ASSERT_OK(kb_num_threads(&n));
  EXPECT_EQ(n, 1);
  auto one = run();
  KB_ASSERT_OK(kb_set_num_threads(3));
  KB_ASSERT_OK(kb_num_threads(&n));
  EXPECT_EQ(n, 3);
  EXPECT_EQ(run(), one);
  std::vector<std::vector<float>> other;
  std::thread([&] { other = run(); }).join();
  EXPECT_EQ(other, one);
  expect_error(kb_set_num_threads(-2), KB_ERROR_INVALID_ARGUMENT, "set_num_threads");
  KB_ASSERT_OK(kb_num_threads(&n));
  EXPECT_EQ(n, 3);  // unchanged by the rejected call
  expect_error(kb_num_threads(nullptr), KB_ERROR_INVALID_ARGUMENT, "num_threads");
  KB_ASSERT_OK(kb_set_num_threads(0));
  int32_t back = 0;
  KB_ASSERT_OK(kb_num_threads(&back));
  EXPECT_GE(back, 1);
}

TEST(Config, EpsilonIsUsedByLosses) {
  ConfigGuard restore;
  // binary_crossentropy clips the output to [eps, 1 - eps].
  Tensor t = constant_f32({1}, {1});
  Tensor o = constant_f32({0}, {1});
  KB_ASSERT_OK(kb_set_epsilon(1e-2));
  Tensor l =
      make([&](kb_tensor** out) { return kb_binary_crossentropy(t.get(), o.get(), 0, out); });
  expect_near(values_f32(eval(l.get())), {float(-std::log(1e-2))}, 1e-4);
}

TEST(Config, Floatx) {
  ConfigGuard restore;
  for (kb_data_type t : {KB_FLOAT16, KB_FLOAT64, KB_FLOAT32}) {
    KB_ASSERT_OK(kb_set_floatx(t));
    kb_data_type got = KB_INT8;
    KB_ASSERT_OK(kb_floatx(&got));
    EXPECT_EQ(got, t);
  }
  for (int32_t bad : {int32_t(KB_INT32), int32_t(KB_BOOL), int32_t(KB_UINT8), int32_t(KB_BFLOAT16),
                      int32_t(KB_DTYPE_DEFAULT), int32_t(42)}) {
    expect_error(kb_set_floatx(kb_data_type(bad)), KB_ERROR_INVALID_ARGUMENT, "set_floatx");
    kb_data_type got = KB_INT8;
    KB_ASSERT_OK(kb_floatx(&got));
    EXPECT_EQ(got, KB_FLOAT32);
  }
}

TEST(Config, FloatxIsTheDefaultDtype) {
  ConfigGuard restore;
  KB_ASSERT_OK(kb_set_floatx(KB_FLOAT64));
  std::vector<float> data = {1, 2};
  int64_t shape[] = {2};
  kb_tensor* raw = nullptr;
  KB_ASSERT_OK(kb_variable(data.data(), KB_FLOAT32, shape, 1, KB_DTYPE_DEFAULT, "v", &raw));
  Tensor v = Tensor::adopt(raw);
  EXPECT_EQ(dtype_of(v.get()), KB_FLOAT64);
  EXPECT_EQ(values<double>(v.get()), (std::vector<double>{1, 2}));
  KB_ASSERT_OK(kb_placeholder(shape, 1, 1, KB_DTYPE_DEFAULT, 0, "p", &raw));
  Tensor p = Tensor::adopt(raw);
  EXPECT_EQ(dtype_of(p.get()), KB_FLOAT64);
  KB_ASSERT_OK(kb_zeros(shape, 1, KB_DTYPE_DEFAULT, nullptr, &raw));
  Tensor z = Tensor::adopt(raw);
  EXPECT_EQ(dtype_of(z.get()), KB_FLOAT64);

  int32_t ints[] = {1, -2, 3};
  double out[3] = {0, 0, 0};
  KB_ASSERT_OK(kb_cast_to_floatx(ints, KB_INT32, 3, out));
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], -2.0);
  EXPECT_EQ(out[2], 3.0);
  KB_ASSERT_OK(kb_set_floatx(KB_FLOAT32));
  float fout[3] = {0, 0, 0};
  KB_ASSERT_OK(kb_cast_to_floatx(ints, KB_INT32, 3, fout));
  EXPECT_EQ(fout[1], -2.0f);
  KB_EXPECT_OK(kb_cast_to_floatx(nullptr, KB_INT32, 0, nullptr));
}

TEST(Config, ImageDataFormatAndDimOrdering) {
  ConfigGuard restore;
  kb_data_format f = KB_CHANNELS_LAST;
  kb_dim_ordering o = KB_DIM_ORDERING_TF;

  KB_ASSERT_OK(kb_set_image_data_format(KB_CHANNELS_FIRST));
  KB_ASSERT_OK(kb_image_data_format(&f));
  EXPECT_EQ(f, KB_CHANNELS_FIRST);
  KB_ASSERT_OK(kb_image_dim_ordering(&o));
  EXPECT_EQ(o, KB_DIM_ORDERING_TH);

  KB_ASSERT_OK(kb_set_image_dim_ordering(KB_DIM_ORDERING_TF));
  KB_ASSERT_OK(kb_image_data_format(&f));
  EXPECT_EQ(f, KB_CHANNELS_LAST);
  KB_ASSERT_OK(kb_image_dim_ordering(&o));
  EXPECT_EQ(o, KB_DIM_ORDERING_TF);

  KB_ASSERT_OK(kb_set_image_dim_ordering(KB_DIM_ORDERING_TH));
  KB_ASSERT_OK(kb_image_data_format(&f));
  EXPECT_EQ(f, KB_CHANNELS_FIRST);

  expect_error(kb_set_image_data_format(kb_data_format(7)), KB_ERROR_INVALID_ARGUMENT,
               "set_image_data_format");
  expect_error(kb_set_image_data_format(kb_data_format(-2)), KB_ERROR_INVALID_ARGUMENT,
               "set_image_data_format");
  expect_error(kb_set_image_dim_ordering(kb_dim_ordering(2)), KB_ERROR_INVALID_ARGUMENT,
               "set_image_dim_ordering");
  KB_ASSERT_OK(kb_image_data_format(&f));
  EXPECT_EQ(f, KB_CHANNELS_FIRST);  // unchanged by the bad calls
}

TEST(Config, ParseHelpers) {
  kb_data_type t = KB_DTYPE_DEFAULT;
  const char* names[] = {"float16", "float32", "float64", "int8", "int16",
                         "int32",   "int64",   "uint8",   "bool", "bfloat16"};
  for (int i = 0; i <= 9; ++i) {
    KB_ASSERT_OK(kb_parse_dtype(names[i], &t));
    EXPECT_EQ(t, kb_data_type(i));
    EXPECT_STREQ(kb_dtype_name(kb_data_type(i)), names[i]);
  }
  EXPECT_EQ(kb_dtype_name(kb_data_type(42)), nullptr);
  EXPECT_EQ(kb_dtype_name(KB_DTYPE_DEFAULT), nullptr);

  kb_data_format f = KB_CHANNELS_FIRST;
  KB_ASSERT_OK(kb_parse_data_format("channels_last", &f));
  EXPECT_EQ(f, KB_CHANNELS_LAST);
  KB_ASSERT_OK(kb_parse_data_format("Channels_First", &f));  // lower-cased first, as Keras does
  EXPECT_EQ(f, KB_CHANNELS_FIRST);
}

TEST(Config, GetUid) {
  SessionGuard restore;
  KB_ASSERT_OK(kb_reset_uids());
  int64_t id = 0;
  KB_ASSERT_OK(kb_get_uid("dense", &id));
  EXPECT_EQ(id, 1);
  KB_ASSERT_OK(kb_get_uid("dense", &id));
  EXPECT_EQ(id, 2);
  KB_ASSERT_OK(kb_get_uid("conv2d", &id));
  EXPECT_EQ(id, 1);
  KB_ASSERT_OK(kb_get_uid(nullptr, &id));  // NULL is the default prefix ''
  EXPECT_EQ(id, 1);
  KB_ASSERT_OK(kb_get_uid("", &id));
  EXPECT_EQ(id, 2);
  KB_ASSERT_OK(kb_get_uid("dense", &id));
  EXPECT_EQ(id, 3);
  KB_ASSERT_OK(kb_reset_uids());
  KB_ASSERT_OK(kb_get_uid("dense", &id));
  EXPECT_EQ(id, 1);
  KB_ASSERT_OK(kb_get_uid("conv2d", &id));
  EXPECT_EQ(id, 1);
  KB_ASSERT_OK(kb_clear_session());  // clears the uids too
  KB_ASSERT_OK(kb_get_uid("dense", &id));
  EXPECT_EQ(id, 1);
  KB_ASSERT_OK(kb_reset_uids());
}

TEST(Config, NameScopes) {
  SessionGuard restore;
  KB_ASSERT_OK(kb_clear_session());  // the names earlier tests used are free again
  KB_ASSERT_OK(kb_name_scope_push("outer"));
  Tensor a = placeholder({2}, KB_FLOAT32, "a");
  KB_ASSERT_OK(kb_name_scope_push("inner"));
  Tensor p = placeholder({2}, KB_FLOAT32, "x");
  Tensor v = variable_f32({1, 2}, {2}, "w");
  Tensor s = bin(kb_add, p.get(), v.get());
  Tensor z = make([&](kb_tensor** o) { return kb_zeros_like(v.get(), KB_DTYPE_DEFAULT, "z", o); });
  EXPECT_EQ(tensor_name(p.get()), "outer/inner/x");
  EXPECT_EQ(tensor_name(v.get()), "outer/inner/w");
  EXPECT_EQ(tensor_name(z.get()), "outer/inner/z");
  EXPECT_TRUE(starts_with(tensor_name(s.get()), "outer/inner/")) << tensor_name(s.get());
  KB_ASSERT_OK(kb_name_scope_pop());
  Tensor b = placeholder({2}, KB_FLOAT32, "b");
  EXPECT_EQ(tensor_name(b.get()), "outer/b");
  EXPECT_EQ(tensor_name(a.get()), "outer/a");
  KB_ASSERT_OK(kb_name_scope_pop());
  Tensor c = placeholder({2}, KB_FLOAT32, "c");
  EXPECT_EQ(tensor_name(c.get()), "c");
  // The name outlives changes of scope.
  EXPECT_EQ(tensor_name(p.get()), "outer/inner/x");

  expect_error(kb_name_scope_pop(), KB_ERROR_INVALID_ARGUMENT, "name_scope");
  expect_error(kb_name_scope_push(nullptr), KB_ERROR_INVALID_ARGUMENT, "name_scope");
  expect_error(kb_name_scope_push(""), KB_ERROR_INVALID_ARGUMENT, "name_scope");
  Tensor d = placeholder({2}, KB_FLOAT32, "d");
  EXPECT_EQ(tensor_name(d.get()), "d");

  // Names are unique in the session, as TensorFlow's: a name in use gets the first free _k.
  Tensor c1 = placeholder({2}, KB_FLOAT32, "c");
  Tensor c_1 = placeholder({2}, KB_FLOAT32, "c_1");
  Tensor c2 = placeholder({2}, KB_FLOAT32, "c");
  EXPECT_EQ(tensor_name(c1.get()), "c_1");
  EXPECT_EQ(tensor_name(c_1.get()), "c_1_1");
  EXPECT_EQ(tensor_name(c2.get()), "c_2");
  KB_ASSERT_OK(kb_name_scope_push("outer"));
  Tensor w2 = variable_f32({1, 2}, {2}, "inner/w");
  EXPECT_EQ(tensor_name(w2.get()), "outer/inner/w_1");
  KB_ASSERT_OK(kb_name_scope_pop());
  KB_ASSERT_OK(kb_clear_session());  // a new graph's names
  Tensor c3 = placeholder({2}, KB_FLOAT32, "c");
  EXPECT_EQ(tensor_name(c3.get()), "c");
}

TEST(Config, ManualVariableInitialization) {
  KB_EXPECT_OK(kb_manual_variable_initialization(1));
  KB_EXPECT_OK(kb_manual_variable_initialization(0));
}

// ---- learning phase -----------------------------------------------------------------------------

namespace {
// f(x, phase) = x + float(phase); and g(x) = the same without the phase as an input.
struct PhaseGraph {
  Tensor x = placeholder({2}, KB_FLOAT32, "x");
  Tensor phase = make([](kb_tensor** o) { return kb_learning_phase(o); });
  Tensor as_float = make([&](kb_tensor** o) { return kb_cast(phase.get(), KB_FLOAT32, o); });
  Tensor y = bin(kb_add, x.get(), as_float.get());
  Tensor in = constant_f32({10, 20}, {2});
};
}  // namespace

TEST(LearningPhase, IsABoolScalarFedAsAnInput) {
  SessionGuard restore;
  PhaseGraph g;
  EXPECT_EQ(dtype_of(g.phase.get()), KB_BOOL);
  EXPECT_EQ(int_shape(g.phase.get()), Shape{});
  int32_t uses = 0;
  KB_ASSERT_OK(kb_tensor_uses_learning_phase(g.phase.get(), &uses));
  EXPECT_EQ(uses, 1);
  KB_ASSERT_OK(kb_tensor_uses_learning_phase(g.y.get(), &uses));
  EXPECT_EQ(uses, 1);
  KB_ASSERT_OK(kb_tensor_uses_learning_phase(g.x.get(), &uses));
  EXPECT_EQ(uses, 0);
  // The same placeholder each time while the phase is not fixed.
  Tensor again = make([](kb_tensor** o) { return kb_learning_phase(o); });
  uint64_t id1 = 0, id2 = 1;
  KB_ASSERT_OK(kb_tensor_id(g.phase.get(), &id1));
  KB_ASSERT_OK(kb_tensor_id(again.get(), &id2));
  EXPECT_EQ(id1, id2);

  Function f = function({g.x.get(), g.phase.get()}, {g.y.get()});
  Tensor zero = constant<bool>({false}, {});
  Tensor one = constant<bool>({true}, {});
  expect_near(out_f32(call(f, {g.in.get(), zero.get()}), 0), {10, 20});
  expect_near(out_f32(call(f, {g.in.get(), one.get()}), 0), {11, 21});
  // An int 0/1 is converted to bool like any input.
  Tensor ione = constant<int32_t>({1}, {});
  expect_near(out_f32(call(f, {g.in.get(), ione.get()}), 0), {11, 21});
  expect_near(out_f32(call(f, {g.in.get(), zero.get()}), 0), {10, 20});

  // Not fed: test mode (the placeholder defaults to 0).
  Function h = function({g.x.get()}, {g.y.get()});
  expect_near(out_f32(call(h, {g.in.get()}), 0), {10, 20});
}

TEST(LearningPhase, SetLearningPhase) {
  SessionGuard restore;
  PhaseGraph g;
  Function h = function({g.x.get()}, {g.y.get()});
  expect_error(kb_set_learning_phase(2), KB_ERROR_INVALID_ARGUMENT, "set_learning_phase");
  expect_error(kb_set_learning_phase(-1), KB_ERROR_INVALID_ARGUMENT, "set_learning_phase");
  expect_near(out_f32(call(h, {g.in.get()}), 0), {10, 20});  // still not fixed

  KB_ASSERT_OK(kb_set_learning_phase(1));
  expect_near(out_f32(call(h, {g.in.get()}), 0), {11, 21});
  // learning_phase() is now the fixed value.
  Tensor fixed = make([](kb_tensor** o) { return kb_learning_phase(o); });
  EXPECT_EQ(values<bool>(eval(fixed.get()).get()), (std::vector<bool>{true}));

  KB_ASSERT_OK(kb_set_learning_phase(0));
  expect_near(out_f32(call(h, {g.in.get()}), 0), {10, 20});
  Tensor fixed0 = make([](kb_tensor** o) { return kb_learning_phase(o); });
  EXPECT_EQ(values<bool>(eval(fixed0.get()).get()), (std::vector<bool>{false}));
}

TEST(LearningPhase, Scope) {
  SessionGuard restore;
  PhaseGraph g;
  Function h = function({g.x.get()}, {g.y.get()});
  expect_error(kb_learning_phase_scope_pop(), KB_ERROR_INVALID_ARGUMENT, "learning_phase_scope");
  expect_error(kb_learning_phase_scope_push(2), KB_ERROR_INVALID_ARGUMENT, "learning_phase_scope");

  KB_ASSERT_OK(kb_learning_phase_scope_push(1));
  expect_near(out_f32(call(h, {g.in.get()}), 0), {11, 21});
  KB_ASSERT_OK(kb_learning_phase_scope_push(0));
  expect_near(out_f32(call(h, {g.in.get()}), 0), {10, 20});
  KB_ASSERT_OK(kb_learning_phase_scope_pop());
  expect_near(out_f32(call(h, {g.in.get()}), 0), {11, 21});
  KB_ASSERT_OK(kb_learning_phase_scope_pop());
  expect_near(out_f32(call(h, {g.in.get()}), 0), {10, 20});  // back to "not fixed"
  expect_error(kb_learning_phase_scope_pop(), KB_ERROR_INVALID_ARGUMENT, "learning_phase_scope");

  // A scope restores a phase fixed by set_learning_phase.
  KB_ASSERT_OK(kb_set_learning_phase(1));
  KB_ASSERT_OK(kb_learning_phase_scope_push(0));
  expect_near(out_f32(call(h, {g.in.get()}), 0), {10, 20});
  KB_ASSERT_OK(kb_learning_phase_scope_pop());
  expect_near(out_f32(call(h, {g.in.get()}), 0), {11, 21});
}

TEST(LearningPhase, ClearSessionMakesANewPlaceholder) {
  SessionGuard restore;
  Tensor a = make([](kb_tensor** o) { return kb_learning_phase(o); });
  KB_ASSERT_OK(kb_clear_session());
  Tensor b = make([](kb_tensor** o) { return kb_learning_phase(o); });
  uint64_t ia = 0, ib = 0;
  KB_ASSERT_OK(kb_tensor_id(a.get(), &ia));
  KB_ASSERT_OK(kb_tensor_id(b.get(), &ib));
  EXPECT_NE(ia, ib);
}
