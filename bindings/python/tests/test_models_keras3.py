"""Keras 3 `.keras` archives (tests/model_files/keras3, made by its make_fixtures.py with Keras
3.15 on JAX) through kbackend.models: Sequential and functional models, nested Sequential and
functional models (a shared one among them), an LSTM's cell, BatchNormalization, a loss of
logits (from_logits=True), Keras 3's clipnorm (each gradient) and global_clipnorm, and the
rules of Keras 3's optimizers (AdamW, Lion, Lamb, Ftrl, Adafactor, Adagrad, Nadam, RMSprop
with momentum and centered, SGD with Nesterov momentum and weight decay, use_ema) and its
learning-rate schedules.
Each loads,
predicts as Keras did, evaluates to Keras' loss, continues training from the archive's
optimizer state as Keras does, and saves a .keras archive (with its optimizer state) and an
.h5 file that load again (bindings/python/keras3_tests: Keras 3 loads the archives too)."""
import json
import os
import zipfile

import numpy as np
import pytest

from kbackend import models
from model_fixtures import KERAS2_DECAYED_ADAM, KERAS2_DENSE, ModelFixtures

FIXTURES = ModelFixtures("keras3")
EXPECTED = FIXTURES.expected


def _listed(v):
    return v if isinstance(v, list) else [v]


@pytest.mark.parametrize("name", ["mlp", "cnn", "functional", "rnn", "nested", "logits",
                                  "clipped", "global_clipped", "adamw", "lion", "adagrad",
                                  "nadam", "rmsprop_centered", "sgd_decayed",
                                  "exponential_decay", "inverse_time_decay", "piecewise_decay",
                                  "polynomial_decay", "cosine_warmup", "cosine_restarts", "lamb",
                                  "ftrl", "ema", "adafactor"])
def test_keras3_archive(name, tmp_path):
    model = models.load_model(FIXTURES.path(name + ".keras"))
    xs, ys = FIXTURES.arrays(name, "x"), FIXTURES.arrays(name, "y")
    preds = FIXTURES.arrays(name, "pred")
    for g, p in zip(_listed(model.predict(xs)), preds):
        np.testing.assert_allclose(g, p, rtol=1e-5, atol=1e-5)
    if name == "mlp":  # metrics logged under the names Keras 3 gives them
        assert model.metrics_names == ["loss", "accuracy"]
    if name == "logits":
        assert model.metrics_names == ["loss", "sparse_categorical_accuracy"]
    loss = np.atleast_1d(model.test_on_batch(xs, ys))
    np.testing.assert_allclose(loss[0], EXPECTED[name + "/test_loss"][0], rtol=1e-4)
    if name + "/train_losses" in EXPECTED:  # the optimizer's state came from the archive too
        steps = [np.atleast_1d(model.train_on_batch(xs, ys))[0] for _ in range(3)]
        np.testing.assert_allclose(steps, EXPECTED[name + "/train_losses"], rtol=1e-4)
        # Keras 3's rules, not Keras 2.2.4's: BatchNormalization's moving variance, RMSprop.
        for g, p in zip(_listed(model.predict(xs)), FIXTURES.arrays(name, "trained_pred")):
            np.testing.assert_allclose(g, p, rtol=1e-4, atol=1e-5)
    for ext in (".keras", ".h5"):  # the format by the extension, as Keras' model.save
        path = str(tmp_path / ("again" + ext))
        model.save(path)
        with open(path, "rb") as f:
            assert f.read(4) == (b"PK\x03\x04" if ext == ".keras" else b"\x89HDF")
        again = models.load_model(path)
        for a, b in zip(_listed(again.predict(xs)), _listed(model.predict(xs))):
            np.testing.assert_allclose(a, b, atol=0)
    if name + "/train_losses" in EXPECTED:  # the archive carries the optimizer's state on
        again = models.load_model(str(tmp_path / "again.keras"))
        np.testing.assert_allclose(np.atleast_1d(again.train_on_batch(xs, ys))[0],
                                   np.atleast_1d(model.train_on_batch(xs, ys))[0], rtol=1e-6)


def _archive(tmp_path, entries):
    path = str(tmp_path / "bad.keras")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def test_keras3_archive_of_an_uncompiled_model(tmp_path):
    """Keras 3 writes an empty compile_config for a model saved before compile (as
    keras.applications give them): the model loads uncompiled, predicts, and compiles anew."""
    good = zipfile.ZipFile(FIXTURES.path("mlp.keras"))
    config = json.loads(good.read("config.json"))
    config["compile_config"] = {}
    path = _archive(tmp_path, {"config.json": json.dumps(config),
                               "metadata.json": good.read("metadata.json"),
                               "model.weights.h5": good.read("model.weights.h5")})
    model = models.load_model(path)
    xs, ys = FIXTURES.arrays("mlp", "x"), FIXTURES.arrays("mlp", "y")
    np.testing.assert_allclose(model.predict(xs), FIXTURES.arrays("mlp", "pred")[0], rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(Exception, match="compile"):
        model.train_on_batch(xs, ys)
    model.compile("sgd", "categorical_crossentropy")
    assert np.isfinite(np.atleast_1d(model.train_on_batch(xs, ys))[0])


@pytest.mark.parametrize("path", ["tf_keras/cnn.h5", "tf_keras/rnn.h5", "tf_keras/two_outputs.h5"])
def test_models_of_hdf5_files_save_as_keras3_archives(path, tmp_path):
    """A model from an HDF5 file saves as a Keras 3 archive (Keras 3 loads it and trains on:
    bindings/python/keras3_tests) that loads here with its weights and optimizer state."""
    model = models.load_model(os.path.join(os.path.dirname(FIXTURES.folder), path))
    name = os.path.basename(path)[:-3]
    tf_keras = ModelFixtures("tf_keras")
    xs, ys = tf_keras.arrays(name, "x"), tf_keras.arrays(name, "y")
    model.train_on_batch(xs, ys)
    archive = str(tmp_path / "m.keras")
    model.save(archive)
    with zipfile.ZipFile(archive) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
    again = models.load_model(archive)
    for a, b in zip(_listed(again.predict(xs)), _listed(model.predict(xs))):
        np.testing.assert_allclose(a, b, atol=0)
    # The optimizer's state went along: the next step's loss is the same.
    np.testing.assert_allclose(np.atleast_1d(again.train_on_batch(xs, ys))[0],
                               np.atleast_1d(model.train_on_batch(xs, ys))[0], rtol=1e-5)


def test_keras3_archive_refusals(tmp_path):
    good = zipfile.ZipFile(FIXTURES.path("mlp.keras"))
    config, weights = good.read("config.json"), good.read("model.weights.h5")
    with pytest.raises(ValueError, match="without config.json"):
        models.load_model(_archive(tmp_path, {"model.weights.h5": weights}))
    with pytest.raises(ValueError, match="config.json"):
        models.load_model(_archive(tmp_path, {"config.json": b"{not json",
                                              "model.weights.h5": weights}))
    with pytest.raises(ValueError, match="not an HDF5 file"):
        models.load_model(_archive(tmp_path, {"config.json": config,
                                              "model.weights.h5": b"junk" * 10}))
    subclassed = b'{"module": "my_models", "class_name": "MyModel", "config": {}}'
    with pytest.raises(NotImplementedError, match="subclassed"):
        models.load_model(_archive(tmp_path, {"config.json": subclassed,
                                              "model.weights.h5": weights}))
    truncated = str(tmp_path / "truncated.keras")
    with open(FIXTURES.path("mlp.keras"), "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(ValueError, match="zip"):
        models.load_model(truncated)


def test_keras3_optimizer_options_not_had_are_refused():
    model = models.load_model(FIXTURES.path("mlp.keras"))
    for option in ({"gradient_accumulation_steps": 4}, {"loss_scale_factor": 128.0}):
        with pytest.raises(NotImplementedError, match=list(option)[0]):
            model.compile({"class_name": "Adam", "config": option}, "mse")
    model.compile({"class_name": "AdamW", "config": {"learning_rate": 0.01}}, "mse")
    # Keras 2.2.4's RMSprop has neither momentum nor centered: a model made here (Keras 2.2.4's
    # rules) is refused them.
    made = models.model_from_json(model.to_json())
    with pytest.raises(NotImplementedError, match="momentum or centered"):
        made.compile({"class_name": "RMSprop", "config": {"momentum": 0.9}}, "mse")


@pytest.mark.parametrize("name", ["cnn", "functional", "rnn", "nadam", "cosine_warmup"])
def test_keras3_hdf5_file(name):
    """Keras 3's HDF5 files (saved beside the archive, at the same point): its configs in
    Keras 3's form, its optimizer's state in Keras 3's order; training by Keras 3's rules."""
    model = models.load_model(FIXTURES.path(name + ".h5"))
    xs, ys = FIXTURES.arrays(name, "x"), FIXTURES.arrays(name, "y")
    for g, p in zip(_listed(model.predict(xs)), FIXTURES.arrays(name, "pred")):
        np.testing.assert_allclose(g, p, rtol=1e-5, atol=1e-5)
    steps = [np.atleast_1d(model.train_on_batch(xs, ys))[0] for _ in range(3)]
    np.testing.assert_allclose(steps, EXPECTED[name + "/train_losses"], rtol=1e-4)


def test_a_model_of_json_with_keras2_decay_saves_as_an_archive(tmp_path):
    """Keras 2.2.4's decay is Keras 3's InverseTimeDecay: the archive carries it, and the state
    of a schedule's optimizer (no learning-rate variable)."""
    model = models.model_from_json(json.dumps(KERAS2_DENSE))
    model.compile(KERAS2_DECAYED_ADAM, "mse")
    rng = np.random.RandomState(0)
    xs, ys = [rng.rand(16, 6).astype(np.float32)], [rng.rand(16, 2).astype(np.float32)]
    for _ in range(3):
        model.train_on_batch(xs, ys)
    path = str(tmp_path / "decayed.keras")
    model.save(path)
    with zipfile.ZipFile(path) as z:
        compiled = json.loads(z.read("config.json"))["compile_config"]
    assert compiled["optimizer"]["config"]["learning_rate"]["class_name"] == "InverseTimeDecay"
    again = models.load_model(path)
    np.testing.assert_allclose(again.predict(xs), model.predict(xs), atol=0)
    np.testing.assert_allclose(np.atleast_1d(again.train_on_batch(xs, ys))[0],
                               np.atleast_1d(model.train_on_batch(xs, ys))[0], rtol=1e-6)


def test_keras3_use_ema_fit_ends_with_the_averages():
    """use_ema: a whole fit from the archive ends as Keras 3's does, its weights replaced by
    their moving averages (finalize_variable_values)."""
    model = models.load_model(FIXTURES.path("ema.keras"))
    xs, ys = FIXTURES.arrays("ema", "x"), FIXTURES.arrays("ema", "y")
    model.fit(xs, ys, epochs=1, batch_size=8, shuffle=False, verbose=0)
    for g, p in zip(_listed(model.predict(xs)), FIXTURES.arrays("ema", "fitted_pred")):
        np.testing.assert_allclose(g, p, rtol=1e-4, atol=1e-5)


def _one_layer(class_name, config, shape=(4,), dtype="int32"):
    return json.dumps({"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, *shape],
                                                "dtype": dtype, "name": "in"}},
        {"class_name": class_name, "config": dict(config, name="l")}]}})


def test_categorical_layers_compute_and_refuse_clearly():
    """CategoryEncoding and Discretization (Keras 3 checks them against its own in
    keras3_tests): what they compute, and the configs they refuse; the layers on strings are
    refused saying why."""
    encoding = models.model_from_json(_one_layer("CategoryEncoding", {
        "num_tokens": 4, "output_mode": "count"}))
    np.testing.assert_array_equal(encoding.predict(np.array([[1, 1, 3, 7]], np.int32)),
                                  [[0, 2, 0, 1]])
    bins = models.model_from_json(_one_layer("Discretization", {
        "bin_boundaries": [0.0, 1.0]}, (3,), "float32"))
    np.testing.assert_array_equal(bins.predict(np.array([[-1, 0, np.nan]], np.float32)),
                                  [[0, 1, 2]])
    refusals = [
        ("Discretization", {"num_bins": 4}, "no bin_boundaries"),
        ("Discretization", {"bin_boundaries": [1.0, 0.0]}, "must ascend"),
        ("Discretization", {"bin_boundaries": [0.0], "output_mode": "tf_idf"}, "output_mode"),
        ("CategoryEncoding", {"num_tokens": 0}, "num_tokens"),
        ("CategoryEncoding", {"num_tokens": 4, "output_mode": "int"}, "output_mode"),
    ]
    for class_name, config, message in refusals:
        with pytest.raises(ValueError, match=message):
            models.model_from_json(_one_layer(class_name, config))
    with pytest.raises(NotImplementedError, match="sparse"):
        models.model_from_json(_one_layer("CategoryEncoding", {"num_tokens": 4,
                                                               "sparse": True}))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        models.model_from_json(_one_layer("CategoryEncoding", {"num_tokens": 4}, (2, 2)))
    with pytest.raises(NotImplementedError, match="StringLookup is not available: it looks "
                                                  "strings up"):
        models.model_from_json(_one_layer("StringLookup", {}))


def test_lora_computes_with_the_merged_kernel_and_saves_it(tmp_path):
    """Keras 3's LoRA (lora_rank, lora_alpha): Dense computes with kernel + alpha / rank * a @ b
    (NumPy here), the kernel frozen and the factors trained; the archive keeps the kernel merged
    and no factor, so the model read back predicts the same with zero factors."""
    model = models.model_from_json(_one_layer("Dense", {"units": 3, "lora_rank": 2,
                                                       "lora_alpha": 4.0}, (5,), "float32"))
    rng = np.random.RandomState(3)
    kernel, bias = rng.randn(5, 3), rng.randn(3)
    a, b = rng.randn(5, 2), rng.randn(2, 3)
    model.set_weights([w.astype(np.float32) for w in (kernel, bias, a, b)])
    x = rng.randn(4, 5).astype(np.float32)
    merged = kernel + 2.0 * a @ b
    np.testing.assert_allclose(model.predict(x), x @ merged + bias, rtol=1e-5, atol=1e-5)
    model.compile("sgd", "mse")
    model.train_on_batch(x, np.zeros((4, 3), np.float32))
    after = model.get_weights()
    np.testing.assert_array_equal(after[0], kernel.astype(np.float32))  # frozen
    assert np.abs(after[2] - a).max() > 1e-4 and np.abs(after[3] - b).max() > 1e-4
    path = str(tmp_path / "lora.keras")
    model.save(path)
    again = models.load_model(path)
    np.testing.assert_allclose(again.predict(x), model.predict(x), rtol=1e-5, atol=1e-6)
    loaded = again.get_weights()
    assert not loaded[2].any() and not loaded[3].any()
    with pytest.raises(ValueError, match="kernel_constraint"):
        models.model_from_json(_one_layer("Dense", {"units": 3, "lora_rank": 2,
                                                   "kernel_constraint": "non_neg"}))
    # EinsumDense's a has the kernel's shape but its last dim (then the rank).
    einsum = models.model_from_json(_one_layer("EinsumDense", {
        "equation": "abc,cde->abde", "output_shape": [3, 2, 5], "lora_rank": 2}, (3, 4),
        "float32"))
    kernel, a, b = rng.randn(4, 2, 5), rng.randn(4, 2, 2), rng.randn(2, 5)
    einsum.set_weights([w.astype(np.float32) for w in (kernel, a, b)])
    x = rng.randn(2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(einsum.predict(x), np.einsum("abc,cde->abde", x, kernel + a @ b),
                               rtol=1e-5, atol=1e-5)


def test_spectral_normalization_finds_its_kernel_in_every_model(tmp_path):
    """The wrapper finds the inner layer's kernel by the name the layer gives it, whatever name
    the session made unique (the second model's kernel is another 'kernel'); HDF5 round trip."""
    config = _one_layer("SpectralNormalization", {
        "layer": {"class_name": "Dense", "config": {"name": "d", "units": 3}},
        "power_iterations": 2}, (4,), "float32")
    first, second = models.model_from_json(config), models.model_from_json(config)
    x = np.random.RandomState(1).randn(2, 4).astype(np.float32)
    kernel = second.get_weights()[0]
    np.testing.assert_allclose(second.predict(x), x @ kernel, rtol=1e-5, atol=1e-6)
    path = str(tmp_path / "spectral.h5")
    second.save(path)
    again = models.load_model(path)
    for a, b in zip(again.get_weights(), second.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert len(first.get_weights()) == 3  # kernel, bias, vector_u (tf.keras' order here)
