"""What the Keras fixture scripts (keras3/make_fixtures.py, tf_keras_archives/make_fixtures.py)
share: models both Keras versions build alike, and the record of what Keras computed for a
model (expected.npz's NAME/x0, NAME/y0, NAME/pred0, NAME/test_loss, and after three steps on
the file as Keras loads it, NAME/train_losses and NAME/trained_pred0). Each function takes the
`keras` module of the venv it runs in."""
import numpy as np


def functional(keras):
    L = keras.layers
    a = keras.Input((6,), name="a")
    b = keras.Input((4,), name="b")
    h = L.Dense(8, activation="tanh", name="shared")(a)
    h = L.Concatenate()([h, b])
    o1 = L.Dense(3, activation="softmax", name="o1")(h)
    o2 = L.Dense(1, name="o2")(L.Dense(5, activation="relu")(h))
    m = keras.Model([a, b], [o1, o2])
    m.compile("rmsprop", ["categorical_crossentropy", "mse"])
    rng = np.random.RandomState(2)
    xs = [rng.rand(20, 6).astype(np.float32), rng.rand(20, 4).astype(np.float32)]
    ys = [np.eye(3, dtype=np.float32)[rng.randint(0, 3, 20)], rng.rand(20, 1).astype(np.float32)]
    return m, xs, ys


def rnn(keras):
    L = keras.layers
    tokens = keras.Input((6,))
    x = L.Embedding(10, 4)(tokens)
    x = L.LSTM(5)(x)
    out = L.Dense(2, activation="softmax")(x)
    m = keras.Model(tokens, out)
    m.compile("adam", "sparse_categorical_crossentropy")
    rng = np.random.RandomState(3)
    return m, [rng.randint(0, 10, (12, 6)).astype(np.float32)], [rng.randint(0, 2, (12, 1)).astype(np.float32)]


def listed(v):
    return v if isinstance(v, list) else [v]


def record(expected, name, model, xs, ys, x, y):
    """The inputs, targets, predictions and test loss of `model` (x and y as Keras takes them)."""
    for i, a in enumerate(xs):
        expected[f"{name}/x{i}"] = a
    for i, a in enumerate(ys):
        expected[f"{name}/y{i}"] = a
    for i, a in enumerate(listed(model.predict(x, verbose=0))):
        expected[f"{name}/pred{i}"] = np.asarray(a)
    expected[f"{name}/test_loss"] = np.atleast_1d(np.asarray(model.test_on_batch(x, y), dtype=np.float64))


def record_training(expected, name, loaded, x, y):
    """The losses of three train_on_batch calls on a loaded model, and its predictions after."""
    steps = [np.atleast_1d(np.asarray(loaded.train_on_batch(x, y)))[0] for _ in range(3)]
    expected[f"{name}/train_losses"] = np.asarray(steps, dtype=np.float64)
    for i, a in enumerate(listed(loaded.predict(x, verbose=0))):
        expected[f"{name}/trained_pred{i}"] = np.asarray(a)
