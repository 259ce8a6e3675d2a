/* kbackend: the Keras backend API as a native library. The stable C ABI.
 *
 * Conventions
 * - Every function returns kb_status (KB_OK = 0) unless documented otherwise; on failure
 *   kb_last_error_message() names the function and the problem, and out-parameters are untouched.
 * - A kb_tensor* you receive is a new reference: release it with kb_tensor_release. Handles you
 *   pass are borrowed. Release functions accept NULL and may be called from any thread.
 * - Shapes cross as (const int64_t* dims, size_t ndim); an unknown dimension is -1.
 * - "None" for an axis list is a NULL pointer (with count 0); an optional scalar is a pointer
 *   (NULL = None).
 * - Thread safety: building graphs and calling functions from several threads at once is safe
 *   for distinct functions; a kb_compiled_function serializes its own calls. The learning phase,
 * name scopes and configuration are process-wide.
 */
#ifndef KBACKEND_H
#define KBACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the library's exported functions (default visibility when building it). */
#if defined(KB_BUILDING_LIBRARY)
#define KB_API __attribute__((visibility("default")))
#else
#define KB_API
#endif

/** The ABI this header declares (kb_abi_version() returns the library's). */
#define KB_ABI_VERSION 1

/* Every enum is int32-wide (the FORCE_INT32 members make any int32 value a value of the type):
 * values are only ever appended, and an unknown value is reported as an invalid argument. */

/* ---- types ------------------------------------------------------------------------------- */
/** What every function returns: KB_OK or the kind of failure (kb_last_error_message() says more).
 */
typedef enum kb_status {
  KB_OK = 0,                     /**< success */
  KB_ERROR_INVALID_ARGUMENT = 1, /**< an argument is invalid (NULL, out of range, unknown option) */
  KB_ERROR_SHAPE = 2,            /**< shapes do not fit together */
  KB_ERROR_DTYPE = 3,            /**< a dtype the function does not take */
  KB_ERROR_NOT_IMPLEMENTED = 4,  /**< a case the library does not compute */
  KB_ERROR_OUT_OF_MEMORY = 5,    /**< memory could not be allocated */
  KB_ERROR_DEVICE = 6,           /**< the device failed or is not available */
  KB_ERROR_INTERNAL = 7,         /**< a bug of the library */
  KB_ERROR_UNAVAILABLE = 8,      /**< a part the call needs is missing: the MPI plugin or library */
  KB_ERROR_DISTRIBUTED = 9, /**< a collective did not complete (deadline, ranks differ, failure) */
  KB_ERROR_NOT_FOUND = 10,  /**< a file the call reads does not exist */
  KB_ERROR_IO = 11, /**< a file cannot be read or written (permissions, a full disk, no folder) */
  KB_STATUS_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_STATUS_FORCE_INT32_MAX = 2147483647
} kb_status;

/** Element types of tensors (Keras' dtype strings through kb_parse_dtype). */
typedef enum kb_data_type {
  KB_DTYPE_DEFAULT = -1, /**< floatx where the Keras function says "None means floatx" */
  KB_FLOAT16 = 0,        /**< IEEE half precision (computed in float32) */
  KB_FLOAT32 = 1,        /**< IEEE single precision (Keras' default floatx) */
  KB_FLOAT64 = 2,        /**< IEEE double precision */
  KB_INT8 = 3,           /**< 8-bit signed integer */
  KB_INT16 = 4,          /**< 16-bit signed integer */
  KB_INT32 = 5,          /**< 32-bit signed integer */
  KB_INT64 = 6,          /**< 64-bit signed integer */
  KB_UINT8 = 7,          /**< 8-bit unsigned integer */
  KB_BOOL = 8,           /**< boolean, one byte (0 or 1) */
  KB_BFLOAT16 = 9,       /**< stored in 16 bits, computed in float32 (as float16) */
  KB_DTYPE_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_DTYPE_FORCE_INT32_MAX = 2147483647
} kb_data_type;

/** Keras' data_format: where the channels axis of images and volumes is. */
typedef enum kb_data_format {
  KB_DATA_FORMAT_DEFAULT = -1, /**< the global image_data_format (Keras' data_format=None) */
  KB_CHANNELS_LAST = 0,        /**< (batch, spatial..., channels) */
  KB_CHANNELS_FIRST = 1,       /**< (batch, channels, spatial...) */
  KB_DATA_FORMAT_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_DATA_FORMAT_FORCE_INT32_MAX = 2147483647
} kb_data_format;
/** Keras 1's image_dim_ordering ("tf", "th"). */
typedef enum kb_dim_ordering {
  KB_DIM_ORDERING_TF = 0, /**< channels last */
  KB_DIM_ORDERING_TH = 1, /**< channels first */
  KB_DIM_ORDERING_FORCE_INT32_MIN = -2147483647 - 1,
  KB_DIM_ORDERING_FORCE_INT32_MAX = 2147483647
} kb_dim_ordering;

typedef struct kb_tensor kb_tensor;           /**< a graph value (placeholder, variable, ...) */
typedef struct kb_tensor_list kb_tensor_list; /**< a variable number of results */
typedef struct kb_compiled_function kb_compiled_function; /**< a compiled function */

/* ---- library, errors ------------------------------------------------------------------- */
KB_API const char* kb_version(void);
KB_API int32_t kb_abi_version(void);
KB_API kb_status kb_last_error_code(void);
KB_API const char* kb_last_error_message(void); /* thread-local, valid until the next call */
KB_API void kb_clear_error(void);
KB_API void kb_set_error(kb_status code, const char* message); /* for callbacks */
KB_API const char* kb_dtype_name(kb_data_type dtype);          /* NULL for an invalid dtype */
KB_API kb_status kb_parse_dtype(const char* name, kb_data_type* out);
KB_API kb_status kb_parse_data_format(const char* name, kb_data_format* out);

/* ---- handles, data ------------------------------------------------------------------------ */
KB_API void kb_tensor_retain(kb_tensor* t);
KB_API void kb_tensor_release(kb_tensor* t);
/* A constant holding a copy of data (row-major, dtype, shape). */
KB_API kb_status kb_tensor_from_data(const void* data, kb_data_type dtype, const int64_t* shape,
                                     size_t ndim, kb_tensor** out);
/* Copies the value of a constant or variable (or evaluates t) into dst of nbytes bytes. */
KB_API kb_status kb_tensor_copy_to(kb_tensor* t, void* dst, size_t nbytes);
/* NumPy's .npy files (numpy.save's, format versions 1.0 to 3.0): the array as a constant.
   mapped != 0: the constant lies over the file's pages (copy on write: the file is never
   written), which load as rows are read, so that kb_model_fit, evaluate and predict go over
   arrays larger than memory; it needs little-endian, C-ordered data at a 64-byte aligned offset,
   as NumPy writes. Else the file is read (big-endian bytes swapped, Fortran order transposed).
   A missing file fails with KB_ERROR_NOT_FOUND, an unreadable one with KB_ERROR_IO, one that is
   not a .npy file of a kbackend dtype with KB_ERROR_INVALID_ARGUMENT naming the file. */
KB_API kb_status kb_tensor_from_npy(const char* path, int32_t mapped, kb_tensor** out);
/* Writes t's value (evaluated if need be) as numpy.save does (version 1.0); bfloat16, which
   NumPy has no type for, fails with KB_ERROR_DTYPE. */
KB_API kb_status kb_tensor_save_npy(kb_tensor* t, const char* path);
KB_API kb_status kb_tensor_nbytes(kb_tensor* t, size_t* out);    /* of its static shape */
KB_API kb_status kb_tensor_name(kb_tensor* t, const char** out); /* owned by the tensor */
KB_API kb_status kb_tensor_id(kb_tensor* t, uint64_t* out);      /* equal ids = same graph value */
KB_API kb_status kb_tensor_set_keras_tensor(kb_tensor* t, int32_t flag);
KB_API kb_status kb_tensor_uses_learning_phase(kb_tensor* t, int32_t* out);

KB_API size_t kb_tensor_list_size(const kb_tensor_list* list);
KB_API kb_status kb_tensor_list_get(const kb_tensor_list* list, size_t index, kb_tensor** out);
KB_API void kb_tensor_list_release(kb_tensor_list* list);
/* A new list holding (retained) references to n tensors. */
KB_API kb_status kb_tensor_list_new(kb_tensor* const* items, size_t n, kb_tensor_list** out);

/* ---- DLPack: tensors shared with other libraries, without copying -----------------------
 * DLPack 1.x (github.com/dmlc/dlpack; include its dlpack.h for the structs' fields): the
 * versioned DLManagedTensorVersioned, and the older DLManagedTensor for consumers that need it.
 * Out (kb_tensor_to_dlpack*): the tensor's value (evaluated if it is not a constant or variable)
 * in host memory (kDLCPU), row-major with its strides written, byte_offset 0. The caller owns
 * the managed tensor and calls its deleter once, from any thread; the memory stays valid until
 * then, whatever happens to the tensor, and kbackend never writes it (an update or set_value
 * gives a variable new memory). A constant's value is marked read-only (plans fold constants);
 * writing a variable's lent value changes the variable (a data race while a function reads it).
 * KB_DLPACK_COPY_ALWAYS lends a copy instead (flagged DLPACK_FLAG_BITMASK_IS_COPIED).
 * In (kb_tensor_from_dlpack*): a constant over the producer's memory, which kbackend never
 * writes. It takes float16/32/64, bfloat16, int8/16/32/64, uint8 and bool (one byte, 0 or 1)
 * with one lane, in host memory (kDLCPU, kDLCUDAHost, kDLCUDAManaged), DLPack major version
 * 1, at most 64 dims. Strides other than row-major compact ones, or data not aligned to its
 * element size, are read through a copy where `copy` allows one (else KB_ERROR_INVALID_ARGUMENT).
 * On success the library owns the managed tensor: it calls its deleter when the last reference
 * to the memory goes (the tensor, the functions and values that use it), from whichever thread
 * drops it, or before returning when it copied; the producer keeps the memory alive and
 * unchanged while a function reads it. On failure the managed tensor is left as it was, the
 * caller's. Compiled functions read such a tensor as an input without copying it. */
typedef struct DLManagedTensor DLManagedTensor; /**< DLPack's unversioned struct */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned; /**< DLPack 1.x's struct */
/** Whether a DLPack exchange copies the data. */
typedef enum kb_dlpack_copy {
  KB_DLPACK_COPY_NEVER = 0,     /**< share the memory; refuse what cannot be shared */
  KB_DLPACK_COPY_IF_NEEDED = 1, /**< share the memory where it can be, else copy */
  KB_DLPACK_COPY_ALWAYS = 2,    /**< copy */
  KB_DLPACK_COPY_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_DLPACK_COPY_FORCE_INT32_MAX = 2147483647
} kb_dlpack_copy;
KB_API kb_status kb_tensor_to_dlpack(kb_tensor* t, kb_dlpack_copy copy,
                                     DLManagedTensorVersioned** out);
KB_API kb_status kb_tensor_to_dlpack_unversioned(kb_tensor* t, kb_dlpack_copy copy,
                                                 DLManagedTensor** out);
KB_API kb_status kb_tensor_from_dlpack(DLManagedTensorVersioned* managed, kb_dlpack_copy copy,
                                       kb_tensor** out);
KB_API kb_status kb_tensor_from_dlpack_unversioned(DLManagedTensor* managed, kb_dlpack_copy copy,
                                                   kb_tensor** out);
/* Calls a managed tensor's deleter (NULL-safe): for a program that received one and will not
 * hand it on, in a language that cannot call a C function pointer itself. */
KB_API void kb_dlpack_release(DLManagedTensorVersioned* managed);
KB_API void kb_dlpack_release_unversioned(DLManagedTensor* managed);

/* ---- config ------------------------------------------------------------------------------ */
KB_API const char* kb_backend(void); /* "kbackend" */
KB_API kb_status kb_epsilon(double* out);
KB_API kb_status kb_set_epsilon(double value);
/* Threads of the CPU kernels (one pool for every function and thread of the process): n >= 1,
   or 0 for the default (the environment's KB_NUM_THREADS, else OMP_NUM_THREADS, else the
   cores). Takes effect from the next call into the library. */
KB_API kb_status kb_num_threads(int32_t* out);
KB_API kb_status kb_set_num_threads(int32_t n);
KB_API kb_status kb_floatx(kb_data_type* out);
KB_API kb_status kb_set_floatx(kb_data_type dtype);
/* Converts count values of src_dtype into floatx values at dst. */
KB_API kb_status kb_cast_to_floatx(const void* src, kb_data_type src_dtype, size_t count,
                                   void* dst);
KB_API kb_status kb_image_data_format(kb_data_format* out);
KB_API kb_status kb_set_image_data_format(kb_data_format format);
KB_API kb_status kb_image_dim_ordering(kb_dim_ordering* out);
KB_API kb_status kb_set_image_dim_ordering(kb_dim_ordering ordering);
KB_API kb_status kb_get_uid(const char* prefix, int64_t* out);
KB_API kb_status kb_reset_uids(void);
KB_API kb_status kb_clear_session(void);
KB_API kb_status kb_manual_variable_initialization(int32_t value);
KB_API kb_status kb_learning_phase(kb_tensor** out);
KB_API kb_status kb_set_learning_phase(int32_t value);
KB_API kb_status kb_learning_phase_scope_push(int32_t value);
KB_API kb_status kb_learning_phase_scope_pop(void);
KB_API kb_status kb_name_scope_push(const char* name);
KB_API kb_status kb_name_scope_pop(void);

/* ---- create -------------------------------------------------------------------------------- */
KB_API kb_status kb_variable(const void* data, kb_data_type data_dtype, const int64_t* shape,
                             size_t ndim, kb_data_type dtype, const char* name, kb_tensor** out);
/* A variable initialized with the value of a tensor that needs no placeholder. */
KB_API kb_status kb_variable_from_tensor(kb_tensor* value, kb_data_type dtype, const char* name,
                                         kb_tensor** out);
/* shape NULL: the value's own shape; else a scalar value fills it and a shorter list repeats
 * its last element. */
KB_API kb_status kb_constant(const void* data, kb_data_type data_dtype, const int64_t* value_shape,
                             size_t value_ndim, kb_data_type dtype, const int64_t* shape,
                             size_t ndim, const char* name, kb_tensor** out);
/* shape NULL and ndim < 0: unknown rank; shape NULL (or ndim_of_shape 0) and ndim > 0: ndim
 * unknown dimensions. */
KB_API kb_status kb_placeholder(const int64_t* shape, size_t shape_len, int64_t ndim,
                                kb_data_type dtype, int32_t sparse, const char* name,
                                kb_tensor** out);
KB_API kb_status kb_zeros(const int64_t* shape, size_t ndim, kb_data_type dtype, const char* name,
                          kb_tensor** out);
KB_API kb_status kb_ones(const int64_t* shape, size_t ndim, kb_data_type dtype, const char* name,
                         kb_tensor** out);
KB_API kb_status kb_eye(int64_t size, kb_data_type dtype, const char* name, kb_tensor** out);
/* dtype KB_DTYPE_DEFAULT: x's dtype */
KB_API kb_status kb_zeros_like(kb_tensor* x, kb_data_type dtype, const char* name, kb_tensor** out);
KB_API kb_status kb_ones_like(kb_tensor* x, kb_data_type dtype, const char* name, kb_tensor** out);
KB_API kb_status kb_identity(kb_tensor* x, const char* name, kb_tensor** out);
KB_API kb_status kb_random_uniform_variable(const int64_t* shape, size_t ndim, double low,
                                            double high, kb_data_type dtype, const char* name,
                                            const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_random_normal_variable(const int64_t* shape, size_t ndim, double mean,
                                           double scale, kb_data_type dtype, const char* name,
                                           const int64_t* seed, kb_tensor** out);
/* stop NULL: [0, start). dtype KB_DTYPE_DEFAULT: int32. */
KB_API kb_status kb_arange(double start, const double* stop, double step, kb_data_type dtype,
                           kb_tensor** out);
/* arange of numeric scalar tensors whose values are known when the function runs (Keras'
 * K.arange(K.shape(x)[1])); stop NULL: [0, start). A constant where they are known now. */
KB_API kb_status kb_arange_to(kb_tensor* start, kb_tensor* stop, kb_tensor* step,
                              kb_data_type dtype, kb_tensor** out);

/* ---- inspect ----------------------------------------------------------------------------- */
KB_API kb_status kb_is_sparse(kb_tensor* x, int32_t* out);
KB_API kb_status kb_is_keras_tensor(kb_tensor* x, int32_t* out);
KB_API kb_status kb_is_tensor(kb_tensor* x, int32_t* out);
KB_API kb_status kb_is_placeholder(kb_tensor* x, int32_t* out);
KB_API kb_status kb_shape(kb_tensor* x, kb_tensor** out); /* symbolic int32 vector */
/* Writes min(ndim, capacity) dims; *ndim = rank, or -1 when the rank is unknown. */
KB_API kb_status kb_int_shape(kb_tensor* x, int64_t* dims, size_t capacity, int64_t* ndim);
KB_API kb_status kb_get_variable_shape(kb_tensor* x, int64_t* dims, size_t capacity, int64_t* ndim);
KB_API kb_status kb_ndim(kb_tensor* x, int64_t* out);
KB_API kb_status kb_dtype(kb_tensor* x, kb_data_type* out);
KB_API kb_status kb_count_params(kb_tensor* x, int64_t* out);

/* ---- values ------------------------------------------------------------------------------- */
KB_API kb_status kb_eval(kb_tensor* x, kb_tensor** out); /* a constant with x's value */
KB_API kb_status kb_get_value(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_set_value(kb_tensor* x, kb_tensor* value);
KB_API kb_status kb_set_value_data(kb_tensor* x, const void* data, kb_data_type dtype,
                                   const int64_t* shape, size_t ndim);
KB_API kb_status kb_batch_get_value(kb_tensor* const* xs, size_t n, kb_tensor_list** out);
KB_API kb_status kb_batch_set_value(kb_tensor* const* xs, kb_tensor* const* values, size_t n);
/* The value of x, as a constant, when constants and static shapes alone determine it (shape
 * arithmetic such as K.shape(x)[1] * 2 where that dim is known when the graph is built);
 * KB_ERROR_INVALID_ARGUMENT when x needs a placeholder's value, an unknown dim, a variable or a
 * random draw. */
KB_API kb_status kb_static_value(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_print_tensor(kb_tensor* x, const char* message, kb_tensor** out);
/** Where print_tensor writes (default: stderr). sink NULL restores the default. */
typedef void (*kb_print_sink)(const char* text, void* user_data);
KB_API kb_status kb_set_print_sink(kb_print_sink sink, void* user_data);

/* ---- sparse tensors (COO) ---------------------------------------------------------------
 * A sparse tensor holds (indices (nnz, ndim) int64, values (nnz,), dense_shape (ndim,) int64).
 * kb_dot (sparse matrix x dense matrix) and kb_concatenate (all inputs sparse) keep it sparse;
 * any other function, kb_eval and kb_to_dense see its dense value (duplicate entries add up).
 * kb_placeholder(..., sparse=1, ...) makes a sparse placeholder (its shape or ndim is needed):
 * kb_function_call takes a sparse value (kb_sparse_from_coo) for it. */
/* indices: nnz * ndim int64 coordinates, row-major; values: nnz values of values_dtype,
 * converted to dtype (KB_DTYPE_DEFAULT: floatx). Coordinates outside dense_shape are errors. */
KB_API kb_status kb_sparse_from_coo(const int64_t* indices, const void* values,
                                    kb_data_type values_dtype, size_t nnz,
                                    const int64_t* dense_shape, size_t ndim, kb_data_type dtype,
                                    const char* name, kb_tensor** out);
/* A sparse tensor of dense shape `shape` from tensors: indices (nnz, ndim) int32/int64 and
 * values (nnz,) (constants, or any tensors: then the coordinates are checked when it runs). */
KB_API kb_status kb_sparse_tensor(kb_tensor* indices, kb_tensor* values, const int64_t* shape,
                                  size_t ndim, const char* name, kb_tensor** out);
/* A (rows, cols) matrix in CSR form: indptr has rows + 1 entries (indptr[0] = 0), row r's
 * entries are col_indices / values [indptr[r], indptr[r + 1]) (scipy.sparse.csr_matrix). */
KB_API kb_status kb_sparse_from_csr(const int64_t* indptr, const int64_t* col_indices,
                                    const void* values, kb_data_type values_dtype, int64_t rows,
                                    int64_t cols, kb_data_type dtype, const char* name,
                                    kb_tensor** out);
/* The dense value of a sparse tensor; any other tensor is returned as it is. */
KB_API kb_status kb_to_dense(kb_tensor* x, kb_tensor** out);
/* The parts of a sparse tensor (tensors that can be evaluated or fed to functions). */
KB_API kb_status kb_sparse_parts(kb_tensor* x, kb_tensor** indices, kb_tensor** values,
                                 kb_tensor** dense_shape);
/* labels (batch, max_length), label_lengths (batch,): a sparse tensor holding labels[i, j] for
 * j < label_lengths[i], dense_shape = labels' shape. */
KB_API kb_status kb_ctc_label_dense_to_sparse(kb_tensor* labels, kb_tensor* label_lengths,
                                              kb_tensor** out);

/* ---- function, updates, gradients ----------------------------------------------------- */
KB_API kb_status kb_function(kb_tensor* const* inputs, size_t n_inputs, kb_tensor* const* outputs,
                             size_t n_outputs, kb_tensor* const* updates, size_t n_updates,
                             kb_compiled_function** out);
/* inputs: constants (kb_tensor_from_data) in the order of the function's inputs. */
KB_API kb_status kb_function_call(kb_compiled_function* f, kb_tensor* const* inputs,
                                  size_t n_inputs, kb_tensor_list** outputs);
/* Runs f like kb_function_call but writes output k into outputs[k] (n_outputs: all of them)
 * instead of returning new tensors. Each outputs[k] is a concrete tensor (kb_tensor_from_data,
 * or a result of an earlier call) of output k's dtype and shape; its value is replaced by the
 * result, in its own memory when no other tensor, input or compiled constant shares that memory
 * (else it takes a new value, as a fresh result would). Called with the same tensors each time,
 * a function compiled for the CPU asks the heap for nothing in its steady state (oneDNN's
 * convolution and large-matrix primitives excepted: each run of one allocates its argument
 * table). Nothing runs and no tensor changes when a tensor's dtype or shape differs
 * (KB_ERROR_DTYPE / KB_ERROR_SHAPE), when an output's shape is known only as it runs, or for a
 * variable, a symbolic tensor or a tensor given twice (KB_ERROR_INVALID_ARGUMENT). */
KB_API kb_status kb_function_call_into(kb_compiled_function* f, kb_tensor* const* inputs,
                                       size_t n_inputs, kb_tensor* const* outputs,
                                       size_t n_outputs);
KB_API void kb_function_release(kb_compiled_function* f);
KB_API kb_status kb_update(kb_tensor* x, kb_tensor* new_x, kb_tensor** out);
KB_API kb_status kb_update_add(kb_tensor* x, kb_tensor* increment, kb_tensor** out);
KB_API kb_status kb_update_sub(kb_tensor* x, kb_tensor* decrement, kb_tensor** out);
KB_API kb_status kb_moving_average_update(kb_tensor* x, kb_tensor* value, double momentum,
                                          kb_tensor** out);
KB_API kb_status kb_gradients(kb_tensor* loss, kb_tensor* const* variables, size_t n,
                              kb_tensor_list** out);
KB_API kb_status kb_stop_gradient(kb_tensor* x, kb_tensor** out);

/* ---- devices -------------------------------------------------------------------------------
 * The CPU is always there. An NVIDIA GPU is used when libkbackend_cuda.so (next to
 * libkbackend.so) loads and finds one, unless KB_DISABLE_CUDA=1. New functions run on the GPU
 * when there is one; KB_DEVICE=cpu|cuda[:N] or kb_function_set_device override that. */
/** The kinds of device a function runs on. */
typedef enum kb_device_kind {
  KB_DEVICE_CPU = 0,  /**< the CPU */
  KB_DEVICE_CUDA = 1, /**< the process' NVIDIA GPU */
  KB_DEVICE_FORCE_INT32_MIN = -2147483647 - 1,
  KB_DEVICE_FORCE_INT32_MAX = 2147483647
} kb_device_kind;
KB_API kb_status kb_device_count(kb_device_kind kind, int64_t* out);
/* Why the GPU is not used ("" when it is); the string is owned by the library. */
KB_API const char* kb_cuda_unavailable_reason(void);
KB_API kb_status kb_function_set_device(kb_compiled_function* f, kb_device_kind kind);
KB_API kb_status kb_function_device(kb_compiled_function* f, kb_device_kind* out);
/* The devices of a kind, at positions 0 .. kb_device_count(kind) - 1: the index (the N of
 * cuda:N; 0 for the CPU), the product name (owned by the library, valid until the thread's next
 * kb_device_name) and the memory in bytes (the machine's for the CPU). */
KB_API kb_status kb_device_index(kb_device_kind kind, int64_t position, int64_t* out);
KB_API kb_status kb_device_name(kb_device_kind kind, int64_t position, const char** out);
KB_API kb_status kb_device_memory(kb_device_kind kind, int64_t position, int64_t* out);
/* A function's device by name: "cpu", "cuda" or "cuda:N" (N must be this process' GPU: one GPU
 * per process, chosen by KB_DEVICE or the launcher's local rank); an unusable one fails with
 * the reason. kb_function_device_name gives "cpu" or "cuda:N" (valid until the thread's next
 * call of it). */
KB_API kb_status kb_function_set_device_name(kb_compiled_function* f, const char* device);
KB_API kb_status kb_function_device_name(kb_compiled_function* f, const char** out);

/* ---- loops ----------------------------------------------------------------------------------
 * The user's function is called while the graph is built (on the calling thread), on per-step
 * placeholders, and recorded as the body of a loop; with unroll it is called once per step.
 * Tensors passed to a callback are borrowed; tensors it returns are new references that the
 * library takes over. A callback reports failure by calling kb_set_error and returning its
 * status: the building function then fails with that message and leaks nothing. user_data is
 * only used during the call. */
/** rnn's step: states are the current states followed by the constants (n_states + n_constants
 * entries); new_states: a list of exactly n_states tensors (kb_tensor_list_new). */
typedef kb_status (*kb_step_function)(void* user_data, kb_tensor* input, kb_tensor* const* states,
                                      size_t n_states_and_constants, kb_tensor** output,
                                      kb_tensor_list** new_states);
/** map_fn's function of one element. */
typedef kb_status (*kb_map_function)(void* user_data, kb_tensor* x, kb_tensor** out);
/** foldl's and foldr's function of the accumulator and one element. */
typedef kb_status (*kb_fold_function)(void* user_data, kb_tensor* acc, kb_tensor* x,
                                      kb_tensor** out);
/* inputs (batch, time, ...); mask NULL or (batch, time); input_length is accepted and ignored
 * (as by Keras' TensorFlow backend). Returns (last_output, outputs, new_states). */
KB_API kb_status kb_rnn(kb_step_function step_function, void* user_data, kb_tensor* inputs,
                        kb_tensor* const* initial_states, size_t n_states, int32_t go_backwards,
                        kb_tensor* mask, kb_tensor* const* constants, size_t n_constants,
                        int32_t unroll, const int64_t* input_length, kb_tensor** last_output,
                        kb_tensor** outputs, kb_tensor_list** new_states);
/* dtype KB_DTYPE_DEFAULT: the function's own result dtype. */
KB_API kb_status kb_map_fn(kb_map_function fn, void* user_data, kb_tensor* elems, const char* name,
                           kb_data_type dtype, kb_tensor** out);
/* initializer NULL: the first (foldl) / last (foldr) element starts the accumulation. */
KB_API kb_status kb_foldl(kb_fold_function fn, void* user_data, kb_tensor* elems,
                          kb_tensor* initializer, const char* name, kb_tensor** out);
KB_API kb_status kb_foldr(kb_fold_function fn, void* user_data, kb_tensor* elems,
                          kb_tensor* initializer, const char* name, kb_tensor** out);

/* ---- elementwise --------------------------------------------------------------------------- */
KB_API kb_status kb_square(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_abs(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_sqrt(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_exp(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_log(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_round(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_sign(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_sin(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_cos(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_erf(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_negative(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_pow(kb_tensor* x, double a, kb_tensor** out);
/* max_value may be +INFINITY (Keras None). */
KB_API kb_status kb_clip(kb_tensor* x, double min_value, double max_value, kb_tensor** out);
KB_API kb_status kb_equal(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_not_equal(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_greater(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_greater_equal(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_less(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_less_equal(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_lesser(kb_tensor* x, kb_tensor* y, kb_tensor** out);       /* legacy */
KB_API kb_status kb_lesser_equal(kb_tensor* x, kb_tensor* y, kb_tensor** out); /* legacy */
KB_API kb_status kb_maximum(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_minimum(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_add(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_subtract(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_multiply(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_divide(kb_tensor* x, kb_tensor* y, kb_tensor** out);
KB_API kb_status kb_cast(kb_tensor* x, kb_data_type dtype, kb_tensor** out);

/* ---- reduce: axes NULL = all axes ----------------------------------------------------------- */
KB_API kb_status kb_max(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                        kb_tensor** out);
KB_API kb_status kb_min(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                        kb_tensor** out);
KB_API kb_status kb_sum(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                        kb_tensor** out);
KB_API kb_status kb_prod(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                         kb_tensor** out);
KB_API kb_status kb_mean(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                         kb_tensor** out);
KB_API kb_status kb_var(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                        kb_tensor** out);
KB_API kb_status kb_std(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                        kb_tensor** out);
KB_API kb_status kb_any(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                        kb_tensor** out);
KB_API kb_status kb_all(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                        kb_tensor** out);
KB_API kb_status kb_logsumexp(kb_tensor* x, const int64_t* axes, size_t naxes, int32_t keepdims,
                              kb_tensor** out);
KB_API kb_status kb_cumsum(kb_tensor* x, int64_t axis, kb_tensor** out);
KB_API kb_status kb_cumprod(kb_tensor* x, int64_t axis, kb_tensor** out);
KB_API kb_status kb_argmax(kb_tensor* x, int64_t axis, kb_tensor** out);
KB_API kb_status kb_argmin(kb_tensor* x, int64_t axis, kb_tensor** out);

/* ---- shape ---------------------------------------------------------------------------------- */
KB_API kb_status kb_concatenate(kb_tensor* const* xs, size_t n, int64_t axis, kb_tensor** out);
KB_API kb_status kb_reshape(kb_tensor* x, const int64_t* shape, size_t ndim, kb_tensor** out);
/* reshape to the dims that `shape`, an integer vector of known length, holds when the function
 * runs (one entry may be -1): Keras' K.reshape(x, (K.shape(x)[0], K.shape(x)[1], -1)). Dims
 * known when the graph is built (constants, static dims) give the result's static shape. */
KB_API kb_status kb_reshape_to(kb_tensor* x, kb_tensor* shape, kb_tensor** out);
KB_API kb_status kb_permute_dimensions(kb_tensor* x, const int64_t* pattern, size_t n,
                                       kb_tensor** out);
KB_API kb_status kb_repeat_elements(kb_tensor* x, int64_t rep, int64_t axis, kb_tensor** out);
KB_API kb_status kb_repeat(kb_tensor* x, int64_t n, kb_tensor** out);
KB_API kb_status kb_tile(kb_tensor* x, const int64_t* n, size_t count, kb_tensor** out);
/* tile by an integer vector (one entry per axis of x) known when the function runs. */
KB_API kb_status kb_tile_to(kb_tensor* x, kb_tensor* n, kb_tensor** out);
KB_API kb_status kb_flatten(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_batch_flatten(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_expand_dims(kb_tensor* x, int64_t axis, kb_tensor** out);
KB_API kb_status kb_squeeze(kb_tensor* x, int64_t axis, kb_tensor** out);
KB_API kb_status kb_stack(kb_tensor* const* xs, size_t n, int64_t axis, kb_tensor** out);
KB_API kb_status kb_one_hot(kb_tensor* indices, int64_t num_classes, kb_tensor** out);
/* one_hot with num_classes an integer scalar tensor known when the function runs. */
KB_API kb_status kb_one_hot_to(kb_tensor* indices, kb_tensor* num_classes, kb_tensor** out);
KB_API kb_status kb_reverse(kb_tensor* x, const int64_t* axes, size_t naxes, kb_tensor** out);
KB_API kb_status kb_slice(kb_tensor* x, const int64_t* start, const int64_t* size, size_t n,
                          kb_tensor** out);
/* slice with integer vectors start and size (one entry per axis; size -1: to the end) known
 * when the function runs. */
KB_API kb_status kb_slice_to(kb_tensor* x, kb_tensor* start, kb_tensor* size, kb_tensor** out);
KB_API kb_status kb_gather(kb_tensor* reference, kb_tensor* indices, kb_tensor** out);
/* x[...] as NumPy: one (begin, end, stride) per entry; bit i of a mask applies to entry i. */
KB_API kb_status kb_strided_slice(kb_tensor* x, const int64_t* begin, const int64_t* end,
                                  const int64_t* strides, size_t n, int64_t begin_mask,
                                  int64_t end_mask, int64_t shrink_axis_mask, int64_t new_axis_mask,
                                  kb_tensor** out);

/* ---- linalg ------------------------------------------------------------------------------- */
KB_API kb_status kb_dot(kb_tensor* x, kb_tensor* y, kb_tensor** out);
/* axes NULL: Keras None; else two entries (an int axis a is {a, a}). */
KB_API kb_status kb_batch_dot(kb_tensor* x, kb_tensor* y, const int64_t* axes, kb_tensor** out);
KB_API kb_status kb_transpose(kb_tensor* x, kb_tensor** out);
/* NumPy's subscripts: "abc,cd->abd", letters and one "..." per operand, the output implicit
 * without "->"; one or two operands; a subscript repeated within an operand is refused. */
KB_API kb_status kb_einsum(const char* equation, kb_tensor* const* operands, size_t n,
                           kb_tensor** out);

/* ---- nn ------------------------------------------------------------------------------------ */
KB_API kb_status kb_relu(kb_tensor* x, double alpha, const double* max_value, double threshold,
                         kb_tensor** out);
KB_API kb_status kb_elu(kb_tensor* x, double alpha, kb_tensor** out);
KB_API kb_status kb_sigmoid(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_hard_sigmoid(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_tanh(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_softmax(kb_tensor* x, int64_t axis, kb_tensor** out);
KB_API kb_status kb_softplus(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_softsign(kb_tensor* x, kb_tensor** out);
KB_API kb_status kb_categorical_crossentropy(kb_tensor* target, kb_tensor* output,
                                             int32_t from_logits, int64_t axis, kb_tensor** out);
KB_API kb_status kb_sparse_categorical_crossentropy(kb_tensor* target, kb_tensor* output,
                                                    int32_t from_logits, int64_t axis,
                                                    kb_tensor** out);
KB_API kb_status kb_binary_crossentropy(kb_tensor* target, kb_tensor* output, int32_t from_logits,
                                        kb_tensor** out);
KB_API kb_status kb_l2_normalize(kb_tensor* x, const int64_t* axes, size_t naxes, kb_tensor** out);
KB_API kb_status kb_bias_add(kb_tensor* x, kb_tensor* bias, kb_data_format data_format,
                             kb_tensor** out);
KB_API kb_status kb_in_top_k(kb_tensor* predictions, kb_tensor* targets, int64_t k,
                             kb_tensor** out);

/* ---- CTC (connectionist temporal classification) ------------------------------------------
 * As Keras' TensorFlow backend: y_pred (batch, time, classes) holds softmax probabilities
 * (float32 or float64); the class classes - 1 is the blank; the CTC ops receive
 * log(y_pred + epsilon()) (epsilon added, not clipped).
 * ctc_batch_cost: y_true (batch, max_label_length) labels of any numeric dtype (cast to int32);
 * input_length and label_length (batch, 1), numeric (cast to int32). Returns (batch, 1): the
 * negative log-likelihood of TensorFlow's ctc_loss, which applies a softmax over the classes
 * again (effective probabilities (p + eps) / sum(p + eps)), with repeated labels needing a blank
 * between them. The gradient flows to y_pred (not to the labels or lengths); differentiating it
 * again fails with KB_ERROR_NOT_IMPLEMENTED (as TensorFlow's CTC loss). When the function runs,
 * input_length must lie in [0, time], label_length in [1, max_label_length] and not exceed
 * input_length, and labels must be >= 0, else the call fails with KB_ERROR_INVALID_ARGUMENT. A
 * label >= classes - 1 ends the label sequence (a real label after it is an error). A label
 * that cannot fit its input_length because of repeats (each repeat needs a blank step between)
 * gives +inf, as in TensorFlow.
 * ctc_decode: input_length (batch,), numeric. greedy != 0: best path (each step's most likely
 * class, repeats merged, blanks dropped), one path; beam_width and top_paths are ignored.
 * greedy == 0: TensorFlow's beam search (merge_repeated: "A B B" -> "A B") keeping beam_width
 * prefixes; 1 <= top_paths <= beam_width. *decoded receives a list of top_paths tensors (1 when
 * greedy), int64 (batch, n_i): path i of each batch entry, padded with -1, where n_i (known when
 * the function runs; -1 in int_shape) is the longest sequence of path i. *log_prob receives
 * (batch, top_paths) in y_pred's dtype, best first: greedy -sum_t max_c log(y_pred + eps)
 * (>= 0 up to eps); beam TensorFlow's beam score, the log-probability of the prefix with each
 * step's log-inputs offset by their maximum (usually <= 0, but it can exceed 0). When the
 * function runs, input_length must lie in [0, time], time must be > 0, and each beam must hold
 * at least top_paths prefixes. Equal beam scores may be ordered differently than in TensorFlow.
 */
KB_API kb_status kb_ctc_batch_cost(kb_tensor* y_true, kb_tensor* y_pred, kb_tensor* input_length,
                                   kb_tensor* label_length, kb_tensor** out);
KB_API kb_status kb_ctc_decode(kb_tensor* y_pred, kb_tensor* input_length, int32_t greedy,
                               int64_t beam_width, int64_t top_paths, kb_tensor_list** decoded,
                               kb_tensor** log_prob);

/* ---- convolution, pooling -----------------------------------------------------------------
 * Keras' layouts: x is (batch, spatial..., channels) for KB_CHANNELS_LAST and (batch, channels,
 * spatial...) for KB_CHANNELS_FIRST; kernels do not depend on data_format: conv (spatial..., in,
 * out), transposed conv (spatial..., out, in), depthwise (spatial..., in, multiplier), pointwise
 * (1..., in * multiplier, out). All are cross-correlations. Tuples (strides, dilation_rate) are
 * (pointer, count) with one entry per spatial dimension; NULL with count 0 means Keras' default
 * (all ones). data_format KB_DATA_FORMAT_DEFAULT means image_data_format(). dilation_rate > 1
 * needs strides of 1. */
/** Keras' padding of convolutions and pooling. */
typedef enum kb_padding {
  KB_PADDING_VALID = 0,  /**< no padding: outputs only where the window fits */
  KB_PADDING_SAME = 1,   /**< zero padding keeping ceil(size / stride) outputs */
  KB_PADDING_CAUSAL = 2, /**< conv1d only, channels_last only */
  KB_PADDING_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_PADDING_FORCE_INT32_MAX = 2147483647
} kb_padding;
/** Keras' pool_mode of pool2d and pool3d. */
typedef enum kb_pool_mode {
  KB_POOL_MAX = 0, /**< the maximum of each window */
  KB_POOL_AVG = 1, /**< the mean of each window (padding not counted) */
  KB_POOL_FORCE_INT32_MIN = -2147483647 - 1,
  KB_POOL_FORCE_INT32_MAX = 2147483647
} kb_pool_mode;
KB_API kb_status kb_parse_padding(const char* name, kb_padding* out);
KB_API kb_status kb_parse_pool_mode(const char* name, kb_pool_mode* out);

KB_API kb_status kb_conv1d(kb_tensor* x, kb_tensor* kernel, int64_t strides, kb_padding padding,
                           kb_data_format data_format, int64_t dilation_rate, kb_tensor** out);
KB_API kb_status kb_conv2d(kb_tensor* x, kb_tensor* kernel, const int64_t* strides,
                           size_t n_strides, kb_padding padding, kb_data_format data_format,
                           const int64_t* dilation_rate, size_t n_dilation, kb_tensor** out);
KB_API kb_status kb_conv3d(kb_tensor* x, kb_tensor* kernel, const int64_t* strides,
                           size_t n_strides, kb_padding padding, kb_data_format data_format,
                           const int64_t* dilation_rate, size_t n_dilation, kb_tensor** out);
/* output_shape: the full output shape (batch, ...) in data_format's order; its batch entry may
 * be -1 (x's batch). As in Keras' TF backend, a dilation_rate other than 1 (both entries equal)
 * makes strides ignored. */
KB_API kb_status kb_conv2d_transpose(kb_tensor* x, kb_tensor* kernel, const int64_t* output_shape,
                                     size_t output_ndim, const int64_t* strides, size_t n_strides,
                                     kb_padding padding, kb_data_format data_format,
                                     const int64_t* dilation_rate, size_t n_dilation,
                                     kb_tensor** out);
KB_API kb_status kb_deconv2d(kb_tensor* x, kb_tensor* kernel, const int64_t* output_shape,
                             size_t output_ndim, const int64_t* strides, size_t n_strides,
                             kb_padding padding, kb_data_format data_format,
                             const int64_t* dilation_rate, size_t n_dilation,
                             kb_tensor** out); /* legacy alias of kb_conv2d_transpose */
KB_API kb_status kb_conv3d_transpose(kb_tensor* x, kb_tensor* kernel, const int64_t* output_shape,
                                     size_t output_ndim, const int64_t* strides, size_t n_strides,
                                     kb_padding padding, kb_data_format data_format,
                                     kb_tensor** out);
KB_API kb_status kb_depthwise_conv2d(kb_tensor* x, kb_tensor* depthwise_kernel,
                                     const int64_t* strides, size_t n_strides, kb_padding padding,
                                     kb_data_format data_format, const int64_t* dilation_rate,
                                     size_t n_dilation, kb_tensor** out);
KB_API kb_status kb_separable_conv1d(kb_tensor* x, kb_tensor* depthwise_kernel,
                                     kb_tensor* pointwise_kernel, int64_t strides,
                                     kb_padding padding, kb_data_format data_format,
                                     int64_t dilation_rate, kb_tensor** out);
KB_API kb_status kb_separable_conv2d(kb_tensor* x, kb_tensor* depthwise_kernel,
                                     kb_tensor* pointwise_kernel, const int64_t* strides,
                                     size_t n_strides, kb_padding padding,
                                     kb_data_format data_format, const int64_t* dilation_rate,
                                     size_t n_dilation, kb_tensor** out);
/* pool_size is required; avg pooling divides by the number of real (unpadded) cells. */
KB_API kb_status kb_pool2d(kb_tensor* x, const int64_t* pool_size, size_t n_pool,
                           const int64_t* strides, size_t n_strides, kb_padding padding,
                           kb_data_format data_format, kb_pool_mode pool_mode, kb_tensor** out);
KB_API kb_status kb_pool3d(kb_tensor* x, const int64_t* pool_size, size_t n_pool,
                           const int64_t* strides, size_t n_strides, kb_padding padding,
                           kb_data_format data_format, kb_pool_mode pool_mode, kb_tensor** out);

/* ---- paddings, resizing ------------------------------------------------------------------
 * Zero paddings. padding is a flat list of (before, after) pairs, one pair per spatial axis:
 * temporal_padding (left, right) of the steps axis of (batch, steps, features); spatial_2d_padding
 * ((top, bottom), (left, right)) as 4 values; spatial_3d_padding 6 values. NULL with count 0
 * means Keras' default (1 everywhere); another count is an error (Keras' nesting asserts).
 * resize_images: integer factors; nearest repeats each pixel (repeat_elements), bilinear is
 * TensorFlow's legacy resize_bilinear (align_corners=False, no half-pixel centres) and returns
 * float32 for any input dtype. data_format is required (KB_DATA_FORMAT_DEFAULT is an error, as
 * Keras has no default here). resize_volumes repeats voxels (nearest). */
/** Keras' interpolation of resize_images. */
typedef enum kb_interpolation {
  KB_INTERPOLATION_NEAREST = 0,  /**< repeats each pixel */
  KB_INTERPOLATION_BILINEAR = 1, /**< bilinear (TensorFlow's legacy resize_bilinear) */
  KB_INTERPOLATION_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_INTERPOLATION_FORCE_INT32_MAX = 2147483647
} kb_interpolation;
KB_API kb_status kb_parse_interpolation(const char* name, kb_interpolation* out);

KB_API kb_status kb_temporal_padding(kb_tensor* x, const int64_t* padding, size_t n_padding,
                                     kb_tensor** out);
KB_API kb_status kb_spatial_2d_padding(kb_tensor* x, const int64_t* padding, size_t n_padding,
                                       kb_data_format data_format, kb_tensor** out);
KB_API kb_status kb_spatial_3d_padding(kb_tensor* x, const int64_t* padding, size_t n_padding,
                                       kb_data_format data_format, kb_tensor** out);
KB_API kb_status kb_resize_images(kb_tensor* x, int64_t height_factor, int64_t width_factor,
                                  kb_data_format data_format, kb_interpolation interpolation,
                                  kb_tensor** out);
KB_API kb_status kb_resize_volumes(kb_tensor* x, int64_t depth_factor, int64_t height_factor,
                                   int64_t width_factor, kb_data_format data_format,
                                   kb_tensor** out);

/* ---- normalization ----------------------------------------------------------------------
 * batch_normalization: (x - mean) / sqrt(var + epsilon) * gamma + beta (note: beta before gamma;
 * either may be NULL = None). As on Keras' TensorFlow CPU path, 4-D x with axis -1 or 3 uses the
 * fused form (parameters flattened to (C,), epsilon raised to at least 1.001e-5); otherwise the
 * parameters broadcast against x and axis is ignored.
 * normalize_batch_in_training writes (normed, mean, var): 4-D x with reduction_axes exactly
 * {0, 1, 2} takes the fused path (mean and var of shape (C,), epsilon floored, and the RETURNED
 * variance Bessel-corrected, var * N / (N - 1)); reduction_axes = all axes but the last takes the
 * regular path; anything else (including 4-D {0, 2, 3}) the broadcast path, whose mean and var
 * have x's shape without the reduced axes. Population statistics normalize on every path. */
KB_API kb_status kb_batch_normalization(kb_tensor* x, kb_tensor* mean, kb_tensor* var,
                                        kb_tensor* beta, kb_tensor* gamma, int64_t axis,
                                        double epsilon, kb_tensor** out);
KB_API kb_status kb_normalize_batch_in_training(kb_tensor* x, kb_tensor* gamma, kb_tensor* beta,
                                                const int64_t* reduction_axes, size_t n_axes,
                                                double epsilon, kb_tensor** normed,
                                                kb_tensor** mean, kb_tensor** var);

/* ---- random tensors, dropout ------------------------------------------------------------
 * Graph operations (not variables): each call of a compiled function draws new numbers, and the
 * same seed gives the same sequence of numbers (counter-based Philox 4x32-10). seed NULL (None)
 * picks a random seed now, when the graph is built. dtype KB_DTYPE_DEFAULT: floatx; floating
 * dtypes only. shape: fully known dims.
 * random_uniform draws in [minval, maxval); truncated_normal re-draws values more than 2 stddev
 * from the mean; random_binomial is 1 where U[0, 1) <= p, else 0 (in dtype).
 * dropout: x / (1 - level) * floor(1 - level + U[0, 1)); level outside [0, 1) is an error and
 * level 0 returns x. noise_shape NULL (None): x's shape; otherwise the shape of the keep mask,
 * broadcast against x (right-aligned; each entry 1, x's dimension, or -1 for x's dimension). */
/* Keras' keras.utils.set_random_seed: from now on each seed not given (NULL here, the
 * initializers' and random layers' of models built later, Dropout's) is the next of seed's
 * sequence, so that a program that calls it first builds the same weights and draws the same
 * numbers each run (on one thread; fit's shuffle has its own "seed", 0 by default). Until it
 * is called, seeds not given come from the system's entropy. */
KB_API kb_status kb_set_random_seed(int64_t seed);
KB_API kb_status kb_random_uniform(const int64_t* shape, size_t ndim, double minval, double maxval,
                                   kb_data_type dtype, const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_random_normal(const int64_t* shape, size_t ndim, double mean, double stddev,
                                  kb_data_type dtype, const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_truncated_normal(const int64_t* shape, size_t ndim, double mean, double stddev,
                                     kb_data_type dtype, const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_random_binomial(const int64_t* shape, size_t ndim, double p, kb_data_type dtype,
                                    const int64_t* seed, kb_tensor** out);
/* The same draws in the shape of `like` (rank known; a dimension unknown now is the one `like` has
 * when a compiled function runs): Keras' random_normal(shape=K.shape(x)), as GaussianNoise,
 * GaussianDropout and AlphaDropout write it. */
KB_API kb_status kb_random_uniform_like(kb_tensor* like, double minval, double maxval,
                                        kb_data_type dtype, const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_random_normal_like(kb_tensor* like, double mean, double stddev,
                                       kb_data_type dtype, const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_truncated_normal_like(kb_tensor* like, double mean, double stddev,
                                          kb_data_type dtype, const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_random_binomial_like(kb_tensor* like, double p, kb_data_type dtype,
                                         const int64_t* seed, kb_tensor** out);
KB_API kb_status kb_dropout(kb_tensor* x, double level, const int64_t* noise_shape,
                            size_t n_noise_shape, const int64_t* seed, kb_tensor** out);

/* ---- locally connected (unshared weights) -------------------------------------------------
 * local_conv1d: inputs (batch, steps, channels) whatever data_format says (it is only checked);
 * kernel (output_length, kernel_size * channels, filters) with patch feature t * channels + c;
 * result (batch, output_length, filters). kernel_size and strides have 1 entry.
 * local_conv2d: kernel (rows * cols, kh * kw * channels, filters), output position i * cols + j
 * for output_shape (rows, cols); patch feature (p * kw + q) * channels + c for channels_last and
 * c * kh * kw + p * kw + q for channels_first; result (batch, rows, cols, filters) or (batch,
 * filters, rows, cols). kernel_size, strides and output_shape have 2 entries. Valid windows only.
 */
KB_API kb_status kb_local_conv1d(kb_tensor* inputs, kb_tensor* kernel, const int64_t* kernel_size,
                                 size_t n_kernel_size, const int64_t* strides, size_t n_strides,
                                 kb_data_format data_format, kb_tensor** out);
KB_API kb_status kb_local_conv2d(kb_tensor* inputs, kb_tensor* kernel, const int64_t* kernel_size,
                                 size_t n_kernel_size, const int64_t* strides, size_t n_strides,
                                 const int64_t* output_shape, size_t n_output_shape,
                                 kb_data_format data_format, kb_tensor** out);

/* ---- control flow: switch, in_train_phase, in_test_phase --------------------------------
 * switch: a scalar condition (rank 0 or unknown; cast to bool) is a lazy choice: the branches
 * may differ in shape (then a compiled function needs the condition known when it is built, as
 * the learning phase is), and a compiled function whose condition is known then (the learning
 * phase, a constant) never computes the other branch. A condition of rank >= 1 lines up with the
 * LEADING axes of the expressions (trailing 1s appended, size-1 dims tiled); then_expression and
 * else_expression must have the same shape and dtype; ndim(condition) > ndim(then_expression) is
 * an error.
 * in_train_phase(x, alt, training): training is given by `mode`: KB_TRAINING_TENSOR uses the
 * tensor `training`, or the learning phase when it is NULL (the result then reports
 * kb_tensor_uses_learning_phase = 1; a learning phase fixed by kb_set_learning_phase or a scope
 * picks x / alt at once); KB_TRAINING_FALSE / KB_TRAINING_TRUE pick alt / x at once (training
 * must be NULL). in_test_phase(x, alt, training) is in_train_phase(alt, x, training).
 * The _fn variants take branch callbacks instead of tensors (the callables of Keras): each is
 * called at most once, while the graph is built, and returns a new reference in *out that the
 * library takes over (failure: kb_set_error and a non-OK status, as for kb_map_function). With a
 * fixed choice only the chosen callback is called. */
/** How in_train_phase and in_test_phase choose: by a tensor or fixed. */
typedef enum kb_training {
  KB_TRAINING_TENSOR =
      -1, /**< the training tensor (or the learning phase) chooses when the function runs */
  KB_TRAINING_FALSE = 0,                         /**< test phase: the alternative at once */
  KB_TRAINING_TRUE = 1,                          /**< training phase: x at once */
  KB_TRAINING_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_TRAINING_FORCE_INT32_MAX = 2147483647
} kb_training;
/** A branch of switch_fn / in_train_phase_fn: writes its tensor in *out. */
typedef kb_status (*kb_branch_function)(void* user_data, kb_tensor** out);
KB_API kb_status kb_switch(kb_tensor* condition, kb_tensor* then_expression,
                           kb_tensor* else_expression, kb_tensor** out);
KB_API kb_status kb_switch_fn(kb_tensor* condition, kb_branch_function then_fn, void* then_data,
                              kb_branch_function else_fn, void* else_data, kb_tensor** out);
KB_API kb_status kb_in_train_phase(kb_tensor* x, kb_tensor* alt, kb_tensor* training,
                                   kb_training mode, kb_tensor** out);
KB_API kb_status kb_in_train_phase_fn(kb_branch_function x_fn, void* x_data,
                                      kb_branch_function alt_fn, void* alt_data,
                                      kb_tensor* training, kb_training mode, kb_tensor** out);
KB_API kb_status kb_in_test_phase(kb_tensor* x, kb_tensor* alt, kb_tensor* training,
                                  kb_training mode, kb_tensor** out);
KB_API kb_status kb_in_test_phase_fn(kb_branch_function x_fn, void* x_data,
                                     kb_branch_function alt_fn, void* alt_data, kb_tensor* training,
                                     kb_training mode, kb_tensor** out);

/* ---- data-parallel training ----------------------------------------------------------------
 * One process per device, started by an MPI launcher (mpirun, srun), each running the same
 * program on its share of the data. kb_dist_init joins the job (Open MPI through
 * libkbackend_mpi.so beside libkbackend.so, or the file KB_MPI_PLUGIN names); it fails with
 * KB_ERROR_UNAVAILABLE, the message saying what is missing, where the library was built without
 * MPI or the MPI library cannot load. Until it succeeds the process is rank 0 of 1 and every
 * collective is the identity, so the same program runs without a launcher.
 * Every process must issue the same collectives in the same order (build the same graphs, call
 * the same functions). Each waits at most the timeout (kb_dist_set_timeout, KB_DIST_TIMEOUT;
 * 300 s by default); a collective that fails or passes it fails with KB_ERROR_DISTRIBUTED, and
 * so does every later one. The library never ends the process itself. */
/** How all-reduce combines the processes' values. */
typedef enum kb_reduce_op {
  KB_REDUCE_SUM = 0,     /**< the sum over the processes */
  KB_REDUCE_AVERAGE = 1, /**< the sum divided by the number of processes (integers truncate) */
  KB_REDUCE_OP_FORCE_INT32_MIN = -2147483647 - 1, /**< keeps the type int32-wide */
  KB_REDUCE_OP_FORCE_INT32_MAX = 2147483647
} kb_reduce_op;
KB_API kb_status kb_parse_reduce_op(const char* name, kb_reduce_op* out); /* "sum", "average" */
KB_API kb_status kb_dist_init(void); /* a second call does nothing */
KB_API kb_status kb_dist_initialized(int32_t* out);
KB_API kb_status kb_dist_rank(int32_t* out);
KB_API kb_status kb_dist_size(int32_t* out);
KB_API kb_status kb_dist_local_rank(int32_t* out); /* the rank among the processes of its host */
KB_API kb_status kb_dist_barrier(void);
/* Waits for every process, then leaves the job: the process is rank 0 of 1 again, and
   kb_dist_init cannot join again (MPI does not restart). Call it from the thread that called
   kb_dist_init (MPI's rule). After a failed collective it fails too and leaves MPI as it is. */
KB_API kb_status kb_dist_finalize(void);
/* Ends every process of the job at once, the launcher reporting exit_code as the job's exit
   status (MPI_Abort): the way out of a job whose collective failed, which kb_dist_finalize cannot
   leave (it would wait for the others). Outside a job it ends this process with exit_code. C's
   buffered output is flushed first; nothing else runs (no atexit handlers). Does not return. */
KB_API kb_status kb_dist_abort(int32_t exit_code);
KB_API kb_status kb_dist_set_timeout(double seconds);
KB_API kb_status kb_dist_timeout(double* out);
/* How many collectives this process has run through the engine: a bucket of all-reduces counts
   once (KB_BUCKET_BYTES), a single process none. */
KB_API kb_status kb_dist_collectives(int64_t* out);
/* The engine's version ("Open MPI v4.1.4, ..."); "" before kb_dist_init. Owned by the library. */
KB_API const char* kb_dist_engine(void);
/* Collectives in a graph, run each time a function computes them (their gradients are
   collectives too). all_reduce: the sum or average of x over the processes (float32, float64 or
   an integer dtype); broadcast: rank root's x; all_gather: the processes' x (of one shape)
   concatenated along axis 0 in rank order, for the job kb_dist_init joined. */
KB_API kb_status kb_all_reduce(kb_tensor* x, kb_reduce_op op, kb_tensor** out);
KB_API kb_status kb_broadcast(kb_tensor* x, int32_t root, kb_tensor** out);
KB_API kb_status kb_all_gather(kb_tensor* x, kb_tensor** out);
/* Eager: sets n variables to rank root's values (before training: the same initial weights);
   reduces count values of dtype into result (metrics; result may be values). */
KB_API kb_status kb_dist_broadcast_variables(kb_tensor* const* variables, size_t n, int32_t root);
KB_API kb_status kb_dist_all_reduce(const void* values, void* result, size_t count,
                                    kb_data_type dtype, kb_reduce_op op);

/* ---- Keras models ----------------------------------------------------------------------------
   A Keras model (Sequential or functional) as Keras 2.2.4 builds, trains and saves it: layers
   with Keras' weights and names, Keras' optimizers, losses and metrics, its HDF5 files (as
   Keras 2.0-2.2 and tf.keras 2.x write them; files saved here load in Keras). A model is used
   from one thread at a time. Strings a model returns are owned by it and valid until the same
   function is called again on it or the model is released. Arrays cross as tensors of values
   (kb_tensor_from_data), one row per sample. */
typedef struct kb_model kb_model; /**< a Keras model */
/* A model from a Keras HDF5 file; compile != 0 also compiles it from the file's
   training_config (when it has one) and restores the optimizer's state. A file that does not
   exist fails with KB_ERROR_NOT_FOUND, one that cannot be read with KB_ERROR_IO; one that is
   not a Keras model, damaged or with weights that do not fit, with a message naming the file,
   the layer and the problem. */
KB_API kb_status kb_model_load(const char* path, int32_t compile, kb_model** out);
/* A model from Keras' JSON (model.to_json()); its weights are initialized as Keras does. */
KB_API kb_status kb_model_from_json(const char* json, kb_model** out);
KB_API kb_status kb_model_to_json(kb_model* model, const char** out);
/* A copy of the model (uncompiled, its weights' values) whose layers with float32 variables take
   the dtype policy named `policy`, as Keras' clone_model with each layer's dtype set:
   "mixed_bfloat16" computes in bfloat16 over float32 variables (on the CPU's bf16 kernels where
   it has them), "float32" in float32. Its inputs keep their dtypes; a policy that does not keep
   float32 variables fails with KB_ERROR_INVALID_ARGUMENT. */
KB_API kb_status kb_model_with_dtype_policy(kb_model* model, const char* policy, kb_model** out);
/* Keras' model.save (include_optimizer != 0: training_config and the optimizer's state); a file
   that cannot be created fails with KB_ERROR_IO. */
KB_API kb_status kb_model_save(kb_model* model, const char* path, int32_t include_optimizer);
KB_API kb_status kb_model_save_weights(kb_model* model, const char* path);
/* The model's inference graph (what predict runs) as an ONNX file: opset 17, the weights as
 * initializers, the inputs' and outputs' unknown dims named ("batch" first) unless options_json
 * fixes the batch ({"batch_size": n}, 0: not fixed); checked by ONNX's checker before it is written
 * (the ONNX plugin, libkbackend_onnx.so, next to the library: KB_ERROR_UNAVAILABLE without it). An
 * operation with no ONNX form fails with KB_ERROR_NOT_IMPLEMENTED naming it. */
KB_API kb_status kb_model_export_onnx(kb_model* model, const char* path, const char* options_json);
/* by_name == 0: by topology (the layers with weights, in order), else by layer name. */
KB_API kb_status kb_model_load_weights(kb_model* model, const char* path, int32_t by_name);
/* Keras' compile: optimizer by name ("sgd", "adam") or a JSON {"class_name", "config"};
   losses by name, one per output or one for all; metrics by name ("accuracy", a loss);
   options_json (NULL or JSON): {"optimizer": {its config: "lr", "momentum"...},
   "loss_weights": [one per output]}; any other key, or a value of another type, fails with
   KB_ERROR_INVALID_ARGUMENT naming it (api/kbackend.toml's [options.compile] lists the keys). */
KB_API kb_status kb_model_compile(kb_model* model, const char* optimizer, const char* const* losses,
                                  size_t num_losses, const char* const* metrics, size_t num_metrics,
                                  const char* options_json);
/* Keras' model.optimizer.learning_rate of a compiled model: the rate the next training step
   takes (a schedule's at the iterations done), and setting it (in floatx), which fails with
   KB_ERROR_INVALID_ARGUMENT for a rate from a schedule, as Keras refuses. Callbacks call them
   between batches (a program's LearningRateScheduler). */
KB_API kb_status kb_model_learning_rate(kb_model* model, double* out);
KB_API kb_status kb_model_set_learning_rate(kb_model* model, double learning_rate);
/** After each batch (batch >= 0) and each epoch (batch == -1) of kb_model_fit: logs_json holds
   the values so far ({"loss": ..., "acc": ...}); a non-zero return stops training, and one after
   kb_set_error fails fit with that status and message (as an exception ends Keras' fit: the
   callbacks of options_json get no on_train_end). */
typedef int32_t (*kb_model_callback)(void* user_data, int64_t epoch, int64_t batch,
                                     const char* logs_json);
/* Keras' fit over x (one tensor per input) and y (one per output). options_json (NULL or
   JSON): {"shuffle": true, "seed": 0, "validation_split": 0.0, "initial_epoch": 0,
   "class_weight": {"0": 1.0, ...}, "callbacks": [{"class_name": "EarlyStopping", "config":
   {"patience": 2}}, ...], "distributed": false} (api/kbackend.toml's [options.fit];
   distributed: one model trained across the processes of the job kb_dist_init joined, each
   given every sample and taking batch_size rows of each step, as one process would train with
   batch_size x processes; rank 0 alone writes files and the progress bar. The callbacks are
   Keras 3's EarlyStopping, ModelCheckpoint, ReduceLROnPlateau, CSVLogger, BackupAndRestore,
   TerminateOnNaN and TensorBoard (its writer a plugin, libkbackend_tensorboard.so, as ONNX's)
   with the arguments of its [callbacks], run before `callback`; any other key,
   class or argument, or a value of another type, fails with KB_ERROR_INVALID_ARGUMENT naming
   it). verbose 1: Keras' progress bar on stderr, 2: a line per epoch. history_json: the
   per-epoch values ({"loss": [...], "acc": [...], "val_loss": ..., and what callbacks log:
   "learning_rate"}). */
KB_API kb_status kb_model_fit(kb_model* model, kb_tensor* const* x, size_t num_x,
                              kb_tensor* const* y, size_t num_y, int64_t batch_size, int64_t epochs,
                              int32_t verbose, const char* options_json, kb_model_callback callback,
                              void* user_data, const char** history_json);
/* kb_model_fit with Keras' sample_weight (NULL, or one float vector of a weight per sample per
   output; class_weight is then not used) and validation_data (NULL, or x and y as for fit, with
   validation_sample_weights as sample_weights; validation_split is then not used). */
KB_API kb_status kb_model_fit_weighted(
    kb_model* model, kb_tensor* const* x, size_t num_x, kb_tensor* const* y, size_t num_y,
    kb_tensor* const* sample_weights, size_t num_sample_weights, kb_tensor* const* validation_x,
    size_t num_validation_x, kb_tensor* const* validation_y, size_t num_validation_y,
    kb_tensor* const* validation_sample_weights, size_t num_validation_sample_weights,
    int64_t batch_size, int64_t epochs, int32_t verbose, const char* options_json,
    kb_model_callback callback, void* user_data, const char** history_json);
/* evaluate, train_on_batch, test_on_batch: a float64 vector of the values named by
   kb_model_metrics_names (the loss first). */
KB_API kb_status kb_model_evaluate(kb_model* model, kb_tensor* const* x, size_t num_x,
                                   kb_tensor* const* y, size_t num_y, int64_t batch_size,
                                   int32_t verbose, kb_tensor** out);
KB_API kb_status kb_model_train_on_batch(kb_model* model, kb_tensor* const* x, size_t num_x,
                                         kb_tensor* const* y, size_t num_y, kb_tensor** out);
KB_API kb_status kb_model_test_on_batch(kb_model* model, kb_tensor* const* x, size_t num_x,
                                        kb_tensor* const* y, size_t num_y, kb_tensor** out);
/* A JSON list of the names ("loss", "acc"); the model must be compiled. */
KB_API kb_status kb_model_metrics_names(kb_model* model, const char** out);
/* The outputs for x, batch_size rows at a time (learning phase 0). */
KB_API kb_status kb_model_predict(kb_model* model, kb_tensor* const* x, size_t num_x,
                                  int64_t batch_size, int32_t verbose, kb_tensor_list** out);
KB_API kb_status kb_model_predict_on_batch(kb_model* model, kb_tensor* const* x, size_t num_x,
                                           kb_tensor_list** out);
/* Keras' model.reset_states(): the states of its stateful recurrent layers back to zeros. */
KB_API kb_status kb_model_reset_states(kb_model* model);
/* Keras' model.summary() text. */
KB_API kb_status kb_model_summary(kb_model* model, const char** out);
/* The layers (Keras' model.layers): count, name, class name, config (JSON), weights' values
   (constants, Keras' order) and setting them (a list of the same shapes). */
KB_API kb_status kb_model_layer_count(kb_model* model, size_t* out);
/* Keras' model.count_params(): how many values the weights hold, trainable or not. */
KB_API kb_status kb_model_count_params(kb_model* model, int64_t* out);
KB_API kb_status kb_model_layer_name(kb_model* model, size_t index, const char** out);
KB_API kb_status kb_model_layer_class(kb_model* model, size_t index, const char** out);
KB_API kb_status kb_model_layer_config(kb_model* model, size_t index, const char** out);
KB_API kb_status kb_model_layer_get_weights(kb_model* model, size_t index, kb_tensor_list** out);
KB_API kb_status kb_model_layer_set_weights(kb_model* model, size_t index,
                                            kb_tensor* const* weights, size_t num_weights);
/* The model as backend tensors: its input placeholders, outputs and weight variables, to build
   on (extra loss terms, kb_gradients, a kb_function of one's own). */
KB_API kb_status kb_model_inputs(kb_model* model, kb_tensor_list** out);
KB_API kb_status kb_model_outputs(kb_model* model, kb_tensor_list** out);
KB_API kb_status kb_model_weights(kb_model* model, kb_tensor_list** out);
/* Keras' model.add_loss: a floating-point scalar built on the model's tensors that the total
   loss includes from the next kb_model_compile on. */
KB_API kb_status kb_model_add_loss(kb_model* model, kb_tensor* term);
/* A compiled model's training graph: the total loss; the placeholders its functions take after
   the inputs (the targets, one per output, then the per-sample weights, one vector per output,
   then kb_learning_phase); the updates one training step applies (the optimizer's and the
   layers'). With them a program compiles its own kb_function or takes kb_gradients. */
KB_API kb_status kb_model_total_loss(kb_model* model, kb_tensor** out);
KB_API kb_status kb_model_targets(kb_model* model, kb_tensor_list** out);
KB_API kb_status kb_model_sample_weights(kb_model* model, kb_tensor_list** out);
KB_API kb_status kb_model_updates(kb_model* model, kb_tensor_list** out);
KB_API void kb_model_release(kb_model* model); /* NULL-safe */
/* Custom layers: a program registers a Keras class name (not a built-in one: a Lambda, its own
   layer) with a function that builds the layer's outputs from its inputs with the backend
   functions, as a Keras layer's call does; models that name the class are then loaded, trained
   and saved like any other. The function gets the layer's config (JSON), writes up to capacity
   outputs (new references) and their count, and returns KB_OK, or a failure status with
   kb_set_error's message (it names the layer in the model's error). It may ask for weights
   with kb_model_layer_weight while it runs. A class registered again is replaced. */
typedef struct kb_layer kb_layer; /**< a custom layer while its function runs */
/** Builds a custom layer's outputs from its inputs (kb_model_register_layer). */
typedef kb_status (*kb_layer_function)(void* user_data, kb_layer* layer, const char* config_json,
                                       kb_tensor* const* inputs, size_t num_inputs,
                                       kb_tensor** outputs, size_t capacity, size_t* num_outputs);
KB_API kb_status kb_model_register_layer(const char* class_name, kb_layer_function function,
                                         void* user_data);
/* The layer's weight `name` (a new reference to the variable, to release): made the
   first time it is asked for, initialized by initializer_json (a Keras initializer: "zeros",
   {"class_name": "RandomNormal", "config": {...}}), the same variable after. The layer's
   weights are saved and loaded in the order they were first asked for. */
KB_API kb_status kb_model_layer_weight(kb_layer* layer, const char* name, const int64_t* shape,
                                       size_t ndim, const char* initializer_json, int32_t trainable,
                                       kb_tensor** out);

#ifdef __cplusplus
}
#endif

#endif /* KBACKEND_H */
