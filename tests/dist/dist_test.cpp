// The collectives through the C ABI, on however many processes run it: under `mpirun -np 2`, as
// one process without a launcher, and with the MPI plugin absent (KB_TEST_EXPECT_NO_MPI=1: then
// kb_dist_init must fail with KB_ERROR_UNAVAILABLE and every collective is the identity). Each
// rank computes what the job must produce from every rank's inputs, which depend on the rank.
// A failed assertion on one rank leaves the others waiting: KB_DIST_TIMEOUT (set by ctest) turns
// that into a failure instead of a hang.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "capi/helpers.h"

using namespace kbt;

namespace {

int32_t g_rank = 0, g_size = 1;

// Rank r's data: r-dependent, exact in every dtype tested.
template <class T>
std::vector<T> rank_data(int32_t r, size_t n) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(int64_t(i) * 3 - 5 + 7 * r);
  return v;
}
template <class T>
std::vector<T> sum_over_ranks(size_t n) {
  std::vector<T> s(n, T(0));
  for (int32_t r = 0; r < g_size; ++r) {
    auto v = rank_data<T>(r, n);
    for (size_t i = 0; i < n; ++i) s[i] += v[i];
  }
  return s;
}

Tensor all_reduce(kb_tensor* x, kb_reduce_op op) {
  return make([&](kb_tensor** o) { return kb_all_reduce(x, op, o); }, "all_reduce");
}

template <class T>
void check_all_reduce() {
  const size_t n = 7;
  Tensor x = constant<T>(rank_data<T>(g_rank, n), {int64_t(n)});
  auto want = sum_over_ranks<T>(n);
  EXPECT_EQ(values<T>(all_reduce(x.get(), KB_REDUCE_SUM).get()), want);
  for (auto& v : want) v = T(v / T(g_size));
  EXPECT_EQ(values<T>(all_reduce(x.get(), KB_REDUCE_AVERAGE).get()), want);
}

TEST(Dist, RankAndSize) {
  ASSERT_GE(g_rank, 0);
  ASSERT_LT(g_rank, g_size);
  const char* launched = std::getenv("OMPI_COMM_WORLD_SIZE");
  bool mpi = std::getenv("KB_TEST_EXPECT_NO_MPI") == nullptr;
  EXPECT_EQ(g_size, mpi && launched ? std::atoi(launched) : 1);
  int32_t local = -1;
  ok(kb_dist_local_rank(&local));
  EXPECT_GE(local, 0);
  EXPECT_LE(local, g_rank);
  double timeout = 0;
  ok(kb_dist_timeout(&timeout));
  EXPECT_GT(timeout, 0);
}

TEST(Dist, AllReduceFloat32) { check_all_reduce<float>(); }
TEST(Dist, AllReduceFloat64) { check_all_reduce<double>(); }
TEST(Dist, AllReduceInt32) { check_all_reduce<int32_t>(); }
TEST(Dist, AllReduceInt64) { check_all_reduce<int64_t>(); }

TEST(Dist, AllReduceInAFunctionRunsEachCall) {
  Tensor x = placeholder({3});
  Tensor y = all_reduce(x.get(), KB_REDUCE_SUM);
  Function f = function({x.get()}, {y.get()});
  for (int round = 0; round < 3; ++round) {
    float base = float(g_rank + round);
    Tensor in = constant_f32({base, 2 * base, -base}, {3});
    float total = 0;
    for (int32_t r = 0; r < g_size; ++r) total += float(r + round);
    EXPECT_EQ(out_f32(call(f, {in.get()}), 0), (std::vector<float>{total, 2 * total, -total}));
  }
}

TEST(Dist, AllReduceOverAValueThatDiesThere) {
  // square(x) is read by the all-reduce alone: the plan reduces it in place.
  Tensor x = placeholder({4});
  Tensor y = all_reduce(un(kb_square, x.get()).get(), KB_REDUCE_AVERAGE);
  Tensor z = bin(kb_add, y.get(), x.get());
  Function f = function({x.get()}, {z.get()});
  std::vector<float> mine = {1.f + float(g_rank), -2.f, 0.5f, 3.f * float(g_rank)};
  std::vector<float> want(4, 0.f);
  for (int32_t r = 0; r < g_size; ++r) {
    std::vector<float> theirs = {1.f + float(r), -2.f, 0.5f, 3.f * float(r)};
    for (size_t i = 0; i < 4; ++i) want[i] += theirs[i] * theirs[i] / float(g_size);
  }
  for (size_t i = 0; i < 4; ++i) want[i] += mine[i];
  Tensor in = constant_f32(mine, {4});
  expect_near(out_f32(call(f, {in.get()}), 0), want, 1e-6);
}

// Four all-reduces of 12 bytes in one function, compiled with the given KB_BUCKET_BYTES: the
// values, and how many collectives one call runs.
std::pair<std::vector<float>, int64_t> bucketed_call(const char* bucket_bytes) {
  if (bucket_bytes)
    setenv("KB_BUCKET_BYTES", bucket_bytes, 1);
  else
    unsetenv("KB_BUCKET_BYTES");
  std::vector<Tensor> xs, ys;
  std::vector<kb_tensor*> ins, outs, feeds;
  std::vector<Tensor> fed;
  for (int i = 0; i < 4; ++i) {
    xs.push_back(placeholder({3}));
    // Every other one averaged: two kinds of bucket.
    ys.push_back(all_reduce(bin(kb_multiply, xs.back().get(), scalar_f32(2.f).get()).get(),
                            i % 2 ? KB_REDUCE_AVERAGE : KB_REDUCE_SUM));
    ins.push_back(xs.back().get());
    outs.push_back(ys.back().get());
    fed.push_back(constant_f32({float(i), float(g_rank), -1.f}, {3}));
    feeds.push_back(fed.back().get());
  }
  Function f = function(ins, outs);
  call(f, feeds);  // the first call also compares the plan across the ranks
  int64_t before = 0, after = 0;
  ok(kb_dist_collectives(&before));
  List out = call(f, feeds);
  ok(kb_dist_collectives(&after));
  unsetenv("KB_BUCKET_BYTES");
  std::vector<float> all;
  for (size_t i = 0; i < 4; ++i) {
    auto v = out_f32(out, i);
    all.insert(all.end(), v.begin(), v.end());
  }
  return {all, after - before};
}

TEST(Dist, BucketsRunOneCollectiveEachWithTheSameResults) {
  auto [per_tensor, n0] = bucketed_call("0");
  auto [tiny, n16] = bucketed_call("16");
  auto [by_default, n_default] = bucketed_call(nullptr);
  EXPECT_EQ(tiny, per_tensor);
  EXPECT_EQ(by_default, per_tensor);
  bool engine = g_size > 1;
  EXPECT_EQ(n0, engine ? 4 : 0);         // one per tensor
  EXPECT_EQ(n16, engine ? 2 : 0);        // two 12-byte tensors of each kind reach 16 bytes
  EXPECT_EQ(n_default, engine ? 2 : 0);  // one bucket per kind (sum, average)
  float sum_ranks = float(g_size * (g_size - 1) / 2);
  for (int i = 0; i < 4; ++i) {
    float scale = i % 2 ? 1.f / float(g_size) : 1.f;
    std::vector<float> want = {2.f * float(i) * float(g_size) * scale, 2.f * sum_ranks * scale,
                               -2.f * float(g_size) * scale};
    expect_near(std::vector<float>(per_tensor.begin() + 3 * i, per_tensor.begin() + 3 * i + 3),
                want, 1e-6);
  }
}

// A bucket's collective runs while the steps that do not read it compute: its AllReduce (the
// start) before them, its AllReduceWait after them, in the plan as KB_LOG_PLAN=1 prints it; for
// buckets of two gradients and of one.
TEST(Dist, BucketsAreWaitedForAfterTheStepsThatDoNotReadThem) {
  setenv("KB_LOG_PLAN", "1", 1);
  setenv("KB_FUSE", "0", 1);  // Exp stays a step of its own
  for (int members = 1; members <= 2; ++members) {
    SCOPED_TRACE(members);
    Tensor x = placeholder({3});
    Tensor a = bin(kb_multiply, x.get(), scalar_f32(2.f).get());
    Tensor b = bin(kb_multiply, x.get(), scalar_f32(3.f).get());
    Tensor sums = members == 2 ? bin(kb_add, all_reduce(a.get(), KB_REDUCE_SUM).get(),
                                     all_reduce(b.get(), KB_REDUCE_SUM).get())
                               : all_reduce(bin(kb_add, a.get(), b.get()).get(), KB_REDUCE_SUM);
    Tensor y = bin(kb_add, sums.get(), un(kb_exp, x.get()).get());
    Function f = function({x.get()}, {y.get()});
    std::vector<float> mine = {1.f + float(g_rank), -1.f, 0.5f};
    Tensor in = constant_f32(mine, {3});
    testing::internal::CaptureStderr();
    List out = call(f, {in.get()});
    std::string log = testing::internal::GetCapturedStderr();
    std::string plan = log.substr(log.find("kbackend plan"));
    plan = plan.substr(0, plan.find('\n'));
    size_t start = plan.find("AllReduce@"), exp = plan.find("Exp@"),
           wait = plan.find("AllReduceWait@");
    ASSERT_NE(wait, std::string::npos) << plan;
    EXPECT_LT(start, exp) << plan;
    EXPECT_LT(exp, wait) << plan;
    std::vector<float> want(3);
    for (size_t i = 0; i < 3; ++i) {
      float total = 0;
      for (int32_t r = 0; r < g_size; ++r) total += i == 0 ? 1.f + float(r) : mine[i];
      want[i] = 5.f * total + std::exp(mine[i]);
    }
    expect_near(out_f32(out, 0), want, 1e-5);
  }
  unsetenv("KB_LOG_PLAN");
  unsetenv("KB_FUSE");
}

// A bucket's gradients are computed where the bucket is reduced (core/compile/memory_plan.cpp),
// unless one is read again after it: every value stays right, with fusion and without.
TEST(Dist, BucketsLaidOutInPlaceKeepEveryValue) {
  for (const char* fuse : {"1", "0"}) {
    SCOPED_TRACE(fuse);
    setenv("KB_FUSE", fuse, 1);
    Tensor x = placeholder({5});
    Tensor g1 = bin(kb_multiply, x.get(), scalar_f32(2.f).get());
    Tensor g2 = bin(kb_add, un(kb_exp, x.get()).get(), scalar_f32(1.f).get());
    Tensor g3 = bin(kb_multiply, x.get(), scalar_f32(3.f).get());
    Tensor s1 = all_reduce(g1.get(), KB_REDUCE_SUM);
    Tensor s2 = all_reduce(g2.get(), KB_REDUCE_AVERAGE);
    Tensor s3 = all_reduce(g3.get(), KB_REDUCE_SUM);
    Tensor s2b = all_reduce(g1.get(), KB_REDUCE_AVERAGE);  // g1 again, in the other bucket
    Tensor y3 = bin(kb_add, s3.get(), g3.get());           // g3 read after its bucket
    Function f = function({x.get()}, {s1.get(), s2.get(), y3.get(), s2b.get()});
    std::vector<float> mine = {0.5f + float(g_rank), -1.f, 2.f, 0.f, -0.25f * float(g_rank)};
    Tensor in = constant_f32(mine, {5});
    List out = call(f, {in.get()});
    std::vector<float> w1(5, 0.f), w2(5, 0.f), w3(5, 0.f), w4(5, 0.f);
    for (int32_t r = 0; r < g_size; ++r) {
      std::vector<float> theirs = {0.5f + float(r), -1.f, 2.f, 0.f, -0.25f * float(r)};
      for (size_t i = 0; i < 5; ++i) {
        w1[i] += 2.f * theirs[i];
        w2[i] += (std::exp(theirs[i]) + 1.f) / float(g_size);
        w3[i] += 3.f * theirs[i];
        w4[i] += 2.f * theirs[i] / float(g_size);
      }
    }
    for (size_t i = 0; i < 5; ++i) w3[i] += 3.f * mine[i];
    expect_near(out_f32(out, 0), w1, 1e-5);
    expect_near(out_f32(out, 1), w2, 1e-5);
    expect_near(out_f32(out, 2), w3, 1e-5);
    expect_near(out_f32(out, 3), w4, 1e-5);
  }
  unsetenv("KB_FUSE");
}

// A run that fails between a bucket's start and its wait (an index out of range, on every rank)
// leaves the function usable: the next run completes the started collective first.
TEST(Dist, ARunFailingWhileABucketIsReducedLeavesTheFunctionUsable) {
  Tensor x = placeholder({3});
  Tensor index = placeholder({1}, KB_INT64);
  Tensor sums =
      bin(kb_add, all_reduce(bin(kb_multiply, x.get(), x.get()).get(), KB_REDUCE_SUM).get(),
          all_reduce(x.get(), KB_REDUCE_SUM).get());
  Tensor picked = make([&](kb_tensor** o) { return kb_gather(x.get(), index.get(), o); });
  Tensor y = bin(kb_add, sums.get(), picked.get());
  Function f = function({x.get(), index.get()}, {y.get()});
  Tensor in = constant_f32({1.f, 2.f, 3.f}, {3});
  Tensor bad = constant<int64_t>({7}, {1});
  kb_tensor* feeds[] = {in.get(), bad.get()};
  kb_tensor_list* out = nullptr;
  EXPECT_EQ(kb_function_call(f.get(), feeds, 2, &out), KB_ERROR_INVALID_ARGUMENT);
  Tensor good = constant<int64_t>({2}, {1});
  for (int round = 0; round < 2; ++round) {
    List ok_out = call(f, {in.get(), good.get()});
    float n = float(g_size);
    expect_near(out_f32(ok_out, 0), {2.f * n + 3.f, 6.f * n + 3.f, 12.f * n + 3.f}, 1e-5);
  }
}

TEST(Dist, Broadcast) {
  int32_t root = g_size - 1;
  Tensor x = constant<int32_t>(rank_data<int32_t>(g_rank, 5), {5});
  Tensor y = make([&](kb_tensor** o) { return kb_broadcast(x.get(), root, o); });
  EXPECT_EQ(values<int32_t>(y.get()), rank_data<int32_t>(root, 5));
}

TEST(Dist, AllGather) {
  Tensor x = constant<float>(rank_data<float>(g_rank, 6), {2, 3});
  Tensor y = make([&](kb_tensor** o) { return kb_all_gather(x.get(), o); });
  EXPECT_EQ(int_shape(y.get()), (Shape{2 * g_size, 3}));
  std::vector<float> want;
  for (int32_t r = 0; r < g_size; ++r) {
    auto v = rank_data<float>(r, 6);
    want.insert(want.end(), v.begin(), v.end());
  }
  EXPECT_EQ(values<float>(y.get()), want);
}

// loss = sum(c_r * f(x)) on every rank r, with c_r = r + 1: the gradient on rank j is what every
// rank's loss contributes through the collective f.
std::vector<float> gradient_through(kb_tensor* y, kb_tensor* x) {
  Tensor c = scalar_f32(float(g_rank + 1));
  Tensor weighted = bin(kb_multiply, y, c.get());
  Tensor loss =
      make([&](kb_tensor** o) { return kb_sum(weighted.get(), nullptr, 0, 0, o); }, "sum");
  kb_tensor* vars[] = {x};
  kb_tensor_list* grads = nullptr;
  ok(kb_gradients(loss.get(), vars, 1, &grads), "gradients");
  List held(grads);
  return values_f32(at(held, 0));
}

TEST(Dist, GradientOfAllReduceIsAllReduce) {
  Tensor x = variable_f32({1, 2, 3}, {3});
  float sum_c = float(g_size * (g_size + 1) / 2);
  EXPECT_EQ(gradient_through(all_reduce(x.get(), KB_REDUCE_SUM).get(), x.get()),
            (std::vector<float>(3, sum_c)));
  EXPECT_EQ(gradient_through(all_reduce(x.get(), KB_REDUCE_AVERAGE).get(), x.get()),
            (std::vector<float>(3, sum_c / float(g_size))));
}

TEST(Dist, GradientOfBroadcastReachesTheRootAlone) {
  Tensor x = variable_f32({1, 2}, {2});
  int32_t root = g_size - 1;
  Tensor y = make([&](kb_tensor** o) { return kb_broadcast(x.get(), root, o); });
  float sum_c = float(g_size * (g_size + 1) / 2);
  EXPECT_EQ(gradient_through(y.get(), x.get()),
            (std::vector<float>(2, g_rank == root ? sum_c : 0.f)));
}

TEST(Dist, GradientOfAllGatherIsReduceScatter) {
  Tensor x = variable_f32({1, 2}, {2});
  Tensor y = make([&](kb_tensor** o) { return kb_all_gather(x.get(), o); });
  // Every rank weighs the whole gathered vector by its c_r: rank j's block gets sum_r c_r.
  float sum_c = float(g_size * (g_size + 1) / 2);
  EXPECT_EQ(gradient_through(y.get(), x.get()), (std::vector<float>(2, sum_c)));
}

TEST(Dist, EagerAllReduceOfValues) {
  auto in = rank_data<double>(g_rank, 4);
  std::vector<double> out(4);
  ok(kb_dist_all_reduce(in.data(), out.data(), 4, KB_FLOAT64, KB_REDUCE_SUM));
  EXPECT_EQ(out, sum_over_ranks<double>(4));
  ok(kb_dist_all_reduce(in.data(), in.data(), 4, KB_FLOAT64, KB_REDUCE_AVERAGE));
  auto avg = sum_over_ranks<double>(4);
  for (auto& v : avg) v /= g_size;
  EXPECT_EQ(in, avg);
}

TEST(Dist, BroadcastVariablesGivesEveryRankTheRootsValues) {
  Tensor a = variable_f32(rank_data<float>(g_rank, 3), {3});
  Tensor b = variable<int64_t>(rank_data<int64_t>(g_rank, 2), {2, 1});
  Tensor held_before = make([&](kb_tensor** o) { return kb_get_value(a.get(), o); });
  kb_tensor* vars[] = {a.get(), b.get()};
  ok(kb_dist_broadcast_variables(vars, 2, 0));
  EXPECT_EQ(values<float>(a.get()), rank_data<float>(0, 3));
  EXPECT_EQ(values<int64_t>(b.get()), rank_data<int64_t>(0, 2));
  // A value handed out earlier keeps its contents.
  EXPECT_EQ(values<float>(held_before.get()), rank_data<float>(g_rank, 3));
}

// The same collectives (a bucket of two sums, an average, a broadcast, an all-gather and its
// gradient) compiled for the CPU and for the GPU give the same values: on a GPU they run through
// NCCL (KB_TEST_EXPECT_NCCL=1 wants it named as the engine), on the emulated one through the
// CPU's engine from device memory.
TEST(Dist, CollectivesOnTheGpuEqualTheCpus) {
  int64_t gpus = 0;
  ok(kb_device_count(KB_DEVICE_CUDA, &gpus));
  if (gpus == 0) {
    GTEST_SKIP() << "no GPU: " << kb_cuda_unavailable_reason();
  }
  Tensor x = placeholder({4, 3});
  Tensor sq = bin(kb_multiply, x.get(), x.get());
  Tensor s1 = all_reduce(sq.get(), KB_REDUCE_SUM);
  Tensor s2 = all_reduce(x.get(), KB_REDUCE_SUM);
  Tensor avg = all_reduce(x.get(), KB_REDUCE_AVERAGE);
  Tensor b = make([&](kb_tensor** o) { return kb_broadcast(avg.get(), g_size - 1, o); });
  Tensor g = make([&](kb_tensor** o) { return kb_all_gather(s1.get(), o); });
  Tensor c = scalar_f32(float(g_rank + 1));
  Tensor weighted = bin(kb_multiply, g.get(), c.get());
  Tensor loss = make([&](kb_tensor** o) { return kb_sum(weighted.get(), nullptr, 0, 0, o); });
  kb_tensor* wrt[] = {x.get()};
  kb_tensor_list* grads = nullptr;
  ok(kb_gradients(loss.get(), wrt, 1, &grads), "gradients");
  List held(grads);
  Tensor dx = at(held, 0);
  Tensor in = constant<float>(rank_data<float>(g_rank, 12), {4, 3});
  std::vector<std::vector<float>> got[2];
  const char* devices[] = {"cpu", "cuda"};
  for (int d = 0; d < 2; ++d) {
    Function f = function({x.get()}, {s1.get(), s2.get(), avg.get(), b.get(), g.get(), dx.get()});
    ok(kb_function_set_device_name(f.get(), devices[d]), devices[d]);
    List out = call(f, {in.get()});
    for (size_t i = 0; i < 6; ++i) got[d].push_back(out_f32(out, i));
  }
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    expect_near(got[1][i], got[0][i], 1e-6);
  }
  if (std::getenv("KB_TEST_EXPECT_NCCL")) {
    EXPECT_NE(std::string(kb_dist_engine()).find("NCCL"), std::string::npos) << kb_dist_engine();
  }
}

TEST(Dist, Barrier) { ok(kb_dist_barrier()); }

TEST(Dist, BadArgumentsAreRefusedOnEveryRankAlike) {
  Tensor x = constant_f32({1, 2}, {2});
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_all_reduce(x.get(), kb_reduce_op(7), &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "all_reduce: unknown reduction 7"));
  EXPECT_EQ(kb_all_reduce(nullptr, KB_REDUCE_SUM, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_all_reduce(x.get(), KB_REDUCE_SUM, nullptr), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_broadcast(x.get(), g_size, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_broadcast(x.get(), -1, &out), KB_ERROR_INVALID_ARGUMENT);
  Tensor scalar = scalar_f32(1);
  EXPECT_EQ(kb_all_gather(scalar.get(), &out), KB_ERROR_SHAPE);
  Tensor half = make([&](kb_tensor** o) { return kb_cast(x.get(), KB_FLOAT16, o); });
  EXPECT_EQ(kb_all_reduce(half.get(), KB_REDUCE_SUM, &out), KB_ERROR_DTYPE);
  EXPECT_NE(std::string(kb_last_error_message()).find("cannot sum float16"), std::string::npos);
  EXPECT_EQ(out, nullptr);
  float v = 0;
  EXPECT_EQ(kb_dist_all_reduce(&v, &v, 1, KB_BOOL, KB_REDUCE_SUM), KB_ERROR_DTYPE);
  EXPECT_EQ(kb_dist_all_reduce(nullptr, &v, 1, KB_FLOAT32, KB_REDUCE_SUM),
            KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_dist_set_timeout(0), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_dist_set_timeout(-1), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_dist_rank(nullptr), KB_ERROR_INVALID_ARGUMENT);
  kb_tensor* not_a_variable[] = {x.get()};
  EXPECT_EQ(kb_dist_broadcast_variables(not_a_variable, 1, 0), KB_ERROR_INVALID_ARGUMENT);
  // Nothing above reached the engine: the ranks still agree.
  ok(kb_dist_barrier());
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  bool expect_mpi = std::getenv("KB_TEST_EXPECT_NO_MPI") == nullptr;
  kb_status s = kb_dist_init();
  if (expect_mpi ? s != KB_OK : s != KB_ERROR_UNAVAILABLE) {
    std::fprintf(stderr, "kb_dist_init returned %d: %s\n", int(s), kb_last_error_message());
    return 1;
  }
  if (!expect_mpi) {
    std::printf("without MPI, as expected: %s\n", kb_last_error_message());
    // The plugin KB_MPI_PLUGIN names is missing: the message says so, not "built without MPI".
    if (std::strstr(kb_last_error_message(), "KB_MPI_PLUGIN names") == nullptr) return 1;
  }
  int32_t initialized = -1;
  if (kb_dist_initialized(&initialized) != KB_OK || initialized != (expect_mpi ? 1 : 0)) return 1;
  if (kb_dist_rank(&g_rank) != KB_OK || kb_dist_size(&g_size) != KB_OK) return 1;
  if (expect_mpi) std::printf("rank %d of %d, %s\n", g_rank, g_size, kb_dist_engine());
  int failed = RUN_ALL_TESTS();
  if (expect_mpi) std::printf("rank %d after the tests: %s\n", g_rank, kb_dist_engine());
  // The job fails when any rank did.
  int32_t any = failed ? 1 : 0;
  if (kb_dist_all_reduce(&any, &any, 1, KB_INT32, KB_REDUCE_SUM) != KB_OK) return 1;
  if (kb_dist_finalize() != KB_OK) {
    std::fprintf(stderr, "kb_dist_finalize: %s\n", kb_last_error_message());
    return 1;
  }
  return any ? 1 : 0;
}
