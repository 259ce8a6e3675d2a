import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.kbackend.*;

/** Trains a two-layer MLP (64 -> 64 relu -> 10 softmax) on the bundled 8x8 digits with SGD.
 * Usage: java -cp kbackend.jar:. TrainMlp [examples/data/digits.csv] (exit 0 when accuracy > 90%) */
public class TrainMlp {
  static int state = 42;

  static void shuffle(int[] idx, int from, int n) { // the C example's fixed permutation
    for (int i = n - 1; i > 0; --i) {
      state = state * 1103515245 + 12345;
      int j = (int) (Integer.toUnsignedLong(state >>> 8) % (i + 1));
      int t = idx[from + i];
      idx[from + i] = idx[from + j];
      idx[from + j] = t;
    }
  }

  public static void main(String[] args) throws Exception {
    List<float[]> xs = new ArrayList<>();
    List<Integer> ys = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(args.length > 0 ? args[0] : "examples/data/digits.csv"))) {
      if (line.isEmpty() || line.startsWith("#")) continue;
      String[] f = line.split(",");
      float[] x = new float[64];
      for (int j = 0; j < 64; ++j) x[j] = Float.parseFloat(f[j + 1]) / 16f;
      xs.add(x);
      ys.add(Integer.parseInt(f[0]));
    }
    int n = xs.size(), nTest = n / 5, nTrain = n - nTest;
    int[] idx = new int[n];
    for (int i = 0; i < n; ++i) idx[i] = i;
    shuffle(idx, 0, n);
    System.out.printf("kbackend %s: %d training and %d test digits%n", K.version(), nTrain, nTest);

    Tensor x = K.placeholder(-1, 64), y = K.placeholder(-1, 10);
    Tensor w1 = K.random_normal_variable(new long[] {64, 64}, 0, 0.125, 1);
    Tensor w2 = K.random_normal_variable(new long[] {64, 10}, 0, 0.125, 2);
    Tensor b1 = K.zeros(64), b2 = K.zeros(10);
    Tensor hidden = K.relu(K.bias_add(x.matmul(w1), b1, DataFormat.CHANNELS_LAST));
    Tensor probs = K.softmax(K.bias_add(hidden.matmul(w2), b2, DataFormat.CHANNELS_LAST));
    Tensor loss = K.mean(K.categorical_crossentropy(y, probs));
    List<Tensor> params = List.of(w1, b1, w2, b2);
    List<Tensor> grads = K.gradients(loss, params);
    List<Tensor> updates = new ArrayList<>();
    for (int i = 0; i < 4; ++i) updates.add(K.update_sub(params.get(i), grads.get(i).mul(0.5)));
    CompiledFunction train = K.function(List.of(x, y), List.of(loss), updates);
    CompiledFunction predict = K.function(List.of(x), List.of(probs));

    for (int epoch = 1; epoch <= 30; ++epoch) {
      shuffle(idx, 0, nTrain);
      double total = 0;
      int batches = 0;
      for (int s = 0; s < nTrain; s += 32) {
        int m = Math.min(32, nTrain - s);
        try (Tensor bx = batchX(xs, idx, s, m); Tensor by = batchY(ys, idx, s, m)) {
          for (Tensor l : train.call(bx, by)) try (l) { total += l.floatValue(); }
        }
        ++batches;
      }
      if (epoch == 1 || epoch % 5 == 0) System.out.printf("epoch %2d  loss %.4f%n", epoch, total / batches);
    }
    float[] p = predict.call(batchX(xs, idx, nTrain, nTest)).get(0).toFloatArray();
    int correct = 0;
    for (int i = 0; i < nTest; ++i) {
      int best = 0;
      for (int c = 1; c < 10; ++c) if (p[i * 10 + c] > p[i * 10 + best]) best = c;
      if (best == ys.get(idx[nTrain + i])) ++correct;
    }
    double acc = (double) correct / nTest;
    System.out.printf("test accuracy %.2f%% (%d/%d)%n", 100 * acc, correct, nTest);
    System.exit(acc > 0.9 ? 0 : 2);
  }

  static Tensor batchX(List<float[]> xs, int[] idx, int from, int m) {
    float[] b = new float[m * 64];
    for (int i = 0; i < m; ++i) System.arraycopy(xs.get(idx[from + i]), 0, b, i * 64, 64);
    return Tensor.of(b, m, 64);
  }

  static Tensor batchY(List<Integer> ys, int[] idx, int from, int m) {
    float[] b = new float[m * 10];
    for (int i = 0; i < m; ++i) b[i * 10 + ys.get(idx[from + i])] = 1;
    return Tensor.of(b, m, 10);
  }
}
