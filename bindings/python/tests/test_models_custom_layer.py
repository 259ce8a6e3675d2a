"""A layer class of one's own (kbackend.models.register_layer): built by a Python function from
kbackend's functions with weights it asks for, then predicted, trained, saved and loaded like a
built-in layer; its errors name the layer."""
import json

import numpy as np
import pytest

import kbackend as K
from kbackend import models


def _scale(layer, config, inputs):
    """y = x * scale + offset, scale a weight (one per feature), offset from the config."""
    if config.get("fail"):
        raise RuntimeError("asked to fail")
    x = inputs[0]
    scale = layer.add_weight("scale", (x.shape[-1],), initializer="ones")
    return x * scale + config["offset"]


def _model_json(**extra):
    config = {"name": "sc", "batch_input_shape": [None, 3], "offset": 0.5}
    config.update(extra)
    return json.dumps({"class_name": "Sequential", "config": {
        "name": "s", "layers": [{"class_name": "Scale", "config": config}]}})


def test_a_registered_layer_predicts_trains_and_saves(tmp_path):
    models.register_layer("Scale", _scale)
    model = models.model_from_json(_model_json())
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]], dtype=np.float32)
    np.testing.assert_allclose(model.predict(x), x + 0.5, rtol=1e-6)
    layer = model.get_layer("sc")
    assert layer.class_name == "Scale"
    [scale] = layer.get_weights()
    np.testing.assert_array_equal(scale, np.ones(3, np.float32))
    layer.set_weights([np.array([2.0, 3.0, 4.0], np.float32)])
    np.testing.assert_allclose(model.predict(x), x * [2.0, 3.0, 4.0] + 0.5, rtol=1e-6)

    # Trained by SGD towards y = 3 x + 0.5 (the offset is not a weight).
    model.compile({"class_name": "SGD", "config": {"lr": 0.1}}, "mse")
    rng = np.random.RandomState(0)
    xs = rng.rand(64, 3).astype(np.float32)
    model.fit(xs, 3 * xs + 0.5, batch_size=16, epochs=60, verbose=0, shuffle=False)
    np.testing.assert_allclose(layer.get_weights()[0], [3.0, 3.0, 3.0], atol=0.05)

    path = str(tmp_path / "scale.h5")
    model.save(path)
    again = models.load_model(path)
    np.testing.assert_allclose(again.predict(x), model.predict(x), rtol=1e-6)


def test_the_layers_errors_name_it():
    models.register_layer("Scale", _scale)
    with pytest.raises(ValueError, match=r"'sc'.*RuntimeError: asked to fail"):
        models.model_from_json(_model_json(fail=True))
    models.register_layer("Broken", lambda layer, config, inputs: 42)
    broken = _model_json().replace('"Scale"', '"Broken"')
    with pytest.raises(ValueError, match="must return a tensor"):
        models.model_from_json(broken)
    with pytest.raises(TypeError):
        models.register_layer("Scale", "not callable")
    # the library stays usable after the failures
    assert K.eval(K.constant([1.0]) + 1.0).tolist() == [2.0]
