// A fuzzer of the C ABI: the input's bytes choose a sequence of calls and their arguments, hostile
// ones included (NULL handles and out-parameters, dims from -2 to INT64_MAX, bad enums and dtypes,
// wrong byte counts, NaN and inf, bad axes, strides, paddings and kernels, wrong inputs to
// compiled functions, callbacks that fail). After every call it checks the ABI's promises: the
// status is kb_last_error_code(), a failure has a message and leaves the out-parameters as they
// were, a success writes a usable handle. A broken promise aborts, which the fuzzer reports.
//
// Built with libFuzzer (clang -fsanitize=fuzzer) it explores; built without it, its main() runs
// the files or folders given on the command line once each (the committed corpus, in ctest).
#include <kbackend.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
// Values computed by eval or a function call stay below this many elements, so that a run
// measures the library's checks rather than the memory bandwidth.
constexpr int64_t kMaxEvalElements = 4096;

[[noreturn]] void broken(const char* call, const char* promise) {
  std::fprintf(stderr, "ABI promise broken by %s: %s (last error %d: %s)\n", call, promise,
               int(kb_last_error_code()), kb_last_error_message());
  std::abort();
}

// The fuzzer's bytes, read as the arguments of calls. Past the end every read gives 0.
class Bytes {
 public:
  Bytes(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool empty() const { return n_ == 0; }
  uint8_t u8() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  uint32_t pick(uint32_t n) { return n ? u8() % n : 0; }
  bool one_in(uint32_t n) { return pick(n) == 0; }

  // Mostly small dims; now and then a hostile one (which marks the call as large).
  int64_t dim() {
    uint8_t b = u8();
    if (b < 224) return b % 5;
    static const int64_t hostile[] = {-1,
                                      -2,
                                      kI64Max,
                                      kI64Min,
                                      1 << 20,
                                      int64_t(1) << 31,
                                      int64_t(1) << 32,
                                      int64_t(1) << 62,
                                      4097,
                                      65536,
                                      100000};
    int64_t v = hostile[b % (sizeof hostile / sizeof *hostile)];
    if (v > 64) large = true;
    return v;
  }
  std::vector<int64_t> dims(size_t max_rank) {
    std::vector<int64_t> d(pick(uint32_t(max_rank) + 1));
    for (int64_t& v : d) v = dim();
    return d;
  }
  int64_t axis() {
    uint8_t b = u8();
    if (b < 240) return int64_t(b % 9) - 4;
    static const int64_t hostile[] = {kI64Max, kI64Min, 1000, -1000};
    return hostile[b % 4];
  }
  std::vector<int64_t> axes(size_t max_n) {
    std::vector<int64_t> a(pick(uint32_t(max_n) + 1));
    for (int64_t& v : a) v = axis();
    return a;
  }
  double number() {
    static const double v[] = {0.0,       1.0,   -1.0,   0.5,  2.0,   1e-7,   0.99,
                               3.0,       1e300, -1e300, 1e30, -1e4,  5e-324, INFINITY,
                               -INFINITY, NAN,   1e-45,  -0.0, 100.0, 0.25};
    double r = v[pick(sizeof v / sizeof *v)];
    if (std::fabs(r) > 1e3) large = true;
    return r;
  }
  kb_data_type dtype() {
    uint8_t b = u8();
    if (b < 240) return kb_data_type(b % 10);
    static const int hostile[] = {-1, 10, 1000, std::numeric_limits<int>::min()};
    return kb_data_type(hostile[b % 4]);
  }
  // An enum of `count` valid values (0..count-1), or a hostile one.
  int enumeration(int count) {
    uint8_t b = u8();
    if (b < 240) return b % count;
    static const int hostile[] = {-1, -2, 1000, std::numeric_limits<int>::max()};
    int v = hostile[b % 4];
    return v < 0 || v >= count ? v : count;
  }
  // A count that may lie about an array's length only downwards (the ABI cannot check lengths).
  size_t count_up_to(size_t n) { return one_in(16) ? 0 : n; }

  bool large = false;  // a hostile size was drawn for the current call

 private:
  const uint8_t* p_;
  size_t n_;
};

size_t dtype_bytes(kb_data_type t) {
  switch (t) {
    case KB_FLOAT16:
    case KB_INT16:
    case KB_BFLOAT16:
      return 2;
    case KB_FLOAT32:
    case KB_INT32:
      return 4;
    case KB_FLOAT64:
    case KB_INT64:
      return 8;
    case KB_INT8:
    case KB_UINT8:
    case KB_BOOL:
      return 1;
    default:
      return 0;
  }
}

// The element count of dims, or -1 when it is unknown, negative or overflows.
int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > kI64Max / d) return -1;
    n *= d;
  }
  return n;
}

// Calls that allocate and fill their value at once (variables, zeros, eye, arange) are made with
// a small size or an impossible one (which must fail at once): a size in between is a legitimate
// request that costs seconds and gigabytes.
bool eager_size_ok(double elements) {
  return !(elements > double(kMaxEvalElements) && elements < 0x1p48);
}
bool eager_size_ok(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= d < 0 ? 1.0 : double(d);
  return eager_size_ok(n);
}

struct Slot {
  kb_tensor* t = nullptr;
  bool small = false;  // its value is bounded: eval and function calls may compute it
};

class Session {
 public:
  static constexpr size_t kSlots = 8;

  explicit Session(Bytes& in) : in_(in) {}
  ~Session() {
    for (Slot& s : slots_) kb_tensor_release(s.t);
    for (kb_compiled_function* f : functions_) kb_function_release(f);
    // Process-wide settings back to their defaults for the next input.
    kb_clear_session();  // uids, learning phase and its scopes, name scopes
    kb_set_epsilon(1e-7);
    kb_set_floatx(KB_FLOAT32);
    kb_set_image_data_format(KB_CHANNELS_LAST);
    kb_set_num_threads(0);
  }

  void run() {
    for (int steps = 0; steps < 64 && !in_.empty(); ++steps) step();
  }

 private:
  // ---- checks ----------------------------------------------------------------------------
  static void check_status(const char* call, kb_status st) {
    static const bool trace = std::getenv("KB_FUZZ_TRACE") != nullptr;
    if (trace) std::fprintf(stderr, "%s -> %d %s\n", call, int(st), kb_last_error_message());
    if (st != kb_last_error_code()) broken(call, "status differs from kb_last_error_code()");
    if (st < KB_OK || st > KB_ERROR_INTERNAL) broken(call, "status outside kb_status");
    if (st == KB_ERROR_INTERNAL) broken(call, "an internal error (an unchecked argument?)");
    const char* msg = kb_last_error_message();
    if (!msg) broken(call, "kb_last_error_message() is NULL");
    if (st != KB_OK && !*msg) broken(call, "a failure without a message");
  }

  // A call with one kb_tensor** out-parameter whose result may be kept; `inputs` are the slots
  // whose values it reads (its result is small only if they are).
  void tensor_call(const char* call, std::initializer_list<int> inputs,
                   const std::function<kb_status(kb_tensor**)>& f) {
    kb_tensor* const poison = reinterpret_cast<kb_tensor*>(uintptr_t(0x5a5a50));
    kb_tensor* out = poison;
    bool null_out = in_.one_in(48);
    kb_status st = f(null_out ? nullptr : &out);
    check_status(call, st);
    if (null_out) {
      if (st == KB_OK) broken(call, "succeeded with a NULL out-parameter");
      return;
    }
    if (st != KB_OK) {
      if (out != poison) broken(call, "wrote its out-parameter on failure");
      return;
    }
    if (out == nullptr || out == poison) broken(call, "succeeded without a result");
    bool small = !in_.large;
    for (int i : inputs) small = small && (i < 0 || slots_[size_t(i)].small);
    keep(out, small);
  }

  void keep(kb_tensor* t, bool small) {
    int64_t ndim = 0;
    int64_t dims[16];
    kb_status st = kb_int_shape(t, dims, 16, &ndim);
    check_status("kb_int_shape", st);
    if (st != KB_OK) broken("kb_int_shape", "fails on a tensor the library returned");
    if (ndim < 0 || ndim > 16) {
      small = false;
    } else {
      std::vector<int64_t> d(dims, dims + ndim);
      for (int64_t& v : d)
        if (v < 0) v = 3;  // fed dims stay at most 3
      int64_t n = element_count(d);
      small = small && n >= 0 && n <= kMaxEvalElements;
    }
    Slot& s = slots_[in_.pick(kSlots)];
    kb_tensor_release(s.t);
    s = {t, small};
  }

  // A tensor argument: a slot's (possibly empty) handle, or NULL.
  // Mostly a slot that holds a tensor (the next one from the chosen slot), so that sequences
  // build on their results; now and then the chosen slot as it is, empty (NULL) or not.
  int slot_index() {
    uint8_t b = in_.u8();
    size_t i = b % kSlots;
    if (b >= 240) return int(i);
    for (size_t k = 0; k < kSlots; ++k)
      if (slots_[(i + k) % kSlots].t) return int((i + k) % kSlots);
    return int(i);
  }
  kb_tensor* tensor(int i) { return i < 0 ? nullptr : slots_[size_t(i)].t; }

  // ---- the calls ---------------------------------------------------------------------------
  void step() {
    in_.large = false;
    switch (in_.pick(35)) {
      case 0:
        return from_data();
      case 1:
        return placeholder();
      case 2:
        return variable();
      case 3:
        return fills();
      case 4:
        return unary();
      case 5:
        return binary();
      case 6:
        return reduce();
      case 7:
        return axis_op();
      case 8:
        return reshape_like();
      case 9:
        return join();
      case 10:
        return slicing();
      case 11:
        return products();
      case 12:
        return scalar_args();
      case 13:
        return losses();
      case 14:
        return convolution();
      case 15:
        return pooling_padding();
      case 16:
        return random_ops();
      case 17:
        return evaluate();
      case 18:
        return compile();
      case 19:
        return call_function();
      case 20:
        return gradients();
      case 21:
        return set_value();
      case 22:
        return copy_out();
      case 23:
        return inspect();
      case 24:
        return config();
      case 25:
        return release();
      case 26:
        return loops();
      case 27:
        return sparse();
      case 28:
        return control();
      case 29:
        return normalization();
      case 30:
        return ctc();
      case 31:
        return lists();
      case 32:
        return one_hot_gather();
      case 33:
        return collectives();
      default:
        return unary();
    }
  }

  // Data for a tensor of `dims`: real bytes when it is small, else NULL (the library must
  // refuse or run out of memory before reading).
  std::vector<uint8_t> data_for(kb_data_type t, const std::vector<int64_t>& dims, bool* null) {
    int64_t n = element_count(dims);
    size_t es = dtype_bytes(t);
    *null = false;
    if (n < 0 || es == 0 || n > kMaxEvalElements) {
      *null = true;
      return {};
    }
    std::vector<uint8_t> data(size_t(n) * es);
    for (uint8_t& b : data) b = in_.one_in(4) ? in_.u8() : 0;
    if (t == KB_FLOAT32 && in_.one_in(8) && n > 0) {  // NaN and inf among the values
      float special[] = {NAN, INFINITY, -INFINITY, 1e30f};
      std::memcpy(data.data(), &special[in_.pick(4)], 4);
    }
    if (in_.one_in(32)) *null = true;
    return data;
  }

  void from_data() {
    kb_data_type t = in_.dtype();
    std::vector<int64_t> d = in_.dims(4);
    bool null = false;
    std::vector<uint8_t> data = data_for(t, d, &null);
    tensor_call("kb_tensor_from_data", {}, [&](kb_tensor** o) {
      return kb_tensor_from_data(null ? nullptr : data.data(), t, d.data(), d.size(), o);
    });
  }

  void placeholder() {
    std::vector<int64_t> d = in_.dims(4);
    int64_t ndim = in_.one_in(8) ? -1 : int64_t(d.size());
    kb_data_type t = in_.dtype();
    int32_t sparse = in_.one_in(8);
    bool no_shape = in_.one_in(8);
    tensor_call("kb_placeholder", {}, [&](kb_tensor** o) {
      return kb_placeholder(no_shape ? nullptr : d.data(), no_shape ? 0 : d.size(), ndim, t, sparse,
                            in_.one_in(4) ? "p" : nullptr, o);
    });
  }

  void variable() {
    kb_data_type data_t = in_.dtype(), t = in_.dtype();
    std::vector<int64_t> d = in_.dims(3);
    bool null = false;
    std::vector<uint8_t> data = data_for(data_t, d, &null);
    if (in_.one_in(3)) {
      int i = slot_index();
      if (!all_small({i})) return;  // its value is computed now
      tensor_call("kb_variable_from_tensor", {i},
                  [&](kb_tensor** o) { return kb_variable_from_tensor(tensor(i), t, "v", o); });
      return;
    }
    tensor_call("kb_variable", {}, [&](kb_tensor** o) {
      return kb_variable(null ? nullptr : data.data(), data_t, d.data(), d.size(), t, "v", o);
    });
  }

  void fills() {
    std::vector<int64_t> d = in_.dims(4);
    kb_data_type t = in_.dtype();
    int i = slot_index();
    if (!eager_size_ok(d)) return;
    switch (in_.pick(6)) {
      case 0:
        return tensor_call("kb_zeros", {}, [&](kb_tensor** o) {
          return kb_zeros(d.data(), d.size(), t, nullptr, o);
        });
      case 1:
        return tensor_call("kb_ones", {}, [&](kb_tensor** o) {
          return kb_ones(d.data(), d.size(), t, nullptr, o);
        });
      case 2: {
        int64_t n = in_.dim();
        if (!eager_size_ok(double(n) * double(n))) return;
        return tensor_call("kb_eye", {}, [&](kb_tensor** o) { return kb_eye(n, t, nullptr, o); });
      }
      case 3:
        return tensor_call("kb_zeros_like", {i},
                           [&](kb_tensor** o) { return kb_zeros_like(tensor(i), t, nullptr, o); });
      case 4: {
        double start = in_.number(), stop = in_.number(), step = in_.number();
        bool has_stop = in_.one_in(2);
        if (!eager_size_ok(std::fabs(((has_stop ? stop : start) - (has_stop ? start : 0)) / step)))
          return;
        return tensor_call("kb_arange", {}, [&](kb_tensor** o) {
          return kb_arange(start, has_stop ? &stop : nullptr, step, t, o);
        });
      }
      default: {
        std::vector<uint8_t> value(8);
        for (uint8_t& b : value) b = in_.u8();
        std::vector<int64_t> vs = in_.dims(1);
        bool null = false;
        std::vector<uint8_t> data = data_for(t, vs, &null);
        kb_data_type to = in_.dtype();
        return tensor_call("kb_constant", {}, [&](kb_tensor** o) {
          return kb_constant(null ? nullptr : data.data(), t, vs.data(), vs.size(), to,
                             in_.one_in(2) ? d.data() : nullptr, d.size(), nullptr, o);
        });
      }
    }
  }

  void unary() {
    using Fn = kb_status (*)(kb_tensor*, kb_tensor**);
    static const Fn fns[] = {
        kb_square,   kb_abs,           kb_sqrt,     kb_exp,      kb_log,           kb_round,
        kb_sign,     kb_sin,           kb_cos,      kb_negative, kb_sigmoid,       kb_hard_sigmoid,
        kb_tanh,     kb_softplus,      kb_softsign, kb_flatten,  kb_batch_flatten, kb_transpose,
        kb_to_dense, kb_stop_gradient, kb_shape,    kb_erf};
    Fn f = fns[in_.pick(sizeof fns / sizeof *fns)];
    int i = slot_index();
    tensor_call("unary function", {i}, [&](kb_tensor** o) { return f(tensor(i), o); });
  }

  void binary() {
    using Fn = kb_status (*)(kb_tensor*, kb_tensor*, kb_tensor**);
    static const Fn fns[] = {kb_equal,      kb_not_equal, kb_greater, kb_greater_equal, kb_less,
                             kb_less_equal, kb_maximum,   kb_minimum, kb_add,           kb_subtract,
                             kb_multiply,   kb_divide,    kb_dot,     kb_gather,        kb_update,
                             kb_update_add, kb_update_sub};
    Fn f = fns[in_.pick(sizeof fns / sizeof *fns)];
    int a = slot_index(), b = slot_index();
    tensor_call("binary function", {a, b},
                [&](kb_tensor** o) { return f(tensor(a), tensor(b), o); });
  }

  void reduce() {
    using Fn = kb_status (*)(kb_tensor*, const int64_t*, size_t, int32_t, kb_tensor**);
    static const Fn fns[] = {kb_max, kb_min, kb_sum, kb_prod, kb_mean,
                             kb_var, kb_std, kb_any, kb_all,  kb_logsumexp};
    Fn f = fns[in_.pick(sizeof fns / sizeof *fns)];
    int i = slot_index();
    std::vector<int64_t> a = in_.axes(3);
    bool all = in_.one_in(3);
    int32_t keep = int32_t(in_.pick(3)) - (in_.one_in(16) ? 100 : 0);
    tensor_call("reduction", {i}, [&](kb_tensor** o) {
      return f(tensor(i), all ? nullptr : a.data(), all ? 0 : in_.count_up_to(a.size()), keep, o);
    });
  }

  void axis_op() {
    using AxisFn = kb_status (*)(kb_tensor*, int64_t, kb_tensor**);
    static const std::pair<const char*, AxisFn> kAxisOps[] = {
        {"kb_cumsum", kb_cumsum},  {"kb_cumprod", kb_cumprod}, {"kb_argmax", kb_argmax},
        {"kb_argmin", kb_argmin},  {"kb_softmax", kb_softmax}, {"kb_expand_dims", kb_expand_dims},
        {"kb_squeeze", kb_squeeze}};
    int i = slot_index();
    int64_t axis = in_.axis();
    uint32_t k = in_.pick(8);
    if (k < std::size(kAxisOps)) {
      AxisFn fn = kAxisOps[k].second;
      return tensor_call(kAxisOps[k].first, {i},
                         [&](kb_tensor** o) { return fn(tensor(i), axis, o); });
    }
    std::vector<int64_t> a = in_.axes(3);
    return tensor_call("kb_l2_normalize", {i}, [&](kb_tensor** o) {
      return kb_l2_normalize(tensor(i), a.data(), in_.count_up_to(a.size()), o);
    });
  }

  void reshape_like() {
    int i = slot_index();
    switch (in_.pick(6)) {
      case 0: {
        std::vector<int64_t> d = in_.dims(4);
        return tensor_call("kb_reshape", {i}, [&](kb_tensor** o) {
          return kb_reshape(tensor(i), d.data(), d.size(), o);
        });
      }
      case 1: {
        std::vector<int64_t> p = in_.axes(4);
        return tensor_call("kb_permute_dimensions", {i}, [&](kb_tensor** o) {
          return kb_permute_dimensions(tensor(i), p.data(), p.size(), o);
        });
      }
      case 2: {
        int64_t rep = in_.dim(), axis = in_.axis();
        return tensor_call("kb_repeat_elements", {i}, [&](kb_tensor** o) {
          return kb_repeat_elements(tensor(i), rep, axis, o);
        });
      }
      case 3: {
        int64_t n = in_.dim();
        return tensor_call("kb_repeat", {i},
                           [&](kb_tensor** o) { return kb_repeat(tensor(i), n, o); });
      }
      case 4: {
        std::vector<int64_t> n = in_.dims(4);
        return tensor_call("kb_tile", {i}, [&](kb_tensor** o) {
          return kb_tile(tensor(i), n.data(), n.size(), o);
        });
      }
      default: {
        std::vector<int64_t> a = in_.axes(3);
        return tensor_call("kb_reverse", {i}, [&](kb_tensor** o) {
          return kb_reverse(tensor(i), a.data(), a.size(), o);
        });
      }
    }
  }

  void join() {
    int a = slot_index(), b = slot_index(), c = slot_index();
    kb_tensor* xs[3] = {tensor(a), tensor(b), tensor(c)};
    size_t n = in_.pick(4);
    int64_t axis = in_.axis();
    if (in_.one_in(2))
      tensor_call("kb_concatenate", {a, b, c}, [&](kb_tensor** o) {
        return kb_concatenate(in_.one_in(32) ? nullptr : xs, n, axis, o);
      });
    else
      tensor_call("kb_stack", {a, b, c}, [&](kb_tensor** o) { return kb_stack(xs, n, axis, o); });
  }

  void slicing() {
    int i = slot_index();
    std::vector<int64_t> start = in_.dims(4), size = in_.dims(4);
    if (in_.one_in(2)) {
      size_t n = std::min(start.size(), size.size());
      return tensor_call("kb_slice", {i}, [&](kb_tensor** o) {
        return kb_slice(tensor(i), start.data(), size.data(), n, o);
      });
    }
    std::vector<int64_t> strides = in_.dims(4);
    size_t n = std::min({start.size(), size.size(), strides.size()});
    for (size_t k = 0; k < n; ++k)
      if (in_.one_in(4)) strides[k] = int64_t(0 - uint64_t(strides[k]));  // INT64_MIN stays
    int64_t masks[4];
    for (int64_t& m : masks) m = in_.one_in(8) ? in_.dim() : int64_t(in_.pick(16));
    tensor_call("kb_strided_slice", {i}, [&](kb_tensor** o) {
      return kb_strided_slice(tensor(i), start.data(), size.data(), strides.data(), n, masks[0],
                              masks[1], masks[2], masks[3], o);
    });
  }

  void products() {
    int a = slot_index(), b = slot_index();
    int64_t axes[2] = {in_.axis(), in_.axis()};
    bool no_axes = in_.one_in(3);
    tensor_call("kb_batch_dot", {a, b}, [&](kb_tensor** o) {
      return kb_batch_dot(tensor(a), tensor(b), no_axes ? nullptr : axes, o);
    });
  }

  void scalar_args() {
    int i = slot_index();
    double a = in_.number(), b = in_.number(), c = in_.number();
    switch (in_.pick(5)) {
      case 0:
        return tensor_call("kb_clip", {i},
                           [&](kb_tensor** o) { return kb_clip(tensor(i), a, b, o); });
      case 1:
        return tensor_call("kb_pow", {i}, [&](kb_tensor** o) { return kb_pow(tensor(i), a, o); });
      case 2: {
        bool has_max = in_.one_in(2);
        return tensor_call("kb_relu", {i}, [&](kb_tensor** o) {
          return kb_relu(tensor(i), a, has_max ? &b : nullptr, c, o);
        });
      }
      case 3:
        return tensor_call("kb_elu", {i}, [&](kb_tensor** o) { return kb_elu(tensor(i), a, o); });
      default: {
        kb_data_type t = in_.dtype();
        return tensor_call("kb_cast", {i}, [&](kb_tensor** o) { return kb_cast(tensor(i), t, o); });
      }
    }
  }

  void losses() {
    int a = slot_index(), b = slot_index();
    int32_t logits = int32_t(in_.pick(2));
    int64_t axis = in_.axis();
    switch (in_.pick(4)) {
      case 0:
        return tensor_call("kb_categorical_crossentropy", {a, b}, [&](kb_tensor** o) {
          return kb_categorical_crossentropy(tensor(a), tensor(b), logits, axis, o);
        });
      case 1:
        return tensor_call("kb_sparse_categorical_crossentropy", {a, b}, [&](kb_tensor** o) {
          return kb_sparse_categorical_crossentropy(tensor(a), tensor(b), logits, axis, o);
        });
      case 2:
        return tensor_call("kb_binary_crossentropy", {a, b}, [&](kb_tensor** o) {
          return kb_binary_crossentropy(tensor(a), tensor(b), logits, o);
        });
      default: {
        int64_t k = in_.dim();
        return tensor_call("kb_in_top_k", {a, b},
                           [&](kb_tensor** o) { return kb_in_top_k(tensor(a), tensor(b), k, o); });
      }
    }
  }

  void convolution() {
    int x = slot_index(), k = slot_index(), p = slot_index();
    std::vector<int64_t> strides = in_.dims(3), dilation = in_.dims(3), out_shape = in_.dims(4);
    kb_padding pad = kb_padding(in_.enumeration(3));
    kb_data_format fmt = kb_data_format(in_.enumeration(2));
    if (in_.one_in(8)) fmt = KB_DATA_FORMAT_DEFAULT;
    int64_t s1 = in_.dim(), d1 = in_.dim();
    switch (in_.pick(7)) {
      case 0:
        return tensor_call("kb_conv1d", {x, k}, [&](kb_tensor** o) {
          return kb_conv1d(tensor(x), tensor(k), s1, pad, fmt, d1, o);
        });
      case 1:
        return tensor_call("kb_conv2d", {x, k}, [&](kb_tensor** o) {
          return kb_conv2d(tensor(x), tensor(k), strides.data(), strides.size(), pad, fmt,
                           dilation.data(), dilation.size(), o);
        });
      case 2:
        return tensor_call("kb_conv3d", {x, k}, [&](kb_tensor** o) {
          return kb_conv3d(tensor(x), tensor(k), strides.data(), strides.size(), pad, fmt,
                           dilation.data(), dilation.size(), o);
        });
      case 3:
        return tensor_call("kb_conv2d_transpose", {x, k}, [&](kb_tensor** o) {
          return kb_conv2d_transpose(tensor(x), tensor(k), out_shape.data(), out_shape.size(),
                                     strides.data(), strides.size(), pad, fmt, dilation.data(),
                                     dilation.size(), o);
        });
      case 4:
        return tensor_call("kb_depthwise_conv2d", {x, k}, [&](kb_tensor** o) {
          return kb_depthwise_conv2d(tensor(x), tensor(k), strides.data(), strides.size(), pad, fmt,
                                     dilation.data(), dilation.size(), o);
        });
      case 5:
        return tensor_call("kb_separable_conv2d", {x, k, p}, [&](kb_tensor** o) {
          return kb_separable_conv2d(tensor(x), tensor(k), tensor(p), strides.data(),
                                     strides.size(), pad, fmt, dilation.data(), dilation.size(), o);
        });
      default:
        return tensor_call("kb_local_conv1d", {x, k}, [&](kb_tensor** o) {
          return kb_local_conv1d(tensor(x), tensor(k), dilation.data(), dilation.size(),
                                 strides.data(), strides.size(), fmt, o);
        });
    }
  }

  void pooling_padding() {
    int x = slot_index();
    std::vector<int64_t> pool = in_.dims(3), strides = in_.dims(3), padding = in_.dims(6);
    kb_padding pad = kb_padding(in_.enumeration(2));
    kb_data_format fmt = kb_data_format(in_.enumeration(2));
    switch (in_.pick(6)) {
      case 0: {
        kb_pool_mode mode = kb_pool_mode(in_.enumeration(2));
        return tensor_call("kb_pool2d", {x}, [&](kb_tensor** o) {
          return kb_pool2d(tensor(x), pool.data(), pool.size(), strides.data(), strides.size(), pad,
                           fmt, mode, o);
        });
      }
      case 1: {
        kb_pool_mode mode = kb_pool_mode(in_.enumeration(2));
        return tensor_call("kb_pool3d", {x}, [&](kb_tensor** o) {
          return kb_pool3d(tensor(x), pool.data(), pool.size(), strides.data(), strides.size(), pad,
                           fmt, mode, o);
        });
      }
      case 2:
        return tensor_call("kb_temporal_padding", {x}, [&](kb_tensor** o) {
          return kb_temporal_padding(tensor(x), padding.data(), padding.size(), o);
        });
      case 3:
        return tensor_call("kb_spatial_2d_padding", {x}, [&](kb_tensor** o) {
          return kb_spatial_2d_padding(tensor(x), padding.data(), padding.size(), fmt, o);
        });
      case 4: {
        int64_t h = in_.dim(), w = in_.dim();
        kb_interpolation how = kb_interpolation(in_.enumeration(2));
        return tensor_call("kb_resize_images", {x}, [&](kb_tensor** o) {
          return kb_resize_images(tensor(x), h, w, fmt, how, o);
        });
      }
      default: {
        int b = slot_index();
        return tensor_call("kb_bias_add", {x, b}, [&](kb_tensor** o) {
          return kb_bias_add(tensor(x), tensor(b), fmt, o);
        });
      }
    }
  }

  // The collectives in one process (never kb_dist_init: the fuzzer is one process): the identity
  // for good arguments, a clear status for the rest.
  void collectives() {
    int x = slot_index();
    kb_reduce_op op = kb_reduce_op(in_.enumeration(2));
    int32_t root = int32_t(in_.u8()) - (in_.one_in(4) ? 128 : 0);
    switch (in_.pick(5)) {
      case 0:
        return tensor_call("kb_all_reduce", {x},
                           [&](kb_tensor** o) { return kb_all_reduce(tensor(x), op, o); });
      case 1:
        return tensor_call("kb_broadcast", {x},
                           [&](kb_tensor** o) { return kb_broadcast(tensor(x), root, o); });
      case 2:
        return tensor_call("kb_all_gather", {x},
                           [&](kb_tensor** o) { return kb_all_gather(tensor(x), o); });
      case 3: {
        kb_tensor* vars[2] = {tensor(x), tensor(slot_index())};
        check_status(
            "kb_dist_broadcast_variables",
            kb_dist_broadcast_variables(in_.one_in(8) ? nullptr : vars, size_t(in_.pick(3)), root));
        return;
      }
      default: {
        kb_data_type t = in_.dtype();
        std::vector<uint8_t> data(64);  // the count never runs past it (the C ABI trusts it)
        size_t count = size_t(in_.pick(8));
        check_status("kb_dist_all_reduce", kb_dist_all_reduce(in_.one_in(8) ? nullptr : data.data(),
                                                              data.data(), count, t, op));
        return;
      }
    }
  }

  void random_ops() {
    std::vector<int64_t> d = in_.dims(3);
    double a = in_.number(), b = in_.number();
    kb_data_type t = in_.dtype();
    int64_t seed = int64_t(in_.u8()) - (in_.one_in(8) ? kI64Max : 0);
    const int64_t* sp = in_.one_in(2) ? &seed : nullptr;
    int x = slot_index();
    switch (in_.pick(5)) {
      case 0:
        return tensor_call("kb_random_uniform", {}, [&](kb_tensor** o) {
          return kb_random_uniform(d.data(), d.size(), a, b, t, sp, o);
        });
      case 1:
        return tensor_call("kb_truncated_normal", {}, [&](kb_tensor** o) {
          return kb_truncated_normal(d.data(), d.size(), a, b, t, sp, o);
        });
      case 2:
        return tensor_call("kb_random_binomial_like", {x}, [&](kb_tensor** o) {
          return kb_random_binomial_like(tensor(x), a, t, sp, o);
        });
      case 3:
        return tensor_call("kb_dropout", {x}, [&](kb_tensor** o) {
          return kb_dropout(tensor(x), a, in_.one_in(2) ? d.data() : nullptr,
                            in_.one_in(2) ? d.size() : 0, sp, o);
        });
      default:
        if (!eager_size_ok(d)) return;
        return tensor_call("kb_random_normal_variable", {}, [&](kb_tensor** o) {
          return kb_random_normal_variable(d.data(), d.size(), a, b, t, nullptr, sp, o);
        });
    }
  }

  void evaluate() {
    int i = slot_index();
    if (i >= 0 && slots_[size_t(i)].t && !slots_[size_t(i)].small) return;
    if (in_.one_in(2))
      tensor_call("kb_eval", {i}, [&](kb_tensor** o) { return kb_eval(tensor(i), o); });
    else
      tensor_call("kb_get_value", {i}, [&](kb_tensor** o) { return kb_get_value(tensor(i), o); });
  }

  bool all_small(const std::vector<int>& idx) {
    for (int i : idx)
      if (slots_[size_t(i)].t && !slots_[size_t(i)].small) return false;
    return true;
  }

  void compile() {
    std::vector<int> ins(in_.pick(3)), outs(in_.pick(3) + (in_.one_in(8) ? 0 : 1)),
        ups(in_.pick(2));
    for (int& i : ins) i = slot_index();
    for (int& i : outs) i = slot_index();
    for (int& i : ups) i = slot_index();
    if (!all_small(outs) || !all_small(ups)) return;
    std::vector<kb_tensor*> a, b, c;
    for (int i : ins) a.push_back(tensor(i));
    for (int i : outs) b.push_back(tensor(i));
    for (int i : ups) c.push_back(tensor(i));
    kb_compiled_function* const poison = reinterpret_cast<kb_compiled_function*>(uintptr_t(0x5a50));
    kb_compiled_function* f = poison;
    kb_status st = kb_function(a.data(), a.size(), b.data(), b.size(), c.data(), c.size(), &f);
    check_status("kb_function", st);
    if (st != KB_OK) {
      if (f != poison) broken("kb_function", "wrote its out-parameter on failure");
      return;
    }
    if (!f || f == poison) broken("kb_function", "succeeded without a result");
    if (functions_.size() >= 2) {
      kb_function_release(functions_.front());
      functions_.erase(functions_.begin());
    }
    functions_.push_back(f);
    if (in_.one_in(4)) {
      kb_status s = kb_function_set_device(f, kb_device_kind(in_.enumeration(2)));
      check_status("kb_function_set_device", s);
    }
  }

  // A value for a placeholder: its dims with unknown ones made small, sometimes the wrong shape
  // or dtype.
  kb_tensor* feed_for(kb_tensor* p) {
    std::vector<int64_t> d;
    kb_data_type t = KB_FLOAT32;
    int64_t ndim = 0;
    int64_t dims[8];
    if (p && kb_int_shape(p, dims, 8, &ndim) == KB_OK && ndim >= 0 && ndim <= 8) {
      d.assign(dims, dims + ndim);
      kb_dtype(p, &t);
    }
    for (int64_t& v : d)
      if (v < 0 || v > 64) v = 1 + in_.pick(3);
    if (in_.one_in(8)) d = in_.dims(3);
    if (in_.one_in(8)) t = in_.dtype();
    bool null = false;
    std::vector<uint8_t> data = data_for(t, d, &null);
    kb_tensor* v = nullptr;
    kb_status st = kb_tensor_from_data(null ? nullptr : data.data(), t, d.data(), d.size(), &v);
    check_status("kb_tensor_from_data", st);
    return st == KB_OK ? v : nullptr;
  }

  void call_function() {
    if (functions_.empty()) return;
    kb_compiled_function* f =
        in_.one_in(32) ? nullptr : functions_[in_.pick(uint32_t(functions_.size()))];
    std::vector<kb_tensor*> feeds(in_.pick(4));
    for (kb_tensor*& v : feeds) {
      int i = slot_index();
      v = feed_for(tensor(i));
    }
    if (in_.one_in(3)) {
      std::vector<kb_tensor*> outs(in_.pick(3));
      for (kb_tensor*& o : outs) o = in_.one_in(2) ? feed_for(tensor(slot_index())) : nullptr;
      kb_status st = kb_function_call_into(f, feeds.data(), feeds.size(), outs.data(), outs.size());
      check_status("kb_function_call_into", st);
      for (kb_tensor* o : outs) kb_tensor_release(o);
    } else {
      kb_tensor_list* const poison = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x5a5a40));
      kb_tensor_list* out = poison;
      kb_status st = kb_function_call(f, feeds.data(), feeds.size(), &out);
      check_status("kb_function_call", st);
      if (st != KB_OK && out != poison)
        broken("kb_function_call", "wrote its out-parameter on failure");
      if (st == KB_OK) take_list("kb_function_call", out);
    }
    for (kb_tensor* v : feeds) kb_tensor_release(v);
  }

  // Keeps the items of a list the library returned, then releases it.
  void take_list(const char* call, kb_tensor_list* l) {
    if (!l) broken(call, "succeeded without a list");
    size_t n = kb_tensor_list_size(l);
    for (size_t k = 0; k < n && k < 4; ++k) {
      kb_tensor* t = nullptr;
      kb_status st = kb_tensor_list_get(l, k, &t);
      check_status("kb_tensor_list_get", st);
      if (st != KB_OK || !t) broken("kb_tensor_list_get", "fails within the list's size");
      keep(t, true);
    }
    kb_tensor* t = reinterpret_cast<kb_tensor*>(uintptr_t(0x5a5a30));
    kb_status st = kb_tensor_list_get(l, n + in_.pick(3), &t);
    check_status("kb_tensor_list_get", st);
    if (st == KB_OK) broken("kb_tensor_list_get", "accepts an index past the list");
    kb_tensor_list_release(l);
  }

  void gradients() {
    int loss = slot_index();
    std::vector<int> vars(in_.pick(4));
    for (int& v : vars) v = slot_index();
    std::vector<kb_tensor*> vs;
    for (int v : vars) vs.push_back(tensor(v));
    kb_tensor_list* const poison = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x5a5a40));
    kb_tensor_list* out = poison;
    kb_status st = kb_gradients(tensor(loss), vs.data(), vs.size(), &out);
    check_status("kb_gradients", st);
    if (st != KB_OK) {
      if (out != poison) broken("kb_gradients", "wrote its out-parameter on failure");
      return;
    }
    bool small = slots_[size_t(loss)].small;
    size_t n = kb_tensor_list_size(out);
    if (n != vs.size()) broken("kb_gradients", "returned a list of another length");
    for (size_t k = 0; k < n && k < 3; ++k) {
      kb_tensor* t = nullptr;
      if (kb_tensor_list_get(out, k, &t) != KB_OK) broken("kb_tensor_list_get", "failed");
      keep(t, small && slots_[size_t(vars[k])].small);
    }
    kb_tensor_list_release(out);
  }

  void set_value() {
    int i = slot_index();
    if (in_.one_in(2)) {
      int j = slot_index();
      if (!slots_[size_t(j)].small) return;
      check_status("kb_set_value", kb_set_value(tensor(i), tensor(j)));
      return;
    }
    kb_data_type t = in_.dtype();
    std::vector<int64_t> d = in_.dims(3);
    bool null = false;
    std::vector<uint8_t> data = data_for(t, d, &null);
    check_status("kb_set_value_data",
                 kb_set_value_data(tensor(i), null ? nullptr : data.data(), t, d.data(), d.size()));
  }

  void copy_out() {
    int i = slot_index();
    if (tensor(i) && !slots_[size_t(i)].small) return;
    size_t nbytes = 0;
    kb_status st = kb_tensor_nbytes(tensor(i), &nbytes);
    check_status("kb_tensor_nbytes", st);
    if (st != KB_OK || nbytes > size_t(kMaxEvalElements) * 8) return;
    size_t asked = nbytes;
    switch (in_.pick(5)) {
      case 0:
        asked = nbytes + 1;
        break;
      case 1:
        asked = nbytes ? nbytes - 1 : 0;
        break;
      case 2:
        asked = 0;
        break;
      default:
        break;
    }
    std::vector<uint8_t> dst(asked + 1, 0xa5);
    st = kb_tensor_copy_to(tensor(i), in_.one_in(16) ? nullptr : dst.data(), asked);
    check_status("kb_tensor_copy_to", st);
    if (dst[asked] != 0xa5) broken("kb_tensor_copy_to", "wrote past the bytes it was given");
  }

  void inspect() {
    int i = slot_index();
    kb_tensor* t = tensor(i);
    int64_t dims[4];
    int64_t ndim = 0;
    check_status("kb_int_shape",
                 kb_int_shape(t, in_.one_in(8) ? nullptr : dims, in_.pick(5), &ndim));
    int32_t flag = 0;
    check_status("kb_is_placeholder", kb_is_placeholder(t, &flag));
    check_status("kb_is_sparse", kb_is_sparse(t, &flag));
    int64_t n = 0;
    check_status("kb_count_params", kb_count_params(t, &n));
    check_status("kb_ndim", kb_ndim(t, in_.one_in(16) ? nullptr : &n));
    const char* name = nullptr;
    check_status("kb_tensor_name", kb_tensor_name(t, &name));
    uint64_t id = 0;
    check_status("kb_tensor_id", kb_tensor_id(t, &id));
    check_status("kb_tensor_uses_learning_phase", kb_tensor_uses_learning_phase(t, &flag));
    check_status("kb_tensor_set_keras_tensor", kb_tensor_set_keras_tensor(t, int32_t(in_.pick(3))));
    if (!t || slots_[size_t(i)].small)
      tensor_call("kb_static_value", {i}, [&](kb_tensor** o) { return kb_static_value(t, o); });
  }

  void config() {
    switch (in_.pick(10)) {
      case 0:
        check_status("kb_set_epsilon", kb_set_epsilon(in_.number()));
        return;
      case 1:
        check_status("kb_set_floatx", kb_set_floatx(in_.dtype()));
        return;
      case 2:
        check_status("kb_set_image_data_format",
                     kb_set_image_data_format(kb_data_format(in_.enumeration(2))));
        return;
      case 3:
        check_status("kb_set_learning_phase", kb_set_learning_phase(in_.enumeration(2)));
        return;
      case 4: {
        check_status("kb_learning_phase_scope_push",
                     kb_learning_phase_scope_push(in_.enumeration(2)));
        return;
      }
      case 5: {
        check_status("kb_learning_phase_scope_pop", kb_learning_phase_scope_pop());
        return;
      }
      case 6: {
        check_status("kb_name_scope_push", kb_name_scope_push(in_.one_in(8) ? nullptr : "scope"));
        return;
      }
      case 7: {
        check_status("kb_name_scope_pop", kb_name_scope_pop());
        return;
      }
      case 8: {
        int32_t n = int32_t(in_.pick(4));
        if (in_.one_in(4)) n = int32_t(in_.dim());
        check_status("kb_set_num_threads", kb_set_num_threads(n));
        return;
      }
      default: {
        static const char* names[] = {"float32", "", "float128", "bool", "channels_first", "x"};
        const char* s = names[in_.pick(6)];
        kb_data_type t;
        check_status("kb_parse_dtype", kb_parse_dtype(in_.one_in(8) ? nullptr : s, &t));
        kb_padding p;
        check_status("kb_parse_padding", kb_parse_padding(s, &p));
        kb_data_format f;
        check_status("kb_parse_data_format", kb_parse_data_format(s, &f));
        return;
      }
    }
  }

  void release() {
    Slot& s = slots_[in_.pick(kSlots)];
    if (in_.one_in(2)) {
      kb_tensor_retain(s.t);
      kb_tensor_release(s.t);
    }
    kb_tensor_release(s.t);
    s = {};
  }

  // Callbacks whose behaviour the input chooses: a result, a failure, no result, a result of
  // another shape.
  struct Callback {
    uint8_t mode;
  };
  static kb_status callback_result(const Callback& c, kb_tensor* x, kb_tensor** out) {
    switch (c.mode % 4) {
      case 0:
        return kb_square(x, out);
      case 1:
        kb_set_error(KB_ERROR_INVALID_ARGUMENT, "callback refused");
        return KB_ERROR_INVALID_ARGUMENT;
      case 2:
        *out = nullptr;
        return KB_OK;
      default:
        return kb_sum(x, nullptr, 0, 0, out);
    }
  }
  static kb_status map_callback(void* u, kb_tensor* x, kb_tensor** out) {
    return callback_result(*static_cast<Callback*>(u), x, out);
  }
  static kb_status fold_callback(void* u, kb_tensor* acc, kb_tensor* x, kb_tensor** out) {
    auto* c = static_cast<Callback*>(u);
    if (c->mode % 4 == 0) return kb_add(acc, x, out);
    return callback_result(*c, x, out);
  }
  static kb_status step_callback(void* u, kb_tensor* input, kb_tensor* const* states,
                                 size_t n_states, kb_tensor** output, kb_tensor_list** new_states) {
    auto* c = static_cast<Callback*>(u);
    kb_status st = callback_result(*c, input, output);
    if (st != KB_OK) return st;
    size_t n = c->mode & 4 ? n_states + 1 : n_states;  // a wrong count now and then
    return kb_tensor_list_new(states, n_states ? std::min(n, n_states) : 0, new_states);
  }

  void loops() {
    Callback cb{in_.u8()};
    int x = slot_index(), init = slot_index();
    // An unrolled loop builds a step per element of the time axis: (0, 2^31) is an empty tensor
    // but 2^31 steps, a legitimate request that takes hours.
    if (!all_small({x})) return;
    switch (in_.pick(4)) {
      case 0:
        return tensor_call("kb_map_fn", {x}, [&](kb_tensor** o) {
          return kb_map_fn(map_callback, &cb, tensor(x), nullptr, KB_DTYPE_DEFAULT, o);
        });
      case 1:
        return tensor_call("kb_foldl", {x, init}, [&](kb_tensor** o) {
          return kb_foldl(fold_callback, &cb, tensor(x), in_.one_in(2) ? tensor(init) : nullptr,
                          nullptr, o);
        });
      case 2:
        return tensor_call("kb_foldr", {x, init}, [&](kb_tensor** o) {
          return kb_foldr(fold_callback, &cb, tensor(x), in_.one_in(2) ? tensor(init) : nullptr,
                          nullptr, o);
        });
      default: {
        kb_tensor* states[1] = {tensor(init)};
        size_t n_states = in_.pick(2);
        kb_tensor* const poison = reinterpret_cast<kb_tensor*>(uintptr_t(0x5a5a20));
        kb_tensor *last = poison, *outputs = poison;
        kb_tensor_list* new_states = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x5a5a10));
        kb_status st =
            kb_rnn(step_callback, &cb, tensor(x), states, n_states, int32_t(in_.pick(2)), nullptr,
                   nullptr, 0, int32_t(in_.pick(2)), nullptr, &last, &outputs, &new_states);
        check_status("kb_rnn", st);
        if (st != KB_OK) {
          if (last != poison || outputs != poison) broken("kb_rnn", "wrote outputs on failure");
          return;
        }
        bool small = slots_[size_t(x)].small;
        keep(last, small);
        keep(outputs, small);
        take_list("kb_rnn", new_states);
      }
    }
  }

  void sparse() {
    size_t nnz = in_.pick(5), ndim = in_.pick(4);
    std::vector<int64_t> idx(nnz * ndim);
    for (int64_t& v : idx) v = in_.one_in(8) ? in_.dim() : in_.pick(4);
    std::vector<float> vals(nnz, 1.5f);
    std::vector<int64_t> shape = in_.dims(3);
    shape.resize(ndim, 4);
    if (in_.one_in(3)) {
      int i = slot_index();
      kb_tensor *a = reinterpret_cast<kb_tensor*>(uintptr_t(1)), *b = a, *c = a;
      kb_status st = kb_sparse_parts(tensor(i), &a, &b, &c);
      check_status("kb_sparse_parts", st);
      if (st == KB_OK) {
        keep(a, true);
        keep(b, true);
        keep(c, true);
      } else if (a != reinterpret_cast<kb_tensor*>(uintptr_t(1))) {
        broken("kb_sparse_parts", "wrote an out-parameter on failure");
      }
      return;
    }
    kb_data_type t = in_.dtype();
    tensor_call("kb_sparse_from_coo", {}, [&](kb_tensor** o) {
      return kb_sparse_from_coo(idx.data(), vals.data(), KB_FLOAT32, nnz, shape.data(), ndim, t,
                                nullptr, o);
    });
  }

  static kb_status branch(void* u, kb_tensor** out) {
    kb_tensor* t = static_cast<kb_tensor*>(u);
    if (!t) {
      kb_set_error(KB_ERROR_INVALID_ARGUMENT, "branch refused");
      return KB_ERROR_INVALID_ARGUMENT;
    }
    kb_tensor_retain(t);
    *out = t;
    return KB_OK;
  }

  void control() {
    int c = slot_index(), a = slot_index(), b = slot_index();
    kb_training mode = kb_training(in_.enumeration(3) - 1);
    switch (in_.pick(4)) {
      case 0:
        return tensor_call("kb_switch", {c, a, b}, [&](kb_tensor** o) {
          return kb_switch(tensor(c), tensor(a), tensor(b), o);
        });
      case 1:
        return tensor_call("kb_switch_fn", {c, a, b}, [&](kb_tensor** o) {
          return kb_switch_fn(tensor(c), branch, tensor(a), branch, tensor(b), o);
        });
      case 2:
        return tensor_call("kb_in_train_phase", {c, a, b}, [&](kb_tensor** o) {
          return kb_in_train_phase(tensor(a), tensor(b), tensor(c), mode, o);
        });
      default:
        return tensor_call("kb_in_test_phase_fn", {c, a, b}, [&](kb_tensor** o) {
          return kb_in_test_phase_fn(branch, tensor(a), branch, tensor(b), tensor(c), mode, o);
        });
    }
  }

  void normalization() {
    int x = slot_index(), m = slot_index(), v = slot_index(), b = slot_index(), g = slot_index();
    double eps = in_.number();
    if (in_.one_in(2)) {
      int64_t axis = in_.axis();
      return tensor_call("kb_batch_normalization", {x, m, v, b, g}, [&](kb_tensor** o) {
        return kb_batch_normalization(tensor(x), tensor(m), tensor(v), tensor(b), tensor(g), axis,
                                      eps, o);
      });
    }
    std::vector<int64_t> axes = in_.axes(3);
    kb_tensor* const poison = reinterpret_cast<kb_tensor*>(uintptr_t(0x5a5a20));
    kb_tensor *normed = poison, *mean = poison, *var = poison;
    kb_status st = kb_normalize_batch_in_training(tensor(x), tensor(g), tensor(b), axes.data(),
                                                  axes.size(), eps, &normed, &mean, &var);
    check_status("kb_normalize_batch_in_training", st);
    if (st != KB_OK) {
      if (normed != poison || mean != poison || var != poison)
        broken("kb_normalize_batch_in_training", "wrote outputs on failure");
      return;
    }
    bool small = slots_[size_t(x)].small;
    keep(normed, small);
    keep(mean, small);
    keep(var, small);
  }

  void ctc() {
    int a = slot_index(), b = slot_index(), c = slot_index(), d = slot_index();
    if (in_.one_in(2)) {
      return tensor_call("kb_ctc_batch_cost", {a, b, c, d}, [&](kb_tensor** o) {
        return kb_ctc_batch_cost(tensor(a), tensor(b), tensor(c), tensor(d), o);
      });
    }
    kb_tensor_list* decoded = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x5a5a10));
    kb_tensor* log_prob = reinterpret_cast<kb_tensor*>(uintptr_t(0x5a5a20));
    int64_t beam = in_.dim(), top = in_.dim();
    kb_status st =
        kb_ctc_decode(tensor(a), tensor(b), int32_t(in_.pick(2)), beam, top, &decoded, &log_prob);
    check_status("kb_ctc_decode", st);
    if (st == KB_OK) {
      keep(log_prob, slots_[size_t(a)].small && !in_.large);
      take_list("kb_ctc_decode", decoded);
    }
  }

  void lists() {
    int a = slot_index(), b = slot_index(), c = slot_index();
    if (!all_small({a, b, c})) return;  // their values are computed
    kb_tensor* items[3] = {tensor(a), tensor(b), tensor(c)};
    kb_tensor_list* l = nullptr;
    size_t n = in_.pick(4);
    kb_status st = kb_tensor_list_new(items, n, &l);
    check_status("kb_tensor_list_new", st);
    if (st != KB_OK) return;
    kb_tensor_list* const poison = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x5a5a40));
    kb_tensor_list* values = poison;
    st = kb_batch_get_value(items, n, &values);
    check_status("kb_batch_get_value", st);
    if (st == KB_OK)
      kb_tensor_list_release(values);
    else if (values != poison)
      broken("kb_batch_get_value", "wrote its out-parameter on failure");
    kb_tensor_list_release(l);
  }

  void one_hot_gather() {
    int i = slot_index();
    int64_t n = in_.dim();
    if (!eager_size_ok(double(n))) return;  // its class range is a constant made at once
    tensor_call("kb_one_hot", {i}, [&](kb_tensor** o) { return kb_one_hot(tensor(i), n, o); });
  }

  Bytes& in_;
  Slot slots_[kSlots];
  std::vector<kb_compiled_function*> functions_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  Session s(in);
  s.run();
  return 0;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kb_set_print_sink([](const char*, void*) {}, nullptr);  // print_tensor output is noise here
  return 0;
}

#include "standalone_main.h"
