/* C#'s part of kbackend.i (which %includes it inside #ifdef SWIGCSHARP): typemaps, P/Invoke
 * helpers and callbacks of namespace KBackend. */
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
