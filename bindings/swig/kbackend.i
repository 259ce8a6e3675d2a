/* The one SWIG interface of kbackend. It %includes include/kbackend.h itself, so every function
 * the header declares is wrapped with no hand work; what this file adds is policy:
 *   - one %exception: clear the thread-local error, call, and on a failure raise the language's
 *     error with kb_last_error_message() (temporaries are freed on that path too);
 *   - the three handle types are proxy classes whose destructor releases the reference;
 *   - per language, typemaps that turn out-parameters into return values and pointer + count
 *     pairs into the language's sequences.
 * This file holds what every language shares; each language's part is a file of its own,
 * %included below inside its #ifdef: kbackend_python.i, kbackend_java.i, kbackend_csharp.i, and
 * for Java and C# together kbackend_java_csharp.i and kbackend_java_csharp_calls.i (the proxy
 * classes' code: java_code.i, csharp_code.i).
 *
 * Run SWIG in C++ mode with -DSWIGWORDSIZE64 on 64-bit Linux (int64_t is then `long`, as in the
 * C compiler's <stdint.h>). */
%module(threads="1") kbackend

%{
#include "kbackend.h"
#include <string.h>
#include <vector>

/* kb_sparse_from_coo / kb_sparse_from_csr with the index lists' lengths checked against the nnz
 * values (the C functions take them on trust): every language's sparse helper ends here. */
static kb_tensor* kbx_checked_coo(const int64_t* indices, size_t n_indices, const void* data,
                                  kb_data_type values_dtype, size_t nnz,
                                  const int64_t* dense_shape, size_t ndim, kb_data_type dtype,
                                  const char* name) {
  if (n_indices != nnz * ndim) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT,
                 "sparse_from_coo: indices must hold nnz x rank coordinates");
    return NULL;
  }
  kb_tensor* out = NULL;
  if (kb_sparse_from_coo(indices, data, values_dtype, nnz, dense_shape, ndim, dtype, name, &out) ==
      KB_OK)
    kb_clear_error();
  return out;
}
static kb_tensor* kbx_checked_csr(const int64_t* indptr, size_t n_indptr,
                                  const int64_t* col_indices, size_t n_col_indices,
                                  const void* data, kb_data_type values_dtype, size_t nnz,
                                  int64_t cols, kb_data_type dtype, const char* name) {
  if (n_indptr == 0 || n_col_indices != nnz || indptr[n_indptr - 1] != (int64_t)nnz) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT,
                 "sparse_from_csr: indptr must hold rows + 1 offsets ending at the entries' "
                 "count, and col_indices one index per value");
    return NULL;
  }
  kb_tensor* out = NULL;
  if (kb_sparse_from_csr(indptr, col_indices, data, values_dtype, (int64_t)n_indptr - 1, cols,
                         dtype, name, &out) == KB_OK)
    kb_clear_error();
  return out;
}
%}

%include <stdint.i>
%include <exception.i>

/* ---- handles: proxy classes that release on destruction --------------------------------------
 * The header only declares the structs; giving SWIG an (empty) definition makes it generate a
 * proxy class. The C++ compiler never sees these definitions. */
%rename(Tensor) kb_tensor;
%rename(TensorList) kb_tensor_list;
%rename(CompiledFunction) kb_compiled_function;
%nodefaultctor kb_tensor;
%nodefaultctor kb_tensor_list;
%nodefaultctor kb_compiled_function;
%nocopyctor kb_tensor;
%nocopyctor kb_tensor_list;
%nocopyctor kb_compiled_function;
/* Every function's doc comment, from api/kbackend.toml (generated); the modifiers set below for
 * the helpers kept out of the public API replace them. */
#if defined(SWIGJAVA) || defined(SWIGCSHARP)
%include "kbackend_docs.i"
#endif
/* The languages' class typemaps must precede the class definitions. */
#ifdef SWIGJAVA
%include "java_code.i"
#endif
#ifdef SWIGCSHARP
%include "csharp_code.i"
#endif
struct kb_tensor {};
struct kb_tensor_list {};
struct kb_compiled_function {};
#if defined(SWIGJAVA) || defined(SWIGCSHARP)
%rename(Model) kb_model;
%nodefaultctor kb_model;
%nocopyctor kb_model;
struct kb_model {};
%extend kb_model {
  ~kb_model() { kb_model_release($self); }
}
#endif
%extend kb_tensor {
  ~kb_tensor() { kb_tensor_release($self); }
}
%extend kb_tensor_list {
  ~kb_tensor_list() { kb_tensor_list_release($self); }
}
%extend kb_compiled_function {
  ~kb_compiled_function() { kb_function_release($self); }
}

/* Reference counting and releasing stay with the proxies' destructors. */
%ignore kb_tensor_release;
%ignore kb_tensor_list_release;
%ignore kb_function_release;
%ignore kb_tensor_retain;
/* Raw COO/CSR arrays are the C way in; the bindings build sparse tensors from tensors
 * (kb_sparse_tensor), which every language's array typemaps already carry. */
%ignore kb_sparse_from_coo;
%ignore kb_sparse_from_csr;
/* Keras models (kb_model_*) reach Python through kbackend.models (ctypes, for the fit callback);
 * Java's and C#'s Model types are written by hand below (the generated helpers skip them). */
%ignore kb_model_compile;
%ignore kb_model_evaluate;
%ignore kb_model_fit;
%ignore kb_model_fit_weighted;
%ignore kb_model_reset_states;
%ignore kb_model_add_loss;
%ignore kb_model_total_loss;
%ignore kb_model_targets;
%ignore kb_model_sample_weights;
%ignore kb_model_updates;
%ignore kb_model_from_json;
%ignore kb_model_inputs;
%ignore kb_model_layer_class;
%ignore kb_model_layer_config;
%ignore kb_model_layer_count;
%ignore kb_model_layer_get_weights;
%ignore kb_model_layer_name;
%ignore kb_model_layer_set_weights;
%ignore kb_model_load;
%ignore kb_model_load_weights;
%ignore kb_model_metrics_names;
%ignore kb_model_outputs;
%ignore kb_model_predict;
%ignore kb_model_predict_on_batch;
%ignore kb_model_release;
%ignore kb_model_save;
%ignore kb_model_save_weights;
%ignore kb_model_summary;
%ignore kb_model_test_on_batch;
%ignore kb_model_to_json;
%ignore kb_model_train_on_batch;
%ignore kb_model_weights;
%ignore kb_model_callback;
#ifndef SWIGPYTHON /* kbackend.models.register_layer; Java and C# wrap them by hand below */
%ignore kb_model_register_layer;
%ignore kb_model_layer_weight;
#endif
%ignore kb_layer_function;

/* ---- the one error policy --------------------------------------------------------------------
 * Every entry point clears the thread-local error first and checks it after the call, so the same
 * check covers functions that return kb_status and those that do not. KB_RAISE_LAST_ERROR is the
 * language's way to raise; it must leave through the language's failure path so that the
 * temporaries of the `in` typemaps are freed ($cleanup / SWIG_fail). */
#if defined(SWIGPYTHON)
%define KB_RAISE_LAST_ERROR
  kb_py_raise_last_error();
  SWIG_fail;
%enddef
#elif defined(SWIGJAVA)
/* an unchecked org.kbackend.KBackendException carrying the status (or, after a callback threw,
 * that Throwable itself) */
%define KB_RAISE_LAST_ERROR
  kbj_raise_last_error(jenv); /* first: the cleanup drops a callback's kept Throwable */
  $cleanup
  return $null;
%enddef
#elif defined(SWIGCSHARP)
/* KBackend.KBackendException (or the callback's own exception), raised by the C# side on return */
%define KB_RAISE_LAST_ERROR
  $cleanup
  kbcs_raise_last_error();
  return $null;
%enddef
#else
%define KB_RAISE_LAST_ERROR
  $cleanup
  SWIG_exception(SWIG_RuntimeError, kb_last_error_message());
%enddef
#endif

%exception {
  kb_clear_error();
  $action
  if (kb_last_error_code() != KB_OK) {
    KB_RAISE_LAST_ERROR
  }
}
/* The error state itself must not be cleared or raised by the policy. */
%noexception kb_last_error_code;
%noexception kb_last_error_message;
%noexception kb_clear_error;
%noexception kb_set_error;

/* ======================================================================================== */
#ifdef SWIGPYTHON
%include "kbackend_python.i"
#endif /* SWIGPYTHON */

/* ======================================================================================== */
#if defined(SWIGJAVA) || defined(SWIGCSHARP)
%include "kbackend_java_csharp.i"
#endif

/* ======================================================================================== */
#ifdef SWIGJAVA
%include "kbackend_java.i"
#endif /* SWIGJAVA */

/* ======================================================================================== */
#ifdef SWIGCSHARP
%include "kbackend_csharp.i"
#endif /* SWIGCSHARP */
/* ======================================================================================== */

/* Every (pointer, count) pair of the header onto the KB_INT64_ARRAY / KB_TENSOR_ARRAY typemaps
 * above (generated by api/generate.py --swig, in the build folder). */
#ifdef SWIGCSHARP /* its buffers are the caller's memory itself */
%apply (void* dst, size_t nbytes) { (void* inout, size_t nbytes) };
#endif
%include "kbackend_arrays.i"

#if defined(SWIGJAVA) || defined(SWIGCSHARP)
%include "kbackend_java_csharp_calls.i"
#endif

%include "kbackend.h"
