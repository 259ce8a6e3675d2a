"""local_conv1d and local_conv2d (locally connected layers: unshared weights;
docs/keras_semantics.md section 13) against NumPy references.

Forward values in float32 and float64, both data formats and the default one, and shapes;
gradients by central finite differences in float64; bad inputs, whose messages must start with
the Keras function's name.
"""
import numpy as np
import pytest

import kb
from kb import const, error_of, i64, op
from kb_conv import FIRST, fmt_in, LAST, randn
from kb import fd_check
from kb_layers import FORMAT, enum, image_data_format

F32, F64 = kb.F32, kb.F64
lib = kb.lib


def tup(v):
    if v is None:
        return None, 0
    v = list(v)
    return i64(v), len(v)


def local_conv1d(x, k, kernel_size, strides, data_format=None):
    return op("local_conv1d", x, k, *tup(kernel_size), *tup(strides), enum(FORMAT, data_format))


def local_conv2d(x, k, kernel_size, strides, output_shape, data_format=None):
    return op("local_conv2d", x, k, *tup(kernel_size), *tup(strides), *tup(output_shape),
              enum(FORMAT, data_format))


def np_local_conv1d(x, k, ks, s):
    """Keras: out[b, i, f] = sum_{t, c} x[b, i*s + t, c] k[i, t*C + c, f]."""
    x, k = x.astype(np.float64), k.astype(np.float64)
    L = k.shape[0]
    out = np.zeros((x.shape[0], L, k.shape[2]))
    for i in range(L):
        out[:, i] = x[:, i * s:i * s + ks, :].reshape(x.shape[0], -1) @ k[i]
    return out


def np_local_conv2d(x, k, ks, st, oshape, df):
    """Patch features (p*kw + q)*C + c (channels_last) or c*kh*kw + p*kw + q (channels_first);
    output position i*cols + j."""
    x, k = x.astype(np.float64), k.astype(np.float64)
    R, Cc = oshape
    B, F = x.shape[0], k.shape[2]
    out = np.zeros((B, R, Cc, F))
    for i in range(R):
        for j in range(Cc):
            rows = slice(i * st[0], i * st[0] + ks[0])
            cols = slice(j * st[1], j * st[1] + ks[1])
            patch = x[:, :, rows, cols] if df == FIRST else x[:, rows, cols, :]
            out[:, i, j] = patch.reshape(B, -1) @ k[i * Cc + j]
    return np.ascontiguousarray(np.moveaxis(out, 3, 1)) if df == FIRST else out


def close(actual, expected, dt):
    assert actual.dtype == np.dtype(kb.NP_OF[dt])
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dt == F32:
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("df", [None, LAST, FIRST])
@pytest.mark.parametrize("steps,ks,s", [(9, 3, 1), (9, 3, 2), (10, 2, 3), (5, 1, 1), (6, 6, 1)])
def test_local_conv1d(steps, ks, s, df, dt, mode, rng):
    C, F = 3, 4
    L = (steps - ks) // s + 1
    x = randn(rng, (2, steps, C), dt)
    k = randn(rng, (L, ks * C, F), dt, 0.5)
    # data_format is ignored: the input is always (batch, steps, channels)
    # the kernel's shape must be known (Keras reads it): only x goes through a placeholder
    r = kb.ev(lambda a: local_conv1d(a, const(k), (ks,), (s,), df), x, mode=mode)
    close(r, np_local_conv1d(x, k, ks, s), dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("hw,ks,st", [((6, 7), (3, 2), (1, 1)), ((7, 8), (3, 3), (2, 3)),
                                      ((5, 5), (1, 1), (2, 2)), ((4, 6), (4, 2), (1, 2))])
def test_local_conv2d(hw, ks, st, df, dt, mode, rng):
    C, F = 3, 2
    oshape = ((hw[0] - ks[0]) // st[0] + 1, (hw[1] - ks[1]) // st[1] + 1)
    x = randn(rng, (2, *hw, C), dt)
    xin = fmt_in(x, df)
    k = randn(rng, (oshape[0] * oshape[1], ks[0] * ks[1] * C, F), dt, 0.5)
    r = kb.ev(lambda a: local_conv2d(a, const(k), ks, st, oshape, df), xin, mode=mode)
    close(r, np_local_conv2d(xin, k, ks, st, oshape, df), dt)


def test_local_conv2d_default_format(rng):
    x = rng.standard_normal((2, 3, 5, 4))  # channels_first data
    k = rng.standard_normal((3 * 2, 2 * 3 * 3, 2))
    old = image_data_format()
    try:
        kb.check(lib.kb_set_image_data_format(kb.CHANNELS_FIRST))
        r = kb.ev(lambda a, b: local_conv2d(a, b, (2, 3), (1, 1), (3, 2), None), x, k)
    finally:
        kb.check(lib.kb_set_image_data_format(old))
    close(r, np_local_conv2d(x, k, (2, 3), (1, 1), (3, 2), FIRST), F64)


def test_local_conv_shapes():
    ph = kb.placeholder([-1, 10, 3], F32)
    k = const(np.zeros((4, 9, 5), np.float32))
    assert local_conv1d(ph, k, (3,), (2,)).shape == (None, 4, 5)
    ph = kb.placeholder([-1, 3, 7, 8], F32)
    k = const(np.zeros((3 * 2, 3 * 3 * 3, 6), np.float32))
    assert local_conv2d(ph, k, (3, 3), (2, 3), (3, 2), FIRST).shape == (None, 6, 3, 2)
    ph = kb.placeholder([-1, 7, 8, 3], F32)
    assert local_conv2d(ph, k, (3, 3), (2, 3), (3, 2), LAST).shape == (None, 3, 2, 6)
    kp = kb.placeholder([-1, 27, 6], F32)
    assert "kernel's shape must be known" in error_of(
        "local_conv2d", ph, kp, *tup((3, 3)), *tup((2, 3)), *tup((3, 2)), 0)


R = np.random.default_rng(7)


def test_local_conv1d_gradient():
    x, k = R.standard_normal((2, 7, 2)), R.standard_normal((3, 6, 2)) * 0.5
    fd_check(lambda a, b: local_conv1d(a, b, (3,), (2,)), x, k, nonlinear=True)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_local_conv2d_gradient(df):
    x = R.standard_normal((2, 5, 4, 2))
    k = R.standard_normal((2 * 2, 3 * 2 * 2, 3)) * 0.5
    fd_check(lambda a, b: local_conv2d(a, b, (3, 2), (2, 2), (2, 2), df), fmt_in(x, df), k,
             nonlinear=True)


def test_local_conv_bad_input():
    x3 = const(np.zeros((2, 9, 3), np.float32))
    x4 = const(np.zeros((2, 6, 7, 3), np.float32))
    k1 = const(np.zeros((4, 9, 5), np.float32))
    k1d = const(np.zeros((4, 9, 5), np.float64))
    k2 = const(np.zeros((4 * 5, 3 * 3 * 3, 2), np.float32))
    cases = [
        ("local_conv1d", (x4, k1, *tup((3,)), *tup((2,)), 0), "inputs must have rank 3"),
        ("local_conv1d", (x3, x4, *tup((3,)), *tup((2,)), 0), "kernel must have rank 3"),
        ("local_conv1d", (x3, k1d, *tup((3,)), *tup((2,)), 0), "kernel is float64"),
        ("local_conv1d", (x3, k1, *tup((2,)), *tup((2,)), 0), "patch features"),
        ("local_conv1d", (x3, k1, *tup((3,)), *tup((3,)), 0), "need 12 input positions"),
        ("local_conv1d", (x3, k1, *tup((3, 3)), *tup((2,)), 0), "kernel_size must have 1"),
        ("local_conv1d", (x3, k1, *tup((3,)), *tup((0,)), 0), "strides must be positive"),
        ("local_conv1d", (x3, k1, None, 0, *tup((1,)), 0), "kernel_size is NULL"),
        ("local_conv1d", (x3, k1, *tup((3,)), *tup((2,)), 5), "unknown data_format 5"),
        ("local_conv1d", (None, k1, *tup((3,)), *tup((2,)), 0), "inputs is NULL"),
        ("local_conv2d", (x3, k2, *tup((3, 3)), *tup((1, 1)), *tup((4, 5)), 0),
         "inputs must have rank 4"),
        ("local_conv2d", (x4, k2, *tup((3, 3)), *tup((1, 1)), *tup((4, 4)), 0),
         "output positions"),
        ("local_conv2d", (x4, k2, *tup((3, 2)), *tup((1, 1)), *tup((4, 5)), 0), "patch features"),
        ("local_conv2d", (x4, k2, *tup((3, 3)), *tup((2, 1)), *tup((4, 5)), 0),
         "need 9 input positions"),
        ("local_conv2d", (x4, k2, *tup((3, 3)), *tup((1, 1)), *tup((20,)), 0),
         "output_shape must have 2"),
        ("local_conv2d", (x4, k2, *tup((3, 3)), *tup((1, 1)), None, 0, 0), "output_shape is NULL"),
        ("local_conv2d", (x4, k2, *tup((3, 3)), *tup((1, 1)), *tup((4, 5)), 9),
         "unknown data_format 9"),
        ("local_conv2d", (x4, k2, *tup((3, 3)), *tup((1, 1)), *tup((4, 5)), 1),
         "patch features"),  # channels_first: 6 channels
    ]
    for name, args, text in cases:
        msg = error_of(name, *args)
        assert msg.startswith(name + ": "), msg
        assert text in msg, msg
