package org.kbackend;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class KBackendTest {
  @Test
  void arithmeticAgainstKnownValues() {
    Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2);
    assertArrayEquals(new float[] {3, 5, 7, 9}, x.mul(2.0).add(1.0).toFloatArray());
    assertArrayEquals(new long[] {2, 2}, x.shape());
    assertEquals(DType.FLOAT32, x.dtype());
    assertEquals(10f, K.sum(x).floatValue());
    assertArrayEquals(new float[] {2, 3}, K.mean(x, 0).toFloatArray());
    assertArrayEquals(new float[] {7, 10, 15, 22}, x.matmul(x).toFloatArray());
    assertArrayEquals(new float[] {0.5f, 0.5f}, K.softmax(Tensor.of(new float[] {0, 0}, 2)).toFloatArray(), 1e-6f);
    assertArrayEquals(new float[] {2, 4}, x.reshape(4).slice(new long[] {1}, new long[] {4}, new long[] {2}).toFloatArray());
    assertArrayEquals(new long[] {1, 1}, K.argmax(x).toLongArray());
    assertArrayEquals(new double[] {1, 4}, Tensor.of(new double[] {1, 2}, 2).square().toDoubleArray());
    assertArrayEquals(new int[] {3}, Tensor.of(new int[] {1, 2}, 2).sum().toIntArray());
  }

  @Test
  void nioBuffersInAndOut() {
    FloatBuffer direct = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder()).asFloatBuffer();
    direct.put(new float[] {1, 2, 3, 4}).flip();
    Tensor t = Tensor.of(direct, 4);
    assertArrayEquals(new float[] {1, 2, 3, 4}, t.toFloatArray());
    assertArrayEquals(new float[] {5, 6}, Tensor.of(FloatBuffer.wrap(new float[] {5, 6}), 2).toFloatArray());
    FloatBuffer out = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder()).asFloatBuffer();
    t.mul(2.0).copyTo(out);
    assertEquals(8f, out.get(3));
  }

  @Test
  void errorsAreKBackendExceptions() {
    Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2);
    KBackendException e = assertThrows(KBackendException.class, () -> x.reshape(3, 3));
    assertEquals(Status.ERROR_SHAPE, e.status());
    assertTrue(e.getMessage().startsWith("reshape:"), e.getMessage());
    KBackendException shortData = assertThrows(KBackendException.class, () -> Tensor.of(new float[] {1, 2, 3}, 2, 2));
    assertTrue(shortData.getMessage().contains("bytes"), shortData.getMessage());
    assertThrows(IllegalArgumentException.class, () -> K.slice(x, new long[] {0}, new long[] {1, 1}));
    x.close();
    assertTrue(x.isClosed());
    IllegalStateException closed = assertThrows(IllegalStateException.class, () -> x.square());
    assertEquals("Tensor is closed", closed.getMessage());
    // A missing file is java.io's error (api/kbackend.toml's [errors]), unchecked.
    java.io.UncheckedIOException missing = assertThrows(java.io.UncheckedIOException.class,
        () -> Model.load("/nonexistent/m.h5"));
    assertTrue(missing.getCause() instanceof java.io.FileNotFoundException, missing.toString());
    assertTrue(missing.getMessage().contains("/nonexistent/m.h5: no such file"), missing.getMessage());
  }

  // One process without dist_init: rank 0 of 1, collectives the identity (tests/dist runs them
  // on two processes through the C ABI).
  @Test
  void oneProcessIsRankZeroOfOne() {
    assertEquals(0, K.dist_rank());
    assertEquals(1, K.dist_size());
    Tensor x = Tensor.of(new float[] {1, -2, 3}, 3);
    float[] same = {1, -2, 3};
    assertArrayEquals(same, K.all_reduce(x, ReduceOp.AVERAGE).toFloatArray());
    assertArrayEquals(same, K.broadcast(x, 0).toFloatArray());
    assertArrayEquals(same, K.all_gather(x).toFloatArray());
    assertArrayEquals(new double[] {4, 5}, K.dist_all_reduce(new double[] {4, 5}, ReduceOp.SUM));
    K.dist_barrier();
    KBackendException e = assertThrows(KBackendException.class, () -> K.broadcast(x, 1));
    assertEquals(Status.ERROR_INVALID_ARGUMENT, e.status());
    assertTrue(e.getMessage().contains("root 1 is not a rank"), e.getMessage());
  }

  @Test
  void gradientsUpdatesAndFunctions() {
    Tensor w = K.variable(new float[] {3}, 1);
    Tensor loss = K.sum(w.square());
    List<Tensor> g = K.gradients(loss, List.of(w));
    assertArrayEquals(new float[] {6}, g.get(0).toFloatArray());
    Tensor step = K.update_sub(w, g.get(0).mul(0.25));
    Tensor x = K.placeholder(-1);
    try (CompiledFunction f = K.function(List.of(x), List.of(x.add(w)), List.of(step))) {
      List<Tensor> out = f.call(Tensor.of(new float[] {1, 2}, 2));
      assertArrayEquals(new float[] {4, 5}, out.get(0).toFloatArray());
    }
    assertArrayEquals(new float[] {1.5f}, w.toFloatArray());
  }

  @Test
  void callbacksAndTheirExceptions() {
    Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2);
    assertArrayEquals(new float[] {1, 4, 9, 16}, K.map_fn(Tensor::square, x).toFloatArray());
    assertArrayEquals(new float[] {4, 6}, K.foldl(Tensor::add, x, null).toFloatArray());
    assertArrayEquals(new float[] {2, 2}, K.foldr(Tensor::sub, x, null).toFloatArray());
    Tensor in = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 1, 3, 2);
    K.RnnResult r = K.rnn((input, states) -> {
      Tensor o = input.add(states.get(0));
      return new K.Step(o, List.of(o));
    }, in, List.of(K.zeros(1, 2)));
    assertArrayEquals(new float[] {9, 12}, r.lastOutput.toFloatArray());
    assertArrayEquals(new float[] {1, 2, 4, 6, 9, 12}, r.outputs.toFloatArray());
    assertArrayEquals(new float[] {9, 12}, r.newStates.get(0).toFloatArray());
    IllegalStateException mine = new IllegalStateException("mine");
    IllegalStateException thrown = assertThrows(IllegalStateException.class,
        () -> K.rnn((input, states) -> { throw mine; }, in, List.of(K.zeros(1, 2))));
    assertSame(mine, thrown);
    assertThrows(NullPointerException.class, () -> K.map_fn(t -> null, x));
    assertArrayEquals(new float[] {2}, K.sum(Tensor.of(new float[] {2}, 1)).toFloatArray()); // no stale error
  }

  @Test
  void threads() throws Exception {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int g = 0; g < 8; ++g) {
      final int id = g;
      Thread t = new Thread(() -> {
        try {
          for (int i = 0; i < 200; ++i) {
            Tensor x = Tensor.of(new float[] {id, i}, 2);
            if (i % 10 == 0) assertThrows(KBackendException.class, () -> x.reshape(3));
            assertEquals(id + i, K.sum(x).floatValue());
          }
        } catch (Throwable e) {
          failure.set(e);
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) t.join();
    assertNull(failure.get());
  }

  static double rssMiB() throws Exception {
    String[] f = new String(Files.readAllBytes(Paths.get("/proc/self/statm"))).trim().split(" ");
    return Long.parseLong(f[1]) * 4096.0 / (1 << 20);
  }

  static long settle(long want) throws InterruptedException {
    for (int i = 0; i < 100 && Tensor.liveCount() > want; ++i) {
      System.gc();
      Thread.sleep(20);
    }
    return Tensor.liveCount();
  }

  static void churn(Tensor a, int rounds) {
    for (int i = 0; i < rounds; ++i) a.mul(2.0).add(i); // four tensors, none closed
  }

  @Test
  void droppedTensorsAreReleasedWithoutGrowth() throws Exception {
    Tensor a = Tensor.of(new float[16], 16);
    settle(0);
    long live0 = Tensor.liveCount();
    double rss0 = rssMiB();
    for (int round = 0; round < 10; ++round) { // warm-up until a round no longer grows
      churn(a, 25000);
      settle(live0);
      double rss = rssMiB();
      if (rss - rss0 < 4) break;
      rss0 = rss;
    }
    // Three measured rounds: a leak grows every round, allocator noise only some, so the
    // smallest growth is the one that counts.
    double least = Double.MAX_VALUE;
    for (int round = 0; round < 3; ++round) {
      rss0 = rssMiB();
      churn(a, 25000); // 100k tensors dropped without close()
      assertEquals(live0, settle(live0), "native references left after GC");
      least = Math.min(least, rssMiB() - rss0);
    }
    // A leaked tensor costs at least ~300 bytes: >= 28 MiB a round; finalizer threads can add a
    // few MiB through glibc arenas.
    assertTrue(least < 24, "RSS grew by at least " + least + " MiB in each of 3 rounds");
    assertFalse(a.isClosed());
  }

  @Test
  void keptTensorsAreCounted() throws Exception {
    long before = settle(0);
    List<Tensor> kept = new ArrayList<>();
    for (int i = 0; i < 100; ++i) kept.add(Tensor.of(new float[1 << 16], 1 << 16));
    assertEquals(before + 100, Tensor.liveCount());
    for (Tensor t : kept) t.close();
    assertEquals(before, Tensor.liveCount());
  }

  @Test
  void kerasDefaultsAreOverloads() {
    Tensor x = Tensor.of(new float[] {1, -2, 3, -4}, 2, 2);
    assertArrayEquals(new float[] {1, 0, 3, 0}, K.relu(x).toFloatArray());
    assertArrayEquals(new long[] {2}, K.sum(x, new long[] {1}).shape());  // keepdims=False
    Tensor image = Tensor.of(new float[] {1, 2, 3, 4}, 1, 2, 2, 1);
    Tensor kernel = Tensor.of(new float[] {1, 1, 1, 1}, 2, 2, 1, 1);
    assertArrayEquals(new float[] {10}, K.conv2d(image, kernel).toFloatArray());  // valid, 1x1
    assertArrayEquals(new long[] {1, 2, 2, 1},
                      K.conv2d(image, kernel, new long[] {1, 1}, Padding.SAME).shape());
    assertEquals(DType.INT32, K.arange(3).dtype());  // Keras' dtype="int32"
  }

  @Test
  void devicesAreListedAndChosenByName() {
    assertEquals(1, K.device_count(DeviceKind.CPU));
    assertEquals(0, K.device_index(DeviceKind.CPU, 0));
    assertFalse(K.device_name(DeviceKind.CPU, 0).isEmpty());
    assertTrue(K.device_memory(DeviceKind.CPU, 0) > (1L << 26));
    assertThrows(KBackendException.class, () -> K.device_name(DeviceKind.CPU, 1));
    List<DeviceInfo> devices = K.list_devices();
    assertEquals(1 + K.device_count(DeviceKind.CUDA), devices.size());
    assertEquals(DeviceKind.CPU, devices.get(0).kind);
    assertTrue(devices.get(0).memory > (1L << 26) && !devices.get(0).name.isEmpty());
    Tensor x = K.placeholder(2);
    try (CompiledFunction f = K.function(List.of(x), List.of(x.mul(2.0)))) {
      K.function_set_device_name(f, "cpu");
      assertEquals("cpu", K.function_device_name(f));
      assertThrows(KBackendException.class, () -> K.function_set_device_name(f, "tpu"));
    }
  }

  @Test
  void keras3ArchivesLoadPredictTrainAndSave() throws Exception {
    // mlp.keras, saved by Keras 3.15; mlp_expected.txt holds its inputs, targets and Keras'
    // predictions and test loss (tests/model_files/keras3/make_fixtures.py).
    String[] text =
        Files.readString(Paths.get("tests/model_files/keras3/mlp_expected.txt")).trim().split("\\s+");
    int rows = Integer.parseInt(text[0]), inputs = Integer.parseInt(text[1]);
    int classes = Integer.parseInt(text[2]);
    double kerasLoss = Double.parseDouble(text[3]);
    float[] x = new float[rows * inputs], y = new float[rows * classes], p = new float[rows * classes];
    for (int r = 0, at = 4; r < rows; ++r) {
      for (int i = 0; i < inputs; ++i) x[r * inputs + i] = Float.parseFloat(text[at++]);
      for (int i = 0; i < classes; ++i) y[r * classes + i] = Float.parseFloat(text[at++]);
      for (int i = 0; i < classes; ++i) p[r * classes + i] = Float.parseFloat(text[at++]);
    }
    Tensor[] xs = {Tensor.of(x, rows, inputs)}, ys = {Tensor.of(y, rows, classes)};
    java.nio.file.Path dir = Files.createTempDirectory("kb_keras3");
    String again = dir.resolve("again.keras").toString();
    try (Model m = Model.load("tests/model_files/keras3/mlp.keras")) {
      assertArrayEquals(p, m.predict(32, xs).get(0).toFloatArray(), 1e-5f);
      assertEquals(kerasLoss, m.testOnBatch(xs, ys)[0], 1e-4 * kerasLoss);
      for (int step = 0; step < 3; ++step) m.trainOnBatch(xs, ys);
      m.save(again);  // a Keras 3 archive again, by the extension
      float[] trained = m.predict(32, xs).get(0).toFloatArray();
      try (Model loaded = Model.load(again)) {
        assertArrayEquals(trained, loaded.predict(32, xs).get(0).toFloatArray(), 0f);
        assertEquals(m.testOnBatch(xs, ys)[0], loaded.testOnBatch(xs, ys)[0], 1e-6);
      }
    } finally {
      Files.deleteIfExists(Paths.get(again));
      Files.deleteIfExists(dir);
    }
  }

  @Test
  void exportsModelsToOnnx() throws Exception {
    java.nio.file.Path dir = Files.createTempDirectory("kb_onnx");
    java.nio.file.Path out = dir.resolve("mlp.onnx");
    try (Model m = Model.load("tests/model_files/keras3/mlp.keras")) {
      m.exportOnnx(out.toString());  // ONNX's checker passed on it before it was written
      assertTrue(Files.size(out) > 1000, "the weights are in the file");
      m.exportOnnx(out.toString(), new ExportOnnxOptions().batchSize(4));
      KBackendException e = assertThrows(KBackendException.class,
          () -> m.exportOnnx(out.toString(), new ExportOnnxOptions().opset(18)));
      assertEquals(Status.ERROR_NOT_IMPLEMENTED, e.status());
      assertTrue(e.getMessage().contains("opset 18"), e.getMessage());
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(dir);
    }
  }

  @Test
  void modelsOfSeveralInputsAndOutputs() {
    // tf.keras' two_outputs.h5: inputs a (5) and b (4), outputs cls (3, softmax) and reg (1).
    try (Model m = Model.load("tests/model_files/tf_keras/two_outputs.h5")) {
      java.util.Random r = new java.util.Random(3);
      float[] a = new float[20 * 5], b = new float[20 * 4], cls = new float[20 * 3];
      float[] reg = new float[20];
      for (int i = 0; i < a.length; ++i) a[i] = r.nextFloat();
      for (int i = 0; i < b.length; ++i) b[i] = r.nextFloat();
      for (int i = 0; i < 20; ++i) {
        cls[3 * i + r.nextInt(3)] = 1;
        reg[i] = r.nextFloat();
      }
      Tensor[] x = {Tensor.of(a, 20, 5), Tensor.of(b, 20, 4)};
      Tensor[] y = {Tensor.of(cls, 20, 3), Tensor.of(reg, 20, 1)};
      List<Tensor> out = m.predict(8, x);
      assertEquals(2, out.size());
      assertArrayEquals(new long[] {20, 3}, out.get(0).shape());
      assertArrayEquals(new long[] {20, 1}, out.get(1).shape());
      float[] p = out.get(0).toFloatArray();
      for (int i = 0; i < 20; ++i) assertEquals(1f, p[3 * i] + p[3 * i + 1] + p[3 * i + 2], 1e-5f);
      // The same values through a function of one's own over the model's graph.
      try (CompiledFunction f = K.function(m.inputs(), m.outputs())) {
        List<Tensor> again = f.call(x);
        assertArrayEquals(p, again.get(0).toFloatArray(), 1e-6f);
        assertArrayEquals(out.get(1).toFloatArray(), again.get(1).toFloatArray(), 1e-6f);
      }
      assertTrue(m.metricsNames().contains("cls_loss"), m.metricsNames());
      double before = m.testOnBatch(x, y)[0];
      assertEquals(3, m.testOnBatch(x, y).length);  // the total, then each output's loss
      for (int step = 0; step < 20; ++step) m.trainOnBatch(x, y);
      assertTrue(m.testOnBatch(x, y)[0] < before);
      String history = m.fit(x, y, 8, 2, 0, "{\"shuffle\": false}");
      assertTrue(history.contains("\"cls_loss\""), history);
      assertThrows(KBackendException.class, () -> m.predict(8, x[0]));  // one input of two
      // The per-batch callback: 20 samples in batches of 8 are 3 batches, then the epoch's end.
      List<Long> seen = new ArrayList<>();
      m.fit(x, y, 8, 2, 0, null, (epoch, batch, logs) -> {
        assertTrue(logs.contains("\"loss\""), logs);
        seen.add(batch);
        return false;
      });
      assertEquals(List.of(0L, 1L, 2L, -1L, 0L, 1L, 2L, -1L), seen);
      seen.clear();
      m.fit(x, y, 8, 5, 0, null, (epoch, batch, logs) -> seen.add(batch) && batch == 1);
      assertEquals(List.of(0L, 1L, -1L), seen);  // true stops training after the epoch's end, as in Keras
      IllegalStateException thrown = assertThrows(IllegalStateException.class,
          () -> m.fit(x, y, 8, 5, 0, null, (epoch, batch, logs) -> {
            throw new IllegalStateException("stop here");
          }));
      assertEquals("stop here", thrown.getMessage());
      assertEquals(2, m.predict(8, x).size());  // usable after it
      // Options as values (FitOptions, CompileOptions, generated from api/kbackend.toml); a key
      // outside its set is refused, naming it.
      assertEquals("{\"shuffle\": false, \"seed\": 0, \"validation_split\": 0.25, \"initial_epoch\": 0, "
          + "\"class_weight\": {\"-1\": 2.5, \"0\": 1}, \"distributed\": false}",
          new FitOptions().shuffle(false).validationSplit(0.25).classWeight(0, 1).classWeight(-1, 2.5).toJson());
      assertEquals(32, new FitOptions().batchSize());  // Keras' defaults
      assertEquals(1, new FitOptions().verbose());
      assertThrows(IllegalArgumentException.class, () -> new FitOptions().validationSplit(Double.NaN).toJson());
      // Keras' callbacks run natively: no improvement of 100 in the loss, so training stops when
      // patience (1) runs out, after the second epoch; ReduceLROnPlateau logs the rate.
      History stopped = m.fit(x, y, new FitOptions().batchSize(8).epochs(10).verbose(0).callbacks(
          new ReduceLROnPlateau().monitor("loss"),
          new EarlyStopping().monitor("loss").patience(1).minDelta(100)));
      assertEquals(2, stopped.get("loss").length);
      assertEquals(2, stopped.get("learning_rate").length);
      String checkpoint = new ModelCheckpoint().filepath("a\"b.keras").saveFreq(3).toJson();
      assertTrue(checkpoint.contains("\"filepath\": \"a\\\"b.keras\"") && checkpoint.contains("\"save_freq\": 3"),
          checkpoint);
      KBackendException refused = assertThrows(KBackendException.class, () -> m.fit(x, y,
          new FitOptions().verbose(0).callbacks(new ReduceLROnPlateau().factor(2))));
      assertTrue(refused.getMessage().contains("factor >= 1.0"), refused.getMessage());
      // The history and the logs as values: one loss per epoch, the logs' at each epoch's end.
      List<Double> losses = new ArrayList<>();
      History values = m.fit(x, y, new FitOptions().batchSize(8).epochs(2).verbose(0).shuffle(false),
          (epoch, batch, logs) -> {
            if (batch == -1) losses.add(logs.get("loss"));
            return false;
          });
      assertEquals(2, values.get("cls_loss").length);
      assertArrayEquals(new double[] {losses.get(0), losses.get(1)}, values.get("loss"));
      assertTrue(values.json().contains("\"cls_loss\""), values.json());
      assertTrue(Double.isNaN(History.numbers("{\"a\": [null, 2.5e-3]}").get("a")[0]));
      assertEquals(2.5e-3, History.numbers("{\"a\": [null, 2.5e-3]}").get("a")[1]);
      assertThrows(KBackendException.class, () -> History.numbers("{\"a\": \"x\"}"));
      KBackendException unknown = assertThrows(KBackendException.class,
          () -> m.fit(x, y, 8, 1, 0, "{\"shufle\": true}"));
      assertTrue(unknown.getMessage().contains("unknown key 'shufle' (did you mean 'shuffle'?)"),
          unknown.getMessage());
      unknown = assertThrows(KBackendException.class, () -> m.compile("sgd",
          new String[] {"categorical_crossentropy", "mse"}, new String[0], "{\"loss_weight\": [1]}"));
      assertTrue(unknown.getMessage().contains("unknown key 'loss_weight'"), unknown.getMessage());
      m.compile("sgd", new String[] {"categorical_crossentropy", "mse"}, new String[0],
          new CompileOptions().lossWeights(1, 0.5).optimizer("{\"lr\": 0.05}"));
      assertEquals(3, m.testOnBatch(x, y).length);
    }
  }

  @Test
  void aSeedMakesModelsAndTrainingTheSame() {
    // Keras' set_random_seed: the same initial weights, the same Dropout masks, the same model
    // after a fit (the rate is logged by ReduceLROnPlateau only to use a callback too).
    String json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
        + "{\"class_name\": \"Dense\", \"config\": {\"name\": \"h\", \"units\": 8, \"batch_input_shape\": [null, 2]}},"
        + "{\"class_name\": \"Dropout\", \"config\": {\"name\": \"d\", \"rate\": 0.5}},"
        + "{\"class_name\": \"Dense\", \"config\": {\"name\": \"o\", \"units\": 1}}]}}";
    Tensor[] x = {Tensor.of(new float[] {1, 0, 0, 1, 1, 1, 0, 0}, 4, 2)};
    Tensor[] y = {Tensor.of(new float[] {1, 2, 3, 0}, 4, 1)};
    float[][] trained = new float[3][];
    long[] seeds = {5, 5, 6};
    for (int run = 0; run < 3; ++run) {
      K.set_random_seed(seeds[run]);
      try (Model m = Model.fromJson(json)) {
        m.compile("adam", "mse");
        m.fit(x, y, new FitOptions().epochs(3).verbose(0).callbacks(new ReduceLROnPlateau()));
        trained[run] = m.weights().get(0).toFloatArray();
      }
    }
    assertArrayEquals(trained[0], trained[1]);
    assertFalse(java.util.Arrays.equals(trained[0], trained[2]));
  }

  @Test
  void aFloat32ModelComputesInBfloat16() {
    // Keras' clone_model with each layer's dtype set: bfloat16 computation over float32 weights.
    String json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
        + "{\"class_name\": \"Dense\", \"config\": {\"name\": \"h\", \"units\": 3, \"batch_input_shape\": [null, 2]}}]}}";
    Tensor x = Tensor.of(new float[] {1, 2}, 1, 2);
    try (Model m = Model.fromJson(json); Model mixed = m.withDtypePolicy("mixed_bfloat16");
         Model back = mixed.withDtypePolicy("float32")) {
      assertEquals(DType.BFLOAT16, mixed.predictOnBatch(x).get(0).dtype());
      assertEquals(DType.FLOAT32, mixed.weights().get(0).dtype());
      assertArrayEquals(m.predictOnBatch(x).get(0).toFloatArray(),
                        back.predictOnBatch(x).get(0).toFloatArray());
      KBackendException e = assertThrows(KBackendException.class, () -> m.withDtypePolicy("int8"));
      assertTrue(e.getMessage().contains("does not keep float32 variables"), e.getMessage());
    }
  }

  @Test
  void customLayers() {
    // y = x + b, b a weight of ones; {"fail": true} in the config fails.
    Model.registerLayer("AddBias", (layer, config, inputs) -> {
      if (config.contains("\"fail\":true")) throw new IllegalStateException("asked to fail");
      long[] shape = inputs.get(0).shape();
      Tensor b = layer.addWeight("b", new long[] {shape[shape.length - 1]}, "\"ones\"", true);
      return List.of(inputs.get(0).add(b));
    });
    String json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": "
        + "[{\"class_name\": \"AddBias\", \"config\": {\"name\": \"ab\", \"batch_input_shape\": [null, 2]}}]}}";
    try (Model m = Model.fromJson(json)) {
      assertArrayEquals(new float[] {2, 3},
                        m.predict(32, Tensor.of(new float[] {1, 2}, 1, 2)).get(0).toFloatArray());
      assertEquals(1, m.weights().size());
      assertEquals(2, K.model_count_params(m));  // a new C function, reached with no Java code
    }
    String failing = json.replace("\"name\": \"ab\"", "\"name\": \"ab\", \"fail\": true");
    KBackendException e = assertThrows(KBackendException.class, () -> Model.fromJson(failing));
    assertTrue(e.getMessage().contains("layer 'ab' (AddBias)") && e.getMessage().contains("asked to fail"),
               e.getMessage());
    assertThrows(NullPointerException.class, () -> Model.registerLayer("Nil", null));
  }

  @Test
  void branchesAsCallables() {
    Tensor x = Tensor.of(new float[] {1, 2}, 2);
    Tensor alt = Tensor.of(new float[] {5, 6}, 2);
    int[] calls = {0, 0};
    java.util.function.Supplier<Tensor> xFn = () -> {
      ++calls[0];
      return x.mul(2.0);
    };
    java.util.function.Supplier<Tensor> altFn = () -> {
      ++calls[1];
      return alt;
    };
    assertArrayEquals(new float[] {2, 4},
                      K.in_train_phase(xFn, altFn, null, Training.TRUE).toFloatArray());
    assertArrayEquals(new int[] {1, 0}, calls);  // a fixed phase builds only the chosen branch
    assertArrayEquals(new float[] {5, 6},
                      K.in_test_phase(xFn, altFn, null, Training.TRUE).toFloatArray());
    Tensor c = K.placeholder(new long[0], DType.FLOAT32, "c");  // a scalar condition
    try (CompiledFunction f = K.function(List.of(c), List.of(K.switch_(c, xFn, altFn)))) {
      assertArrayEquals(new float[] {2, 4}, f.call(Tensor.scalar(1f)).get(0).toFloatArray());
      assertArrayEquals(new float[] {5, 6}, f.call(Tensor.scalar(0f)).get(0).toFloatArray());
    }
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> K.switch_(c, () -> { throw new IllegalStateException("mine"); }, altFn));
    assertEquals("mine", e.getMessage());
    assertThrows(NullPointerException.class, () -> K.switch_(c, null, altFn));
  }

  @Test
  void rawDataForms() {
    assertArrayEquals(new float[] {1, -2}, K.cast_to_floatx(new int[] {1, -2}).toFloatArray());
    Tensor v = K.variable(new float[6], 2, 3);
    assertArrayEquals(new long[] {2, 3}, K.get_variable_shape(v));
    // [[1, 0, 2], [0, 0, 3]] as COO and as CSR
    float[] want = {1, 0, 2, 0, 0, 3};
    Tensor coo = K.sparse_from_coo(new long[] {0, 0, 0, 2, 1, 2}, new float[] {1, 2, 3}, new long[] {2, 3});
    assertArrayEquals(want, K.to_dense(coo).toFloatArray());
    Tensor csr = K.sparse_from_csr(new long[] {0, 2, 3}, new long[] {0, 2, 2}, new double[] {1, 2, 3}, 3);
    assertArrayEquals(want, K.to_dense(csr).toFloatArray());
    assertThrows(KBackendException.class,
        () -> K.sparse_from_coo(new long[] {0, 0}, new float[] {1, 2, 3}, new long[] {2, 3}));
    assertThrows(KBackendException.class,
        () -> K.sparse_from_csr(new long[] {0, 2}, new long[] {0, 2, 2}, new float[] {1, 2, 3}, 3));
  }

  @Test
  void printTensorThroughASink() {
    StringBuffer seen = new StringBuffer();
    K.set_print_sink(seen::append);
    try {
      Tensor x = K.placeholder(2);
      try (CompiledFunction f = K.function(List.of(x), List.of(K.print_tensor(x, "x is ")))) {
        f.call(Tensor.of(new float[] {1.5f, 2}, 2));
      }
    } finally {
      K.set_print_sink(null);
    }
    assertTrue(seen.toString().contains("x is ") && seen.toString().contains("1.5"), seen.toString());
  }
}
