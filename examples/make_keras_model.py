"""Makes the Keras model file the fine-tuning examples load: a digits MLP built and trained for one
epoch by Keras 2.2.4 (on kbackend.keras_backend), saved with model.save. It made the committed
examples/data/digits_mlp.h5 (the C, C++, Python and Rust examples load it with no Keras at hand);
the Keras tests make a fresh one with it and fine-tune that.
Usage (in the Keras tests' venv, as bindings/python/keras_tests/run.sh sets it up):
    KERAS_BACKEND=kbackend.keras_backend python examples/make_keras_model.py out.h5 [digits.csv]"""
import sys

import numpy as np
from keras import layers, models, optimizers


def main(out, digits="examples/data/digits.csv"):
    data = np.loadtxt(digits, delimiter=",", comments="#")
    train = np.arange(len(data)) % 5 != 4  # the C example tests on every fifth digit
    x = (data[train, 1:] / 16.0).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[data[train, 0].astype(int)]
    model = models.Sequential([layers.Dense(64, input_shape=(64,), activation="relu"),
                               layers.Dropout(0.1),
                               layers.Dense(10, activation="softmax")])
    model.compile(optimizers.Adam(lr=0.002), "categorical_crossentropy", ["accuracy"])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    model.save(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
