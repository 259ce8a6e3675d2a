using System;
using System.IO;
using System.Linq;
using KBackend;

// Trains a Keras MLP (64 -> 32 relu -> 10 softmax, Adam) on the 8x8 digits across the processes
// of an MPI job: every process reads all the digits and fits with Distributed, taking 16 rows of
// each step of 16 x processes, from weights of its own that fit replaces with rank 0's. Each then
// checks its weights and validation losses against the same training in this process alone with
// the global batch, and its weights against rank 0's.
// Usage: mpirun -np 2 mono fit_distributed.exe digits.csv  (or alone; exit 0 when the checks hold
// and the test accuracy is above 90%)
static class FitDistributed {
  const string Mlp = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", \"layers\": [" +
      "{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 32, " +
      "\"activation\": \"relu\", \"batch_input_shape\": [null, 64]}}, " +
      "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 10, " +
      "\"activation\": \"softmax\"}}]}}";

  static Model Make(long seed) {
    K.set_random_seed(seed);
    var m = Model.FromJson(Mlp);
    m.Compile("adam", new[] { "categorical_crossentropy" }, new[] { "accuracy" });
    return m;
  }

  static int Main(string[] args) {
    K.dist_init();
    int rank = K.dist_rank(), size = K.dist_size();
    var rows = File.ReadLines(args[0]).Where(l => l.Length > 0 && l[0] != '#')
                   .Select(l => l.Split(',')).ToList();
    var train = rows.Where((r, i) => i % 5 != 4).ToList();  // every fifth digit tests
    var test = rows.Where((r, i) => i % 5 == 4).ToList();
    Func<System.Collections.Generic.List<string[]>, float[]> features =
        part => part.SelectMany(r => r.Skip(1).Select(v => float.Parse(v) / 16f)).ToArray();
    Func<System.Collections.Generic.List<string[]>, float[]> onehot = part =>
        part.SelectMany(r => Enumerable.Range(0, 10).Select(c => c == int.Parse(r[0]) ? 1f : 0f))
            .ToArray();
    bool ok;
    using (var shared = Make(1 + rank))
    using (var alone = Make(1))
    using (var xTrain = Tensor.Of(features(train), train.Count, 64))
    using (var yTrain = Tensor.Of(onehot(train), train.Count, 10))
    using (var xTest = Tensor.Of(features(test), test.Count, 64))
    using (var yTest = Tensor.Of(onehot(test), test.Count, 10)) {
      var x = new[] { xTrain };
      var y = new[] { yTrain };
      History h = shared.Fit(x, y, new FitOptions { BatchSize = 16, Epochs = 15, Seed = 1,
          ValidationSplit = 0.1, Distributed = true, Verbose = rank == 0 ? 2 : 0 });
      History one = alone.Fit(x, y, new FitOptions { BatchSize = 16 * size, Epochs = 15, Seed = 1,
          ValidationSplit = 0.1, Verbose = 0 });
      double worst = 0;
      bool same = true;
      Tensor[] mine = shared.Weights, reference = alone.Weights;
      for (int i = 0; i < mine.Length; ++i) {
        float[] a = mine[i].ToFloatArray(), b = reference[i].ToFloatArray();
        for (int k = 0; k < a.Length; ++k) worst = Math.Max(worst, Math.Abs(a[k] - b[k]));
        float[] average = K.dist_all_reduce((float[])a.Clone(), ReduceOp.AVERAGE);
        same &= average.SequenceEqual(a);
      }
      double[] lossShared = h.Values["val_loss"], lossAlone = one.Values["val_loss"];
      for (int e = 0; e < lossShared.Length; ++e)
        worst = Math.Max(worst, Math.Abs(lossShared[e] - lossAlone[e]));
      var quiet = new EvaluateOptions { BatchSize = 128, Verbose = 0 };
      double accuracy = shared.Evaluate(new[] { xTest }, new[] { yTest }, quiet)[1];
      ok = worst < 1e-4 && same && accuracy > 0.9;
      // One write per line: the processes share the launcher's output.
      Console.Out.Write(string.Format("rank {0} of {1}: {2} (largest difference from one process " +
          "{3:E2}, the same weights as every rank: {4}, test accuracy {5:F2}%)\n", rank, size,
          ok ? "ok" : "FAILED", worst, same, 100 * accuracy));
      Console.Out.Flush();
    }
    if (!ok) return 1;
    K.dist_finalize();  // every process leaves the job together
    return 0;
  }
}
