// rnn, map_fn, foldl, foldr: C callbacks adapted to the core's builder functions.
#include "capi/handles.h"
#include "core/api/loops.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

namespace {

// Owns the handles made for one callback call.
struct Handles {
  std::vector<kb_tensor*> items;
  kb_tensor* add(const NodePtr& n) {
    items.push_back(wrap(n));
    return items.back();
  }
  ~Handles() {
    for (auto* t : items) kb_tensor_release(t);
  }
};

// Takes over a tensor returned by a callback.
NodePtr take(kb_tensor* t, const char* who) {
  check(t != nullptr && t->node != nullptr, Status::invalid_argument, who,
        ": the callback returned a NULL tensor");
  NodePtr n = t->node;
  kb_tensor_release(t);
  return n;
}

[[noreturn]] void callback_failed(const char* who, kb_status s) {
  std::string msg = kb_last_error_message();
  fail(Status(s), who, ": the callback failed: ", msg.empty() ? "(no message)" : msg);
}

}  // namespace

extern "C" {

KB_API kb_status kb_tensor_list_new(kb_tensor* const* items, size_t n, kb_tensor_list** out) {
  return guard("tensor_list_new", [&] {
    out_arg(out, "tensor_list_new");
    *out = capi::wrap_list(capi::tensor_list_arg(items, n, "tensor_list_new", "items"));
  });
}

KB_API kb_status kb_rnn(kb_step_function step_function, void* user_data, kb_tensor* inputs,
                        kb_tensor* const* initial_states, size_t n_states, int32_t go_backwards,
                        kb_tensor* mask, kb_tensor* const* constants, size_t n_constants,
                        int32_t unroll, const int64_t* input_length, kb_tensor** last_output,
                        kb_tensor** outputs, kb_tensor_list** new_states) {
  (void)input_length;
  return guard("rnn", [&] {
    out_arg(last_output, "rnn");
    out_arg(outputs, "rnn");
    out_arg(new_states, "rnn");
    check(step_function != nullptr, Status::invalid_argument, "rnn: step_function is NULL");
    const NodePtr& x = tensor_arg(inputs, "rnn", "inputs");
    auto states = capi::tensor_list_arg(initial_states, n_states, "rnn", "initial_states");
    auto consts = capi::tensor_list_arg(constants, n_constants, "rnn", "constants");
    NodePtr m = mask ? tensor_arg(mask, "rnn", "mask") : nullptr;
    api::StepFunction step = [&](const NodePtr& xt, const std::vector<NodePtr>& st) {
      Handles h;
      kb_tensor* xh = h.add(xt);
      std::vector<kb_tensor*> sh;
      for (auto& s : st) sh.push_back(h.add(s));
      kb_tensor* out = nullptr;
      kb_tensor_list* ns = nullptr;
      kb_clear_error();
      kb_status s = step_function(user_data, xh, sh.data(), sh.size(), &out, &ns);
      if (s != KB_OK) {
        if (out) kb_tensor_release(out);
        kb_tensor_list_release(ns);
        callback_failed("rnn", s);
      }
      std::unique_ptr<kb_tensor_list, void (*)(kb_tensor_list*)> guard_ns(ns,
                                                                          kb_tensor_list_release);
      NodePtr o = take(out, "rnn");
      check(ns != nullptr, Status::invalid_argument,
            "rnn: the step function returned no states list");
      return std::make_pair(o, ns->items);
    };
    api::RnnResult r = api::rnn(step, x, states, go_backwards != 0, m, consts, unroll != 0);
    kb_tensor* lo = wrap(r.last_output);
    kb_tensor* os = wrap(r.outputs);
    *new_states = capi::wrap_list(r.new_states);
    *last_output = lo;
    *outputs = os;
  });
}

KB_API kb_status kb_map_fn(kb_map_function fn, void* user_data, kb_tensor* elems, const char* name,
                           kb_data_type dtype, kb_tensor** out) {
  (void)name;
  return guard("map_fn", [&] {
    out_arg(out, "map_fn");
    check(fn != nullptr, Status::invalid_argument, "map_fn: fn is NULL");
    auto t = capi::optional_dtype_arg(dtype, "map_fn");
    api::MapFunction f = [&](const NodePtr& x) {
      Handles h;
      kb_tensor* r = nullptr;
      kb_clear_error();
      kb_status s = fn(user_data, h.add(x), &r);
      if (s != KB_OK) {
        if (r) kb_tensor_release(r);
        callback_failed("map_fn", s);
      }
      return take(r, "map_fn");
    };
    *out = wrap(api::map_fn(f, tensor_arg(elems, "map_fn", "elems"), t));
  });
}

static kb_status fold_entry(const char* who, bool right, kb_fold_function fn, void* user_data,
                            kb_tensor* elems, kb_tensor* initializer, kb_tensor** out) {
  return guard(who, [&] {
    out_arg(out, who);
    check(fn != nullptr, Status::invalid_argument, who, ": fn is NULL");
    api::FoldFunction f = [&](const NodePtr& acc, const NodePtr& x) {
      Handles h;
      kb_tensor* r = nullptr;
      kb_clear_error();
      kb_status s = fn(user_data, h.add(acc), h.add(x), &r);
      if (s != KB_OK) {
        if (r) kb_tensor_release(r);
        callback_failed(who, s);
      }
      return take(r, who);
    };
    NodePtr init = initializer ? tensor_arg(initializer, who, "initializer") : nullptr;
    const NodePtr& e = tensor_arg(elems, who, "elems");
    *out = wrap(right ? api::foldr(f, e, init) : api::foldl(f, e, init));
  });
}

KB_API kb_status kb_foldl(kb_fold_function fn, void* user_data, kb_tensor* elems,
                          kb_tensor* initializer, const char* name, kb_tensor** out) {
  (void)name;
  return fold_entry("foldl", false, fn, user_data, elems, initializer, out);
}

KB_API kb_status kb_foldr(kb_fold_function fn, void* user_data, kb_tensor* elems,
                          kb_tensor* initializer, const char* name, kb_tensor** out) {
  (void)name;
  return fold_entry("foldr", true, fn, user_data, elems, initializer, out);
}

}  // extern "C"
