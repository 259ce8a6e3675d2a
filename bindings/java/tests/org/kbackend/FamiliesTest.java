package org.kbackend;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

/** One or more known values per family of the API (elementwise, reduce, shape, linalg, nn, conv,
 * pool, rnn, CTC, sparse, random, control), through K's overloads with Keras' defaults. */
class FamiliesTest {
  private static Tensor image() {
    return Tensor.of(new float[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 3, 3, 1);
  }

  private static void near(float[] want, Tensor got) {
    assertArrayEquals(want, got.toFloatArray(), 1e-5f);
  }

  @Test
  void elementwiseAndReductions() {
    Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
    near(new float[] {1, 4, 9, 16, 25, 36}, K.square(x));
    near(new float[] {6, 15}, K.sum(x, new long[] {1}));
    near(new float[] {21}, K.sum(x));
    assertArrayEquals(new long[] {1, 3}, K.max(x, new long[] {0}, true).shape());
    near(new float[] {2f / 3, 2f / 3}, K.var(x, new long[] {1}));
    near(new float[] {1, 3, 6, 4, 9, 15}, K.cumsum(x, 1));
  }

  @Test
  void shapesAndLinearAlgebra() {
    Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
    near(new float[] {2, 3, 5, 6}, K.slice(x, new long[] {0, 1}, new long[] {2, 2}));
    near(new float[] {4, 6}, K.strided_slice(x, new long[] {1, 0}, new long[] {2, 3}, new long[] {1, 2}, 0, 0, 1, 0));
    near(new float[] {1, 4, 2, 5, 3, 6}, K.transpose(x));
    near(new float[] {14, 32, 32, 77}, K.dot(x, K.transpose(x)));
    near(new float[] {14, 77}, K.batch_dot(x, x, new long[] {1, 1}));
    assertArrayEquals(new long[] {3, 2}, K.reshape(x, new long[] {3, 2}).shape());
    near(new float[] {0.6f, 0.8f}, K.l2_normalize(Tensor.of(new float[] {3, 4}, 2)));
    assertThrows(IllegalArgumentException.class, () -> K.slice(x, new long[] {0, 1}, new long[] {2}));
  }

  @Test
  void nnConvolutionAndPooling() {
    near(new float[] {0, 0.5f, 2}, K.relu(Tensor.of(new float[] {-1, 0.5f, 3}, 3), 0.0, 2.0));
    Tensor ones = Tensor.of(new float[] {1, 1, 1, 1}, 2, 2, 1, 1);
    near(new float[] {12, 16, 24, 28}, K.conv2d(image(), ones));
    near(new float[] {12, 16, 9, 24, 28, 15, 15, 17, 9}, K.conv2d(image(), ones, new long[] {1, 1}, Padding.SAME));
    near(new float[] {-1, -1, -1},
         K.conv1d(Tensor.of(new float[] {1, 2, 3, 4}, 1, 4, 1), Tensor.of(new float[] {1, -1}, 2, 1, 1)));
    near(new float[] {5, 6, 8, 9}, K.pool2d(image(), new long[] {2, 2}));
    assertArrayEquals(new long[] {1, 5, 5, 1}, K.spatial_2d_padding(image(), new long[] {1, 1, 1, 1}).shape());
    Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 4);
    Tensor mean = Tensor.of(new float[] {2.5f}, 1), variance = Tensor.of(new float[] {1.25f}, 1);
    near(new float[] {-1.341641f, -0.447214f, 0.447214f, 1.341641f},
         K.batch_normalization(x, mean, variance, null, null, -1, 0.0));
  }

  @Test
  void rnnAndCtc() {
    // The step adds its input to the state: the outputs are the running sums.
    Tensor inputs = Tensor.of(new float[] {1, 2, 3}, 1, 3, 1);
    K.RnnResult r = K.rnn((input, states) -> {
      Tensor s = input.add(states.get(0));
      return new K.Step(s, List.of(s));
    }, inputs, List.of(Tensor.of(new float[] {0}, 1, 1)));
    near(new float[] {1, 3, 6}, r.outputs);
    near(new float[] {6}, r.lastOutput);
    // Best path: classes 0, 0, 1 (2 is the blank): repeats merged give [0, 1].
    Tensor probs = Tensor.of(new float[] {0.7f, 0.2f, 0.1f, 0.6f, 0.3f, 0.1f, 0.1f, 0.8f, 0.1f}, 1, 3, 3);
    List<Tensor> decoded = K.ctc_decode(probs, Tensor.of(new int[] {3}, 1), 1, 100, 1).drain();
    assertArrayEquals(new long[] {0, 1}, decoded.get(0).toLongArray());
    double eps = K.epsilon();
    double want = -(Math.log(0.7 + eps) + Math.log(0.6 + eps) + Math.log(0.8 + eps));
    assertEquals(want, decoded.get(decoded.size() - 1).toFloatArray()[0], 1e-4);
  }

  @Test
  void sparseRandomAndControl() {
    Tensor coo = K.sparse_from_coo(new long[] {0, 1, 1, 0}, new float[] {2, 3}, new long[] {2, 2});
    near(new float[] {2, 3}, K.dot(coo, Tensor.of(new float[] {1, 1}, 2, 1)));
    float[] u = K.random_uniform(new long[] {1000}, -1.0, 1.0, DType.FLOAT32, 7L).toFloatArray();
    float lo = 1, hi = -1;
    for (float v : u) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    assertTrue(lo >= -1 && hi < 1 && hi - lo > 1.5f, lo + " " + hi);
    assertArrayEquals(u, K.random_uniform(new long[] {1000}, -1.0, 1.0, DType.FLOAT32, 7L).toFloatArray());
    Tensor condition = K.cast(Tensor.of(new int[] {1, 0}, 2), DType.BOOL);
    near(new float[] {1, 6}, K.switch_(condition, Tensor.of(new float[] {1, 2}, 2), Tensor.of(new float[] {5, 6}, 2)));
    near(new float[] {1, 2}, K.dropout(Tensor.of(new float[] {1, 2}, 2), 0.0, null, null));
  }
}
