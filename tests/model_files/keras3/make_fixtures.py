"""Makes the Keras 3 `.keras` files kbackend's model tests load (run once, outside CI; the files
and their expected outputs are committed):

    python3 -m venv ~/.cache/kb-keras3 && ~/.cache/kb-keras3/bin/pip install keras jax h5py
    KERAS_BACKEND=jax ~/.cache/kb-keras3/bin/python tests/model_files/keras3/make_fixtures.py [NAME...]

Each model is trained one epoch on random data and saved with model.save("NAME.keras") (Keras'
default format since 3.0: a zip of metadata.json, config.json and model.weights.h5).
expected.npz holds, per model, the inputs, targets, Keras' predictions and its test_on_batch
values and, where no dropout draws, the losses of three train_on_batch calls on the file as
Keras loads it (optimizer state included) and the predictions after them."""
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fixture_models  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
L = keras.layers


def mlp():  # dropout: no train_losses
    m = keras.Sequential([keras.Input((8,)), L.Dense(16, activation="relu"), L.Dropout(0.1),
                          L.Dense(3, activation="softmax")])
    m.compile(keras.optimizers.Adam(0.01), "categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.RandomState(0)
    return m, [rng.rand(32, 8).astype(np.float32)], [np.eye(3, dtype=np.float32)[rng.randint(0, 3, 32)]]


def cnn():
    m = keras.Sequential([keras.Input((8, 8, 1)), L.Conv2D(4, 3, padding="same", activation="relu"),
                          L.BatchNormalization(), L.MaxPooling2D(), L.Conv2D(3, 2), L.Flatten(),
                          L.Dense(2)])
    m.compile(keras.optimizers.SGD(0.01, momentum=0.5), "mse")
    rng = np.random.RandomState(1)
    return m, [rng.rand(16, 8, 8, 1).astype(np.float32)], [rng.rand(16, 2).astype(np.float32)]


def functional():
    return fixture_models.functional(keras)


def rnn():
    return fixture_models.rnn(keras)


def nested():
    block = keras.Sequential([keras.Input((5,)), L.Dense(4, activation="relu"), L.Dense(4)],
                             name="block")
    i = keras.Input((4,))
    inner = keras.Model(i, L.Dense(2, activation="sigmoid")(i), name="head")
    x = keras.Input((5,))
    h = block(x)
    h = L.Add()([h, block(L.Dense(5)(x))])  # the block shared: two nodes
    m = keras.Model(x, inner(h))
    m.compile(keras.optimizers.Adam(0.005), "binary_crossentropy")
    rng = np.random.RandomState(4)
    return m, [rng.rand(10, 5).astype(np.float32)], [rng.randint(0, 2, (10, 2)).astype(np.float32)]


def logits():
    m = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="relu"), L.Dense(3)])
    m.compile(keras.optimizers.Adam(0.01, clipnorm=1.0),
              keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=[keras.metrics.SparseCategoricalAccuracy()])
    rng = np.random.RandomState(5)
    return m, [rng.rand(16, 6).astype(np.float32)], [rng.randint(0, 3, (16, 1)).astype(np.float32)]


def clipped():
    m = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="tanh"), L.Dense(2)])
    m.compile(keras.optimizers.SGD(0.5, momentum=0.9, clipnorm=0.05), "mse")
    rng = np.random.RandomState(6)
    return m, [rng.rand(16, 6).astype(np.float32)], [3 * rng.rand(16, 2).astype(np.float32)]


def global_clipped():
    m = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="tanh"), L.Dense(2)])
    m.compile(keras.optimizers.Adam(0.05, global_clipnorm=0.05), "mse")
    rng = np.random.RandomState(7)
    return m, [rng.rand(16, 6).astype(np.float32)], [3 * rng.rand(16, 2).astype(np.float32)]


def _dense_pair(seed, optimizer):
    """A small regression for an optimizer's rules: its slots, weight decay, its schedule (two
    steps in the epoch before the save, three after)."""
    m = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="tanh"), L.Dense(2)])
    m.compile(optimizer, "mse")
    rng = np.random.RandomState(seed)
    return m, [rng.rand(16, 6).astype(np.float32)], [rng.rand(16, 2).astype(np.float32)]


def adamw():
    return _dense_pair(8, keras.optimizers.AdamW(0.02, weight_decay=0.1))


def lion():
    return _dense_pair(9, keras.optimizers.Lion(0.003, weight_decay=0.05))


def adagrad():
    return _dense_pair(10, keras.optimizers.Adagrad(0.1))


def nadam():
    return _dense_pair(11, keras.optimizers.Nadam(0.01))


def rmsprop_centered():
    return _dense_pair(12, keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True))


def sgd_decayed():
    return _dense_pair(13, keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True,
                                                weight_decay=0.01))


def write_mlp_text(expected):
    """mlp_expected.txt, for the languages without an .npz reader: a line "rows inputs classes
    test_loss", then per row its inputs, its one-hot target and Keras' prediction."""
    x, y, p = expected["mlp/x0"], expected["mlp/y0"], expected["mlp/pred0"]
    with open(os.path.join(HERE, "mlp_expected.txt"), "w") as f:
        f.write("%d %d %d %r\n" % (x.shape[0], x.shape[1], y.shape[1],
                                   float(expected["mlp/test_loss"][0])))
        for row in range(x.shape[0]):
            f.write(" ".join(repr(float(v)) for v in np.concatenate([x[row], y[row], p[row]])))
            f.write("\n")


def lamb():
    return _dense_pair(20, keras.optimizers.Lamb(0.02, weight_decay=0.01))


def ftrl():
    return _dense_pair(21, keras.optimizers.Ftrl(0.2, l1_regularization_strength=0.001,
                                                 l2_regularization_strength=0.01,
                                                 l2_shrinkage_regularization_strength=0.005,
                                                 beta=0.1))


def ema():
    return _dense_pair(22, keras.optimizers.AdamW(0.02, use_ema=True, ema_momentum=0.9,
                                                  ema_overwrite_frequency=3))


def adafactor():  # a kernel's moments factored, a bias's whole
    return _dense_pair(23, keras.optimizers.Adafactor(0.05))


S = keras.optimizers.schedules


def exponential_decay():
    return _dense_pair(14, keras.optimizers.Adam(S.ExponentialDecay(0.05, 2, 0.5, staircase=True)))


def inverse_time_decay():
    return _dense_pair(15, keras.optimizers.SGD(S.InverseTimeDecay(0.2, 1, 0.5), momentum=0.5))


def piecewise_decay():
    return _dense_pair(16, keras.optimizers.RMSprop(S.PiecewiseConstantDecay([2, 3], [0.02, 0.01,
                                                                                   0.005])))


def polynomial_decay():
    return _dense_pair(17, keras.optimizers.Adam(S.PolynomialDecay(0.05, 2, 0.001, power=2.0,
                                                                   cycle=True)))


def cosine_warmup():
    return _dense_pair(18, keras.optimizers.AdamW(S.CosineDecay(0.001, 4, alpha=0.1,
                                                                warmup_target=0.05,
                                                                warmup_steps=3)))


def cosine_restarts():
    return _dense_pair(19, keras.optimizers.SGD(S.CosineDecayRestarts(0.1, 2, t_mul=2.0,
                                                                      m_mul=0.5, alpha=0.01)))


# Saved as HDF5 too (Keras 3's legacy format: its configs in Keras 3's form, the optimizer's
# state in its order), at the same point as the archive: the same predictions and steps.
H5_NAMES = ("cnn", "functional", "rnn", "nadam", "cosine_warmup")
# Fitted an epoch too (unshuffled) from the archive: use_ema's averages replace the weights.
FIT_NAMES = ("ema",)


def main(names):
    """Makes the fixtures named (all when none are): the others' files and expected values stay
    as they are (JAX's results differ in the last bits from one machine to another)."""
    keras.utils.set_random_seed(0)
    path = os.path.join(HERE, "expected.npz")
    expected = {}
    if names and os.path.exists(path):
        expected = {k: v for k, v in np.load(path).items() if k.split("/")[0] not in names}
    for make in (mlp, cnn, functional, rnn, nested, logits, clipped, global_clipped, adamw, lion,
                 adagrad, nadam, rmsprop_centered, sgd_decayed, exponential_decay,
                 inverse_time_decay, piecewise_decay, polynomial_decay, cosine_warmup,
                 cosine_restarts, lamb, ftrl, ema, adafactor):
        name = make.__name__
        if names and name not in names:
            continue
        model, xs, ys = make()
        model.fit(xs, ys, epochs=1, batch_size=8, verbose=0)
        model.save(os.path.join(HERE, name + ".keras"))
        if name in H5_NAMES:
            model.save(os.path.join(HERE, name + ".h5"))
        fixture_models.record(expected, name, model, xs, ys, xs, ys)
        if name != "mlp":  # (its Dropout draws differ)
            loaded = keras.saving.load_model(os.path.join(HERE, name + ".keras"))
            fixture_models.record_training(expected, name, loaded, xs, ys)
        if name in FIT_NAMES:  # a whole fit, which ends by the optimizer's finalize
            loaded = keras.saving.load_model(os.path.join(HERE, name + ".keras"))
            loaded.fit(xs, ys, epochs=1, batch_size=8, shuffle=False, verbose=0)
            for i, a in enumerate(fixture_models.listed(loaded.predict(xs, verbose=0))):
                expected[f"{name}/fitted_pred{i}"] = np.asarray(a)
    np.savez(os.path.join(HERE, "expected.npz"), **expected)
    write_mlp_text(expected)
    print("keras", keras.__version__, "wrote", sorted({k.split("/")[0] for k in expected}))


if __name__ == "__main__":
    main(sys.argv[1:])
