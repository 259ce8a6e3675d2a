import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.kbackend.*;

/** Loads a Keras model file (examples/data/digits_mlp.h5, saved by Keras 2.2.4, or
 * digits_mlp.keras, saved by Keras 3), fine-tunes it on
 * the 8x8 digits and prints its test accuracy before and after; given a third argument, exports
 * the fine-tuned model there as an ONNX file (to run in ONNX Runtime, say).
 * Usage: java -cp kbackend.jar:. FinetuneKerasModel model.h5 digits.csv [model.onnx]
 * (exit 0 when > 90%) */
public class FinetuneKerasModel {
  public static void main(String[] args) throws Exception {
    List<String> lines = Files.readAllLines(Paths.get(args[1]));
    lines.removeIf(l -> l.isEmpty() || l.startsWith("#"));
    int n = lines.size(), nTest = n / 5, nTrain = n - nTest; // rows 4, 9, 14, ... test
    float[] xtr = new float[nTrain * 64], ytr = new float[nTrain * 10];
    float[] xte = new float[nTest * 64], yte = new float[nTest * 10];
    int tr = 0, te = 0;
    for (int i = 0; i < n; ++i) {
      String[] f = lines.get(i).split(",");
      boolean test = i % 5 == 4; // every fifth digit tests, as the model file's script left out
      float[] x = test ? xte : xtr, y = test ? yte : ytr;
      int row = test ? te++ : tr++;
      for (int j = 0; j < 64; ++j) x[row * 64 + j] = Float.parseFloat(f[j + 1]) / 16f;
      y[row * 10 + Integer.parseInt(f[0])] = 1f;
    }
    try (Model model = Model.load(args[0]);
        Tensor xTrain = Tensor.of(xtr, tr, 64);
        Tensor yTrain = Tensor.of(ytr, tr, 10);
        Tensor xTest = Tensor.of(xte, te, 64);
        Tensor yTest = Tensor.of(yte, te, 10)) {
      System.out.print(model.summary());
      EvaluateOptions quiet = new EvaluateOptions().batchSize(128).verbose(0);
      double before = model.evaluate(new Tensor[] {xTest}, new Tensor[] {yTest}, quiet)[1];
      History history = model.fit(new Tensor[] {xTrain}, new Tensor[] {yTrain},
          new FitOptions().epochs(5).seed(1).validationSplit(0.1));
      System.out.println("validation loss by epoch: "
          + java.util.Arrays.toString(history.values().get("val_loss")));
      double after = model.evaluate(new Tensor[] {xTest}, new Tensor[] {yTest}, quiet)[1];
      System.out.printf("test accuracy: %.2f%% before fine-tuning, %.2f%% after (%d test digits)%n",
          100 * before, 100 * after, te);
      if (args.length > 2) {
        model.exportOnnx(args[2]);
        System.out.println("exported the fine-tuned model to " + args[2]);
      }
      if (after < 0.9) System.exit(1);
    }
  }
}
