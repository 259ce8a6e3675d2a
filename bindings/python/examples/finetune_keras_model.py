"""Loads a Keras model file with kbackend.models (no Keras needed), fine-tunes it on the 8x8
digits with Keras' progress bar and prints its test accuracy before and after.
Usage: python finetune_keras_model.py [model.h5] [digits.csv]
(examples/data/digits_mlp.h5 was saved by Keras 2.2.4, digits_mlp.keras by Keras 3:
examples/make_keras_model.py.)"""
import os
import sys

import numpy as np

from kbackend import models

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "..", "examples", "data")


def main(path=os.path.join(DATA, "digits_mlp.h5"), digits=os.path.join(DATA, "digits.csv")):
    data = np.loadtxt(digits, delimiter=",", comments="#")
    x = (data[:, 1:] / 16.0).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[data[:, 0].astype(int)]
    test = np.arange(len(x)) % 5 == 4  # every fifth digit, as the model file's script left out
    model = models.load_model(path)
    model.summary()
    before = model.evaluate(x[test], y[test], verbose=0)[1]
    model.fit(x[~test], y[~test], batch_size=32, epochs=5, verbose=1, seed=1)
    after = model.evaluate(x[test], y[test], verbose=0)[1]
    print("test accuracy: %.2f%% before fine-tuning, %.2f%% after" % (100 * before, 100 * after))
    return after


if __name__ == "__main__":
    sys.exit(0 if main(*sys.argv[1:]) >= 0.9 else 1)
