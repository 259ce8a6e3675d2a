// switch, in_train_phase, in_test_phase: tensors or branch callbacks.
#include "capi/handles.h"
#include "core/api/control.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

namespace {

api::Branch tensor_branch(kb_tensor* t, const char* who, const char* what) {
  const NodePtr& n = tensor_arg(t, who, what);
  return [n] { return n; };
}

api::Branch callback_branch(kb_branch_function fn, void* user_data, const char* who,
                            const char* what) {
  check(fn != nullptr, Status::invalid_argument, who, ": ", what, " is NULL");
  return [fn, user_data, who]() -> NodePtr {
    kb_tensor* r = nullptr;
    kb_clear_error();
    kb_status s = fn(user_data, &r);
    if (s != KB_OK) {
      if (r) kb_tensor_release(r);
      std::string msg = kb_last_error_message();
      fail(Status(s), who, ": the callback failed: ", msg.empty() ? "(no message)" : msg);
    }
    check(r != nullptr && r->node != nullptr, Status::invalid_argument, who,
          ": the callback returned a NULL tensor");
    NodePtr n = r->node;
    kb_tensor_release(r);
    return n;
  };
}

std::optional<int> mode_arg(kb_training mode, const char* who) {
  check(mode == KB_TRAINING_TENSOR || mode == KB_TRAINING_FALSE || mode == KB_TRAINING_TRUE,
        Status::invalid_argument, who, ": unknown training mode ", int(mode));
  if (mode == KB_TRAINING_TENSOR) return std::nullopt;
  return int(mode);
}

kb_status phase_entry(const char* who, bool test, const api::Branch& x, const api::Branch& alt,
                      kb_tensor* training, kb_training mode, kb_tensor** out) {
  return guard(who, [&] {
    out_arg(out, who);
    auto fixed = mode_arg(mode, who);
    NodePtr t = training ? tensor_arg(training, who, "training") : nullptr;
    *out =
        wrap(test ? api::in_test_phase(x, alt, t, fixed) : api::in_train_phase(x, alt, t, fixed));
  });
}

}  // namespace

extern "C" {

KB_API kb_status kb_switch(kb_tensor* condition, kb_tensor* then_expression,
                           kb_tensor* else_expression, kb_tensor** out) {
  return guard("switch", [&] {
    out_arg(out, "switch");
    const NodePtr& c = tensor_arg(condition, "switch", "condition");
    *out = wrap(api::switch_(c, tensor_branch(then_expression, "switch", "then_expression"),
                             tensor_branch(else_expression, "switch", "else_expression")));
  });
}

KB_API kb_status kb_switch_fn(kb_tensor* condition, kb_branch_function then_fn, void* then_data,
                              kb_branch_function else_fn, void* else_data, kb_tensor** out) {
  return guard("switch", [&] {
    out_arg(out, "switch");
    const NodePtr& c = tensor_arg(condition, "switch", "condition");
    *out = wrap(api::switch_(c, callback_branch(then_fn, then_data, "switch", "then_fn"),
                             callback_branch(else_fn, else_data, "switch", "else_fn")));
  });
}

KB_API kb_status kb_in_train_phase(kb_tensor* x, kb_tensor* alt, kb_tensor* training,
                                   kb_training mode, kb_tensor** out) {
  kb_status s = guard("in_train_phase", [&] {
    tensor_arg(x, "in_train_phase", "x");
    tensor_arg(alt, "in_train_phase", "alt");
  });
  if (s != KB_OK) return s;
  return phase_entry(
      "in_train_phase", false, [x] { return x->node; }, [alt] { return alt->node; }, training, mode,
      out);
}

KB_API kb_status kb_in_test_phase(kb_tensor* x, kb_tensor* alt, kb_tensor* training,
                                  kb_training mode, kb_tensor** out) {
  kb_status s = guard("in_test_phase", [&] {
    tensor_arg(x, "in_test_phase", "x");
    tensor_arg(alt, "in_test_phase", "alt");
  });
  if (s != KB_OK) return s;
  return phase_entry(
      "in_test_phase", true, [x] { return x->node; }, [alt] { return alt->node; }, training, mode,
      out);
}

KB_API kb_status kb_in_train_phase_fn(kb_branch_function x_fn, void* x_data,
                                      kb_branch_function alt_fn, void* alt_data,
                                      kb_tensor* training, kb_training mode, kb_tensor** out) {
  kb_status s = guard("in_train_phase", [&] {
    check(x_fn && alt_fn, Status::invalid_argument, "in_train_phase: a branch callback is NULL");
  });
  if (s != KB_OK) return s;
  return phase_entry(
      "in_train_phase", false, callback_branch(x_fn, x_data, "in_train_phase", "x_fn"),
      callback_branch(alt_fn, alt_data, "in_train_phase", "alt_fn"), training, mode, out);
}

KB_API kb_status kb_in_test_phase_fn(kb_branch_function x_fn, void* x_data,
                                     kb_branch_function alt_fn, void* alt_data, kb_tensor* training,
                                     kb_training mode, kb_tensor** out) {
  kb_status s = guard("in_test_phase", [&] {
    check(x_fn && alt_fn, Status::invalid_argument, "in_test_phase: a branch callback is NULL");
  });
  if (s != KB_OK) return s;
  return phase_entry("in_test_phase", true, callback_branch(x_fn, x_data, "in_test_phase", "x_fn"),
                     callback_branch(alt_fn, alt_data, "in_test_phase", "alt_fn"), training, mode,
                     out);
}

}  // extern "C"
