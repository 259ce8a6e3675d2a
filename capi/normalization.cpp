// Entry points of batch normalization (core/api/normalization.h).
#include "capi/handles.h"
#include "core/api/api.h"
#include "core/api/normalization.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API kb_status kb_batch_normalization(kb_tensor* x, kb_tensor* mean, kb_tensor* var,
                                        kb_tensor* beta, kb_tensor* gamma, int64_t axis,
                                        double epsilon, kb_tensor** out) {
  const char* who = "batch_normalization";
  return guard(who, [&] {
    out_arg(out, who);
    NodePtr b = beta ? tensor_arg(beta, who, "beta") : nullptr;
    NodePtr g = gamma ? tensor_arg(gamma, who, "gamma") : nullptr;
    *out = wrap(api::batch_normalization(tensor_arg(x, who), tensor_arg(mean, who, "mean"),
                                         tensor_arg(var, who, "var"), b, g, axis, epsilon));
  });
}

KB_API kb_status kb_normalize_batch_in_training(kb_tensor* x, kb_tensor* gamma, kb_tensor* beta,
                                                const int64_t* reduction_axes, size_t n_axes,
                                                double epsilon, kb_tensor** normed,
                                                kb_tensor** mean, kb_tensor** var) {
  const char* who = "normalize_batch_in_training";
  return guard(who, [&] {
    out_arg(normed, who);
    out_arg(mean, who);
    out_arg(var, who);
    check(reduction_axes != nullptr, Status::invalid_argument, who, ": reduction_axes is NULL");
    NodePtr g = gamma ? tensor_arg(gamma, who, "gamma") : nullptr;
    NodePtr b = beta ? tensor_arg(beta, who, "beta") : nullptr;
    api::NormalizedBatch r = api::normalize_batch_in_training(
        tensor_arg(x, who), g, b, capi::dims_arg(reduction_axes, n_axes, who, "reduction_axes"),
        epsilon);
    kb_tensor* t_normed = wrap(r.normed);
    kb_tensor* t_mean = nullptr;
    try {
      t_mean = wrap(r.mean);
      kb_tensor* t_var = wrap(r.var);
      *normed = t_normed;
      *mean = t_mean;
      *var = t_var;
    } catch (...) {
      kb_tensor_release(t_normed);
      kb_tensor_release(t_mean);
      throw;
    }
  });
}

}  // extern "C"
