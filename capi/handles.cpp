#include "capi/handles.h"

#include <cctype>
#include <cstring>

namespace kb::capi {

namespace {
thread_local kb_status g_code = KB_OK;
thread_local std::string g_message;
// Set when the message could not be stored (no memory for it).
thread_local const char* g_fixed_message = nullptr;

// Stores the message `fill` writes into g_message; out of memory, a fixed text instead.
template <class F>
void record(kb_status code, F&& fill) noexcept {
  g_code = code;
  g_fixed_message = nullptr;
  try {
    fill(g_message);
  } catch (...) {
    g_message.clear();
    g_fixed_message = "out of memory while reporting an error";
  }
}

}  // namespace

void set_error(kb_status code, const char* who, const char* message) noexcept {
  record(code, [&](std::string& m) {
    m.clear();  // keeps its capacity: a short message needs no allocation
    if (std::strncmp(message, who, std::strlen(who)) != 0) m.append(who).append(": ");
    if (code == KB_ERROR_INTERNAL) m.append("internal error: ");
    m.append(message);
  });
}
void set_error(kb_status code, const char* message) noexcept {
  // assign, which may read its own buffer: a callback may pass kb_last_error_message() on.
  record(code, [&](std::string& m) { m.assign(message); });
}
void clear_error() noexcept {
  g_code = KB_OK;
  g_fixed_message = nullptr;
  g_message.clear();
}
kb_status last_code() { return g_code; }
const char* last_message() { return g_fixed_message ? g_fixed_message : g_message.c_str(); }

std::vector<NodePtr> tensor_list_arg(kb_tensor* const* ts, size_t n, const char* who,
                                     const char* what) {
  std::vector<NodePtr> out;
  tensor_list_into(ts, n, who, what, out);
  return out;
}

void tensor_list_into(kb_tensor* const* ts, size_t n, const char* who, const char* what,
                      std::vector<NodePtr>& out) {
  check(n == 0 || ts != nullptr, Status::invalid_argument, who, ": the ", what, " array is NULL");
  out.clear();
  for (size_t i = 0; i < n; ++i) {
    check(ts[i] != nullptr && ts[i]->node != nullptr, Status::invalid_argument, who, ": ", what,
          "[", i, "] is NULL");
    out.push_back(ts[i]->node);
  }
}

kb_tensor* wrap(NodePtr n) {
  check(n != nullptr, Status::internal, "no result");
  auto* t = new kb_tensor;
  t->node = std::move(n);
  return t;
}

kb_tensor_list* wrap_list(std::vector<NodePtr> ns) {
  auto* l = new kb_tensor_list;
  l->items = std::move(ns);
  return l;
}

DType dtype_arg(kb_data_type d, const char* who) {
  check(is_valid_dtype(int32_t(d)), Status::invalid_argument, who, ": unknown dtype ", int(d));
  return static_cast<DType>(d);
}

std::optional<DType> optional_dtype_arg(kb_data_type d, const char* who) {
  if (d == KB_DTYPE_DEFAULT) return std::nullopt;
  return dtype_arg(d, who);
}

Dims dims_arg(const int64_t* dims, size_t ndim, const char* who, const char* what) {
  check(ndim == 0 || dims != nullptr, Status::invalid_argument, who, ": ", what, " is NULL");
  check(ndim <= 64, Status::invalid_argument, who, ": ", what, " has ", ndim, " entries");
  return Dims(dims, dims + ndim);
}

std::vector<int64_t> list_arg(const int64_t* v, size_t n, const std::vector<int64_t>& fallback,
                              const char* who, const char* what) {
  if (!v) {
    check(n == 0, Status::invalid_argument, who, ": ", what, " is NULL but its count is ", n);
    return fallback;
  }
  return dims_arg(v, n, who, what);
}

std::vector<int64_t> required_list_arg(const int64_t* v, size_t n, const char* who,
                                       const char* what) {
  check(v != nullptr, Status::invalid_argument, who, ": ", what, " is NULL");
  return dims_arg(v, n, who, what);
}

std::optional<int64_t> seed_arg(const int64_t* seed) {
  if (!seed) return std::nullopt;
  return *seed;
}

std::optional<std::vector<int64_t>> axes_arg(const int64_t* axes, size_t n, const char* who) {
  if (!axes) {
    check(n == 0, Status::invalid_argument, who, ": axes is NULL but its count is ", n);
    return std::nullopt;
  }
  return std::vector<int64_t>(axes, axes + n);
}

std::string name_arg(const char* name) { return name ? std::string(name) : std::string(); }

std::string lower(const char* s) {
  std::string r(s);
  for (auto& ch : r) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

std::optional<DataFormat> format_arg(const kb_data_format& f, const char* who) {
  int32_t v = raw_enum(f);
  if (v == KB_DATA_FORMAT_DEFAULT) return std::nullopt;
  check(v == KB_CHANNELS_LAST || v == KB_CHANNELS_FIRST, Status::invalid_argument, who,
        ": unknown data_format ", v);
  return DataFormat(v);
}

std::shared_ptr<Buffer> buffer_from(const void* data, kb_data_type dtype, const int64_t* shape,
                                    size_t ndim, const char* who) {
  DType t = dtype_arg(dtype, who);
  Dims d = dims_arg(shape, ndim, who, "shape");
  for (int64_t v : d)
    check(v >= 0, Status::invalid_argument, who, ": shape ", dims_str(d),
          " has a negative dimension");
  // Checked before allocating: a NULL with a large shape is a mistake, not a request for memory.
  check(data != nullptr || numel(d) == 0, Status::invalid_argument, who, ": data is NULL");
  auto b = Buffer::make(t, d);
  if (t == DType::b8) {
    // Any nonzero byte is true (C's and NumPy's view): stored as 1, since the kernels read
    // bools as bool and a byte of 2 would be an invalid value to them.
    const auto* src = static_cast<const uint8_t*>(data);
    auto* dst = static_cast<uint8_t*>(b->data());
    for (size_t i = 0; i < b->nbytes(); ++i) dst[i] = src[i] != 0;
  } else if (b->nbytes()) {
    std::memcpy(b->data(), data, b->nbytes());
  }
  return b;
}

}  // namespace kb::capi
