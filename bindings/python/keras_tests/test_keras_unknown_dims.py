"""Unmodified Keras 2.2.4 on kbackend with several dims unknown until a function runs: sequences
of unspecified length through Dense, TimeDistributed and Masking, Reshape in a model of unknown
batch, and K.reshape to dims taken from K.shape."""
import numpy as np
import pytest

keras = pytest.importorskip("keras")
from keras import backend as K  # noqa: E402
from keras import layers, models  # noqa: E402


def _fit_lowers_loss(model, x, y, epochs=30):
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=epochs, batch_size=8, verbose=0)
    after = model.evaluate(x, y, verbose=0)
    assert np.isfinite(after) and after < before, (before, after)


def test_dense_after_lstm_on_sequences_of_unknown_length():
    rng = np.random.RandomState(0)
    model = models.Sequential([layers.LSTM(8, return_sequences=True, input_shape=(None, 5)),
                               layers.Dense(3)])
    assert model.output_shape == (None, None, 3)
    model.compile("adam", "mse")
    x, y = rng.rand(16, 7, 5).astype("float32"), rng.rand(16, 7, 3).astype("float32")
    _fit_lowers_loss(model, x, y)
    lstm_out = models.Model(model.input, model.layers[0].output)
    w, b = model.layers[1].get_weights()
    for steps in (4, 9):
        xs = rng.rand(3, steps, 5).astype("float32")
        out = model.predict(xs)
        assert out.shape == (3, steps, 3)
        np.testing.assert_allclose(out, lstm_out.predict(xs) @ w + b, rtol=1e-5, atol=1e-6)


def test_time_distributed_dense_with_unspecified_timesteps():
    rng = np.random.RandomState(1)
    model = models.Sequential([layers.TimeDistributed(layers.Dense(4), input_shape=(None, 6))])
    assert model.output_shape == (None, None, 4)
    model.compile("sgd", "mse")
    _fit_lowers_loss(model, rng.rand(16, 5, 6), rng.rand(16, 5, 4))
    w, b = model.layers[0].get_weights()
    for steps in (1, 8):
        xs = rng.rand(2, steps, 6).astype("float32")
        np.testing.assert_allclose(model.predict(xs), xs @ w + b, rtol=1e-5, atol=1e-6)


def test_time_distributed_with_masking():
    """Masked steps (all zeros) do not reach the LSTM's state: appending them changes nothing."""
    rng = np.random.RandomState(2)
    model = models.Sequential([layers.Masking(input_shape=(None, 4)),
                               layers.TimeDistributed(layers.Dense(5)), layers.LSTM(3)])
    model.compile("rmsprop", "mse")
    _fit_lowers_loss(model, rng.rand(16, 6, 4), rng.rand(16, 3))
    xs = rng.rand(2, 6, 4).astype("float32")
    padded = np.concatenate([xs, np.zeros((2, 3, 4), "float32")], axis=1)
    np.testing.assert_allclose(model.predict(padded), model.predict(xs), rtol=1e-5, atol=1e-6)


def test_reshape_with_minus_one_in_a_model_of_unknown_batch():
    rng = np.random.RandomState(3)
    model = models.Sequential([layers.Reshape((-1, 4), input_shape=(12,)),
                               layers.TimeDistributed(layers.Dense(2)), layers.Flatten(),
                               layers.Dense(1)])
    assert model.layers[0].output_shape == (None, 3, 4)
    model.compile("sgd", "mse")
    _fit_lowers_loss(model, rng.rand(16, 12), rng.rand(16, 1))


def test_reshape_to_dims_from_k_shape():
    x = K.placeholder((None, None, 6))
    s = K.shape(x)
    y = K.reshape(x, (s[0], s[1], 2, 3))
    assert K.int_shape(y) == (None, None, 2, 3)
    z = K.reshape(x, K.stack([s[0] * s[1], -1]))
    f = K.function([x], [y, z])
    for shape in ((2, 5, 6), (1, 1, 6)):
        v = np.random.RandomState(4).rand(*shape).astype("float32")
        ry, rz = f([v])
        np.testing.assert_array_equal(ry, v.reshape(shape[0], shape[1], 2, 3))
        np.testing.assert_array_equal(rz, v.reshape(-1, 6))


def test_tensor_arguments_and_indices():
    """K.tile, K.repeat, K.slice, K.arange and K.one_hot with scalar tensors from K.shape, and a Tensor
    indexed by scalar tensors (x[i], x[:, i], x[:, 1:n]), with gradients through them."""
    x = K.placeholder((None, None, 4))
    s = K.shape(x)
    n, last = s[1], s[1] - 1
    outs = [K.tile(x, (1, n, 1)), K.repeat(x[:, 0, :], n), K.slice(x, (0, 1, 0), (-1, n - 1, 2)),
            K.arange(n), K.arange(1, n, 2, dtype="float32"), x[s[0] - 1], x[:, last], x[:, 1:n],
            K.one_hot(K.arange(n), n + 1)]
    loss = K.sum(K.square(outs[0])) + K.sum(outs[2]) + K.sum(outs[7] * 3)
    outs.insert(8, K.gradients(loss, [x])[0])
    f = K.function([x], outs)
    for shape in ((2, 3, 4), (3, 5, 4)):
        v = np.random.RandomState(5).rand(*shape).astype("float32")
        t = shape[1]
        r = f([v])
        np.testing.assert_allclose(r[0], np.tile(v, (1, t, 1)), rtol=1e-6)
        np.testing.assert_allclose(r[1], np.repeat(v[:, None, 0, :], t, axis=1), rtol=1e-6)
        np.testing.assert_allclose(r[2], v[:, 1:, :2], rtol=1e-6)
        np.testing.assert_array_equal(r[3], np.arange(t))
        np.testing.assert_array_equal(r[4], np.arange(1, t, 2, dtype="float32"))
        np.testing.assert_array_equal(r[5], v[shape[0] - 1])
        np.testing.assert_array_equal(r[6], v[:, t - 1])
        np.testing.assert_array_equal(r[7], v[:, 1:t])
        grad = 2 * v * t
        grad[:, 1:, :2] += 1
        grad[:, 1:t] += 3
        np.testing.assert_allclose(r[8], grad, rtol=1e-5)
        np.testing.assert_array_equal(r[9], np.eye(t + 1)[:t])
