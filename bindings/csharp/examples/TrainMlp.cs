using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using KBackend;

// Trains a two-layer MLP (64 -> 64 relu -> 10 softmax) on the bundled 8x8 digits with SGD.
// Usage: mono train_mlp.exe [examples/data/digits.csv]  (exit 0 when accuracy > 90%)
static class TrainMlp {
  static uint state = 42;
  static void Shuffle(int[] idx, int n) {  // the C example's fixed permutation
    for (int i = n - 1; i > 0; --i) {
      state = state * 1103515245u + 12345u;
      int j = (int)((state >> 8) % (uint)(i + 1));
      int t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
  }

  static int Main(string[] args) {
    var rows = File.ReadLines(args.Length > 0 ? args[0] : "examples/data/digits.csv")
                   .Where(l => l.Length > 0 && l[0] != '#').Select(l => l.Split(',')).ToList();
    var ys = rows.Select(r => int.Parse(r[0])).ToArray();
    var xs = rows.Select(r => r.Skip(1).Select(v => float.Parse(v) / 16f).ToArray()).ToArray();
    int n = xs.Length, nTest = n / 5, nTrain = n - nTest;
    var idx = Enumerable.Range(0, n).ToArray();
    Shuffle(idx, n);
    var test = idx.Skip(nTrain).ToArray();
    Console.WriteLine("kbackend {0}: {1} training and {2} test digits", K.version(), nTrain, nTest);

    var x = K.placeholder(-1, 64);
    var y = K.placeholder(-1, 10);
    var w1 = K.random_normal_variable(new long[] { 64, 64 }, 0, 0.125, 1);
    var w2 = K.random_normal_variable(new long[] { 64, 10 }, 0, 0.125, 2);
    var b1 = K.zeros(64);
    var b2 = K.zeros(10);
    var hidden = K.relu(K.bias_add(x.Dot(w1), b1, DataFormat.CHANNELS_LAST));
    var probs = K.softmax(K.bias_add(hidden.Dot(w2), b2, DataFormat.CHANNELS_LAST));
    var loss = K.mean(K.categorical_crossentropy(y, probs));
    var ps = new[] { w1, b1, w2, b2 };
    var grads = K.gradients(loss, ps).Drain();
    var updates = ps.Select((p, i) => K.update_sub(p, grads[i] * 0.5)).ToArray();
    var train = K.function(new[] { x, y }, new[] { loss }, updates);
    var predict = K.function(new[] { x }, new[] { probs });

    Func<int[], Tensor> bx = b => Tensor.Of(b.SelectMany(i => xs[i]).ToArray(), b.Length, 64);
    Func<int[], Tensor> by = b => Tensor.Of(b.SelectMany(i => Enumerable.Range(0, 10).Select(c => c == ys[i] ? 1f : 0f)).ToArray(), b.Length, 10);
    for (int epoch = 1; epoch <= 30; ++epoch) {
      Shuffle(idx, nTrain);
      double total = 0;
      int batches = 0;
      for (int s = 0; s < nTrain; s += 32) {
        var b = idx.Skip(s).Take(Math.Min(32, nTrain - s)).ToArray();
        using (var tx = bx(b)) using (var ty = by(b)) {
          var l = train.Call(tx, ty)[0];
          total += l.ToFloat();
          l.Dispose();
        }
        ++batches;
      }
      if (epoch == 1 || epoch % 5 == 0) Console.WriteLine("epoch {0,2}  loss {1:F4}", epoch, total / batches);
    }
    var pred = predict.Call(bx(test))[0].ToFloatArray();
    int correct = test.Where((k, i) => Enumerable.Range(0, 10).OrderByDescending(c => pred[i * 10 + c]).First() == ys[k]).Count();
    double acc = (double)correct / nTest;
    Console.WriteLine("test accuracy {0:F2}% ({1}/{2})", 100 * acc, correct, nTest);
    return acc > 0.9 ? 0 : 2;
  }
}
