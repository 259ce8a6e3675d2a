/* Java and C#, after the array typemaps (%included by kbackend.i inside #if SWIGJAVA ||
 * SWIGCSHARP): every kb_status function as a helper returning its result (kbackend_calls.i,
 * generated) and the hand-written helpers for raw memory, shapes and callbacks. */
/* zeros(shape) and ones(shape) are written by hand with the shape as varargs (zeros(2, 3)). */
%ignore kbx_zeros(const int64_t* shape, size_t ndim);
%ignore kbx_ones(const int64_t* shape, size_t ndim);
/* Every kb_status function of the header as a helper that returns its result (generated). */
%include "kbackend_calls.i"

/* The header's functions that the hand-written helpers below replace. */
%ignore kb_tensor_from_data;
%ignore kb_tensor_copy_to;
%ignore kb_variable;
%ignore kb_constant;
%ignore kb_set_value_data;
%ignore kb_int_shape;
%ignore kb_get_variable_shape;
%ignore kb_cast_to_floatx;
%ignore kb_rnn;
%ignore kb_map_fn;
%ignore kb_foldl;
%ignore kb_foldr;
%ignore kb_set_print_sink;
%ignore kb_ctc_decode;
%ignore kb_dist_all_reduce;

/* Hand-written helpers: data buffers checked against their shape, int_shape one entry at a time,
 * callbacks, and the explicit reference moves that callbacks need. */
%rename(tensor_from_data) kbx_tensor_from_data;
%rename(variable_from_data) kbx_variable_from_data;
%rename(constant_from_data) kbx_constant_from_data;
%rename(set_value_data) kbx_set_value_data;
%rename(tensor_copy_to) kbx_tensor_copy_to;
%rename(int_shape_rank) kbx_int_shape_rank;
%rename(int_shape_dim) kbx_int_shape_dim;
%rename(map_fn_raw) kbx_map_fn_raw;
%rename(foldl_raw) kbx_foldl_raw;
%rename(foldr_raw) kbx_foldr_raw;
%rename(rnn_raw) kbx_rnn_raw;
%rename(ctc_decode) kbx_ctc_decode;
%rename(dist_all_reduce) kbx_dist_all_reduce;
%rename(borrow) kbx_borrow;
%rename(retained) kbx_retained;
%rename(list_new_raw) kbx_list_new_raw;
%rename(set_callback_error) kbx_set_callback_error;
%noexception kbx_set_callback_error;
%newobject kbx_tensor_from_data;
%newobject kbx_variable_from_data;
%newobject kbx_constant_from_data;
%newobject kbx_map_fn_raw;
%newobject kbx_foldl_raw;
%newobject kbx_foldr_raw;
%newobject kbx_rnn_raw;
%newobject kbx_ctc_decode;
%newobject kbx_borrow;
%inline %{
/* kb_tensor_from_data with the buffer's size checked against dtype and shape. */
static kb_tensor* kbx_tensor_from_data(const void* data, size_t nbytes, kb_data_type dtype,
                                       const int64_t* shape, size_t ndim) {
  kb_tensor* out = NULL;
  if (!kbx_check_data("tensor_from_data", nbytes, dtype, shape, ndim)) return NULL;
  if (kb_tensor_from_data(data, dtype, shape, ndim, &out) == KB_OK) kb_clear_error();
  return out;
}

/* kb_variable: a variable of dtype initialized from data (data_dtype, shape). */
static kb_tensor* kbx_variable_from_data(const void* data, size_t nbytes, kb_data_type data_dtype,
                                         const int64_t* shape, size_t ndim, kb_data_type dtype,
                                         const char* name) {
  kb_tensor* out = NULL;
  if (!kbx_check_data("variable", nbytes, data_dtype, shape, ndim)) return NULL;
  if (kb_variable(data, data_dtype, shape, ndim, dtype, name, &out) == KB_OK) kb_clear_error();
  return out;
}

/* kb_constant: value (data_dtype, value_shape) as a constant of dtype, filled into shape. */
static kb_tensor* kbx_constant_from_data(const void* data, size_t nbytes, kb_data_type data_dtype,
                                         const int64_t* value_shape, size_t value_ndim,
                                         kb_data_type dtype, const int64_t* shape, size_t ndim,
                                         const char* name) {
  kb_tensor* out = NULL;
  if (!kbx_check_data("constant", nbytes, data_dtype, value_shape, value_ndim)) return NULL;
  if (kb_constant(data, data_dtype, value_shape, value_ndim, dtype, shape, ndim, name, &out) ==
      KB_OK)
    kb_clear_error();
  return out;
}

static void kbx_set_value_data(kb_tensor* x, const void* data, size_t nbytes, kb_data_type dtype,
                               const int64_t* shape, size_t ndim) {
  if (!kbx_check_data("set_value", nbytes, dtype, shape, ndim)) return;
  if (kb_set_value_data(x, data, dtype, shape, ndim) == KB_OK) kb_clear_error();
}

static void kbx_tensor_copy_to(kb_tensor* t, void* dst, size_t nbytes) {
  if (kb_tensor_copy_to(t, dst, nbytes) == KB_OK) kb_clear_error();
}

/* kb_dist_all_reduce in place over a buffer of dtype elements (metrics across the processes). */
static void kbx_dist_all_reduce(void* inout, size_t nbytes, kb_data_type dtype, kb_reduce_op op) {
  size_t size = kbx_dtype_size(dtype);
  if (size == 0 || nbytes % size != 0) {
    kb_set_error(KB_ERROR_DTYPE, "dist_all_reduce: the data is not a whole number of elements "
                                 "of the dtype");
    return;
  }
  if (kb_dist_all_reduce(inout, inout, nbytes / size, dtype, op) == KB_OK) kb_clear_error();
}

/* The rank of x's static shape (-1: unknown), and its dimension i (-1: unknown). */
static int64_t kbx_int_shape_rank(kb_tensor* x) {
  int64_t dims[1], rank = -1;
  if (kb_int_shape(x, dims, 0, &rank) == KB_OK) kb_clear_error();
  return rank;
}
static int64_t kbx_int_shape_dim(kb_tensor* x, int64_t i) {
  int64_t rank = -1;
  std::vector<int64_t> dims(64);
  if (kb_int_shape(x, dims.data(), dims.size(), &rank) != KB_OK) return -1;
  if (rank > (int64_t)dims.size()) {
    dims.resize((size_t)rank);
    if (kb_int_shape(x, dims.data(), dims.size(), &rank) != KB_OK) return -1;
  }
  if (i < 0 || i >= rank) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "int_shape: dimension index out of range");
    return -1;
  }
  kb_clear_error();
  return dims[(size_t)i];
}

static kb_tensor* kbx_map_fn_raw(kb_map_function fn, void* user_data, kb_tensor* elems,
                                 const char* name, kb_data_type dtype) {
  kb_tensor* out = NULL;
  if (kb_map_fn(fn, user_data, elems, name, dtype, &out) == KB_OK) kb_clear_error();
  return out;
}
static kb_tensor* kbx_foldl_raw(kb_fold_function fn, void* user_data, kb_tensor* elems,
                                kb_tensor* initializer, const char* name) {
  kb_tensor* out = NULL;
  if (kb_foldl(fn, user_data, elems, initializer, name, &out) == KB_OK) kb_clear_error();
  return out;
}
static kb_tensor* kbx_foldr_raw(kb_fold_function fn, void* user_data, kb_tensor* elems,
                                kb_tensor* initializer, const char* name) {
  kb_tensor* out = NULL;
  if (kb_foldr(fn, user_data, elems, initializer, name, &out) == KB_OK) kb_clear_error();
  return out;
}
/* kb_rnn as one list: (last_output, outputs, new_states...). */
static kb_tensor_list* kbx_rnn_raw(kb_step_function step_function, void* user_data,
                                   kb_tensor* inputs, kb_tensor* const* initial_states,
                                   size_t n_states, int32_t go_backwards, kb_tensor* mask,
                                   kb_tensor* const* constants, size_t n_constants,
                                   int32_t unroll) {
  kb_tensor *last = NULL, *outputs = NULL;
  kb_tensor_list *states = NULL, *out = NULL;
  if (kb_rnn(step_function, user_data, inputs, initial_states, n_states, go_backwards, mask,
             constants, n_constants, unroll, NULL, &last, &outputs, &states) != KB_OK)
    return NULL;
  std::vector<kb_tensor*> all;
  all.push_back(last);
  all.push_back(outputs);
  size_t n = kb_tensor_list_size(states);
  kb_status st = KB_OK;
  for (size_t i = 0; i < n && st == KB_OK; ++i) {
    kb_tensor* t = NULL;
    st = kb_tensor_list_get(states, i, &t);
    if (st == KB_OK) all.push_back(t);
  }
  if (st == KB_OK) st = kb_tensor_list_new(all.data(), all.size(), &out);
  for (kb_tensor* t : all) kb_tensor_release(t); /* the list holds its own references */
  kb_tensor_list_release(states);
  if (st == KB_OK) kb_clear_error();
  return out;
}

/* kb_ctc_decode as one list: (decoded path 0, ..., decoded path top_paths - 1, log_prob). */
static kb_tensor_list* kbx_ctc_decode(kb_tensor* y_pred, kb_tensor* input_length, int32_t greedy,
                                      int64_t beam_width, int64_t top_paths) {
  kb_tensor_list *paths = NULL, *out = NULL;
  kb_tensor* log_prob = NULL;
  if (kb_ctc_decode(y_pred, input_length, greedy, beam_width, top_paths, &paths, &log_prob) !=
      KB_OK)
    return NULL;
  std::vector<kb_tensor*> all;
  size_t n = kb_tensor_list_size(paths);
  kb_status st = KB_OK;
  for (size_t i = 0; i < n && st == KB_OK; ++i) {
    kb_tensor* t = NULL;
    st = kb_tensor_list_get(paths, i, &t);
    if (st == KB_OK) all.push_back(t);
  }
  all.push_back(log_prob);
  if (st == KB_OK) st = kb_tensor_list_new(all.data(), all.size(), &out);
  for (kb_tensor* t : all) kb_tensor_release(t); /* the list holds its own references */
  kb_tensor_list_release(paths);
  if (st == KB_OK) kb_clear_error();
  return out;
}

/* A new owning proxy for a borrowed tensor pointer (a callback's argument). */
static kb_tensor* kbx_borrow(int64_t ptr) {
  kb_tensor* t = (kb_tensor*)(intptr_t)ptr;
  if (!t) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "borrow: null tensor");
    return NULL;
  }
  kb_tensor_retain(t);
  return t;
}
/* A new reference to t as a raw pointer, for a callback's result (the library takes it over). */
static int64_t kbx_retained(kb_tensor* t) {
  if (!t) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "retained: null tensor");
    return 0;
  }
  kb_tensor_retain(t);
  return (int64_t)(intptr_t)t;
}
/* A callback's failure, reported to the library (C#; Java's trampoline does it in C). */
static int32_t kbx_set_callback_error(const char* message) {
  kb_set_error(KB_ERROR_INVALID_ARGUMENT, message);
  return KB_ERROR_INVALID_ARGUMENT;
}
/* A new list of items as a raw pointer (an rnn step's new states, for C#). */
static int64_t kbx_list_new_raw(kb_tensor* const* items, size_t n) {
  kb_tensor_list* out = NULL;
  if (kb_tensor_list_new(items, n, &out) == KB_OK) kb_clear_error();
  return (int64_t)(intptr_t)out;
}
%}

/* Keras models: every kb_model_* function with a kb_status is generated (kbackend_calls.i); fit
 * is written here: it takes the language's per-batch callback (null: none; Java's FitCallback,
 * C#'s Native.FitCallback) and returns the per-epoch history as JSON; fit_weighted takes none. */
%rename(model_fit) kbx_model_fit;
%rename(model_fit_weighted) kbx_model_fit_weighted;
%inline %{
static const char* kbx_model_fit(kb_model* model, kb_tensor* const* x, size_t num_x,
                                 kb_tensor* const* y, size_t num_y, int64_t batch_size,
                                 int64_t epochs, int32_t verbose, const char* options_json,
                                 kb_model_callback callback, void* user_data) {
  const char* history = NULL;
  if (kb_model_fit(model, x, num_x, y, num_y, batch_size, epochs, verbose, options_json, callback,
                   user_data, &history) == KB_OK)
    kb_clear_error();
  return history;
}
static const char* kbx_model_fit_weighted(
    kb_model* model, kb_tensor* const* x, size_t num_x, kb_tensor* const* y, size_t num_y,
    kb_tensor* const* sample_weights, size_t num_sample_weights, kb_tensor* const* validation_x,
    size_t num_validation_x, kb_tensor* const* validation_y, size_t num_validation_y,
    kb_tensor* const* validation_sample_weights, size_t num_validation_sample_weights,
    int64_t batch_size, int64_t epochs, int32_t verbose, const char* options_json) {
  const char* history = NULL;
  if (kb_model_fit_weighted(model, x, num_x, y, num_y, sample_weights, num_sample_weights,
                            validation_x, num_validation_x, validation_y, num_validation_y,
                            validation_sample_weights, num_validation_sample_weights, batch_size,
                            epochs, verbose, options_json, NULL, NULL, &history) == KB_OK)
    kb_clear_error();
  return history;
}
%}

/* Raw data the languages pass as their arrays: sparse tensors from COO / CSR arrays (counts
 * checked), floatx conversion into a new 1-D floatx tensor, a variable's shape as an int64
 * tensor, and the print sink (Java's PrintSink, C#'s Native.PrintCallback). */
%apply (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) {
  (const int64_t* indices, size_t n_indices), (const int64_t* indptr, size_t n_indptr),
  (const int64_t* col_indices, size_t n_col_indices)
};
%rename(sparse_from_coo_raw) kbx_sparse_from_coo;
%rename(sparse_from_csr_raw) kbx_sparse_from_csr;
%rename(cast_to_floatx_raw) kbx_cast_to_floatx;
%rename(get_variable_shape_raw) kbx_get_variable_shape;
%rename(set_print_sink_raw) kbx_set_print_sink;
%newobject kbx_sparse_from_coo;
%newobject kbx_sparse_from_csr;
%newobject kbx_cast_to_floatx;
%newobject kbx_get_variable_shape;
%{
/* The number of whole elements of dtype in nbytes, or -1 (with the error set). */
static int64_t kbx_element_count(const char* who, size_t nbytes, kb_data_type dtype) {
  size_t size = kbx_dtype_size(dtype);
  if (size == 0 || nbytes % size != 0) {
    char message[160];
    snprintf(message, sizeof message, "%s: the data is not a whole number of elements of dtype %d",
             who, (int)dtype);
    kb_set_error(KB_ERROR_DTYPE, message);
    return -1;
  }
  return (int64_t)(nbytes / size);
}
%}
%inline %{
static kb_tensor* kbx_sparse_from_coo(const int64_t* indices, size_t n_indices, const void* data,
                                      size_t nbytes, kb_data_type values_dtype,
                                      const int64_t* dense_shape, size_t ndim, kb_data_type dtype,
                                      const char* name) {
  int64_t nnz = kbx_element_count("sparse_from_coo", nbytes, values_dtype);
  if (nnz < 0) return NULL;
  return kbx_checked_coo(indices, n_indices, data, values_dtype, (size_t)nnz, dense_shape, ndim,
                         dtype, name);
}
static kb_tensor* kbx_sparse_from_csr(const int64_t* indptr, size_t n_indptr,
                                      const int64_t* col_indices, size_t n_col_indices,
                                      const void* data, size_t nbytes, kb_data_type values_dtype,
                                      int64_t cols, kb_data_type dtype, const char* name) {
  int64_t nnz = kbx_element_count("sparse_from_csr", nbytes, values_dtype);
  if (nnz < 0) return NULL;
  return kbx_checked_csr(indptr, n_indptr, col_indices, n_col_indices, data, values_dtype,
                         (size_t)nnz, cols, dtype, name);
}
static kb_tensor* kbx_cast_to_floatx(const void* data, size_t nbytes, kb_data_type dtype) {
  int64_t count = kbx_element_count("cast_to_floatx", nbytes, dtype);
  kb_data_type floatx = KB_FLOAT32;
  if (count < 0 || kb_floatx(&floatx) != KB_OK) return NULL;
  std::vector<unsigned char> values((size_t)count * kbx_dtype_size(floatx) + 1);
  if (kb_cast_to_floatx(data, dtype, (size_t)count, values.data()) != KB_OK) return NULL;
  kb_tensor* out = NULL;
  if (kb_tensor_from_data(values.data(), floatx, &count, 1, &out) == KB_OK) kb_clear_error();
  return out;
}
static kb_tensor* kbx_get_variable_shape(kb_tensor* x) {
  std::vector<int64_t> dims(64);
  int64_t ndim = 0;
  if (kb_get_variable_shape(x, dims.data(), dims.size(), &ndim) != KB_OK) return NULL;
  if ((size_t)ndim > dims.size()) {
    dims.resize((size_t)ndim);
    if (kb_get_variable_shape(x, dims.data(), dims.size(), &ndim) != KB_OK) return NULL;
  }
  kb_tensor* out = NULL;
  if (kb_tensor_from_data(dims.data(), KB_INT64, &ndim, 1, &out) == KB_OK) kb_clear_error();
  return out;
}
static void kbx_set_print_sink(kb_print_sink sink, void* user_data) {
  if (kb_set_print_sink(sink, user_data) == KB_OK) kb_clear_error();
}
%}

/* Custom layers (Model.registerLayer / Model.RegisterLayer adapt the language's function): the
 * registration and the layer's weights, raw. The library keeps the function for the process'
 * life, so its state is never freed. */
/* Branches as the language's callables (K.switch_fn / in_train_phase_fn / in_test_phase_fn adapt
 * them). */
%rename(switch_fn_raw) kbx_switch_fn;
%rename(in_train_phase_fn_raw) kbx_in_train_phase_fn;
%rename(in_test_phase_fn_raw) kbx_in_test_phase_fn;
%newobject kbx_switch_fn;
%newobject kbx_in_train_phase_fn;
%newobject kbx_in_test_phase_fn;
%inline %{
static kb_tensor* kbx_switch_fn(kb_tensor* condition, kb_branch_function then_fn, void* then_data,
                                kb_branch_function else_fn, void* else_data) {
  kb_tensor* out = NULL;
  if (kb_switch_fn(condition, then_fn, then_data, else_fn, else_data, &out) == KB_OK)
    kb_clear_error();
  return out;
}
static kb_tensor* kbx_in_train_phase_fn(kb_branch_function x_fn, void* x_data,
                                        kb_branch_function alt_fn, void* alt_data,
                                        kb_tensor* training, kb_training mode) {
  kb_tensor* out = NULL;
  if (kb_in_train_phase_fn(x_fn, x_data, alt_fn, alt_data, training, mode, &out) == KB_OK)
    kb_clear_error();
  return out;
}
static kb_tensor* kbx_in_test_phase_fn(kb_branch_function x_fn, void* x_data,
                                       kb_branch_function alt_fn, void* alt_data,
                                       kb_tensor* training, kb_training mode) {
  kb_tensor* out = NULL;
  if (kb_in_test_phase_fn(x_fn, x_data, alt_fn, alt_data, training, mode, &out) == KB_OK)
    kb_clear_error();
  return out;
}
%}

%rename(register_layer_raw) kbx_model_register_layer;
%rename(layer_weight_raw) kbx_model_layer_weight;
%newobject kbx_model_layer_weight;
%inline %{
static void kbx_model_register_layer(const char* class_name, kb_layer_function function,
                                     void* user_data) {
  if (kb_model_register_layer(class_name, function, user_data) == KB_OK) kb_clear_error();
}
static kb_tensor* kbx_model_layer_weight(int64_t layer, const char* name, const int64_t* shape,
                                         size_t ndim, const char* initializer_json,
                                         int32_t trainable) {
  kb_tensor* out = NULL;
  if (kb_model_layer_weight((kb_layer*)(intptr_t)layer, name, shape, ndim, initializer_json,
                            trainable, &out) == KB_OK)
    kb_clear_error();
  return out;
}
%}
