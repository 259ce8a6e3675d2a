/* Python's part of kbackend.i (which %includes it inside #ifdef SWIGPYTHON): NumPy arrays in
 * and out, Python callables as callbacks, the exception of each status. */
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

/* ---- DLPack: capsules of the array API's protocol -------------------------------------------
 * kb_tensor_to_dlpack* return a PyCapsule named "dltensor_versioned" / "dltensor"; a consumer
 * renames it "used_..." when it takes the managed tensor, else the capsule's destructor releases
 * it. kb_tensor_from_dlpack* take such a capsule and rename it once the library owns it. */
%{
static void kb_py_dlpack_capsule_gone(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned"))
    kb_dlpack_release((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  else if (PyCapsule_IsValid(capsule, "dltensor"))
    kb_dlpack_release_unversioned((DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor"));
}

/* The managed tensor a capsule named `name` holds, or NULL with a Python error set. */
static void* kb_py_dlpack_capsule(PyObject* o, const char* name, const char* who) {
  if (!PyCapsule_CheckExact(o)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a DLPack capsule, got %s", who, Py_TYPE(o)->tp_name);
    return NULL;
  }
  if (!PyCapsule_IsValid(o, name)) {
    const char* has = PyCapsule_GetName(o);
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%s: expected a capsule named '%s', got one named '%s' (a "
                 "capsule is taken once)", who, name, has ? has : "");
    return NULL;
  }
  return PyCapsule_GetPointer(o, name);
}
%}
%define KB_PY_DLPACK(TYPE, NAME, USED, RELEASE)
%typemap(in, numinputs=0) TYPE** out (TYPE* temp = NULL) "$1 = &temp;"
%typemap(argout) TYPE** out {
  PyObject* capsule = PyCapsule_New(temp$argnum, NAME, kb_py_dlpack_capsule_gone);
  if (!capsule) {
    RELEASE(temp$argnum);
    SWIG_fail;
  }
  %append_output(capsule);
}
%typemap(in) TYPE* managed {
  $1 = (TYPE*)kb_py_dlpack_capsule($input, NAME, "$symname");
  if (!$1) SWIG_fail;
}
%typemap(argout) TYPE* managed {
  PyCapsule_SetName($input, USED); /* the library owns it now */
}
%enddef
KB_PY_DLPACK(DLManagedTensorVersioned, "dltensor_versioned", "used_dltensor_versioned",
             kb_dlpack_release)
KB_PY_DLPACK(DLManagedTensor, "dltensor", "used_dltensor", kb_dlpack_release_unversioned)
%ignore kb_dlpack_release;
%ignore kb_dlpack_release_unversioned;
