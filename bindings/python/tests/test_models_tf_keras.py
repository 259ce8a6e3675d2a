"""tf.keras 2.x HDF5 files (tests/model_files/tf_keras, made by its make_fixtures.py with
TensorFlow 2.15) through kbackend.models: nested initializer and dtype configs, Functional
models, GRU's reset_after default, prefixed weight names. Each loads, predicts as tf.keras did,
evaluates to tf.keras' loss, continues training as tf.keras does from the file (its optimizer
state mapped to Keras 2.2.4's order), and saves a file that loads again."""
import numpy as np
import pytest

from kbackend import models
from model_fixtures import ModelFixtures

FIXTURES = ModelFixtures("tf_keras")
EXPECTED = FIXTURES.expected


@pytest.mark.parametrize("name", ["mlp", "cnn", "rnn", "two_outputs"])
def test_tf_keras_file(name, tmp_path):
    model = models.load_model(FIXTURES.path(name + ".h5"))
    xs, ys = FIXTURES.arrays(name, "x"), FIXTURES.arrays(name, "y")
    preds = FIXTURES.arrays(name, "pred")
    got = model.predict(xs)
    got = got if isinstance(got, list) else [got]
    for g, p in zip(got, preds):
        np.testing.assert_allclose(g, p, rtol=1e-5, atol=1e-5)
    loss = np.atleast_1d(model.test_on_batch(xs, ys))
    np.testing.assert_allclose(loss[0], EXPECTED[name + "/test_loss"][0], rtol=1e-4)
    if name + "/train_losses" in EXPECTED:  # the optimizer's state came from the file too
        steps = [np.atleast_1d(model.train_on_batch(xs, ys))[0] for _ in range(3)]
        np.testing.assert_allclose(steps, EXPECTED[name + "/train_losses"], rtol=1e-3)
        # tf.keras' rules: BatchNormalization's moving statistics (the fused kernel's unbiased
        # variance over images), clipnorm, RMSprop's epsilon under the root.
        after = model.predict(xs)
        for g, p in zip(after if isinstance(after, list) else [after],
                        FIXTURES.arrays(name, "trained_pred")):
            np.testing.assert_allclose(g, p, rtol=1e-4, atol=1e-5)
    before = model.evaluate(xs, ys, verbose=0)
    model.fit(xs, ys, epochs=3, batch_size=8, verbose=0, seed=0)
    after = model.evaluate(xs, ys, verbose=0)
    first = lambda v: v[0] if isinstance(v, list) else v  # noqa: E731
    assert np.isfinite(first(after)) and first(after) != first(before)
    path = str(tmp_path / "again.h5")
    model.save(path)
    again = models.load_model(path)
    listed = lambda v: v if isinstance(v, list) else [v]  # noqa: E731
    for a, b in zip(listed(again.predict(xs)), listed(model.predict(xs))):
        np.testing.assert_allclose(a, b, atol=0)
