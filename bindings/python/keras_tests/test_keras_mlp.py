"""Unmodified Keras 2.2.4 trains on kbackend (KERAS_BACKEND=kbackend.keras_backend)."""
import os

import numpy as np
import pytest

keras = pytest.importorskip("keras")
K = keras.backend


def test_backend_is_kbackend():
    assert K.backend() == "kbackend.keras_backend"
    assert K.floatx() == "float32"


def _check_fit_evaluate_predict(model, history, x_test, y_test, tmp_path, min_acc):
    val_loss = history.history["val_loss"][-1]
    val_acc = history.history["val_acc"][-1]
    assert val_acc > min_acc, history.history
    # evaluate / predict agree with fit's validation metrics (the same weights, test phase)
    loss, acc = model.evaluate(x_test, y_test, batch_size=64, verbose=0)
    assert abs(loss - val_loss) < 1e-4 and abs(acc - val_acc) < 1e-6
    probs = model.predict(x_test, batch_size=64)
    assert probs.shape == y_test.shape
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    pred_acc = np.mean(np.argmax(probs, 1) == np.argmax(y_test, 1))
    assert abs(pred_acc - acc) < 1e-6
    p = np.clip(probs, K.epsilon(), 1 - K.epsilon())
    np.testing.assert_allclose(-np.mean(np.sum(y_test * np.log(p), axis=1)), loss, rtol=1e-4)
    # save_weights / load_weights round-trip through HDF5
    path = os.path.join(str(tmp_path), "weights.h5")
    model.save_weights(path)
    saved = model.get_weights()
    model.set_weights([np.zeros_like(w) for w in saved])
    assert not np.allclose(model.predict(x_test[:8]), probs[:8])
    model.load_weights(path)
    for a, b in zip(model.get_weights(), saved):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(model.predict(x_test, batch_size=64), probs)
    return acc


def test_mlp_dense_dropout_sgd(digits, tmp_path):
    from keras.layers import Dense, Dropout
    from keras.models import Sequential
    from keras.optimizers import SGD

    x_train, y_train, x_test, y_test = digits
    np.random.seed(1)
    model = Sequential([Dense(64, activation="relu", input_shape=(64,)), Dropout(0.2),
                        Dense(10, activation="softmax")])
    model.compile(optimizer=SGD(lr=0.1, momentum=0.9, nesterov=True),
                  loss="categorical_crossentropy", metrics=["accuracy"])
    assert model.uses_learning_phase  # Dropout: Keras feeds the learning phase
    history = model.fit(x_train, y_train, epochs=15, batch_size=32, verbose=0,
                        validation_data=(x_test, y_test))
    assert history.history["loss"][-1] < history.history["loss"][0]
    acc = _check_fit_evaluate_predict(model, history, x_test, y_test, tmp_path, 0.9)
    print("MLP test accuracy: %.4f" % acc)


def test_cnn_conv_pool_batchnorm_adam(digits, tmp_path):
    from keras.layers import BatchNormalization, Conv2D, Dense, Flatten, MaxPooling2D
    from keras.models import Sequential
    from keras.optimizers import Adam

    x_train, y_train, x_test, y_test = digits
    x_train, x_test = x_train.reshape(-1, 8, 8, 1), x_test.reshape(-1, 8, 8, 1)
    np.random.seed(2)
    model = Sequential([
        Conv2D(16, (3, 3), padding="same", activation="relu", input_shape=(8, 8, 1)),
        BatchNormalization(),
        MaxPooling2D((2, 2)),
        Conv2D(32, (3, 3), activation="relu"),
        Flatten(),
        Dense(10, activation="softmax")])
    model.compile(optimizer=Adam(lr=0.005), loss="categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x_train, y_train, epochs=8, batch_size=32, verbose=0,
                        validation_data=(x_test, y_test))
    assert history.history["loss"][-1] < history.history["loss"][0]
    acc = _check_fit_evaluate_predict(model, history, x_test, y_test, tmp_path, 0.9)
    print("CNN test accuracy: %.4f" % acc)
