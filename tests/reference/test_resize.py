"""resize_images (nearest and bilinear), resize_volumes and parse_interpolation
(docs/keras_semantics.md section 8) against NumPy references.

Forward values in float32 and float64, both data formats, with unknown dimensions; gradients by
central finite differences in float64 (bilinear resizing returns float32, so its gradient is
checked against the NumPy adjoint) and second derivatives; bad inputs, whose messages must start
with the Keras function's name.
"""
import ctypes

import numpy as np
import pytest

import kb
from kb import const, error_of, fd_check, op, reduce_sum, weighted
from kb_conv import FIRST, fmt_in, fmt_out, LAST, randn, to_first, to_last
from kb_layers import FORMAT, H, enum

F32, F64 = kb.F32, kb.F64
NEAREST, BILINEAR = 0, 1
INTERP = {"nearest": NEAREST, "bilinear": BILINEAR}

lib = kb.lib


def resize_images(x, hf, wf, data_format, interpolation="nearest"):
    return op("resize_images", x, hf, wf, enum(FORMAT, data_format), enum(INTERP, interpolation))


def resize_volumes(x, df_, hf, wf, data_format):
    return op("resize_volumes", x, df_, hf, wf, enum(FORMAT, data_format))


def bilinear_matrix(n, f):
    """The legacy TF resize_bilinear along one axis as a (n*f, n) matrix:
    s = o*n/(n*f), lo = floor(s), hi = min(lo+1, n-1), w = s - lo."""
    m = np.zeros((n * f, n))
    for o in range(n * f):
        s = o / f
        lo = int(np.floor(s))
        hi = min(lo + 1, n - 1)
        w = s - lo
        m[o, lo] += 1 - w
        m[o, hi] += w
    return m


def nearest_matrix(n, f):
    m = np.zeros((n * f, n))
    for o in range(n * f):
        m[o, o // f] = 1
    return m


def np_resize(x, factors, interpolation):
    """x channels-last (N, spatial..., C)."""
    y = np.asarray(x, np.float64)
    for ax, f in enumerate(factors):
        n = x.shape[1 + ax]
        m = bilinear_matrix(n, f) if interpolation == "bilinear" else nearest_matrix(n, f)
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, 1 + ax, 0), axes=(1, 0)), 0, 1 + ax)
    return y


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("factors", [(2, 2), (2, 3), (1, 1), (3, 1)])
def test_resize_images_nearest(factors, df, dt, mode, rng):
    x = randn(rng, (2, 4, 5, 3), dt)
    r = kb.ev(lambda a: resize_images(a, *factors, df, "nearest"), fmt_in(x, df), mode=mode)
    expected = np.repeat(np.repeat(x, factors[0], axis=1), factors[1], axis=2)
    assert r.dtype == x.dtype
    np.testing.assert_array_equal(fmt_out(r, df), expected)
    kb.assert_close(fmt_out(r, df), np_resize(x, factors, "nearest"), dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("factors", [(2, 2), (2, 3), (1, 1), (3, 1), (4, 2)])
def test_resize_images_bilinear(factors, df, dt, mode, rng):
    x = randn(rng, (2, 4, 5, 3), dt)
    r = kb.ev(lambda a: resize_images(a, *factors, df, "bilinear"), fmt_in(x, df), mode=mode)
    assert r.dtype == np.float32  # TF's resize_bilinear returns float32 for any input
    expected = np_resize(x.astype(np.float32), factors, "bilinear")
    np.testing.assert_allclose(fmt_out(r, df), expected, rtol=1e-5, atol=1e-6)


def test_resize_bilinear_factor_two_formula():
    a = np.array([1.0, 3.0, 7.0, 8.0])
    x = a.reshape(1, 1, 4, 1)
    r = kb.ev(lambda t: resize_images(t, 1, 2, LAST, "bilinear"), x)
    # [a0, (a0+a1)/2, a1, ..., a_{n-1}, a_{n-1}]
    np.testing.assert_array_equal(r.ravel(), [1, 2, 3, 5, 7, 7.5, 8, 8])
    xi = np.arange(6, dtype=np.int32).reshape(1, 2, 3, 1)
    r = kb.ev(lambda t: resize_images(t, 2, 2, FIRST, "bilinear"), to_first(xi))
    assert r.dtype == np.float32
    np.testing.assert_allclose(to_last(r), np_resize(xi, (2, 2), "bilinear"), rtol=1e-6)
    r = kb.ev(lambda t: resize_images(t, 2, 1, LAST, "nearest"), xi)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, np.repeat(xi, 2, axis=1))


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("factors", [(2, 2, 2), (1, 3, 2)])
def test_resize_volumes(factors, df, dt, mode, rng):
    x = randn(rng, (2, 3, 2, 4, 3), dt)
    r = kb.ev(lambda a: resize_volumes(a, *factors, df), fmt_in(x, df), mode=mode)
    expected = x
    for ax, f in enumerate(factors):
        expected = np.repeat(expected, f, axis=1 + ax)
    assert r.dtype == x.dtype
    np.testing.assert_array_equal(fmt_out(r, df), expected)


def test_resize_shapes_and_unknown_dims(rng):
    ph = kb.placeholder([-1, 4, -1, 3], F64)
    assert resize_images(ph, 2, 3, LAST).shape == (None, 8, None, 3)
    y = resize_images(ph, 2, 3, LAST, "bilinear")
    assert y.shape == (None, 8, None, 3) and y.dtype == F32
    f = kb.Function([ph], [y])
    for shape in [(2, 4, 5, 3), (1, 4, 1, 3)]:
        x = rng.standard_normal(shape)
        np.testing.assert_allclose(f(x)[0], np_resize(x.astype(np.float32), (2, 3), "bilinear"),
                                   rtol=1e-5, atol=1e-6)
    ph = kb.placeholder([-1, 3, 2, 4, 5], F32)
    assert resize_volumes(ph, 2, 3, 1, FIRST).shape == (None, 3, 4, 12, 5)


R = np.random.default_rng(7)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_resize_nearest_gradients(df):
    x = R.standard_normal((2, 3, 2, 2))
    fd_check(lambda a: resize_images(a, 2, 3, df, "nearest"), fmt_in(x, df), nonlinear=True)
    x = R.standard_normal((1, 2, 2, 3, 2))
    fd_check(lambda a: resize_volumes(a, 2, 1, 2, df), fmt_in(x, df), nonlinear=True)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("dt_in", [F32, F64])
def test_resize_bilinear_gradient(df, dt_in):
    """Bilinear resizing is linear: the gradient of sum(resize(x) * w) is the NumPy adjoint
    M_h^T w M_w (the result is float32; the gradient has x's dtype)."""
    x = R.standard_normal((2, 3, 4, 2)).astype(kb.NP_OF[dt_in])
    ph = kb.placeholder(list(fmt_in(x, df).shape), dt_in)
    y = resize_images(ph, 3, 2, df, "bilinear")
    w = R.standard_normal((2, 9, 8, 2)).astype(np.float32)
    loss = reduce_sum(op("multiply", y, const(fmt_in(w, df))))
    g = kb.Function([ph], kb.gradients(loss, [ph]))(fmt_in(x, df))[0]
    assert g.dtype == x.dtype
    mh, mw = bilinear_matrix(3, 3), bilinear_matrix(4, 2)
    expected = np.einsum("oh,nopc,pw->nhwc", mh, w.astype(np.float64), mw)
    np.testing.assert_allclose(fmt_out(g, df), expected, rtol=1e-5, atol=1e-5)
    # the adjoint identity <resize(u), v> = <u, resize^T(v)> with the kernel's own numbers
    u = R.standard_normal(x.shape).astype(np.float32)
    ru = kb.ev(lambda a: resize_images(a, 3, 2, df, "bilinear"), fmt_in(u, df))
    np.testing.assert_allclose(np.sum(fmt_out(ru, df).astype(np.float64) * w),
                               np.sum(u * fmt_out(g, df)), rtol=1e-4)


def test_resize_second_order():
    """The gradient of the gradient (ResizeGrad's own gradient is Resize)."""
    x = R.standard_normal((1, 2, 3, 2))
    ph = kb.placeholder(list(x.shape), F64)
    y = op("tanh", resize_images(ph, 2, 2, LAST, "nearest"))
    g = kb.gradients(weighted(y, 1), [ph])[0]
    l2 = weighted(g, 2)
    g2 = kb.gradients(l2, [ph])[0]
    res = kb.Function([ph], [g2])(x)[0]
    l2_f = kb.Function([ph], [l2])
    fd = np.zeros_like(x)
    for j in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp.flat[j] += H
        xm.flat[j] -= H
        fd.flat[j] = (l2_f(xp)[0] - l2_f(xm)[0]) / (2 * H)
    np.testing.assert_allclose(res, fd, rtol=1e-5, atol=1e-7)


def test_parse_interpolation():
    v = ctypes.c_int32()
    for name, code in [("nearest", NEAREST), ("bilinear", BILINEAR), ("Bilinear", BILINEAR)]:
        kb.check(lib.kb_parse_interpolation(name.encode(), ctypes.byref(v)))
        assert v.value == code
    v.value = 77
    assert lib.kb_parse_interpolation(b"bicubic", ctypes.byref(v)) == 1
    assert kb.lib.kb_last_error_message().decode() == (
        "parse_interpolation: unknown interpolation 'bicubic'")
    assert v.value == 77
    assert lib.kb_parse_interpolation(None, ctypes.byref(v)) == 1
    assert lib.kb_parse_interpolation(b"nearest", None) == 1


def test_resize_bad_input():
    x4 = const(np.zeros((1, 2, 3, 4), np.float32))
    x5 = const(np.zeros((1, 2, 3, 4, 5), np.float32))
    xb = const(np.zeros((1, 2, 3, 4), np.bool_))
    cases = [
        ("resize_images", (x4, 2, 2, 0, 7), "interpolation should be one of"),
        ("resize_images", (x4, 2, 2, -1, 0), "data_format must be channels_last or"),
        ("resize_images", (x4, 2, 2, 3, 0), "unknown data_format 3"),
        ("resize_images", (x5, 2, 2, 0, 0), "x must have rank 4"),
        ("resize_images", (x4, 0, 2, 0, 0), "height_factor must be a positive integer"),
        ("resize_images", (x4, 2, -1, 1, 1), "width_factor must be a positive integer"),
        ("resize_images", (xb, 2, 2, 0, 0), "bool"),
        ("resize_images", (None, 2, 2, 0, 0), "x is NULL"),
        ("resize_volumes", (x5, 2, 2, 2, -1), "data_format must be channels_last or"),
        ("resize_volumes", (x5, 2, 2, 2, 4), "unknown data_format 4"),
        ("resize_volumes", (x4, 2, 2, 2, 0), "x must have rank 5"),
        ("resize_volumes", (x5, 2, 0, 2, 0), "height_factor must be a positive integer"),
    ]
    for name, args, text in cases:
        msg = error_of(name, *args)
        assert msg.startswith(name + ": "), msg
        assert text in msg, msg
