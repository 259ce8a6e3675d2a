"""Keras' mixed_bfloat16 policy in a model's config (Keras 3's DTypePolicy, tf.keras' Policy, or
its name): float32 variables, bfloat16 computation. Against NumPy computing the same steps with
bfloat16 rounding (by bit arithmetic: this Python need not have ml_dtypes), and against the same
model in float32; training updates the float32 variables through the casts.
(bindings/python/keras3_tests/check_mixed_cases.py compares such models with Keras 3's own.)"""
import json

import numpy as np
import pytest

from kbackend import models

MIXED = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"},
         "registered_name": None}


def model(policy, last_policy="float32"):
    """Input(6) -> Dense(16, relu) [policy] -> Dense(3) [last_policy], a Keras 3 config."""
    def dense(name, units, activation, dtype, shape):
        return {"module": "keras.layers", "class_name": "Dense",
                "config": {"name": name, "units": units, "activation": activation,
                           "dtype": dtype},
                "name": name, "build_config": {"input_shape": [None, shape]}}
    config = {"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [
        {"module": "keras.layers", "class_name": "InputLayer",
         "config": {"batch_shape": [None, 6], "dtype": "float32", "name": "x"}},
        dense("hidden", 16, "relu", policy, 6), dense("out", 3, "linear", last_policy, 16)]}}
    return models.model_from_json(json.dumps(config))


def to_bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def reference(x, weights):
    """What Keras computes: the hidden Dense's input, kernel and bias read as bfloat16, its
    product and its sum rounded to bfloat16; the last Dense in float32 on those values."""
    k1, b1, k2, b2 = [w.astype(np.float32) for w in weights]
    h = to_bf16(to_bf16(x) @ to_bf16(k1))
    h = np.maximum(to_bf16(h + to_bf16(b1)), 0)
    return h @ k2 + b2


@pytest.mark.parametrize("policy", [MIXED, {"class_name": "Policy",
                                            "config": {"name": "mixed_bfloat16"}},
                                    "mixed_bfloat16"])
def test_mixed_bfloat16_predicts_in_bfloat16(policy):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((20, 6)).astype(np.float32)
    mixed, plain = model(policy), model("float32")
    plain.set_weights(mixed.get_weights())
    assert all(w.dtype == np.float32 for w in mixed.get_weights())
    got = mixed.predict(x)
    assert got.dtype == np.float32  # the last layer's policy is float32
    want = reference(x, mixed.get_weights())
    scale = np.abs(want).max()
    # (float32's accumulation order may flip a hidden value's rounding: a step of it.)
    np.testing.assert_allclose(got, want, rtol=0, atol=2.0**-10 * scale)
    # Not float32's values: the hidden layer rounded to bfloat16 (float32's are far further from
    # the bfloat16 steps).
    in_float32 = plain.predict(x)
    assert np.abs(in_float32 - want).max() > 100 * np.abs(got - want).max() + 1e-5 * scale
    np.testing.assert_allclose(got, in_float32, rtol=0, atol=2.0**-5 * scale)


def test_mixed_bfloat16_trains_its_float32_variables():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((64, 6)).astype(np.float32)
    y = (x[:, :3] * 0.5).astype(np.float32)
    mixed, plain = model(MIXED, MIXED), model("float32", "float32")
    plain.set_weights(mixed.get_weights())
    for m in (mixed, plain):
        m.compile(optimizer="sgd", loss="mse")
    start = mixed.get_weights()
    lm = mixed.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0).history["loss"]
    lp = plain.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0).history["loss"]
    assert lm[-1] < lm[0]
    np.testing.assert_allclose(lm, lp, rtol=2e-2)
    for s, w, p in zip(start, mixed.get_weights(), plain.get_weights()):
        assert w.dtype == np.float32
        # Updates far below a bfloat16 step of the weights accumulate in float32.
        np.testing.assert_allclose(w - s, p - s, rtol=0, atol=0.05 * np.abs(p - s).max())
        assert np.abs(w - s).max() > 0


def test_with_dtype_policy_computes_a_float32_model_in_bfloat16(tmp_path):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((20, 6)).astype(np.float32)
    plain = model("float32")
    # Every float32 layer takes the policy: the output layer's too, whose predictions are then
    # bfloat16 (this Python has no ml_dtypes: they are compared after the model's own cast).
    mixed = plain.with_dtype_policy("mixed_bfloat16")
    config = json.loads(mixed.to_json())
    policies = [l["config"].get("dtype") for l in config["config"]["layers"]]
    assert policies[0] == "float32"  # the input keeps its dtype
    assert all(p["config"]["name"] == "mixed_bfloat16" for p in policies[1:])
    for w, p in zip(mixed.get_weights(), plain.get_weights()):
        assert w.dtype == np.float32
        np.testing.assert_array_equal(w, p)
    back = mixed.with_dtype_policy("float32")  # float32 again: float32's values exactly
    np.testing.assert_array_equal(back.predict(x), plain.predict(x))
    # A layer of another dtype keeps it: the last one in float16 here.
    half = model("float32", {"class_name": "Policy", "config": {"name": "float16"}})
    half.set_weights(plain.get_weights())
    converted = half.with_dtype_policy("mixed_bfloat16")
    layers = json.loads(converted.to_json())["config"]["layers"]
    assert layers[2]["config"]["dtype"]["config"]["name"] == "float16"
    assert converted.get_weights()[2].dtype == np.float16
    got = converted.predict(x)
    assert got.dtype == np.float16
    want = plain.predict(x)
    np.testing.assert_allclose(got, want, rtol=0, atol=2.0**-6 * np.abs(want).max())
    # The copy trains and saves as any model; the original stays as it was.
    mixed.compile(optimizer="sgd", loss="mse")
    mixed.fit(x, x[:, :3], epochs=1, batch_size=10, verbose=0)
    assert not np.array_equal(mixed.get_weights()[0], plain.get_weights()[0])
    mixed.save(str(tmp_path / "mixed.keras"))
    again = models.load_model(str(tmp_path / "mixed.keras")).with_dtype_policy("float32")
    ref = mixed.with_dtype_policy("float32")
    np.testing.assert_array_equal(again.predict(x), ref.predict(x))


def test_with_dtype_policy_refuses_what_it_cannot_do():
    plain = model("float32")
    with pytest.raises(ValueError, match="unknown dtype 'mixed_int4'"):
        plain.with_dtype_policy("mixed_int4")
    with pytest.raises(ValueError, match="does not keep float32 variables"):
        plain.with_dtype_policy("bfloat16")


def conv_bn_relu():
    """Conv2D (no bias) -> BatchNormalization -> relu -> a float64 linear Activation (its output
    a NumPy type this Python has), as ResNet's blocks, in Keras 3's config."""
    def layer(cls, name, **config):
        return {"module": "keras.layers", "class_name": cls,
                "config": dict(name=name, trainable=True, **config)}
    return models.model_from_json(json.dumps({"class_name": "Sequential", "config": {
        "name": "s", "layers": [
            {"class_name": "InputLayer", "config": {"batch_shape": [None, 9, 9, 8],
                                                    "dtype": "float32", "name": "x"}},
            layer("Conv2D", "c", filters=16, kernel_size=[3, 3], padding="same",
                  use_bias=False),
            layer("BatchNormalization", "bn", epsilon=1e-3),
            layer("Activation", "r", activation="relu"),
            layer("Activation", "out", activation="linear", dtype="float64")]}}))


def test_batch_normalization_folds_into_a_bfloat16_convolution(monkeypatch):
    """In inference the BatchNormalization after a bfloat16 convolution, which Keras 3 computes
    in float32 between two casts, folds into the convolution (its kernel scaled in float32 and
    rounded once): the folded plan's values are within bfloat16's rounding of the unfolded
    plan's (KB_FUSE=0) and of float32's."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 9, 9, 8)).astype(np.float32)
    plain = conv_bn_relu()
    kernel = rng.standard_normal((3, 3, 8, 16)).astype(np.float32) * 0.3
    gamma, beta = rng.uniform(0.5, 2, 16), rng.standard_normal(16)
    mean, var = rng.standard_normal(16), rng.uniform(0.2, 3, 16)
    plain.set_weights([kernel] + [v.astype(np.float32) for v in (gamma, beta, mean, var)])
    want = plain.predict(x)
    folded = plain.with_dtype_policy("mixed_bfloat16").predict(x)
    monkeypatch.setenv("KB_FUSE", "0")
    unfolded = plain.with_dtype_policy("mixed_bfloat16").predict(x)
    scale = np.abs(want).max()
    assert not np.array_equal(folded, unfolded)  # rounded at other places
    np.testing.assert_allclose(folded, unfolded, rtol=0, atol=2.0**-6 * scale)
    np.testing.assert_allclose(folded, want, rtol=0, atol=2.0**-6 * scale)
    np.testing.assert_allclose(unfolded, want, rtol=0, atol=2.0**-6 * scale)
