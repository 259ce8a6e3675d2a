using System;
using System.IO;
using System.Linq;
using KBackend;

// Loads a Keras model file (examples/data/digits_mlp.h5, saved by Keras 2.2.4, or
// digits_mlp.keras, saved by Keras 3), fine-tunes it on
// the 8x8 digits and prints its test accuracy before and after.
// Usage: mono finetune_keras_model.exe model.h5 digits.csv  (exit 0 when accuracy > 90%)
static class FinetuneKerasModel {
  static int Main(string[] args) {
    var rows = File.ReadLines(args[1]).Where(l => l.Length > 0 && l[0] != '#')
                   .Select(l => l.Split(',')).ToList();
    // Every fifth digit tests, as the model file's script left them out.
    var train = rows.Where((r, i) => i % 5 != 4).ToList();
    var test = rows.Where((r, i) => i % 5 == 4).ToList();
    Func<System.Collections.Generic.List<string[]>, float[]> features =
        part => part.SelectMany(r => r.Skip(1).Select(v => float.Parse(v) / 16f)).ToArray();
    Func<System.Collections.Generic.List<string[]>, float[]> onehot = part =>
        part.SelectMany(r => Enumerable.Range(0, 10).Select(c => c == int.Parse(r[0]) ? 1f : 0f))
            .ToArray();
    using (var model = Model.Load(args[0]))
    using (var xTrain = Tensor.Of(features(train), train.Count, 64))
    using (var yTrain = Tensor.Of(onehot(train), train.Count, 10))
    using (var xTest = Tensor.Of(features(test), test.Count, 64))
    using (var yTest = Tensor.Of(onehot(test), test.Count, 10)) {
      Console.Write(model.Summary());
      var quiet = new EvaluateOptions { BatchSize = 128, Verbose = 0 };
      double before = model.Evaluate(new[] { xTest }, new[] { yTest }, quiet)[1];
      History history = model.Fit(new[] { xTrain }, new[] { yTrain },
                                  new FitOptions { Epochs = 5, Seed = 1, ValidationSplit = 0.1 });
      Console.WriteLine("validation loss by epoch: " + string.Join(", ", history["val_loss"]));
      double after = model.Evaluate(new[] { xTest }, new[] { yTest }, quiet)[1];
      Console.WriteLine("test accuracy: {0:F2}% before fine-tuning, {1:F2}% after ({2} test digits)",
                        100 * before, 100 * after, test.Count);
      return after >= 0.9 ? 0 : 1;
    }
  }
}
