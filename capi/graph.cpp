// values, function, updates, gradients.
#include <cstring>

#include "capi/handles.h"
#include "core/api/api.h"
#include "core/autodiff/gradients.h"
#include "core/ops/build.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API kb_status kb_eval(kb_tensor* x, kb_tensor** out) {
  return guard("eval", [&] {
    out_arg(out, "eval");
    *out = wrap(constant_node(evaluate(tensor_arg(x, "eval"))));
  });
}

KB_API kb_status kb_get_value(kb_tensor* x, kb_tensor** out) {
  return guard("get_value", [&] {
    out_arg(out, "get_value");
    const NodePtr& n = tensor_arg(x, "get_value");
    *out = wrap(constant_node(evaluate(n)));
  });
}

KB_API kb_status kb_set_value(kb_tensor* x, kb_tensor* value) {
  return guard("set_value", [&] {
    const NodePtr& n = tensor_arg(x, "set_value");
    api::set_value(n, evaluate(tensor_arg(value, "set_value", "value")));
  });
}

KB_API kb_status kb_set_value_data(kb_tensor* x, const void* data, kb_data_type dtype,
                                   const int64_t* shape, size_t ndim) {
  return guard("set_value", [&] {
    const NodePtr& n = tensor_arg(x, "set_value");
    api::set_value(n, capi::buffer_from(data, dtype, shape, ndim, "set_value"));
  });
}

KB_API kb_status kb_batch_get_value(kb_tensor* const* xs, size_t n, kb_tensor_list** out) {
  return guard("batch_get_value", [&] {
    out_arg(out, "batch_get_value");
    std::vector<NodePtr> vals;
    for (auto& x : capi::tensor_list_arg(xs, n, "batch_get_value", "xs"))
      vals.push_back(constant_node(evaluate(x)));
    *out = capi::wrap_list(std::move(vals));
  });
}

KB_API kb_status kb_batch_set_value(kb_tensor* const* xs, kb_tensor* const* values, size_t n) {
  return guard("batch_set_value", [&] {
    auto vars = capi::tensor_list_arg(xs, n, "batch_set_value", "xs");
    auto vals = capi::tensor_list_arg(values, n, "batch_set_value", "values");
    // Check everything first so that a bad entry changes nothing.
    std::vector<std::shared_ptr<Buffer>> bufs;
    for (size_t i = 0; i < n; ++i) {
      check(vars[i]->is(ops::Variable), Status::invalid_argument, "batch_set_value: xs[", i,
            "] is not a variable");
      bufs.push_back(evaluate(vals[i]));
      check(bufs[i]->dims == vars[i]->value->dims, Status::shape, "batch_set_value: value ", i,
            " has shape ", dims_str(bufs[i]->dims), ", the variable ",
            dims_str(vars[i]->value->dims));
    }
    for (size_t i = 0; i < n; ++i) api::set_value(vars[i], bufs[i]);
  });
}

KB_API kb_status kb_static_value(kb_tensor* x, kb_tensor** out) {
  return guard("static_value", [&] {
    out_arg(out, "static_value");
    *out = wrap(api::static_value(tensor_arg(x, "static_value")));
  });
}

KB_API kb_status kb_print_tensor(kb_tensor* x, const char* message, kb_tensor** out) {
  return guard("print_tensor", [&] {
    out_arg(out, "print_tensor");
    *out = wrap(api::print_tensor(tensor_arg(x, "print_tensor"), capi::name_arg(message)));
  });
}

KB_API kb_status kb_set_print_sink(kb_print_sink sink, void* user_data) {
  return guard("set_print_sink", [&] {
    if (!sink) {
      Session::get().set_print_sink(nullptr);
      return;
    }
    Session::get().set_print_sink(
        [sink, user_data](const std::string& s) { sink(s.c_str(), user_data); });
  });
}

KB_API kb_status kb_function(kb_tensor* const* inputs, size_t n_inputs, kb_tensor* const* outputs,
                             size_t n_outputs, kb_tensor* const* updates, size_t n_updates,
                             kb_compiled_function** out) {
  return guard("function", [&] {
    out_arg(out, "function");
    auto ins = capi::tensor_list_arg(inputs, n_inputs, "function", "inputs");
    auto outs = capi::tensor_list_arg(outputs, n_outputs, "function", "outputs");
    auto ups = capi::tensor_list_arg(updates, n_updates, "function", "updates");
    auto f = std::make_shared<Function>(ins, outs, ups);
    auto* h = new kb_compiled_function;
    h->fn = std::move(f);
    *out = h;
  });
}

KB_API kb_status kb_function_call(kb_compiled_function* f, kb_tensor* const* inputs,
                                  size_t n_inputs, kb_tensor_list** outputs) {
  return guard("function", [&] {
    out_arg(outputs, "function");
    check(f != nullptr && f->fn != nullptr, Status::invalid_argument, "function: f is NULL");
    auto ins = capi::tensor_list_arg(inputs, n_inputs, "function", "inputs");
    auto res = f->fn->call(f->fn->bind(ins));
    std::vector<NodePtr> nodes;
    for (auto& b : res) nodes.push_back(constant_node(b));
    *outputs = capi::wrap_list(std::move(nodes));
  });
}

KB_API kb_status kb_function_call_into(kb_compiled_function* f, kb_tensor* const* inputs,
                                       size_t n_inputs, kb_tensor* const* outputs,
                                       size_t n_outputs) {
  // The node tables are kept per thread (emptied after each call): a steady state of calls
  // allocates nothing here.
  thread_local std::vector<NodePtr> ins, outs;
  struct Clear {
    ~Clear() {
      ins.clear();
      outs.clear();
    }
  } clear;
  return guard("function", [&] {
    check(f != nullptr && f->fn != nullptr, Status::invalid_argument, "function: f is NULL");
    capi::tensor_list_into(inputs, n_inputs, "function", "inputs", ins);
    capi::tensor_list_into(outputs, n_outputs, "function", "outputs", outs);
    f->fn->call_into(ins, outs);
  });
}

KB_API void kb_function_release(kb_compiled_function* f) { delete f; }

#define KB_CAPI_UPDATE(c_name, keras_name, fn)                                        \
  KB_API kb_status c_name(kb_tensor* x, kb_tensor* v, kb_tensor** out) {              \
    return guard(keras_name, [&] {                                                    \
      out_arg(out, keras_name);                                                       \
      *out = wrap(fn(tensor_arg(x, keras_name), tensor_arg(v, keras_name, "value"))); \
    });                                                                               \
  }
KB_CAPI_UPDATE(kb_update, "update", api::update)
KB_CAPI_UPDATE(kb_update_add, "update_add", api::update_add)
KB_CAPI_UPDATE(kb_update_sub, "update_sub", api::update_sub)

KB_API kb_status kb_moving_average_update(kb_tensor* x, kb_tensor* value, double momentum,
                                          kb_tensor** out) {
  return guard("moving_average_update", [&] {
    out_arg(out, "moving_average_update");
    *out = wrap(api::moving_average_update(tensor_arg(x, "moving_average_update"),
                                           tensor_arg(value, "moving_average_update", "value"),
                                           momentum));
  });
}

KB_API kb_status kb_gradients(kb_tensor* loss, kb_tensor* const* variables, size_t n,
                              kb_tensor_list** out) {
  return guard("gradients", [&] {
    out_arg(out, "gradients");
    auto vars = capi::tensor_list_arg(variables, n, "gradients", "variables");
    *out = capi::wrap_list(gradients(tensor_arg(loss, "gradients", "loss"), vars));
  });
}

KB_API kb_status kb_stop_gradient(kb_tensor* x, kb_tensor** out) {
  return guard("stop_gradient", [&] {
    out_arg(out, "stop_gradient");
    *out = wrap(api::stop_gradient(tensor_arg(x, "stop_gradient")));
  });
}

}  // extern "C"
