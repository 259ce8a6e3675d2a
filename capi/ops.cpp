// elementwise, reduce, shape, linalg and nn entry points.
#include "capi/handles.h"
#include "core/api/api.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

// ---- elementwise --------------------------------------------------------------------------
KB_CAPI_UNARY(kb_square, "square", api::square(xn))
KB_CAPI_UNARY(kb_abs, "abs", api::abs(xn))
KB_CAPI_UNARY(kb_sqrt, "sqrt", api::sqrt(xn))
KB_CAPI_UNARY(kb_exp, "exp", api::exp(xn))
KB_CAPI_UNARY(kb_log, "log", api::log(xn))
KB_CAPI_UNARY(kb_round, "round", api::round(xn))
KB_CAPI_UNARY(kb_sign, "sign", api::sign(xn))
KB_CAPI_UNARY(kb_sin, "sin", api::sin(xn))
KB_CAPI_UNARY(kb_cos, "cos", api::cos(xn))
KB_CAPI_UNARY(kb_erf, "erf", api::erf(xn))
KB_CAPI_UNARY(kb_negative, "negative", api::negative(xn))

KB_API kb_status kb_pow(kb_tensor* x, double a, kb_tensor** out) {
  return guard("pow", [&] {
    out_arg(out, "pow");
    *out = wrap(api::pow(tensor_arg(x, "pow"), a));
  });
}
KB_API kb_status kb_clip(kb_tensor* x, double min_value, double max_value, kb_tensor** out) {
  return guard("clip", [&] {
    out_arg(out, "clip");
    *out = wrap(api::clip(tensor_arg(x, "clip"), min_value, max_value));
  });
}

KB_CAPI_BINARY(kb_equal, "equal", api::binary_op("equal", ops::Equal, xn, yn))
KB_CAPI_BINARY(kb_not_equal, "not_equal", api::binary_op("not_equal", ops::NotEqual, xn, yn))
KB_CAPI_BINARY(kb_greater, "greater", api::binary_op("greater", ops::Greater, xn, yn))
KB_CAPI_BINARY(kb_greater_equal, "greater_equal",
               api::binary_op("greater_equal", ops::GreaterEqual, xn, yn))
KB_CAPI_BINARY(kb_less, "less", api::binary_op("less", ops::Less, xn, yn))
KB_CAPI_BINARY(kb_less_equal, "less_equal", api::binary_op("less_equal", ops::LessEqual, xn, yn))
KB_CAPI_BINARY(kb_lesser, "lesser", api::binary_op("lesser", ops::Less, xn, yn))
KB_CAPI_BINARY(kb_lesser_equal, "lesser_equal",
               api::binary_op("lesser_equal", ops::LessEqual, xn, yn))
KB_CAPI_BINARY(kb_maximum, "maximum", api::binary_op("maximum", ops::Maximum, xn, yn))
KB_CAPI_BINARY(kb_minimum, "minimum", api::binary_op("minimum", ops::Minimum, xn, yn))
KB_CAPI_BINARY(kb_add, "add", api::binary_op("add", ops::Add, xn, yn))
KB_CAPI_BINARY(kb_subtract, "subtract", api::binary_op("subtract", ops::Sub, xn, yn))
KB_CAPI_BINARY(kb_multiply, "multiply", api::binary_op("multiply", ops::Mul, xn, yn))
KB_CAPI_BINARY(kb_divide, "divide", api::binary_op("divide", ops::Div, xn, yn))

KB_API kb_status kb_cast(kb_tensor* x, kb_data_type dtype, kb_tensor** out) {
  return guard("cast", [&] {
    out_arg(out, "cast");
    *out = wrap(api::cast(tensor_arg(x, "cast"), capi::dtype_arg(dtype, "cast")));
  });
}

// ---- reduce -----------------------------------------------------------------------------------
#define KB_CAPI_REDUCE(c_name, keras_name, fn)                                                    \
  KB_API kb_status c_name(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,      \
                          kb_tensor** out) {                                                      \
    return guard(keras_name, [&] {                                                                \
      out_arg(out, keras_name);                                                                   \
      *out = wrap(                                                                                \
          fn(tensor_arg(x, keras_name), capi::axes_arg(axes, naxes, keras_name), keepdims != 0)); \
    });                                                                                           \
  }
KB_CAPI_REDUCE(kb_max, "max", api::max)
KB_CAPI_REDUCE(kb_min, "min", api::min)
KB_CAPI_REDUCE(kb_sum, "sum", api::sum)
KB_CAPI_REDUCE(kb_prod, "prod", api::prod)
KB_CAPI_REDUCE(kb_mean, "mean", api::mean)
KB_CAPI_REDUCE(kb_var, "var", api::var)
KB_CAPI_REDUCE(kb_std, "std", api::std)
KB_CAPI_REDUCE(kb_any, "any", api::any)
KB_CAPI_REDUCE(kb_all, "all", api::all)
KB_CAPI_REDUCE(kb_logsumexp, "logsumexp", api::logsumexp)

#define KB_CAPI_AXIS(c_name, keras_name, fn)                             \
  KB_API kb_status c_name(kb_tensor* x, int64_t axis, kb_tensor** out) { \
    return guard(keras_name, [&] {                                       \
      out_arg(out, keras_name);                                          \
      *out = wrap(fn(tensor_arg(x, keras_name), axis));                  \
    });                                                                  \
  }
KB_CAPI_AXIS(kb_cumsum, "cumsum", api::cumsum)
KB_CAPI_AXIS(kb_cumprod, "cumprod", api::cumprod)
KB_CAPI_AXIS(kb_argmax, "argmax", api::argmax)
KB_CAPI_AXIS(kb_argmin, "argmin", api::argmin)
KB_CAPI_AXIS(kb_expand_dims, "expand_dims", api::expand_dims)
KB_CAPI_AXIS(kb_squeeze, "squeeze", api::squeeze)
KB_CAPI_AXIS(kb_repeat, "repeat", api::repeat)
KB_CAPI_AXIS(kb_softmax, "softmax", api::softmax)
KB_CAPI_AXIS(kb_one_hot, "one_hot", api::one_hot)

// ---- shape ------------------------------------------------------------------------------------
KB_API kb_status kb_concatenate(kb_tensor* const* xs, size_t n, int64_t axis, kb_tensor** out) {
  return guard("concatenate", [&] {
    out_arg(out, "concatenate");
    *out = wrap(api::concatenate(capi::tensor_list_arg(xs, n, "concatenate", "xs"), axis));
  });
}
KB_API kb_status kb_stack(kb_tensor* const* xs, size_t n, int64_t axis, kb_tensor** out) {
  return guard("stack", [&] {
    out_arg(out, "stack");
    *out = wrap(api::stack(capi::tensor_list_arg(xs, n, "stack", "xs"), axis));
  });
}

#define KB_CAPI_LIST(c_name, keras_name, what, fn)                                        \
  KB_API kb_status c_name(kb_tensor* x, const int64_t* v, size_t n, kb_tensor** out) {    \
    return guard(keras_name, [&] {                                                        \
      out_arg(out, keras_name);                                                           \
      *out = wrap(fn(tensor_arg(x, keras_name), capi::dims_arg(v, n, keras_name, what))); \
    });                                                                                   \
  }
KB_CAPI_LIST(kb_reshape, "reshape", "shape", api::reshape)
KB_CAPI_BINARY(kb_reshape_to, "reshape", api::reshape_to(xn, yn))
KB_CAPI_BINARY(kb_tile_to, "tile", api::tile_to(xn, yn))
KB_API kb_status kb_one_hot_to(kb_tensor* indices, kb_tensor* num_classes, kb_tensor** out) {
  return guard("one_hot", [&] {
    out_arg(out, "one_hot");
    *out = wrap(api::one_hot_to(tensor_arg(indices, "one_hot", "indices"),
                                tensor_arg(num_classes, "one_hot", "num_classes")));
  });
}
KB_API kb_status kb_slice_to(kb_tensor* x, kb_tensor* start, kb_tensor* size, kb_tensor** out) {
  return guard("slice", [&] {
    out_arg(out, "slice");
    *out = wrap(api::slice_to(tensor_arg(x, "slice"), tensor_arg(start, "slice", "start"),
                              tensor_arg(size, "slice", "size")));
  });
}
KB_CAPI_LIST(kb_permute_dimensions, "permute_dimensions", "pattern", api::permute_dimensions)
KB_CAPI_LIST(kb_tile, "tile", "n", api::tile)
KB_CAPI_LIST(kb_reverse, "reverse", "axes", api::reverse)

KB_API kb_status kb_repeat_elements(kb_tensor* x, int64_t rep, int64_t axis, kb_tensor** out) {
  return guard("repeat_elements", [&] {
    out_arg(out, "repeat_elements");
    *out = wrap(api::repeat_elements(tensor_arg(x, "repeat_elements"), rep, axis));
  });
}
KB_CAPI_UNARY(kb_flatten, "flatten", api::flatten(xn))
KB_CAPI_UNARY(kb_batch_flatten, "batch_flatten", api::batch_flatten(xn))

KB_API kb_status kb_slice(kb_tensor* x, const int64_t* start, const int64_t* size, size_t n,
                          kb_tensor** out) {
  return guard("slice", [&] {
    out_arg(out, "slice");
    *out = wrap(api::slice(tensor_arg(x, "slice"), capi::dims_arg(start, n, "slice", "start"),
                           capi::dims_arg(size, n, "slice", "size")));
  });
}

KB_API kb_status kb_gather(kb_tensor* reference, kb_tensor* indices, kb_tensor** out) {
  return guard("gather", [&] {
    out_arg(out, "gather");
    *out = wrap(api::gather(tensor_arg(reference, "gather", "reference"),
                            tensor_arg(indices, "gather", "indices")));
  });
}

KB_API kb_status kb_strided_slice(kb_tensor* x, const int64_t* begin, const int64_t* end,
                                  const int64_t* strides, size_t n, int64_t begin_mask,
                                  int64_t end_mask, int64_t shrink_axis_mask, int64_t new_axis_mask,
                                  kb_tensor** out) {
  const char* who = "strided_slice";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::strided_slice(tensor_arg(x, who), capi::dims_arg(begin, n, who, "begin"),
                                   capi::dims_arg(end, n, who, "end"),
                                   capi::dims_arg(strides, n, who, "strides"), begin_mask, end_mask,
                                   shrink_axis_mask, new_axis_mask));
  });
}

// ---- linalg -----------------------------------------------------------------------------------
KB_CAPI_BINARY(kb_dot, "dot", api::dot(xn, yn))
KB_API kb_status kb_einsum(const char* equation, kb_tensor* const* operands, size_t n,
                           kb_tensor** out) {
  return guard("einsum", [&] {
    out_arg(out, "einsum");
    check(equation != nullptr, Status::invalid_argument, "einsum: equation is NULL");
    *out = wrap(api::einsum(equation, capi::tensor_list_arg(operands, n, "einsum", "operands")));
  });
}

KB_API kb_status kb_batch_dot(kb_tensor* x, kb_tensor* y, const int64_t* axes, kb_tensor** out) {
  return guard("batch_dot", [&] {
    out_arg(out, "batch_dot");
    std::optional<std::pair<int64_t, int64_t>> a;
    if (axes) a = std::make_pair(axes[0], axes[1]);
    *out =
        wrap(api::batch_dot(tensor_arg(x, "batch_dot", "x"), tensor_arg(y, "batch_dot", "y"), a));
  });
}
KB_CAPI_UNARY(kb_transpose, "transpose", api::transpose(xn))

// ---- nn ---------------------------------------------------------------------------------------
KB_API kb_status kb_relu(kb_tensor* x, double alpha, const double* max_value, double threshold,
                         kb_tensor** out) {
  return guard("relu", [&] {
    out_arg(out, "relu");
    std::optional<double> mv;
    if (max_value) mv = *max_value;
    *out = wrap(api::relu(tensor_arg(x, "relu"), alpha, mv, threshold));
  });
}
KB_API kb_status kb_elu(kb_tensor* x, double alpha, kb_tensor** out) {
  return guard("elu", [&] {
    out_arg(out, "elu");
    *out = wrap(api::elu(tensor_arg(x, "elu"), alpha));
  });
}
KB_CAPI_UNARY(kb_sigmoid, "sigmoid", api::sigmoid(xn))
KB_CAPI_UNARY(kb_hard_sigmoid, "hard_sigmoid", api::hard_sigmoid(xn))
KB_CAPI_UNARY(kb_tanh, "tanh", api::tanh(xn))
KB_CAPI_UNARY(kb_softplus, "softplus", api::softplus(xn))
KB_CAPI_UNARY(kb_softsign, "softsign", api::softsign(xn))

#define KB_CAPI_XENT(c_name, keras_name, fn)                                                       \
  KB_API kb_status c_name(kb_tensor* target, kb_tensor* output, int32_t from_logits, int64_t axis, \
                          kb_tensor** out) {                                                       \
    return guard(keras_name, [&] {                                                                 \
      out_arg(out, keras_name);                                                                    \
      *out = wrap(fn(tensor_arg(target, keras_name, "target"),                                     \
                     tensor_arg(output, keras_name, "output"), from_logits != 0, axis));           \
    });                                                                                            \
  }
KB_CAPI_XENT(kb_categorical_crossentropy, "categorical_crossentropy", api::categorical_crossentropy)
KB_CAPI_XENT(kb_sparse_categorical_crossentropy, "sparse_categorical_crossentropy",
             api::sparse_categorical_crossentropy)

KB_API kb_status kb_binary_crossentropy(kb_tensor* target, kb_tensor* output, int32_t from_logits,
                                        kb_tensor** out) {
  return guard("binary_crossentropy", [&] {
    out_arg(out, "binary_crossentropy");
    *out = wrap(api::binary_crossentropy(tensor_arg(target, "binary_crossentropy", "target"),
                                         tensor_arg(output, "binary_crossentropy", "output"),
                                         from_logits != 0));
  });
}

KB_API kb_status kb_l2_normalize(kb_tensor* x, const int64_t* axes, size_t naxes, kb_tensor** out) {
  return guard("l2_normalize", [&] {
    out_arg(out, "l2_normalize");
    *out = wrap(api::l2_normalize(tensor_arg(x, "l2_normalize"),
                                  capi::axes_arg(axes, naxes, "l2_normalize")));
  });
}

KB_API kb_status kb_bias_add(kb_tensor* x, kb_tensor* bias, kb_data_format data_format,
                             kb_tensor** out) {
  return guard("bias_add", [&] {
    out_arg(out, "bias_add");
    DataFormat f =
        capi::format_arg(data_format, "bias_add").value_or(Session::get().image_data_format());
    *out = wrap(api::bias_add(tensor_arg(x, "bias_add"), tensor_arg(bias, "bias_add", "bias"), f));
  });
}

KB_API kb_status kb_in_top_k(kb_tensor* predictions, kb_tensor* targets, int64_t k,
                             kb_tensor** out) {
  return guard("in_top_k", [&] {
    out_arg(out, "in_top_k");
    *out = wrap(api::in_top_k(tensor_arg(predictions, "in_top_k", "predictions"),
                              tensor_arg(targets, "in_top_k", "targets"), k));
  });
}

}  // extern "C"
