// Entry points of data-parallel training (core/api/distributed.h, core/backend/collectives.h).
#include "capi/handles.h"
#include "core/api/distributed.h"
#include "core/backend/collectives.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

static api::ReduceOp reduce_op_arg(kb_reduce_op op, const char* who) {
  int32_t v = capi::raw_enum(op);
  check(v == KB_REDUCE_SUM || v == KB_REDUCE_AVERAGE, Status::invalid_argument, who,
        ": unknown reduction ", v, " (KB_REDUCE_SUM or KB_REDUCE_AVERAGE)");
  return api::ReduceOp(v);
}

extern "C" {

KB_API kb_status kb_parse_reduce_op(const char* name, kb_reduce_op* out) {
  return capi::parse_option("parse_reduce_op", "reduction", name, out,
                            {{"sum", KB_REDUCE_SUM}, {"average", KB_REDUCE_AVERAGE}});
}

KB_API kb_status kb_dist_init(void) {
  return guard("dist_init", [] { dist::init(); });
}

#define KB_CAPI_DIST_QUERY(c_name, who, type, expression) \
  KB_API kb_status c_name(type* out) {                    \
    return guard(who, [&] {                               \
      out_arg(out, who);                                  \
      *out = (expression);                                \
    });                                                   \
  }
KB_CAPI_DIST_QUERY(kb_dist_initialized, "dist_initialized", int32_t, dist::initialized() ? 1 : 0)
KB_CAPI_DIST_QUERY(kb_dist_rank, "dist_rank", int32_t, dist::rank())
KB_CAPI_DIST_QUERY(kb_dist_size, "dist_size", int32_t, dist::size())
KB_CAPI_DIST_QUERY(kb_dist_local_rank, "dist_local_rank", int32_t, dist::local_rank())
KB_CAPI_DIST_QUERY(kb_dist_timeout, "dist_timeout", double, dist::timeout_seconds())
KB_CAPI_DIST_QUERY(kb_dist_collectives, "dist_collectives", int64_t,
                   int64_t(dist::collectives_run()))

KB_API kb_status kb_dist_barrier(void) {
  return guard("dist_barrier", [] { dist::barrier("dist_barrier"); });
}

KB_API kb_status kb_dist_finalize(void) {
  return guard("dist_finalize", [] { dist::finalize(); });
}

KB_API kb_status kb_dist_abort(int32_t exit_code) {
  return guard("dist_abort", [&] { dist::abort_job(exit_code); });
}

KB_API kb_status kb_dist_set_timeout(double seconds) {
  return guard("dist_set_timeout", [&] { dist::set_timeout_seconds(seconds); });
}

KB_API const char* kb_dist_engine(void) {
  static thread_local std::string engine;
  try {
    engine = dist::engine();
  } catch (...) {
    engine.clear();
  }
  return engine.c_str();
}

KB_API kb_status kb_all_reduce(kb_tensor* x, kb_reduce_op op, kb_tensor** out) {
  const char* who = "all_reduce";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::all_reduce(tensor_arg(x, who), reduce_op_arg(op, who)));
  });
}

KB_API kb_status kb_broadcast(kb_tensor* x, int32_t root, kb_tensor** out) {
  const char* who = "broadcast";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::broadcast(tensor_arg(x, who), root));
  });
}

KB_API kb_status kb_all_gather(kb_tensor* x, kb_tensor** out) {
  const char* who = "all_gather";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::all_gather(tensor_arg(x, who)));
  });
}

KB_API kb_status kb_dist_broadcast_variables(kb_tensor* const* variables, size_t n, int32_t root) {
  const char* who = "dist_broadcast_variables";
  return guard(who, [&] {
    api::broadcast_variables(capi::tensor_list_arg(variables, n, who, "a variable"), root);
  });
}

KB_API kb_status kb_dist_all_reduce(const void* values, void* result, size_t count,
                                    kb_data_type dtype, kb_reduce_op op) {
  const char* who = "dist_all_reduce";
  return guard(who, [&] {
    api::all_reduce_values(values, result, count, capi::dtype_arg(dtype, who),
                           reduce_op_arg(op, who));
  });
}

}  // extern "C"
