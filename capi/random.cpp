// Entry points of the random tensors and dropout (core/api/random.h).
#include "capi/handles.h"
#include "core/api/api.h"
#include "core/api/random.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API kb_status kb_set_random_seed(int64_t seed) {
  return guard("set_random_seed", [&] { api::set_random_seed(seed); });
}

#define KB_CAPI_RANDOM(c_name, keras_name, fn)                                                     \
  KB_API kb_status c_name(const int64_t* shape, size_t ndim, double a, double b,                   \
                          kb_data_type dtype, const int64_t* seed, kb_tensor** out) {              \
    return guard(keras_name, [&] {                                                                 \
      out_arg(out, keras_name);                                                                    \
      Dims d = capi::dims_arg(shape, ndim, keras_name, "shape");                                   \
      *out = wrap(fn(d, a, b, capi::optional_dtype_arg(dtype, keras_name), capi::seed_arg(seed))); \
    });                                                                                            \
  }
KB_CAPI_RANDOM(kb_random_uniform, "random_uniform", api::random_uniform)
KB_CAPI_RANDOM(kb_random_normal, "random_normal", api::random_normal)
KB_CAPI_RANDOM(kb_truncated_normal, "truncated_normal", api::truncated_normal)

KB_API kb_status kb_random_binomial(const int64_t* shape, size_t ndim, double p, kb_data_type dtype,
                                    const int64_t* seed, kb_tensor** out) {
  const char* who = "random_binomial";
  return guard(who, [&] {
    out_arg(out, who);
    Dims d = capi::dims_arg(shape, ndim, who, "shape");
    *out = wrap(
        api::random_binomial(d, p, capi::optional_dtype_arg(dtype, who), capi::seed_arg(seed)));
  });
}

#define KB_CAPI_RANDOM_LIKE(c_name, keras_name, fn)                                       \
  KB_API kb_status c_name(kb_tensor* like, double a, double b, kb_data_type dtype,        \
                          const int64_t* seed, kb_tensor** out) {                         \
    return guard(keras_name, [&] {                                                        \
      out_arg(out, keras_name);                                                           \
      *out = wrap(fn(tensor_arg(like, keras_name, "like"), a, b,                          \
                     capi::optional_dtype_arg(dtype, keras_name), capi::seed_arg(seed))); \
    });                                                                                   \
  }
KB_CAPI_RANDOM_LIKE(kb_random_uniform_like, "random_uniform_like", api::random_uniform_like)
KB_CAPI_RANDOM_LIKE(kb_random_normal_like, "random_normal_like", api::random_normal_like)
KB_CAPI_RANDOM_LIKE(kb_truncated_normal_like, "truncated_normal_like", api::truncated_normal_like)

KB_API kb_status kb_random_binomial_like(kb_tensor* like, double p, kb_data_type dtype,
                                         const int64_t* seed, kb_tensor** out) {
  const char* who = "random_binomial_like";
  return guard(who, [&] {
    out_arg(out, who);
    *out =
        wrap(api::random_binomial_like(tensor_arg(like, who, "like"), p,
                                       capi::optional_dtype_arg(dtype, who), capi::seed_arg(seed)));
  });
}

KB_API kb_status kb_dropout(kb_tensor* x, double level, const int64_t* noise_shape,
                            size_t n_noise_shape, const int64_t* seed, kb_tensor** out) {
  const char* who = "dropout";
  return guard(who, [&] {
    out_arg(out, who);
    std::optional<Dims> noise;
    if (noise_shape)
      noise = capi::dims_arg(noise_shape, n_noise_shape, who, "noise_shape");
    else
      check(n_noise_shape == 0, Status::invalid_argument, who,
            ": noise_shape is NULL but its count is ", n_noise_shape);
    *out = wrap(api::dropout(tensor_arg(x, who), level, noise, capi::seed_arg(seed)));
  });
}

}  // extern "C"
