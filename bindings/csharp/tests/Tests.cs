using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using KBackend;

// A small console runner: every public static void method of Tests is a test; prints
// "N passed, N failed" and exits non-zero on a failure.
static class Runner {
  static int Main() {
    int passed = 0, failed = 0;
    foreach (var m in typeof(Tests).GetMethods().Where(m => m.IsStatic && m.ReturnType == typeof(void))) {
      try {
        m.Invoke(null, null);
        ++passed;
        Console.WriteLine("PASS " + m.Name);
      } catch (System.Reflection.TargetInvocationException e) {
        ++failed;
        Console.WriteLine("FAIL " + m.Name + ": " + e.InnerException);
      }
    }
    Console.WriteLine(passed + " passed, " + failed + " failed");
    return failed == 0 ? 0 : 1;
  }
}

static class Tests {
  static void Eq(float[] want, float[] got) {
    if (want.Length != got.Length || want.Where((w, i) => Math.Abs(w - got[i]) > 1e-5).Any())
      throw new Exception("want [" + string.Join(",", want) + "], got [" + string.Join(",", got) + "]");
  }
  static void True(bool c, string what) { if (!c) throw new Exception(what); }
  static T Throws<T>(Action a) where T : Exception {
    try { a(); } catch (T e) { return e; }
    throw new Exception("expected " + typeof(T).Name);
  }

  public static void ArithmeticAndOperators() {
    var x = Tensor.Of(new float[] { 1, 2, 3, 4 }, 2, 2);
    Eq(new float[] { 3, 5, 7, 9 }, (x * 2.0 + 1.0).ToFloatArray());
    Eq(new float[] { 0, -1, -2, -3 }, (1.0 - x).ToFloatArray());
    Eq(new float[] { -1, -2, -3, -4 }, (-x).ToFloatArray());
    Eq(new float[] { 1, 1, 1, 1 }, (x / x).ToFloatArray());
    Eq(new float[] { 0, 0, 1, 1 }, (x > Tensor.Of(new float[] { 2, 2, 2, 2 }, 2, 2)).Cast(DType.FLOAT32).ToFloatArray());
    True(x.Shape.SequenceEqual(new long[] { 2, 2 }) && x.DType == DType.FLOAT32, "shape/dtype");
    True(K.sum(x).ToFloat() == 10, "sum");
    Eq(new float[] { 2, 3 }, K.mean(x, 0).ToFloatArray());
    Eq(new float[] { 7, 10, 15, 22 }, x.Dot(x).ToFloatArray());
    Eq(new float[] { 2, 4 }, x.Reshape(4).Slice(new long[] { 1 }, new long[] { 4 }, new long[] { 2 }).ToFloatArray());
    True(K.argmax(x).ToLongArray().SequenceEqual(new long[] { 1, 1 }), "argmax");
  }

  public static void SpansInAndOut() {
    var data = new float[] { 9, 1, 2, 3, 4 };
    var t = Tensor.Of(new ReadOnlySpan<float>(data, 1, 4), 4);
    Eq(new float[] { 1, 2, 3, 4 }, t.ToFloatArray());
    var dst = new float[4];
    var doubled = t * 2.0;
    doubled.CopyTo<float>(dst);
    Eq(new float[] { 2, 4, 6, 8 }, dst);
  }

  public static void ErrorsAreExceptions() {
    var x = Tensor.Of(new float[] { 1, 2, 3, 4 }, 2, 2);
    var e = Throws<KBackendException>(() => x.Reshape(3, 3));
    True(e.Status == Status.ERROR_SHAPE && e.Message.StartsWith("reshape:"), e.Message);
    True(Throws<KBackendException>(() => Tensor.Of(new float[] { 1, 2, 3 }, 2, 2)).Message.Contains("bytes"), "short data");
    Throws<KBackendException>(() => K.slice(x, new long[] { 0 }, new long[] { 1, 1 }));
    x.Dispose();
    True(x.IsDisposed, "disposed");
    Throws<ObjectDisposedException>(() => x.Square());
    // A missing file is System.IO's error (api/kbackend.toml's [errors]).
    var missing = Throws<FileNotFoundException>(() => Model.Load("/nonexistent/m.h5"));
    True(missing.Message.Contains("/nonexistent/m.h5: no such file"), missing.Message);
  }

  // One process without dist_init: rank 0 of 1, collectives the identity (tests/dist runs them
  // on two processes through the C ABI).
  public static void OneProcessIsRankZeroOfOne() {
    True(K.dist_rank() == 0 && K.dist_size() == 1, "rank 0 of 1");
    var x = Tensor.Of(new float[] { 1, -2, 3 }, 3);
    var same = new float[] { 1, -2, 3 };
    Eq(same, K.all_reduce(x, ReduceOp.AVERAGE).ToFloatArray());
    Eq(same, K.broadcast(x, 0).ToFloatArray());
    Eq(same, K.all_gather(x).ToFloatArray());
    var sums = K.dist_all_reduce(new double[] { 4, 5 }, ReduceOp.SUM);
    True(sums[0] == 4 && sums[1] == 5, "dist_all_reduce");
    K.dist_barrier();
    var e = Throws<KBackendException>(() => K.broadcast(x, 1));
    True(e.Status == Status.ERROR_INVALID_ARGUMENT && e.Message.Contains("root 1 is not a rank"), e.Message);
  }

  public static void GradientsUpdatesFunctions() {
    var w = K.variable(new float[] { 3 }, 1);
    var g = K.gradients(K.sum(w.Square()), new[] { w }).Drain();
    Eq(new float[] { 6 }, g[0].ToFloatArray());
    var step = K.update_sub(w, g[0] * 0.25);
    var x = K.placeholder(-1);
    using (var f = K.function(new[] { x }, new[] { x + w }, new[] { step })) {
      Eq(new float[] { 4, 5 }, f.Call(Tensor.Of(new float[] { 1, 2 }, 2))[0].ToFloatArray());
    }
    Eq(new float[] { 1.5f }, w.ToFloatArray());
  }

  public static void CallbacksAndTheirExceptions() {
    var x = Tensor.Of(new float[] { 1, 2, 3, 4 }, 2, 2);
    Eq(new float[] { 1, 4, 9, 16 }, K.map_fn(t => t.Square(), x).ToFloatArray());
    Eq(new float[] { 4, 6 }, K.foldl((a, b) => a + b, x).ToFloatArray());
    Eq(new float[] { 2, 2 }, K.foldr((a, b) => a - b, x).ToFloatArray());
    var input = Tensor.Of(new float[] { 1, 2, 3, 4, 5, 6 }, 1, 3, 2);
    var r = K.rnn((i, s) => { var o = i + s[0]; return Tuple.Create(o, new[] { o }); }, input, new[] { K.zeros(1, 2) });
    Eq(new float[] { 9, 12 }, r.Item1.ToFloatArray());
    Eq(new float[] { 1, 2, 4, 6, 9, 12 }, r.Item2.ToFloatArray());
    Eq(new float[] { 9, 12 }, r.Item3[0].ToFloatArray());
    var mine = new InvalidOperationException("mine");
    var thrown = Throws<InvalidOperationException>(() => K.rnn((i, s) => { throw mine; }, input, new[] { K.zeros(1, 2) }));
    True(ReferenceEquals(mine, thrown), "the callback's own exception");
    Throws<ArgumentNullException>(() => K.map_fn(t => null, x));
    True(K.sum(x).ToFloat() == 10, "no stale error");
  }

  public static void Threads() {
    Exception failure = null;
    var threads = Enumerable.Range(0, 8).Select(id => new Thread(() => {
      try {
        for (int i = 0; i < 200; ++i) {
          var x = Tensor.Of(new float[] { id, i }, 2);
          if (i % 10 == 0) Throws<KBackendException>(() => x.Reshape(3));
          True(K.sum(x).ToFloat() == id + i, "sum");
        }
      } catch (Exception e) { failure = e; }
    })).ToList();
    threads.ForEach(t => t.Start());
    threads.ForEach(t => t.Join());
    if (failure != null) throw failure;
  }

  static double RssMiB() {
    return long.Parse(System.IO.File.ReadAllText("/proc/self/statm").Split(' ')[1]) * 4096.0 / (1 << 20);
  }
  static long Settle(long want) {
    for (int i = 0; i < 100 && Tensor.LiveCount > want; ++i) {
      GC.Collect();
      GC.WaitForPendingFinalizers();
    }
    return Tensor.LiveCount;
  }
  static void Churn(Tensor a, int rounds) {
    for (int i = 0; i < rounds; ++i) GC.KeepAlive(a * 2.0 + i); // four tensors, none disposed
  }

  public static void DroppedTensorsAreReleasedWithoutGrowth() {
    var a = Tensor.Of(new float[16], 16);
    long live0 = Settle(0);
    double rss0 = RssMiB();
    for (int round = 0; round < 10; ++round) { // warm-up until a round no longer grows
      Churn(a, 25000);
      Settle(live0);
      double rss = RssMiB();
      if (rss - rss0 < 4) break;
      rss0 = rss;
    }
    // Three measured rounds: a leak grows every round, allocator noise only some, so the
    // smallest growth is the one that counts.
    double least = double.MaxValue;
    for (int round = 0; round < 3; ++round) {
      rss0 = RssMiB();
      Churn(a, 25000); // 100k tensors dropped without Dispose()
      True(Settle(live0) == live0, "native references left after GC: " + Tensor.LiveCount + " vs " + live0);
      least = Math.Min(least, RssMiB() - rss0);
    }
    // A leaked tensor costs at least ~300 bytes: >= 28 MiB a round; finalizers can add a few MiB.
    True(least < 24, "RSS grew by at least " + least + " MiB in each of 3 rounds");
    GC.KeepAlive(a);
  }

  public static void KeptTensorsAreCounted() {
    long before = Settle(0);
    var kept = Enumerable.Range(0, 100).Select(i => Tensor.Of(new float[1 << 16], 1 << 16)).ToList();
    True(Tensor.LiveCount == before + 100, "kept count");
    kept.ForEach(t => t.Dispose());
    True(Tensor.LiveCount == before, "after Dispose");
  }

  public static void KerasDefaultsAreOverloads() {
    var x = Tensor.Of(new float[] { 1, -2, 3, -4 }, 2, 2);
    Eq(new float[] { 1, 0, 3, 0 }, K.relu(x).ToFloatArray());
    True(K.sum(x, new long[] { 1 }).Shape.SequenceEqual(new long[] { 2 }), "keepdims=False");
    var image = Tensor.Of(new float[] { 1, 2, 3, 4 }, 1, 2, 2, 1);
    var kernel = Tensor.Of(new float[] { 1, 1, 1, 1 }, 2, 2, 1, 1);
    Eq(new float[] { 10 }, K.conv2d(image, kernel).ToFloatArray());
    True(K.conv2d(image, kernel, new long[] { 1, 1 }, Padding.SAME).Shape.SequenceEqual(new long[] { 1, 2, 2, 1 }), "same");
    True(K.arange(3).DType == DType.INT32, "Keras' dtype=int32");
  }

  public static void DevicesAreListedAndChosenByName() {
    True(K.device_count(DeviceKind.CPU) == 1, "one CPU");
    True(K.device_index(DeviceKind.CPU, 0) == 0, "index");
    True(K.device_name(DeviceKind.CPU, 0).Length > 0, "name");
    True(K.device_memory(DeviceKind.CPU, 0) > (1L << 26), "memory");
    Throws<KBackendException>(() => K.device_name(DeviceKind.CPU, 1));
    var devices = K.list_devices();
    True(devices.Length == 1 + K.device_count(DeviceKind.CUDA) && devices[0].Kind == DeviceKind.CPU, "devices");
    True(devices[0].Memory > (1L << 26) && devices[0].Name.Length > 0, devices[0].ToString());
    var x = K.placeholder(2);
    using (var f = K.function(new[] { x }, new[] { x * 2.0 })) {
      K.function_set_device_name(f, "cpu");
      True(K.function_device_name(f) == "cpu", "device name");
      Throws<KBackendException>(() => K.function_set_device_name(f, "tpu"));
    }
  }

  // mlp.keras, saved by Keras 3.15; mlp_expected.txt holds its inputs, targets and Keras'
  // predictions and test loss (tests/model_files/keras3/make_fixtures.py).
  public static void Keras3ArchivesLoadPredictTrainAndSave() {
    string files = Path.Combine(Environment.GetEnvironmentVariable("KB_MODEL_FILES") ?? "tests/model_files", "keras3");
    string[] text = File.ReadAllText(Path.Combine(files, "mlp_expected.txt"))
                        .Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
    var inv = System.Globalization.CultureInfo.InvariantCulture;
    int rows = int.Parse(text[0]), inputs = int.Parse(text[1]), classes = int.Parse(text[2]);
    double kerasLoss = double.Parse(text[3], inv);
    float[] x = new float[rows * inputs], y = new float[rows * classes], p = new float[rows * classes];
    for (int r = 0, at = 4; r < rows; ++r) {
      for (int i = 0; i < inputs; ++i) x[r * inputs + i] = float.Parse(text[at++], inv);
      for (int i = 0; i < classes; ++i) y[r * classes + i] = float.Parse(text[at++], inv);
      for (int i = 0; i < classes; ++i) p[r * classes + i] = float.Parse(text[at++], inv);
    }
    var xs = new[] { Tensor.Of(x, rows, inputs) };
    var ys = new[] { Tensor.Of(y, rows, classes) };
    string again = Path.Combine(Path.GetTempPath(), "kb_keras3_" + System.Diagnostics.Process.GetCurrentProcess().Id + ".keras");
    try {
      using (var m = Model.Load(Path.Combine(files, "mlp.keras"))) {
        Eq(p, m.Predict(xs, 32)[0].ToFloatArray());
        double loss = m.TestOnBatch(xs, ys)[0];
        True(Math.Abs(loss - kerasLoss) <= 1e-4 * kerasLoss, "Keras' test loss " + kerasLoss + ", got " + loss);
        for (int step = 0; step < 3; ++step) m.TrainOnBatch(xs, ys);
        m.Save(again);  // a Keras 3 archive again, by the extension
        using (var loaded = Model.Load(again)) {
          Eq(m.Predict(xs, 32)[0].ToFloatArray(), loaded.Predict(xs, 32)[0].ToFloatArray());
          True(m.TestOnBatch(xs, ys)[0] == loaded.TestOnBatch(xs, ys)[0], "the same loss after the round trip");
        }
      }
    } finally {
      File.Delete(again);
    }
  }

  public static void ExportsModelsToOnnx() {
    string files = Path.Combine(Environment.GetEnvironmentVariable("KB_MODEL_FILES") ?? "tests/model_files", "keras3");
    string onnx = Path.Combine(Path.GetTempPath(), "kb_onnx_" + System.Diagnostics.Process.GetCurrentProcess().Id + ".onnx");
    try {
      using (var m = Model.Load(Path.Combine(files, "mlp.keras"))) {
        m.ExportOnnx(onnx);  // ONNX's checker passed on it before it was written
        True(new FileInfo(onnx).Length > 1000, "the weights are in the file");
        m.ExportOnnx(onnx, new ExportOnnxOptions { BatchSize = 4 });
        var e = Throws<KBackendException>(() => m.ExportOnnx(onnx, new ExportOnnxOptions { Opset = 18 }));
        True(e.Message.Contains("opset 18"), e.Message);
      }
    } finally {
      File.Delete(onnx);
    }
  }

  // tf.keras' two_outputs.h5: inputs a (5) and b (4), outputs cls (3, softmax) and reg (1).
  public static void ModelsOfSeveralInputsAndOutputs() {
    string path = Path.Combine(Environment.GetEnvironmentVariable("KB_MODEL_FILES") ?? "tests/model_files",
                               "tf_keras", "two_outputs.h5");
    using (var m = Model.Load(path)) {
      var r = new Random(3);
      Func<int, float[]> uniform = n => Enumerable.Range(0, n).Select(i => (float)r.NextDouble()).ToArray();
      float[] a = uniform(100), b = uniform(80), reg = uniform(20), cls = new float[60];
      for (int i = 0; i < 20; ++i) cls[3 * i + r.Next(3)] = 1;
      var x = new[] { Tensor.Of(a, 20, 5), Tensor.Of(b, 20, 4) };
      var y = new[] { Tensor.Of(cls, 20, 3), Tensor.Of(reg, 20, 1) };
      Tensor[] output = m.Predict(x, 8);
      True(output.Length == 2, "two outputs");
      True(output[0].Shape.SequenceEqual(new long[] { 20, 3 }) && output[1].Shape.SequenceEqual(new long[] { 20, 1 }), "shapes");
      float[] p = output[0].ToFloatArray();
      for (int i = 0; i < 20; ++i) True(Math.Abs(p[3 * i] + p[3 * i + 1] + p[3 * i + 2] - 1) < 1e-5, "softmax rows");
      using (var f = K.function(m.Inputs, m.Outputs)) {
        Tensor[] again = f.Call(x);
        Eq(p, again[0].ToFloatArray());
        Eq(output[1].ToFloatArray(), again[1].ToFloatArray());
      }
      True(m.MetricsNames.Contains("cls_loss"), m.MetricsNames);
      double before = m.TestOnBatch(x, y)[0];
      True(m.TestOnBatch(x, y).Length == 3, "the total, then each output's loss");
      for (int step = 0; step < 20; ++step) m.TrainOnBatch(x, y);
      True(m.TestOnBatch(x, y)[0] < before, "trained");
      True(m.Fit(x, y, 8, 2, 0, "{\"shuffle\": false}").Contains("\"cls_loss\""), "history");
      Throws<KBackendException>(() => m.Predict(new[] { x[0] }, 8));
      // The per-batch callback: 20 samples in batches of 8 are 3 batches, then the epoch's end.
      var seen = new List<long>();
      m.Fit(x, y, 8, 2, 0, null, (epoch, batch, logs) => { True(logs.Contains("\"loss\""), logs); seen.Add(batch); return false; });
      True(seen.SequenceEqual(new long[] { 0, 1, 2, -1, 0, 1, 2, -1 }), string.Join(",", seen));
      seen.Clear();
      m.Fit(x, y, 8, 5, 0, null, (epoch, batch, logs) => { seen.Add(batch); return batch == 1; });
      True(seen.SequenceEqual(new long[] { 0, 1, -1 }), "true stops training after the epoch's end, as in Keras");
      var thrown = Throws<InvalidOperationException>(() => m.Fit(x, y, 8, 5, 0, null, (epoch, batch, logs) => { throw new InvalidOperationException("stop here"); }));
      True(thrown.Message == "stop here", thrown.Message);
      True(m.Predict(x, 8).Length == 2, "usable after it");
      // Options as values (FitOptions, CompileOptions, generated from api/kbackend.toml); a key
      // outside its set is refused, naming it.
      var values = new FitOptions { Shuffle = false, ValidationSplit = 0.25 };
      values.ClassWeight[0] = 1;
      values.ClassWeight[-1] = 2.5;
      True(values.ToJson() == "{\"shuffle\": false, \"seed\": 0, \"validation_split\": 0.25, \"initial_epoch\": 0, \"class_weight\": {\"-1\": 2.5, \"0\": 1}, \"distributed\": false}", values.ToJson());
      True(new FitOptions().BatchSize == 32 && new FitOptions().Verbose == 1, "Keras' defaults");
      Throws<ArgumentException>(() => new FitOptions { ValidationSplit = double.NaN }.ToJson());
      // Keras' callbacks run natively: no improvement of 100 in the loss, so training stops when
      // patience (1) runs out, after the second epoch; ReduceLROnPlateau logs the rate.
      History stopped = m.Fit(x, y, new FitOptions { BatchSize = 8, Epochs = 10, Verbose = 0, Callbacks = {
          new ReduceLROnPlateau { Monitor = "loss" },
          new EarlyStopping { Monitor = "loss", Patience = 1, MinDelta = 100 } } });
      True(stopped["loss"].Length == 2 && stopped["learning_rate"].Length == 2, stopped.Json);
      string checkpoint = new ModelCheckpoint { Filepath = "a\"b.keras", SaveFreq = 3 }.ToJson();
      True(checkpoint.Contains("\"filepath\": \"a\\\"b.keras\"") && checkpoint.Contains("\"save_freq\": 3"), checkpoint);
      var refused = Throws<KBackendException>(() => m.Fit(x, y, new FitOptions { Verbose = 0, Callbacks = { new ReduceLROnPlateau { Factor = 2 } } }));
      True(refused.Message.Contains("factor >= 1.0"), refused.Message);
      // The history and the logs as values: one loss per epoch, the logs' at each epoch's end.
      var losses = new List<double>();
      History h = m.Fit(x, y, new FitOptions { BatchSize = 8, Epochs = 2, Verbose = 0, Shuffle = false },
                        (epoch, batch, logs) => { if (batch == -1) losses.Add(logs["loss"]); return false; });
      True(h["cls_loss"].Length == 2 && h["loss"].SequenceEqual(losses), string.Join(",", h["loss"]));
      True(h.Json.Contains("\"cls_loss\""), h.Json);
      var unknown = Throws<KBackendException>(() => m.Fit(x, y, 8, 1, 0, "{\"shufle\": true}"));
      True(unknown.Message.Contains("unknown key 'shufle' (did you mean 'shuffle'?)"), unknown.Message);
      unknown = Throws<KBackendException>(() => m.Compile("sgd", new[] { "categorical_crossentropy", "mse" }, new string[0], "{\"loss_weight\": [1]}"));
      True(unknown.Message.Contains("unknown key 'loss_weight'"), unknown.Message);
      m.Compile("sgd", new[] { "categorical_crossentropy", "mse" }, new string[0], new CompileOptions { LossWeights = new[] { 1.0, 0.5 }, Optimizer = "{\"lr\": 0.05}" });
      True(m.TestOnBatch(x, y).Length == 3, "compiled with loss weights");
      m.Compile("sgd", new[] { "categorical_crossentropy", "mse" }, new[] { "accuracy" });
      True(m.MetricsNames.Contains("acc"), m.MetricsNames);
    }
  }

  // Keras' clone_model with each layer's dtype set: bfloat16 computation over float32 weights.
  public static void AFloat32ModelComputesInBfloat16() {
    string json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": [" +
                  "{\"class_name\": \"Dense\", \"config\": {\"name\": \"h\", \"units\": 3, \"batch_input_shape\": [null, 2]}}]}}";
    var x = Tensor.Of(new float[] { 1, 2 }, 1, 2);
    using (var m = Model.FromJson(json))
    using (var mixed = m.WithDtypePolicy("mixed_bfloat16"))
    using (var back = mixed.WithDtypePolicy("float32")) {
      True(mixed.PredictOnBatch(x)[0].DType == DType.BFLOAT16, "computed in bfloat16");
      True(mixed.Weights[0].DType == DType.FLOAT32, "float32 variables");
      Eq(m.PredictOnBatch(x)[0].ToFloatArray(), back.PredictOnBatch(x)[0].ToFloatArray());
      var e = Throws<KBackendException>(() => m.WithDtypePolicy("int8"));
      True(e.Message.Contains("does not keep float32 variables"), e.Message);
    }
  }

  // y = x + b, b a weight of ones; {"fail": true} in the config fails.
  public static void CustomLayers() {
    Model.RegisterLayer("AddBias", (layer, config, inputs) => {
      if (config.Contains("\"fail\":true")) throw new InvalidOperationException("asked to fail");
      long[] shape = inputs[0].Shape;
      var b = layer.AddWeight("b", new[] { shape[shape.Length - 1] }, "\"ones\"");
      return new[] { inputs[0] + b };
    });
    string json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": " +
                  "[{\"class_name\": \"AddBias\", \"config\": {\"name\": \"ab\", \"batch_input_shape\": [null, 2]}}]}}";
    using (var m = Model.FromJson(json)) {
      Eq(new float[] { 2, 3 }, m.Predict(new[] { Tensor.Of(new float[] { 1, 2 }, 1, 2) })[0].ToFloatArray());
      True(m.Weights.Length == 1, "one weight");
      True(K.model_count_params(m) == 2, "a new C function, reached with no C# code");
    }
    string failing = json.Replace("\"name\": \"ab\"", "\"name\": \"ab\", \"fail\": true");
    var e = Throws<KBackendException>(() => Model.FromJson(failing));
    True(e.Message.Contains("layer 'ab' (AddBias)") && e.Message.Contains("asked to fail"), e.Message);
  }

  public static void BranchesAsCallables() {
    var x = Tensor.Of(new float[] { 1, 2 }, 2);
    var alt = Tensor.Of(new float[] { 5, 6 }, 2);
    int xCalls = 0, altCalls = 0;
    Func<Tensor> xFn = () => { ++xCalls; return x * 2.0; };
    Func<Tensor> altFn = () => { ++altCalls; return alt; };
    Eq(new float[] { 2, 4 }, K.in_train_phase(xFn, altFn, null, Training.TRUE).ToFloatArray());
    True(xCalls == 1 && altCalls == 0, "a fixed phase builds only the chosen branch");
    Eq(new float[] { 5, 6 }, K.in_test_phase(xFn, altFn, null, Training.TRUE).ToFloatArray());
    var c = K.placeholder(new long[0], DType.FLOAT32, "c"); // a scalar condition
    using (var f = K.function(new[] { c }, new[] { K.switch_(c, xFn, altFn) })) {
      Eq(new float[] { 2, 4 }, f.Call(Tensor.Scalar(1f))[0].ToFloatArray());
      Eq(new float[] { 5, 6 }, f.Call(Tensor.Scalar(0f))[0].ToFloatArray());
    }
    var e = Throws<InvalidOperationException>(() => K.switch_(c, () => { throw new InvalidOperationException("mine"); }, altFn));
    True(e.Message == "mine", e.Message);
  }

  public static void RawDataForms() {
    Eq(new float[] { 1, -2 }, K.cast_to_floatx(new[] { 1, -2 }).ToFloatArray());
    var v = K.variable(new float[6], 2, 3);
    True(K.get_variable_shape(v).SequenceEqual(new long[] { 2, 3 }), "variable shape");
    // [[1, 0, 2], [0, 0, 3]] as COO and as CSR
    var want = new float[] { 1, 0, 2, 0, 0, 3 };
    Eq(want, K.to_dense(K.sparse_from_coo(new long[] { 0, 0, 0, 2, 1, 2 }, new float[] { 1, 2, 3 }, new long[] { 2, 3 })).ToFloatArray());
    Eq(want, K.to_dense(K.sparse_from_csr(new long[] { 0, 2, 3 }, new long[] { 0, 2, 2 }, new double[] { 1, 2, 3 }, 3)).ToFloatArray());
    Throws<KBackendException>(() => K.sparse_from_coo(new long[] { 0, 0 }, new float[] { 1, 2, 3 }, new long[] { 2, 3 }));
  }

  public static void PrintTensorThroughASink() {
    var seen = new System.Text.StringBuilder();
    K.set_print_sink(text => { lock (seen) seen.Append(text); });
    try {
      var x = K.placeholder(2);
      using (var f = K.function(new[] { x }, new[] { K.print_tensor(x, "x is ") })) f.Call(Tensor.Of(new float[] { 1.5f, 2 }, 2));
    } finally {
      K.set_print_sink(null);
    }
    True(seen.ToString().Contains("x is ") && seen.ToString().Contains("1.5"), seen.ToString());
  }

  // One or more known values per family of the API (elementwise, reduce, shape, linalg, nn, conv,
  // pool, rnn, CTC, sparse, random, control), through K's overloads with Keras' defaults.
  static Tensor Image() { return Tensor.Of(new float[] { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, 1, 3, 3, 1); }

  public static void FamiliesElementwiseReduceShapeLinalg() {
    var x = Tensor.Of(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3);
    Eq(new float[] { 1, 4, 9, 16, 25, 36 }, K.square(x).ToFloatArray());
    Eq(new float[] { 6, 15 }, K.sum(x, new long[] { 1 }).ToFloatArray());
    True(K.max(x, new long[] { 0 }, true).Shape.SequenceEqual(new long[] { 1, 3 }), "keepdims");
    Eq(new float[] { 2f / 3, 2f / 3 }, K.var(x, new long[] { 1 }).ToFloatArray());
    Eq(new float[] { 1, 3, 6, 4, 9, 15 }, K.cumsum(x, 1).ToFloatArray());
    Eq(new float[] { 2, 3, 5, 6 }, K.slice(x, new long[] { 0, 1 }, new long[] { 2, 2 }).ToFloatArray());
    Eq(new float[] { 4, 6 }, K.strided_slice(x, new long[] { 1, 0 }, new long[] { 2, 3 }, new long[] { 1, 2 }, 0, 0, 1, 0).ToFloatArray());
    Eq(new float[] { 14, 32, 32, 77 }, K.dot(x, K.transpose(x)).ToFloatArray());
    Eq(new float[] { 14, 77 }, K.batch_dot(x, x, new long[] { 1, 1 }).ToFloatArray());
    Eq(new float[] { 0.6f, 0.8f }, K.l2_normalize(Tensor.Of(new float[] { 3, 4 }, 2)).ToFloatArray());
  }

  public static void FamiliesNnConvPool() {
    Eq(new float[] { 0, 0.5f, 2 }, K.relu(Tensor.Of(new float[] { -1, 0.5f, 3 }, 3), 0.0, 2.0).ToFloatArray());
    var ones = Tensor.Of(new float[] { 1, 1, 1, 1 }, 2, 2, 1, 1);
    Eq(new float[] { 12, 16, 24, 28 }, K.conv2d(Image(), ones).ToFloatArray());
    Eq(new float[] { 12, 16, 9, 24, 28, 15, 15, 17, 9 }, K.conv2d(Image(), ones, new long[] { 1, 1 }, Padding.SAME).ToFloatArray());
    Eq(new float[] { -1, -1, -1 }, K.conv1d(Tensor.Of(new float[] { 1, 2, 3, 4 }, 1, 4, 1), Tensor.Of(new float[] { 1, -1 }, 2, 1, 1)).ToFloatArray());
    Eq(new float[] { 5, 6, 8, 9 }, K.pool2d(Image(), new long[] { 2, 2 }).ToFloatArray());
    var x = Tensor.Of(new float[] { 1, 2, 3, 4 }, 4);
    Eq(new float[] { -1.341641f, -0.447214f, 0.447214f, 1.341641f },
       K.batch_normalization(x, Tensor.Of(new float[] { 2.5f }, 1), Tensor.Of(new float[] { 1.25f }, 1), null, null, -1, 0.0).ToFloatArray());
  }

  public static void FamiliesRnnCtcSparseRandomControl() {
    // The step adds its input to the state: the outputs are the running sums.
    var r = K.rnn((input, states) => { var s = input + states[0]; return Tuple.Create(s, new[] { s }); },
                  Tensor.Of(new float[] { 1, 2, 3 }, 1, 3, 1), new[] { Tensor.Of(new float[] { 0 }, 1, 1) });
    Eq(new float[] { 1, 3, 6 }, r.Item2.ToFloatArray());
    // Best path: classes 0, 0, 1 (2 is the blank): repeats merged give [0, 1].
    var probs = Tensor.Of(new float[] { 0.7f, 0.2f, 0.1f, 0.6f, 0.3f, 0.1f, 0.1f, 0.8f, 0.1f }, 1, 3, 3);
    Tensor[] decoded = K.ctc_decode(probs, Tensor.Of(new int[] { 3 }, 1), 1, 100, 1).Drain();
    True(decoded[0].ToLongArray().SequenceEqual(new long[] { 0, 1 }), "decoded");
    double eps = K.epsilon();
    double want = -(Math.Log(0.7 + eps) + Math.Log(0.6 + eps) + Math.Log(0.8 + eps));
    True(Math.Abs(decoded[decoded.Length - 1].ToFloatArray()[0] - want) < 1e-4, "log probability");
    var coo = K.sparse_from_coo(new long[] { 0, 1, 1, 0 }, new float[] { 2, 3 }, new long[] { 2, 2 });
    Eq(new float[] { 2, 3 }, K.dot(coo, Tensor.Of(new float[] { 1, 1 }, 2, 1)).ToFloatArray());
    float[] u = K.random_uniform(new long[] { 1000 }, -1.0, 1.0, DType.FLOAT32, 7).ToFloatArray();
    True(u.Min() >= -1 && u.Max() < 1 && u.Max() - u.Min() > 1.5f, "uniform range");
    Eq(u, K.random_uniform(new long[] { 1000 }, -1.0, 1.0, DType.FLOAT32, 7).ToFloatArray());
    var condition = K.cast(Tensor.Of(new int[] { 1, 0 }, 2), DType.BOOL);
    Eq(new float[] { 1, 6 }, K.switch_(condition, Tensor.Of(new float[] { 1, 2 }, 2), Tensor.Of(new float[] { 5, 6 }, 2)).ToFloatArray());
    Eq(new float[] { 1, 2 }, K.dropout(Tensor.Of(new float[] { 1, 2 }, 2), 0.0).ToFloatArray());
  }
}
