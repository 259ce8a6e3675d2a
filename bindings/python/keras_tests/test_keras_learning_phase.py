"""The learning phase as the TensorFlow backend has it: dropout inside the recurrent layers
(every implementation mode, input and recurrent dropout), inside TimeDistributed and
Bidirectional. A function fed learning phase 0 computes test behaviour (deterministic, as
predict), 1 training behaviour (a new mask each call); the layers' outputs carry
_uses_learning_phase, so that Keras feeds the phase."""
import numpy as np
import pytest

keras = pytest.importorskip("keras")
from keras import backend as K  # noqa: E402
from keras import layers, models  # noqa: E402

X = np.random.RandomState(0).rand(4, 6, 3).astype("float32")


def _check_phases(model):
    assert getattr(model.output, "_uses_learning_phase", False)
    f = K.function([model.input, K.learning_phase()], [model.output])
    test, test_again = f([X, 0])[0], f([X, 0])[0]
    train, train_again = f([X, 1])[0], f([X, 1])[0]
    np.testing.assert_array_equal(test, test_again)
    np.testing.assert_allclose(model.predict(X), test, rtol=1e-6, atol=1e-7)
    assert not np.allclose(train, test) and not np.allclose(train, train_again)


@pytest.mark.parametrize("kind", ["dropout", "recurrent_dropout"])
@pytest.mark.parametrize("implementation", [1, 2])
@pytest.mark.parametrize("cls", ["SimpleRNN", "GRU", "LSTM"])
def test_recurrent_dropout_follows_the_phase(cls, implementation, kind):
    model = models.Sequential([getattr(layers, cls)(5, implementation=implementation,
                                                    input_shape=(6, 3), **{kind: 0.5})])
    _check_phases(model)
    model.compile("sgd", "mse")
    model.fit(X, np.zeros((4, 5)), epochs=2, verbose=0)
    _check_phases(model)


def test_bidirectional_with_dropout():
    _check_phases(models.Sequential([layers.Bidirectional(
        layers.LSTM(4, dropout=0.5, recurrent_dropout=0.5), input_shape=(6, 3))]))


def test_time_distributed_dropout():
    _check_phases(models.Sequential([layers.TimeDistributed(layers.Dropout(0.5),
                                                            input_shape=(6, 3))]))
