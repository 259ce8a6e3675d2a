/* The one SWIG interface of kbackend. It %includes include/kbackend.h itself, so every function
 * the header declares is wrapped with no hand work; what this file adds is policy:
 *   - one %exception: clear the thread-local error, call, and on a failure raise the language's
 *     error with kb_last_error_message() (temporaries are freed on that path too);
 *   - the three handle types are proxy classes whose destructor releases the reference;
 *   - per language, typemaps that turn out-parameters into return values and pointer + count
 *     pairs into the language's sequences.
 * Generic sections apply to every language; language-specific typemaps live in #ifdef blocks
 * (SWIGPYTHON, SWIGJAVA, SWIGCSHARP).
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
%feature("kwargs");
%feature("autodoc", "2");
%include "kbackend_errors.i" /* kb_py_error_type (generated) */

%{
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static PyObject* kb_py_error_class = NULL; /* kbackend.KBackendError */
static PyObject* kb_py_print_sink_object = NULL;

/* Raises the Python error for a status (kb_py_error_type: api/kbackend.toml's [errors]) and a
 * message; every exception carries .status. */
static void kb_py_raise(kb_status code, const char* message) {
  PyObject* type = kb_py_error_type(code);
  if (!type) type = kb_py_error_class ? kb_py_error_class : PyExc_RuntimeError;
  PyObject* exc = PyObject_CallFunction(type, "s", message ? message : "");
  if (!exc) return;
  PyObject* status = PyLong_FromLong((long)code);
  if (status) {
    PyObject_SetAttrString(exc, "status", status);
    Py_DECREF(status);
  }
  PyErr_Clear(); /* SetAttr may fail on an exotic type; the exception itself still goes out */
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

/* An exception raised by a Python callback (rnn, map_fn, foldl, foldr) on this thread, kept to be
 * raised again, unchanged, when the building function returns its failure. */
static thread_local PyObject* kb_py_pending_type = NULL;
static thread_local PyObject* kb_py_pending_value = NULL;
static thread_local PyObject* kb_py_pending_traceback = NULL;

static void kb_py_clear_pending(void) {
  Py_CLEAR(kb_py_pending_type);
  Py_CLEAR(kb_py_pending_value);
  Py_CLEAR(kb_py_pending_traceback);
}

static void kb_py_raise_last_error(void) {
  if (kb_py_pending_type) {
    PyErr_Restore(kb_py_pending_type, kb_py_pending_value, kb_py_pending_traceback);
    kb_py_pending_type = kb_py_pending_value = kb_py_pending_traceback = NULL;
    return;
  }
  kb_py_raise(kb_last_error_code(), kb_last_error_message());
}

/* One int64 from a Python integer (or anything with __index__, such as NumPy integers). */
static int kb_py_int64(PyObject* o, int64_t* out) {
  PyObject* i = PyNumber_Index(o);
  if (!i) return 0;
  long long v = PyLong_AsLongLong(i);
  Py_DECREF(i);
  if (v == -1 && PyErr_Occurred()) return 0;
  *out = (int64_t)v;
  return 1;
}

/* A sequence of ints (or one int) into v. Returns 0 with a Python error set on failure. */
static int kb_py_int64_seq(PyObject* o, std::vector<int64_t>* v, const char* what) {
  v->clear();
  if (PyIndex_Check(o)) {
    int64_t x;
    if (!kb_py_int64(o, &x)) return 0;
    v->push_back(x);
    return 1;
  }
  PyObject* seq = PySequence_Fast(o, "");
  if (!seq) {
    PyErr_Format(PyExc_TypeError, "%s: expected an int or a sequence of ints, got %s", what,
                 Py_TYPE(o)->tp_name);
    return 0;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    int64_t x;
    if (!kb_py_int64(PySequence_Fast_GET_ITEM(seq, i), &x)) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError, "%s: entry %zd is not an int", what, i);
      return 0;
    }
    v->push_back(x);
  }
  Py_DECREF(seq);
  return 1;
}

/* An empty list must stay distinct from None (NULL): point it at a dummy. */
static int64_t kb_py_empty_dims[1] = {0};
static const int64_t* kb_py_dims_ptr(const std::vector<int64_t>& v) {
  return v.empty() ? kb_py_empty_dims : v.data();
}

/* The kb_data_type of a NumPy array's element type, or -2 when kbackend has none. */
static int kb_py_dtype_of(PyArrayObject* a) {
  PyArray_Descr* d = PyArray_DESCR(a);
  int size = (int)PyArray_ITEMSIZE(a); /* not d->elsize: NumPy 2 moved it */
  /* NumPy has no bfloat16; ml_dtypes' (kind 'V') is recognised by its scalar type's name. */
  const char* name = d->typeobj ? d->typeobj->tp_name : "";
  size_t len = strlen(name);
  if (size == 2 && len >= 8 && strcmp(name + len - 8, "bfloat16") == 0 &&
      (len == 8 || name[len - 9] == '.'))
    return KB_BFLOAT16;
  switch (d->kind) {
    case 'f':
      return size == 2 ? KB_FLOAT16 : size == 4 ? KB_FLOAT32 : size == 8 ? KB_FLOAT64 : -2;
    case 'i':
      return size == 1 ? KB_INT8 : size == 2 ? KB_INT16 : size == 4 ? KB_INT32 : size == 8 ? KB_INT64 : -2;
    case 'u':
      return size == 1 ? KB_UINT8 : -2;
    case 'b':
      return KB_BOOL;
    default:
      return -2;
  }
}

static int kb_py_numpy_type(kb_data_type t) {
  switch (t) {
    case KB_FLOAT16: return NPY_FLOAT16;
    case KB_FLOAT32: return NPY_FLOAT32;
    case KB_FLOAT64: return NPY_FLOAT64;
    case KB_INT8: return NPY_INT8;
    case KB_INT16: return NPY_INT16;
    case KB_INT32: return NPY_INT32;
    case KB_INT64: return NPY_INT64;
    case KB_UINT8: return NPY_UINT8;
    case KB_BOOL: return NPY_BOOL;
    default: return -1;
  }
}

/* Any array-like as a C-contiguous, aligned NumPy array of a kbackend dtype (a new reference). */
static PyArrayObject* kb_py_as_array(PyObject* o, kb_data_type* dtype) {
  PyArrayObject* a = (PyArrayObject*)PyArray_FROMANY(o, NPY_NOTYPE, 0, 0,
                                                     NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
  if (!a) return NULL;
  int t = kb_py_dtype_of(a);
  if (t == -2) {
    PyErr_Format(PyExc_TypeError, "kbackend has no dtype for NumPy's %s",
                 PyArray_DESCR(a)->typeobj->tp_name);
    Py_DECREF(a);
    return NULL;
  }
  *dtype = (kb_data_type)t;
  return a;
}

/* A sequence of tensors (SWIG proxies, or objects whose .this is one) into v. */
static int kb_py_tensor_seq(PyObject* o, std::vector<kb_tensor*>* v, swig_type_info* type,
                            const char* what) {
  PyObject* seq = PySequence_Fast(o, "");
  if (!seq) {
    PyErr_Format(PyExc_TypeError, "%s: expected a sequence of tensors, got %s", what,
                 Py_TYPE(o)->tp_name);
    return 0;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  v->resize((size_t)n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    void* p = NULL;
    if (!SWIG_IsOK(SWIG_ConvertPtr(PySequence_Fast_GET_ITEM(seq, i), &p, type, 0)) || !p) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError, "%s: entry %zd is not a tensor", what, i);
      return 0;
    }
    (*v)[(size_t)i] = (kb_tensor*)p;
  }
  Py_DECREF(seq);
  return 1;
}

/* A string option parsed by a kb_parse_* function, an int, or None (the enum's default). */
typedef int (*kb_py_parse_fn)(const char* name, int* out); /* 1 = parsed */
static int kb_py_enum(PyObject* o, int none_value, kb_py_parse_fn parse, int* out) {
  if (o == Py_None) {
    *out = none_value;
    return 1;
  }
  if (PyUnicode_Check(o)) {
    const char* s = PyUnicode_AsUTF8(o);
    if (!s) return 0;
    if (!parse(s, out)) {
      kb_py_raise_last_error();
      return 0;
    }
    return 1;
  }
  int64_t v;
  if (!kb_py_int64(o, &v)) {
    PyErr_Format(PyExc_TypeError, "expected a string, an int or None, got %s", Py_TYPE(o)->tp_name);
    return 0;
  }
  *out = (int)v;
  return 1;
}

/* Parsers for the options the C ABI has no kb_parse_* function for. */
static kb_status kb_py_parse_dim_ordering(const char* s, kb_dim_ordering* out) {
  if (!strcmp(s, "tf")) *out = KB_DIM_ORDERING_TF;
  else if (!strcmp(s, "th")) *out = KB_DIM_ORDERING_TH;
  else {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "image_dim_ordering: expected 'tf' or 'th'");
    return KB_ERROR_INVALID_ARGUMENT;
  }
  return KB_OK;
}
static kb_status kb_py_parse_device(const char* s, kb_device_kind* out) {
  if (!strcmp(s, "cpu")) *out = KB_DEVICE_CPU;
  else if (!strcmp(s, "cuda") || !strcmp(s, "gpu")) *out = KB_DEVICE_CUDA;
  else {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "device: expected 'cpu' or 'cuda'");
    return KB_ERROR_INVALID_ARGUMENT;
  }
  return KB_OK;
}
static kb_status kb_py_parse_status(const char*, kb_status*) {
  kb_set_error(KB_ERROR_INVALID_ARGUMENT, "a kb_status is an int");
  return KB_ERROR_INVALID_ARGUMENT;
}

/* kb_print_sink that calls the registered Python callable (from any thread). */
static void kb_py_print_sink(const char* text, void* user_data) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject* r = PyObject_CallFunction((PyObject*)user_data, "s", text);
  if (r) Py_DECREF(r);
  else PyErr_WriteUnraisable((PyObject*)user_data);
  PyGILState_Release(g);
}
%}

%init %{
  import_array();
  kb_py_error_class = PyErr_NewExceptionWithDoc(
      "kbackend.KBackendError", "A kbackend failure; .status is the kb_status code.",
      PyExc_RuntimeError, NULL);
  if (kb_py_error_class) {
    Py_INCREF(kb_py_error_class);
    PyModule_AddObject(m, "KBackendError", kb_py_error_class);
  }
%}

/* kb_status results: the error policy has already raised; the value itself is not returned. */
%typemap(out) kb_status "(void)$1;\n  $result = SWIG_Py_Void();"
/* ... except for kb_last_error_code, whose result is the code. */
%typemap(out) kb_status kb_last_error_code "$result = PyLong_FromLong((long)$1);"

/* ---- out-parameters become return values -------------------------------------------------- */
%define KB_PY_HANDLE_OUT(TYPE)
%typemap(in, numinputs=0) TYPE** (TYPE* temp = NULL) "$1 = &temp;"
%typemap(argout) TYPE** {
  %append_output(temp$argnum ? SWIG_NewPointerObj(temp$argnum, $descriptor(TYPE*), SWIG_POINTER_OWN)
                             : SWIG_Py_Void());
}
%enddef
KB_PY_HANDLE_OUT(kb_tensor)
KB_PY_HANDLE_OUT(kb_compiled_function)
/* kb_tensor* const* (an input array) would otherwise match kb_tensor** above. */
%typemap(in) kb_tensor* const* = SWIGTYPE*;
%typemap(argout) kb_tensor* const* "";

/* A tensor list comes back as a Python list of Tensor proxies (None for a NULL entry). */
%typemap(in, numinputs=0) kb_tensor_list** (kb_tensor_list* temp = NULL) "$1 = &temp;"
%typemap(argout) kb_tensor_list** {
  kb_tensor_list* list = temp$argnum;
  size_t n = kb_tensor_list_size(list);
  PyObject* py = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; py && i < n; ++i) {
    kb_tensor* t = NULL;
    if (kb_tensor_list_get(list, i, &t) != KB_OK) {
      kb_tensor_list_release(list);
      Py_DECREF(py);
      kb_py_raise_last_error();
      SWIG_fail;
    }
    PyList_SET_ITEM(py, (Py_ssize_t)i,
                    t ? SWIG_NewPointerObj(t, $descriptor(kb_tensor*), SWIG_POINTER_OWN)
                      : SWIG_Py_Void());
  }
  kb_tensor_list_release(list);
  if (!py) SWIG_fail;
  %append_output(py);
}

%define KB_PY_SCALAR_OUT(TYPE, TO_PY)
%typemap(in, numinputs=0) TYPE* out (TYPE temp) "$1 = ($1_ltype)&temp;"
%typemap(argout) TYPE* out { %append_output(TO_PY); }
%enddef
KB_PY_SCALAR_OUT(int64_t, PyLong_FromLongLong((long long)temp$argnum))
KB_PY_SCALAR_OUT(int32_t, PyLong_FromLong((long)temp$argnum))
KB_PY_SCALAR_OUT(uint64_t, PyLong_FromUnsignedLongLong((unsigned long long)temp$argnum))
KB_PY_SCALAR_OUT(size_t, PyLong_FromSize_t(temp$argnum))
KB_PY_SCALAR_OUT(double, PyFloat_FromDouble(temp$argnum))
KB_PY_SCALAR_OUT(const char*, SWIG_FromCharPtr(temp$argnum))
KB_PY_SCALAR_OUT(kb_data_type, PyLong_FromLong((long)temp$argnum))
KB_PY_SCALAR_OUT(kb_data_format, PyLong_FromLong((long)temp$argnum))
KB_PY_SCALAR_OUT(kb_dim_ordering, PyLong_FromLong((long)temp$argnum))
KB_PY_SCALAR_OUT(kb_device_kind, PyLong_FromLong((long)temp$argnum))
KB_PY_SCALAR_OUT(kb_padding, PyLong_FromLong((long)temp$argnum))
KB_PY_SCALAR_OUT(kb_pool_mode, PyLong_FromLong((long)temp$argnum))
KB_PY_SCALAR_OUT(kb_reduce_op, PyLong_FromLong((long)temp$argnum))

/* kb_int_shape / kb_get_variable_shape: a tuple (None for unknown dims), None for unknown rank. */
%typemap(in, numinputs=0) (int64_t* dims, size_t capacity, int64_t* ndim)
    (int64_t buf[64], int64_t rank = 0) {
  $1 = buf;
  $2 = 64;
  $3 = &rank;
}
%typemap(argout) (int64_t* dims, size_t capacity, int64_t* ndim) {
  PyObject* py;
  if (rank$argnum < 0) {
    py = SWIG_Py_Void();
  } else {
    std::vector<int64_t> big;
    const int64_t* d = buf$argnum;
    if (rank$argnum > 64) { /* more dims than the buffer: ask again with room for all */
      big.resize((size_t)rank$argnum);
      int64_t r2 = 0;
      if ($symname(arg1, big.data(), big.size(), &r2) != KB_OK) {
        kb_py_raise_last_error();
        SWIG_fail;
      }
      d = big.data();
    }
    py = PyTuple_New((Py_ssize_t)rank$argnum);
    for (int64_t i = 0; py && i < rank$argnum; ++i)
      PyTuple_SET_ITEM(py, (Py_ssize_t)i, d[i] < 0 ? SWIG_Py_Void() : PyLong_FromLongLong(d[i]));
    if (!py) SWIG_fail;
  }
  %append_output(py);
}

/* ---- input arrays --------------------------------------------------------------------------- */
/* (const int64_t*, size_t) pairs: None -> (NULL, 0); an int -> one entry; a sequence of ints. */
%typemap(in) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) (std::vector<int64_t> v) {
  if ($input == Py_None) {
    $1 = NULL;
    $2 = 0;
  } else {
    if (!kb_py_int64_seq($input, &v, "$symname: $1_name")) SWIG_fail;
    $1 = (int64_t*)kb_py_dims_ptr(v);
    $2 = v.size();
  }
}
/* An optional int64 scalar (seed): None -> NULL. */
%typemap(in) const int64_t* (int64_t v) {
  if ($input == Py_None) {
    $1 = NULL;
  } else {
    if (!kb_py_int64($input, &v)) SWIG_fail;
    $1 = &v;
  }
}
/* kb_batch_dot axes: None, an int a (-> {a, a}) or two ints. */
%typemap(in) const int64_t* axes (std::vector<int64_t> v) {
  if ($input == Py_None) {
    $1 = NULL;
  } else {
    if (!kb_py_int64_seq($input, &v, "$symname: axes")) SWIG_fail;
    if (v.size() == 1) v.push_back(v[0]);
    if (v.size() != 2) {
      PyErr_SetString(PyExc_ValueError, "$symname: axes must be an int or two ints");
      SWIG_fail;
    }
    $1 = v.data();
  }
}
/* kb_slice(x, start, size, n) and kb_strided_slice(x, begin, end, strides, n): sequences of equal
 * length; the count comes from the last one, the check compares the others (arguments 2 and 3). */
%typemap(in) const int64_t* start (std::vector<int64_t> v), const int64_t* begin (std::vector<int64_t> v),
             const int64_t* end (std::vector<int64_t> v) {
  if (!kb_py_int64_seq($input, &v, "$symname: $1_name")) SWIG_fail;
  $1 = (int64_t*)kb_py_dims_ptr(v);
}
%typemap(check) (const int64_t* size, size_t n) {
  if (v2.size() != $2) {
    PyErr_SetString(PyExc_ValueError, "$symname: start and size differ in length");
    SWIG_fail;
  }
}
%typemap(check) (const int64_t* strides, size_t n) {
  if (v2.size() != $2 || v3.size() != $2) {
    PyErr_SetString(PyExc_ValueError, "$symname: begin, end and strides differ in length");
    SWIG_fail;
  }
}

/* An optional double scalar (stop, max_value): None -> NULL. */
%typemap(in) const double* (double v) {
  if ($input == Py_None) {
    $1 = NULL;
  } else {
    v = PyFloat_AsDouble($input);
    if (v == -1.0 && PyErr_Occurred()) SWIG_fail;
    $1 = &v;
  }
}

/* (kb_tensor* const*, size_t) pairs: None -> (NULL, 0); a sequence of Tensor proxies (or of objects
 * whose .this is one, as the idiomatic kbackend.Tensor). */
%typemap(in) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT) (std::vector<kb_tensor*> v) {
  if ($input == Py_None) {
    $1 = NULL;
    $2 = 0;
  } else {
    if (!kb_py_tensor_seq($input, &v, $descriptor(kb_tensor*), "$symname: $1_name")) SWIG_fail;
    $1 = v.empty() ? NULL : v.data();
    $2 = v.size();
  }
}
/* kb_batch_set_value(xs, values, n): two sequences of equal length (xs is argument 1). */
%typemap(in) kb_tensor* const* xs (std::vector<kb_tensor*> v) {
  if (!kb_py_tensor_seq($input, &v, $descriptor(kb_tensor*), "$symname: xs")) SWIG_fail;
  $1 = v.empty() ? NULL : v.data();
}
%typemap(check) (kb_tensor* const* values, size_t n) {
  if (v1.size() != $2) {
    PyErr_SetString(PyExc_ValueError, "$symname: xs and values differ in length");
    SWIG_fail;
  }
}

/* ---- data in and out -------------------------------------------------------------------------- */
/* (data, dtype, shape, ndim) from any array-like (a NumPy array is read in place when it is
 * C-contiguous and aligned). */
%typemap(in) (const void* data, kb_data_type dtype, const int64_t* shape, size_t ndim)
    (PyArrayObject* arr = NULL, std::vector<int64_t> dims) {
  arr = kb_py_as_array($input, &$2);
  if (!arr) SWIG_fail;
  $1 = PyArray_DATA(arr);
  dims.assign(PyArray_DIMS(arr), PyArray_DIMS(arr) + PyArray_NDIM(arr));
  $3 = (int64_t*)kb_py_dims_ptr(dims);
  $4 = dims.size();
}
%typemap(freearg) (const void* data, kb_data_type dtype, const int64_t* shape, size_t ndim) {
  Py_XDECREF(arr$argnum);
}
%apply (const void* data, kb_data_type dtype, const int64_t* shape, size_t ndim) {
  (const void* data, kb_data_type data_dtype, const int64_t* shape, size_t ndim),
  (const void* data, kb_data_type data_dtype, const int64_t* value_shape, size_t value_ndim)
};

/* (void* dst, size_t nbytes): a writable C-contiguous buffer (a NumPy array). */
%typemap(in) (void* dst, size_t nbytes) (Py_buffer view, int have_view = 0) {
  if (PyObject_GetBuffer($input, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  have_view = 1;
  $1 = view.buf;
  $2 = (size_t)view.len;
}
%typemap(freearg) (void* dst, size_t nbytes) {
  if (have_view$argnum) PyBuffer_Release(&view$argnum);
}

/* kb_cast_to_floatx(src, src_dtype, count, dst): an array-like in, a new floatx array out. */
%typemap(in) (const void* src, kb_data_type src_dtype, size_t count, void* dst)
    (PyArrayObject* arr = NULL, PyObject* result = NULL) {
  arr = kb_py_as_array($input, &$2);
  if (!arr) SWIG_fail;
  kb_data_type fx;
  if (kb_floatx(&fx) != KB_OK) {
    kb_py_raise_last_error();
    SWIG_fail;
  }
  result = PyArray_SimpleNew(PyArray_NDIM(arr), PyArray_DIMS(arr), kb_py_numpy_type(fx));
  if (!result) SWIG_fail;
  $1 = PyArray_DATA(arr);
  $3 = (size_t)PyArray_SIZE(arr);
  $4 = PyArray_DATA((PyArrayObject*)result);
}
%typemap(argout) (const void* src, kb_data_type src_dtype, size_t count, void* dst) {
  %append_output(result$argnum);
  result$argnum = NULL;
}
%typemap(freearg) (const void* src, kb_data_type src_dtype, size_t count, void* dst) {
  Py_XDECREF(arr$argnum);
  Py_XDECREF(result$argnum);
}

/* kb_dist_all_reduce(in, out, count, dtype, op): an array-like in, a new array of its dtype and
 * shape out. */
%typemap(in) (const void* values, void* result, size_t count, kb_data_type dtype)
    (PyArrayObject* arr = NULL, PyObject* result = NULL) {
  arr = kb_py_as_array($input, &$4);
  if (!arr) SWIG_fail;
  result = PyArray_SimpleNew(PyArray_NDIM(arr), PyArray_DIMS(arr), PyArray_TYPE(arr));
  if (!result) SWIG_fail;
  $1 = PyArray_DATA(arr);
  $2 = PyArray_DATA((PyArrayObject*)result);
  $3 = (size_t)PyArray_SIZE(arr);
}
%typemap(argout) (const void* values, void* result, size_t count, kb_data_type dtype) {
  %append_output(result$argnum);
  result$argnum = NULL;
}
%typemap(freearg) (const void* values, void* result, size_t count, kb_data_type dtype) {
  Py_XDECREF(arr$argnum);
  Py_XDECREF(result$argnum);
}

/* ---- options: a string (as Keras spells it), an int, or None ------------------------------- */
%define KB_PY_STRING_ENUM(TYPE, NONE_VALUE, PARSER)
%{
static int kb_py_parse_##TYPE(const char* name, int* out) {
  TYPE v;
  if (PARSER(name, &v) != KB_OK) return 0;
  *out = (int)v;
  return 1;
}
%}
%typemap(in) TYPE {
  int v;
  if (!kb_py_enum($input, NONE_VALUE, kb_py_parse_##TYPE, &v)) SWIG_fail;
  $1 = (TYPE)v;
}
%enddef
KB_PY_STRING_ENUM(kb_data_type, KB_DTYPE_DEFAULT, kb_parse_dtype)
KB_PY_STRING_ENUM(kb_data_format, KB_DATA_FORMAT_DEFAULT, kb_parse_data_format)
KB_PY_STRING_ENUM(kb_padding, KB_PADDING_VALID, kb_parse_padding)
KB_PY_STRING_ENUM(kb_pool_mode, KB_POOL_MAX, kb_parse_pool_mode)
KB_PY_STRING_ENUM(kb_interpolation, KB_INTERPOLATION_NEAREST, kb_parse_interpolation)
KB_PY_STRING_ENUM(kb_dim_ordering, KB_DIM_ORDERING_TF, kb_py_parse_dim_ordering)
KB_PY_STRING_ENUM(kb_device_kind, KB_DEVICE_CPU, kb_py_parse_device)
KB_PY_STRING_ENUM(kb_reduce_op, KB_REDUCE_SUM, kb_parse_reduce_op)
KB_PY_STRING_ENUM(kb_status, KB_OK, kb_py_parse_status)

/* kb_set_print_sink(sink, user_data): a Python callable taking the text, or None. */
%typemap(in) (kb_print_sink sink, void* user_data) {
  if ($input == Py_None) {
    $1 = NULL;
    $2 = NULL;
  } else if (PyCallable_Check($input)) {
    $1 = kb_py_print_sink;
    $2 = $input;
  } else {
    PyErr_SetString(PyExc_TypeError, "$symname: sink must be callable or None");
    SWIG_fail;
  }
}
%typemap(argout) (kb_print_sink sink, void* user_data) {
  /* the library now holds user_data: keep the callable alive, drop the previous one */
  PyObject* old = kb_py_print_sink_object;
  kb_py_print_sink_object = $input == Py_None ? NULL : $input;
  Py_XINCREF(kb_py_print_sink_object);
  Py_XDECREF(old);
}

/* ---- callbacks: rnn, map_fn, foldl, foldr ---------------------------------------------------
 * A C trampoline calls the Python callable (on the building thread, taking the GIL). Tensors
 * passed in become owning proxies (retained); the tensor it returns is retained for the library.
 * A Python exception is kept and raised again unchanged by the building function. */
%{
/* Called with the GIL held and a Python error set: keeps it and reports it to the library. */
static kb_status kb_py_callback_failed(const char* who) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  const char* text = "";
  PyObject* str = value ? PyObject_Str(value) : NULL;
  if (str) text = PyUnicode_AsUTF8(str);
  if (!text) {
    PyErr_Clear();
    text = "";
  }
  char message[512];
  snprintf(message, sizeof message, "%s: the Python callback raised %s: %s", who,
           type ? ((PyTypeObject*)type)->tp_name : "an exception", text);
  Py_XDECREF(str);
  kb_py_clear_pending();
  kb_py_pending_type = type;
  kb_py_pending_value = value;
  kb_py_pending_traceback = tb;
  kb_set_error(KB_ERROR_INVALID_ARGUMENT, message);
  return KB_ERROR_INVALID_ARGUMENT;
}

/* A borrowed tensor as a Python proxy that owns a reference of its own. */
static PyObject* kb_py_borrowed_tensor(kb_tensor* t) {
  kb_tensor_retain(t);
  return SWIG_NewPointerObj(t, SWIGTYPE_p_kb_tensor, SWIG_POINTER_OWN);
}

/* A callback's tensor result as a new reference for the library. */
static kb_tensor* kb_py_result_tensor(PyObject* o) {
  void* p = NULL;
  if (!SWIG_IsOK(SWIG_ConvertPtr(o, &p, SWIGTYPE_p_kb_tensor, 0)) || !p) {
    PyErr_Format(PyExc_TypeError, "the callback must return a tensor, not %s",
                 Py_TYPE(o)->tp_name);
    return NULL;
  }
  kb_tensor_retain((kb_tensor*)p);
  return (kb_tensor*)p;
}

static kb_status kb_py_map_trampoline(void* user_data, kb_tensor* x, kb_tensor** out) {
  PyGILState_STATE g = PyGILState_Ensure();
  kb_status st = KB_OK;
  PyObject* r = PyObject_CallFunctionObjArgs((PyObject*)user_data, kb_py_borrowed_tensor(x), NULL);
  kb_tensor* t = r ? kb_py_result_tensor(r) : NULL;
  Py_XDECREF(r);
  if (t) *out = t;
  else st = kb_py_callback_failed("map_fn");
  PyGILState_Release(g);
  return st;
}

static kb_status kb_py_fold_trampoline(void* user_data, kb_tensor* acc, kb_tensor* x,
                                       kb_tensor** out) {
  PyGILState_STATE g = PyGILState_Ensure();
  kb_status st = KB_OK;
  PyObject* a = kb_py_borrowed_tensor(acc);
  PyObject* b = kb_py_borrowed_tensor(x);
  PyObject* r = a && b ? PyObject_CallFunctionObjArgs((PyObject*)user_data, a, b, NULL) : NULL;
  Py_XDECREF(a);
  Py_XDECREF(b);
  kb_tensor* t = r ? kb_py_result_tensor(r) : NULL;
  Py_XDECREF(r);
  if (t) *out = t;
  else st = kb_py_callback_failed("fold");
  PyGILState_Release(g);
  return st;
}

/* step_function(input, states) -> (output, new_states), as in Keras. */
static kb_status kb_py_step_trampoline(void* user_data, kb_tensor* input, kb_tensor* const* states,
                                       size_t n, kb_tensor** output, kb_tensor_list** new_states) {
  PyGILState_STATE g = PyGILState_Ensure();
  kb_status st = KB_OK;
  kb_tensor* out_t = NULL;
  kb_tensor_list* list = NULL;
  PyObject *in = NULL, *py_states = NULL, *r = NULL, *seq = NULL, *ns = NULL;
  std::vector<kb_tensor*> items;
  in = kb_py_borrowed_tensor(input);
  py_states = PyList_New((Py_ssize_t)n);
  if (!in || !py_states) goto error;
  for (size_t i = 0; i < n; ++i) {
    PyObject* s = kb_py_borrowed_tensor(states[i]);
    if (!s) goto error;
    PyList_SET_ITEM(py_states, (Py_ssize_t)i, s);
  }
  r = PyObject_CallFunctionObjArgs((PyObject*)user_data, in, py_states, NULL);
  if (!r) goto error;
  seq = PySequence_Fast(r, "the rnn step function must return (output, new_states)");
  if (!seq) goto error;
  if (PySequence_Fast_GET_SIZE(seq) != 2) {
    PyErr_SetString(PyExc_ValueError, "the rnn step function must return (output, new_states)");
    goto error;
  }
  ns = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, 1), "new_states must be a sequence");
  if (!ns) goto error;
  if (!kb_py_tensor_seq(ns, &items, SWIGTYPE_p_kb_tensor, "rnn: new_states")) goto error;
  out_t = kb_py_result_tensor(PySequence_Fast_GET_ITEM(seq, 0));
  if (!out_t) goto error;
  if (kb_tensor_list_new(items.empty() ? NULL : items.data(), items.size(), &list) != KB_OK) {
    kb_tensor_release(out_t);
    st = kb_last_error_code(); /* the library's own message stays */
    goto done;
  }
  *output = out_t;
  *new_states = list;
  goto done;
error:
  st = kb_py_callback_failed("rnn");
done:
  Py_XDECREF(in);
  Py_XDECREF(py_states);
  Py_XDECREF(r);
  Py_XDECREF(seq);
  Py_XDECREF(ns);
  PyGILState_Release(g);
  return st;
}
%}

%define KB_PY_CALLBACK(FN_TYPE, NAME, TRAMPOLINE)
%typemap(in) (FN_TYPE NAME, void* user_data) {
  if (!PyCallable_Check($input)) {
    PyErr_SetString(PyExc_TypeError, "$symname: NAME must be callable");
    SWIG_fail;
  }
  kb_py_clear_pending();
  $1 = TRAMPOLINE;
  $2 = $input; /* borrowed: the library uses it only during this call */
}
/* after the call (the failure path has raised the kept exception already): drop what is left */
%typemap(freearg) (FN_TYPE NAME, void* user_data) "kb_py_clear_pending();"
%enddef
KB_PY_CALLBACK(kb_map_function, fn, kb_py_map_trampoline)
KB_PY_CALLBACK(kb_fold_function, fn, kb_py_fold_trampoline)
KB_PY_CALLBACK(kb_step_function, step_function, kb_py_step_trampoline)

/* Sparse tensors from COO / CSR arrays (kbackend.sparse_from_coo / sparse_from_csr): the
 * values an array-like, the index lists sequences (their counts checked against the values'). */
%apply (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) {
  (const int64_t* indices, size_t n_indices), (const int64_t* indptr, size_t n_indptr),
  (const int64_t* col_indices, size_t n_col_indices),
  (const int64_t* dense_shape, size_t dense_ndim)
};
%newobject kbpy_sparse_from_coo;
%newobject kbpy_sparse_from_csr;
%newobject kbpy_adopt;
%{
static size_t kbpy_count(const int64_t* shape, size_t ndim) {
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  return n;
}
%}
%inline %{
static kb_tensor* kbpy_sparse_from_coo(const int64_t* indices, size_t n_indices, const void* data,
                                       kb_data_type data_dtype, const int64_t* shape, size_t ndim,
                                       const int64_t* dense_shape, size_t dense_ndim,
                                       kb_data_type dtype, const char* name) {
  return kbx_checked_coo(indices, n_indices, data, data_dtype, kbpy_count(shape, ndim),
                         dense_shape, dense_ndim, dtype, name);
}
static kb_tensor* kbpy_sparse_from_csr(const int64_t* indptr, size_t n_indptr,
                                       const int64_t* col_indices, size_t n_col_indices,
                                       const void* data, kb_data_type data_dtype,
                                       const int64_t* shape, size_t ndim, int64_t cols,
                                       kb_data_type dtype, const char* name) {
  return kbx_checked_csr(indptr, n_indptr, col_indices, n_col_indices, data, data_dtype,
                         kbpy_count(shape, ndim), cols, dtype, name);
}
/* A new reference a ctypes call returned (kbackend.models' graph values), as a proxy that owns
 * it. */
static kb_tensor* kbpy_adopt(uintptr_t address) {
  if (!address) kb_set_error(KB_ERROR_INVALID_ARGUMENT, "adopt: NULL tensor");
  return (kb_tensor*)address;
}
%}

/* Custom layers (kbackend.models.register_layer): function(layer, config_json, inputs) returns
 * a tensor or a sequence of tensors; layer is kb_layer* for kb_model_layer_weight while it runs.
 * Models may be built on any thread at any later time, so the callable lives as long as the
 * process (the library keeps the pointer; a class registered again is replaced). A Python error
 * becomes the model's error, naming the layer. */
%{
static kb_status kb_py_layer_trampoline(void* user_data, kb_layer* layer, const char* config_json,
                                        kb_tensor* const* inputs, size_t num_inputs,
                                        kb_tensor** outputs, size_t capacity, size_t* num_outputs) {
  PyGILState_STATE g = PyGILState_Ensure();
  kb_status st = KB_OK;
  std::vector<kb_tensor*> items;
  PyObject *py_layer = NULL, *config = NULL, *py_inputs = NULL, *r = NULL;
  py_layer = SWIG_NewPointerObj(layer, SWIGTYPE_p_kb_layer, 0);
  config = PyUnicode_FromString(config_json ? config_json : "{}");
  py_inputs = PyList_New((Py_ssize_t)num_inputs);
  if (!py_layer || !config || !py_inputs) goto error;
  for (size_t i = 0; i < num_inputs; ++i) {
    PyObject* t = kb_py_borrowed_tensor(inputs[i]);
    if (!t) goto error;
    PyList_SET_ITEM(py_inputs, (Py_ssize_t)i, t);
  }
  r = PyObject_CallFunctionObjArgs((PyObject*)user_data, py_layer, config, py_inputs, NULL);
  if (!r) goto error;
  {
    void* p = NULL; /* one tensor (a Tensor is a sequence too: tried first), or a list */
    if (SWIG_IsOK(SWIG_ConvertPtr(r, &p, SWIGTYPE_p_kb_tensor, 0)) && p) {
      items.push_back((kb_tensor*)p);
    } else if (!PySequence_Check(r)) {
      PyErr_Format(PyExc_TypeError, "a layer must return a tensor or a list of them, not %s",
                   Py_TYPE(r)->tp_name);
      goto error;
    } else if (!kb_py_tensor_seq(r, &items, SWIGTYPE_p_kb_tensor, "the layer's outputs")) {
      goto error;
    }
  }
  if (items.size() > capacity) {
    PyErr_Format(PyExc_ValueError, "the layer returned %zu outputs, more than %zu", items.size(),
                 capacity);
    goto error;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    kb_tensor_retain(items[i]);
    outputs[i] = items[i];
  }
  *num_outputs = items.size();
  goto done;
error:
  st = kb_py_callback_failed("custom layer");
  kb_py_clear_pending(); /* the message carries it: a model is loaded through ctypes, not here */
done:
  Py_XDECREF(py_layer);
  Py_XDECREF(config);
  Py_XDECREF(py_inputs);
  Py_XDECREF(r);
  PyGILState_Release(g);
  return st;
}
%}
%typemap(in) (kb_layer_function function, void* user_data) {
  if (!PyCallable_Check($input)) {
    PyErr_SetString(PyExc_TypeError, "$symname: function must be callable");
    SWIG_fail;
  }
  Py_INCREF($input); /* kept for the process' life: see above */
  $1 = kb_py_layer_trampoline;
  $2 = $input;
}
#endif /* SWIGPYTHON */

/* ======================================================================================== */
#if defined(SWIGJAVA) || defined(SWIGCSHARP)
/* Java and C# share these: kbackend_calls.i (generated by api/generate.py --swig)
 * turns every `kb_status kb_NAME(..., T* out)` into `T NAME(...)`; the hand-written helpers
 * at the end of this file cover raw memory, shapes and callbacks. Each language block below maps
 * the generic pairs (KB_INT64_ARRAY, KB_TENSOR_ARRAY), the optional scalars, the data buffers
 * (const void* data, size_t nbytes) / (void* dst, size_t nbytes) and the callbacks. */
%{
/* Bytes per element of a dtype, 0 for an invalid one. */
static size_t kbx_dtype_size(kb_data_type t) {
  switch (t) {
    case KB_FLOAT16: case KB_BFLOAT16: case KB_INT16: return 2;
    case KB_FLOAT32: case KB_INT32: return 4;
    case KB_FLOAT64: case KB_INT64: return 8;
    case KB_INT8: case KB_UINT8: case KB_BOOL: return 1;
    default: return 0;
  }
}

/* A buffer of nbytes must hold exactly the elements of shape in dtype (the C ABI trusts it). */
static int kbx_check_data(const char* who, size_t nbytes, kb_data_type dtype, const int64_t* shape,
                          size_t ndim) {
  char message[256];
  size_t size = kbx_dtype_size(dtype);
  if (size == 0) {
    snprintf(message, sizeof message, "%s: invalid dtype %d", who, (int)dtype);
    kb_set_error(KB_ERROR_DTYPE, message);
    return 0;
  }
  size_t count = 1;
  for (size_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      snprintf(message, sizeof message, "%s: shape entry %zu is negative", who, i);
      kb_set_error(KB_ERROR_SHAPE, message);
      return 0;
    }
    count *= (size_t)shape[i];
  }
  if (count * size != nbytes) {
    snprintf(message, sizeof message,
             "%s: the data holds %zu bytes but the shape needs %zu elements of %zu bytes", who,
             nbytes, count, size);
    kb_set_error(KB_ERROR_SHAPE, message);
    return 0;
  }
  return 1;
}
%}

/* Names: kb_mean -> mean; the handle, enum and enum-item names of the language's own style. */
%rename("%(strip:[kb_])s", %$isfunction) "";
%rename(DType) kb_data_type;
%rename(DataFormat) kb_data_format;
%rename(DimOrdering) kb_dim_ordering;
%rename(Status) kb_status;
%rename(DeviceKind) kb_device_kind;
%rename(Padding) kb_padding;
%rename(PoolMode) kb_pool_mode;
%rename(ReduceOp) kb_reduce_op;
%rename(Interpolation) kb_interpolation;
%rename(Training) kb_training;
/* KB_FLOAT32 -> FLOAT32, KB_PADDING_SAME -> SAME (the two defaults keep DTYPE_ / DATA_FORMAT_:
 * SWIG sees C enum items in one scope) */
%rename("%(regex:/^KB_(DIM_ORDERING_|DEVICE_|PADDING_|POOL_|REDUCE_|INTERPOLATION_|TRAINING_)?(.*)$/\\2/)s", %$isenumitem) "";
/* The items that keep the C enums int32-wide are no values to pass (after the rule above: the
 * last matching rename wins). */
%rename("$ignore", regexmatch$name="_FORCE_INT32_M(IN|AX)$", %$isenumitem) "";
/* Raw memory and C function pointers have no form in these languages yet: left out (and out
 * of the generated helpers) rather than exposed as SWIG's opaque pointer types. */
%ignore kb_sparse_from_coo;
%ignore kb_sparse_from_csr;
%ignore kb_switch_fn;
%ignore kb_in_train_phase_fn;
%ignore kb_in_test_phase_fn;
/* Keras' boolean flags are booleans. */
%apply bool { int32_t keepdims, int32_t from_logits, int32_t sparse, int32_t go_backwards,
              int32_t compile, int32_t include_optimizer, int32_t by_name,
              int32_t unroll };
/* The error state is the policy's business; callbacks report failures through their language. */
%ignore kb_last_error_code;
%ignore kb_last_error_message;
%ignore kb_clear_error;
%ignore kb_set_error;
#endif

/* ======================================================================================== */
#ifdef SWIGJAVA
/* Package org.kbackend (swig -package org.kbackend -module K): the module class K holds every
 * function under its Keras name; Tensor, TensorList and CompiledFunction are AutoCloseable with a
 * java.lang.ref.Cleaner as the safety net; errors are the unchecked KBackendException. The Java
 * code of the proxy classes is in java_code.i; hand-written classes in bindings/java/src. */
/* int64_t is `long` here (-DSWIGWORDSIZE64), which SWIG's Java typemaps take as 32-bit. */
%apply long long { long };
%apply const long long& { const long& };
%include <enums.swg> /* proper Java enums */
/* SWIG's body of proper enums (enums.swg), documented. */
%typemap(javabody) enum SWIGTYPE %{
  /** The C value of this constant.
   * @return the value of the C enum */
  public final int swigValue() {
    return swigValue;
  }

  /** The constant of a C value.
   * @param swigValue a value of the C enum
   * @return its constant
   * @throws IllegalArgumentException for a value the enum does not have */
  public static $javaclassname swigToEnum(int swigValue) {
    $javaclassname[] swigValues = $javaclassname.class.getEnumConstants();
    if (swigValue < swigValues.length && swigValue >= 0 && swigValues[swigValue].swigValue == swigValue)
      return swigValues[swigValue];
    for ($javaclassname swigEnum : swigValues)
      if (swigEnum.swigValue == swigValue)
        return swigEnum;
    throw new IllegalArgumentException("No enum " + $javaclassname.class + " with value " + swigValue);
  }

  @SuppressWarnings("unused")
  private $javaclassname() {
    this.swigValue = SwigNext.next++;
  }

  @SuppressWarnings("unused")
  private $javaclassname(int swigValue) {
    this.swigValue = swigValue;
    SwigNext.next = swigValue+1;
  }

  @SuppressWarnings("unused")
  private $javaclassname($javaclassname swigEnum) {
    this.swigValue = swigEnum.swigValue;
    SwigNext.next = this.swigValue+1;
  }

  private final int swigValue;

  private static class SwigNext {
    private static int next = 0;
  }
%}

%{
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A Throwable raised by a Java callback on this thread, kept (as a global reference) to be thrown
 * again, unchanged, when the building function returns its failure. */
static thread_local jthrowable kbj_pending = NULL;

static void kbj_clear_pending(JNIEnv* env) {
  if (kbj_pending) {
    env->DeleteGlobalRef(kbj_pending);
    kbj_pending = NULL;
  }
}

static void kbj_throw(JNIEnv* env, const char* cls_name, const char* message) {
  jclass cls = env->FindClass(cls_name);
  if (cls) env->ThrowNew(cls, message);
}

static void kbj_raise_last_error(JNIEnv* env) {
  if (env->ExceptionCheck()) return; /* a typemap has thrown already */
  if (kbj_pending) {
    jthrowable t = (jthrowable)env->NewLocalRef(kbj_pending);
    kbj_clear_pending(env);
    env->Throw(t);
    return;
  }
  /* org.kbackend.Errors.of: the exception of the status (api/kbackend.toml's [errors]) */
  jclass cls = env->FindClass("org/kbackend/Errors");
  if (!cls) return;
  jmethodID of =
      env->GetStaticMethodID(cls, "of", "(ILjava/lang/String;)Ljava/lang/RuntimeException;");
  const char* message = kb_last_error_message();
  jstring text = env->NewStringUTF(message ? message : "");
  if (!of || !text) return;
  jobject exc = env->CallStaticObjectMethod(cls, of, (jint)kb_last_error_code(), text);
  if (exc && !env->ExceptionCheck()) env->Throw((jthrowable)exc);
}

/* Primitive arrays and NIO buffers: element sizes by class. */
struct kbj_kind {
  const char* name;
  size_t size;
};
static const kbj_kind kbj_arrays[] = {{"[F", 4}, {"[D", 8}, {"[I", 4}, {"[J", 8},
                                      {"[S", 2}, {"[B", 1}, {"[Z", 1}, {"[C", 2}};
static const kbj_kind kbj_buffers[] = {
    {"java/nio/FloatBuffer", 4}, {"java/nio/DoubleBuffer", 8}, {"java/nio/IntBuffer", 4},
    {"java/nio/LongBuffer", 8},  {"java/nio/ShortBuffer", 2},  {"java/nio/ByteBuffer", 1},
    {"java/nio/CharBuffer", 2}};

static int kbj_kind_of(JNIEnv* env, jobject obj, const kbj_kind* kinds, int n) {
  for (int i = 0; i < n; ++i) {
    jclass c = env->FindClass(kinds[i].name);
    if (!c) return -2;
    jboolean is = env->IsInstanceOf(obj, c);
    env->DeleteLocalRef(c);
    if (is) return i;
  }
  return -1;
}

/* The bytes of a primitive array (copied) or of a direct buffer (in place, from its position). */
struct kbj_data {
  std::vector<char> copy;
  void* ptr = NULL;
  size_t nbytes = 0;
  int array_kind = -1; /* index into kbj_arrays, -1 for a buffer */
};

static int kbj_get_data(JNIEnv* env, jobject obj, kbj_data* d, int read) {
  if (!obj) {
    kbj_throw(env, "java/lang/NullPointerException", "kbackend: the data is null");
    return 0;
  }
  int k = kbj_kind_of(env, obj, kbj_arrays, 8);
  if (k == -2) return 0;
  if (k >= 0) {
    jsize n = env->GetArrayLength((jarray)obj);
    d->array_kind = k;
    d->nbytes = (size_t)n * kbj_arrays[k].size;
    d->copy.resize(d->nbytes + 1);
    d->ptr = d->copy.data();
    if (read && n) {
      switch (k) {
        case 0: env->GetFloatArrayRegion((jfloatArray)obj, 0, n, (jfloat*)d->ptr); break;
        case 1: env->GetDoubleArrayRegion((jdoubleArray)obj, 0, n, (jdouble*)d->ptr); break;
        case 2: env->GetIntArrayRegion((jintArray)obj, 0, n, (jint*)d->ptr); break;
        case 3: env->GetLongArrayRegion((jlongArray)obj, 0, n, (jlong*)d->ptr); break;
        case 4: env->GetShortArrayRegion((jshortArray)obj, 0, n, (jshort*)d->ptr); break;
        case 5: env->GetByteArrayRegion((jbyteArray)obj, 0, n, (jbyte*)d->ptr); break;
        case 6: env->GetBooleanArrayRegion((jbooleanArray)obj, 0, n, (jboolean*)d->ptr); break;
        case 7: env->GetCharArrayRegion((jcharArray)obj, 0, n, (jchar*)d->ptr); break;
      }
    }
    return 1;
  }
  k = kbj_kind_of(env, obj, kbj_buffers, 7);
  if (k == -2) return 0;
  char* base = k >= 0 ? (char*)env->GetDirectBufferAddress(obj) : NULL;
  if (!base) {
    kbj_throw(env, "java/lang/IllegalArgumentException",
              "kbackend: data must be a primitive array or a direct NIO buffer");
    return 0;
  }
  jclass buffer = env->FindClass("java/nio/Buffer");
  jint position = env->CallIntMethod(obj, env->GetMethodID(buffer, "position", "()I"));
  jint remaining = env->CallIntMethod(obj, env->GetMethodID(buffer, "remaining", "()I"));
  if (env->ExceptionCheck()) return 0;
  d->ptr = base + (size_t)position * kbj_buffers[k].size;
  d->nbytes = (size_t)remaining * kbj_buffers[k].size;
  return 1;
}

/* After a successful copy into d: back into the Java array (a direct buffer is written in place). */
static void kbj_put_data(JNIEnv* env, jobject obj, const kbj_data* d) {
  if (d->array_kind < 0) return;
  jsize n = (jsize)(d->nbytes / kbj_arrays[d->array_kind].size);
  const void* p = d->ptr;
  switch (d->array_kind) {
    case 0: env->SetFloatArrayRegion((jfloatArray)obj, 0, n, (const jfloat*)p); break;
    case 1: env->SetDoubleArrayRegion((jdoubleArray)obj, 0, n, (const jdouble*)p); break;
    case 2: env->SetIntArrayRegion((jintArray)obj, 0, n, (const jint*)p); break;
    case 3: env->SetLongArrayRegion((jlongArray)obj, 0, n, (const jlong*)p); break;
    case 4: env->SetShortArrayRegion((jshortArray)obj, 0, n, (const jshort*)p); break;
    case 5: env->SetByteArrayRegion((jbyteArray)obj, 0, n, (const jbyte*)p); break;
    case 6: env->SetBooleanArrayRegion((jbooleanArray)obj, 0, n, (const jboolean*)p); break;
    case 7: env->SetCharArrayRegion((jcharArray)obj, 0, n, (const jchar*)p); break;
  }
}

static int64_t kbj_empty[1] = {0};

/* long[] -> v (null is NULL with count 0, an empty array a non-NULL pointer with count 0). */
static const int64_t* kbj_longs(JNIEnv* env, jlongArray a, std::vector<int64_t>* v) {
  if (!a) return NULL;
  jsize n = env->GetArrayLength(a);
  v->resize((size_t)n);
  if (n) env->GetLongArrayRegion(a, 0, n, (jlong*)v->data());
  return n ? v->data() : kbj_empty;
}

/* Tensor[] -> v. Returns 0 with a Java exception pending on a null entry. */
static int kbj_tensors(JNIEnv* env, jobjectArray a, std::vector<kb_tensor*>* v) {
  static jfieldID ptr_field = NULL;
  if (!ptr_field) {
    jclass cls = env->FindClass("org/kbackend/Tensor");
    if (!cls) return 0;
    ptr_field = env->GetFieldID(cls, "swigCPtr", "J");
    if (!ptr_field) return 0;
  }
  jsize n = env->GetArrayLength(a);
  v->resize((size_t)n);
  for (jsize i = 0; i < n; ++i) {
    jobject t = env->GetObjectArrayElement(a, i);
    if (!t) {
      char message[96];
      snprintf(message, sizeof message, "kbackend: tensor array entry %d is null", (int)i);
      kbj_throw(env, "java/lang/NullPointerException", message);
      return 0;
    }
    (*v)[(size_t)i] = (kb_tensor*)(intptr_t)env->GetLongField(t, ptr_field);
    env->DeleteLocalRef(t);
  }
  return 1;
}

/* ---- callbacks: a C trampoline calls org.kbackend.NativeCallback.invoke(long[]) -> long[] with
 * borrowed tensor pointers; the Java side (K.java_code) wraps them and returns new references. */
struct kbj_callback {
  JNIEnv* env;
  jobject fn;
};

static kb_status kbj_callback_failed(JNIEnv* env, const char* who) {
  jthrowable t = env->ExceptionOccurred();
  env->ExceptionClear();
  char message[512];
  snprintf(message, sizeof message, "%s: the Java callback threw an exception", who);
  jclass object = env->FindClass("java/lang/Object");
  jstring text = object ? (jstring)env->CallObjectMethod(
                              t, env->GetMethodID(object, "toString", "()Ljava/lang/String;"))
                        : NULL;
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    text = NULL;
  }
  if (text) {
    const char* chars = env->GetStringUTFChars(text, NULL);
    if (chars) {
      snprintf(message, sizeof message, "%s: the Java callback threw %s", who, chars);
      env->ReleaseStringUTFChars(text, chars);
    }
  }
  kbj_clear_pending(env);
  kbj_pending = (jthrowable)env->NewGlobalRef(t);
  env->DeleteLocalRef(t);
  kb_set_error(KB_ERROR_INVALID_ARGUMENT, message);
  return KB_ERROR_INVALID_ARGUMENT;
}

static kb_status kbj_invoke(void* user_data, const char* who, kb_tensor* const* args, size_t n,
                            std::vector<kb_tensor*>* results) {
  kbj_callback* cb = (kbj_callback*)user_data;
  JNIEnv* env = cb->env;
  static jmethodID invoke = NULL;
  if (!invoke) {
    jclass cls = env->FindClass("org/kbackend/NativeCallback");
    invoke = cls ? env->GetMethodID(cls, "invoke", "([J)[J") : NULL;
    if (!invoke) return kbj_callback_failed(env, who);
  }
  std::vector<jlong> ptrs(n + 1);
  for (size_t i = 0; i < n; ++i) ptrs[i] = (jlong)(intptr_t)args[i];
  jlongArray a = env->NewLongArray((jsize)n);
  if (a) env->SetLongArrayRegion(a, 0, (jsize)n, ptrs.data());
  jlongArray r = a ? (jlongArray)env->CallObjectMethod(cb->fn, invoke, a) : NULL;
  if (a) env->DeleteLocalRef(a);
  if (env->ExceptionCheck()) return kbj_callback_failed(env, who);
  jsize m = r ? env->GetArrayLength(r) : 0;
  ptrs.resize((size_t)m + 1);
  if (m) env->GetLongArrayRegion(r, 0, m, ptrs.data());
  if (r) env->DeleteLocalRef(r);
  results->clear();
  for (jsize i = 0; i < m; ++i) results->push_back((kb_tensor*)(intptr_t)ptrs[(size_t)i]);
  for (kb_tensor* t : *results) {
    if (!t) {
      for (kb_tensor* u : *results) kb_tensor_release(u);
      char message[160];
      snprintf(message, sizeof message, "%s: the Java callback returned a null tensor", who);
      kb_set_error(KB_ERROR_INVALID_ARGUMENT, message);
      return KB_ERROR_INVALID_ARGUMENT;
    }
  }
  return KB_OK;
}

static kb_status kbj_one_result(const char* who, std::vector<kb_tensor*>* r, kb_tensor** out) {
  if (r->size() != 1) {
    for (kb_tensor* t : *r) kb_tensor_release(t);
    char message[160];
    snprintf(message, sizeof message, "%s: the callback must return one tensor", who);
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, message);
    return KB_ERROR_INVALID_ARGUMENT;
  }
  *out = (*r)[0];
  return KB_OK;
}

static kb_status kbj_map_trampoline(void* user_data, kb_tensor* x, kb_tensor** out) {
  std::vector<kb_tensor*> r;
  kb_status st = kbj_invoke(user_data, "map_fn", &x, 1, &r);
  return st != KB_OK ? st : kbj_one_result("map_fn", &r, out);
}

static kb_status kbj_fold_trampoline(void* user_data, kb_tensor* acc, kb_tensor* x,
                                     kb_tensor** out) {
  kb_tensor* args[2] = {acc, x};
  std::vector<kb_tensor*> r;
  kb_status st = kbj_invoke(user_data, "fold", args, 2, &r);
  return st != KB_OK ? st : kbj_one_result("fold", &r, out);
}

static kb_status kbj_step_trampoline(void* user_data, kb_tensor* input, kb_tensor* const* states,
                                     size_t n, kb_tensor** output, kb_tensor_list** new_states) {
  std::vector<kb_tensor*> args(1, input);
  args.insert(args.end(), states, states + n);
  std::vector<kb_tensor*> r;
  kb_status st = kbj_invoke(user_data, "rnn", args.data(), args.size(), &r);
  if (st != KB_OK) return st;
  if (r.empty()) {
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "rnn: the step function returned no output");
    return KB_ERROR_INVALID_ARGUMENT;
  }
  kb_tensor_list* list = NULL;
  st = kb_tensor_list_new(r.size() > 1 ? r.data() + 1 : NULL, r.size() - 1, &list);
  for (size_t i = 1; i < r.size(); ++i) kb_tensor_release(r[i]); /* the list holds its own */
  if (st != KB_OK) {
    kb_tensor_release(r[0]);
    return st;
  }
  *output = r[0];
  *new_states = list;
  return KB_OK;
}
%}

/* (const int64_t*, size_t) pairs: long[] (null -> NULL). */
%typemap(jni) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) "jlongArray"
%typemap(jtype) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) "long[]"
%typemap(jstype) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) "long[]"
%typemap(javain) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) "$javainput"
%typemap(in) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) (std::vector<int64_t> v) {
  $1 = (int64_t*)kbj_longs(jenv, $input, &v);
  $2 = v.size();
}
/* One-pointer int64 arrays: kb_batch_dot's axes (null, {a} or {a, b}) and kb_slice's /
 * kb_strided_slice's start, begin, end (their length is checked against the counted one). */
%typemap(jni) const int64_t* axes, const int64_t* start, const int64_t* begin,
              const int64_t* end "jlongArray"
%typemap(jtype) const int64_t* axes, const int64_t* start, const int64_t* begin,
                const int64_t* end "long[]"
%typemap(jstype) const int64_t* axes, const int64_t* start, const int64_t* begin,
                 const int64_t* end "long[]"
%typemap(javain) const int64_t* axes, const int64_t* start, const int64_t* begin,
                 const int64_t* end "$javainput"
%typemap(in) const int64_t* start (std::vector<int64_t> v), const int64_t* begin (std::vector<int64_t> v),
             const int64_t* end (std::vector<int64_t> v) {
  $1 = (int64_t*)kbj_longs(jenv, $input, &v);
  if (!$1) {
    kbj_throw(jenv, "java/lang/NullPointerException", "$symname: $1_name is null");
    return $null;
  }
}
%typemap(in) const int64_t* axes (std::vector<int64_t> v) {
  $1 = (int64_t*)kbj_longs(jenv, $input, &v);
  if (v.size() == 1) {
    v.push_back(v[0]);
    $1 = v.data();
  }
  if ($1 && v.size() != 2) {
    kbj_throw(jenv, "java/lang/IllegalArgumentException", "$symname: axes must have 1 or 2 entries");
    return $null;
  }
}
%typemap(check) (const int64_t* size, size_t n) {
  if (v2.size() != $2) {
    kbj_throw(jenv, "java/lang/IllegalArgumentException", "$symname: start and size differ in length");
    return $null;
  }
}
%typemap(check) (const int64_t* strides, size_t n) {
  if (v2.size() != $2 || v3.size() != $2) {
    kbj_throw(jenv, "java/lang/IllegalArgumentException",
              "$symname: begin, end and strides differ in length");
    return $null;
  }
}
/* Optional scalars (seed, input_length; stop, max_value): Long / Double, null = None. */
%typemap(jni) const int64_t* "jlongArray"
%typemap(jtype) const int64_t* "long[]"
%typemap(jstype) const int64_t* "Long"
%typemap(javain) const int64_t* "($javainput == null ? null : new long[] {$javainput})"
%typemap(in) const int64_t* (std::vector<int64_t> v) { $1 = (int64_t*)kbj_longs(jenv, $input, &v); }
%typemap(jni) const double* "jdoubleArray"
%typemap(jtype) const double* "double[]"
%typemap(jstype) const double* "Double"
%typemap(javain) const double* "($javainput == null ? null : new double[] {$javainput})"
%typemap(in) const double* (double v) {
  $1 = NULL;
  if ($input) {
    jenv->GetDoubleArrayRegion($input, 0, 1, &v);
    $1 = &v;
  }
}

/* (kb_tensor* const*, size_t) pairs: Tensor[] (null -> NULL). */
%typemap(jni) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT), kb_tensor* const* xs
  "jobjectArray"
%typemap(jtype) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT), kb_tensor* const* xs
  "Tensor[]"
%typemap(jstype) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT), kb_tensor* const* xs
  "Tensor[]"
%typemap(javain) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT), kb_tensor* const* xs
  "$javainput"
%typemap(in) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT) (std::vector<kb_tensor*> v) {
  $1 = NULL;
  $2 = 0;
  if ($input) {
    if (!kbj_tensors(jenv, $input, &v)) return $null;
    $1 = v.empty() ? NULL : v.data();
    $2 = v.size();
  }
}
%typemap(in) kb_tensor* const* xs (std::vector<kb_tensor*> v) {
  if (!$input) {
    kbj_throw(jenv, "java/lang/NullPointerException", "$symname: xs is null");
    return $null;
  }
  if (!kbj_tensors(jenv, $input, &v)) return $null;
  $1 = v.empty() ? NULL : v.data();
}
%typemap(check) (kb_tensor* const* values, size_t n) {
  if (v1.size() != $2) {
    kbj_throw(jenv, "java/lang/IllegalArgumentException", "$symname: xs and values differ in length");
    return $null;
  }
}

/* (const char* const*, size_t) pairs (a model's losses and metrics): String[], null -> NULL. */
%typemap(jni) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) "jobjectArray"
%typemap(jtype) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) "String[]"
%typemap(jstype) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) "String[]"
%typemap(javain) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) "$javainput"
%typemap(in) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT)
    (std::vector<std::string> text, std::vector<const char*> pointers) {
  $1 = NULL;
  $2 = 0;
  if ($input) {
    jsize n = jenv->GetArrayLength($input);
    for (jsize i = 0; i < n; ++i) {
      jstring item = (jstring)jenv->GetObjectArrayElement($input, i);
      if (!item) {
        kbj_throw(jenv, "java/lang/NullPointerException", "$symname: a string of the array is null");
        return $null;
      }
      const char* chars = jenv->GetStringUTFChars(item, NULL);
      if (!chars) return $null; /* OutOfMemoryError pending */
      text.emplace_back(chars);
      jenv->ReleaseStringUTFChars(item, chars);
      jenv->DeleteLocalRef(item);
    }
    for (const std::string& t : text) pointers.push_back(t.c_str());
    $1 = pointers.empty() ? NULL : ($1_ltype)pointers.data(); /* SWIG's local drops the const */
    $2 = pointers.size();
  }
}

/* Data: a primitive array (float[], double[], int[], long[], short[], byte[], boolean[]) or a
 * direct NIO buffer (from its position to its limit, native byte order). */
%typemap(jni) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "jobject"
%typemap(jtype) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "Object"
%typemap(jstype) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "Object"
%typemap(javain) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "$javainput"
%typemap(in) (const void* data, size_t nbytes) (kbj_data d) {
  if (!kbj_get_data(jenv, $input, &d, 1)) return $null;
  $1 = d.ptr;
  $2 = d.nbytes;
}
%typemap(in) (void* dst, size_t nbytes) (kbj_data d) {
  if (!kbj_get_data(jenv, $input, &d, 0)) return $null;
  $1 = d.ptr;
  $2 = d.nbytes;
}
%typemap(argout) (void* dst, size_t nbytes) "kbj_put_data(jenv, $input, &d$argnum);"
/* (void* inout, size_t nbytes): read, then written back (an all-reduce in place). */
%typemap(jni) (void* inout, size_t nbytes) "jobject"
%typemap(jtype) (void* inout, size_t nbytes) "Object"
%typemap(jstype) (void* inout, size_t nbytes) "Object"
%typemap(javain) (void* inout, size_t nbytes) "$javainput"
%typemap(in) (void* inout, size_t nbytes) (kbj_data d) {
  if (!kbj_get_data(jenv, $input, &d, 1)) return $null;
  $1 = d.ptr;
  $2 = d.nbytes;
}
%typemap(argout) (void* inout, size_t nbytes) "kbj_put_data(jenv, $input, &d$argnum);"

/* Callbacks: an org.kbackend.NativeCallback (K's map_fn / foldl / foldr / rnn adapt lambdas). */
%define KB_JAVA_CALLBACK(FN_TYPE, NAME, TRAMPOLINE)
%typemap(jni) (FN_TYPE NAME, void* user_data) "jobject"
%typemap(jtype) (FN_TYPE NAME, void* user_data) "NativeCallback"
%typemap(jstype) (FN_TYPE NAME, void* user_data) "NativeCallback"
%typemap(javain) (FN_TYPE NAME, void* user_data) "$javainput"
%typemap(in) (FN_TYPE NAME, void* user_data) (kbj_callback cb) {
  if (!$input) {
    kbj_throw(jenv, "java/lang/NullPointerException", "$symname: NAME is null");
    return $null;
  }
  kbj_clear_pending(jenv);
  cb.env = jenv;
  cb.fn = $input;
  $1 = TRAMPOLINE;
  $2 = &cb;
}
%typemap(freearg) (FN_TYPE NAME, void* user_data) "kbj_clear_pending(jenv);"
%enddef
KB_JAVA_CALLBACK(kb_map_function, fn, kbj_map_trampoline)
KB_JAVA_CALLBACK(kb_fold_function, fn, kbj_fold_trampoline)
KB_JAVA_CALLBACK(kb_step_function, step_function, kbj_step_trampoline)

/* Branches of switch / in_train_phase / in_test_phase as NativeCallbacks of no argument. */
%{
static kb_status kbj_branch_trampoline(void* user_data, kb_tensor** out) {
  std::vector<kb_tensor*> r;
  kb_status st = kbj_invoke(user_data, "branch", NULL, 0, &r);
  return st != KB_OK ? st : kbj_one_result("branch", &r, out);
}
%}
%define KB_JAVA_BRANCH(FN, DATA)
%typemap(jni) (kb_branch_function FN, void* DATA) "jobject"
%typemap(jtype) (kb_branch_function FN, void* DATA) "NativeCallback"
%typemap(jstype) (kb_branch_function FN, void* DATA) "NativeCallback"
%typemap(javain) (kb_branch_function FN, void* DATA) "$javainput"
%typemap(in) (kb_branch_function FN, void* DATA) (kbj_callback cb) {
  if (!$input) {
    kbj_throw(jenv, "java/lang/NullPointerException", "$symname: FN is null");
    return $null;
  }
  cb.env = jenv;
  cb.fn = $input;
  $1 = kbj_branch_trampoline;
  $2 = &cb;
}
%typemap(freearg) (kb_branch_function FN, void* DATA) "kbj_clear_pending(jenv);"
%enddef
KB_JAVA_BRANCH(then_fn, then_data)
KB_JAVA_BRANCH(else_fn, else_data)
KB_JAVA_BRANCH(x_fn, x_data)
KB_JAVA_BRANCH(alt_fn, alt_data)
%javamethodmodifiers kbx_int_shape_rank "";
%javamethodmodifiers kbx_int_shape_dim "";
%javamethodmodifiers kbx_switch_fn "";
%javamethodmodifiers kbx_in_train_phase_fn "";
%javamethodmodifiers kbx_in_test_phase_fn "";

/* Custom layers: NativeLayer.build(layer, configJson, inputs) -> outputs, raw pointers (borrowed
 * in, new references out). Models may be built on any thread later: the trampoline reaches the
 * JVM through the JavaVM, attaching the thread if it must. What the function throws becomes the
 * model's error, naming the layer. */
%{
/* A Java function the library may call at any later time, on any thread: the JVM and a global
 * reference to the function, kept for the process' life (custom layers, the print sink). */
struct kbj_kept_fn {
  JavaVM* vm;
  jobject fn;
};

static kbj_kept_fn* kbj_keep_fn(JNIEnv* env, jobject fn) {
  kbj_kept_fn* k = new kbj_kept_fn;
  env->GetJavaVM(&k->vm);
  k->fn = env->NewGlobalRef(fn);
  return k;
}

/* The calling thread's JNIEnv, the thread attached to the JVM for as long as this lives when
 * it was not already; env is NULL when attaching fails. */
struct kbj_thread_env {
  JavaVM* vm;
  JNIEnv* env = NULL;
  bool attached = false;
  explicit kbj_thread_env(JavaVM* jvm) : vm(jvm) {
    if (vm->GetEnv((void**)&env, JNI_VERSION_1_8) == JNI_OK) return;
    env = NULL;
    attached = vm->AttachCurrentThread((void**)&env, NULL) == JNI_OK;
    if (!attached) env = NULL;
  }
  ~kbj_thread_env() {
    if (attached) vm->DetachCurrentThread();
  }
  kbj_thread_env(const kbj_thread_env&) = delete;
  kbj_thread_env& operator=(const kbj_thread_env&) = delete;
};

static kb_status kbj_layer_trampoline(void* user_data, kb_layer* layer, const char* config_json,
                                      kb_tensor* const* inputs, size_t num_inputs,
                                      kb_tensor** outputs, size_t capacity, size_t* num_outputs) {
  kbj_kept_fn* l = (kbj_kept_fn*)user_data;
  kbj_thread_env thread(l->vm);
  JNIEnv* env = thread.env;
  if (!env) {
    kb_set_error(KB_ERROR_INTERNAL, "custom layer: cannot attach the thread to the JVM");
    return KB_ERROR_INTERNAL;
  }
  kb_status st = KB_OK;
  static jmethodID build = NULL;
  if (!build) {
    jclass cls = env->FindClass("org/kbackend/NativeLayer");
    build = cls ? env->GetMethodID(cls, "build", "(JLjava/lang/String;[J)[J") : NULL;
  }
  std::vector<jlong> ptrs(num_inputs + 1);
  for (size_t i = 0; i < num_inputs; ++i) ptrs[i] = (jlong)(intptr_t)inputs[i];
  jlongArray in = build ? env->NewLongArray((jsize)num_inputs) : NULL;
  if (in) env->SetLongArrayRegion(in, 0, (jsize)num_inputs, ptrs.data());
  jstring config = in ? env->NewStringUTF(config_json ? config_json : "{}") : NULL;
  jlongArray r = config ? (jlongArray)env->CallObjectMethod(l->fn, build, (jlong)(intptr_t)layer,
                                                            config, in)
                        : NULL;
  if (env->ExceptionCheck() || !r) {
    st = kbj_callback_failed(env, "custom layer");
    kbj_clear_pending(env); /* the message carries it: the model's call raises its own error */
  } else {
    jsize m = env->GetArrayLength(r);
    std::vector<jlong> out((size_t)m + 1);
    if (m) env->GetLongArrayRegion(r, 0, m, out.data());
    if ((size_t)m > capacity) {
      for (jsize i = 0; i < m; ++i) kb_tensor_release((kb_tensor*)(intptr_t)out[(size_t)i]);
      kb_set_error(KB_ERROR_INVALID_ARGUMENT, "custom layer: more outputs than the layer has");
      st = KB_ERROR_INVALID_ARGUMENT;
    } else {
      for (jsize i = 0; i < m; ++i) outputs[i] = (kb_tensor*)(intptr_t)out[(size_t)i];
      *num_outputs = (size_t)m;
    }
  }
  if (in) env->DeleteLocalRef(in);
  if (config) env->DeleteLocalRef(config);
  if (r) env->DeleteLocalRef(r);
  return st;
}
%}
%typemap(jni) (kb_layer_function function, void* user_data) "jobject"
%typemap(jtype) (kb_layer_function function, void* user_data) "NativeLayer"
%typemap(jstype) (kb_layer_function function, void* user_data) "NativeLayer"
%typemap(javain) (kb_layer_function function, void* user_data) "$javainput"
%typemap(in) (kb_layer_function function, void* user_data) {
  if (!$input) {
    kbj_throw(jenv, "java/lang/NullPointerException", "$symname: function is null");
    return $null;
  }
  $1 = kbj_layer_trampoline;
  $2 = kbj_keep_fn(jenv, $input);
}
%javamethodmodifiers kbx_model_register_layer "";

/* The print sink: PrintSink.print(text), from whichever thread prints (attached if it must be);
 * the sink is a global reference kept for the process' life, as prints may still run. */
%{
static void kbj_print_trampoline(const char* text, void* user_data) {
  kbj_kept_fn* l = (kbj_kept_fn*)user_data;
  kbj_thread_env thread(l->vm);
  JNIEnv* env = thread.env;
  if (!env) return;
  static jmethodID print = NULL;
  if (!print) {
    jclass cls = env->FindClass("org/kbackend/PrintSink");
    print = cls ? env->GetMethodID(cls, "print", "(Ljava/lang/String;)V") : NULL;
  }
  jstring s = print ? env->NewStringUTF(text ? text : "") : NULL;
  if (s) env->CallVoidMethod(l->fn, print, s);
  if (env->ExceptionCheck()) env->ExceptionClear(); /* print_tensor has no status to report by */
  if (s) env->DeleteLocalRef(s);
}
%}
%typemap(jni) (kb_print_sink sink, void* user_data) "jobject"
%typemap(jtype) (kb_print_sink sink, void* user_data) "PrintSink"
%typemap(jstype) (kb_print_sink sink, void* user_data) "PrintSink"
%typemap(javain) (kb_print_sink sink, void* user_data) "$javainput"
%typemap(in) (kb_print_sink sink, void* user_data) {
  $1 = NULL;
  $2 = NULL;
  if ($input) {
    $1 = kbj_print_trampoline;
    $2 = kbj_keep_fn(jenv, $input);
  }
}
%javamethodmodifiers kbx_set_print_sink "";
%javamethodmodifiers kbx_sparse_from_coo "";
%javamethodmodifiers kbx_sparse_from_csr "";
%javamethodmodifiers kbx_cast_to_floatx "";
%javamethodmodifiers kbx_get_variable_shape "";
%javamethodmodifiers kbx_model_layer_weight "";

/* fit's per-batch callback: FitCallback.onBatch(epoch, batch, logsJson) -> true stops training.
 * What it throws stops training and comes out of fit unchanged. */
%{
static int32_t kbj_fit_trampoline(void* user_data, int64_t epoch, int64_t batch,
                                  const char* logs_json) {
  kbj_callback* cb = (kbj_callback*)user_data;
  JNIEnv* env = cb->env;
  if (kbj_pending || env->ExceptionCheck()) return 1;
  static jmethodID on_batch = NULL;
  if (!on_batch) {
    jclass cls = env->FindClass("org/kbackend/FitCallback");
    on_batch = cls ? env->GetMethodID(cls, "onBatch", "(JJLjava/lang/String;)Z") : NULL;
  }
  jstring logs = on_batch ? env->NewStringUTF(logs_json ? logs_json : "{}") : NULL;
  jboolean stop = logs ? env->CallBooleanMethod(cb->fn, on_batch, (jlong)epoch, (jlong)batch, logs)
                       : JNI_TRUE;
  if (logs) env->DeleteLocalRef(logs);
  if (env->ExceptionCheck()) {
    jthrowable t = env->ExceptionOccurred();
    env->ExceptionClear();
    kbj_clear_pending(env);
    kbj_pending = (jthrowable)env->NewGlobalRef(t);
    env->DeleteLocalRef(t);
    return 1;
  }
  return stop ? 1 : 0;
}
%}
%typemap(jni) (kb_model_callback callback, void* user_data) "jobject"
%typemap(jtype) (kb_model_callback callback, void* user_data) "FitCallback"
%typemap(jstype) (kb_model_callback callback, void* user_data) "FitCallback"
%typemap(javain) (kb_model_callback callback, void* user_data) "$javainput"
%typemap(in) (kb_model_callback callback, void* user_data) (kbj_callback cb) {
  kbj_clear_pending(jenv);
  cb.env = jenv;
  cb.fn = $input;
  $1 = $input ? kbj_fit_trampoline : NULL;
  $2 = $input ? &cb : NULL;
}
/* Training stopped (status OK) when the callback threw: its exception comes out of fit. */
%typemap(freearg) (kb_model_callback callback, void* user_data) {
  if (kbj_pending) {
    jthrowable t = (jthrowable)jenv->NewLocalRef(kbj_pending);
    kbj_clear_pending(jenv);
    if (!jenv->ExceptionCheck()) jenv->Throw(t);
  }
}

/* The raw memory and callback entry points are package-private: K's overloads check and adapt. */
%javamethodmodifiers kbx_tensor_from_data "";
%javamethodmodifiers kbx_variable_from_data "";
%javamethodmodifiers kbx_constant_from_data "";
%javamethodmodifiers kbx_set_value_data "";
%javamethodmodifiers kbx_tensor_copy_to "";
%javamethodmodifiers kbx_map_fn_raw "";
%javamethodmodifiers kbx_foldl_raw "";
%javamethodmodifiers kbx_foldr_raw "";
%javamethodmodifiers kbx_rnn_raw "";
%javamethodmodifiers kbx_borrow "";
%javamethodmodifiers kbx_retained "";
%javamethodmodifiers kbx_list_new_raw "";
%javamethodmodifiers kbx_set_callback_error "";

%pragma(java) jniclasscode=%{
  static {
    KBackendLoader.load();
  }
%}
#endif /* SWIGJAVA */

/* ======================================================================================== */
#ifdef SWIGCSHARP
/* Namespace KBackend (swig -namespace KBackend -module K -dllimport kbackend_csharp): the static
 * class K holds every function under its Keras name; Tensor, TensorList and CompiledFunction are
 * IDisposable with a finalizer; errors are KBackend.KBackendException. The C# code of the proxy
 * classes is in csharp_code.i; hand-written classes in bindings/csharp/src. */
/* int64_t is `long` here (-DSWIGWORDSIZE64), which SWIG's C# typemaps take as 32-bit; size_t is
 * 64-bit. */
%apply long long { long };
%apply const long long& { const long& };
%apply unsigned long long { size_t };
%apply const unsigned long long& { const size_t& };
%{
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Set by the C# side at load: raises KBackendException(code, message) (or the exception a
 * delegate kept) as SWIG's pending exception, thrown when the P/Invoke call returns. */
typedef void(SWIGSTDCALL* kbcs_exception_callback)(int code, const char* message);
static kbcs_exception_callback kbcs_raise = NULL;
extern "C" SWIGEXPORT void SWIGSTDCALL KbRegisterExceptionCallback(kbcs_exception_callback cb) {
  kbcs_raise = cb;
}
static void kbcs_raise_last_error(void) {
  if (kbcs_raise) kbcs_raise((int)kb_last_error_code(), kb_last_error_message());
}
static void kbcs_fail(kb_status code, const char* message) {
  kb_set_error(code, message);
  kbcs_raise_last_error();
}

/* C# passes arrays with their length in front ({n, items...}) and raw data as a struct. */
struct kbcs_buffer {
  void* data;
  uint64_t nbytes;
};
static int64_t kbcs_empty[1] = {0};
%}

/* (const int64_t*, size_t) pairs: long[] (null -> NULL); K.Prefixed puts the length first. */
%typemap(ctype) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT), const int64_t* axes,
                const int64_t* start, const int64_t* begin, const int64_t* end "int64_t*"
%typemap(imtype) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT), const int64_t* axes,
                 const int64_t* start, const int64_t* begin, const int64_t* end "long[]"
%typemap(cstype) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT), const int64_t* axes,
                 const int64_t* start, const int64_t* begin, const int64_t* end "long[]"
%typemap(csin) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT), const int64_t* axes,
               const int64_t* start, const int64_t* begin, const int64_t* end
  "KBackend.Native.Prefixed($csinput)"
%typemap(in) (const int64_t* KB_INT64_ARRAY, size_t KB_INT64_COUNT) {
  $1 = $input ? ($input[0] ? $input + 1 : kbcs_empty) : NULL;
  $2 = $input ? (size_t)$input[0] : 0;
}
%typemap(in) const int64_t* start (size_t count), const int64_t* begin (size_t count),
             const int64_t* end (size_t count) {
  if (!$input) {
    kbcs_fail(KB_ERROR_INVALID_ARGUMENT, "$symname: $1_name is null");
    return $null;
  }
  $1 = $input[0] ? $input + 1 : kbcs_empty;
  count = (size_t)$input[0];
}
%typemap(in) const int64_t* axes (int64_t both[2]) {
  $1 = NULL;
  if ($input) {
    if ($input[0] == 1) {
      both[0] = both[1] = $input[1];
      $1 = both;
    } else if ($input[0] == 2) {
      $1 = $input + 1;
    } else {
      kbcs_fail(KB_ERROR_INVALID_ARGUMENT, "$symname: axes must have 1 or 2 entries");
      return $null;
    }
  }
}
%typemap(check) (const int64_t* size, size_t n) {
  if (count2 != $2) {
    kbcs_fail(KB_ERROR_INVALID_ARGUMENT, "$symname: start and size differ in length");
    return $null;
  }
}
%typemap(check) (const int64_t* strides, size_t n) {
  if (count2 != $2 || count3 != $2) {
    kbcs_fail(KB_ERROR_INVALID_ARGUMENT, "$symname: begin, end and strides differ in length");
    return $null;
  }
}
/* Optional scalars (seed, input_length; stop, max_value): long? / double?, null = None. */
%typemap(ctype) const int64_t* "int64_t*"
%typemap(imtype) const int64_t* "long[]"
%typemap(cstype) const int64_t* "long?"
%typemap(csin) const int64_t* "($csinput.HasValue ? new long[] { $csinput.Value } : null)"
%typemap(in) const int64_t* "$1 = $input;"
%typemap(ctype) const double* "double*"
%typemap(imtype) const double* "double[]"
%typemap(cstype) const double* "double?"
%typemap(csin) const double* "($csinput.HasValue ? new double[] { $csinput.Value } : null)"
%typemap(in) const double* "$1 = $input;"

/* (kb_tensor* const*, size_t) pairs: Tensor[] (null -> NULL), passed as {n, pointers...}. */
%typemap(ctype) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT),
                kb_tensor* const* xs "void**"
%typemap(imtype) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT),
                 kb_tensor* const* xs "global::System.IntPtr[]"
%typemap(cstype) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT),
                 kb_tensor* const* xs "Tensor[]"
%typemap(csin, post="      global::System.GC.KeepAlive($csinput);")
    (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT), kb_tensor* const* xs
  "KBackend.Native.Handles($csinput)"
%typemap(in) (kb_tensor* const* KB_TENSOR_ARRAY, size_t KB_TENSOR_COUNT) {
  $2 = $input ? (size_t)(uintptr_t)$input[0] : 0;
  $1 = $2 ? (kb_tensor**)$input + 1 : NULL;
}
%typemap(in) kb_tensor* const* xs (size_t count) {
  if (!$input) {
    kbcs_fail(KB_ERROR_INVALID_ARGUMENT, "$symname: xs is null");
    return $null;
  }
  count = (size_t)(uintptr_t)$input[0];
  $1 = count ? (kb_tensor**)$input + 1 : NULL;
}
%typemap(check) (kb_tensor* const* values, size_t n) {
  if (count1 != $2) {
    kbcs_fail(KB_ERROR_INVALID_ARGUMENT, "$symname: xs and values differ in length");
    return $null;
  }
}

/* (const char* const*, size_t) pairs (a model's losses and metrics): string[] (null -> NULL),
 * passed as {n, UTF-8 strings...} that Native.Utf8Strings allocates and frees after the call. */
%typemap(ctype) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) "void**"
%typemap(imtype) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT)
  "global::System.IntPtr[]"
%typemap(cstype) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) "string[]"
%typemap(csin, pre="    global::System.IntPtr[] utf8$csinput = KBackend.Native.Utf8Strings($csinput);",
         post="      KBackend.Native.FreeUtf8Strings(utf8$csinput);")
    (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) "utf8$csinput"
%typemap(in) (const char* const* KB_STRING_ARRAY, size_t KB_STRING_COUNT) {
  $2 = $input ? (size_t)(uintptr_t)$input[0] : 0;
  $1 = $2 ? ($1_ltype)($input + 1) : NULL;
}

/* Data: a pinned pointer and its size in bytes (K's overloads pin arrays and spans). */
%typemap(ctype) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "kbcs_buffer"
%typemap(imtype) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "KBackend.NativeBuffer"
%typemap(cstype) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "KBackend.NativeBuffer"
%typemap(csin) (const void* data, size_t nbytes), (void* dst, size_t nbytes) "$csinput"
%typemap(in) (const void* data, size_t nbytes), (void* dst, size_t nbytes) {
  $1 = $input.data;
  $2 = (size_t)$input.nbytes;
}

/* Callbacks: the C signature's delegates (K's MapFn / Foldl / Foldr / Rnn adapt lambdas and keep
 * what they throw, which comes back out of the building call). */
%define KB_CSHARP_CALLBACK(FN_TYPE, NAME, DELEGATE)
%typemap(ctype) (FN_TYPE NAME, void* user_data) "FN_TYPE"
%typemap(imtype) (FN_TYPE NAME, void* user_data) "KBackend.Native.DELEGATE"
%typemap(cstype) (FN_TYPE NAME, void* user_data) "KBackend.Native.DELEGATE"
%typemap(csin, post="      global::System.GC.KeepAlive($csinput);") (FN_TYPE NAME, void* user_data)
  "$csinput"
%typemap(in) (FN_TYPE NAME, void* user_data) {
  $1 = $input;
  $2 = NULL;
}
%enddef
KB_CSHARP_CALLBACK(kb_map_function, fn, MapCallback)
KB_CSHARP_CALLBACK(kb_fold_function, fn, FoldCallback)
KB_CSHARP_CALLBACK(kb_step_function, step_function, StepCallback)
KB_CSHARP_CALLBACK(kb_model_callback, callback, FitCallback)
KB_CSHARP_CALLBACK(kb_layer_function, function, LayerCallback)
KB_CSHARP_CALLBACK(kb_print_sink, sink, PrintCallback)
%csmethodmodifiers kbx_set_print_sink "internal";
%csmethodmodifiers kbx_sparse_from_coo "internal";
%csmethodmodifiers kbx_sparse_from_csr "internal";
%csmethodmodifiers kbx_cast_to_floatx "internal";
%csmethodmodifiers kbx_get_variable_shape "internal";
%define KB_CSHARP_BRANCH(FN, DATA)
%typemap(ctype) (kb_branch_function FN, void* DATA) "kb_branch_function"
%typemap(imtype) (kb_branch_function FN, void* DATA) "KBackend.Native.BranchCallback"
%typemap(cstype) (kb_branch_function FN, void* DATA) "KBackend.Native.BranchCallback"
%typemap(csin, post="      global::System.GC.KeepAlive($csinput);") (kb_branch_function FN, void* DATA)
  "$csinput"
%typemap(in) (kb_branch_function FN, void* DATA) {
  $1 = $input;
  $2 = NULL;
}
%enddef
KB_CSHARP_BRANCH(then_fn, then_data)
KB_CSHARP_BRANCH(else_fn, else_data)
KB_CSHARP_BRANCH(x_fn, x_data)
KB_CSHARP_BRANCH(alt_fn, alt_data)
%csmethodmodifiers kbx_switch_fn "internal";
%csmethodmodifiers kbx_in_train_phase_fn "internal";
%csmethodmodifiers kbx_in_test_phase_fn "internal";
%csmethodmodifiers kbx_model_register_layer "internal";
%csmethodmodifiers kbx_model_layer_weight "internal";

/* The raw memory and callback entry points are internal: K's overloads check and adapt. */
%csmethodmodifiers kbx_tensor_from_data "internal";
%csmethodmodifiers kbx_variable_from_data "internal";
%csmethodmodifiers kbx_constant_from_data "internal";
%csmethodmodifiers kbx_set_value_data "internal";
%csmethodmodifiers kbx_tensor_copy_to "internal";
%csmethodmodifiers kbx_dist_all_reduce "internal";
%csmethodmodifiers kbx_map_fn_raw "internal";
%csmethodmodifiers kbx_foldl_raw "internal";
%csmethodmodifiers kbx_foldr_raw "internal";
%csmethodmodifiers kbx_rnn_raw "internal";
%csmethodmodifiers kbx_model_fit "internal";
%csmethodmodifiers kbx_borrow "internal";
%csmethodmodifiers kbx_retained "internal";
%csmethodmodifiers kbx_list_new_raw "internal";
%csmethodmodifiers kbx_set_callback_error "internal";

%pragma(csharp) imclasscode=%{
  internal delegate void KbExceptionDelegate(int code, string message);
  static readonly KbExceptionDelegate kbExceptionDelegate = RaiseKbException;

  [global::System.Runtime.InteropServices.DllImport("$dllimport", EntryPoint="KbRegisterExceptionCallback")]
  static extern void KbRegisterExceptionCallback(KbExceptionDelegate cb);

  static void RaiseKbException(int code, string message) {
    SWIGPendingException.Set(KBackend.Native.TakePending() ?? KBackend.Errors.Of(code, message));
  }

#pragma warning disable 414
  static readonly bool kbRegistered = RegisterKb();
#pragma warning restore 414

  static bool RegisterKb() {
    KbRegisterExceptionCallback(kbExceptionDelegate);
    return true;
  }
%}
#endif /* SWIGCSHARP */
/* ======================================================================================== */

/* Every (pointer, count) pair of the header onto the KB_INT64_ARRAY / KB_TENSOR_ARRAY typemaps
 * above (generated by api/generate.py --swig, in the build folder). */
#ifdef SWIGCSHARP /* its buffers are the caller's memory itself */
%apply (void* dst, size_t nbytes) { (void* inout, size_t nbytes) };
#endif
%include "kbackend_arrays.i"

#if defined(SWIGJAVA) || defined(SWIGCSHARP)
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
#endif

%include "kbackend.h"
