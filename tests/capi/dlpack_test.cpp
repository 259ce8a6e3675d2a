// DLPack through the C ABI: tensors lent out and memory taken in, zero-copy, with the lifetime
// rules of include/kbackend.h. The unversioned struct is Debian's dlpack.h (libdlpack-dev); the
// versioned one is written here from the DLPack 1.x standard, apart from the library's own.
#include <dlpack/dlpack.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "capi/helpers.h"

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
struct DLManagedTensorVersioned {
  struct {
    uint32_t major, minor;
  } version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
#endif

using namespace kbt;

namespace {

constexpr uint64_t kReadOnly = 1, kIsCopied = 2;

// Memory a producer lends: its own copy of the values, and a count of its deleter's calls.
struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  std::atomic<int> deleted{0};
  DLManagedTensorVersioned managed{};
  DLManagedTensor unversioned{};

  Producer(std::vector<float> values, Shape dims)
      : data(std::move(values)), shape(std::move(dims)) {
    DLTensor& t = managed.dl_tensor;
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = int32_t(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    managed.version = {1, 0};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) {
      static_cast<Producer*>(self->manager_ctx)->deleted++;
    };
    unversioned.dl_tensor = t;
    unversioned.manager_ctx = this;
    unversioned.deleter = [](DLManagedTensor* self) {
      static_cast<Producer*>(self->manager_ctx)->deleted++;
    };
  }
  void set_strides(std::vector<int64_t> s) {
    strides = std::move(s);
    managed.dl_tensor.strides = strides.data();
  }
};

Tensor take(DLManagedTensorVersioned* m, kb_dlpack_copy copy = KB_DLPACK_COPY_NEVER) {
  return make([&](kb_tensor** o) { return kb_tensor_from_dlpack(m, copy, o); }, "from_dlpack");
}

// Lends t and hands the managed tensor to a unique_ptr that calls its deleter.
struct Lent {
  DLManagedTensorVersioned* m = nullptr;
  explicit Lent(kb_tensor* t, kb_dlpack_copy copy = KB_DLPACK_COPY_NEVER) {
    ok(kb_tensor_to_dlpack(t, copy, &m), "to_dlpack");
  }
  ~Lent() {
    if (m) m->deleter(m);
  }
  const DLTensor& t() const { return m->dl_tensor; }
  const float* f32() const {
    return reinterpret_cast<const float*>(static_cast<const char*>(t().data) + t().byte_offset);
  }
};

// y = 2 x, compiled once.
struct Doubler {
  Tensor x = placeholder({-1, 3});
  Tensor y = bin(kb_multiply, x.get(), scalar_f32(2.0f).get());
  Function f = function({x.get()}, {y.get()});
  std::vector<float> operator()(kb_tensor* in) { return out_f32(call(f, {in}), 0); }
};

}  // namespace

TEST(DLPack, LendsAConstantReadOnlyWithItsShapeAndStrides) {
  Tensor c = constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Lent lent(c.get());
  EXPECT_EQ(lent.m->version.major, 1u);
  EXPECT_EQ(lent.m->flags, kReadOnly);
  const DLTensor& t = lent.t();
  EXPECT_EQ(t.device.device_type, kDLCPU);
  EXPECT_EQ(t.ndim, 2);
  EXPECT_EQ(t.dtype.code, kDLFloat);
  EXPECT_EQ(t.dtype.bits, 32);
  EXPECT_EQ(t.dtype.lanes, 1);
  EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + 2), (std::vector<int64_t>{2, 3}));
  ASSERT_NE(t.strides, nullptr);
  EXPECT_EQ(std::vector<int64_t>(t.strides, t.strides + 2), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(std::vector<float>(lent.f32(), lent.f32() + 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(DLPack, LentMemoryOutlivesTheTensor) {
  DLManagedTensorVersioned* m = nullptr;
  {
    Tensor c = constant_f32({7, 8}, {2});
    ok(kb_tensor_to_dlpack(c.get(), KB_DLPACK_COPY_NEVER, &m), "to_dlpack");
  }  // the tensor is gone; the managed tensor holds the value (ASan sees a use after free)
  const float* p = static_cast<const float*>(m->dl_tensor.data);
  EXPECT_EQ(p[0], 7.0f);
  EXPECT_EQ(p[1], 8.0f);
  std::thread([m] { m->deleter(m); }).join();  // from any thread
}

TEST(DLPack, LendsAComputedValueAndACopyOnRequest) {
  Tensor c = constant_f32({1, 2, 3}, {3});
  Tensor y = bin(kb_add, c.get(), c.get());
  Lent lent(y.get());
  EXPECT_EQ(lent.m->flags, 0u);
  EXPECT_EQ(std::vector<float>(lent.f32(), lent.f32() + 3), (std::vector<float>{2, 4, 6}));

  Lent a(c.get()), b(c.get()), copy(c.get(), KB_DLPACK_COPY_ALWAYS);
  EXPECT_EQ(a.t().data, b.t().data);  // the constant's own memory, each time
  EXPECT_NE(copy.t().data, a.t().data);
  EXPECT_EQ(copy.m->flags, kIsCopied);
  EXPECT_EQ(std::vector<float>(copy.f32(), copy.f32() + 3), (std::vector<float>{1, 2, 3}));
}

TEST(DLPack, AVariableLentIsItsValueUntilAnUpdate) {
  Tensor v = variable_f32({1, 2, 3}, {3});
  Lent lent(v.get());
  EXPECT_EQ(lent.m->flags, 0u);  // writable: the variable's own memory
  const_cast<float*>(lent.f32())[0] = 10;
  EXPECT_EQ(values_f32(v), (std::vector<float>{10, 2, 3}));
  // An update gives the variable new memory; what was lent keeps its contents.
  Tensor inc = constant_f32({1, 1, 1}, {3});
  Tensor u = make([&](kb_tensor** o) { return kb_update_add(v.get(), inc.get(), o); });
  Function f = function({}, {}, {u.get()});
  call(f);
  call(f);
  EXPECT_EQ(values_f32(v), (std::vector<float>{12, 4, 5}));
  EXPECT_EQ(std::vector<float>(lent.f32(), lent.f32() + 3), (std::vector<float>{10, 2, 3}));
}

TEST(DLPack, TakesMemoryWithoutCopyingAndFreesItOnce) {
  Producer p({1, 2, 3, 4, 5, 6}, {2, 3});
  {
    Doubler twice;
    {
      Tensor t = take(&p.managed);
      Lent again(t.get());  // the producer's own memory, lent on
      EXPECT_EQ(again.t().data, p.data.data());
      EXPECT_EQ(twice(t.get()), (std::vector<float>{2, 4, 6, 8, 10, 12}));
      p.data[0] = 100;  // a write by the producer is seen: the memory is shared
      EXPECT_EQ(twice(t.get()), (std::vector<float>{200, 4, 6, 8, 10, 12}));
      EXPECT_EQ(values_f32(t), (std::vector<float>{100, 2, 3, 4, 5, 6}));
    }
    // The function may keep its last inputs; the deleter waits for every holder.
  }
  EXPECT_EQ(p.deleted.load(), 1);
}

TEST(DLPack, TakesOffsetViewsAndCopiesStridedOnesWhereAllowed) {
  Producer p({0, 1, 2, 3, 4, 5, 6, 7}, {2, 3});
  p.managed.dl_tensor.byte_offset = 2 * sizeof(float);  // the view starts at element 2
  {
    Tensor t = take(&p.managed);
    EXPECT_EQ(values_f32(t), (std::vector<float>{2, 3, 4, 5, 6, 7}));
  }
  EXPECT_EQ(p.deleted.load(), 1);

  // The transpose of a 3x2 row-major matrix: strides (1, 2) over shape (2, 3).
  Producer q({1, 2, 3, 4, 5, 6}, {2, 3});
  q.set_strides({1, 2});
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_tensor_from_dlpack(&q.managed, KB_DLPACK_COPY_NEVER, &out),
            KB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kb_last_error_message()).find("strides"), std::string::npos);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(q.deleted.load(), 0);  // refused: still the caller's
  Tensor t = take(&q.managed, KB_DLPACK_COPY_IF_NEEDED);
  EXPECT_EQ(q.deleted.load(), 1);  // copied: freed at once
  EXPECT_EQ(values_f32(t), (std::vector<float>{1, 3, 5, 2, 4, 6}));

  // Strides of a compact tensor, and any stride of a dim of one, read in place.
  Producer r({1, 2, 3}, {1, 3});
  r.set_strides({99, 1});
  Tensor u = take(&r.managed);
  Lent lent(u.get());
  EXPECT_EQ(lent.t().data, r.data.data());
}

TEST(DLPack, CopiesMisalignedDataOnlyWhereAllowed) {
  Producer p({}, {3});
  std::vector<char> bytes(sizeof(float) * 3 + 1);
  float v[3] = {1.5f, -2.0f, 4.0f};
  std::memcpy(bytes.data() + 1, v, sizeof v);
  p.managed.dl_tensor.data = bytes.data();
  p.managed.dl_tensor.byte_offset = 1;
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_tensor_from_dlpack(&p.managed, KB_DLPACK_COPY_NEVER, &out),
            KB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kb_last_error_message()).find("aligned"), std::string::npos);
  Tensor t = take(&p.managed, KB_DLPACK_COPY_IF_NEEDED);
  EXPECT_EQ(values_f32(t), (std::vector<float>{1.5f, -2.0f, 4.0f}));
  EXPECT_EQ(p.deleted.load(), 1);
}

TEST(DLPack, CopyAlwaysTakesACopy) {
  Producer p({1, 2}, {2});
  Tensor t = take(&p.managed, KB_DLPACK_COPY_ALWAYS);
  EXPECT_EQ(p.deleted.load(), 1);
  p.data[0] = 50;
  EXPECT_EQ(values_f32(t), (std::vector<float>{1, 2}));
}

TEST(DLPack, RefusesWhatItCannotReadAndLeavesTheTensorAsItWas) {
  struct Case {
    const char* what;
    void (*spoil)(DLManagedTensorVersioned&);
    kb_status status;
    const char* message;
  };
  const Case cases[] = {
      {"two lanes", [](DLManagedTensorVersioned& m) { m.dl_tensor.dtype.lanes = 2; },
       KB_ERROR_DTYPE, "lane"},
      {"uint16",
       [](DLManagedTensorVersioned& m) {
         m.dl_tensor.dtype = {kDLUInt, 16, 1};
       },
       KB_ERROR_DTYPE, "uint of 16 bits"},
      {"complex",
       [](DLManagedTensorVersioned& m) {
         m.dl_tensor.dtype = {5, 64, 1};
       },
       KB_ERROR_DTYPE, "complex"},
      {"a GPU",
       [](DLManagedTensorVersioned& m) {
         m.dl_tensor.device = {kDLCUDA, 0};
       },
       KB_ERROR_DEVICE, "kDLCUDA"},
      {"DLPack 2", [](DLManagedTensorVersioned& m) { m.version.major = 2; },
       KB_ERROR_NOT_IMPLEMENTED, "DLPack 2.0"},
      {"65 dims", [](DLManagedTensorVersioned& m) { m.dl_tensor.ndim = 65; },
       KB_ERROR_INVALID_ARGUMENT, "ndim 65"},
      {"negative ndim", [](DLManagedTensorVersioned& m) { m.dl_tensor.ndim = -1; },
       KB_ERROR_INVALID_ARGUMENT, "ndim -1"},
      {"a negative dim", [](DLManagedTensorVersioned& m) { m.dl_tensor.shape[1] = -3; },
       KB_ERROR_INVALID_ARGUMENT, "negative"},
      {"NULL data", [](DLManagedTensorVersioned& m) { m.dl_tensor.data = nullptr; },
       KB_ERROR_INVALID_ARGUMENT, "NULL"},
      {"NULL shape", [](DLManagedTensorVersioned& m) { m.dl_tensor.shape = nullptr; },
       KB_ERROR_INVALID_ARGUMENT, "shape is NULL"},
      {"too many elements",
       [](DLManagedTensorVersioned& m) {
         m.dl_tensor.shape[0] = int64_t(1) << 40;
         m.dl_tensor.shape[1] = int64_t(1) << 40;
       },
       KB_ERROR_INVALID_ARGUMENT, "too many"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Producer p({1, 2, 3, 4}, {2, 2});
    DLManagedTensorVersioned before;
    c.spoil(p.managed);
    std::memcpy(&before, &p.managed, sizeof before);
    kb_tensor* out = nullptr;
    EXPECT_EQ(kb_tensor_from_dlpack(&p.managed, KB_DLPACK_COPY_IF_NEEDED, &out), c.status);
    std::string msg = kb_last_error_message();
    EXPECT_NE(msg.find("tensor_from_dlpack"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(p.deleted.load(), 0);
    EXPECT_EQ(std::memcmp(&before, &p.managed, sizeof before), 0);
  }
  Producer p({1}, {1});
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_tensor_from_dlpack(nullptr, KB_DLPACK_COPY_NEVER, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_tensor_from_dlpack(&p.managed, KB_DLPACK_COPY_NEVER, nullptr),
            KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kb_tensor_from_dlpack(&p.managed, kb_dlpack_copy(7), &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(p.deleted.load(), 0);
  DLManagedTensorVersioned* m = nullptr;
  EXPECT_EQ(kb_tensor_to_dlpack(nullptr, KB_DLPACK_COPY_NEVER, &m), KB_ERROR_INVALID_ARGUMENT);
  Tensor c = constant_f32({1}, {1});
  EXPECT_EQ(kb_tensor_to_dlpack(c.get(), KB_DLPACK_COPY_NEVER, nullptr), KB_ERROR_INVALID_ARGUMENT);
  Tensor x = placeholder({2});
  EXPECT_NE(kb_tensor_to_dlpack(x.get(), KB_DLPACK_COPY_NEVER, &m), KB_OK);  // no value
  EXPECT_EQ(m, nullptr);
}

TEST(DLPack, EveryDTypeRoundTrips) {
  const std::pair<kb_data_type, DLDataType> types[] = {
      {KB_FLOAT16, {kDLFloat, 16, 1}}, {KB_FLOAT32, {kDLFloat, 32, 1}},
      {KB_FLOAT64, {kDLFloat, 64, 1}}, {KB_BFLOAT16, {kDLBfloat, 16, 1}},
      {KB_INT8, {kDLInt, 8, 1}},       {KB_INT16, {kDLInt, 16, 1}},
      {KB_INT32, {kDLInt, 32, 1}},     {KB_INT64, {kDLInt, 64, 1}},
      {KB_UINT8, {kDLUInt, 8, 1}},     {KB_BOOL, {6, 8, 1}}};
  for (const auto& [dtype, dl] : types) {
    SCOPED_TRACE(kb_dtype_name(dtype));
    std::vector<uint8_t> bytes(5 * (dl.bits / 8));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(dtype == KB_BOOL ? i % 2 : i * 7);
    Shape shape = {5};
    kb_tensor* raw = nullptr;
    ok(kb_tensor_from_data(bytes.data(), dtype, shape.data(), 1, &raw), "tensor_from_data");
    Tensor c = Tensor::adopt(raw);
    Lent lent(c.get());
    EXPECT_EQ(lent.t().dtype.code, dl.code);
    EXPECT_EQ(lent.t().dtype.bits, dl.bits);
    EXPECT_EQ(std::memcmp(lent.t().data, bytes.data(), bytes.size()), 0);
    DLManagedTensorVersioned* m = nullptr;
    ok(kb_tensor_to_dlpack(c.get(), KB_DLPACK_COPY_NEVER, &m), "to_dlpack");
    Tensor back = take(m);  // the library's own managed tensor, taken back
    EXPECT_EQ(dtype_of(back.get()), dtype);
    std::vector<uint8_t> got(bytes.size());
    ok(kb_tensor_copy_to(back.get(), got.data(), got.size()), "copy_to");
    EXPECT_EQ(got, bytes);
  }
}

TEST(DLPack, ScalarsAndEmptyTensors) {
  Tensor s = scalar_f32(3.5f);
  DLManagedTensorVersioned* m = nullptr;
  ok(kb_tensor_to_dlpack(s.get(), KB_DLPACK_COPY_NEVER, &m), "to_dlpack");
  EXPECT_EQ(m->dl_tensor.ndim, 0);
  Tensor back = take(m);
  EXPECT_EQ(int_shape(back.get()), Shape{});
  EXPECT_EQ(values_f32(back), std::vector<float>{3.5f});

  Producer p({}, {0, 4});
  p.managed.dl_tensor.data = nullptr;  // no elements: no memory needed
  Tensor e = take(&p.managed);
  EXPECT_EQ(int_shape(e.get()), (Shape{0, 4}));
}

TEST(DLPack, UnversionedStructsBothWays) {
  Tensor c = constant_f32({1, 2, 3, 4}, {2, 2});
  DLManagedTensor* m = nullptr;
  ok(kb_tensor_to_dlpack_unversioned(c.get(), KB_DLPACK_COPY_NEVER, &m), "to_dlpack_unversioned");
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(static_cast<const float*>(m->dl_tensor.data)[3], 4.0f);
  kb_tensor* raw = nullptr;
  ok(kb_tensor_from_dlpack_unversioned(m, KB_DLPACK_COPY_NEVER, &raw), "from_dlpack_unversioned");
  Tensor back = Tensor::adopt(raw);
  EXPECT_EQ(values_f32(back), (std::vector<float>{1, 2, 3, 4}));

  Producer p({5, 6, 7}, {3});
  {
    Tensor t = make([&](kb_tensor** o) {
      return kb_tensor_from_dlpack_unversioned(&p.unversioned, KB_DLPACK_COPY_NEVER, o);
    });
    EXPECT_EQ(values_f32(t), (std::vector<float>{5, 6, 7}));
  }
  EXPECT_EQ(p.deleted.load(), 1);
  p.unversioned.dl_tensor.device = {kDLCUDA, 0};
  EXPECT_EQ(kb_tensor_from_dlpack_unversioned(&p.unversioned, KB_DLPACK_COPY_NEVER, &raw),
            KB_ERROR_DEVICE);
  EXPECT_EQ(p.deleted.load(), 1);
}
