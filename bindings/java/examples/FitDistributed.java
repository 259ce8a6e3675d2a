import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.kbackend.*;

/** Trains a Keras MLP (64 -> 32 relu -> 10 softmax, Adam) on the 8x8 digits across the
 * processes of an MPI job: every process reads all the digits and fits with distributed=true,
 * taking 16 rows of each step of 16 x processes, from weights of its own that fit replaces with
 * rank 0's. Each then checks its weights and validation losses against the same training in
 * this process alone with the global batch, and its weights against rank 0's.
 * Usage: mpirun -np 2 java -cp kbackend.jar:. FitDistributed digits.csv
 * (also alone, as one process; exit 0 when the checks hold and accuracy > 90%) */
public class FitDistributed {
  static final String MLP = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", "
      + "\"layers\": [{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", "
      + "\"units\": 32, \"activation\": \"relu\", \"batch_input_shape\": [null, 64]}}, "
      + "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 10, "
      + "\"activation\": \"softmax\"}}]}}";

  static Model mlp(long seed) {
    K.set_random_seed(seed);
    Model m = Model.fromJson(MLP);
    m.compile("adam", "categorical_crossentropy", "accuracy");
    return m;
  }

  public static void main(String[] args) throws Exception {
    K.dist_init();
    int rank = K.dist_rank(), size = K.dist_size();
    List<String> lines = Files.readAllLines(Paths.get(args[0]));
    lines.removeIf(l -> l.isEmpty() || l.startsWith("#"));
    int n = lines.size(), nTest = n / 5, nTrain = n - nTest; // rows 4, 9, 14, ... test
    float[] xtr = new float[nTrain * 64], ytr = new float[nTrain * 10];
    float[] xte = new float[nTest * 64], yte = new float[nTest * 10];
    int tr = 0, te = 0;
    for (int i = 0; i < n; ++i) {
      String[] f = lines.get(i).split(",");
      boolean test = i % 5 == 4;
      float[] x = test ? xte : xtr, y = test ? yte : ytr;
      int row = test ? te++ : tr++;
      for (int j = 0; j < 64; ++j) x[row * 64 + j] = Float.parseFloat(f[j + 1]) / 16f;
      y[row * 10 + Integer.parseInt(f[0])] = 1f;
    }
    try (Model shared = mlp(1 + rank);
        Model alone = mlp(1);
        Tensor xTrain = Tensor.of(xtr, tr, 64);
        Tensor yTrain = Tensor.of(ytr, tr, 10);
        Tensor xTest = Tensor.of(xte, te, 64);
        Tensor yTest = Tensor.of(yte, te, 10)) {
      Tensor[] x = {xTrain}, y = {yTrain};
      History h = shared.fit(x, y, new FitOptions().batchSize(16).epochs(15).seed(1)
          .validationSplit(0.1).distributed(true).verbose(rank == 0 ? 2 : 0));
      History one = alone.fit(x, y, new FitOptions().batchSize(16 * size).epochs(15).seed(1)
          .validationSplit(0.1).verbose(0));
      double worst = 0;
      boolean sameAsRank0 = true;
      List<Tensor> mine = shared.weights(), reference = alone.weights();
      for (int i = 0; i < mine.size(); ++i) {
        float[] a = mine.get(i).toFloatArray(), b = reference.get(i).toFloatArray();
        for (int k = 0; k < a.length; ++k) worst = Math.max(worst, Math.abs(a[k] - b[k]));
        float[] average = K.dist_all_reduce(a.clone(), ReduceOp.AVERAGE);
        sameAsRank0 &= java.util.Arrays.equals(average, a);
      }
      double[] lossShared = h.values().get("val_loss"), lossAlone = one.values().get("val_loss");
      for (int e = 0; e < lossShared.length; ++e)
        worst = Math.max(worst, Math.abs(lossShared[e] - lossAlone[e]));
      EvaluateOptions quiet = new EvaluateOptions().batchSize(128).verbose(0);
      double accuracy = shared.evaluate(new Tensor[] {xTest}, new Tensor[] {yTest}, quiet)[1];
      boolean ok = worst < 1e-4 && sameAsRank0 && accuracy > 0.9;
      // One write per line: the processes share the launcher's output.
      System.out.print(String.format("rank %d of %d: %s (largest difference from one process "
              + "%.2e, the same weights as every rank: %b, test accuracy %.2f%%)%n",
          rank, size, ok ? "ok" : "FAILED", worst, sameAsRank0, 100 * accuracy));
      System.out.flush();
      if (!ok) System.exit(1); // (MPI flags the job: the launcher reports it failed)
    }
    K.dist_finalize(); // every process leaves the job together
  }
}
