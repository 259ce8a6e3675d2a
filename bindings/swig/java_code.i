/* The Java code of the proxy classes (included by kbackend.i under SWIGJAVA): Tensor, TensorList
 * and CompiledFunction release their native reference on close() and, as a safety net, through a
 * java.lang.ref.Cleaner when they become unreachable; K gets Keras' defaults as overloads and the
 * lambda forms of map_fn / foldl / foldr / rnn. */

/* The JNI declarations are the package's own business. */
%pragma(java) jniclassclassmodifiers="final class"

/* ---- classes' docs ---------------------------------------------------------------------------- */
%typemap(javaclassmodifiers) kb_tensor "/** A graph value (placeholder, variable, constant or an operation's result): one native\n * reference, released by close() or, as a safety net, when collected. */\npublic class"
%typemap(javaclassmodifiers) kb_tensor_list "/** Several results of the library as a read-only List of new Tensor references. */\npublic class"
%typemap(javaclassmodifiers) kb_compiled_function "/** A compiled function (K.function): inputs to outputs, with updates; its plans are cached per\n * input signature. */\npublic class"
%typemap(javaclassmodifiers) kb_model "/** A Keras model: loaded from a Keras HDF5 file or JSON, trained, evaluated and saved natively. */\npublic class"
%pragma(java) moduleclassmodifiers="/** The Keras backend API: every function under its Keras name, with Keras' defaults as\n * overloads. */\npublic class"
/* The header's macro constant (the ABI it declares) is K.abi_version()'s business here. */
%ignore KB_ABI_VERSION;

/* ---- handles: AutoCloseable + Cleaner ------------------------------------------------------- */
%define KB_JAVA_HANDLE(CTYPE, JTYPE)
%typemap(javafinalize) CTYPE ""
%typemap(javainterfaces) CTYPE "AutoCloseable"
%typemap(javabody) CTYPE %{
  private transient long swigCPtr;
  protected transient boolean swigCMemOwn;
  private transient java.lang.ref.Cleaner.Cleanable cleanable;
  private static final java.util.concurrent.atomic.AtomicLong LIVE =
      new java.util.concurrent.atomic.AtomicLong();

  /** Releases the native reference; it must not refer to the proxy (the Cleaner runs it). */
  private static final class Release implements Runnable {
    private final long ptr;

    Release(long ptr) {
      this.ptr = ptr;
    }

    @Override
    public void run() {
      KJNI.delete_##JTYPE(ptr);
      LIVE.decrementAndGet();
    }
  }

  protected JTYPE(long cPtr, boolean cMemoryOwn) {
    swigCMemOwn = cMemoryOwn;
    swigCPtr = cPtr;
    if (cMemoryOwn && cPtr != 0) {
      LIVE.incrementAndGet();
      cleanable = KBackendLoader.CLEANER.register(this, new Release(cPtr));
    }
  }

  /* A closed object passed to a call is the caller's mistake, as in java.io: not a NULL for C. */
  protected static long getCPtr(JTYPE obj) {
    if (obj == null) return 0;
    if (obj.swigCPtr == 0) throw new IllegalStateException(JTYPE.class.getSimpleName() + " is closed");
    return obj.swigCPtr;
  }

  /** How many native references of this type Java objects hold now (for leak checks). */
  public static long liveCount() {
    return LIVE.get();
  }

  /** Releases the native reference now; the object is unusable afterwards. Idempotent. */
  @Override
  public void close() {
    delete();
  }

  /** Whether the native reference has been released.
   * @return true after close() */
  public synchronized boolean isClosed() {
    return swigCPtr == 0;
  }
%}
%typemap(javadestruct, methodname="delete",
         methodmodifiers="/** Releases the native reference now (as close() does). */\n  public synchronized") CTYPE {
    if (cleanable != null) {
      cleanable.clean();
      cleanable = null;
    }
    swigCPtr = 0;
    swigCMemOwn = false;
  }
%enddef
KB_JAVA_HANDLE(kb_tensor, Tensor)
KB_JAVA_HANDLE(kb_tensor_list, TensorList)
KB_JAVA_HANDLE(kb_compiled_function, CompiledFunction)
KB_JAVA_HANDLE(kb_model, Model)

%typemap(javabase) kb_tensor_list "java.util.AbstractList<Tensor>"

/* ---- Tensor ------------------------------------------------------------------------------------ */
%typemap(javacode) kb_tensor %{
  // ---- construction from Java data (a copy; row-major) ----
  /** Constant holding a copy of row-major data of a given dtype and shape. ({@code K.tensor_from_data}) */
  public static Tensor of(float[] data, long... shape) {
    return K.tensor_from_data(data, DType.FLOAT32, shape);
  }

  /** Constant holding a copy of row-major data of a given dtype and shape. ({@code K.tensor_from_data}) */
  public static Tensor of(double[] data, long... shape) {
    return K.tensor_from_data(data, DType.FLOAT64, shape);
  }

  /** Constant holding a copy of row-major data of a given dtype and shape. ({@code K.tensor_from_data}) */
  public static Tensor of(int[] data, long... shape) {
    return K.tensor_from_data(data, DType.INT32, shape);
  }

  /** Constant holding a copy of row-major data of a given dtype and shape. ({@code K.tensor_from_data}) */
  public static Tensor of(long[] data, long... shape) {
    return K.tensor_from_data(data, DType.INT64, shape);
  }

  /** Constant holding a copy of row-major data of a given dtype and shape. ({@code K.tensor_from_data}) */
  public static Tensor of(boolean[] data, long... shape) {
    return K.tensor_from_data(data, DType.BOOL, shape);
  }

  /** Raw data of any dtype: a primitive array or an NIO buffer holding its bytes (UINT8 from a
   * byte[], FLOAT16 or BFLOAT16 from a short[] ...). */
  public static Tensor of(Object data, DType dtype, long... shape) {
    return K.tensor_from_data(directOrArray(data), dtype, shape);
  }

  /** A tensor from an NIO buffer (from its position to its limit); a direct buffer is read in
   * place. The dtype follows the buffer type (FloatBuffer: FLOAT32, ...). */
  public static Tensor of(java.nio.Buffer data, long... shape) {
    return K.tensor_from_data(directOrArray(data), bufferDType(data), shape);
  }

  /** A float32 scalar constant.
   * @param value the value
   * @return the constant */
  public static Tensor scalar(float value) {
    return of(new float[] {value});
  }

  /** A float64 scalar constant.
   * @param value the value
   * @return the constant */
  public static Tensor scalar(double value) {
    return of(new double[] {value});
  }

  /** An int32 scalar constant.
   * @param value the value
   * @return the constant */
  public static Tensor scalar(int value) {
    return of(new int[] {value});
  }

  /** An int64 scalar constant.
   * @param value the value
   * @return the constant */
  public static Tensor scalar(long value) {
    return of(new long[] {value});
  }

  static DType bufferDType(java.nio.Buffer b) {
    if (b instanceof java.nio.FloatBuffer) return DType.FLOAT32;
    if (b instanceof java.nio.DoubleBuffer) return DType.FLOAT64;
    if (b instanceof java.nio.IntBuffer) return DType.INT32;
    if (b instanceof java.nio.LongBuffer) return DType.INT64;
    if (b instanceof java.nio.ShortBuffer) return DType.INT16;
    if (b instanceof java.nio.ByteBuffer) return DType.INT8;
    throw new IllegalArgumentException("kbackend: no dtype for " + b.getClass().getName());
  }

  /** Direct buffers go to C as they are (native order required); other buffers as arrays. */
  static Object directOrArray(Object data) {
    if (!(data instanceof java.nio.Buffer)) return data;
    java.nio.Buffer b = (java.nio.Buffer) data;
    if (b.isDirect()) {
      java.nio.ByteOrder order = null;
      if (b instanceof java.nio.FloatBuffer) order = ((java.nio.FloatBuffer) b).order();
      else if (b instanceof java.nio.DoubleBuffer) order = ((java.nio.DoubleBuffer) b).order();
      else if (b instanceof java.nio.IntBuffer) order = ((java.nio.IntBuffer) b).order();
      else if (b instanceof java.nio.LongBuffer) order = ((java.nio.LongBuffer) b).order();
      else if (b instanceof java.nio.ShortBuffer) order = ((java.nio.ShortBuffer) b).order();
      if (order != null && order != java.nio.ByteOrder.nativeOrder())
        throw new IllegalArgumentException("kbackend: the buffer must be in native byte order");
      return b;
    }
    b = b.duplicate();
    if (b instanceof java.nio.FloatBuffer) {
      float[] a = new float[b.remaining()];
      ((java.nio.FloatBuffer) b).get(a);
      return a;
    } else if (b instanceof java.nio.DoubleBuffer) {
      double[] a = new double[b.remaining()];
      ((java.nio.DoubleBuffer) b).get(a);
      return a;
    } else if (b instanceof java.nio.IntBuffer) {
      int[] a = new int[b.remaining()];
      ((java.nio.IntBuffer) b).get(a);
      return a;
    } else if (b instanceof java.nio.LongBuffer) {
      long[] a = new long[b.remaining()];
      ((java.nio.LongBuffer) b).get(a);
      return a;
    } else if (b instanceof java.nio.ShortBuffer) {
      short[] a = new short[b.remaining()];
      ((java.nio.ShortBuffer) b).get(a);
      return a;
    } else if (b instanceof java.nio.ByteBuffer) {
      byte[] a = new byte[b.remaining()];
      ((java.nio.ByteBuffer) b).get(a);
      return a;
    }
    throw new IllegalArgumentException("kbackend: unsupported buffer " + b.getClass().getName());
  }

  // ---- properties ----
  /** The static shape (int_shape): -1 for unknown dimensions, null for an unknown rank. */
  public long[] shape() {
    long rank = K.int_shape_rank(this);
    if (rank < 0) return null;
    long[] dims = new long[(int) rank];
    for (int i = 0; i < rank; ++i) dims[i] = K.int_shape_dim(this, i);
    return dims;
  }

  /** Rank of x (number of axes). ({@code K.ndim}) */
  public long ndim() {
    return K.ndim(this);
  }

  /** Dtype of x. ({@code K.dtype}) */
  public DType dtype() {
    return K.dtype(this);
  }

  /** Name of a tensor. ({@code K.tensor_name}) */
  public String name() {
    return K.tensor_name(this);
  }

  /** Equal ids: the same graph value. */
  public long id() {
    return K.tensor_id(this);
  }

  @Override
  public String toString() {
    if (isClosed()) return "Tensor(closed)";
    return "Tensor(" + name() + ", shape=" + java.util.Arrays.toString(shape()) + ", "
        + dtype() + ")";
  }

  // ---- values out ----
  /** Value of x, computed, as a constant. ({@code K.eval}) */
  public Tensor eval() {
    return K.eval(this);
  }

  /** The value as a flat row-major float array (the tensor must be float32).
   * @return the values */
  public float[] toFloatArray() {
    return copyOut(DType.FLOAT32, float[]::new);
  }

  /** The value as a flat row-major double array (the tensor must be float64).
   * @return the values */
  public double[] toDoubleArray() {
    return copyOut(DType.FLOAT64, double[]::new);
  }

  /** The value as a flat row-major int array (the tensor must be int32).
   * @return the values */
  public int[] toIntArray() {
    return copyOut(DType.INT32, int[]::new);
  }

  /** The value as a flat row-major long array (the tensor must be int64).
   * @return the values */
  public long[] toLongArray() {
    return copyOut(DType.INT64, long[]::new);
  }

  /** The value as a float (a tensor of one element). */
  public float floatValue() {
    float[] v = toFloatArray();
    if (v.length != 1) throw new IllegalStateException("floatValue: " + v.length + " elements");
    return v[0];
  }

  /** Copies the value (in its own dtype) into a primitive array or a direct buffer of exactly
   * its size in bytes. */
  public void copyTo(Object dst) {
    K.tensor_copy_to(this, directOrArray(dst));
  }

  private <T> T copyOut(DType dtype, java.util.function.IntFunction<T> make) {
    Tensor t = this;
    boolean own = false;
    try {
      if (dtype() != dtype) {
        t = K.cast(t, dtype);
        own = true;
      }
      long[] s = t.shape();
      if (s == null || java.util.Arrays.stream(s).anyMatch(d -> d < 0)) {
        Tensor e = K.eval(t);
        if (own) t.close();
        t = e;
        own = true;
        s = t.shape();
      }
      long n = 1;
      for (long d : s) n *= d;
      T out = make.apply(Math.toIntExact(n));
      K.tensor_copy_to(t, out);
      return out;
    } finally {
      if (own) t.close();
    }
  }

  /** A scalar of this tensor's dtype (as TensorFlow converts Python numbers). */
  public Tensor scalarLike(double value) {
    DType d = dtype();
    switch (d) {
      case FLOAT32: return of(new float[] {(float) value});
      case FLOAT64: return of(new double[] {value});
      case INT32: return of(new int[] {(int) value});
      case INT64: return of(new long[] {(long) value});
      default:
        try (Tensor v = of(new double[] {value})) {
          return K.cast(v, d);
        }
    }
  }

  private Tensor withScalar(double value, java.util.function.BinaryOperator<Tensor> op,
                            boolean scalarFirst) {
    try (Tensor s = scalarLike(value)) {
      return scalarFirst ? op.apply(s, this) : op.apply(this, s);
    }
  }

  // ---- operators as methods ----
  /** Sum x + y, elementwise with broadcasting. ({@code K.add}) */
  public Tensor add(Tensor y) { return K.add(this, y); }
  /** Sum x + y, elementwise with broadcasting, y a number (a constant of x's dtype). ({@code K.add}) */
  public Tensor add(double y) { return withScalar(y, K::add, false); }
  /** Difference x - y, elementwise with broadcasting. ({@code K.subtract}) */
  public Tensor sub(Tensor y) { return K.subtract(this, y); }
  /** Difference x - y, elementwise with broadcasting, y a number (a constant of x's dtype). ({@code K.subtract}) */
  public Tensor sub(double y) { return withScalar(y, K::subtract, false); }
  /** value - this */
  public Tensor rsub(double value) { return withScalar(value, K::subtract, true); }
  /** Product x * y, elementwise with broadcasting. ({@code K.multiply}) */
  public Tensor mul(Tensor y) { return K.multiply(this, y); }
  /** Product x * y, elementwise with broadcasting, y a number (a constant of x's dtype). ({@code K.multiply}) */
  public Tensor mul(double y) { return withScalar(y, K::multiply, false); }
  /** Quotient x / y, elementwise with broadcasting. ({@code K.divide}) */
  public Tensor div(Tensor y) { return K.divide(this, y); }
  /** Quotient x / y, elementwise with broadcasting, y a number (a constant of x's dtype). ({@code K.divide}) */
  public Tensor div(double y) { return withScalar(y, K::divide, false); }
  /** value / this */
  public Tensor rdiv(double value) { return withScalar(value, K::divide, true); }
  /** Matrix product of x and y, numpy.dot-like beyond rank 2. ({@code K.dot}) */
  public Tensor matmul(Tensor y) { return K.dot(this, y); }
  /** Matrix product of x and y, numpy.dot-like beyond rank 2. ({@code K.dot}) */
  public Tensor dot(Tensor y) { return K.dot(this, y); }
  /** Negation, elementwise. ({@code K.negative}) */
  public Tensor neg() { return K.negative(this); }
  /** Power x to the a, elementwise. ({@code K.pow}) */
  public Tensor pow(double a) { return K.pow(this, a); }
  /** Absolute value, elementwise. ({@code K.abs}) */
  public Tensor abs() { return K.abs(this); }
  /** Square, elementwise. ({@code K.square}) */
  public Tensor square() { return K.square(this); }
  /** Square root, elementwise, of x clipped at 0. ({@code K.sqrt}) */
  public Tensor sqrt() { return K.sqrt(this); }
  /** Exponential, elementwise. ({@code K.exp}) */
  public Tensor exp() { return K.exp(this); }
  /** Natural logarithm, elementwise. ({@code K.log}) */
  public Tensor log() { return K.log(this); }
  /** Whether x &lt; y, elementwise, as bool. ({@code K.less}) */
  public Tensor lt(Tensor y) { return K.less(this, y); }
  /** Whether x &lt;= y, elementwise, as bool. ({@code K.less_equal}) */
  public Tensor le(Tensor y) { return K.less_equal(this, y); }
  /** Whether x &gt; y, elementwise, as bool. ({@code K.greater}) */
  public Tensor gt(Tensor y) { return K.greater(this, y); }
  /** Whether x &gt;= y, elementwise, as bool. ({@code K.greater_equal}) */
  public Tensor ge(Tensor y) { return K.greater_equal(this, y); }
  /** Rectified linear unit with optional leak alpha, max_value cap and threshold. ({@code K.relu}) */
  public Tensor relu() { return K.relu(this); }
  /** Logistic sigmoid, elementwise. ({@code K.sigmoid}) */
  public Tensor sigmoid() { return K.sigmoid(this); }
  /** Hyperbolic tangent, elementwise. ({@code K.tanh}) */
  public Tensor tanh() { return K.tanh(this); }
  /** Softmax of x along an axis. ({@code K.softmax}) */
  public Tensor softmax() { return K.softmax(this); }
  /** Sum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.sum}) */
  public Tensor sum() { return K.sum(this); }
  /** Sum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.sum}) */
  public Tensor sum(long axis) { return K.sum(this, axis); }
  /** Mean of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.mean}) */
  public Tensor mean() { return K.mean(this); }
  /** Mean of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.mean}) */
  public Tensor mean(long axis) { return K.mean(this, axis); }
  /** Maximum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.max}) */
  public Tensor max() { return K.max(this); }
  /** Minimum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.min}) */
  public Tensor min() { return K.min(this); }
  /** Index of the maximum along an axis, as int64. ({@code K.argmax}) */
  public Tensor argmax(long axis) { return K.argmax(this, axis); }
  /** Tensor x reshaped to a shape (one entry may be -1). ({@code K.reshape}) */
  public Tensor reshape(long... shape) { return K.reshape(this, shape); }
  /** Tensor x with all its axes reversed. ({@code K.transpose}) */
  public Tensor transpose() { return K.transpose(this); }
  /** Tensor x converted to a dtype. ({@code K.cast}) */
  public Tensor cast(DType dtype) { return K.cast(this, dtype); }

  /** x[begin:end:step] over the leading axes, as NumPy slices (strided_slice). */
  public Tensor slice(long[] begin, long[] end, long[] strides) {
    return K.strided_slice(this, begin, end, strides, 0, 0, 0, 0);
  }
%}

/* ---- TensorList: a read-only java.util.List of new Tensor references ------------------------ */
%typemap(javacode) kb_tensor_list %{
  /** A new reference to entry i (close it, or let it be collected). */
  @Override
  public Tensor get(int index) {
    if (index < 0 || index >= size()) throw new IndexOutOfBoundsException(index);
    return K.tensor_list_get(this, index);
  }

  @Override
  public int size() {
    return Math.toIntExact(K.tensor_list_size(this));
  }

  /** The entries as a java.util.List that outlives this list; closes this list. */
  public java.util.List<Tensor> drain() {
    try {
      return new java.util.ArrayList<>(this);
    } finally {
      close();
    }
  }
%}

/* ---- CompiledFunction ------------------------------------------------------------------------ */
%typemap(javacode) kb_compiled_function %{
  /** Runs the function on constants (Tensor.of(...)) in the order of its inputs. */
  public java.util.List<Tensor> call(Tensor... inputs) {
    return K.function_call(this, inputs).drain();
  }

  /** Moves the function to a kind of device (its later calls run there).
   * @param kind CPU or CUDA */
  public void setDevice(DeviceKind kind) {
    K.function_set_device(this, kind);
  }

  /** Device kind a compiled function runs on. ({@code K.function_device}) */
  public DeviceKind device() {
    return K.function_device(this);
  }

  /** Moves the function to "cpu", "cuda" or "cuda:N" (N: this process' GPU). */
  public void setDevice(String device) {
    K.function_set_device_name(this, device);
  }

  /** Where the function runs: "cpu" or "cuda:N". */
  public String deviceName() {
    return K.function_device_name(this);
  }
%}

/* ---- Model: a Keras model with several inputs and outputs ----------------------------------- */
%typemap(javacode) kb_model %{
  /** A model from a Keras HDF5 file, compiled from its training_config when it has one. */
  public static Model load(String path) {
    return K.model_load(path, true);
  }

  /** A model from Keras' JSON (model.to_json()), its weights initialized as Keras does. */
  public static Model fromJson(String json) {
    return K.model_from_json(json);
  }

  /** Keras' compile with one loss for every output and the given metrics ("accuracy"). */
  public void compile(String optimizer, String loss, String... metrics) {
    K.model_compile(this, optimizer, new String[] {loss}, metrics, null);
  }

  /** Keras' compile: losses one per output (or one for all), metrics, options as JSON
   * ({"optimizer": {"lr": 0.01}, "loss_weights": [...]}; null for none). */
  public void compile(String optimizer, String[] losses, String[] metrics, String optionsJson) {
    K.model_compile(this, optimizer, losses, metrics, optionsJson);
  }

  /** compile with its options as values (loss weights, the optimizer's config). */
  public void compile(String optimizer, String[] losses, String[] metrics, CompileOptions options) {
    K.model_compile(this, optimizer, losses, metrics, options.toJson());
  }

  /** Keras' fit with its arguments as values (new FitOptions(): Keras' defaults); the history as
   * values (each logged value per epoch). */
  public History fit(Tensor[] x, Tensor[] y, FitOptions options) {
    return fit(x, y, options, null);
  }

  /** fit with its arguments as values and a callback (null: none) that gets Keras' logs as
   * values and may stop training. */
  public History fit(Tensor[] x, Tensor[] y, FitOptions options, LogsCallback callback) {
    FitCallback relay = callback == null ? null
        : (epoch, batch, logs) -> callback.onBatch(epoch, batch, History.logs(logs));
    return new History(K.model_fit(this, x, y, options.batchSize(), options.epochs(),
                                   Math.toIntExact(options.verbose()), options.toJson(), relay));
  }

  /** Keras' fit of one input and one output, its other arguments Keras' defaults (a progress
   * bar); the per-epoch history as JSON. */
  public String fit(Tensor x, Tensor y, long batchSize, long epochs) {
    return fit(new Tensor[] {x}, new Tensor[] {y}, batchSize, epochs,
               Math.toIntExact(new FitOptions().verbose()), null, null);
  }

  /** Keras' fit: x one tensor per input, y one per output; verbose 0, 1 (progress bar) or 2;
   * options as JSON ({"shuffle", "seed", "validation_split", "class_weight", ...}). */
  public String fit(Tensor[] x, Tensor[] y, long batchSize, long epochs, int verbose,
                    String optionsJson) {
    return fit(x, y, batchSize, epochs, verbose, optionsJson, null);
  }

  /** fit with a callback after each batch and epoch (null: none) that can stop training; what
   * it throws comes out of fit. */
  public String fit(Tensor[] x, Tensor[] y, long batchSize, long epochs, int verbose,
                    String optionsJson, FitCallback callback) {
    return K.model_fit(this, x, y, batchSize, epochs, verbose, optionsJson, callback);
  }

  /** Keras' evaluate with its arguments as values (new EvaluateOptions(): Keras' defaults, a
   * progress bar): the loss, then the metrics (metricsNames()). */
  public double[] evaluate(Tensor[] x, Tensor[] y, EvaluateOptions options) {
    try (Tensor values = K.model_evaluate(this, x, y, options.batchSize(),
                                          Math.toIntExact(options.verbose()))) {
      return values.toDoubleArray();
    }
  }

  /** Keras' evaluate in batches of batchSize, its other arguments Keras' defaults. */
  public double[] evaluate(Tensor[] x, Tensor[] y, long batchSize) {
    return evaluate(x, y, new EvaluateOptions().batchSize(batchSize));
  }

  /** evaluate of one input and one output. */
  public double[] evaluate(Tensor x, Tensor y, long batchSize) {
    return evaluate(new Tensor[] {x}, new Tensor[] {y}, batchSize);
  }

  /** Keras' predict with its arguments as values (new PredictOptions(): Keras' defaults): one
   * tensor per output. */
  public java.util.List<Tensor> predict(PredictOptions options, Tensor... x) {
    return K.model_predict(this, x, options.batchSize(), Math.toIntExact(options.verbose()))
        .drain();
  }

  /** Keras' predict in batches of batchSize, its other arguments Keras' defaults. */
  public java.util.List<Tensor> predict(long batchSize, Tensor... x) {
    return predict(new PredictOptions().batchSize(batchSize), x);
  }

  /** The outputs for one batch, one tensor per output. */
  public java.util.List<Tensor> predictOnBatch(Tensor... x) {
    return K.model_predict_on_batch(this, x).drain();
  }

  /** One gradient step on one batch: the loss, then the metrics. */
  public double[] trainOnBatch(Tensor[] x, Tensor[] y) {
    try (Tensor values = K.model_train_on_batch(this, x, y)) {
      return values.toDoubleArray();
    }
  }

  /** The loss and the metrics of one batch, without training. */
  public double[] testOnBatch(Tensor[] x, Tensor[] y) {
    try (Tensor values = K.model_test_on_batch(this, x, y)) {
      return values.toDoubleArray();
    }
  }

  /** The names of evaluate's values, as a JSON list (["loss", "acc"]). */
  public String metricsNames() {
    return K.model_metrics_names(this);
  }

  /** Keras' model.save with its arguments as values (new SaveOptions(): with the optimizer's
   * state). */
  public void save(String path, SaveOptions options) {
    K.model_save(this, path, options.includeOptimizer());
  }

  /** Keras' model.save, with the optimizer's state. */
  public void save(String path) {
    save(path, new SaveOptions());
  }

  /** The model's inference graph as an ONNX file (opset 17, the batch dim free unless the
   * options fix it), checked by ONNX's checker; an operation with no ONNX form throws naming
   * its layer. */
  public void exportOnnx(String path, ExportOnnxOptions options) {
    K.model_export_onnx(this, path, options.toJson());
  }

  /** exportOnnx with the default options. */
  public void exportOnnx(String path) {
    exportOnnx(path, new ExportOnnxOptions());
  }

  /** A copy (uncompiled, the same weights' values) whose float32 layers take the dtype policy
   * {@code policy} ("mixed_bfloat16": bfloat16 computation over float32 variables), as Keras'
   * clone_model with each layer's dtype set. */
  public Model withDtypePolicy(String policy) {
    return K.model_with_dtype_policy(this, policy);
  }

  /** Keras' model.summary() text. */
  public String summary() {
    return K.model_summary(this);
  }

  /** Keras' model.to_json(). */
  public String toJson() {
    return K.model_to_json(this);
  }

  /** The model's input placeholders, to build on (extra losses, gradients, functions). */
  public java.util.List<Tensor> inputs() {
    return K.model_inputs(this).drain();
  }

  /** The model's outputs as graph values. */
  public java.util.List<Tensor> outputs() {
    return K.model_outputs(this).drain();
  }

  /** The model's weight variables. */
  public java.util.List<Tensor> weights() {
    return K.model_weights(this).drain();
  }

  /** Lets model files and JSON name the layer class className (a Lambda, a layer of one's own):
   * fn builds it. Models may be built later on any thread, so fn lives as long as the process (a
   * class registered again is replaced); what it throws fails the load, naming the layer. */
  public static void registerLayer(String className, LayerFunction fn) {
    if (fn == null) throw new NullPointerException("registerLayer: fn is null");
    K.register_layer_raw(className, (layer, config, inputs) -> {
      LayerContext context = new LayerContext(layer);
      try {
        java.util.List<Tensor> in = new java.util.ArrayList<>();
        for (long p : inputs) in.add(K.borrow(p));
        java.util.List<Tensor> out = fn.build(context, config, in);
        // (List.of's contains(null) throws: a loop)
        for (Tensor t : out == null ? java.util.Collections.<Tensor>singletonList(null) : out)
          if (t == null) throw new NullPointerException("the layer function returned a null tensor");
        long[] result = new long[out.size()];
        for (int i = 0; i < result.length; ++i) result[i] = K.retained(out.get(i));
        return result;
      } finally {
        context.close();
      }
    });
  }
%}

/* ---- K: Keras' defaults as overloads, and the lambda forms of the loops ------------------------ */
%pragma(java) moduleimports=%{
import java.util.List;
import java.util.function.BinaryOperator;
import java.util.function.UnaryOperator;
%}
%pragma(java) modulecode=%{
  private static final long[] ALL = null;

  /** The sum or average over the processes of every process' values, in place (metrics); the
   * array is returned. */
  public static double[] dist_all_reduce(double[] values, ReduceOp op) {
    dist_all_reduce(values, DType.FLOAT64, op);
    return values;
  }

  /** The sum or average over the processes of every process' values, in place.
   * @param values this process' values, replaced by the result
   * @param op sum or average
   * @return values */
  public static float[] dist_all_reduce(float[] values, ReduceOp op) {
    dist_all_reduce(values, DType.FLOAT32, op);
    return values;
  }

  /** The sum or average over the processes of every process' values, in place.
   * @param values this process' values, replaced by the result
   * @param op sum or average
   * @return values */
  public static int[] dist_all_reduce(int[] values, ReduceOp op) {
    dist_all_reduce(values, DType.INT32, op);
    return values;
  }

  /** The sum or average over the processes of every process' values, in place.
   * @param values this process' values, replaced by the result
   * @param op sum or average
   * @return values */
  public static long[] dist_all_reduce(long[] values, ReduceOp op) {
    dist_all_reduce(values, DType.INT64, op);
    return values;
  }

  private static long[] axis(long axis) {
    return new long[] {axis};
  }

  static Tensor[] array(List<Tensor> list) {
    return list == null ? null : list.toArray(new Tensor[0]);
  }

  /** The library's version string. */
  public static String versionString() {
    return version();
  }

  // ---- creation ----
  /** A placeholder; -1 for unknown dimensions; floatx. */
  public static Tensor placeholder(long... shape) {
    return placeholder(shape, shape.length, DType.DTYPE_DEFAULT, false, null);
  }

  /** Placeholder of a shape, rank or unknown rank, fed when a function is called. ({@code K.placeholder}) */
  public static Tensor placeholder(long[] shape, DType dtype, String name) {
    return placeholder(shape, shape.length, dtype, false, name);
  }

  /** A float32 variable holding a copy of data (row-major) of the given shape.
   * @param data the values
   * @param shape the shape
   * @return the variable */
  public static Tensor variable(float[] data, long... shape) {
    return variable_from_data(data, DType.FLOAT32, shape, DType.DTYPE_DEFAULT, null);
  }

  /** A float64 variable holding a copy of data (row-major) of the given shape.
   * @param data the values
   * @param shape the shape
   * @return the variable */
  public static Tensor variable(double[] data, long... shape) {
    return variable_from_data(data, DType.FLOAT64, shape, DType.DTYPE_DEFAULT, null);
  }

  /** A variable of dtype (DEFAULT: floatx) and name from a primitive array or a direct buffer. */
  public static Tensor variable(Object data, DType dataDType, long[] shape, DType dtype,
                                String name) {
    return variable_from_data(Tensor.directOrArray(data), dataDType, shape, dtype, name);
  }

  /** A scalar constant of floatx.
   * @param value the value
   * @return the constant */
  public static Tensor constant(double value) {
    return constant_from_data(new double[] {value}, DType.FLOAT64, new long[0], DType.DTYPE_DEFAULT,
                              null, null);
  }

  /** A constant of floatx filled with value in shape. */
  public static Tensor constant(double value, long... shape) {
    return constant_from_data(new double[] {value}, DType.FLOAT64, new long[0], DType.DTYPE_DEFAULT,
                              shape, null);
  }

  /** A constant of floatx holding a copy of data (row-major) of the given shape.
   * @param data the values
   * @param shape the shape
   * @return the constant */
  public static Tensor constant(float[] data, long... shape) {
    return constant_from_data(data, DType.FLOAT32, shape, DType.DTYPE_DEFAULT, null, null);
  }

  /** Keras' set_value: assigns data (a primitive array or an NIO buffer) of the given shape to a
   * variable.
   * @param x the variable
   * @param data the values
   * @param shape their shape */
  public static void set_value(Tensor x, Object data, long... shape) {
    Object d = Tensor.directOrArray(data);
    DType t = d instanceof float[] ? DType.FLOAT32 : d instanceof double[] ? DType.FLOAT64
        : d instanceof int[] ? DType.INT32 : d instanceof long[] ? DType.INT64
        : d instanceof java.nio.Buffer ? Tensor.bufferDType((java.nio.Buffer) d) : null;
    if (t == null) throw new IllegalArgumentException("set_value: unsupported data " + d);
    set_value_data(x, d, t, shape);
  }

  /** All-zeros variable of a shape and dtype (a constant when a dimension is 0). ({@code K.zeros}) */
  public static Tensor zeros(long... shape) {
    return zeros(shape, DType.DTYPE_DEFAULT, null);
  }

  /** All-ones variable of a shape and dtype (a constant when a dimension is 0). ({@code K.ones}) */
  public static Tensor ones(long... shape) {
    return ones(shape, DType.DTYPE_DEFAULT, null);
  }





  /** Keras' random_normal_variable with a seed.
   * @param shape the shape
   * @param mean the mean
   * @param scale the standard deviation
   * @param seed the seed
   * @return the variable */
  public static Tensor random_normal_variable(long[] shape, double mean, double scale,
                                              long seed) {
    return random_normal_variable(shape, mean, scale, DType.DTYPE_DEFAULT, null, seed);
  }



  /** Evenly spaced values from start up to stop by step, as a 1D tensor (int32 by default). ({@code K.arange}) */
  public static Tensor arange(double start, double stop) {
    return arange(start, stop, 1.0, DType.DTYPE_DEFAULT);
  }

  // ---- reductions: axis=None, keepdims=False ----
  /** Sum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.sum}) */
  public static Tensor sum(Tensor x, long axis) { return sum(x, axis(axis), false); }
  /** Sum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.sum}) */
  public static Tensor sum(Tensor x, long axis, boolean keepdims) { return sum(x, axis(axis), keepdims); }
  /** Mean of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.mean}) */
  public static Tensor mean(Tensor x, long axis) { return mean(x, axis(axis), false); }
  /** Mean of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.mean}) */
  public static Tensor mean(Tensor x, long axis, boolean keepdims) { return mean(x, axis(axis), keepdims); }
  /** Maximum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.max}) */
  public static Tensor max(Tensor x, long axis) { return max(x, axis(axis), false); }
  /** Minimum of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.min}) */
  public static Tensor min(Tensor x, long axis) { return min(x, axis(axis), false); }
  /** Product of x over axes (all axes for None), keeping reduced axes if keepdims. ({@code K.prod}) */
  public static Tensor prod(Tensor x, long axis) { return prod(x, axis(axis), false); }
  /** Population variance of x over axes (all axes for None). ({@code K.var}) */
  public static Tensor var(Tensor x, long axis) { return var(x, axis(axis), false); }
  /** Population standard deviation of x over axes (all axes for None). ({@code K.std_}) */
  public static Tensor std(Tensor x, long[] axes, boolean keepdims) { return std_(x, axes, keepdims); }
  /** Population standard deviation of x over axes (all axes for None). ({@code K.std_}) */
  public static Tensor std(Tensor x) { return std_(x, ALL, false); }
  /** Population standard deviation of x over axes (all axes for None). ({@code K.std_}) */
  public static Tensor std(Tensor x, long axis) { return std_(x, axis(axis), false); }
  /** Log of the sum of exp(x) over axes, computed stably (all axes for None). ({@code K.logsumexp}) */
  public static Tensor logsumexp(Tensor x, long axis) { return logsumexp(x, axis(axis), false); }

  // ---- nn ----
  /** Clips x to [min_value, max_value], elementwise. ({@code K.clip}) */
  public static Tensor clip(Tensor x, double minValue) {
    return clip(x, minValue, Double.POSITIVE_INFINITY);
  }
  /** Tensor x divided by its L2 norm over axes (all axes for None). ({@code K.l2_normalize}) */
  public static Tensor l2_normalize(Tensor x, long axis) { return l2_normalize(x, axis(axis)); }
  /** Concatenation of tensors along an axis. ({@code K.concatenate}) */
  public static Tensor concatenate(List<Tensor> xs) { return concatenate(array(xs), -1); }
  /** Concatenation of tensors along an axis. ({@code K.concatenate}) */
  public static Tensor concatenate(List<Tensor> xs, long axis) { return concatenate(array(xs), axis); }
  /** Stacks tensors of one rank into a tensor of rank + 1 along a new axis. ({@code K.stack}) */
  public static Tensor stack(List<Tensor> xs) { return stack(array(xs), 0); }
  /** Stacks tensors of one rank into a tensor of rank + 1 along a new axis. ({@code K.stack}) */
  public static Tensor stack(List<Tensor> xs, long axis) { return stack(array(xs), axis); }
  /** Tensor x with the size-1 axis at an axis removed. ({@code K.squeeze}) */
  public static Tensor squeeze(Tensor x) { return squeeze(x, -1); }

  // ---- conv / pool: strides=1, padding='valid', data_format=None, dilation_rate=1 ----
  /** Convolution of x with kernel over 2 spatial axes (layouts as data_format says). ({@code K.conv2d}) */
  public static Tensor conv2d(Tensor x, Tensor kernel, long[] strides, String padding) {
    return conv2d(x, kernel, strides, parse_padding(padding), DataFormat.DATA_FORMAT_DEFAULT, null);
  }
  /** Keras' pool2d with Keras' option strings.
   * @param x the images
   * @param poolSize the window
   * @param strides the strides
   * @param padding "valid" or "same"
   * @param poolMode "max" or "avg"
   * @return the pooled images */
  public static Tensor pool2d(Tensor x, long[] poolSize, long[] strides, String padding,
                              String poolMode) {
    return pool2d(x, poolSize, strides, parse_padding(padding), DataFormat.DATA_FORMAT_DEFAULT,
                  parse_pool_mode(poolMode));
  }

  // ---- functions, gradients, updates ----
  /** Gradients of the sum of loss with respect to variables. ({@code K.gradients}) */
  public static List<Tensor> gradients(Tensor loss, List<Tensor> variables) {
    return gradients(loss, array(variables)).drain();
  }

  /** Compiles a function from input placeholders to outputs, applying updates per call. ({@code K.function}) */
  public static CompiledFunction function(List<Tensor> inputs, List<Tensor> outputs) {
    return function(array(inputs), array(outputs), null);
  }

  /** updates: update ops (K.update, K.update_add, K.update_sub). */
  public static CompiledFunction function(List<Tensor> inputs, List<Tensor> outputs,
                                          List<Tensor> updates) {
    return function(array(inputs), array(outputs), array(updates));
  }

  /** Values of several tensors, as constants. ({@code K.batch_get_value}) */
  public static List<Tensor> batch_get_value(List<Tensor> xs) {
    return batch_get_value(array(xs)).drain();
  }

  // ---- loops: the callback runs while the graph is built; an exception it throws comes back
  // out of the call unchanged ----
  /** The result of an rnn step: the output and the new states. */
  public static final class Step {
    /** The step's output. */
    public final Tensor output;
    /** The states after the step. */
    public final List<Tensor> states;

    /** A step's result.
     * @param output the step's output
     * @param states the new states */
    public Step(Tensor output, List<Tensor> states) {
      this.output = output;
      this.states = states;
    }
  }

  /** step(input, states) -> new Step(output, newStates), as Keras' step_function. */
  @FunctionalInterface
  public interface StepFunction {
    /** One step.
     * @param input the step's input (batch, ...)
     * @param states the states, then the constants
     * @return the output and the new states */
    Step step(Tensor input, List<Tensor> states);
  }

  /** rnn's results: (last_output, outputs, new_states). */
  public static final class RnnResult {
    /** The last step's output (batch, ...). */
    public final Tensor lastOutput;
    /** Every step's output (batch, time, ...). */
    public final Tensor outputs;
    /** The states after the last step. */
    public final List<Tensor> newStates;

    RnnResult(List<Tensor> all) {
      lastOutput = all.get(0);
      outputs = all.get(1);
      newStates = java.util.Collections.unmodifiableList(all.subList(2, all.size()));
    }
  }

  /** Tensors for the borrowed pointers of a callback; each owns its own reference. */
  private static Tensor[] borrowAll(long[] ptrs, int from) {
    Tensor[] out = new Tensor[ptrs.length - from];
    for (int i = from; i < ptrs.length; ++i) out[i - from] = borrow(ptrs[i]);
    return out;
  }

  private static long result(Tensor t, String who) {
    if (t == null) throw new NullPointerException(who + ": the callback returned null");
    return retained(t);
  }

  /** The devices this process can run on: the CPU, then its GPU if it has one.
   * @return the devices */
  public static List<DeviceInfo> list_devices() {
    List<DeviceInfo> out = new java.util.ArrayList<>();
    for (DeviceKind kind : new DeviceKind[] {DeviceKind.CPU, DeviceKind.CUDA}) {
      for (long i = 0, n = device_count(kind); i < n; ++i)
        out.add(new DeviceInfo(kind, device_index(kind, i), device_name(kind, i), device_memory(kind, i)));
    }
    return out;
  }

  // ---- raw data ----
  /** The dtype of a primitive array or NIO buffer's elements. */
  static DType dataDType(Object data) {
    if (data instanceof float[]) return DType.FLOAT32;
    if (data instanceof double[]) return DType.FLOAT64;
    if (data instanceof int[]) return DType.INT32;
    if (data instanceof long[]) return DType.INT64;
    if (data instanceof short[]) return DType.INT16;
    if (data instanceof byte[]) return DType.INT8;
    if (data instanceof boolean[]) return DType.BOOL;
    if (data instanceof java.nio.Buffer) return Tensor.bufferDType((java.nio.Buffer) data);
    throw new IllegalArgumentException("kbackend: no dtype for " + (data == null ? "null" : data.getClass().getName()));
  }

  /** Keras' cast_to_floatx: the values of a primitive array or buffer converted to floatx.
   * @param values the values
   * @return a 1-D floatx tensor of them */
  public static Tensor cast_to_floatx(Object values) {
    return cast_to_floatx_raw(Tensor.directOrArray(values), dataDType(values));
  }

  /** Keras' get_variable_shape.
   * @param x a variable
   * @return its shape */
  public static long[] get_variable_shape(Tensor x) {
    try (Tensor shape = get_variable_shape_raw(x)) {
      return shape.toLongArray();
    }
  }

  /** A sparse tensor from COO data: nnz x rank coordinates (row-major) and nnz values (a
   * primitive array or buffer) converted to dtype (DTYPE_DEFAULT: floatx).
   * @param indices the coordinates
   * @param values the values
   * @param denseShape the dense shape
   * @param dtype the tensor's dtype
   * @param name its name, or null
   * @return the sparse tensor */
  public static Tensor sparse_from_coo(long[] indices, Object values, long[] denseShape, DType dtype,
                                       String name) {
    return sparse_from_coo_raw(indices, Tensor.directOrArray(values), dataDType(values), denseShape,
                               dtype, name);
  }

  /** sparse_from_coo of floatx.
   * @param indices the coordinates
   * @param values the values
   * @param denseShape the dense shape
   * @return the sparse tensor */
  public static Tensor sparse_from_coo(long[] indices, Object values, long[] denseShape) {
    return sparse_from_coo(indices, values, denseShape, DType.DTYPE_DEFAULT, null);
  }

  /** A (rows, cols) sparse matrix in CSR form (scipy.sparse.csr_matrix): indptr has rows + 1
   * offsets, row r's entries are colIndices / values from indptr[r] to indptr[r + 1].
   * @param indptr the rows' offsets
   * @param colIndices the entries' columns
   * @param values the entries (a primitive array or buffer)
   * @param cols the number of columns
   * @return the sparse matrix, of floatx */
  public static Tensor sparse_from_csr(long[] indptr, long[] colIndices, Object values, long cols) {
    return sparse_from_csr_raw(indptr, colIndices, Tensor.directOrArray(values), dataDType(values),
                               cols, DType.DTYPE_DEFAULT, null);
  }

  /** Where print_tensor writes (null: stderr again); a sink lives as long as the process, as
   * prints may still run.
   * @param sink the sink, or null */
  public static void set_print_sink(PrintSink sink) {
    set_print_sink_raw(sink);
  }

  private static NativeCallback branch(java.util.function.Supplier<Tensor> fn, String who) {
    if (fn == null) throw new NullPointerException(who + ": a branch is null");
    return ptrs -> new long[] {result(fn.get(), who)};
  }

  /** Keras' switch with callables for the branches: each is called at most once, while the graph
   * is built; what one throws comes out unchanged.
   * @param condition a scalar (lazy choice) or a tensor (elementwise)
   * @param thenFn the branch for true
   * @param elseFn the branch for false
   * @return the chosen values */
  public static Tensor switch_(Tensor condition, java.util.function.Supplier<Tensor> thenFn,
                               java.util.function.Supplier<Tensor> elseFn) {
    return switch_fn_raw(condition, branch(thenFn, "switch"), branch(elseFn, "switch"));
  }

  /** Keras' in_train_phase with callables: a fixed mode calls only the chosen one; training null
   * with Training.TENSOR follows the learning phase.
   * @param x the training branch
   * @param alt the other branch
   * @param training a tensor that chooses when the function runs, or null
   * @param mode how to choose
   * @return the chosen values */
  public static Tensor in_train_phase(java.util.function.Supplier<Tensor> x,
                                      java.util.function.Supplier<Tensor> alt, Tensor training,
                                      Training mode) {
    return in_train_phase_fn_raw(branch(x, "in_train_phase"), branch(alt, "in_train_phase"),
                                 training, mode);
  }

  /** Keras' in_test_phase with callables: in_train_phase(alt, x, training, mode).
   * @param x the test branch
   * @param alt the other branch
   * @param training a tensor that chooses when the function runs, or null
   * @param mode how to choose
   * @return the chosen values */
  public static Tensor in_test_phase(java.util.function.Supplier<Tensor> x,
                                     java.util.function.Supplier<Tensor> alt, Tensor training,
                                     Training mode) {
    return in_test_phase_fn_raw(branch(x, "in_test_phase"), branch(alt, "in_test_phase"),
                                training, mode);
  }

  /** Applies a function to each element of elems along axis 0 and stacks the results. ({@code K.map_fn}) */
  public static Tensor map_fn(UnaryOperator<Tensor> fn, Tensor elems) {
    return map_fn(fn, elems, null, DType.DTYPE_DEFAULT);
  }

  /** Keras' map_fn(fn, elems, name, dtype): fn over the first axis of elems, called while the
   * graph is built; what it throws comes out unchanged.
   * @param fn the function of one element
   * @param elems the elements
   * @param name the result's name, or null
   * @param dtype the result's dtype (DTYPE_DEFAULT: elems')
   * @return the results, stacked */
  public static Tensor map_fn(UnaryOperator<Tensor> fn, Tensor elems, String name, DType dtype) {
    NativeCallback cb = ptrs -> new long[] {result(fn.apply(borrow(ptrs[0])), "map_fn")};
    return map_fn_raw(cb, elems, name, dtype);
  }

  private static NativeCallback fold(BinaryOperator<Tensor> fn, String who) {
    return ptrs -> new long[] {result(fn.apply(borrow(ptrs[0]), borrow(ptrs[1])), who)};
  }

  /** fn(acc, x); initializer null: the first element starts. */
  public static Tensor foldl(BinaryOperator<Tensor> fn, Tensor elems, Tensor initializer) {
    return foldl_raw(fold(fn, "foldl"), elems, initializer, null);
  }

  /** Keras' foldr: fn(acc, x) from the last element.
   * @param fn the function of the accumulator and one element
   * @param elems the elements
   * @param initializer the first accumulator, or null for the last element
   * @return the final accumulator */
  public static Tensor foldr(BinaryOperator<Tensor> fn, Tensor elems, Tensor initializer) {
    return foldr_raw(fold(fn, "foldr"), elems, initializer, null);
  }

  /** Iterates a step function over the time axis of inputs, returning outputs and states. ({@code K.rnn}) */
  public static RnnResult rnn(StepFunction step, Tensor inputs, List<Tensor> initialStates) {
    return rnn(step, inputs, initialStates, false, null, null, false);
  }

  /** Keras' rnn with all its options.
   * @param step the step function
   * @param inputs (batch, time, ...)
   * @param initialStates the states before the first step
   * @param goBackwards whether to run from the last step
   * @param mask (batch, time) or null
   * @param constants passed to every step after the states, or null
   * @param unroll whether to unroll the loop
   * @return (last output, outputs, new states) */
  public static RnnResult rnn(StepFunction step, Tensor inputs, List<Tensor> initialStates,
                              boolean goBackwards, Tensor mask, List<Tensor> constants,
                              boolean unroll) {
    NativeCallback cb = ptrs -> {
      Tensor[] args = borrowAll(ptrs, 0);
      Step s = step.step(args[0], java.util.Arrays.asList(args).subList(1, args.length));
      if (s == null || s.states == null) throw new NullPointerException("rnn: null step result");
      if (s.output == null) throw new NullPointerException("rnn: the step function returned null");
      for (Tensor t : s.states)
        if (t == null) throw new NullPointerException("rnn: the step function returned a null state");
      long[] out = new long[1 + s.states.size()];
      out[0] = result(s.output, "rnn");
      for (int i = 0; i < s.states.size(); ++i) out[i + 1] = result(s.states.get(i), "rnn");
      return out;
    };
    return new RnnResult(rnn_raw(cb, inputs, array(initialStates), goBackwards, mask,
                                 array(constants), unroll).drain());
  }
%}
