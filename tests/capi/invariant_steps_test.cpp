// What a plan computes from variables it does not update (invariant steps, kept between calls,
// and a convolution's weights kept in oneDNN's layout) follows every way those variables change:
// kb_set_value, another function's update, a write through memory lent over DLPack, and a DLPack
// constant whose producer writes it between calls.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

std::vector<float> ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * float((i * 37) % 101) / 101.f + offset;
  return v;
}

const Shape kX{1, 16, 16, 32}, kW{3, 3, 32, 32};

Tensor conv(kb_tensor* x, kb_tensor* w) {
  const int64_t strides[] = {1, 1}, dilation[] = {1, 1};
  return make([&](kb_tensor** o) {
    return kb_conv2d(x, w, strides, 2, KB_PADDING_SAME, KB_CHANNELS_LAST, dilation, 2, o);
  });
}

// y = conv(x, w * 2) + 1: a kept kernel (w * 2) that the convolution reads as stable weights.
struct Model {
  Tensor x = placeholder(kX);
  Tensor w = variable_f32(ramp(3 * 3 * 32 * 32, 0.2f, -0.1f), kW, "w");
  Tensor two = scalar_f32(2), one = scalar_f32(1);
  Tensor y =
      bin(kb_add, conv(x.get(), bin(kb_multiply, w.get(), two.get()).get()).get(), one.get());
  // The convolution straight on the variable: its weights are the variable's own storage.
  Tensor z = conv(x.get(), w.get());
  Function f = function({x.get()}, {y.get(), z.get()});
};

// The outputs of a function compiled now (nothing kept from earlier calls).
List fresh(Model& m, kb_tensor* in) {
  Function g = function({m.x.get()}, {m.y.get(), m.z.get()});
  return call(g, {in});
}

void expect_as_fresh(Model& m, kb_tensor* in, const char* when) {
  SCOPED_TRACE(when);
  List got = call(m.f, {in});
  List want = fresh(m, in);
  expect_near(out_f32(got, 0), out_f32(want, 0), 1e-5);
  expect_near(out_f32(got, 1), out_f32(want, 1), 1e-5);
}

}  // namespace

TEST(InvariantSteps, FollowSetValue) {
  Model m;
  Tensor in = constant_f32(ramp(16 * 16 * 32, 1.f, 0.f), kX);
  List first = call(m.f, {in.get()});
  expect_as_fresh(m, in.get(), "a second call");
  Tensor w2 = constant_f32(ramp(3 * 3 * 32 * 32, -0.3f, 0.05f), kW);
  ok(kb_set_value(m.w.get(), w2.get()), "set_value");
  expect_as_fresh(m, in.get(), "after set_value");
  List after = call(m.f, {in.get()});
  EXPECT_NE(out_f32(first, 0), out_f32(after, 0));
}

TEST(InvariantSteps, FollowAnotherFunctionsUpdates) {
  Model m;
  Tensor in = constant_f32(ramp(16 * 16 * 32, 1.f, 0.f), kX);
  Tensor step = scalar_f32(0.01f);
  Tensor upd = make([&](kb_tensor** o) { return kb_update_add(m.w.get(), step.get(), o); });
  Function train = function({}, {}, {upd.get()});
  for (int i = 0; i < 4; ++i) {
    call(m.f, {in.get()});
    call(train);
    expect_as_fresh(m, in.get(), "after an update");
  }
}

TEST(InvariantSteps, FollowWritesThroughLentMemory) {
  Model m;
  Tensor in = constant_f32(ramp(16 * 16 * 32, 1.f, 0.f), kX);
  call(m.f, {in.get()});
  DLManagedTensor* lent = nullptr;
  ok(kb_tensor_to_dlpack_unversioned(m.w.get(), KB_DLPACK_COPY_NEVER, &lent), "to_dlpack");
  float* data = static_cast<float*>(lent->dl_tensor.data);
  for (int round = 0; round < 2; ++round) {
    for (int64_t i = 0; i < 3 * 3 * 32 * 32; ++i) data[i] = data[i] * -1.5f + 0.01f;
    expect_as_fresh(m, in.get(), "after a write through DLPack");
  }
  kb_dlpack_release_unversioned(lent);
}

TEST(InvariantSteps, FollowAProducerWritingItsMemory) {
  // The kernel is a constant over a producer's memory, which it changes between calls: the plan
  // reads it where it lies (a constant's value computed from it would be folded when the
  // function is made), and the convolution must not keep a copy of it.
  std::vector<float> weights = ramp(3 * 3 * 32 * 32, 0.2f, -0.1f);
  std::vector<int64_t> shape(kW.begin(), kW.end());
  DLManagedTensor managed{};
  managed.dl_tensor.data = weights.data();
  managed.dl_tensor.device = {kDLCPU, 0};
  managed.dl_tensor.ndim = 4;
  managed.dl_tensor.dtype = {kDLFloat, 32, 1};
  managed.dl_tensor.shape = shape.data();
  managed.deleter = [](DLManagedTensor*) {};
  kb_tensor* raw = nullptr;
  ok(kb_tensor_from_dlpack_unversioned(&managed, KB_DLPACK_COPY_NEVER, &raw), "from_dlpack");
  Tensor w = Tensor::adopt(raw);
  Tensor x = placeholder(kX);
  Function f = function({x.get()}, {conv(x.get(), w.get()).get()});
  // On the CPU: a device plan copies its constants to the device once, when it is made.
  ok(kb_function_set_device_name(f.get(), "cpu"), "set_device_name");
  Tensor in = constant_f32(ramp(16 * 16 * 32, 1.f, 0.f), kX);
  for (int round = 0; round < 3; ++round) {
    List got = call(f, {in.get()});
    Tensor copy = constant_f32(weights, kW);  // the producer's values now, copied
    Function g = function({x.get()}, {conv(x.get(), copy.get()).get()});
    ok(kb_function_set_device_name(g.get(), "cpu"), "set_device_name");
    expect_near(out_f32(got, 0), out_f32(call(g, {in.get()}), 0), 1e-5);
    for (float& v : weights) v = v * 0.5f + 0.02f;
  }
}
