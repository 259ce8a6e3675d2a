"""Paddings, resizing, batch normalization, random tensors, dropout and local convolutions
(KERAS_SEMANTICS.md sections 8, 11, 13 and 14) against NumPy references.

Forward values in float32 and float64, both data formats; gradients by central finite differences
in float64 (bilinear resizing returns float32, so its gradient is checked against the NumPy
adjoint); random tensors by their moments over large samples, same seed -> same numbers,
successive calls -> new numbers; bad inputs, whose messages must start with the Keras function's
name.
"""
import ctypes
from ctypes import POINTER, c_char_p, c_double, c_int32, c_int64, c_size_t, c_void_p

import numpy as np
import pytest

import kb
from kb import E, I64P, OUT, S, T, const, error_of, i64, op

F32, F64 = kb.F32, kb.F64
LAST, FIRST = "channels_last", "channels_first"
FORMAT = {None: -1, LAST: kb.CHANNELS_LAST, FIRST: kb.CHANNELS_FIRST}
NEAREST, BILINEAR = 0, 1
INTERP = {"nearest": NEAREST, "bilinear": BILINEAR}

lib = kb.lib
_sig = {
    "kb_parse_interpolation": (S, [c_char_p, POINTER(c_int32)]),
    "kb_image_data_format": (S, [POINTER(c_int32)]),
    "kb_set_image_data_format": (S, [E]),
    "kb_temporal_padding": (S, [T, I64P, c_size_t, OUT]),
    "kb_spatial_2d_padding": (S, [T, I64P, c_size_t, E, OUT]),
    "kb_spatial_3d_padding": (S, [T, I64P, c_size_t, E, OUT]),
    "kb_resize_images": (S, [T, c_int64, c_int64, E, E, OUT]),
    "kb_resize_volumes": (S, [T, c_int64, c_int64, c_int64, E, OUT]),
    "kb_batch_normalization": (S, [T, T, T, T, T, c_int64, c_double, OUT]),
    "kb_normalize_batch_in_training": (S, [T, T, T, I64P, c_size_t, c_double, OUT, OUT, OUT]),
    "kb_random_normal": (S, [I64P, c_size_t, c_double, c_double, E, I64P, OUT]),
    "kb_truncated_normal": (S, [I64P, c_size_t, c_double, c_double, E, I64P, OUT]),
    "kb_random_binomial": (S, [I64P, c_size_t, c_double, E, I64P, OUT]),
    "kb_random_uniform_like": (S, [T, c_double, c_double, E, I64P, OUT]),
    "kb_random_normal_like": (S, [T, c_double, c_double, E, I64P, OUT]),
    "kb_truncated_normal_like": (S, [T, c_double, c_double, E, I64P, OUT]),
    "kb_random_binomial_like": (S, [T, c_double, E, I64P, OUT]),
    "kb_dropout": (S, [T, c_double, I64P, c_size_t, I64P, OUT]),
    "kb_local_conv1d": (S, [T, T, I64P, c_size_t, I64P, c_size_t, E, OUT]),
    "kb_local_conv2d": (S, [T, T, I64P, c_size_t, I64P, c_size_t, I64P, c_size_t, E, OUT]),
}
for _n, (_res, _args) in _sig.items():
    getattr(lib, _n).restype = _res
    getattr(lib, _n).argtypes = _args


def enum(table, v):
    """A string option through its table; an int passes through (to test bad values)."""
    return v if isinstance(v, int) else table[v]


def flat(pairs):
    """((a, b), (c, d)) -> (array, 4); None -> (NULL, 0)."""
    if pairs is None:
        return None, 0
    v = [int(p) for pair in pairs for p in (pair if hasattr(pair, "__len__") else [pair])]
    return i64(v), len(v)


def to_first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


def to_last(a):
    return np.ascontiguousarray(np.moveaxis(a, 1, -1))


def fmt_in(a, df):
    return to_first(a) if df == FIRST else a


def fmt_out(a, df):
    return to_last(a) if df == FIRST else a


def randn(rng, shape, dt, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(kb.NP_OF[dt])


def image_data_format():
    f = c_int32()
    kb.check(lib.kb_image_data_format(ctypes.byref(f)))
    return f.value


def reduce_sum(t):
    return op("sum", t, None, 0, 0)


# ---- gradients by central finite differences (float64) ------------------------------------------
H = 1e-6


def weighted(y, seed):
    w = np.random.default_rng(seed).standard_normal(y.shape) + 0.3
    return reduce_sum(op("multiply", y, const(w.astype(kb.NP_OF[y.dtype]))))


def fd_check(build, *inputs, seed=0, rtol=1e-5, atol=1e-7, nonlinear=False):
    """Gradients of sum(build(...) * w) (of tanh(build(...)) with nonlinear) w.r.t. every input
    against central finite differences."""
    inputs = [np.asarray(a, np.float64) for a in inputs]
    phs = [kb.placeholder(list(a.shape), F64) for a in inputs]
    y = build(*phs)
    if nonlinear:
        y = op("tanh", y)
    loss = weighted(y, seed)
    grads = kb.gradients(loss, phs)
    res = kb.Function(phs, grads)(*inputs)
    loss_f = kb.Function(phs, [loss])
    for i, g in enumerate(res):
        assert g.shape == inputs[i].shape
        fd = np.zeros_like(inputs[i])
        for j in range(inputs[i].size):
            xp = [a.copy() for a in inputs]
            xm = [a.copy() for a in inputs]
            xp[i].flat[j] += H
            xm[i].flat[j] -= H
            fd.flat[j] = (loss_f(*xp)[0] - loss_f(*xm)[0]) / (2 * H)
        np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol, err_msg=f"input {i}")
    return res


# ==== 1. paddings ================================================================================
def temporal_padding(x, padding=None):
    return op("temporal_padding", x, *flat(padding))


def spatial_2d_padding(x, padding=None, data_format=None):
    return op("spatial_2d_padding", x, *flat(padding), enum(FORMAT, data_format))


def spatial_3d_padding(x, padding=None, data_format=None):
    return op("spatial_3d_padding", x, *flat(padding), enum(FORMAT, data_format))


def np_pad_spatial(x, pairs):
    """x channels-last; pairs per spatial axis."""
    return np.pad(x, [(0, 0)] + [tuple(p) for p in pairs] + [(0, 0)])


@pytest.mark.parametrize("padding", [None, (1, 1), (0, 3), (2, 0), (0, 0)])
def test_temporal_padding(padding, dt, mode, rng):
    x = randn(rng, (2, 5, 3), dt)
    r = kb.ev(lambda a: temporal_padding(a, padding), x, mode=mode)
    kb.assert_close(r, np_pad_spatial(x, [padding or (1, 1)]), dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", [None, ((1, 1), (1, 1)), ((0, 2), (3, 1)), ((2, 0), (0, 0))])
def test_spatial_2d_padding(padding, df, dt, mode, rng):
    x = randn(rng, (2, 4, 5, 3), dt)
    r = kb.ev(lambda a: spatial_2d_padding(a, padding, df), fmt_in(x, df), mode=mode)
    kb.assert_close(fmt_out(r, df), np_pad_spatial(x, padding or [(1, 1)] * 2), dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", [None, ((1, 2), (0, 1), (3, 0))])
def test_spatial_3d_padding(padding, df, dt, mode, rng):
    x = randn(rng, (2, 3, 4, 2, 3), dt)
    r = kb.ev(lambda a: spatial_3d_padding(a, padding, df), fmt_in(x, df), mode=mode)
    kb.assert_close(fmt_out(r, df), np_pad_spatial(x, padding or [(1, 1)] * 3), dt)


def test_padding_default_format_and_shapes(rng):
    x = randn(rng, (1, 3, 4, 2), F64)  # channels_first data
    old = image_data_format()
    try:
        kb.check(lib.kb_set_image_data_format(kb.CHANNELS_FIRST))
        r = kb.ev(lambda a: spatial_2d_padding(a, ((1, 0), (0, 2))), x)
    finally:
        kb.check(lib.kb_set_image_data_format(old))
    np.testing.assert_array_equal(r, np.pad(x, [(0, 0), (0, 0), (1, 0), (0, 2)]))
    ph = kb.placeholder([-1, -1, 3], F32)
    assert temporal_padding(ph, (2, 1)).shape == (None, None, 3)
    ph = kb.placeholder([-1, 5, 6, 3], F32)
    assert spatial_2d_padding(ph, ((1, 2), (3, 4)), LAST).shape == (None, 8, 13, 3)
    assert spatial_2d_padding(ph, ((1, 2), (3, 4)), FIRST).shape == (None, 5, 9, 10)
    ph = kb.placeholder([-1, 2, 3, 4, 5], F32)
    assert spatial_3d_padding(ph, None, FIRST).shape == (None, 2, 5, 6, 7)


def test_padding_other_dtypes(rng):
    x = rng.integers(-5, 5, (2, 3, 3)).astype(np.int32)
    r = kb.ev(lambda a: temporal_padding(a, (1, 2)), x)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, np.pad(x, [(0, 0), (1, 2), (0, 0)]))
    b = rng.random((1, 2, 2, 1)) > 0.5
    r = kb.ev(lambda a: spatial_2d_padding(a, ((1, 1), (0, 1)), LAST), b)
    np.testing.assert_array_equal(r, np.pad(b, [(0, 0), (1, 1), (0, 1), (0, 0)]))


def test_padding_unknown_dims(rng):
    ph = kb.placeholder([-1, -1, -1, 2], F64)
    y = spatial_2d_padding(ph, ((1, 2), (0, 1)), LAST)
    f = kb.Function([ph], [y])
    for shape in [(2, 3, 4, 2), (1, 1, 5, 2)]:
        x = rng.standard_normal(shape)
        np.testing.assert_array_equal(f(x)[0], np_pad_spatial(x, [(1, 2), (0, 1)]))
    g = kb.gradients(reduce_sum(op("square", y)), [ph])[0]
    x = rng.standard_normal((2, 3, 4, 2))
    np.testing.assert_allclose(kb.Function([ph], [g])(x)[0], 2 * x, rtol=1e-12)


R = np.random.default_rng(7)


def test_temporal_padding_gradient():
    fd_check(lambda a: temporal_padding(a, (2, 1)), R.standard_normal((2, 4, 3)), nonlinear=True)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_spatial_padding_gradients(df):
    x = R.standard_normal((2, 3, 4, 2))
    fd_check(lambda a: spatial_2d_padding(a, ((1, 0), (2, 3)), df), fmt_in(x, df), nonlinear=True)
    x = R.standard_normal((1, 2, 3, 2, 2))
    fd_check(lambda a: spatial_3d_padding(a, ((0, 1), (1, 1), (2, 0)), df), fmt_in(x, df),
             nonlinear=True)


def test_padding_bad_input(rng):
    x3, x4, x5 = (const(np.zeros(s, np.float32)) for s in [(1, 2, 3), (1, 2, 3, 4),
                                                              (1, 2, 3, 4, 5)])
    cases = [
        ("temporal_padding", (x4, *flat((1, 1))), "x must have rank 3"),
        ("temporal_padding", (x3, *flat((1, 1, 1))), "padding must be (left, right)"),
        ("temporal_padding", (x3, *flat((1, -1))), "non-negative"),
        ("temporal_padding", (None, *flat(None)), "x is NULL"),
        ("spatial_2d_padding", (x3, *flat(None), 0), "x must have rank 4"),
        ("spatial_2d_padding", (x4, *flat((1, 1)), 0), "padding must be ((top, bottom)"),
        ("spatial_2d_padding", (x4, *flat(((1, 1), (1, 1), (1, 1))), 0), "6 values"),
        ("spatial_2d_padding", (x4, *flat(None), 5), "unknown data_format 5"),
        ("spatial_3d_padding", (x4, *flat(None), 0), "x must have rank 5"),
        ("spatial_3d_padding", (x5, *flat(((1, 1), (1, 1))), 1), "6 values"),
        ("spatial_3d_padding", (x5, *flat(None), -7), "unknown data_format -7"),
    ]
    for name, args, text in cases:
        msg = error_of(name, *args)
        assert msg.startswith(name + ": "), msg
        assert text in msg, msg
    assert lib.kb_temporal_padding(x3, None, 2, None) != 0  # NULL with a count
    assert lib.kb_temporal_padding(x3, None, 0, None) != 0  # NULL out


# ==== 2. resizing ================================================================================
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


# ==== 3. batch normalization =====================================================================
FUSED_EPS = 1.001e-5


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    return op("batch_normalization", x, mean, var, beta, gamma, axis, epsilon)


def normalize_batch_in_training(x, gamma, beta, axes, epsilon=1e-3):
    outs = [c_void_p() for _ in range(3)]
    kb.check(lib.kb_normalize_batch_in_training(x, gamma, beta, i64(list(axes) or [0]),
                                                len(axes), epsilon,
                                                *[ctypes.byref(o) for o in outs]))
    return [kb.Tensor(o.value) for o in outs]


def np_bn(x, mean, var, beta, gamma, eps):
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def maybe_const(a):
    return None if a is None else const(a)


# (x shape, param shape, axis, fused)
BN_CASES = [((2, 3, 4, 5), (5,), -1, True), ((2, 3, 4, 5), (1, 1, 1, 5), 3, True),
            ((2, 3, 4, 5), (1, 3, 1, 1), 1, False), ((2, 3, 4, 5), (1, 1, 4, 5), -2, False),
            ((6, 4), (4,), -1, False), ((2, 5, 3), (3,), -1, False),
            ((2, 3, 2, 2, 4), (4,), -1, False), ((3, 4), (3, 1), 0, False)]


@pytest.mark.parametrize("xs,ps,axis,fused", BN_CASES)
@pytest.mark.parametrize("with_beta,with_gamma", [(True, True), (False, True), (True, False),
                                                  (False, False)])
def test_batch_normalization(xs, ps, axis, fused, with_beta, with_gamma, dt, rng):
    x = randn(rng, xs, dt)
    mean = randn(rng, ps, dt)
    var = (rng.random(ps) + 0.1).astype(kb.NP_OF[dt])
    beta = randn(rng, ps, dt) if with_beta else None
    gamma = randn(rng, ps, dt) if with_gamma else None
    for eps in [1e-3, 1e-8]:
        r = kb.run(batch_normalization(const(x), const(mean), const(var), maybe_const(beta),
                                       maybe_const(gamma), axis, eps))
        # the fused form flattens the parameters to (C,) and floors epsilon
        e = max(eps, FUSED_EPS) if fused else eps
        flat_ = (lambda a: None if a is None else a.reshape(-1)) if fused else (lambda a: a)
        expected = np_bn(x.astype(np.float64), flat_(mean), flat_(var), flat_(beta), flat_(gamma),
                         e)
        kb.assert_close(r, expected, dt, rtol=1e-5 if dt == F32 else 1e-12)


def test_batch_normalization_unknown_batch(rng):
    x = rng.standard_normal((3, 2, 2, 4))
    m, v = rng.standard_normal(4), rng.random(4) + 0.5
    ph = kb.placeholder([-1, 2, 2, 4], F64)
    y = batch_normalization(ph, const(m), const(v), None, None, -1, 1e-3)
    assert y.shape == (None, 2, 2, 4)
    np.testing.assert_allclose(kb.Function([ph], [y])(x)[0], np_bn(x, m, v, None, None, 1e-3),
                               rtol=1e-12)


def np_moments(x, axes):
    return x.mean(axis=tuple(axes)), x.var(axis=tuple(axes))


# (x shape, reduction axes, param shape, path)
NB_CASES = [((4, 3, 2, 5), [0, 1, 2], (5,), "fused"), ((4, 3, 2, 5), [0, 2, 3], (3,), "broadcast"),
            ((6, 4), [0], (4,), "regular"), ((3, 5, 4), [0, 1], (4,), "regular"),
            ((3, 5, 4), [1, 0], (4,), "regular"), ((3, 5, 4), [0, 2], (5,), "broadcast"),
            ((2, 3, 2, 2, 3), [0, 1, 2, 3], (3,), "regular"),
            ((4, 3, 2, 5), [0, 1], (2, 5), "broadcast"), ((4, 3, 2, 5), [2, 1, 0], (5,), "regular"),
            ((2, 3, 4, 5, 2), [0, 2, 3, 4], (3,), "broadcast")]


@pytest.mark.parametrize("xs,axes,ps,path", NB_CASES)
@pytest.mark.parametrize("with_params", [True, False])
def test_normalize_batch_in_training(xs, axes, ps, path, with_params, dt, rng):
    x = randn(rng, xs, dt)
    gamma = randn(rng, ps, dt) if with_params else None
    beta = randn(rng, ps, dt) if with_params else None
    eps = 1e-8
    normed, mean, var = normalize_batch_in_training(const(x), maybe_const(gamma),
                                                    maybe_const(beta), axes, eps)
    r_normed, r_mean, r_var = kb.run([normed, mean, var])
    x64 = x.astype(np.float64)
    m, v = np_moments(x64, axes)
    kept = tuple(d for i, d in enumerate(xs) if i not in axes)
    assert r_mean.shape == kept and r_var.shape == kept
    target = tuple(1 if i in axes else d for i, d in enumerate(xs))
    g = None if gamma is None else gamma.reshape(target)
    b = None if beta is None else beta.reshape(target)
    if path == "fused":
        n = np.prod([xs[i] for i in axes])
        expected = np_bn(x64, m, v, b, g, FUSED_EPS)
        v_ret = v * n / (n - 1)  # the returned variance is Bessel-corrected
    else:
        expected = np_bn(x64, m.reshape(target), v.reshape(target), b, g, eps)
        v_ret = v
    tol = dict(rtol=2e-4, atol=2e-4) if dt == F32 else dict(rtol=1e-10, atol=1e-10)
    kb.assert_close(r_normed, expected, dt, **tol)
    kb.assert_close(r_mean, m, dt, **tol)
    kb.assert_close(r_var, v_ret, dt, **tol)


def test_normalize_batch_fused_vs_broadcast_variance(rng):
    """On the CPU, 4-D channels_last returns the (N-1) variance, channels_first the N one."""
    x = rng.standard_normal((3, 4, 5, 2))
    _, _, v_last = normalize_batch_in_training(const(x), None, None, [0, 1, 2])
    _, _, v_first = normalize_batch_in_training(const(to_first(x)), None, None, [0, 2, 3])
    n = 3 * 4 * 5
    np.testing.assert_allclose(kb.run(v_last), x.var(axis=(0, 1, 2)) * n / (n - 1), rtol=1e-12)
    np.testing.assert_allclose(kb.run(v_first), x.var(axis=(0, 1, 2)), rtol=1e-12)


def test_normalize_batch_unknown_batch_and_single_sample(rng):
    ph = kb.placeholder([-1, 2, 3, 4], F64)
    normed, mean, var = normalize_batch_in_training(ph, None, None, [0, 1, 2], 1e-3)
    assert normed.shape == (None, 2, 3, 4) and mean.shape == (4,) and var.shape == (4,)
    f = kb.Function([ph], [normed, mean, var])
    for b in [5, 2]:
        x = rng.standard_normal((b, 2, 3, 4))
        n = b * 6
        r = f(x)
        np.testing.assert_allclose(r[1], x.mean(axis=(0, 1, 2)), rtol=1e-12)
        np.testing.assert_allclose(r[2], x.var(axis=(0, 1, 2)) * n / (n - 1), rtol=1e-12)
        np.testing.assert_allclose(r[0], np_bn(x, x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2)),
                                               None, None, 1e-3), rtol=1e-10, atol=1e-12)
    # N = 1: TF's correction factor is 1 (no division by zero)
    x = rng.standard_normal((1, 1, 1, 3))
    ph1 = kb.placeholder([1, 1, 1, 3], F64)
    _, _, var1 = normalize_batch_in_training(ph1, None, None, [0, 1, 2])
    np.testing.assert_array_equal(kb.Function([ph1], [var1])(x)[0], np.zeros(3))


def test_batch_normalization_gradients(rng):
    x = R.standard_normal((2, 3, 2, 3))
    ps = [R.standard_normal(3), R.random(3) + 0.5, R.standard_normal(3), R.standard_normal(3)]
    fd_check(lambda a, m, v, b, g: batch_normalization(a, m, v, b, g, -1, 1e-3), x, *ps,
             nonlinear=True)
    ps = [R.standard_normal((1, 3, 1, 1)), R.random((1, 3, 1, 1)) + 0.5,
          R.standard_normal((1, 3, 1, 1)), R.standard_normal((1, 3, 1, 1))]
    fd_check(lambda a, m, v, b, g: batch_normalization(a, m, v, b, g, 1, 1e-3), x, *ps,
             nonlinear=True)


@pytest.mark.parametrize("xs,axes,ps", [((3, 2, 2, 3), [0, 1, 2], (3,)),
                                        ((3, 3, 2, 2), [0, 2, 3], (3,)),
                                        ((5, 3), [0], (3,)), ((3, 4, 2), [0, 2], (4,))])
def test_normalize_batch_in_training_gradients(xs, axes, ps):
    x = R.standard_normal(xs)
    gamma, beta = R.standard_normal(ps), R.standard_normal(ps)

    def build(a, g, b):
        normed, mean, var = normalize_batch_in_training(a, g, b, axes, 1e-3)
        # every output contributes to the loss
        return op("add", reduce_sum(op("tanh", normed)),
                  op("add", reduce_sum(op("square", mean)), reduce_sum(op("sqrt", var))))

    fd_check(build, x, gamma, beta, rtol=1e-5, atol=1e-6)


def test_normalization_bad_input():
    x = const(np.zeros((2, 3, 4, 5), np.float32))
    xi = const(np.zeros((2, 3), np.int32))
    c5 = const(np.ones(5, np.float32))
    c3 = const(np.ones(3, np.float32))
    c5d = const(np.ones(5, np.float64))
    cases = [
        ("batch_normalization", (xi, c5, c5, None, None, -1, 1e-3), "x must be floating"),
        ("batch_normalization", (x, c5d, c5, None, None, -1, 1e-3), "mean is float64"),
        ("batch_normalization", (x, c3, c5, None, None, -1, 1e-3), "mean has shape (3,)"),
        ("batch_normalization", (x, c5, c5, c3, None, 3, 1e-3), "beta has shape (3,)"),
        ("batch_normalization", (x, c3, c3, None, None, 1, 1e-3), "cannot be broadcast"),
        ("batch_normalization", (x, None, c5, None, None, -1, 1e-3), "mean is NULL"),
        ("batch_normalization", (x, c5, c5, None, None, -1, -1.0), "epsilon"),
    ]
    for name, args, text in cases:
        msg = error_of(name, *args)
        assert msg.startswith(name + ": "), msg
        assert text in msg, msg
    name = "normalize_batch_in_training"
    outs = [c_void_p() for _ in range(3)]
    refs = [ctypes.byref(o) for o in outs]
    for args, text in [
            ((xi, None, None, i64([0]), 1, 1e-3), "x must be floating"),
            ((x, None, None, i64([0, 4]), 2, 1e-3), "out of range"),
            ((x, None, None, i64([1, 1]), 2, 1e-3), "repeated"),
            ((x, None, None, None, 0, 1e-3), "reduction_axes is NULL"),
            ((x, c3, None, i64([0, 1, 2]), 3, 1e-3), "gamma has shape (3,)"),
            ((x, None, c3, i64([0, 1]), 2, 1e-3), "beta has shape (3,)"),
            ((x, c5d, None, i64([0, 1, 2]), 3, 1e-3), "gamma is float64"),
            ((None, None, None, i64([0]), 1, 1e-3), "x is NULL")]:
        assert lib.kb_normalize_batch_in_training(*args, *refs) != 0
        msg = lib.kb_last_error_message().decode()
        assert msg.startswith(name + ": "), msg
        assert text in msg, msg
        assert all(o.value is None for o in outs)  # untouched on failure
    assert lib.kb_normalize_batch_in_training(x, None, None, i64([0]), 1, 1e-3, refs[0], None,
                                              refs[2]) != 0


# ==== 4. random tensors and dropout ==============================================================
def seed_arg(seed):
    return None if seed is None else ctypes.byref(c_int64(seed))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=kb.DEFAULT, seed=None):
    return op("random_uniform", i64(shape), len(shape), minval, maxval, dtype, seed_arg(seed))


def random_normal(shape, mean=0.0, stddev=1.0, dtype=kb.DEFAULT, seed=None):
    return op("random_normal", i64(shape), len(shape), mean, stddev, dtype, seed_arg(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=kb.DEFAULT, seed=None):
    return op("truncated_normal", i64(shape), len(shape), mean, stddev, dtype, seed_arg(seed))


def random_binomial(shape, p=0.0, dtype=kb.DEFAULT, seed=None):
    return op("random_binomial", i64(shape), len(shape), p, dtype, seed_arg(seed))


def dropout(x, level, noise_shape=None, seed=None):
    ns = None if noise_shape is None else i64(noise_shape)
    n = 0 if noise_shape is None else len(noise_shape)
    return op("dropout", x, level, ns, n, seed_arg(seed))


N_SAMPLE = (400, 500)  # 200k draws: the standard error of a mean is 0.0022 sigma


def test_random_uniform_moments(dt):
    r = kb.run(random_uniform(N_SAMPLE, -2.0, 3.0, dt, seed=11))
    assert r.dtype == kb.NP_OF[dt] and r.shape == N_SAMPLE
    assert r.min() >= -2.0 and r.max() < 3.0
    assert abs(r.mean() - 0.5) < 0.02
    assert abs(r.var() - 25 / 12) < 0.03
    # uniform over the range: every tenth holds about a tenth
    hist = np.histogram(r, bins=10, range=(-2, 3))[0] / r.size
    np.testing.assert_allclose(hist, 0.1, atol=0.005)
    u = kb.run(random_uniform((1000,), dtype=dt, seed=3))
    assert u.min() >= 0 and u.max() < 1


def test_random_normal_moments(dt):
    r = kb.run(random_normal(N_SAMPLE, 1.5, 2.0, dt, seed=12)).astype(np.float64)
    assert r.shape == N_SAMPLE
    z = (r - 1.5) / 2.0
    assert abs(z.mean()) < 0.015
    assert abs(z.std() - 1) < 0.01
    assert abs(np.mean(z ** 3)) < 0.03  # skewness
    assert abs(np.mean(z ** 4) - 3) < 0.08  # kurtosis
    assert abs(np.mean(np.abs(z) > 2) - 0.0455) < 0.003


def test_truncated_normal_moments(dt):
    r = kb.run(truncated_normal(N_SAMPLE, -1.0, 0.5, dt, seed=13)).astype(np.float64)
    z = (r + 1.0) / 0.5
    assert np.all(np.abs(z) <= 2 + 1e-6)  # re-drawn, within 2 stddev
    assert abs(z.mean()) < 0.015
    # the standard normal truncated to [-2, 2] has stddev 0.8796
    assert abs(z.std() - 0.87962) < 0.01
    # re-drawing (not clipping): no mass piles up at the bounds
    assert np.mean(np.abs(z) > 1.99) < 0.002


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 0.9, 1.0])
def test_random_binomial(p, dt):
    r = kb.run(random_binomial(N_SAMPLE, p, dt, seed=14))
    assert r.dtype == kb.NP_OF[dt]
    assert set(np.unique(r)) <= {0.0, 1.0}
    assert abs(r.mean() - p) < 0.01
    if p in (0.0, 1.0):
        assert np.all(r == p)


def test_random_default_dtype_and_float16():
    assert random_uniform((3,)).dtype == F32  # floatx
    kb.check(lib.kb_set_floatx(F64))
    assert random_normal((3,)).dtype == F64
    r = kb.run(random_uniform((10000,), -1.0, 1.0, kb.F16, seed=5))
    assert r.dtype == np.float16 and r.min() >= -1 and r.max() < 1
    assert abs(r.astype(np.float64).mean()) < 0.05
    r = kb.run(truncated_normal((10000,), 0.0, 1.0, kb.F16, seed=5))
    assert np.all(np.abs(r.astype(np.float64)) <= 2.001)


@pytest.mark.parametrize("make", [
    lambda seed: random_uniform((50, 7), -1.0, 2.0, F32, seed),
    lambda seed: random_normal((50, 7), 0.0, 1.0, F64, seed),
    lambda seed: truncated_normal((50, 7), 0.0, 1.0, F32, seed),
    lambda seed: random_binomial((50, 7), 0.5, F64, seed),
    lambda seed: dropout(const(np.ones((50, 7))), 0.5, None, seed)],
    ids=["uniform", "normal", "truncated", "binomial", "dropout"])
def test_random_streams(make):
    """Same seed -> the same sequence of numbers; successive calls -> new numbers."""
    a, b, c = make(42), make(42), make(43)
    fa, fb, fc = (kb.Function([], [t]) for t in (a, b, c))
    a1, a2, a3 = fa()[0], fa()[0], fa()[0]
    b1, b2 = fb()[0], fb()[0]
    assert not np.array_equal(a1, a2) and not np.array_equal(a2, a3)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(fc()[0], a1)
    # seed None: a random seed per node
    n1, n2 = kb.run(make(None)), kb.run(make(None))
    assert not np.array_equal(n1, n2)
    # eval of the same node draws anew each time
    assert not np.array_equal(kb.run(c), kb.run(c))


def test_random_not_merged_and_in_gradients():
    """Two random nodes with the same seed in one function are not merged (they are stateful,
    and their counters advance together); a random term adds no gradient."""
    a = random_uniform((1000,), seed=7)
    b = random_uniform((1000,), seed=7)
    ra, rb = kb.run([a, b])
    np.testing.assert_array_equal(ra, rb)  # same seed, same run number: same numbers
    d = op("subtract", a, a)
    np.testing.assert_array_equal(kb.run(d), np.zeros(1000, np.float32))  # one draw per node
    x = kb.placeholder([4], F64)
    noise = random_normal((4,), 0.0, 1.0, F64, seed=1)
    loss = reduce_sum(op("multiply", x, noise))
    g = kb.gradients(loss, [x])[0]
    # the gradient w.r.t. x is the noise drawn in the same call
    f = kb.Function([x], [g, noise])
    gv, nv = f(np.ones(4))
    np.testing.assert_array_equal(gv, nv)


@pytest.mark.parametrize("level", [0.1, 0.5, 0.8])
def test_dropout_values(level, dt, rng):
    x = randn(rng, (300, 400), dt) + 3
    y = dropout(const(x), level, seed=21)
    r = kb.run(y)
    retain = 1 - level
    kept = r != 0
    assert abs(kept.mean() - retain) < 0.01
    # kept entries are scaled by 1/retain
    expected = (x.astype(np.float64) / np.asarray(retain, x.dtype)).astype(x.dtype)
    kb.assert_close(r[kept], expected[kept], dt)
    assert abs(r.astype(np.float64).mean() - x.astype(np.float64).mean()) < 0.05


def test_dropout_noise_shape(rng):
    x = np.ones((200, 3, 5))
    r = kb.run(dropout(const(x), 0.4, (200, 1, 5), seed=3))
    kept = r != 0
    assert np.all(kept == kept[:, :1, :])  # the mask is shared along axis 1
    assert abs(kept.mean() - 0.6) < 0.05
    r = kb.run(dropout(const(x), 0.4, (-1, 3, 1), seed=3))
    assert np.all((r != 0) == (r[:, :, :1] != 0))
    r = kb.run(dropout(const(x), 0.4, (1, 5), seed=3))  # right-aligned, fewer dimensions
    assert np.all((r != 0) == (r[:1, :1, :] != 0))
    # unknown batch: -1 takes x's dimension when the function runs
    ph = kb.placeholder([-1, 3, 5], F64)
    y = dropout(ph, 0.5, (-1, 1, 5), seed=9)
    assert y.shape == (None, 3, 5)
    f = kb.Function([ph], [y])
    for b in [100, 7]:
        out = f(np.ones((b, 3, 5)))[0]
        assert out.shape == (b, 3, 5)
        assert np.all((out != 0) == (out[:, :1, :] != 0))
        assert set(np.unique(out)) <= {0.0, 2.0}
    y = dropout(ph, 0.5, None, seed=9)
    assert kb.Function([ph], [y])(np.ones((6, 3, 5)))[0].shape == (6, 3, 5)


def test_dropout_level_zero_and_gradient(rng):
    x = rng.standard_normal((4, 5))
    np.testing.assert_array_equal(kb.run(dropout(const(x), 0.0, seed=1)), x)
    ph = kb.placeholder([50, 40], F64)
    y = dropout(ph, 0.25, seed=5)
    w = rng.standard_normal((50, 40))
    loss = reduce_sum(op("multiply", y, const(w)))
    g = kb.gradients(loss, [ph])[0]
    xv = rng.standard_normal((50, 40)) + 5
    yv, gv = kb.Function([ph], [y, g])(xv)
    mask = yv != 0
    np.testing.assert_allclose(gv, w * mask / 0.75, rtol=1e-12)


@pytest.mark.parametrize("name,args", [("random_uniform", (-1.0, 2.0)),
                                       ("random_normal", (1.5, 2.0)),
                                       ("truncated_normal", (0.0, 1.0)),
                                       ("random_binomial", (0.3,))])
def test_random_like_takes_the_shape_when_the_function_runs(name, args):
    # Keras' random_normal(shape=K.shape(x)): the batch size is known only when the function runs
    x = kb.placeholder([-1, 7], F32)
    r = op(name + "_like", x, *args, F64, seed_arg(21))
    assert r.shape == (None, 7) and r.dtype == F64
    f = kb.Function([x], [r])
    a = f(np.zeros((5000, 7), np.float32))[0]
    assert a.shape == (5000, 7) and a.dtype == np.float64
    assert f(np.zeros((3, 7), np.float32))[0].shape == (3, 7)
    # the same numbers as the static-shape function with the same seed (same node, same run)
    static = op(name, i64([5000, 7]), 2, *args, F64, seed_arg(21))
    np.testing.assert_array_equal(kb.run(static), a)
    if name == "random_normal":
        assert abs(a.mean() - 1.5) < 0.05 and abs(a.std() - 2.0) < 0.05
    if name == "random_binomial":
        assert set(np.unique(a)) <= {0.0, 1.0} and abs(a.mean() - 0.3) < 0.02


def test_random_like_bad_input():
    x = const(np.ones((2, 3), np.float32))
    for name, args, text in [
            ("random_uniform_like", (None, 0.0, 1.0, -1, None), "like is NULL"),
            ("random_normal_like", (x, 0.0, float("nan"), -1, None), "must be finite"),
            ("truncated_normal_like", (x, 0.0, 1.0, kb.I32, None), "dtype must be floating"),
            ("random_binomial_like", (x, float("nan"), -1, None), "p is NaN"),
            ("random_normal_like", (kb.placeholder(None, F32, -1), 0.0, 1.0, -1, None),
             "rank of like is unknown")]:
        msg = error_of(name, *args)
        assert msg.startswith(name + ": "), msg
        assert text in msg, msg


def test_random_bad_input():
    x = const(np.ones((2, 3), np.float32))
    xi = const(np.ones((2, 3), np.int32))
    cases = [
        ("random_uniform", (i64([2, -1]), 2, 0.0, 1.0, -1, None), "negative or unknown"),
        ("random_uniform", (i64([2]), 1, 0.0, 1.0, kb.I32, None), "dtype must be floating"),
        ("random_uniform", (i64([2]), 1, 0.0, float("inf"), -1, None), "must be finite"),
        ("random_uniform", (None, 2, 0.0, 1.0, -1, None), "shape is NULL"),
        ("random_uniform", (i64([2]), 1, 0.0, 1.0, 99, None), "unknown dtype 99"),
        ("random_normal", (i64([2]), 1, 0.0, 1.0, kb.BOOL, None), "dtype must be floating"),
        ("truncated_normal", (i64([-3]), 1, 0.0, 1.0, -1, None), "negative or unknown"),
        ("random_binomial", (i64([2]), 1, float("nan"), -1, None), "p is NaN"),
        ("random_binomial", (i64([2]), 1, 0.5, kb.I64, None), "dtype must be floating"),
        ("dropout", (x, 1.0, None, 0, None), "level must be in the interval [0, 1)"),
        ("dropout", (x, -0.1, None, 0, None), "level must be in the interval [0, 1)"),
        ("dropout", (x, float("nan"), None, 0, None), "level must be in the interval"),
        ("dropout", (xi, 0.5, None, 0, None), "x must be floating"),
        ("dropout", (x, 0.5, i64([2, 2]), 2, None), "does not broadcast"),
        ("dropout", (x, 0.5, i64([1, 2, 3]), 3, None), "more dimensions than x"),
        ("dropout", (x, 0.5, None, 2, None), "noise_shape is NULL"),
        ("dropout", (None, 0.5, None, 0, None), "x is NULL"),
    ]
    for name, args, text in cases:
        msg = error_of(name, *args)
        assert msg.startswith(name + ": "), msg
        assert text in msg, msg


# ==== 5. locally connected convolutions ==========================================================
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
