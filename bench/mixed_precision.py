"""Keras' mixed_bfloat16 policy against float32: training time per epoch and accuracy of the same
models, natively in kbackend and in Keras 3 on JAX (the peer), each under both policies.

  make:    KERAS_BACKEND=jax VENV/bin/python bench/mixed_precision.py make DIR
           (Keras 3 builds each model under each policy and saves DIR/NAME_POLICY.keras)
  native:  PYTHONPATH=build-bind/bindings/python python3 bench/mixed_precision.py native DIR [NAME]
  keras:   KERAS_BACKEND=jax VENV/bin/python bench/mixed_precision.py keras DIR [NAME]

bench/mixed_precision.sh runs all three, rounds alternating the two stacks. One JSON line per
(stack, model, policy): seconds per epoch (the median of the epochs after the first, which
builds and compiles) and, for the models trained to an accuracy, the held-out accuracy after
the epochs. Models, batch 32, Adam:
  cnn32        3 blocks of 2 Conv2D 3x3 (32, 64, 128) with BatchNormalization and MaxPooling2D on
               32x32x3 images, GlobalAveragePooling2D, Dense 10 (1024 random samples; speed)
  transformer  2 encoder blocks (MultiHeadAttention 4x64, LayerNormalization, Dense 1024 gelu)
               over 128 tokens of width 256 (256 random sequences; speed)
  mlp          784 -> 2048 relu -> 2048 relu -> 10 (2048 random samples; speed)
  digits_cnn   the bundled 8x8 digits: Conv2D 32, BatchNormalization, Conv2D 64, MaxPooling2D,
               Dense 128 (1500 to train, 297 held out; 15 epochs; accuracy)
  tokens       a small transformer classifier (16 tokens of width 32) learning whether the first
               token is larger than the last, 15% of the labels flipped (4000 to train, 1000
               held out; 12 epochs; accuracy, at best 0.85)
The last layer of each computes in float32, as Keras' mixed-precision guide has it."""
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = ("float32", "mixed_bfloat16")
SPEED = ("cnn32", "transformer", "mlp")
ACCURACY = ("digits_cnn", "tokens")


def build(keras, name):
    L = keras.layers
    out = dict(dtype="float32")
    if name == "cnn32":
        x = h = keras.Input((32, 32, 3))
        for f in (32, 64, 128):
            h = L.Conv2D(f, 3, padding="same", activation="relu")(h)
            h = L.BatchNormalization()(h)
            h = L.Conv2D(f, 3, padding="same", activation="relu")(h)
            h = L.MaxPooling2D()(h)
        y = L.Dense(10, activation="softmax", **out)(L.GlobalAveragePooling2D()(h))
    elif name in ("transformer", "tokens"):
        steps, width, heads, ff, blocks = (128, 256, 4, 1024, 2) if name == "transformer" else (
            16, 32, 2, 64, 1)
        x = keras.Input((steps,))
        h = L.Embedding(1000 if name == "transformer" else 10, width)(x)
        h = h + L.Embedding(steps, width)(keras.ops.arange(steps))
        for _ in range(blocks):
            a = L.MultiHeadAttention(heads, width // heads)(h, h)
            h = L.LayerNormalization()(h + a)
            f = L.Dense(width)(L.Dense(ff, activation="gelu")(h))
            h = L.LayerNormalization()(h + f)
        y = L.Dense(2, activation="softmax", **out)(L.GlobalAveragePooling1D()(h))
    elif name == "mlp":
        x = keras.Input((784,))
        h = L.Dense(2048, activation="relu")(L.Dense(2048, activation="relu")(x))
        y = L.Dense(10, activation="softmax", **out)(h)
    else:  # digits_cnn
        x = keras.Input((8, 8, 1))
        h = L.Conv2D(32, 3, padding="same", activation="relu")(x)
        h = L.BatchNormalization()(h)
        h = L.MaxPooling2D()(L.Conv2D(64, 3, padding="same", activation="relu")(h))
        h = L.Dense(128, activation="relu")(L.Flatten()(h))
        y = L.Dense(10, activation="softmax", **out)(h)
    model = keras.Model(x, y)
    model.compile(keras.optimizers.Adam(1e-3), "categorical_crossentropy", metrics=["accuracy"])
    return model


def data(name):
    """(x, y, x_held_out, y_held_out, epochs)."""
    rng = np.random.RandomState(0)

    def onehot(labels, k):
        return np.eye(k, dtype=np.float32)[labels]

    if name == "cnn32":
        return rng.randn(1024, 32, 32, 3).astype(np.float32), onehot(rng.randint(0, 10, 1024),
                                                                     10), None, None, 4
    if name == "transformer":
        return rng.randint(0, 1000, (256, 128)).astype(np.float32), onehot(
            rng.randint(0, 2, 256), 2), None, None, 4
    if name == "mlp":
        return rng.randn(2048, 784).astype(np.float32), onehot(rng.randint(0, 10, 2048),
                                                               10), None, None, 4
    if name == "digits_cnn":
        d = np.loadtxt(os.path.join(HERE, "..", "examples", "data", "digits.csv"), delimiter=",",
                       comments="#")
        order = rng.permutation(len(d))
        x = (d[order, 1:] / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
        y = onehot(d[order, 0].astype(int), 10)
        return x[:1500], y[:1500], x[1500:], y[1500:], 15
    x = rng.randint(1, 10, (5000, 16))
    labels = (x[:, 0] > x[:, -1]).astype(int)
    labels ^= (rng.rand(len(labels)) < 0.15).astype(int)  # 15% flipped: at best 0.85
    x, y = x.astype(np.float32), onehot(labels, 2)
    return x[:4000], y[:4000], x[4000:], y[4000:], 12


def accuracy(pred, y):
    return float(np.mean(np.argmax(np.asarray(pred, np.float32), 1) == np.argmax(y, 1)))


def report(stack, name, policy, times, held_out):
    line = {"stack": stack, "model": name, "policy": policy, "batch_size": 32,
            "first_epoch_s": round(times[0], 3),
            "epoch_s_median": round(statistics.median(times[1:]), 3),
            "loadavg_1min": os.getloadavg()[0]}
    if held_out is not None:
        line["held_out_accuracy"] = round(held_out, 4)
    print(json.dumps(line), flush=True)


def make(out):
    import keras
    for policy in POLICIES:
        keras.mixed_precision.set_global_policy(policy)
        for name in SPEED + ACCURACY:
            keras.utils.set_random_seed(0)
            build(keras, name).save(os.path.join(out, "%s_%s.keras" % (name, policy)))
    print("Keras %s saved %d models in %s" % (keras.__version__, 2 * len(SPEED + ACCURACY), out))


def native(out, names):
    from kbackend import models
    for name in names:
        x, y, xt, yt, epochs = data(name)
        for policy in POLICIES:
            model = models.load_model(os.path.join(out, "%s_%s.keras" % (name, policy)))
            stamps = [time.perf_counter()]

            def epoch_end(epoch, batch, logs):
                if batch == -1:
                    stamps.append(time.perf_counter())

            model.fit(x, y, epochs=epochs, batch_size=32, verbose=0, callbacks=[epoch_end])
            times = [b - a for a, b in zip(stamps, stamps[1:])]
            held = accuracy(model.predict(xt), yt) if xt is not None else None
            report("kbackend (native)", name, policy, times, held)


def keras_peer(out, names):
    import jax
    import keras
    for name in names:
        x, y, xt, yt, epochs = data(name)
        for policy in POLICIES:
            model = keras.saving.load_model(os.path.join(out, "%s_%s.keras" % (name, policy)))
            times = []

            class Timer(keras.callbacks.Callback):
                def on_epoch_begin(self, epoch, logs=None):
                    self.t0 = time.perf_counter()

                def on_epoch_end(self, epoch, logs=None):
                    times.append(time.perf_counter() - self.t0)

            model.fit(x, y, epochs=epochs, batch_size=32, verbose=0, callbacks=[Timer()])
            held = accuracy(model.predict(xt, verbose=0), yt) if xt is not None else None
            report("Keras %s on JAX %s" % (keras.__version__, jax.__version__), name, policy,
                   times, held)


if __name__ == "__main__":
    which, out = sys.argv[1], sys.argv[2]
    chosen = sys.argv[3:] or list(SPEED + ACCURACY)
    {"make": lambda: make(out), "native": lambda: native(out, chosen),
     "keras": lambda: keras_peer(out, chosen)}[which]()
