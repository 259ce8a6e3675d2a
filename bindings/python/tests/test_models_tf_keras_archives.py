"""tf.keras 2.15's `.keras` archives (tests/model_files/tf_keras_archives, made by its
make_fixtures.py): Keras 3's layout with Keras 2's configs (nodes as lists, optimizers named by
a string or as keras.optimizers.experimental objects) and no learning-rate variable among the
optimizer's. Each loads, predicts as tf.keras did, evaluates to its loss, trains three steps
from the archive's optimizer state as tf.keras does (its optimizers are Keras 3's), and saves an
archive that loads again and trains on alike."""
import numpy as np
import pytest

from kbackend import models
from model_fixtures import ModelFixtures

FIXTURES = ModelFixtures("tf_keras_archives")
EXPECTED = FIXTURES.expected


def _listed(v):
    return v if isinstance(v, list) else [v]


@pytest.mark.parametrize("name", ["mlp", "normalized", "functional", "rnn", "nested"])
def test_tf_keras_archive(name, tmp_path):
    model = models.load_model(FIXTURES.path(name + ".keras"))
    xs, ys = FIXTURES.arrays(name, "x"), FIXTURES.arrays(name, "y")
    for g, p in zip(_listed(model.predict(xs)), FIXTURES.arrays(name, "pred")):
        np.testing.assert_allclose(g, p, rtol=1e-5, atol=1e-5)
    loss = np.atleast_1d(model.test_on_batch(xs, ys))
    np.testing.assert_allclose(loss[0], EXPECTED[name + "/test_loss"][0], rtol=1e-4)
    steps = [np.atleast_1d(model.train_on_batch(xs, ys))[0] for _ in range(3)]
    np.testing.assert_allclose(steps, EXPECTED[name + "/train_losses"], rtol=1e-4)
    for g, p in zip(_listed(model.predict(xs)), FIXTURES.arrays(name, "trained_pred")):
        np.testing.assert_allclose(g, p, rtol=1e-4, atol=1e-5)
    path = str(tmp_path / "again.keras")
    model.save(path)
    again = models.load_model(path)
    for a, b in zip(_listed(again.predict(xs)), _listed(model.predict(xs))):
        np.testing.assert_allclose(a, b, atol=0)
    np.testing.assert_allclose(np.atleast_1d(again.train_on_batch(xs, ys))[0],
                               np.atleast_1d(model.train_on_batch(xs, ys))[0], rtol=1e-6)
