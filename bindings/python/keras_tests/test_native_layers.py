"""Every layer kbackend.models builds natively against Keras 2.2.4 on kbackend: a model with the
layer, saved by Keras, is loaded natively; its predictions equal Keras' and two epochs of fit
(shuffle off) give Keras' losses and weights. Layers that draw random numbers in
training are checked on predictions (the learning phase 0) and on training running."""
import numpy as np
import pytest

keras = pytest.importorskip("keras")
from keras import layers as L, models as kmodels, optimizers  # noqa: E402

from kbackend import models  # noqa: E402


def _seq(input_shape, *stack):
    """input -> stack -> Flatten (when needed) -> Dense(2)."""
    x = inp = L.Input(input_shape)
    for layer in stack:
        x = layer(x)
    if len(keras.backend.int_shape(x)) > 2:
        x = L.Flatten()(x)
    return kmodels.Model(inp, L.Dense(2)(x))


def _two(merge):
    a, b = L.Input((6,)), L.Input((6,))
    x = merge([L.Dense(5, activation="tanh")(a), L.Dense(5)(b)])
    if len(keras.backend.int_shape(x)) > 2:
        x = L.Flatten()(x)
    return kmodels.Model([a, b], L.Dense(2)(x))


CASES = {
    "Conv1D causal dilated": lambda: _seq((10, 3), L.Conv1D(4, 3, padding="causal",
                                                             dilation_rate=2, activation="relu")),
    "Conv1D strided": lambda: _seq((10, 3), L.Conv1D(4, 3, strides=2)),
    "Conv2D same strided": lambda: _seq((8, 8, 3), L.Conv2D(4, (3, 3), strides=2,
                                                            padding="same", activation="tanh")),
    "Conv2D channels_first": lambda: _seq((3, 6, 6), L.Conv2D(2, 3, data_format="channels_first")),
    "Conv3D": lambda: _seq((4, 4, 4, 2), L.Conv3D(2, 2)),
    "SeparableConv1D": lambda: _seq((10, 3), L.SeparableConv1D(4, 3, depth_multiplier=2)),
    "SeparableConv2D": lambda: _seq((6, 6, 3), L.SeparableConv2D(4, 3, padding="same")),
    "DepthwiseConv2D": lambda: _seq((6, 6, 3), L.DepthwiseConv2D(3, depth_multiplier=2)),
    "Conv2DTranspose": lambda: _seq((4, 4, 2), L.Conv2DTranspose(3, 3, strides=2)),
    "Conv3DTranspose": lambda: _seq((3, 3, 3, 2), L.Conv3DTranspose(2, 2, strides=2)),
    "Cropping1D": lambda: _seq((8, 3), L.Cropping1D((1, 2))),
    "Cropping2D": lambda: _seq((6, 6, 2), L.Cropping2D(((1, 0), (2, 1)))),
    "Cropping3D": lambda: _seq((4, 4, 4, 1), L.Cropping3D(1)),
    "UpSampling1D": lambda: _seq((4, 3), L.UpSampling1D(2)),
    "UpSampling2D": lambda: _seq((3, 3, 2), L.UpSampling2D((2, 3))),
    "UpSampling3D": lambda: _seq((2, 2, 2, 1), L.UpSampling3D(2)),
    "ZeroPadding1D": lambda: _seq((4, 3), L.ZeroPadding1D((1, 2))),
    "ZeroPadding2D": lambda: _seq((3, 3, 2), L.ZeroPadding2D(((1, 0), (0, 2)))),
    "ZeroPadding3D": lambda: _seq((2, 2, 2, 1), L.ZeroPadding3D(1)),
    "MaxPooling1D": lambda: _seq((9, 3), L.MaxPooling1D(2)),
    "AveragePooling1D same": lambda: _seq((9, 3), L.AveragePooling1D(3, 2, padding="same")),
    "MaxPooling2D": lambda: _seq((6, 6, 2), L.Conv2D(2, 1), L.MaxPooling2D()),
    "AveragePooling2D": lambda: _seq((6, 6, 2), L.AveragePooling2D((3, 2))),
    "MaxPooling3D": lambda: _seq((4, 4, 4, 1), L.MaxPooling3D()),
    "AveragePooling3D": lambda: _seq((4, 4, 4, 1), L.AveragePooling3D()),
    "GlobalMaxPooling1D": lambda: _seq((5, 3), L.GlobalMaxPooling1D()),
    "GlobalAveragePooling1D": lambda: _seq((5, 3), L.GlobalAveragePooling1D()),
    "GlobalMaxPooling2D": lambda: _seq((4, 4, 3), L.GlobalMaxPooling2D()),
    "GlobalAveragePooling2D": lambda: _seq((4, 4, 3), L.GlobalAveragePooling2D()),
    "GlobalAveragePooling3D": lambda: _seq((3, 3, 3, 2), L.GlobalAveragePooling3D()),
    "Add": lambda: _two(L.Add()),
    "Subtract": lambda: _two(L.Subtract()),
    "Multiply": lambda: _two(L.Multiply()),
    "Average": lambda: _two(L.Average()),
    "Maximum": lambda: _two(L.Maximum()),
    "Minimum": lambda: _two(L.Minimum()),
    "Concatenate": lambda: _two(L.Concatenate()),
    "Dot normalize": lambda: _two(L.Dot(axes=1, normalize=True)),
    "LeakyReLU": lambda: _seq((6,), L.Dense(5), L.LeakyReLU(0.2)),
    "PReLU": lambda: _seq((4, 3), L.Dense(5), L.PReLU(alpha_initializer="ones",
                                                      shared_axes=[1])),
    "ELU": lambda: _seq((6,), L.Dense(5), L.ELU(0.5)),
    "ThresholdedReLU": lambda: _seq((6,), L.Dense(5), L.ThresholdedReLU(0.1)),
    "Softmax 3-D": lambda: _seq((4, 3), L.Dense(5), L.Softmax(axis=1)),
    "ReLU": lambda: _seq((6,), L.Dense(5), L.ReLU(max_value=1.0, negative_slope=0.1,
                                                  threshold=0.05)),
    "BatchNormalization": lambda: _seq((6,), L.Dense(5), L.BatchNormalization()),
    "BatchNormalization axis 1": lambda: _seq((3, 4), L.BatchNormalization(axis=1,
                                                                          momentum=0.9)),
    "Embedding": lambda: _seq((5,), L.Embedding(10, 4)),
    "Reshape": lambda: _seq((6,), L.Reshape((2, -1)), L.Dense(3)),
    "Permute": lambda: _seq((4, 3), L.Permute((2, 1)), L.Dense(3)),
    "RepeatVector": lambda: _seq((3,), L.RepeatVector(2), L.Dense(2)),
    "ActivityRegularization": lambda: _seq((6,), L.Dense(5), L.ActivityRegularization(0.01,
                                                                                     0.02)),
    "Dense constraints and regularizers": lambda: _seq(
        (6,), L.Dense(5, kernel_constraint=keras.constraints.max_norm(0.5),
                      bias_constraint=keras.constraints.non_neg(),
                      kernel_regularizer=keras.regularizers.l1_l2(0.01, 0.01),
                      activity_regularizer=keras.regularizers.l2(0.01))),
    "Dense unit_norm min_max_norm": lambda: _seq(
        (6,), L.Dense(5, kernel_constraint=keras.constraints.unit_norm()),
        L.Dense(4, kernel_constraint=keras.constraints.min_max_norm(0.2, 0.8, rate=0.5))),
    "LocallyConnected1D": lambda: _seq((8, 3), L.LocallyConnected1D(4, 3, strides=2)),
    "LocallyConnected2D": lambda: _seq((5, 5, 2), L.LocallyConnected2D(3, (2, 2))),
    "SimpleRNN": lambda: _seq((5, 3), L.SimpleRNN(4)),
    "SimpleRNN sequences": lambda: _seq((5, 3), L.SimpleRNN(4, return_sequences=True)),
    "LSTM": lambda: _seq((5, 3), L.LSTM(4)),
    "LSTM implementation 2 backwards sequences": lambda: _seq(
        (5, 3), L.LSTM(3, implementation=2, go_backwards=True, return_sequences=True)),
    "LSTM unroll": lambda: _seq((4, 3), L.LSTM(3, unroll=True)),
    "GRU": lambda: _seq((5, 3), L.GRU(4)),
    "GRU implementation 2": lambda: _seq((5, 3), L.GRU(4, implementation=2)),
    "GRU reset_after": lambda: _seq((5, 3), L.GRU(3, reset_after=True)),
    "GRU reset_after implementation 2 sequences": lambda: _seq(
        (5, 3), L.GRU(3, reset_after=True, implementation=2, return_sequences=True)),
    "Bidirectional LSTM": lambda: _seq((5, 3), L.Bidirectional(L.LSTM(3))),
    "Bidirectional GRU sum sequences": lambda: _seq(
        (5, 3), L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="sum")),
    "TimeDistributed Dense": lambda: _seq((4, 5), L.TimeDistributed(L.Dense(3))),
    "ConvLSTM2D same": lambda: _seq((3, 5, 5, 2), L.ConvLSTM2D(3, (3, 3), padding="same")),
    "ConvLSTM2D valid sequences": lambda: _seq(
        (3, 5, 5, 2), L.ConvLSTM2D(2, (2, 2), return_sequences=True)),
    "LSTM return_state and initial_state": lambda: _states(),
    "nested Sequential": lambda: _nested_sequential(),
    "nested functional in Sequential": lambda: _nested_functional(),
}


def _states():
    x, h0 = L.Input((5, 3)), L.Input((4,))
    out, h, c = L.LSTM(4, return_state=True)(x, initial_state=[h0, L.Dense(4)(h0)])
    y = L.SimpleRNN(2)(x, initial_state=L.Dense(2)(h))
    return kmodels.Model([x, h0], L.Dense(2)(L.Concatenate()([out, c, y])))


def _nested_sequential():
    inner = kmodels.Sequential([L.Dense(4, input_shape=(6,), activation="tanh"), L.Dense(3)])
    x = L.Input((6,))
    return kmodels.Model(x, L.Dense(2)(L.Add()([inner(x), L.Dense(3)(x)])))


def _nested_functional():
    a = L.Input((6,))
    inner = kmodels.Model(a, L.Dense(4, activation="relu")(a))
    return kmodels.Sequential([L.Dense(6, input_shape=(6,)), inner, L.Dense(2)])


RANDOM_IN_TRAINING = {
    "LSTM dropout": lambda: _seq((5, 3), L.LSTM(3, dropout=0.2, recurrent_dropout=0.3)),
    "GRU implementation 2 dropout": lambda: _seq(
        (5, 3), L.GRU(3, implementation=2, dropout=0.2, recurrent_dropout=0.3)),
    "SimpleRNN dropout unroll": lambda: _seq((4, 3), L.SimpleRNN(3, dropout=0.2, unroll=True,
                                                                 recurrent_dropout=0.2)),
    "GaussianNoise": lambda: _seq((6,), L.Dense(5), L.GaussianNoise(0.1)),
    "GaussianDropout": lambda: _seq((6,), L.Dense(5), L.GaussianDropout(0.2)),
    "AlphaDropout": lambda: _seq((6,), L.Dense(5), L.AlphaDropout(0.2)),
    "SpatialDropout1D": lambda: _seq((4, 3), L.SpatialDropout1D(0.3)),
    "SpatialDropout2D": lambda: _seq((4, 4, 2), L.SpatialDropout2D(0.3)),
    "SpatialDropout3D": lambda: _seq((2, 2, 2, 2), L.SpatialDropout3D(0.3)),
}


def _data(model, n=16, seed=0):
    rng = np.random.RandomState(seed)
    xs = [rng.rand(*((n,) + tuple(keras.backend.int_shape(inp)[1:]))).astype(np.float32)
          for inp in model.inputs]
    return xs, rng.rand(n, 2).astype(np.float32)


def _inputs_for(name, model):
    xs, y = _data(model)
    if name == "Embedding":
        xs = [np.random.RandomState(1).randint(0, 10, (16, 5)).astype(np.float32)]
    return xs, y


def _flat(ws):
    return np.concatenate([w.ravel() for w in ws]) if ws else np.zeros(0)


try:  # bindings/python/keras_tests/run.sh installs it; the checks below need it
    import onnxruntime as _ort
except ImportError:
    _ort = None

# The layers that compute with an operation the ONNX export has no form for yet: the operation.
ONNX_REFUSED = {}


def _assert_exports_as_predicts(name, native, xs, tmp_path):
    """The native model exported to ONNX (ONNX's checker passes on it in the plugin) runs in
    ONNX Runtime as the native model predicts, within 1e-4 relative and 1e-5 absolute."""
    path = str(tmp_path / "model.onnx")
    try:
        native.export_onnx(path)
    except NotImplementedError as e:
        assert name in ONNX_REFUSED and ONNX_REFUSED[name] in str(e), e
        return
    assert name not in ONNX_REFUSED, name + " exports now: take it out of ONNX_REFUSED"
    if _ort is None:
        return
    session = _ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    xs = xs if isinstance(xs, list) else [xs]
    feed = {i.name: x.astype(np.float32) if i.type == "tensor(float)" else x
            for i, x in zip(session.get_inputs(), xs)}
    want = native.predict(xs if len(xs) > 1 else xs[0])
    want = want if isinstance(want, list) else [want]
    for got, w in zip(session.run(None, feed), want):
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5, err_msg=name + " in ONNX")


def _assert_predicts_and_trains_as_keras(k, xs, y, tmp_path, name=None):
    """k compiled with SGD on mse, saved, loaded natively: the same predictions, then the same
    losses and weights after two epochs."""
    k.compile(optimizers.SGD(lr=0.05, momentum=0.5), "mse")
    # Saved before training: state that files do not carry (the zero-debiasing counters of
    # BatchNormalization's moving averages, in Keras too) starts alike on both sides.
    path = str(tmp_path / "model.h5")
    k.save(path)
    native = models.load_model(path)
    np.testing.assert_allclose(native.predict(xs), k.predict(xs), rtol=1e-5, atol=1e-5)
    if name is not None:
        _assert_exports_as_predicts(name, native, xs, tmp_path)
    expected = k.fit(xs, y, epochs=2, batch_size=8, verbose=0, shuffle=False).history["loss"]
    got = native.fit(xs, y, epochs=2, batch_size=8, verbose=0, shuffle=False).history["loss"]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(_flat(native.get_weights()), _flat(k.get_weights()), atol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_predicts_and_trains_as_keras(name, tmp_path):
    k = CASES[name]()
    xs, y = _inputs_for(name, k)
    _assert_predicts_and_trains_as_keras(k, xs, y, tmp_path, name)


@pytest.mark.parametrize("name", sorted(RANDOM_IN_TRAINING))
def test_random_layer_predicts_as_keras(name, tmp_path):
    k = RANDOM_IN_TRAINING[name]()
    xs, y = _inputs_for(name, k)
    k.compile("sgd", "mse")
    path = str(tmp_path / "model.h5")
    k.save(path)
    native = models.load_model(path)
    np.testing.assert_allclose(native.predict(xs), k.predict(xs), rtol=1e-5, atol=1e-5)
    _assert_exports_as_predicts(name, native, xs, tmp_path)  # inference: no random numbers
    loss = native.fit(xs, y, epochs=2, batch_size=8, verbose=0).history["loss"]
    assert np.all(np.isfinite(loss))


def _padded_tokens(n=16, steps=6, seed=2):
    """Token ids with 0 as padding: each row's tail (or head) padded."""
    rng = np.random.RandomState(seed)
    x = rng.randint(1, 10, (n, steps)).astype(np.float32)
    for i in range(n):
        pad = i % steps
        if i % 2:
            x[i, steps - pad:] = 0
        else:
            x[i, :pad] = 0
    return x


def _masked_embedding_lstm():
    x = L.Input((6,))
    h = L.LSTM(4)(L.Embedding(10, 3, mask_zero=True)(x))
    return kmodels.Model(x, L.Dense(2)(h))


def _masked_bidirectional_pooling():
    x = L.Input((6,))
    h = L.Bidirectional(L.GRU(3, return_sequences=True))(L.Embedding(10, 3, mask_zero=True)(x))
    return kmodels.Model(x, L.Dense(2)(L.GlobalAveragePooling1D()(h)))


def _masking_sequence_output():
    x = L.Input((6, 2))
    h = L.SimpleRNN(3, return_sequences=True)(L.Masking(0.0)(x))
    return kmodels.Model(x, L.TimeDistributed(L.Dense(2))(L.Dense(3, activation="tanh")(h)))


MASKED = {
    "Embedding mask_zero + LSTM": (_masked_embedding_lstm, "tokens"),
    "Bidirectional GRU + GlobalAveragePooling1D (masked)": (_masked_bidirectional_pooling, "tokens"),
    "Masking + SimpleRNN sequences, masked loss": (_masking_sequence_output, "features"),
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_masked_model_predicts_and_trains_as_keras(name, tmp_path):
    build, kind = MASKED[name]
    k = build()
    rng = np.random.RandomState(4)
    if kind == "tokens":
        x = _padded_tokens()
        y = rng.rand(16, 2).astype(np.float32)
    else:
        x = np.repeat(_padded_tokens()[:, :, None], 2, axis=2) / 10.0
        y = rng.rand(16, 6, 2).astype(np.float32)
    _assert_predicts_and_trains_as_keras(k, x, y, tmp_path)


def test_a_layer_without_masking_refuses_a_mask():
    """As Keras (which refuses it when the model is built): a masked input to Flatten."""
    x = L.Input((6,))
    k = kmodels.Model(x, L.Dense(2)(L.Flatten()(L.Embedding(10, 3)(x))))
    config = k.to_json().replace('"mask_zero": false', '"mask_zero": true')
    with pytest.raises(ValueError, match="does not support masking"):
        models.model_from_json(config)


def test_stateful_rnn_carries_state_as_keras(tmp_path):
    x = L.Input(batch_shape=(4, 3, 2))
    k = kmodels.Model(x, L.Dense(2)(L.LSTM(3, stateful=True)(x)))
    k.compile(optimizers.SGD(lr=0.05), "mse")
    path = str(tmp_path / "model.h5")
    k.save(path)
    native = models.load_model(path)
    rng = np.random.RandomState(6)
    xs = rng.rand(8, 3, 2).astype(np.float32)
    ys = rng.rand(8, 2).astype(np.float32)
    for step in range(3):  # the states carry over from call to call, predictions included
        np.testing.assert_allclose(native.predict(xs[:4], batch_size=4),
                                   k.predict(xs[:4], batch_size=4), rtol=1e-5, atol=1e-6)
    expected = k.fit(xs, ys, epochs=2, batch_size=4, verbose=0, shuffle=False).history["loss"]
    got = native.fit(xs, ys, epochs=2, batch_size=4, verbose=0, shuffle=False).history["loss"]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    k.reset_states()
    native.reset_states()
    np.testing.assert_allclose(native.predict(xs[4:], batch_size=4),
                               k.predict(xs[4:], batch_size=4), rtol=1e-5, atol=1e-6)
