"""kbackend's half of bindings/python/keras3_tests/run.sh: each archive of tests/model_files/keras3
loaded, trained three steps and saved as OUT/NAME.keras, and so are models of tf.keras' HDF5
files and of Keras 2.2.4's JSON, with what Keras 3 must find in each (OUT/expected.npz: the
inputs, targets, predictions and the losses of two more steps)."""
import json
import sys

import numpy as np

from kbackend import models
from model_fixtures import KERAS2_DECAYED_ADAM, KERAS2_DENSE, ModelFixtures

FIXTURES = ModelFixtures("keras3")
NAMES = ["cnn", "functional", "rnn", "nested", "logits", "clipped", "global_clipped", "adamw", "lion",
         "adagrad", "nadam", "rmsprop_centered", "sgd_decayed", "exponential_decay",
         "inverse_time_decay", "piecewise_decay", "polynomial_decay", "cosine_warmup",
         "cosine_restarts", "lamb", "ftrl", "ema", "adafactor"]  # the ones without dropout


def _record(expected, name, model, xs, ys, out):
    """Saves `model` as OUT/NAME.keras with what Keras 3 must find: its predictions and the
    losses of its next two steps."""
    model.save("%s/%s.keras" % (out, name))
    preds = model.predict(xs)
    for i, p in enumerate(preds if isinstance(preds, list) else [preds]):
        expected["%s/pred%d" % (name, i)] = p
    for i, a in enumerate(xs):
        expected["%s/x%d" % (name, i)] = a
    for i, a in enumerate(ys):
        expected["%s/y%d" % (name, i)] = a
    steps = [np.atleast_1d(model.train_on_batch(xs, ys))[0] for _ in range(2)]
    expected[name + "/next_losses"] = np.asarray(steps, dtype=np.float64)


def main(out):
    expected = {}
    for name in NAMES:
        model = models.load_model(FIXTURES.path(name + ".keras"))
        xs, ys = FIXTURES.arrays(name, "x"), FIXTURES.arrays(name, "y")
        for _ in range(3):
            model.train_on_batch(xs, ys)
        _record(expected, name, model, xs, ys, out)
    # Models of HDF5 files and of JSON, saved as archives Keras 3 loads and trains on.
    tf_keras = ModelFixtures("tf_keras")
    for name in ["cnn", "rnn", "two_outputs"]:
        model = models.load_model(tf_keras.path(name + ".h5"))
        xs, ys = tf_keras.arrays(name, "x"), tf_keras.arrays(name, "y")
        model.train_on_batch(xs, ys)
        _record(expected, "h5_" + name, model, xs, ys, out)
    model = models.model_from_json(json.dumps(KERAS2_DENSE))
    model.compile(KERAS2_DECAYED_ADAM, "mse")  # decay: InverseTimeDecay in Keras 3
    rng = np.random.RandomState(0)
    xs, ys = [rng.rand(16, 6).astype(np.float32)], [rng.rand(16, 2).astype(np.float32)]
    for _ in range(3):
        model.train_on_batch(xs, ys)
    _record(expected, "json_decayed", model, xs, ys, out)
    np.savez("%s/expected.npz" % out, **expected)
    print("kbackend wrote", ", ".join(sorted({k.split("/")[0] + ".keras" for k in expected})))


if __name__ == "__main__":
    main(sys.argv[1])
