/* The C# code of the proxy classes (included by kbackend.i under SWIGCSHARP): Tensor, TensorList
 * and CompiledFunction are IDisposable and release their native reference in Dispose() or, as a
 * safety net, in their finalizer; Tensor has operators; K gets Keras' defaults as overloads and
 * the lambda forms of map_fn / foldl / foldr / rnn. */

/* ---- handles: IDisposable + finalizer, with a live count for leak checks ---------------------- */
%define KB_CSHARP_HANDLE(CTYPE, CSTYPE)
%typemap(csbody) CTYPE %{
  private global::System.Runtime.InteropServices.HandleRef swigCPtr;
  protected bool swigCMemOwn;
  private static long live;

  internal CSTYPE(global::System.IntPtr cPtr, bool cMemoryOwn) {
    swigCMemOwn = cMemoryOwn;
    swigCPtr = new global::System.Runtime.InteropServices.HandleRef(this, cPtr);
    if (cMemoryOwn && cPtr != global::System.IntPtr.Zero)
      global::System.Threading.Interlocked.Increment(ref live);
  }

  internal static global::System.Runtime.InteropServices.HandleRef getCPtr(CSTYPE obj) {
    if (obj != null && obj.swigCPtr.Handle == global::System.IntPtr.Zero)
      throw new global::System.ObjectDisposedException(typeof(CSTYPE).Name);
    return (obj == null) ? new global::System.Runtime.InteropServices.HandleRef(null, global::System.IntPtr.Zero) : obj.swigCPtr;
  }

  /// <summary>How many native references of this type C# objects hold now.</summary>
  public static long LiveCount { get { return global::System.Threading.Interlocked.Read(ref live); } }

  /// <summary>True once disposed.</summary>
  public bool IsDisposed { get { lock (this) { return swigCPtr.Handle == global::System.IntPtr.Zero; } } }
%}
%typemap(csdisposing, methodname="Dispose", methodmodifiers="protected", parameters="bool disposing") CTYPE {
    lock(this) {
      if (swigCPtr.Handle != global::System.IntPtr.Zero) {
        if (swigCMemOwn) {
          swigCMemOwn = false;
          $imcall;
          global::System.Threading.Interlocked.Decrement(ref live);
        }
        swigCPtr = new global::System.Runtime.InteropServices.HandleRef(null, global::System.IntPtr.Zero);
      }
    }
  }
%enddef
KB_CSHARP_HANDLE(kb_tensor, Tensor)
KB_CSHARP_HANDLE(kb_tensor_list, TensorList)
KB_CSHARP_HANDLE(kb_compiled_function, CompiledFunction)
KB_CSHARP_HANDLE(kb_model, Model)

%typemap(csinterfaces) kb_tensor_list
  "global::System.IDisposable, global::System.Collections.Generic.IReadOnlyList<Tensor>"

/* ---- Tensor ------------------------------------------------------------------------------------ */
%typemap(cscode) kb_tensor %{
  // ---- construction from C# data (a copy; row-major) ----
  public static Tensor Of(float[] data, params long[] shape) { return Of(new global::System.ReadOnlySpan<float>(data), shape); }
  public static Tensor Of(double[] data, params long[] shape) { return Of(new global::System.ReadOnlySpan<double>(data), shape); }
  public static Tensor Of(int[] data, params long[] shape) { return Of(new global::System.ReadOnlySpan<int>(data), shape); }
  public static Tensor Of(long[] data, params long[] shape) { return Of(new global::System.ReadOnlySpan<long>(data), shape); }
  public static Tensor Of(bool[] data, params long[] shape) { return Of<bool>(data, DType.BOOL, shape); }
  public static Tensor Of(byte[] data, params long[] shape) { return Of<byte>(data, DType.UINT8, shape); }

  public static Tensor Of(global::System.ReadOnlySpan<float> data, params long[] shape) { return Of(data, DType.FLOAT32, shape); }
  public static Tensor Of(global::System.ReadOnlySpan<double> data, params long[] shape) { return Of(data, DType.FLOAT64, shape); }
  public static Tensor Of(global::System.ReadOnlySpan<int> data, params long[] shape) { return Of(data, DType.INT32, shape); }
  public static Tensor Of(global::System.ReadOnlySpan<long> data, params long[] shape) { return Of(data, DType.INT64, shape); }

  /// <summary>Raw data of any dtype (its size in bytes must match dtype and shape).</summary>
  public static unsafe Tensor Of<T>(global::System.ReadOnlySpan<T> data, DType dtype, params long[] shape) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(data);
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      return K.tensor_from_data(new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length), dtype, shape);
    }
  }

  public static Tensor Scalar(float value) { return Of(new[] { value }); }
  public static Tensor Scalar(double value) { return Of(new[] { value }); }
  public static Tensor Scalar(int value) { return Of(new[] { value }); }
  public static Tensor Scalar(long value) { return Of(new[] { value }); }

  // ---- properties ----
  /// <summary>The static shape (int_shape): -1 for unknown dimensions, null for an unknown rank.</summary>
  public long[] Shape {
    get {
      long rank = K.int_shape_rank(this);
      if (rank < 0) return null;
      var dims = new long[rank];
      for (int i = 0; i < rank; ++i) dims[i] = K.int_shape_dim(this, i);
      return dims;
    }
  }
  public long NDim { get { return K.ndim(this); } }
  public DType DType { get { return K.dtype(this); } }
  public string Name { get { return K.tensor_name(this); } }
  /// <summary>Equal ids: the same graph value.</summary>
  public long Id { get { return K.tensor_id(this); } }

  public override string ToString() {
    if (IsDisposed) return "Tensor(disposed)";
    var s = Shape;
    return "Tensor(" + Name + ", shape=(" + (s == null ? "?" : string.Join(", ", s)) + "), " + DType + ")";
  }

  // ---- values out ----
  public Tensor Eval() { return K.eval(this); }
  public float[] ToFloatArray() { return CopyOut<float>(DType.FLOAT32); }
  public double[] ToDoubleArray() { return CopyOut<double>(DType.FLOAT64); }
  public int[] ToIntArray() { return CopyOut<int>(DType.INT32); }
  public long[] ToLongArray() { return CopyOut<long>(DType.INT64); }

  /// <summary>The value as a float (a tensor of one element).</summary>
  public float ToFloat() {
    var v = ToFloatArray();
    if (v.Length != 1) throw new global::System.InvalidOperationException("ToFloat: " + v.Length + " elements");
    return v[0];
  }

  /// <summary>Copies the value (in its own dtype) into dst, which must be exactly its size in bytes.</summary>
  public unsafe void CopyTo<T>(global::System.Span<T> dst) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(dst);
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      K.tensor_copy_to(this, new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length));
    }
  }

  private T[] CopyOut<T>(DType dtype) where T : struct {
    Tensor t = this;
    bool own = false;
    try {
      if (DType != dtype) {
        t = K.cast(t, dtype);
        own = true;
      }
      long[] s = t.Shape;
      if (s == null || global::System.Array.Exists(s, d => d < 0)) {
        Tensor e = K.eval(t);
        if (own) t.Dispose();
        t = e;
        own = true;
        s = t.Shape;
      }
      long n = 1;
      foreach (long d in s) n *= d;
      var result = new T[n];
      t.CopyTo<T>(result);
      return result;
    } finally {
      if (own) t.Dispose();
    }
  }

  /// <summary>A scalar of this tensor's dtype (as TensorFlow converts Python numbers).</summary>
  public Tensor ScalarLike(double value) {
    switch (DType) {
      case DType.FLOAT32: return Of(new[] { (float)value });
      case DType.FLOAT64: return Of(new[] { value });
      case DType.INT32: return Of(new[] { (int)value });
      case DType.INT64: return Of(new[] { (long)value });
      default:
        using (var v = Of(new[] { value })) return K.cast(v, DType);
    }
  }

  private static Tensor WithScalar(Tensor x, double value, global::System.Func<Tensor, Tensor, Tensor> op, bool scalarFirst) {
    using (var s = x.ScalarLike(value)) return scalarFirst ? op(s, x) : op(x, s);
  }

  // ---- operators ----
  public static Tensor operator +(Tensor x, Tensor y) { return K.add(x, y); }
  public static Tensor operator +(Tensor x, double y) { return WithScalar(x, y, K.add, false); }
  public static Tensor operator +(double x, Tensor y) { return WithScalar(y, x, K.add, true); }
  public static Tensor operator -(Tensor x, Tensor y) { return K.subtract(x, y); }
  public static Tensor operator -(Tensor x, double y) { return WithScalar(x, y, K.subtract, false); }
  public static Tensor operator -(double x, Tensor y) { return WithScalar(y, x, K.subtract, true); }
  public static Tensor operator *(Tensor x, Tensor y) { return K.multiply(x, y); }
  public static Tensor operator *(Tensor x, double y) { return WithScalar(x, y, K.multiply, false); }
  public static Tensor operator *(double x, Tensor y) { return WithScalar(y, x, K.multiply, true); }
  public static Tensor operator /(Tensor x, Tensor y) { return K.divide(x, y); }
  public static Tensor operator /(Tensor x, double y) { return WithScalar(x, y, K.divide, false); }
  public static Tensor operator /(double x, Tensor y) { return WithScalar(y, x, K.divide, true); }
  public static Tensor operator -(Tensor x) { return K.negative(x); }
  public static Tensor operator <(Tensor x, Tensor y) { return K.less(x, y); }
  public static Tensor operator >(Tensor x, Tensor y) { return K.greater(x, y); }
  public static Tensor operator <=(Tensor x, Tensor y) { return K.less_equal(x, y); }
  public static Tensor operator >=(Tensor x, Tensor y) { return K.greater_equal(x, y); }

  public Tensor Dot(Tensor y) { return K.dot(this, y); }
  public Tensor Pow(double a) { return K.pow(this, a); }
  public Tensor Square() { return K.square(this); }
  public Tensor Reshape(params long[] shape) { return K.reshape(this, shape); }
  public Tensor Cast(DType dtype) { return K.cast(this, dtype); }

  /// <summary>x[begin:end:strides] over the leading axes (strided_slice).</summary>
  public Tensor Slice(long[] begin, long[] end, long[] strides) {
    return K.strided_slice(this, begin, end, strides, 0, 0, 0, 0);
  }
%}

/* ---- TensorList: a read-only list of new Tensor references ------------------------------------- */
%typemap(cscode) kb_tensor_list %{
  /// <summary>A new reference to entry i (dispose it, or let it be collected).</summary>
  public Tensor this[int index] {
    get {
      if (index < 0 || index >= Count) throw new global::System.ArgumentOutOfRangeException("index");
      return K.tensor_list_get(this, (ulong)index);
    }
  }

  public int Count { get { return checked((int)K.tensor_list_size(this)); } }

  public global::System.Collections.Generic.IEnumerator<Tensor> GetEnumerator() {
    for (int i = 0; i < Count; ++i) yield return this[i];
  }

  global::System.Collections.IEnumerator global::System.Collections.IEnumerable.GetEnumerator() {
    return GetEnumerator();
  }

  /// <summary>The entries as an array that outlives this list; disposes this list.</summary>
  public Tensor[] Drain() {
    try {
      var r = new Tensor[Count];
      for (int i = 0; i < r.Length; ++i) r[i] = this[i];
      return r;
    } finally {
      Dispose();
    }
  }
%}

/* ---- CompiledFunction ---------------------------------------------------------------------- */
%typemap(cscode) kb_compiled_function %{
  /// <summary>Runs the function on constants (Tensor.Of(...)) in the order of its inputs.</summary>
  public Tensor[] Call(params Tensor[] inputs) { return K.function_call(this, inputs).Drain(); }

  public DeviceKind Device {
    get { return K.function_device(this); }
    set { K.function_set_device(this, value); }
  }

  /// <summary>Where the function runs by name: "cpu" or "cuda:N"; set "cpu", "cuda" or "cuda:N"
  /// (N: this process' GPU).</summary>
  public string DeviceName {
    get { return K.function_device_name(this); }
    set { K.function_set_device_name(this, value); }
  }
%}

/* ---- Model: a Keras model with several inputs and outputs ----------------------------------- */
%typemap(cscode) kb_model %{
  /// <summary>A model from a Keras HDF5 file, compiled from its training_config when it has one.</summary>
  public static Model Load(string path) { return K.model_load(path, true); }

  /// <summary>A model from Keras' JSON (model.to_json()), its weights initialized as Keras does.</summary>
  public static Model FromJson(string json) { return K.model_from_json(json); }

  /// <summary>Keras' compile: losses one per output (or one for all), metrics ("accuracy"),
  /// options as JSON ({"optimizer": {"lr": 0.01}, "loss_weights": [...]}).</summary>
  public void Compile(string optimizer, string[] losses, string[] metrics = null, string optionsJson = null) {
    K.model_compile(this, optimizer, losses, metrics, optionsJson);
  }

  /// <summary>Keras' fit: x one tensor per input, y one per output; verbose 0, 1 (progress bar) or
  /// 2; options as JSON ({"shuffle", "seed", "validation_split", ...}). The per-epoch history as
  /// JSON. callback (null: none) runs after each batch (batch &gt;= 0) and each epoch (batch == -1) with
  /// the values so far as JSON; returning true stops training, and what it throws fails Fit at
  /// once and comes out of it.</summary>
  public string Fit(Tensor[] x, Tensor[] y, long batchSize = 32, long epochs = 1, int verbose = 1, string optionsJson = null,
                    global::System.Func<long, long, string, bool> callback = null) {
    global::System.Exception thrown = null;
    Native.FitCallback cb = null;
    if (callback != null) {
      cb = (global::System.IntPtr ud, long epoch, long batch, global::System.IntPtr logs) => {
        try {
          return callback(epoch, batch, Native.Utf8(logs)) ? 1 : 0;
        } catch (global::System.Exception e) {
          thrown = e;  // fit fails at once (the error set) and rethrows it
          K.set_callback_error("fit: the C# callback threw " + e.GetType().FullName);
          return 1;
        }
      };
    }
    string history = null;
    try {
      history = K.model_fit(this, x, y, batchSize, epochs, verbose, optionsJson, cb);
    } catch (KBackendException) when (thrown != null) {
      // the library's report of the callback's failure: the callback's own exception instead
    }
    if (thrown != null) global::System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(thrown).Throw();
    return history;
  }

  /// <summary>Compile with its options as values (loss weights, the optimizer's config).</summary>
  public void Compile(string optimizer, string[] losses, string[] metrics, CompileOptions options) {
    K.model_compile(this, optimizer, losses, metrics, options.ToJson());
  }

  /// <summary>Fit with its arguments as values (new FitOptions(): Keras' defaults); callback (null:
  /// none) gets Keras' logs as values and may stop training. The history as values.</summary>
  public History Fit(Tensor[] x, Tensor[] y, FitOptions options,
                     global::System.Func<long, long, global::System.Collections.Generic.IReadOnlyDictionary<string, double>, bool> callback = null) {
    global::System.Func<long, long, string, bool> relay = null;
    if (callback != null) relay = (epoch, batch, logs) => callback(epoch, batch, History.Logs(logs));
    return new History(Fit(x, y, options.BatchSize, options.Epochs, checked((int)options.Verbose),
                           options.ToJson(), relay));
  }

  /// <summary>Keras' evaluate: the loss, then the metrics (MetricsNames); verbose 1: Keras'
  /// progress bar.</summary>
  public double[] Evaluate(Tensor[] x, Tensor[] y, long batchSize = 32, int verbose = 1) {
    using (var values = K.model_evaluate(this, x, y, batchSize, verbose)) return values.ToDoubleArray();
  }

  /// <summary>Evaluate with its arguments as values.</summary>
  public double[] Evaluate(Tensor[] x, Tensor[] y, EvaluateOptions options) {
    return Evaluate(x, y, options.BatchSize, checked((int)options.Verbose));
  }

  /// <summary>Keras' predict: one tensor per output.</summary>
  public Tensor[] Predict(Tensor[] x, long batchSize = 32, int verbose = 0) {
    return K.model_predict(this, x, batchSize, verbose).Drain();
  }

  /// <summary>Predict with its arguments as values.</summary>
  public Tensor[] Predict(Tensor[] x, PredictOptions options) {
    return Predict(x, options.BatchSize, checked((int)options.Verbose));
  }

  /// <summary>The outputs of one batch, one tensor per output.</summary>
  public Tensor[] PredictOnBatch(params Tensor[] x) { return K.model_predict_on_batch(this, x).Drain(); }

  /// <summary>One gradient step on one batch: the loss, then the metrics.</summary>
  public double[] TrainOnBatch(Tensor[] x, Tensor[] y) {
    using (var values = K.model_train_on_batch(this, x, y)) return values.ToDoubleArray();
  }

  /// <summary>The loss and the metrics of one batch, without training.</summary>
  public double[] TestOnBatch(Tensor[] x, Tensor[] y) {
    using (var values = K.model_test_on_batch(this, x, y)) return values.ToDoubleArray();
  }

  /// <summary>The names of Evaluate's values, as a JSON list (["loss", "acc"]).</summary>
  public string MetricsNames { get { return K.model_metrics_names(this); } }

  /// <summary>Keras' model.save, with the optimizer's state unless told otherwise.</summary>
  public void Save(string path, bool includeOptimizer = true) { K.model_save(this, path, includeOptimizer); }

  /// <summary>Save with its arguments as values.</summary>
  public void Save(string path, SaveOptions options) { Save(path, options.IncludeOptimizer); }

  /// <summary>The model's inference graph as an ONNX file (opset 17, the batch dim free unless
  /// the options fix it), checked by ONNX's checker; an operation with no ONNX form throws
  /// naming its layer.</summary>
  public void ExportOnnx(string path, ExportOnnxOptions options = null) {
    K.model_export_onnx(this, path, (options ?? new ExportOnnxOptions()).ToJson());
  }

  /// <summary>A copy (uncompiled, the same weights' values) whose float32 layers take the dtype
  /// policy <paramref name="policy"/> ("mixed_bfloat16": bfloat16 computation over float32
  /// variables), as Keras' clone_model with each layer's dtype set.</summary>
  public Model WithDtypePolicy(string policy) { return K.model_with_dtype_policy(this, policy); }

  /// <summary>Keras' model.summary() text.</summary>
  public string Summary() { return K.model_summary(this); }

  /// <summary>Keras' model.to_json().</summary>
  public string ToJson() { return K.model_to_json(this); }

  /// <summary>The model's input placeholders, to build on (extra losses, gradients, functions).</summary>
  public Tensor[] Inputs { get { return K.model_inputs(this).Drain(); } }

  /// <summary>The model's outputs as graph values.</summary>
  public Tensor[] Outputs { get { return K.model_outputs(this).Drain(); } }

  /// <summary>The model's weight variables.</summary>
  public Tensor[] Weights { get { return K.model_weights(this).Drain(); } }

  /// <summary>Lets model files and JSON name the layer class className (a Lambda, a layer of
  /// one's own): fn(layer, configJson, inputs) builds its outputs with kbackend's functions. fn
  /// lives as long as the process (a class registered again is replaced); what it throws fails the
  /// load, naming the layer.</summary>
  public static void RegisterLayer(string className, global::System.Func<LayerContext, string, Tensor[], Tensor[]> fn) {
    if (fn == null) throw new global::System.ArgumentNullException("fn");
    Native.LayerCallback cb = (global::System.IntPtr ud, global::System.IntPtr layer, global::System.IntPtr config,
                               global::System.IntPtr inputs, global::System.UIntPtr n, global::System.IntPtr outputs,
                               global::System.UIntPtr capacity, out global::System.UIntPtr count) => {
      count = global::System.UIntPtr.Zero;
      var context = new LayerContext(layer);
      try {
        var ins = new Tensor[(int)n];
        for (int i = 0; i < ins.Length; ++i)
          ins[i] = K.borrow((long)global::System.Runtime.InteropServices.Marshal.ReadIntPtr(inputs, i * global::System.IntPtr.Size));
        Tensor[] outs = fn(context, Native.Utf8(config), ins);
        if (outs == null || global::System.Array.IndexOf(outs, null) >= 0)
          throw new global::System.ArgumentNullException("outputs", "the layer function returned a null tensor");
        if ((ulong)outs.Length > (ulong)capacity)
          throw new global::System.ArgumentException("the layer function returned more outputs than the layer has");
        for (int i = 0; i < outs.Length; ++i)
          global::System.Runtime.InteropServices.Marshal.WriteIntPtr(outputs, i * global::System.IntPtr.Size, (global::System.IntPtr)K.retained(outs[i]));
        count = (global::System.UIntPtr)outs.Length;
        return 0;
      } catch (global::System.Exception e) {
        return K.set_callback_error("custom layer: the C# function threw " + e.GetType().FullName + ": " + e.Message);
      } finally {
        context.Close();
      }
    };
    lock (Native.Layers) Native.Layers.Add(cb);
    K.register_layer_raw(className, cb);
  }
%}

/* ---- K: Keras' defaults as overloads, and the lambda forms of the loops ------------------------ */
%pragma(csharp) modulecode=%{
  private static long[] Axis(long axis) { return new[] { axis }; }

  // ---- data-parallel training ----
  /// <summary>The sum or average over the processes of every process' values, in place (metrics).</summary>
  public static unsafe void dist_all_reduce<T>(global::System.Span<T> values, DType dtype, ReduceOp op) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(values);
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      dist_all_reduce(new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length), dtype, op);
    }
  }
  public static double[] dist_all_reduce(double[] values, ReduceOp op) { dist_all_reduce<double>(values, DType.FLOAT64, op); return values; }
  public static float[] dist_all_reduce(float[] values, ReduceOp op) { dist_all_reduce<float>(values, DType.FLOAT32, op); return values; }
  public static int[] dist_all_reduce(int[] values, ReduceOp op) { dist_all_reduce<int>(values, DType.INT32, op); return values; }
  public static long[] dist_all_reduce(long[] values, ReduceOp op) { dist_all_reduce<long>(values, DType.INT64, op); return values; }

  // ---- creation ----
  /// <summary>A placeholder; -1 for unknown dimensions; floatx.</summary>
  public static Tensor placeholder(params long[] shape) { return placeholder(shape, shape.Length, DType.DTYPE_DEFAULT, false, null); }
  public static Tensor placeholder(long[] shape, DType dtype, string name = null) { return placeholder(shape, shape.Length, dtype, false, name); }

  public static unsafe Tensor variable<T>(global::System.ReadOnlySpan<T> data, DType dataDType, long[] shape, DType dtype = DType.DTYPE_DEFAULT, string name = null) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(data);
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      return variable_from_data(new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length), dataDType, shape, dtype, name);
    }
  }
  public static Tensor variable(float[] data, params long[] shape) { return variable<float>(data, DType.FLOAT32, shape); }
  public static Tensor variable(double[] data, params long[] shape) { return variable<double>(data, DType.FLOAT64, shape); }

  public static unsafe Tensor constant(double value, long[] shape = null, DType dtype = DType.DTYPE_DEFAULT, string name = null) {
    double v = value;
    return constant_from_data(new NativeBuffer((global::System.IntPtr)(&v), sizeof(double)), DType.FLOAT64, new long[0], dtype, shape, name);
  }
  public static unsafe Tensor constant(float[] data, params long[] shape) {
    fixed (float* p = data) {
      return constant_from_data(new NativeBuffer((global::System.IntPtr)p, (ulong)data.Length * 4), DType.FLOAT32, shape, DType.DTYPE_DEFAULT, null, null);
    }
  }

  public static unsafe void set_value<T>(Tensor x, global::System.ReadOnlySpan<T> data, DType dtype, params long[] shape) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(data);
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      set_value_data(x, new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length), dtype, shape);
    }
  }
  public static void set_value(Tensor x, float[] data, params long[] shape) { set_value<float>(x, data, DType.FLOAT32, shape); }

  public static Tensor zeros(params long[] shape) { return zeros(shape, DType.DTYPE_DEFAULT, null); }
  public static Tensor ones(params long[] shape) { return ones(shape, DType.DTYPE_DEFAULT, null); }
  public static Tensor random_normal_variable(long[] shape, double mean, double scale, long? seed = null) {
    return random_normal_variable(shape, mean, scale, DType.DTYPE_DEFAULT, null, seed);
  }
  public static Tensor random_uniform_variable(long[] shape, double low, double high, long? seed = null) {
    return random_uniform_variable(shape, low, high, DType.DTYPE_DEFAULT, null, seed);
  }

  // ---- reductions: axis=None, keepdims=False ----
  public static Tensor sum(Tensor x, long axis, bool keepdims = false) { return sum(x, Axis(axis), keepdims); }
  public static Tensor mean(Tensor x, long axis, bool keepdims = false) { return mean(x, Axis(axis), keepdims); }
  public static Tensor max(Tensor x, long axis, bool keepdims = false) { return max(x, Axis(axis), keepdims); }
  public static Tensor min(Tensor x, long axis, bool keepdims = false) { return min(x, Axis(axis), keepdims); }
  public static Tensor std(Tensor x, long[] axes, bool keepdims) { return std_(x, axes, keepdims); }
  public static Tensor std(Tensor x) { return std_(x, null, false); }
  public static Tensor std(Tensor x, long axis, bool keepdims = false) { return std_(x, Axis(axis), keepdims); }

  // ---- nn ----
  public static Tensor conv2d(Tensor x, Tensor kernel, long[] strides = null, string padding = "valid", string dataFormat = null, long[] dilationRate = null) {
    return conv2d(x, kernel, strides, parse_padding(padding), dataFormat == null ? DataFormat.DATA_FORMAT_DEFAULT : parse_data_format(dataFormat), dilationRate);
  }
  public static Tensor pool2d(Tensor x, long[] poolSize, long[] strides = null, string padding = "valid", string dataFormat = null, string poolMode = "max") {
    return pool2d(x, poolSize, strides, parse_padding(padding), dataFormat == null ? DataFormat.DATA_FORMAT_DEFAULT : parse_data_format(dataFormat), parse_pool_mode(poolMode));
  }

  // ---- functions, gradients, updates ----
  public static CompiledFunction function(Tensor[] inputs, Tensor[] outputs) { return function(inputs, outputs, null); }

  // ---- loops: the callback runs while the graph is built; an exception it throws comes back
  // out of the call unchanged ----
  /// <summary>The devices this process can run on: the CPU, then its GPU if it has one.</summary>
  public static DeviceInfo[] list_devices() {
    var output = new global::System.Collections.Generic.List<DeviceInfo>();
    foreach (var kind in new[] { DeviceKind.CPU, DeviceKind.CUDA })
      for (long i = 0, n = device_count(kind); i < n; ++i)
        output.Add(new DeviceInfo(kind, device_index(kind, i), device_name(kind, i), device_memory(kind, i)));
    return output.ToArray();
  }

  // ---- raw data ----
  /// <summary>Keras' cast_to_floatx: the values converted to floatx, as a 1-D tensor.</summary>
  public static unsafe Tensor cast_to_floatx<T>(T[] values) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(new global::System.ReadOnlySpan<T>(values));
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      return cast_to_floatx_raw(new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length), Native.DTypeOf<T>());
    }
  }

  /// <summary>Keras' get_variable_shape: a variable's shape.</summary>
  public static long[] get_variable_shape(Tensor x) {
    using (var shape = get_variable_shape_raw(x)) return shape.ToLongArray();
  }

  /// <summary>A sparse tensor from COO data: nnz x rank coordinates (row-major) and nnz values
  /// converted to dtype (DTYPE_DEFAULT: floatx).</summary>
  public static unsafe Tensor sparse_from_coo<T>(long[] indices, T[] values, long[] denseShape, DType dtype = DType.DTYPE_DEFAULT, string name = null) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(new global::System.ReadOnlySpan<T>(values));
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      return sparse_from_coo_raw(indices, new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length), Native.DTypeOf<T>(), denseShape, dtype, name);
    }
  }

  /// <summary>A (rows, cols) sparse matrix in CSR form (scipy.sparse.csr_matrix): indptr has
  /// rows + 1 offsets, row r's entries are colIndices / values from indptr[r] to indptr[r + 1].</summary>
  public static unsafe Tensor sparse_from_csr<T>(long[] indptr, long[] colIndices, T[] values, long cols, DType dtype = DType.DTYPE_DEFAULT, string name = null) where T : struct {
    var bytes = global::System.Runtime.InteropServices.MemoryMarshal.AsBytes(new global::System.ReadOnlySpan<T>(values));
    fixed (byte* p = &global::System.Runtime.InteropServices.MemoryMarshal.GetReference(bytes)) {
      return sparse_from_csr_raw(indptr, colIndices, new NativeBuffer((global::System.IntPtr)p, (ulong)bytes.Length), Native.DTypeOf<T>(), cols, dtype, name);
    }
  }

  /// <summary>Where print_tensor writes (null: stderr again); called from whichever thread
  /// prints. What it throws is dropped (print_tensor has no status to report it by).</summary>
  public static void set_print_sink(global::System.Action<string> sink) {
    if (sink == null) {
      set_print_sink_raw(null);
      return;
    }
    Native.PrintCallback cb = (global::System.IntPtr text, global::System.IntPtr ud) => {
      try { sink(Native.Utf8(text)); } catch (global::System.Exception) { }
    };
    lock (Native.PrintSinks) Native.PrintSinks.Add(cb);
    set_print_sink_raw(cb);
  }

  private static Native.BranchCallback Branch(global::System.Func<Tensor> fn, string who) {
    if (fn == null) throw new global::System.ArgumentNullException("fn", who + ": a branch is null");
    return (global::System.IntPtr ud, out global::System.IntPtr result) => {
      result = global::System.IntPtr.Zero;
      try {
        result = Native.Result(fn(), who);
        return 0;
      } catch (global::System.Exception e) {
        return Native.Keep(e, who);
      }
    };
  }

  /// <summary>Keras' switch with callables for the branches: each is called at most once, while
  /// the graph is built; what one throws comes out unchanged.</summary>
  public static Tensor switch_(Tensor condition, global::System.Func<Tensor> thenFn, global::System.Func<Tensor> elseFn) {
    return switch_fn_raw(condition, Branch(thenFn, "switch"), Branch(elseFn, "switch"));
  }

  /// <summary>Keras' in_train_phase with callables: a fixed mode calls only the chosen one;
  /// training null with Training.TENSOR follows the learning phase.</summary>
  public static Tensor in_train_phase(global::System.Func<Tensor> x, global::System.Func<Tensor> alt, Tensor training = null, Training mode = Training.TENSOR) {
    return in_train_phase_fn_raw(Branch(x, "in_train_phase"), Branch(alt, "in_train_phase"), training, mode);
  }

  /// <summary>Keras' in_test_phase with callables: in_train_phase(alt, x, training, mode).</summary>
  public static Tensor in_test_phase(global::System.Func<Tensor> x, global::System.Func<Tensor> alt, Tensor training = null, Training mode = Training.TENSOR) {
    return in_test_phase_fn_raw(Branch(x, "in_test_phase"), Branch(alt, "in_test_phase"), training, mode);
  }

  public static Tensor map_fn(global::System.Func<Tensor, Tensor> fn, Tensor elems, string name = null, DType dtype = DType.DTYPE_DEFAULT) {
    Native.MapCallback cb = (global::System.IntPtr ud, global::System.IntPtr x, out global::System.IntPtr result) => {
      result = global::System.IntPtr.Zero;
      try {
        result = Native.Result(fn(borrow((long)x)), "map_fn");
        return 0;
      } catch (global::System.Exception e) {
        return Native.Keep(e, "map_fn");
      }
    };
    return map_fn_raw(cb, elems, name, dtype);
  }

  private static Native.FoldCallback Fold(global::System.Func<Tensor, Tensor, Tensor> fn, string who) {
    return (global::System.IntPtr ud, global::System.IntPtr acc, global::System.IntPtr x, out global::System.IntPtr result) => {
      result = global::System.IntPtr.Zero;
      try {
        result = Native.Result(fn(borrow((long)acc), borrow((long)x)), who);
        return 0;
      } catch (global::System.Exception e) {
        return Native.Keep(e, who);
      }
    };
  }

  /// <summary>fn(acc, x); initializer null: the first element starts.</summary>
  public static Tensor foldl(global::System.Func<Tensor, Tensor, Tensor> fn, Tensor elems, Tensor initializer = null) {
    return foldl_raw(Fold(fn, "foldl"), elems, initializer, null);
  }

  public static Tensor foldr(global::System.Func<Tensor, Tensor, Tensor> fn, Tensor elems, Tensor initializer = null) {
    return foldr_raw(Fold(fn, "foldr"), elems, initializer, null);
  }

  /// <summary>step(input, states) -> (output, newStates), as Keras' step_function. Returns
  /// (lastOutput, outputs, newStates).</summary>
  public static global::System.Tuple<Tensor, Tensor, Tensor[]> rnn(
      global::System.Func<Tensor, Tensor[], global::System.Tuple<Tensor, Tensor[]>> step, Tensor inputs,
      Tensor[] initialStates, bool goBackwards = false, Tensor mask = null, Tensor[] constants = null,
      bool unroll = false) {
    Native.StepCallback cb = (global::System.IntPtr ud, global::System.IntPtr input, global::System.IntPtr states, global::System.UIntPtr n,
                              out global::System.IntPtr output, out global::System.IntPtr newStates) => {
      output = global::System.IntPtr.Zero;
      newStates = global::System.IntPtr.Zero;
      try {
        var args = new Tensor[(int)n];
        for (int i = 0; i < args.Length; ++i)
          args[i] = borrow((long)global::System.Runtime.InteropServices.Marshal.ReadIntPtr(states, i * global::System.IntPtr.Size));
        var r = step(borrow((long)input), args);
        if (r == null || r.Item1 == null || r.Item2 == null || global::System.Array.IndexOf(r.Item2, null) >= 0)
          throw new global::System.ArgumentNullException("step", "rnn: the step function returned null");
        long list = list_new_raw(r.Item2);
        output = Native.Result(r.Item1, "rnn");
        newStates = (global::System.IntPtr)list;
        return 0;
      } catch (global::System.Exception e) {
        return Native.Keep(e, "rnn");
      }
    };
    var all = rnn_raw(cb, inputs, initialStates, goBackwards, mask, constants, unroll).Drain();
    var finalStates = new Tensor[all.Length - 2];
    global::System.Array.Copy(all, 2, finalStates, 0, finalStates.Length);
    return global::System.Tuple.Create(all[0], all[1], finalStates);
  }
%}
