"""Training time per epoch of small Keras models, through whichever Keras this Python imports:
Keras 2.2.4 on kbackend (KERAS_BACKEND=kbackend.keras_backend), kbackend's native model layer
(kbackend.models: the model Keras 2.2.4 builds, saved and loaded natively, trained with no Keras
code in the loop) or tf.keras. One JSON line per model.

  kbackend:  KERAS_BACKEND=kbackend.keras_backend KERAS_HOME=$(mktemp -d) \
             PYTHONPATH=build-bind/bindings/python:bindings/python/keras_tests \
             build-bind/venv/bin/python bench/keras_speed.py keras [epochs] [models]
  native:    the same with `native` for `keras`
  tf.keras:  build/peers/tensorflow/bin/python bench/keras_speed.py tf.keras [epochs] [models]
             (bash bench/setup_peers.sh tensorflow makes that venv)

Models (the ones bindings/python/keras_tests trains): mlp (Dense 64 + Dropout + Dense 10, SGD
nesterov), cnn (Conv2D 16 + BatchNormalization + MaxPooling2D + Conv2D 32 + Dense 10, Adam),
lstm (Embedding 16 + LSTM 24 + Dense 1, RMSprop). Data: the 1797 digits repeated 8 times
(14376 samples, batch 32) for mlp/cnn; 8000 generated token sequences of length 12 for lstm.
The first epoch (graph building, plan compilation) is timed apart; the median of the others is
the figure."""
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "..", "examples", "data", "digits.csv")


def load_keras(which):
    if which == "tf.keras":
        import tensorflow as tf
        return tf.keras, "tf.keras (TensorFlow %s, CPU)" % tf.__version__
    import keras
    return keras, "Keras %s on %s" % (keras.__version__, keras.backend.backend())


def optimizer(keras, name, lr, **kwargs):
    cls = getattr(keras.optimizers, name)
    try:
        return cls(learning_rate=lr, **kwargs)
    except TypeError:  # Keras 2.2.4 spells it lr
        return cls(lr=lr, **kwargs)


def digits(repeat):
    data = np.loadtxt(DIGITS, delimiter=",", comments="#")
    x = (data[:, 1:] / 16.0).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[data[:, 0].astype(int)]
    return np.tile(x, (repeat, 1)), np.tile(y, (repeat, 1))


def sequences(n, steps=12, vocab=10):
    rng = np.random.RandomState(0)
    x = rng.randint(1, vocab, size=(n, steps)).astype(np.int32)
    y = np.array([any(s[i] == 1 and s[i + 1] == 2 for i in range(steps - 1)) for s in x],
                 np.float32).reshape(-1, 1)
    return x, y


def build(keras, name):
    L = keras.layers
    if name == "mlp":
        x, y = digits(8)
        model = keras.models.Sequential([L.Dense(64, activation="relu", input_shape=(64,)),
                                         L.Dropout(0.2), L.Dense(10, activation="softmax")])
        opt = optimizer(keras, "SGD", 0.1, momentum=0.9, nesterov=True)
        loss = "categorical_crossentropy"
    elif name == "cnn":
        x, y = digits(8)
        x = x.reshape(-1, 8, 8, 1)
        model = keras.models.Sequential([
            L.Conv2D(16, (3, 3), padding="same", activation="relu", input_shape=(8, 8, 1)),
            L.BatchNormalization(), L.MaxPooling2D((2, 2)), L.Conv2D(32, (3, 3), activation="relu"),
            L.Flatten(), L.Dense(10, activation="softmax")])
        opt = optimizer(keras, "Adam", 0.005)
        loss = "categorical_crossentropy"
    else:
        x, y = sequences(8000)
        model = keras.models.Sequential([L.Embedding(10, 16, input_length=12), L.LSTM(24),
                                         L.Dense(1, activation="sigmoid")])
        opt = optimizer(keras, "RMSprop", 0.01)
        loss = "binary_crossentropy"
    model.compile(optimizer=opt, loss=loss, metrics=["accuracy"])
    return model, x, y


def native_fit(model, x, y, epochs):
    """The Keras model saved, loaded by kbackend.models and trained there: epoch times."""
    import tempfile

    from kbackend import models
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.h5")
        model.save(path)
        native = models.load_model(path)
    stamps = [time.perf_counter()]

    def epoch_end(epoch, batch, logs):
        if batch == -1:
            stamps.append(time.perf_counter())

    hist = native.fit(x.astype(np.float32), y, epochs=epochs, batch_size=32, verbose=0,
                      callbacks=[epoch_end])
    return [b - a for a, b in zip(stamps, stamps[1:])], hist


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "keras"
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    models = sys.argv[3].split(",") if len(sys.argv) > 3 else ["mlp", "cnn", "lstm"]
    keras, stack = load_keras("keras" if which == "native" else which)
    if which == "native":
        stack = "kbackend.models (native; the file Keras 2.2.4 saved)"
    for name in models:
        np.random.seed(0)
        model, x, y = build(keras, name)
        if which == "native":
            times, hist = native_fit(model, x, y, epochs + 1)
        else:
            times = []

            class Timer(keras.callbacks.Callback):
                def on_epoch_begin(self, epoch, logs=None):
                    self.t0 = time.perf_counter()

                def on_epoch_end(self, epoch, logs=None):
                    times.append(time.perf_counter() - self.t0)

            hist = model.fit(x, y, epochs=epochs + 1, batch_size=32, verbose=0,
                             callbacks=[Timer()])
        print(json.dumps({
            "stack": stack, "model": name, "samples": len(x), "batch_size": 32,
            "first_epoch_s": round(times[0], 3),
            "epoch_s_median": round(statistics.median(times[1:]), 3),
            "epoch_s_min": round(min(times[1:]), 3),
            "final_loss": round(float(hist.history["loss"][-1]), 4),
            "loadavg_1min": os.getloadavg()[0]}), flush=True)

if __name__ == "__main__":
    main()
