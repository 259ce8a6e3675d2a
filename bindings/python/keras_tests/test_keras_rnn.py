"""Unmodified Keras 2.2.4 trains recurrent models on kbackend: Embedding (masked) + LSTM with
RMSprop, GRU and SimpleRNN, on sequence tasks generated here."""
import numpy as np
import pytest

keras = pytest.importorskip("keras")
from keras_checks import check_fit_evaluate_predict, check_fit_loss_is_evaluate_loss  # noqa: E402

PATTERN = (1, 2)


def _token_sequences(n, max_len, vocab, seed):
    """n sequences of tokens 1..vocab-1 with lengths 4..max_len, zero-padded at the end; half of
    them (label 1) contain the bigram PATTERN somewhere, the others nowhere."""
    rng = np.random.RandomState(seed)
    x = np.zeros((n, max_len), np.int32)
    y = np.zeros((n, 1), np.float32)
    for i in range(n):
        length = rng.randint(4, max_len + 1)
        s = rng.randint(1, vocab, size=length)
        for j in range(length - 1):  # remove accidental occurrences
            if s[j] == PATTERN[0] and s[j + 1] == PATTERN[1]:
                s[j + 1] = rng.randint(3, vocab)
        if i % 2:
            p = rng.randint(0, length - 1)
            s[p:p + 2] = PATTERN
            y[i] = 1
        x[i, :length] = s
    return x, y


def _sign_sequences(n, steps, seed):
    """(n, steps, 1) sequences of +-1; label 1 when their sum is positive (steps is odd)."""
    rng = np.random.RandomState(seed)
    x = rng.choice([-1.0, 1.0], size=(n, steps, 1)).astype(np.float32)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.float32).reshape(-1, 1)
    return x, y


def test_embedding_lstm_rmsprop(tmp_path):
    from keras.layers import LSTM, Dense, Embedding
    from keras.models import Sequential
    from keras.optimizers import RMSprop

    max_len, vocab = 12, 10
    x, y = _token_sequences(1600, max_len, vocab, seed=0)
    x_train, y_train, x_test, y_test = x[:1200], y[:1200], x[1200:], y[1200:]

    def build():
        model = Sequential([Embedding(vocab, 16, input_length=max_len, mask_zero=True),
                            LSTM(24),
                            Dense(1, activation="sigmoid")])
        model.compile(optimizer=RMSprop(lr=0.01), loss="binary_crossentropy",
                      metrics=["accuracy"])
        return model

    np.random.seed(3)
    model = build()
    history = model.fit(x_train, y_train, epochs=10, batch_size=32, verbose=0,
                        validation_data=(x_test, y_test))
    acc = check_fit_evaluate_predict(model, build, history, x_test, y_test, tmp_path, 0.95,
                                     binary=True)
    check_fit_loss_is_evaluate_loss(model, x_train, y_train)
    # the mask: padding after the end of a sequence does not change its prediction
    longer = np.concatenate([x_test, np.zeros((len(x_test), 4), np.int32)], axis=1)
    model2 = Sequential([Embedding(vocab, 16, mask_zero=True), LSTM(24),
                         Dense(1, activation="sigmoid")])
    model2.set_weights(model.get_weights())
    np.testing.assert_allclose(model2.predict(longer), model.predict(x_test), rtol=1e-5,
                               atol=1e-6)
    print("Embedding+LSTM test accuracy: %.4f" % acc)


@pytest.mark.parametrize("layer,lr", [("GRU", 0.005), ("SimpleRNN", 0.002)])
def test_gru_and_simple_rnn(layer, lr, tmp_path):
    from keras import layers
    from keras.layers import Dense
    from keras.models import Sequential
    from keras.optimizers import Adam

    steps = 15
    x, y = _sign_sequences(1600, steps, seed=1)
    x_train, y_train, x_test, y_test = x[:1200], y[:1200], x[1200:], y[1200:]

    def build():
        model = Sequential([getattr(layers, layer)(16, input_shape=(steps, 1)),
                            Dense(1, activation="sigmoid")])
        model.compile(optimizer=Adam(lr=lr), loss="binary_crossentropy",
                      metrics=["accuracy"])
        return model

    np.random.seed(4)
    model = build()
    history = model.fit(x_train, y_train, epochs=12, batch_size=32, verbose=0,
                        validation_data=(x_test, y_test))
    acc = check_fit_evaluate_predict(model, build, history, x_test, y_test, tmp_path, 0.95,
                                     binary=True)
    check_fit_loss_is_evaluate_loss(model, x_train, y_train)
    print("%s test accuracy: %.4f" % (layer, acc))


def test_sequence_labelling_of_unknown_length(tmp_path):
    """LSTM(return_sequences) + TimeDistributed(Dense) over Input((None, 1)): at every step, is
    the running sum of the +-1 steps so far positive. Trained on sequences of 9 steps, tested
    on sequences of 15: the model's dims are unknown until each call."""
    from keras import layers
    from keras.models import Sequential
    from keras.optimizers import Adam

    def data(n, steps, seed):
        rng = np.random.RandomState(seed)
        x = rng.choice([-1.0, 1.0], size=(n, steps, 1)).astype(np.float32)
        return x, (np.cumsum(x, axis=1) > 0).astype(np.float32)

    x_train, y_train = data(1200, 9, 5)
    x_test, y_test = data(400, 15, 6)

    def build():
        model = Sequential([layers.LSTM(16, return_sequences=True, input_shape=(None, 1)),
                            layers.TimeDistributed(layers.Dense(1, activation="sigmoid"))])
        model.compile(optimizer=Adam(lr=0.01), loss="binary_crossentropy", metrics=["accuracy"])
        return model

    np.random.seed(7)
    model = build()
    assert model.output_shape == (None, None, 1)
    history = model.fit(x_train, y_train, epochs=12, batch_size=32, verbose=0,
                        validation_data=(x_test, y_test))
    acc = check_fit_evaluate_predict(model, build, history, x_test, y_test, tmp_path, 0.95,
                                     binary=True)
    check_fit_loss_is_evaluate_loss(model, x_train, y_train)
    print("sequence labelling (train 9 steps, test 15) accuracy: %.4f" % acc)
