"""A Keras model as graph values (kbackend.models.Model.inputs, outputs, weights, add_loss,
total_loss, targets, sample_weights, updates): a function of one's own over them computes what
predict does, and an extra loss term is in the compiled loss."""
import json

import numpy as np

import kbackend as K
from kbackend import models

DENSE = json.dumps({"class_name": "Sequential", "config": {"name": "s", "layers": [
    {"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "linear",
                                       "batch_input_shape": [None, 3]}}]}})


def test_the_model_as_graph_values():
    m = models.model_from_json(DENSE)
    w = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
    m.get_layer("d").set_weights([w, np.array([0.5, -1.0], np.float32)])
    x = np.array([[1, 0, 2], [-1, 1, 0]], np.float32)
    [inp], [out] = m.inputs, m.outputs
    assert len(m.weights) == 2
    f = K.function([inp], [out])
    np.testing.assert_allclose(f([x])[0], m.predict(x), rtol=1e-6)
    np.testing.assert_allclose(f([x])[0], x @ w + [0.5, -1.0], rtol=1e-6)
    # an extra loss term: the sum of the kernel's squares
    kernel = m.weights[0]
    m.add_loss(K.sum(K.square(kernel)))
    m.compile("sgd", "mse")
    assert len(m.targets) == 1 and len(m.sample_weights) == 1 and m.updates
    assert m.total_loss.ndim == 0
    loss = m.test_on_batch(x, m.predict(x))
    np.testing.assert_allclose(np.atleast_1d(loss)[0], float((w ** 2).sum()), rtol=1e-5)
