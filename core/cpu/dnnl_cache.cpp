#include "core/cpu/dnnl_cache.h"

#include <cstdlib>
#include <list>
#include <mutex>
#include <new>
#include <unordered_map>

#include "core/cpu/loops.h"
#include "core/util/error.h"

namespace kb::cpu::dnnl_util {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

namespace {
struct Lru {
  std::mutex mu;
  std::list<std::pair<std::string, std::shared_ptr<const void>>> items;  // most recent first
  std::unordered_map<std::string, decltype(items)::iterator> index;
};
Lru& lru() {
  static Lru* l = new Lru;  // never destroyed: kernels may outlive static destruction order
  return *l;
}
}  // namespace

std::shared_ptr<const void> cached_any(const std::string& key,
                                       const std::function<std::shared_ptr<const void>()>& make) {
  Lru& l = lru();
  {
    std::lock_guard<std::mutex> g(l.mu);
    auto it = l.index.find(key);
    if (it != l.index.end()) {
      l.items.splice(l.items.begin(), l.items, it->second);
      return it->second->second;
    }
  }
  // Created outside the lock (primitive creation may take milliseconds); a concurrent creation
  // of the same key keeps the first one cached.
  std::shared_ptr<const void> v = make();
  std::lock_guard<std::mutex> g(l.mu);
  auto it = l.index.find(key);
  if (it != l.index.end()) return it->second->second;
  l.items.emplace_front(key, v);
  l.index[key] = l.items.begin();
  while (l.items.size() > kCacheCapacity) {
    l.index.erase(l.items.back().first);
    l.items.pop_back();
  }
  return v;
}

size_t cache_size() {
  std::lock_guard<std::mutex> g(lru().mu);
  return lru().items.size();
}

Key::Key(const char* kind) : s_(kind) { add(int64_t(omp_max_threads())); }

Key& Key::add(int64_t v) {
  s_ += '|';
  s_ += std::to_string(v);
  return *this;
}

Key& Key::add(const std::vector<int64_t>& v) {
  s_ += "|(";
  for (int64_t x : v) {
    s_ += std::to_string(x);
    s_ += ',';
  }
  s_ += ')';
  return *this;
}

bool native_bf16() {
  static const bool yes = [] {
    dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return yes;
}

dnnl::memory::data_type dnnl_type(bool bf16) {
  return bf16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

dnnl::memory::dims to_dims(const std::vector<int64_t>& d) {
  return dnnl::memory::dims(d.begin(), d.end());
}

std::shared_ptr<void> aligned_buffer(size_t bytes) {
  size_t n = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, n);
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<void>(p, std::free);
}

void sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc, const char* who) {
  dnnl_status_t st = dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  check(st != dnnl_out_of_memory, Status::out_of_memory, who, ": out of memory in oneDNN's sgemm");
  check(st == dnnl_success, Status::internal, who, ": oneDNN sgemm failed (status ", int(st), ")");
}

ArgSpec::ArgSpec(int id_, bool output_, const dnnl::memory::desc& user_,
                 const dnnl::memory::desc& inner_)
    : id(id_), output(output_), user(user_), inner(inner_), needs_reorder(!(user_ == inner_)) {
  if (needs_reorder) {
    reorder = output
                  ? dnnl::reorder(dnnl::reorder::primitive_desc(engine(), inner, engine(), user))
                  : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), user, engine(), inner));
  }
}

Runner::Runner(std::shared_ptr<const PrimSpec> spec, int64_t work) : spec_(std::move(spec)) {
  if (work < 0) {
    work = 0;
    for (const ArgSpec& a : spec_->args) work += int64_t(a.user.get_size() / sizeof(float));
  }
  serial_ = work < kSerialWork;
  for (const ArgSpec& a : spec_->args) {
    user_.emplace_back(a.user, engine(), static_cast<void*>(DNNL_MEMORY_NONE));
    if (a.needs_reorder) {
      owned_.push_back(aligned_buffer(a.inner.get_size()));
      inner_.emplace_back(a.inner, engine(), owned_.back().get());
    } else {
      inner_.emplace_back();
    }
  }
  if (spec_->scratchpad.get_size() > 0) {
    owned_.push_back(aligned_buffer(spec_->scratchpad.get_size()));
    scratch_ = dnnl::memory(spec_->scratchpad, engine(), owned_.back().get());
  }
  // The argument lists are made once: the memory objects keep their identity and only their
  // data handles change per run (so that a run allocates nothing).
  const auto& specs = spec_->args;
  reorder_args_.resize(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ArgSpec& a = specs[i];
    exec_args_.push_back({a.id, (a.needs_reorder ? inner_[i] : user_[i]).get()});
    if (a.needs_reorder) {
      const dnnl::memory& from = a.output ? inner_[i] : user_[i];
      const dnnl::memory& to = a.output ? user_[i] : inner_[i];
      reorder_args_[i] = {{DNNL_ARG_FROM, from.get()}, {DNNL_ARG_TO, to.get()}};
    }
  }
  if (scratch_) exec_args_.push_back({DNNL_ARG_SCRATCHPAD, scratch_.get()});
}

void Runner::execute(const dnnl::primitive& p, const std::vector<dnnl_exec_arg_t>& args) {
  dnnl_status_t st = dnnl_primitive_execute(p.get(), stream().get(), int(args.size()), args.data());
  if (st == dnnl_out_of_memory) throw std::bad_alloc();  // KB_ERROR_OUT_OF_MEMORY at the ABI
  if (st != dnnl_success) throw dnnl::error(st, "could not execute a primitive");
}

void Runner::run(std::initializer_list<void*> ptrs, int kept) {
  SerialScope serial(serial_);
  const auto& specs = spec_->args;
  check(ptrs.size() == specs.size(), Status::internal, "oneDNN runner: ", ptrs.size(),
        " buffers for ", specs.size(), " arguments");
  for (size_t i = 0; i < specs.size(); ++i) {
    user_[i].set_data_handle(ptrs.begin()[i]);
    const ArgSpec& a = specs[i];
    if (a.needs_reorder && !a.output && int(i) != kept) execute(a.reorder, reorder_args_[i]);
  }
  execute(spec_->prim, exec_args_);
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].needs_reorder && specs[i].output) execute(specs[i].reorder, reorder_args_[i]);
  stream().wait();
}

}  // namespace kb::cpu::dnnl_util
