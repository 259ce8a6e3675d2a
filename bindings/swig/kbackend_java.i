/* Java's part of kbackend.i (which %includes it inside #ifdef SWIGJAVA): typemaps, JNI helpers
 * and callbacks of package org.kbackend. */
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
 * What it throws fails fit at once and comes out of it unchanged. */
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
    kb_set_error(KB_ERROR_INVALID_ARGUMENT, "a Java exception");  /* fit fails; rethrown after */
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
