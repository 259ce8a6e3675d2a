"""temporal_padding, spatial_2d_padding and spatial_3d_padding (docs/keras_semantics.md section 8)
against NumPy's pad.

Forward values in float32 and float64, both data formats, int32 and bool inputs, unknown
dimensions and the default data format; gradients by central finite differences in float64; bad
inputs, whose messages must start with the Keras function's name.
"""
import numpy as np
import pytest

import kb
from kb import const, error_of, i64, op
from kb_conv import FIRST, fmt_in, fmt_out, LAST, randn
from kb import fd_check, reduce_sum
from kb_layers import FORMAT, enum, image_data_format

F32, F64 = kb.F32, kb.F64
lib = kb.lib


def flat(pairs):
    """((a, b), (c, d)) -> (array, 4); None -> (NULL, 0)."""
    if pairs is None:
        return None, 0
    v = [int(p) for pair in pairs for p in (pair if hasattr(pair, "__len__") else [pair])]
    return i64(v), len(v)


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
