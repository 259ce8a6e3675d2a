"""Makes the `.keras` archives of tf.keras 2.15 that kbackend's model tests load (run once,
outside CI; the files and their expected outputs are committed):

    python3 -m venv ~/.cache/kb-tf215 && ~/.cache/kb-tf215/bin/pip install tensorflow-cpu==2.15.1
    ~/.cache/kb-tf215/bin/python tests/model_files/tf_keras_archives/make_fixtures.py

tf.keras 2.13-2.15 saves `.keras` archives in Keras 3's layout (layers/<class>/vars/<i>, the
optimizer's variables, a compile_config) with Keras 2's configs (nodes as lists, optimizers by
name or as keras.optimizers.experimental objects) and no learning-rate variable. Each model is
trained one epoch on random data and saved; expected.npz holds, per model, the inputs, targets,
predictions, test_on_batch values, and the losses of three train_on_batch calls on the archive
as tf.keras loads it (optimizer state included) with the predictions after them."""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fixture_models  # noqa: E402

keras = tf.keras
L = keras.layers
HERE = os.path.dirname(os.path.abspath(__file__))


def mlp():
    m = keras.Sequential([keras.Input((8,)), L.Dense(16, activation="relu"),
                          L.Dense(3, activation="softmax")])
    m.compile(keras.optimizers.Adam(0.01), "categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.RandomState(0)
    return m, [rng.rand(32, 8).astype(np.float32)], [np.eye(3, dtype=np.float32)[rng.randint(0, 3, 32)]]


def normalized():  # BatchNormalization over features (not fused: Keras 3's moving statistics)
    m = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="tanh"),
                          L.BatchNormalization(), L.Dense(2)])
    m.compile(keras.optimizers.SGD(0.05, momentum=0.5), "mse")
    rng = np.random.RandomState(1)
    return m, [rng.rand(16, 6).astype(np.float32)], [rng.rand(16, 2).astype(np.float32)]


def functional():
    return fixture_models.functional(keras)


def rnn():
    return fixture_models.rnn(keras)


def nested():
    block = keras.Sequential([keras.Input((5,)), L.Dense(4, activation="relu"), L.Dense(4)],
                             name="block")
    x = keras.Input((5,))
    h = L.Add()([block(x), block(L.Dense(5)(x))])  # the block shared: two nodes
    m = keras.Model(x, L.Dense(2, activation="sigmoid")(h))
    m.compile(keras.optimizers.SGD(0.1, momentum=0.5, weight_decay=0.01), "binary_crossentropy")
    rng = np.random.RandomState(4)
    return m, [rng.rand(10, 5).astype(np.float32)], [rng.randint(0, 2, (10, 2)).astype(np.float32)]


def main():
    keras.utils.set_random_seed(0)
    expected = {}
    for make in (mlp, normalized, functional, rnn, nested):
        name = make.__name__
        model, xs, ys = make()
        # tf.keras takes a single input or target bare, not in a list.
        x, y = (xs if len(xs) > 1 else xs[0]), (ys if len(ys) > 1 else ys[0])
        model.fit(x, y, epochs=1, batch_size=8, verbose=0)
        model.save(os.path.join(HERE, name + ".keras"))
        fixture_models.record(expected, name, model, xs, ys, x, y)
        loaded = keras.models.load_model(os.path.join(HERE, name + ".keras"))
        fixture_models.record_training(expected, name, loaded, x, y)
    np.savez(os.path.join(HERE, "expected.npz"), **expected)
    print("tf.keras", tf.__version__, "wrote", sorted({k.split("/")[0] for k in expected}))


if __name__ == "__main__":
    main()
