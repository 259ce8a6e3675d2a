"""kbackend's half of bindings/python/keras3_tests/run.sh: each archive of tests/model_files/keras3
loaded, trained three steps and saved as OUT/NAME.keras, with what Keras 3 must find in it
(OUT/expected.npz: the inputs, targets, predictions and the losses of two more steps)."""
import sys

import numpy as np

from kbackend import models
from model_fixtures import ModelFixtures

FIXTURES = ModelFixtures("keras3")
NAMES = ["cnn", "functional", "rnn", "nested", "logits", "clipped", "global_clipped", "adamw", "lion",
         "adagrad", "nadam", "rmsprop_centered", "sgd_decayed", "exponential_decay",
         "inverse_time_decay", "piecewise_decay", "polynomial_decay", "cosine_warmup",
         "cosine_restarts", "lamb", "ftrl"]  # the ones without dropout


def main(out):
    expected = {}
    for name in NAMES:
        model = models.load_model(FIXTURES.path(name + ".keras"))
        xs, ys = FIXTURES.arrays(name, "x"), FIXTURES.arrays(name, "y")
        for _ in range(3):
            model.train_on_batch(xs, ys)
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
    np.savez("%s/expected.npz" % out, **expected)
    print("kbackend wrote", ", ".join(n + ".keras" for n in NAMES))


if __name__ == "__main__":
    main(sys.argv[1])
