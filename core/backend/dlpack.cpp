#include "core/backend/dlpack.h"

#include <cstring>
#include <new>
#include <vector>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::dlpack {

// Runs the managed tensor's deleter at its end, once armed.
struct Taken::Claim {
  void* managed = nullptr;
  void (*release)(void*) = nullptr;
  ~Claim() {
    if (managed) release(managed);
  }
};

namespace {

// The most dims a tensor crossing the C ABI has (docs/status.md: shapes through the C ABI).
constexpr int32_t kMaxDims = 64;

// Each dtype's DLPack type (code, bits), both ways.
struct TypePair {
  DType dtype;
  uint8_t code, bits;
};
constexpr TypePair kTypes[] = {{DType::f16, kFloat, 16}, {DType::f32, kFloat, 32},
                               {DType::f64, kFloat, 64}, {DType::bf16, kBfloat, 16},
                               {DType::i8, kInt, 8},     {DType::i16, kInt, 16},
                               {DType::i32, kInt, 32},   {DType::i64, kInt, 64},
                               {DType::u8, kUInt, 8},    {DType::b8, kBool, 8}};

DataType data_type_of(DType t) {
  for (const TypePair& p : kTypes)
    if (p.dtype == t) return {p.code, p.bits, 1};
  fail(Status::internal, "dlpack: no DLPack type for dtype ", int(t));
}

const char* code_name(uint8_t code) {
  switch (code) {
    case kInt:
      return "int";
    case kUInt:
      return "uint";
    case kFloat:
      return "float";
    case kBfloat:
      return "bfloat";
    case kBool:
      return "bool";
    case 3:
      return "opaque handle";
    case 5:
      return "complex";
    default:
      return code <= 17 ? "float8/6/4" : "unknown";
  }
}

DType dtype_of(const DataType& d, const char* who) {
  check(d.lanes == 1, Status::dtype, who, ": a DLPack tensor of ", d.lanes,
        "-lane vectors; kbackend takes one lane per element");
  for (const TypePair& p : kTypes)
    if (p.code == d.code && p.bits == d.bits) return p.dtype;
  fail(Status::dtype, who, ": kbackend has no dtype for DLPack's ", code_name(d.code), " of ",
       int(d.bits), " bits (it takes float16/32/64, bfloat16, int8/16/32/64, uint8 and bool)");
}

// What the consumer receives and the deleter frees.
template <class M>
struct Exported {
  M managed{};
  std::shared_ptr<Buffer> value;
  std::vector<int64_t> shape, strides;
};

template <class M>
void delete_exported(M* self) {
  if (self) delete static_cast<Exported<M>*>(self->manager_ctx);
}

template <class M>
Exported<M>* make_exported(std::shared_ptr<Buffer> value, bool copy) {
  check(value != nullptr, Status::invalid_argument, "dlpack: no value");
  check(value->device == Device::cpu, Status::device,
        "dlpack: the value is in device memory; kbackend lends host memory");
  if (copy) value = Buffer::from_bytes(value->dtype, value->dims, value->data());
  // The consumer may write lent memory (a variable's: that changes the variable; a constant's
  // is flagged read-only, which not every consumer honours): what a kernel kept from it is not
  // trusted from now on. A copy is the consumer's alone.
  if (!copy) value->external = true;
  auto* e = new Exported<M>;
  e->value = std::move(value);
  const Dims& dims = e->value->dims;
  e->shape.assign(dims.begin(), dims.end());
  e->strides = contiguous_strides(dims);  // always written: DLPack 1.2's consumers require them
  Tensor& t = e->managed.dl_tensor;
  t.data = e->value->data();
  t.device = {kCPU, 0};
  t.ndim = int32_t(dims.size());
  t.dtype = data_type_of(e->value->dtype);
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &delete_exported<M>;
  return e;
}

template <class M>
void release_managed(void* p) {
  release(static_cast<M*>(p));
}

// Copies a strided tensor of `elem` bytes per element into row-major `dst`.
void gather(const char* src, const int64_t* strides, const Dims& dims, size_t elem, char* dst) {
  const size_t rank = dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t n = numel(dims);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (size_t i = 0; i < rank; ++i) offset += index[i] * strides[i];
    std::memcpy(dst + size_t(k) * elem, src + offset * int64_t(elem), elem);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
}

template <class M>
Taken import_managed(M* m, Copy copy, const char* who) {
  check(m != nullptr, Status::invalid_argument, who, ": the managed tensor is NULL");
  const Tensor& t = m->dl_tensor;
  const int32_t type = t.device.device_type;
  check(type == kCPU || type == kCUDAHost || type == kCUDAManaged, Status::device, who,
        ": the DLPack tensor is on device type ", type, (type == kCUDA ? " (kDLCUDA)" : ""),
        "; kbackend reads DLPack tensors in host memory (kDLCPU, kDLCUDAHost, kDLCUDAManaged)");
  check(t.ndim >= 0 && t.ndim <= kMaxDims, Status::invalid_argument, who, ": ndim ", t.ndim,
        " is not within 0..", kMaxDims);
  check(t.ndim == 0 || t.shape != nullptr, Status::invalid_argument, who,
        ": the shape is NULL for ", t.ndim, " dims");
  const DType dtype = dtype_of(t.dtype, who);
  Dims dims(t.shape, t.shape + t.ndim);
  int64_t count = 1;
  for (int64_t d : dims) {
    check(d >= 0, Status::invalid_argument, who, ": shape ", dims_str(dims),
          " has a negative dimension");
    count = checked_mul(count, d, who, ": shape ", dims_str(dims), " has too many elements");
  }
  const size_t elem = dtype_size(dtype);
  checked_mul(count, int64_t(elem), who, ": shape ", dims_str(dims), " has too many bytes");
  check(t.data != nullptr || count == 0, Status::invalid_argument, who,
        ": the data pointer is NULL for ", count, " elements");
  const char* data = static_cast<const char*>(t.data) + t.byte_offset;

  // Row-major and compact (a dim of one or no elements at all makes any stride fit), and each
  // element aligned to its size, as kbackend's kernels read memory.
  bool compact = true;
  if (t.strides != nullptr && count > 0) {
    const Dims row_major = contiguous_strides(dims);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != 1 && t.strides[i] != row_major[i]) compact = false;
  }
  const bool aligned = reinterpret_cast<uintptr_t>(data) % elem == 0;
  const bool in_place = compact && aligned && copy != Copy::always;
  if (!in_place)
    check(copy != Copy::never, Status::invalid_argument, who, ": the DLPack tensor ",
          !compact ? "has strides other than row-major compact ones"
                   : "is not aligned to its element size",
          ", which kbackend reads only through a copy (allow one)");

  Taken taken;
  taken.managed = m;
  taken.release = &release_managed<M>;
  taken.buffer = std::make_shared<Buffer>(dtype, dims);
  Buffer& b = *taken.buffer;
  if (in_place) {
    taken.claim = std::make_shared<Taken::Claim>();
    b.storage = std::shared_ptr<void>(taken.claim, const_cast<char*>(data));
    b.external = true;  // the producer may write it between calls
    return taken;
  }
  b.allocate();
  if (count > 0) {
    if (compact)
      std::memcpy(b.data(), data, b.nbytes());
    else
      gather(data, t.strides, dims, elem, static_cast<char*>(b.data()));
  }
  return taken;
}

}  // namespace

void Taken::commit() noexcept {
  if (!managed) return;
  if (claim) {
    claim->release = release;
    claim->managed = managed;
  } else {
    release(managed);  // the data was copied: nothing refers to the producer's memory
  }
  managed = nullptr;
  claim.reset();
}

ManagedVersioned* export_versioned(std::shared_ptr<Buffer> value, bool read_only, bool copy) {
  auto* e = make_exported<ManagedVersioned>(std::move(value), copy);
  e->managed.version = {kMajorVersion, kMinorVersion};
  e->managed.flags = (read_only && !copy ? kFlagReadOnly : 0) | (copy ? kFlagIsCopied : 0);
  return &e->managed;
}

Managed* export_unversioned(std::shared_ptr<Buffer> value, bool copy) {
  return &make_exported<Managed>(std::move(value), copy)->managed;
}

Taken import_versioned(ManagedVersioned* m, Copy copy, const char* who) {
  check(m != nullptr, Status::invalid_argument, who, ": the managed tensor is NULL");
  check(m->version.major == kMajorVersion, Status::not_implemented, who,
        ": the tensor is of DLPack ", m->version.major, ".", m->version.minor,
        "; kbackend reads DLPack ", kMajorVersion, ".x");
  return import_managed(m, copy, who);
}

Taken import_unversioned(Managed* m, Copy copy, const char* who) {
  return import_managed(m, copy, who);
}

void release(ManagedVersioned* m) noexcept {
  if (m && m->deleter) m->deleter(m);
}

void release(Managed* m) noexcept {
  if (m && m->deleter) m->deleter(m);
}

}  // namespace kb::dlpack
