"""kbackend's half of the mixed-precision checks of bindings/python/keras3_tests/run.sh (run in
the Keras 3 venv, whose ml_dtypes gives NumPy a bfloat16): each mixed_bfloat16 archive Keras 3
made (make_mixed_cases.py) loads natively, predicts in the dtype Keras does and within bfloat16's
rounding of Keras' values (the two round at different places: XLA fuses elementwise chains),
and two epochs of fit give Keras' losses (1%) and weights (float32 variables, within 1e-2);
saved, it loads again to predict the same.
Usage: python check_mixed_cases.py OUT"""
import os
import sys

import numpy as np

from kbackend import models
from expected_arrays import arrays


def check(out, name, expected, native):
    x, y = expected[name + "/x0"], expected[name + "/y"]
    pred = native.predict(x)
    assert str(pred.dtype) == str(expected[name + "/pred_dtype"]), (
        "%s: predicts %s, Keras %s" % (name, pred.dtype, expected[name + "/pred_dtype"]))
    want = expected[name + "/pred"]
    # A few bfloat16 steps (2^-8 each) of the outputs' scale.
    np.testing.assert_allclose(pred.astype(np.float32), want, rtol=0,
                               atol=2.0**-6 * np.abs(want).max(), err_msg=name + ": predictions")
    losses = native.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False).history["loss"]
    np.testing.assert_allclose(losses, expected[name + "/losses"], rtol=1e-2,
                               err_msg=name + ": losses")
    have, want = native.get_weights(), arrays(expected, name, "w")
    assert len(have) == len(want), "%s: %d weights, Keras has %d" % (name, len(have), len(want))
    for i, (h, w) in enumerate(zip(have, want)):
        assert h.dtype == np.float32, "%s: weight %d is %s" % (name, i, h.dtype)
        np.testing.assert_allclose(h, w, atol=1e-2, err_msg="%s: weight %d" % (name, i))
    # Saved, the policies stay: loaded again, the model predicts the same bfloat16 values.
    path = os.path.join(out, name + "_trained.keras")
    native.save(path)
    again = models.load_model(path).predict(x)
    np.testing.assert_array_equal(again.astype(np.float32), native.predict(x).astype(np.float32),
                                  err_msg=name + ": saved and loaded again")


def main(out):
    expected = np.load(os.path.join(out, "expected.npz"))
    cases = sorted({k.split("/")[0] for k in expected})
    failed = []
    for name in cases:
        try:
            check(out, name, expected, models.load_model(os.path.join(out, name + ".keras")))
            print("%-20s predicts and trains in mixed_bfloat16 as Keras 3" % name)
        except Exception as e:  # every case is reported, then the run fails
            failed.append(name)
            print("%-20s FAILED: %s" % (name, str(e).strip().splitlines()[0][:300]))
    if failed:
        sys.exit("%d of %d mixed cases failed: %s" % (len(failed), len(cases), ", ".join(failed)))
    print("KBACKEND TRAINS KERAS 3'S MIXED_BFLOAT16 MODELS")


if __name__ == "__main__":
    main(sys.argv[1])
