"""Keras 2.2.4's activations and the backend's relu/elu on kbackend equal the TensorFlow
backend's formulas (written here in NumPy, float64) within float32 tolerance."""
import numpy as np
import pytest

keras = pytest.importorskip("keras")
from keras import activations  # noqa: E402
from keras import backend as K  # noqa: E402

X = np.concatenate([np.linspace(-6, 6, 49), [-1e-3, 0.0, 1e-3, 0.1999, 0.2, 0.2001]])


def _np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * (np.exp(x) - 1))


def _np_relu(x, alpha=0.0, max_value=None, threshold=0.0):
    negative = np.maximum(-x + threshold, 0) if alpha != 0 else 0
    y = x * (x > threshold) if threshold != 0 else np.maximum(x, 0)
    if max_value is not None:
        y = np.clip(y, 0, max_value)
    return y - alpha * negative


REFERENCE = {
    "selu": lambda x: 1.0507009873554805 * _np_elu(x, 1.6732632423543772),
    "hard_sigmoid": lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    "softsign": lambda x: x / (1 + np.abs(x)),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "elu": _np_elu,
    "relu": _np_relu,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "linear": lambda x: x,
    "softmax": lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum(),
}


def _eval(fn):
    return K.eval(fn(K.constant(X.astype("float32")[None])))[0]


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_activation(name):
    np.testing.assert_allclose(_eval(activations.get(name)), REFERENCE[name](X), rtol=2e-6,
                               atol=2e-6)


@pytest.mark.parametrize("alpha,max_value,threshold", [
    (0.0, None, 0.0), (0.1, None, 0.0), (0.0, 6.0, 0.0), (0.0, 2.5, 0.0), (0.3, 2.5, 0.0),
    (0.0, None, 0.2), (0.2, 4.0, 0.2), (0.2, None, -1.0)])
def test_relu_arguments(alpha, max_value, threshold):
    got = _eval(lambda x: K.relu(x, alpha=alpha, max_value=max_value, threshold=threshold))
    np.testing.assert_allclose(got, _np_relu(X, alpha, max_value, threshold), rtol=2e-6,
                               atol=2e-6)


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_elu_alpha(alpha):
    np.testing.assert_allclose(_eval(lambda x: K.elu(x, alpha)), _np_elu(X, alpha), rtol=2e-6,
                               atol=2e-6)
