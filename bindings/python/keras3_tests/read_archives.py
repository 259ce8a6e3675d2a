"""Keras 3's half of bindings/python/keras3_tests/run.sh (run in the Keras 3 venv): each archive
kbackend wrote loads with keras.saving.load_model, predicts as kbackend did and trains on from
its optimizer state with the losses kbackend computed for the same two steps (where kbackend
gave them). OUT: the archives of write_archives.py, or those check_layer_cases.py saved of
the layer cases (predictions alone).
Usage: python read_archives.py OUT"""
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from expected_arrays import arrays  # noqa: E402


def main(out):
    expected = np.load(os.path.join(out, "expected.npz"))
    names = sorted({k.split("/")[0] for k in expected})
    for name in names:
        model = keras.saving.load_model(os.path.join(out, name + ".keras"))
        xs, ys = arrays(expected, name, "x"), arrays(expected, name, "y")
        if len(xs) == 1:  # a single input as Keras' structure has it
            xs = xs[0]
        if len(ys) == 1:
            ys = ys[0]
        preds = model.predict(xs, verbose=0)
        for got, want in zip(preds if isinstance(preds, list) else [preds],
                             arrays(expected, name, "pred")):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)
        if name + "/next_losses" not in expected:
            print("Keras %s loaded %s.keras: predictions as kbackend's"
                  % (keras.__version__, name))
            continue
        steps = [np.atleast_1d(np.asarray(model.train_on_batch(xs, ys)))[0] for _ in range(2)]
        np.testing.assert_allclose(steps, expected[name + "/next_losses"], rtol=1e-4,
                                   err_msg=name)
        print("Keras %s loaded %s.keras: predictions and two more steps as kbackend's"
              % (keras.__version__, name))
    print("KERAS 3 READS KBACKEND'S ARCHIVES")


if __name__ == "__main__":
    main(sys.argv[1])
