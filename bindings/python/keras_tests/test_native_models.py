"""kbackend.models (the native model layer, kb_model_* in the C ABI) against Keras 2.2.4 on
kbackend: files Keras saves load natively and predict, train and evaluate as Keras does; files
saved natively load in Keras; bad files fail with a message and leave the library usable."""
import json
import os

import numpy as np
import pytest

keras = pytest.importorskip("keras")
h5py = pytest.importorskip("h5py")
from keras import layers, models as kmodels, optimizers  # noqa: E402

from kbackend import models  # noqa: E402

RNG = np.random.RandomState(0)
X = RNG.rand(64, 8).astype(np.float32)
Y = np.eye(3, dtype=np.float32)[RNG.randint(0, 3, 64)]
Y2 = RNG.rand(64, 2).astype(np.float32)


def _flat(weights):
    return np.concatenate([w.ravel() for w in weights])


def _sequential(dropout):
    stack = [layers.Dense(16, input_shape=(8,), activation="relu")]
    if dropout:
        stack.append(layers.Dropout(0.2))
    stack += [layers.Dense(3, activation="softmax")]
    return kmodels.Sequential(stack)


OPTIMIZERS = {
    "sgd": lambda: optimizers.SGD(lr=0.1),
    "sgd momentum nesterov decay": lambda: optimizers.SGD(lr=0.1, momentum=0.9, nesterov=True,
                                                          decay=0.01),
    "adam": lambda: optimizers.Adam(),
    "adam amsgrad decay clipnorm": lambda: optimizers.Adam(amsgrad=True, decay=0.001, clipnorm=0.5),
    # RMSprop, Adagrad and Adadelta keep iterations out of their weights, Nadam its m_schedule
    # too: a file does not carry them (nor in Keras), so these compare from a fresh optimizer.
    "rmsprop clipvalue": lambda: optimizers.RMSprop(clipvalue=0.1),
    "adagrad": lambda: optimizers.Adagrad(),
    "adadelta": lambda: optimizers.Adadelta(),
    "adamax": lambda: optimizers.Adamax(),
    "nadam": lambda: optimizers.Nadam(),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sequential_file_trains_as_keras(name, tmp_path):
    path = str(tmp_path / "model.h5")
    k = _sequential(dropout=False)
    k.compile(OPTIMIZERS[name](), "categorical_crossentropy", ["accuracy"])
    if name != "nadam":
        k.fit(X, Y, epochs=1, batch_size=16, verbose=0)  # the optimizer's state is in the file
    k.save(path)
    native = models.load_model(path)
    np.testing.assert_allclose(native.predict(X), k.predict(X), atol=1e-5)
    assert native.metrics_names == k.metrics_names == ["loss", "acc"]
    np.testing.assert_allclose(native.evaluate(X, Y, verbose=0), k.evaluate(X, Y, verbose=0),
                               rtol=1e-5)
    expected = k.fit(X, Y, epochs=2, batch_size=16, verbose=0, shuffle=False).history
    got = native.fit(X, Y, epochs=2, batch_size=16, verbose=0, shuffle=False).history
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(_flat(native.get_weights()), _flat(k.get_weights()), atol=1e-4)
    np.testing.assert_allclose(native.train_on_batch(X[:10], Y[:10]),
                               k.train_on_batch(X[:10], Y[:10]), rtol=1e-5)


def test_functional_two_outputs_loss_weights(tmp_path):
    path = str(tmp_path / "model.h5")
    inp = layers.Input((8,))
    h = layers.Dense(16, activation="tanh")(inp)
    k = kmodels.Model(inp, [layers.Dense(3, activation="softmax", name="cls")(h),
                            layers.Dense(2, name="reg")(h)])
    k.compile(optimizers.Adam(amsgrad=True), ["categorical_crossentropy", "mse"], ["accuracy"],
              loss_weights=[1.0, 0.5])
    k.fit(X, [Y, Y2], epochs=1, batch_size=16, verbose=0)
    k.save(path)
    native = models.load_model(path)
    assert native.metrics_names == k.metrics_names
    for a, b in zip(native.predict(X), k.predict(X)):
        np.testing.assert_allclose(a, b, atol=1e-5)
    np.testing.assert_allclose(native.train_on_batch(X[:10], [Y[:10], Y2[:10]]),
                               k.train_on_batch(X[:10], [Y[:10], Y2[:10]]), rtol=1e-5)
    expected = k.fit(X, [Y, Y2], epochs=2, batch_size=16, verbose=0, shuffle=False).history
    got = native.fit(X, [Y, Y2], epochs=2, batch_size=16, verbose=0, shuffle=False).history
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(_flat(native.get_weights()), _flat(k.get_weights()), atol=1e-4)


def test_dropout_predicts_as_keras_and_trains(tmp_path):
    path = str(tmp_path / "model.h5")
    k = _sequential(dropout=True)
    k.compile("sgd", "categorical_crossentropy", ["accuracy"])
    k.save(path)
    native = models.load_model(path)
    np.testing.assert_allclose(native.predict(X, batch_size=7), k.predict(X), atol=1e-5)
    history = native.fit(X, Y, epochs=3, batch_size=16, verbose=0, validation_split=0.25,
                         seed=1).history
    assert sorted(history) == ["acc", "loss", "val_acc", "val_loss"]
    assert all(len(v) == 3 and np.all(np.isfinite(v)) for v in history.values())


def test_sparse_labels_regularizer_and_from_json():
    k = kmodels.Sequential([layers.Dense(5, input_shape=(8,), activation="relu",
                                         kernel_regularizer=keras.regularizers.l2(0.01)),
                            layers.Dense(3, activation="softmax")])
    k.compile(optimizers.SGD(lr=0.05), "sparse_categorical_crossentropy", ["accuracy"])
    native = models.model_from_json(k.to_json())
    native.set_weights(k.get_weights())
    native.compile({"class_name": "SGD", "config": {"lr": 0.05}},
                   "sparse_categorical_crossentropy", ["accuracy"])
    labels = Y.argmax(1).astype(np.float32)
    np.testing.assert_allclose(native.train_on_batch(X, labels), k.train_on_batch(X, labels),
                               rtol=1e-5)
    np.testing.assert_allclose(_flat(native.get_weights()), _flat(k.get_weights()), atol=1e-6)
    assert json.loads(native.to_json())["class_name"] == "Sequential"


def test_native_file_loads_in_keras(tmp_path):
    k = _sequential(dropout=False)
    k.compile(optimizers.Adam(), "categorical_crossentropy", ["accuracy"])
    src, out = str(tmp_path / "keras.h5"), str(tmp_path / "native.h5")
    k.save(src)
    native = models.load_model(src)
    native.fit(X, Y, epochs=1, batch_size=16, verbose=0, shuffle=False)
    native.save(out)
    again = _sequential(dropout=False)
    again.load_weights(out)
    np.testing.assert_allclose(again.predict(X), native.predict(X), atol=1e-6)
    with h5py.File(out, "r") as f:  # Keras' layout: every group and attribute it reads
        config = json.loads(f.attrs["model_config"])
        assert config["class_name"] == "Sequential"
        assert json.loads(f.attrs["training_config"])["optimizer_config"]["class_name"] == "Adam"
        assert len(f["optimizer_weights"].attrs["weight_names"]) == 1 + 3 * 4
    reloaded = models.load_model(out)  # and natively again, optimizer state included
    np.testing.assert_allclose(reloaded.predict(X), native.predict(X), atol=0)
    a = reloaded.train_on_batch(X[:8], Y[:8])
    b = native.train_on_batch(X[:8], Y[:8])
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_callbacks_stop_and_see_logs(tmp_path):
    path = str(tmp_path / "model.h5")
    k = _sequential(dropout=False)
    k.compile("sgd", "categorical_crossentropy", ["accuracy"])
    k.save(path)
    native = models.load_model(path)
    seen = []

    def stop_after_second_epoch(epoch, batch, logs):
        seen.append((epoch, batch, sorted(logs)))
        return epoch == 1 and batch == -1

    h = native.fit(X, Y, epochs=5, batch_size=32, verbose=0, callbacks=[stop_after_second_epoch])
    assert len(h.history["loss"]) == 2
    assert (0, 0, ["acc", "batch", "loss", "size"]) in seen and seen[-1][:2] == (1, -1)


def _expect(error, pattern, call):
    with pytest.raises(error, match=pattern):
        call()


def test_bad_files_fail_with_messages(tmp_path):
    good = str(tmp_path / "good.h5")
    k = _sequential(dropout=False)
    k.compile("sgd", "categorical_crossentropy")
    k.save(good)
    _expect(FileNotFoundError, "no such file", lambda: models.load_model(str(tmp_path / "none.h5")))
    text = tmp_path / "text.h5"
    text.write_text("not hdf5")
    _expect(ValueError, "not an HDF5 file", lambda: models.load_model(str(text)))
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(open(good, "rb").read()[:3000])
    with pytest.raises(ValueError):
        models.load_model(str(truncated))

    def edited(name, edit):
        path = str(tmp_path / name)
        with open(good, "rb") as src, open(path, "wb") as dst:
            dst.write(src.read())
        with h5py.File(path, "r+") as f:
            edit(f)
        return path

    not_json = edited("not_json.h5", lambda f: f.attrs.__setitem__("model_config", b"{oops"))
    _expect(ValueError, "model_config: not JSON", lambda: models.load_model(not_json))

    def lambda_layer(f):
        c = json.loads(f.attrs["model_config"])
        c["config"]["layers"][1]["class_name"] = "Lambda"
        f.attrs["model_config"] = json.dumps(c).encode()
    _expect(NotImplementedError, "layer '%s': class 'Lambda'" % k.layers[1].name,
            lambda: models.load_model(edited("lambda.h5", lambda_layer)))

    last, first = k.layers[1].name, k.layers[0].name
    kernel = "model_weights/%s/%s/kernel" % (last, last)

    def wrong_shape(f):
        del f[kernel]
        f[kernel] = np.zeros((4, 3), np.float32)
    _expect(ValueError, "%s/kernel' has shape \\(4, 3\\)" % last,
            lambda: models.load_model(edited("shape.h5", wrong_shape)))
    missing = edited("missing.h5", lambda f: f.__delitem__("model_weights/" + first))
    _expect(ValueError, first, lambda: models.load_model(missing))
    # Random bytes flipped: an error or a model, never a crash (a loop bounded in time).
    data = bytearray(open(good, "rb").read())
    rng = np.random.RandomState(1)
    for i in range(40):
        damaged = bytearray(data)
        for pos in rng.randint(0, len(damaged), 8):
            damaged[pos] ^= 0xFF
        path = tmp_path / ("flip%d.h5" % i)
        path.write_bytes(bytes(damaged))
        try:
            models.load_model(str(path)).predict(X[:2])
        except (ValueError, NotImplementedError):
            pass
    np.testing.assert_allclose(models.load_model(good).predict(X), k.predict(X), atol=1e-5)


def test_bad_arguments():
    k = _sequential(dropout=False)
    native = models.model_from_json(k.to_json())
    _expect(ValueError, "not compiled", lambda: native.fit(X, Y, verbose=0))
    _expect(ValueError, "input arrays", lambda: native.predict([X, X]))
    _expect(NotImplementedError, "unknown loss 'nope'", lambda: native.compile("sgd", "nope"))
    _expect(NotImplementedError, "unknown optimizer", lambda: native.compile("nadamx", "mse"))
    native.compile("sgd", "mse")
    _expect(ValueError, "samples", lambda: native.fit(X, Y[:10], verbose=0))
    _expect(ValueError, "not JSON", lambda: models.model_from_json("{"))
    assert native.predict(X).shape == (64, 3)
    assert os.path.basename(__file__)


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_c_example_finetunes_a_keras_file(tmp_path):
    """examples/finetune_keras_model.c on a file examples/make_keras_model.py saves with Keras."""
    import importlib.util
    import subprocess
    binary = os.path.join(ROOT, "build", "finetune_keras_model")
    if not os.path.exists(binary):
        pytest.skip("build/finetune_keras_model is not built")
    spec = importlib.util.spec_from_file_location(
        "make_keras_model", os.path.join(ROOT, "examples", "make_keras_model.py"))
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    src, out = str(tmp_path / "digits.h5"), str(tmp_path / "tuned.h5")
    digits = os.path.join(ROOT, "examples", "data", "digits.csv")
    maker.main(src, digits)
    run = subprocess.run([binary, src, digits, out], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "test accuracy" in run.stdout and "Epoch 5/5" in run.stderr
    data = np.loadtxt(digits, delimiter=",", comments="#")
    test = np.arange(len(data)) % 5 == 4
    again = _sequential_digits()
    again.load_weights(out)
    accuracy = np.mean(again.predict(data[test, 1:] / 16.0).argmax(1) == data[test, 0])
    reported = float(run.stdout.split("% after")[0].rsplit(" ", 1)[1]) / 100
    assert abs(accuracy - reported) < 1e-4 and accuracy >= 0.9  # printed as xx.xx%


def _sequential_digits():
    return kmodels.Sequential([layers.Dense(64, input_shape=(64,), activation="relu"),
                               layers.Dropout(0.1), layers.Dense(10, activation="softmax")])


def test_sample_weight_and_validation_data_as_keras(tmp_path):
    path = str(tmp_path / "model.h5")
    k = _sequential(dropout=False)
    k.compile(optimizers.SGD(lr=0.1), "categorical_crossentropy", ["accuracy"])
    k.save(path)
    native = models.load_model(path)
    w = np.random.RandomState(5).rand(len(X)).astype(np.float32)
    w[::7] = 0
    vx, vy = X[:16] * 0.5, Y[:16]
    vw = np.linspace(0.1, 1, 16).astype(np.float32)
    expected = k.fit(X, Y, epochs=2, batch_size=16, verbose=0, shuffle=False, sample_weight=w,
                     validation_data=(vx, vy, vw)).history
    got = native.fit(X, Y, epochs=2, batch_size=16, verbose=0, shuffle=False, sample_weight=w,
                     validation_data=(vx, vy, vw)).history
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(_flat(native.get_weights()), _flat(k.get_weights()), atol=1e-5)
    with pytest.raises(ValueError, match="one weight per sample"):
        native.fit(X, Y, epochs=1, verbose=0, sample_weight=w[:5])


def _summary_lines(model):
    lines = []
    model.summary(print_fn=lines.append)
    return lines


def test_summary_prints_as_keras(tmp_path):
    inp = layers.Input((8,))
    h = layers.Dense(16, activation="tanh")(inp)
    branched = kmodels.Model(inp, [layers.Dense(3, name="cls")(h), layers.Dense(2, name="reg")(h)])
    a = layers.Input((4,))
    chain = kmodels.Model(a, layers.Dense(2)(layers.Dense(5)(a)))
    for k in (_sequential(dropout=True), branched, chain):
        path = str(tmp_path / (k.name + ".h5"))
        k.save(path)
        assert _summary_lines(models.load_model(path)) == _summary_lines(k)


def _mutations(value, rng):
    """Hostile variants of a JSON value: other types, negatives, empties, removals."""
    if isinstance(value, dict) and value:
        key = sorted(value)[rng.randint(len(value))]
        out = dict(value)
        if rng.rand() < 0.3:
            del out[key]
        else:
            out[key] = _mutations(value[key], rng)
        return out
    if isinstance(value, list) and value:
        i = rng.randint(len(value))
        out = list(value)
        if rng.rand() < 0.3:
            del out[i]
        else:
            out[i] = _mutations(value[i], rng)
        return out
    return [None, -1, 0, 3, 1.5, "x", "", [], {}, True, [None, -2], {"class_name": "?"}][
        rng.randint(12)]


def test_mutated_configs_fail_cleanly():
    """Configs with values of the wrong type, negative or missing: an error or a model, never
    a crash; the library works after (a loop bounded in time)."""
    import time
    x = layers.Input((6, 3))
    h = layers.LSTM(4, return_sequences=True)(layers.Conv1D(3, 2, padding="same")(x))
    h = layers.Bidirectional(layers.GRU(2))(layers.BatchNormalization()(h))
    k = kmodels.Model(x, layers.Dense(2, activation="softmax")(layers.Dropout(0.1)(h)))
    seq = _sequential(dropout=True)
    rng = np.random.RandomState(3)
    deadline = time.time() + 20
    tried = 0
    while time.time() < deadline and tried < 400:
        base = json.loads((k if tried % 2 else seq).to_json())
        mutated = base
        for _ in range(1 + rng.randint(3)):
            mutated = _mutations(mutated, rng)
        try:
            m = models.model_from_json(json.dumps(mutated))
            m.predict(np.zeros((2, 6, 3) if tried % 2 else (2, 8), np.float32))
        except (ValueError, NotImplementedError, MemoryError):
            pass
        tried += 1
    assert tried > 50
    np.testing.assert_allclose(models.model_from_json(seq.to_json()).predict(X).shape, (64, 3))
