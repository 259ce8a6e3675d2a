"""Makes the tf.keras 2.x model files kbackend's model tests load (run once, outside CI, with
TensorFlow; the files and their expected outputs are committed):

    build/peers/tensorflow/bin/python tests/model_files/tf_keras/make_fixtures.py

(bash bench/setup_peers.sh tensorflow makes that venv; tensorflow-cpu 2.15.1 made these.) Each model is trained one epoch on
random data and saved in the HDF5 format (save_format="h5"); expected.npz holds, per model, the
inputs, targets, tf.keras' predictions, its test_on_batch values and, where no dropout draws,
the losses of three train_on_batch calls on the file as tf.keras loads it (optimizer state
included) and the predictions after them."""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
K = tf.keras
L = K.layers


def mlp():
    m = K.Sequential([L.Input((8,)), L.Dense(16, activation="relu"), L.Dropout(0.1),
                      L.Dense(3, activation="softmax")])
    m.compile(K.optimizers.Adam(0.01), "categorical_crossentropy", ["accuracy"])
    rng = np.random.RandomState(0)
    return m, [rng.rand(32, 8).astype(np.float32)], [np.eye(3, dtype=np.float32)[rng.randint(0, 3, 32)]]


def cnn():
    m = K.Sequential([L.Input((8, 8, 1)), L.Conv2D(4, 3, padding="same", activation="relu"),
                      L.BatchNormalization(), L.MaxPooling2D(), L.Conv2D(3, 2), L.Flatten(),
                      L.Dense(2)])
    m.compile(K.optimizers.SGD(0.01, momentum=0.5), "mse")
    rng = np.random.RandomState(1)
    return m, [rng.rand(16, 8, 8, 1).astype(np.float32)], [rng.rand(16, 2).astype(np.float32)]


def rnn():
    tokens = L.Input((6,))
    x = L.Embedding(10, 4)(tokens)
    x = L.LSTM(5, return_sequences=True)(x)
    x = L.Bidirectional(L.GRU(3))(x)
    m = K.Model(tokens, L.Dense(1, activation="sigmoid")(x))
    m.compile(K.optimizers.RMSprop(0.01), "binary_crossentropy", ["accuracy"])
    rng = np.random.RandomState(2)
    return m, [rng.randint(0, 10, (24, 6)).astype(np.float32)], [rng.randint(0, 2, (24, 1)).astype(np.float32)]


def two_outputs():
    a, b = L.Input((5,), name="a"), L.Input((4,), name="b")
    h = L.Concatenate()([L.Dense(6, activation="tanh")(a), b])
    out1 = L.Dense(3, activation="softmax", name="cls")(h)
    out2 = L.Dense(1, name="reg")(L.SimpleRNN(2)(L.Reshape((5, 2))(L.Dense(10)(h))))
    m = K.Model([a, b], [out1, out2])
    m.compile(K.optimizers.SGD(0.1), ["categorical_crossentropy", "mse"], loss_weights=[1.0, 0.5])
    rng = np.random.RandomState(3)
    xs = [rng.rand(20, 5).astype(np.float32), rng.rand(20, 4).astype(np.float32)]
    ys = [np.eye(3, dtype=np.float32)[rng.randint(0, 3, 20)], rng.rand(20, 1).astype(np.float32)]
    return m, xs, ys


def main():
    tf.random.set_seed(0)
    expected = {}
    for name, make in [("mlp", mlp), ("cnn", cnn), ("rnn", rnn), ("two_outputs", two_outputs)]:
        model, xs, ys = make()
        x_in = xs if len(xs) > 1 else xs[0]
        y_in = ys if len(ys) > 1 else ys[0]
        model.fit(x_in, y_in, epochs=1, batch_size=8, verbose=0)
        model.save(os.path.join(HERE, name + ".h5"), save_format="h5")
        for i, x in enumerate(xs):
            expected["%s/x%d" % (name, i)] = x
        for i, y in enumerate(ys):
            expected["%s/y%d" % (name, i)] = y
        preds = model.predict(x_in, verbose=0)
        for i, p in enumerate(preds if isinstance(preds, list) else [preds]):
            expected["%s/pred%d" % (name, i)] = p
        loss = model.test_on_batch(x_in, y_in)
        expected["%s/test_loss" % name] = np.array(loss if isinstance(loss, list) else [loss])
        if name != "mlp":  # (its Dropout draws differ) the file trained on, as tf.keras loads it
            again = K.models.load_model(os.path.join(HERE, name + ".h5"))
            losses = [again.train_on_batch(x_in, y_in) for _ in range(3)]
            expected["%s/train_losses" % name] = np.array(
                [v[0] if isinstance(v, list) else v for v in losses])
            # The predictions after those steps: BatchNormalization's moving statistics too.
            after = again.predict(x_in, verbose=0)
            for i, p in enumerate(after if isinstance(after, list) else [after]):
                expected["%s/trained_pred%d" % (name, i)] = p
    np.savez_compressed(os.path.join(HERE, "expected.npz"), **expected)
    print("tf.keras", tf.__version__, "->", HERE)


if __name__ == "__main__":
    main()
