"""bfloat16 from Python: NumPy has no bfloat16 of its own, so values go in and out as ml_dtypes'
bfloat16 arrays when ml_dtypes is installed; without it, a clear TypeError where a NumPy value
is needed, and everything that stays in the graph works."""
import sys

import numpy as np
import pytest

import kbackend as K


def test_graph_values_without_numpy_bfloat16(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # as if it were not installed
    x = K.constant(np.array([1.0, 2.5, 1 + 2.0 ** -8], np.float32))
    b = K.cast(x, "bfloat16")
    assert K.dtype(b) == "bfloat16"
    y = b * 3 + 1  # Python numbers take the tensor's dtype, rounded by the library
    assert K.dtype(y) == "bfloat16"
    np.testing.assert_array_equal(K.eval(K.cast(y, "float32")), [4.0, 8.5, 4.0])
    with pytest.raises(TypeError, match="ml_dtypes"):
        K.eval(b)
    p = K.placeholder(shape=(None, 3), dtype="bfloat16")
    f = K.function([p], [K.cast(K.sum(p, axis=1), "float32")])  # built without ml_dtypes
    with pytest.raises(TypeError, match="ml_dtypes"):
        f([np.ones((2, 3), np.float32)])


def test_values_through_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    data = np.array([[1.0, -2.0, 0.1], [3.0, 1e-3, 65504.0]], np.float32)
    v = K.variable(data.astype(bf16), dtype=bf16)  # Keras: no dtype means floatx
    assert K.dtype(v) == "bfloat16"
    got = K.eval(v)
    assert got.dtype == bf16
    np.testing.assert_array_equal(got.view(np.uint16), data.astype(bf16).view(np.uint16))
    # Fed to a placeholder: float32 arrays are converted (rounded) by NumPy's ml_dtypes cast.
    p = K.placeholder(shape=(None, 3), dtype="bfloat16")
    f = K.function([p], [K.dot(p, K.transpose(v))])
    out = f([data])[0]
    assert out.dtype == bf16
    exact = data.astype(bf16).astype(np.float64) @ data.astype(bf16).astype(np.float64).T
    np.testing.assert_allclose(out.astype(np.float64), exact, rtol=2 ** -7)
    K.set_value(v, np.zeros((2, 3), np.float32))
    assert not K.eval(v).astype(np.float32).any()
    c = K.constant(np.array([0.5, 1.5], np.float32), dtype="bfloat16")
    assert K.dtype(c) == "bfloat16"
    np.testing.assert_array_equal(K.eval(c).astype(np.float32), [0.5, 1.5])
