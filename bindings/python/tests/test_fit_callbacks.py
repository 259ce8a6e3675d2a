"""Keras' callbacks run by the library in fit (kbackend.callbacks): each decision against Keras
3's own callback objects given the same logs (Keras replays kbackend's history: the epoch it
stops at, the learning rates it picks, the checkpoints it writes and the CSV it writes, byte for
byte), checkpoint paths against Python's str.format, the weights restored and saved, and the
refusals of bad configs. The replays need Keras 3 (bindings/python/keras3_tests/run.sh runs this
file in its venv); the rest runs wherever kbackend does."""
import csv
import os

import numpy as np
import pytest

from kbackend import models
from kbackend.callbacks import (BackupAndRestore, Callback, CSVLogger, EarlyStopping,
                                ModelCheckpoint, NativeCallback, ReduceLROnPlateau,
                                TerminateOnNaN)
from model_fixtures import ModelFixtures

FIXTURES = ModelFixtures("keras3")


def _mlp():
    return (models.load_model(FIXTURES.path("mlp.keras")), FIXTURES.arrays("mlp", "x"),
            FIXTURES.arrays("mlp", "y"))


def _keras():
    """Keras 3 on JAX (another venv's Keras 2.2.4, or none: the test is skipped)."""
    pytest.importorskip("jax")
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras", minversion="3.0")


def _replay(keras, specs, history, folder):
    """Keras 3's callbacks of `specs` (kbackend callback objects, their paths moved to `folder`)
    on the MLP, fed kbackend's per-epoch history: [(learning rate after each epoch's end,
    whether Keras stops there)] and the Keras callbacks."""
    model = keras.saving.load_model(FIXTURES.path("mlp.keras"))
    # Keras builds the compiled metrics (whose directions "auto" reads) on the first batch.
    model.evaluate(FIXTURES.arrays("mlp", "x"), FIXTURES.arrays("mlp", "y"), verbose=0)
    made = []
    for spec in specs:
        config = dict(spec.get_config())
        for key in ("filepath", "filename"):
            if key in config:
                config[key] = os.path.join(folder, os.path.basename(config[key]))
        made.append(getattr(keras.callbacks, spec.class_name)(**config))
    for c in made:
        c.set_model(model)
        c.on_train_begin()
    keys = [k for k in history if k != "learning_rate"]
    out = []
    for epoch in range(len(history["loss"])):
        for c in made:
            c.on_epoch_begin(epoch)
        logs = {k: history[k][epoch] for k in keys}
        for c in made:
            c.on_epoch_end(epoch, logs)
        out.append((float(model.optimizer.learning_rate), bool(model.stop_training)))
    for c in made:
        c.on_train_end()
    return out, made


SCENARIOS = {
    # the validation loss watched with patience; the learning rate halved on the loss' plateaus
    "val_loss": lambda d: [
        ReduceLROnPlateau(monitor="loss", patience=1, factor=0.5, min_delta=0.02),
        EarlyStopping(monitor="val_loss", patience=2, min_delta=0.001),
        CSVLogger(os.path.join(d, "log.csv")),
        ModelCheckpoint(os.path.join(d, "m-{epoch:02d}-{val_loss:.4f}.keras"),
                        save_best_only=True)],
    # accuracy rises (auto mode), a warm-up, cooldown and a floor on the rate
    "accuracy": lambda d: [
        EarlyStopping(monitor="val_accuracy", patience=3, start_from_epoch=2),
        ReduceLROnPlateau(monitor="val_loss", patience=1, factor=0.3, cooldown=1,
                          min_lr=0.004, min_delta=0.01),
        CSVLogger(os.path.join(d, "log.csv"), separator=";"),
        ModelCheckpoint(os.path.join(d, "best-{epoch}.h5"), monitor="val_accuracy",
                        save_best_only=True)],
    # a baseline the loss never reaches: patience runs out from the start
    "baseline": lambda d: [
        EarlyStopping(monitor="loss", patience=3, baseline=0.01, mode="min"),
        CSVLogger(os.path.join(d, "log.csv"))],
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_callbacks_decide_as_keras_does(scenario, tmp_path):
    keras = _keras()
    ours, theirs = tmp_path / "kbackend", tmp_path / "keras"
    ours.mkdir()
    theirs.mkdir()
    specs = SCENARIOS[scenario](str(ours))
    model, x, y = _mlp()
    h = model.fit(x, y, batch_size=4, epochs=12, verbose=0, validation_split=0.25,
                  shuffle=False, callbacks=specs).history
    replayed, _ = _replay(keras, specs, h, str(theirs))
    ran = len(h["loss"])
    stops = [i for i, (_, stop) in enumerate(replayed) if stop]
    # Keras stops after the same epoch (or runs them all).
    assert (stops[0] + 1 if stops else 12) == ran
    if "learning_rate" in h:  # the rate each epoch trained with, as Keras sets it
        rates = [0.01] + [r for r, _ in replayed[:-1]]
        np.testing.assert_array_equal(np.float32(h["learning_rate"]), np.float32(rates))
    assert sorted(os.listdir(theirs)) == sorted(os.listdir(ours))
    with open(ours / "log.csv", "rb") as a, open(theirs / "log.csv", "rb") as b:
        assert a.read() == b.read()


def test_restore_best_weights_gives_the_best_epoch(tmp_path):
    model, x, y = _mlp()
    best = str(tmp_path / "best.keras")
    specs = [EarlyStopping(monitor="val_loss", patience=1, restore_best_weights=True),
             ModelCheckpoint(best, save_best_only=True)]
    h = model.fit(x, y, batch_size=4, epochs=30, verbose=0, validation_split=0.25,
                  shuffle=False, callbacks=specs).history
    assert len(h["loss"]) < 30  # it stopped
    assert int(np.argmin(h["val_loss"])) < len(h["loss"]) - 1  # after a worse epoch
    saved = models.load_model(best)
    for a, b in zip(model.get_weights(), saved.get_weights()):
        np.testing.assert_array_equal(a, b)


PATTERNS = ["m-{epoch:02d}-{val_loss:.2f}.keras", "{epoch}_{loss}.keras", "{epoch:>4}.keras",
            "{loss:e}-{val_accuracy:.1%}.keras", "{epoch:+05d}{{x}}.keras",
            "{loss:.3g}-{epoch:x}-{epoch:#o}.h5", "{val_loss:10.4f}|{loss:<9.2f}|.keras",
            "{epoch:*^7}{loss:.5}.keras"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_checkpoint_paths_are_python_format(pattern, tmp_path):
    model, x, y = _mlp()
    h = model.fit(x, y, batch_size=8, epochs=2, verbose=0, validation_split=0.25,
                  callbacks=[ModelCheckpoint(str(tmp_path / pattern))]).history
    want = {pattern.format(epoch=e + 1, **{k: v[e] for k, v in h.items()}) for e in range(2)}
    assert set(os.listdir(tmp_path)) == want


def test_checkpoint_every_n_batches_as_keras_counts(tmp_path):
    keras = _keras()
    model, x, y = _mlp()  # 32 samples: 5 batches of 7 (the last of 4)
    pattern = "b-{epoch}-{batch}.weights.h5"
    model.fit(x, y, batch_size=7, epochs=3, verbose=0,
              callbacks=[ModelCheckpoint(str(tmp_path / "ours" / pattern), save_freq=4,
                                         save_weights_only=True)])
    theirs = keras.callbacks.ModelCheckpoint(str(tmp_path / "theirs" / pattern), save_freq=4,
                                             save_weights_only=True)
    theirs.set_model(keras.saving.load_model(FIXTURES.path("mlp.keras")))
    for epoch in range(3):
        theirs.on_epoch_begin(epoch)
        for batch in range(5):
            theirs.on_train_batch_end(batch, {"loss": 1.0})
    assert sorted(os.listdir(tmp_path / "ours")) == sorted(os.listdir(tmp_path / "theirs"))


def test_weights_files_go_both_ways(tmp_path):
    keras = _keras()
    model, x, y = _mlp()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0,
              callbacks=[ModelCheckpoint(str(tmp_path / "w.weights.h5"), save_weights_only=True)])
    k = keras.saving.load_model(FIXTURES.path("mlp.keras"))
    k.load_weights(str(tmp_path / "w.weights.h5"))
    for a, b in zip(model.get_weights(), k.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(k.predict(x[0], verbose=0), model.predict(x), atol=1e-6)
    k.fit(x[0], y[0], batch_size=8, epochs=1, verbose=0)
    k.save_weights(str(tmp_path / "k.weights.h5"))
    model.load_weights(str(tmp_path / "k.weights.h5"))
    for a, b in zip(model.get_weights(), k.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_weights_only_checkpoint_restores_here(tmp_path):
    model, x, y = _mlp()
    path = str(tmp_path / "w.weights.h5")
    model.fit(x, y, batch_size=8, epochs=2, verbose=0,
              callbacks=[ModelCheckpoint(path, save_weights_only=True)])
    trained = model.get_weights()
    fresh, _, _ = _mlp()
    fresh.load_weights(path)
    for a, b in zip(trained, fresh.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fresh.predict(x), model.predict(x))


def test_terminate_on_nan_stops_after_the_batch(tmp_path):
    model, x, y = _mlp()
    y = [y[0].copy()]
    y[0][9] = np.nan  # in the third batch of four
    seen = []
    h = model.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False,
                  callbacks=[TerminateOnNaN(), lambda e, b, logs: seen.append((e, b))])
    assert seen == [(0, 0), (0, 1), (0, 2), (0, -1)] and len(h.history["loss"]) == 1
    model, _, _ = _mlp()  # the NaN batch's update made every weight NaN
    with pytest.raises(ValueError, match="NaN or Inf loss encountered at batch 2"):
        model.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False,
                  callbacks=[TerminateOnNaN(raise_error=True)])


def test_program_callbacks_get_keras_hooks():
    model, x, y = _mlp()
    calls = []

    class Recorder(Callback):
        def on_train_begin(self, logs=None):
            calls.append("train_begin")

        def on_epoch_begin(self, epoch, logs=None):
            calls.append(("epoch_begin", epoch))

        def on_train_batch_end(self, batch, logs=None):
            calls.append(("batch", batch))

        def on_epoch_end(self, epoch, logs=None):
            calls.append(("epoch_end", epoch, sorted(logs)))
            if epoch == 1:
                self.model.stop_training = True

        def on_train_end(self, logs=None):
            calls.append("train_end")

    model.fit(x, y, batch_size=16, epochs=5, verbose=0,
              callbacks=[ReduceLROnPlateau(monitor="loss"), Recorder()])
    keys = ["accuracy", "learning_rate", "loss"]
    assert calls == ["train_begin", ("epoch_begin", 0), ("batch", 0), ("batch", 1),
                     ("epoch_end", 0, keys), ("epoch_begin", 1), ("batch", 0), ("batch", 1),
                     ("epoch_end", 1, keys), "train_end"]


def test_csv_logger_appends_without_a_second_header(tmp_path):
    model, x, y = _mlp()
    path = str(tmp_path / "log.csv")
    model.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[CSVLogger(path)])
    model.fit(x, y, batch_size=8, epochs=4, initial_epoch=2, verbose=0,
              callbacks=[CSVLogger(path, append=True)])
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # Keras adds val_ columns when there is no validation; they hold NA.
    assert rows[0] == ["epoch", "accuracy", "loss", "val_accuracy", "val_loss"]
    assert [r[0] for r in rows[1:]] == ["0", "1", "2", "3"]
    assert all(r[3:] == ["NA", "NA"] for r in rows[1:])


@pytest.mark.parametrize("spec, message", [
    ({"class_name": "EarlyStoping"}, "no callback class 'EarlyStoping'"),
    ({"class_name": "EarlyStopping", "config": {"patiense": 2}}, "did you mean 'patience'"),
    ({"class_name": "EarlyStopping", "config": {"patience": "2"}}, "must be an integer"),
    ({"class_name": "EarlyStopping", "extra": 1}, "unknown key 'extra'"),
    ({"class_name": "ReduceLROnPlateau", "config": {"factor": 1.5}}, "factor >= 1.0"),
    ({"class_name": "ModelCheckpoint"}, "filepath is required"),
    ({"class_name": "ModelCheckpoint", "config": {"filepath": "m.txt"}}, "must end in .keras"),
    ({"class_name": "ModelCheckpoint",
      "config": {"filepath": "m.h5", "save_weights_only": True}}, "must end in .weights.h5"),
    ({"class_name": "ModelCheckpoint", "config": {"filepath": "m.keras", "save_freq": "batch"}},
     "save_freq 'batch' is not 'epoch' or a number of batches"),
    ({"class_name": "BackupAndRestore", "config": {"backup_dir": "b", "save_freq": -2}},
     "save_freq must be positive"),
    ({"class_name": "TensorBoard", "config": {"update_freq": "often"}},
     "update_freq 'often' is not 'epoch', 'batch' or a number of batches"),
    ({"class_name": "ModelCheckpoint", "config": {"filepath": "m.keras", "save_freq": 0}},
     "save_freq must be positive"),
    ({"class_name": "CSVLogger", "config": {"filename": "l.csv", "separator": ", "}},
     "one character"),
])
def test_bad_configs_are_refused(spec, message):
    model, x, y = _mlp()
    before = model.get_weights()
    with pytest.raises(ValueError, match=message):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[_Raw(spec)])
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


class _Raw(NativeCallback):
    """A {class_name, config} entry as any program may write it, what the classes refuse too."""

    def __init__(self, spec):
        super().__init__()
        self._spec = spec

    def spec(self):
        return self._spec


@pytest.mark.parametrize("pattern, message", [
    ("m-{val_los}.keras", "no value 'val_los'"), ("m-{loss:d}.keras", "unknown format code 'd'"),
    ("m-{epoch.keras", "single '{'"), ("m-{loss:.2q}.keras", "is not one this library")])
def test_bad_paths_fail_fit(pattern, message, tmp_path):
    model, x, y = _mlp()
    with pytest.raises(ValueError, match=message):
        model.fit(x, y, epochs=1, verbose=0, validation_split=0.25,
                  callbacks=[ModelCheckpoint(str(tmp_path / pattern))])


def test_a_schedule_rate_is_not_settable():
    model = models.load_model(FIXTURES.path("exponential_decay.keras"))
    x, y = FIXTURES.arrays("exponential_decay", "x"), FIXTURES.arrays("exponential_decay", "y")
    with pytest.raises(ValueError, match="not settable"):
        model.fit(x, y, epochs=3, verbose=0,
                  callbacks=[ReduceLROnPlateau(monitor="loss", patience=0, min_delta=100)])


DENSE2 = ('{"class_name": "Sequential", "config": {"name": "s", "layers": ['
          '{"class_name": "Dense", "config": {"name": "h", "units": 6, "activation": "tanh", '
          '"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"name": "o", '
          '"units": 3, "activation": "softmax"}}]}}')


def _dense(optimizer):
    m = models.model_from_json(DENSE2)
    m.compile(optimizer, "categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(5)
    m.set_weights([w.astype(np.float32) for w in
                   (rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=(6, 3)),
                    rng.normal(size=3))])
    x = rng.normal(size=(40, 4)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 40)]
    return m, x, y


class _Interrupt(Callback):
    """Raises at the end of epoch `at`, as a killed job stops."""

    def __init__(self, at):
        super().__init__()
        self.at = at

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.at:
            raise KeyboardInterrupt("killed")


@pytest.mark.parametrize("optimizer", ["adam", "rmsprop", "sgd"])
@pytest.mark.parametrize("save_freq", ["epoch", 3])
def test_an_interrupted_fit_resumes_bit_for_bit(optimizer, save_freq, tmp_path):
    whole, x, y = _dense(optimizer)
    h = whole.fit(x, y, batch_size=8, epochs=6, verbose=0, seed=3).history
    backup = str(tmp_path / "backup")
    resumed, _, _ = _dense(optimizer)
    with pytest.raises(KeyboardInterrupt):
        resumed.fit(x, y, batch_size=8, epochs=6, verbose=0, seed=3,
                    callbacks=[BackupAndRestore(backup, save_freq=save_freq), _Interrupt(2)])
    assert sorted(os.listdir(backup)) == ["latest.weights.h5", "training_metadata.json"]
    fresh, _, _ = _dense(optimizer)  # a new process: the model as it was, the backup on disk
    rest = fresh.fit(x, y, batch_size=8, epochs=6, verbose=0, seed=3,
                     callbacks=[BackupAndRestore(backup, save_freq=save_freq)]).history
    assert not os.path.exists(backup)  # deleted when fit ends
    if save_freq != "epoch":
        # The last backup was in the third epoch, which runs again from its start with the
        # weights of that batch, as in Keras: not the uninterrupted run's.
        assert len(rest["loss"]) == 4
        return
    assert rest["loss"] == h["loss"][3:]  # resumed after the third epoch, as if never stopped
    for a, b in zip(whole.get_weights(), fresh.get_weights()):
        np.testing.assert_array_equal(a, b)
    # the optimizer's state too: one more step moves both alike
    np.testing.assert_array_equal(whole.train_on_batch(x[:8], y[:8]),
                                  fresh.train_on_batch(x[:8], y[:8]))
    for a, b in zip(whole.get_weights(), fresh.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_damaged_backup_falls_back_to_the_one_before(tmp_path):
    m, x, y = _dense("adam")
    backup = tmp_path / "b"
    with pytest.raises(KeyboardInterrupt):
        m.fit(x, y, batch_size=8, epochs=6, verbose=0,
              callbacks=[BackupAndRestore(str(backup), double_checkpoint=True), _Interrupt(2)])
    (backup / "latest.weights.h5").write_bytes(b"not HDF5")
    m2, _, _ = _dense("adam")
    h = m2.fit(x, y, batch_size=8, epochs=6, verbose=0,
               callbacks=[BackupAndRestore(str(backup), double_checkpoint=True)]).history
    assert len(h["loss"]) == 4  # from the backup after the second epoch
    m3, _, _ = _dense("adam")
    backup.mkdir()
    (backup / "training_metadata.json").write_text('{"epoch": -3}')
    with pytest.raises(ValueError, match="has no epoch"):
        m3.fit(x, y, epochs=2, verbose=0, callbacks=[BackupAndRestore(str(backup))])


def test_backups_resume_across_keras_and_kbackend(tmp_path):
    keras = _keras()
    x, y = FIXTURES.arrays("mlp", "x"), FIXTURES.arrays("mlp", "y")
    ours = str(tmp_path / "ours")
    model, _, _ = _mlp()
    with pytest.raises(KeyboardInterrupt):
        model.fit(x, y, batch_size=8, epochs=5, verbose=0,
                  callbacks=[BackupAndRestore(ours), _Interrupt(1)])
    # Keras 3 resumes from kbackend's backup: the weights and the epoch.
    k = keras.saving.load_model(FIXTURES.path("mlp.keras"))
    restore = keras.callbacks.BackupAndRestore(ours)
    restore.set_model(k)
    restore.on_train_begin()
    assert k._initial_epoch == 2
    for a, b in zip(model.get_weights(), k.get_weights()):
        np.testing.assert_array_equal(a, b)
    # kbackend resumes from Keras' backup (fit to the epoch it reached: nothing left to run).
    theirs = str(tmp_path / "theirs")

    class Stop(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 2:
                raise KeyboardInterrupt("killed")

    k2 = keras.saving.load_model(FIXTURES.path("mlp.keras"))
    with pytest.raises(KeyboardInterrupt):
        k2.fit(x[0], y[0], batch_size=8, epochs=5, verbose=0,
               callbacks=[keras.callbacks.BackupAndRestore(theirs), Stop()])
    resumed, _, _ = _mlp()
    h = resumed.fit(x, y, batch_size=8, epochs=3, verbose=0,
                    callbacks=[BackupAndRestore(theirs, delete_checkpoint=False)]).history
    assert h["loss"] == []
    for a, b in zip(k2.get_weights(), resumed.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_learning_rate_scheduler_sets_what_keras_sets():
    keras = _keras()
    from kbackend.callbacks import LearningRateScheduler

    def schedule(epoch, rate):
        return rate if epoch < 2 else rate * 0.5

    model, x, y = _mlp()
    h = model.fit(x, y, batch_size=8, epochs=5, verbose=0,
                  callbacks=[LearningRateScheduler(schedule)]).history
    k = keras.saving.load_model(FIXTURES.path("mlp.keras"))
    theirs = keras.callbacks.LearningRateScheduler(schedule)
    theirs.set_model(k)
    rates = []
    for epoch in range(5):
        theirs.on_epoch_begin(epoch)
        logs = {"loss": 1.0}  # (Keras replaces empty logs with a dict of its own)
        theirs.on_epoch_end(epoch, logs)
        rates.append(logs["learning_rate"])
    assert h["learning_rate"] == rates
    assert model.optimizer.learning_rate == rates[-1]


def test_the_learning_rate_reads_and_sets():
    model, x, y = _mlp()
    model.optimizer.learning_rate = 0.25
    assert model.optimizer.learning_rate == np.float32(0.25)
    with pytest.raises(ValueError, match="finite number >= 0"):
        model.optimizer.learning_rate = float("nan")
    scheduled = models.load_model(FIXTURES.path("exponential_decay.keras"))
    assert scheduled.optimizer.learning_rate > 0
    with pytest.raises(ValueError, match="not settable"):
        scheduled.optimizer.learning_rate = 0.1
    with pytest.raises(ValueError, match="not compiled"):
        models.model_from_json(DENSE2).optimizer.learning_rate


def _events(folder):
    """{tag: [(step, value)]} of the event files in folder, as TensorBoard reads them."""
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    tensor_util = pytest.importorskip("tensorboard.util.tensor_util")
    ea = accumulator.EventAccumulator(str(folder), size_guidance={accumulator.TENSORS: 0})
    ea.Reload()
    return {tag: [(e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
                  for e in ea.Tensors(tag)] for tag in ea.Tags()["tensors"]}


def test_tensorboard_writes_what_keras_writes(tmp_path):
    pytest.importorskip("tensorboard")
    from kbackend.callbacks import TensorBoard
    model, x, y = _mlp()  # 24 training samples: 3 batches of 8 an epoch
    logs = tmp_path / "logs"
    h = model.fit(x, y, batch_size=8, epochs=3, verbose=0, validation_split=0.25,
                  # first, so that it logs the rate before ReduceLROnPlateau changes it (as
                  # Keras' TensorBoard reads the optimizer's rate when its turn comes)
                  callbacks=[TensorBoard(str(logs), update_freq=2, write_steps_per_second=True),
                             ReduceLROnPlateau(monitor="loss", patience=0, min_delta=10)]).history
    train, validation = _events(logs / "train"), _events(logs / "validation")
    f32 = np.float32
    for name in ("loss", "accuracy", "learning_rate"):
        assert train["epoch_" + name] == [(e, float(f32(v))) for e, v in enumerate(h[name])]
    for name in ("loss", "accuracy"):
        assert validation["epoch_" + name] == [(e, float(f32(v)))
                                                for e, v in enumerate(h["val_" + name])]
        # at the optimizer's iterations after each epoch (the archive's count went on from
        # its own training)
        evaluation = validation[f"evaluation_{name}_vs_iterations"]
        start = evaluation[0][0] - 3
        assert start >= 0 and evaluation == [
            (start + 3 * (e + 1), float(f32(v))) for e, v in enumerate(h["val_" + name])]
    # every second batch of the whole fit (steps 2, 4, ..., 8), their running values
    assert [s for s, _ in train["batch_loss"]] == [2, 4, 6, 8]
    assert [s for s, _ in train["batch_steps_per_second"]] == [2, 4, 6, 8]
    assert len(train["epoch_steps_per_second"]) == 3
    assert all(v > 0 for _, v in train["epoch_steps_per_second"])
    # step 6 ends the second epoch: its running value is that epoch's
    assert dict(train["batch_loss"])[6] == float(f32(h["loss"][1]))


def test_tensorboard_refuses_what_it_does_not_write(tmp_path):
    from kbackend.callbacks import TensorBoard
    model, x, y = _mlp()
    for bad, error, message in [(dict(histogram_freq=1), NotImplementedError, "histogram_freq"),
                                (dict(write_images=True), NotImplementedError, "write_images"),
                                (dict(update_freq="often"), ValueError, "update_freq 'often'")]:
        with pytest.raises(error, match=message):
            model.fit(x, y, epochs=1, verbose=0,
                      callbacks=[TensorBoard(str(tmp_path), **bad)])
