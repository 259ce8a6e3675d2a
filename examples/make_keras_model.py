"""Makes the Keras model files the fine-tuning examples load: a digits MLP built and trained for
one epoch by Keras, saved with model.save. With Keras 2.2.4 (on kbackend.keras_backend) it made
the committed examples/data/digits_mlp.h5, with Keras 3.15 (on JAX) examples/data/digits_mlp.keras
(every language's example loads them with no Keras at hand); the Keras tests make a fresh one
with it and fine-tune that.
Usage (in the Keras tests' venv, as bindings/python/keras_tests/run.sh sets it up, or in Keras
3's, as bindings/python/keras3_tests/run.sh does):
    KERAS_BACKEND=kbackend.keras_backend python examples/make_keras_model.py out.h5 [digits.csv]
    KERAS_BACKEND=jax python examples/make_keras_model.py out.keras [digits.csv]"""
import sys

import keras
import numpy as np
from keras import layers, models, optimizers

KERAS3 = keras.__version__.startswith("3.")


def main(out, digits="examples/data/digits.csv"):
    data = np.loadtxt(digits, delimiter=",", comments="#")
    train = np.arange(len(data)) % 5 != 4  # the C example tests on every fifth digit
    x = (data[train, 1:] / 16.0).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[data[train, 0].astype(int)]
    first = [keras.Input((64,)), layers.Dense(64, activation="relu")] if KERAS3 else \
        [layers.Dense(64, input_shape=(64,), activation="relu")]
    model = models.Sequential(first + [layers.Dropout(0.1), layers.Dense(10, activation="softmax")])
    adam = optimizers.Adam(learning_rate=0.002) if KERAS3 else optimizers.Adam(lr=0.002)
    model.compile(adam, "categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    model.save(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
