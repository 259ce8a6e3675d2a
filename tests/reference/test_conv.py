"""Convolution and pooling (docs/keras_semantics.md section 13) against NumPy references.

Forward values in float32 (oneDNN) and float64 (reference kernels), every padding mode, strides,
dilations, both data formats and odd sizes; gradients by central finite differences in float64,
float32 gradients (oneDNN's backward primitives) against float64 ones, second derivatives; and
bad inputs, whose messages must start with the Keras function's name.
"""
import ctypes

import numpy as np
import pytest

import kb
import kb_conv as kc
from kb_conv import FIRST, LAST, fmt_in, fmt_out, randn, to_last
from kb import const, error_of, fd_check, grads_of, weighted

F32, F64 = kb.F32, kb.F64


# ---- NumPy references (channels-last; the tests move channels for channels_first) ---------------
def same_pads(n, keff, s):
    """Keras/TF 'same': out = ceil(n/s); the odd padding cell goes after."""
    out = -(-n // s)
    total = max((out - 1) * s + keff - n, 0)
    return total // 2, total - total // 2


def conv_pads(padding, in_sp, ks, strides, dil):
    keff = [(k - 1) * d + 1 for k, d in zip(ks, dil)]
    if padding == "valid":
        return [(0, 0)] * len(in_sp)
    if padding == "same":
        return [same_pads(n, e, s) for n, e, s in zip(in_sp, keff, strides)]
    assert padding == "causal"
    return [(e - 1, 0) for e in keff]


def np_conv(x, k, strides, dil, pads, groups=1):
    """Cross-correlation with groups:
    y[b, o, g*OCg + m] = sum_{z, i} xpad[b, o*s + z*d, g*ICg + i] k[z, g*ICg + i, m].
    x: (N, *spatial, C); k: (*ks, C, OCg)."""
    x, k = x.astype(np.float64), k.astype(np.float64)
    nsp = x.ndim - 2
    xp = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
    ks, c, ocg = k.shape[:nsp], x.shape[-1], k.shape[-1]
    icg = c // groups
    out = [(xp.shape[1 + i] - ((ks[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(nsp)]
    y = np.zeros((x.shape[0], *out, groups, ocg))
    for z in np.ndindex(*ks):
        sl = tuple(slice(z[i] * dil[i], z[i] * dil[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(nsp))
        patch = xp[(slice(None),) + sl + (slice(None),)]
        patch = patch.reshape(patch.shape[:-1] + (groups, icg))
        y += np.einsum("...gi,gio->...go", patch, k[z].reshape(groups, icg, ocg))
    return y.reshape(y.shape[:-2] + (groups * ocg,))


def np_conv_transpose(x, k, out_sp, strides, dil, pads):
    """The adjoint of np_conv, written as a scatter:
    out[b, i*s + z*d - pb, o] += x[b, i, c] k[z, o, c].  x: (N, *xs, Cin); k: (*ks, Cout, Cin)."""
    x, k = x.astype(np.float64), k.astype(np.float64)
    nsp = x.ndim - 2
    ks, xs = k.shape[:nsp], x.shape[1:-1]
    padded = [out_sp[i] + pads[i][0] + pads[i][1] for i in range(nsp)]
    buf = np.zeros((x.shape[0], *padded, k.shape[-2]))
    for z in np.ndindex(*ks):
        sl = tuple(slice(z[i] * dil[i], z[i] * dil[i] + (xs[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(nsp))
        buf[(slice(None),) + sl + (slice(None),)] += np.einsum("...c,oc->...o", x, k[z])
    crop = tuple(slice(pads[i][0], pads[i][0] + out_sp[i]) for i in range(nsp))
    return buf[(slice(None),) + crop + (slice(None),)]


def np_depthwise(x, k, strides, dil, pads):
    """Output channel c*mult + m is channel c filtered by k[..., c, m]."""
    c, mult = k.shape[-2:]
    outs = []
    for ci in range(c):
        for m in range(mult):
            outs.append(np_conv(x[..., ci:ci + 1], k[..., ci:ci + 1, m:m + 1], strides, dil, pads))
    return np.concatenate(outs, axis=-1)


def np_pool(x, pool, strides, pads, mode):
    """Max ignores padded cells; avg divides by the number of real cells."""
    x = x.astype(np.float64)
    nsp = x.ndim - 2
    xp = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)], constant_values=np.nan)
    out = [(xp.shape[1 + i] - pool[i]) // strides[i] + 1 for i in range(nsp)]
    cells = []
    for z in np.ndindex(*pool):
        sl = tuple(slice(z[i], z[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(nsp))
        cells.append(xp[(slice(None),) + sl + (slice(None),)])
    cells = np.stack(cells)
    return np.nanmax(cells, axis=0) if mode == "max" else np.nanmean(cells, axis=0)


def kernel(rng, shape, dt, fan_in):
    return randn(rng, shape, dt, 1.0 / np.sqrt(fan_in))


def check(actual, expected, dt):
    """float32 runs through oneDNN (different summation order): relative 1e-4 of the scale."""
    assert actual.dtype == np.dtype(kb.NP_OF[dt])
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dt == F32:
        scale = max(1.0, float(np.max(np.abs(expected))))
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=2e-5 * scale)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-11)


def both_invalid(strides, dil):
    return max(strides) > 1 and max(dil) > 1


# ---- enums ------------------------------------------------------------------------------------
def test_parse_enums():
    v = ctypes.c_int32()
    for name, code in [("valid", kc.VALID), ("same", kc.SAME), ("causal", kc.CAUSAL),
                       ("SAME", kc.SAME)]:
        kb.check(kc.lib.kb_parse_padding(name.encode(), ctypes.byref(v)))
        assert v.value == code
    for name, code in [("max", kc.MAX), ("avg", kc.AVG), ("Avg", kc.AVG)]:
        kb.check(kc.lib.kb_parse_pool_mode(name.encode(), ctypes.byref(v)))
        assert v.value == code
    v.value = 77
    assert kc.lib.kb_parse_padding(b"full", ctypes.byref(v)) == 1
    assert kb.lib.kb_last_error_message().decode() == "parse_padding: unknown padding 'full'"
    assert v.value == 77  # untouched on failure
    assert kc.lib.kb_parse_pool_mode(b"sum", ctypes.byref(v)) == 1
    assert kb.lib.kb_last_error_message().decode().startswith("parse_pool_mode: unknown")
    assert kc.lib.kb_parse_padding(None, ctypes.byref(v)) == 1
    assert kc.lib.kb_parse_pool_mode(b"max", None) == 1


# ---- conv1d / conv2d / conv3d -------------------------------------------------------------------
# causal padding needs channels_last (the other combination is tested as an error)
PAD_FORMATS_1D = [("valid", LAST), ("valid", FIRST), ("same", LAST), ("same", FIRST),
                  ("causal", LAST)]


@pytest.mark.parametrize("padding,df", PAD_FORMATS_1D)
@pytest.mark.parametrize("strides,dil", [(1, 1), (2, 1), (3, 1), (1, 2), (1, 3)])
def test_conv1d(padding, strides, dil, df, dt, mode, rng):
    x = randn(rng, (2, 11, 3), dt)
    k = kernel(rng, (3, 3, 4), dt, 9)
    pads = conv_pads(padding, [11], [3], [strides], [dil])
    expected = np_conv(x, k, [strides], [dil], pads)
    r = kb.ev(lambda a, b: kc.conv1d(a, b, strides, padding, df, dil), fmt_in(x, df), k, mode=mode)
    check(fmt_out(r, df), expected, dt)


def test_conv1d_causal_is_left_padded_valid(rng):
    x = randn(rng, (1, 7, 2), F64)
    k = randn(rng, (3, 2, 1), F64)
    r = kb.ev(lambda a, b: kc.conv1d(a, b, 1, "causal", LAST, 2), x, k)
    xpad = np.concatenate([np.zeros((1, 4, 2)), x], axis=1)
    r2 = kb.ev(lambda a, b: kc.conv1d(a, b, 1, "valid", LAST, 2), xpad, k)
    assert r.shape == (1, 7, 1)
    np.testing.assert_allclose(r, r2, rtol=1e-12, atol=1e-12)
    # y[t] depends on x[<= t] only
    x2 = x.copy()
    x2[0, 5:] += 1.0
    r3 = kb.ev(lambda a, b: kc.conv1d(a, b, 1, "causal", LAST, 2), x2, k)
    np.testing.assert_allclose(r3[0, :5], r[0, :5], rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(r3[0, 5:] - r[0, 5:]) > 1e-9)


CONV2D = [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 3), (1, 1)), ((3, 1), (1, 1)),
          ((1, 1), (2, 2)), ((1, 1), (2, 3))]


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("strides,dil", CONV2D)
def test_conv2d(padding, strides, dil, df, dt, rng):
    x = randn(rng, (2, 9, 8, 3), dt)
    k = kernel(rng, (3, 2, 3, 5), dt, 18)
    pads = conv_pads(padding, [9, 8], [3, 2], strides, dil)
    expected = np_conv(x, k, strides, dil, pads)
    r = kb.ev(lambda a, b: kc.conv2d(a, b, strides, padding, df, dil), fmt_in(x, df), k)
    check(fmt_out(r, df), expected, dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_conv2d_unknown_batch_and_spatial(df, dt, rng):
    """'same' pads with strides depend on the spatial size: found when the function is called."""
    x = randn(rng, (3, 7, 10, 4), dt)
    k = kernel(rng, (3, 3, 4, 6), dt, 36)
    shape = [-1, -1, -1, 4] if df == LAST else [-1, 4, -1, -1]
    ph = kb.placeholder(shape, dt)
    y = kc.conv2d(ph, const(k), (2, 3), "same", df)
    assert y.shape == ((None, None, None, 6) if df == LAST else (None, 6, None, None))
    f = kb.Function([ph], [y])
    for xs in [x, x[:1, :5, :6]]:
        pads = conv_pads("same", xs.shape[1:3], [3, 3], [2, 3], [1, 1])
        check(fmt_out(f(fmt_in(xs, df))[0], df), np_conv(xs, k, [2, 3], [1, 1], pads), dt)


def test_conv2d_static_shape(rng):
    x = kb.placeholder([-1, 10, 9, 3], F32)
    k = const(kernel(rng, (3, 3, 3, 8), F32, 27))
    assert kc.conv2d(x, k, (2, 2), "same").shape == (None, 5, 5, 8)
    assert kc.conv2d(x, k, (2, 2), "valid").shape == (None, 4, 4, 8)
    assert kc.conv2d(x, k, None, "valid", None, (2, 2)).shape == (None, 6, 5, 8)
    xf = kb.placeholder([-1, 3, 10, 9], F32)
    assert kc.conv2d(xf, k, (1, 2), "same", FIRST).shape == (None, 8, 10, 5)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("strides,dil", [((1, 1, 1), (1, 1, 1)), ((2, 1, 3), (1, 1, 1)),
                                         ((1, 1, 1), (2, 1, 2))])
def test_conv3d(padding, strides, dil, df, dt, rng):
    x = randn(rng, (2, 5, 6, 7, 2), dt)
    k = kernel(rng, (2, 3, 2, 2, 3), dt, 24)
    pads = conv_pads(padding, [5, 6, 7], [2, 3, 2], strides, dil)
    expected = np_conv(x, k, strides, dil, pads)
    r = kb.ev(lambda a, b: kc.conv3d(a, b, strides, padding, df, dil), fmt_in(x, df), k)
    check(fmt_out(r, df), expected, dt)


def test_float16_kernels(rng):
    """float16 convolutions run through oneDNN's float32 ones on widened copies; pooling through
    the reference kernels (computing in float32)."""
    x = randn(rng, (2, 7, 6, 3), kb.F16)
    k = kernel(rng, (3, 3, 3, 4), kb.F16, 27)
    r = kb.ev(lambda a, b: kc.conv2d(a, b, (2, 1), "same"), x, k)
    assert r.dtype == np.float16
    pads = conv_pads("same", [7, 6], [3, 3], [2, 1], [1, 1])
    np.testing.assert_allclose(r, np_conv(x, k, [2, 1], [1, 1], pads), rtol=1e-2, atol=1e-2)
    r = kb.ev(lambda a: kc.pool2d(a, (3, 3), (2, 2), "same", LAST, "avg"), x)
    pads = conv_pads("same", [7, 6], [3, 3], [2, 2], [1, 1])
    np.testing.assert_allclose(r, np_pool(x, (3, 3), (2, 2), pads, "avg"), rtol=1e-2, atol=1e-3)


def test_default_data_format_is_global(rng):
    x = randn(rng, (2, 3, 6, 5), F64)  # channels_first data
    k = randn(rng, (3, 3, 3, 2), F64)
    old = kc.image_data_format()
    try:
        kc.set_image_data_format(kb.CHANNELS_FIRST)
        r = kb.ev(lambda a, b: kc.conv2d(a, b, None, "same", None), x, k)
        kc.set_image_data_format(kb.CHANNELS_LAST)
        r_last = kb.ev(lambda a, b: kc.conv2d(a, b, None, "same", None), to_last(x), k)
    finally:
        kc.set_image_data_format(old)
    pads = conv_pads("same", [6, 5], [3, 3], [1, 1], [1, 1])
    check(to_last(r), np_conv(to_last(x), k, [1, 1], [1, 1], pads), F64)
    check(r_last, np_conv(to_last(x), k, [1, 1], [1, 1], pads), F64)


def test_conv2d_large_channels(dt, rng):
    """A size where oneDNN picks its vectorized kernels (channels multiple of 16), batch 1."""
    x = randn(rng, (1, 12, 12, 32), dt)
    k = kernel(rng, (3, 3, 32, 48), dt, 288)
    for df in [LAST, FIRST]:
        r = kb.ev(lambda a, b: kc.conv2d(a, b, (1, 1), "same", df), fmt_in(x, df), k)
        check(fmt_out(r, df), np_conv(x, k, [1, 1], [1, 1], [(1, 1), (1, 1)]), dt)


# ---- transposed convolutions --------------------------------------------------------------------
def transpose_pads(padding, out_sp, ks, strides, dil):
    return conv_pads(padding, out_sp, ks, strides, dil)


# (x spatial, strides, padding, output spatial)
T2D = [((4, 5), (1, 1), "valid", (6, 8)), ((4, 5), (2, 2), "valid", (9, 12)),
       ((4, 5), (2, 3), "valid", (10, 16)), ((4, 5), (2, 2), "same", (8, 10)),
       ((4, 5), (2, 2), "same", (7, 9)), ((4, 5), (1, 1), "same", (4, 5)),
       ((3, 3), (3, 2), "same", (9, 6))]


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("xs,strides,padding,out_sp", T2D)
def test_conv2d_transpose(xs, strides, padding, out_sp, df, dt, mode, rng):
    x = randn(rng, (2, *xs, 3), dt)
    k = kernel(rng, (3, 4, 5, 3), dt, 12)  # (kh, kw, out, in)
    pads = transpose_pads(padding, out_sp, (3, 4), strides, (1, 1))
    expected = np_conv_transpose(x, k, out_sp, strides, (1, 1), pads)
    oshape = (2, *out_sp, 5) if df == LAST else (2, 5, *out_sp)
    r = kb.ev(lambda a, b: kc.conv2d_transpose(a, b, oshape, strides, padding, df),
              fmt_in(x, df), k, mode=mode)
    check(fmt_out(r, df), expected, dt)
    # deconv2d is the legacy name of the same function. Not compared bit for bit with r: a GPU
    # measures its algorithms per plan, and two plans may pick different ones.
    r2 = kb.ev(lambda a, b: kc.deconv2d(a, b, oshape, strides, padding, df), fmt_in(x, df), k,
               mode=mode)
    check(fmt_out(r2, df), expected, dt)


def test_conv2d_transpose_is_adjoint_of_conv2d(rng):
    """<conv2d(u, K), v> == <u, conv2d_transpose(v, K)> for every padding and stride."""
    for padding, strides, u_sp in [("valid", (2, 2), (9, 8)), ("same", (2, 3), (7, 8)),
                                   ("same", (1, 1), (5, 6))]:
        u = rng.standard_normal((2, *u_sp, 3))
        k = rng.standard_normal((3, 2, 3, 4))
        cu = kb.ev(lambda a, b: kc.conv2d(a, b, strides, padding), u, k)
        v = rng.standard_normal(cu.shape)
        tv = kb.ev(lambda a, b: kc.conv2d_transpose(a, b, u.shape, strides, padding), v, k)
        np.testing.assert_allclose(np.sum(cu * v), np.sum(u * tv), rtol=1e-12)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_transpose_dilated_ignores_strides(padding, df, dt, rng):
    x = randn(rng, (2, 5, 4, 3), dt)
    k = kernel(rng, (3, 2, 2, 3), dt, 6)
    out_sp = (5, 4) if padding == "same" else (9, 6)
    pads = transpose_pads(padding, out_sp, (3, 2), (1, 1), (2, 2))
    expected = np_conv_transpose(x, k, out_sp, (1, 1), (2, 2), pads)
    oshape = (2, *out_sp, 2) if df == LAST else (2, 2, *out_sp)
    r = kb.ev(lambda a, b: kc.conv2d_transpose(a, b, oshape, (2, 2), padding, df, (2, 2)),
              fmt_in(x, df), k)
    check(fmt_out(r, df), expected, dt)


def test_conv2d_transpose_unknown_batch(rng):
    x = randn(rng, (3, 4, 4, 2), F64)
    k = randn(rng, (3, 3, 5, 2), F64)
    ph = kb.placeholder([-1, 4, 4, 2], F64)
    y = kc.conv2d_transpose(ph, const(k), (-1, 8, 8, 5), (2, 2), "same")
    assert y.shape == (None, 8, 8, 5)
    r = kb.Function([ph], [y])(x)[0]
    pads = transpose_pads("same", (8, 8), (3, 3), (2, 2), (1, 1))
    check(r, np_conv_transpose(x, k, (8, 8), (2, 2), (1, 1), pads), F64)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("xs,strides,padding,out_sp", [
    ((3, 4, 2), (1, 1, 1), "valid", (4, 6, 3)), ((3, 4, 2), (2, 1, 2), "same", (6, 4, 3)),
    ((2, 3, 2), (2, 2, 3), "valid", (5, 7, 7))])
def test_conv3d_transpose(xs, strides, padding, out_sp, df, dt, rng):
    x = randn(rng, (2, *xs, 3), dt)
    k = kernel(rng, (2, 3, 2, 4, 3), dt, 12)
    pads = transpose_pads(padding, out_sp, (2, 3, 2), strides, (1, 1, 1))
    expected = np_conv_transpose(x, k, out_sp, strides, (1, 1, 1), pads)
    oshape = (2, *out_sp, 4) if df == LAST else (2, 4, *out_sp)
    r = kb.ev(lambda a, b: kc.conv3d_transpose(a, b, oshape, strides, padding, df),
              fmt_in(x, df), k)
    check(fmt_out(r, df), expected, dt)


# ---- depthwise and separable ----------------------------------------------------------------
@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("strides,dil,mult", [((1, 1), (1, 1), 1), ((2, 1), (1, 1), 2),
                                              ((1, 1), (2, 2), 3), ((3, 2), (1, 1), 1)])
def test_depthwise_conv2d(padding, strides, dil, mult, df, dt, mode, rng):
    x = randn(rng, (2, 9, 7, 4), dt)
    k = kernel(rng, (3, 3, 4, mult), dt, 9)
    pads = conv_pads(padding, [9, 7], [3, 3], strides, dil)
    expected = np_depthwise(x, k, strides, dil, pads)
    r = kb.ev(lambda a, b: kc.depthwise_conv2d(a, b, strides, padding, df, dil), fmt_in(x, df), k,
              mode=mode)
    check(fmt_out(r, df), expected, dt)


def test_depthwise_conv2d_wide(dt, rng):
    """32 channels x multiplier 2 (oneDNN's vectorized depthwise kernels)."""
    x = randn(rng, (2, 10, 10, 32), dt)
    k = kernel(rng, (3, 3, 32, 2), dt, 9)
    for df in [LAST, FIRST]:
        r = kb.ev(lambda a, b: kc.depthwise_conv2d(a, b, (2, 2), "same", df), fmt_in(x, df), k)
        pads = conv_pads("same", [10, 10], [3, 3], [2, 2], [1, 1])
        check(fmt_out(r, df), np_depthwise(x, k, [2, 2], [1, 1], pads), dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("strides,dil", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((1, 1), (2, 1))])
def test_separable_conv2d(padding, strides, dil, df, dt, rng):
    x = randn(rng, (2, 8, 9, 3), dt)
    dk = kernel(rng, (3, 3, 3, 2), dt, 9)
    pk = kernel(rng, (1, 1, 6, 5), dt, 6)
    pads = conv_pads(padding, [8, 9], [3, 3], strides, dil)
    expected = np_conv(np_depthwise(x, dk, strides, dil, pads), pk, [1, 1], [1, 1],
                       [(0, 0), (0, 0)])
    r = kb.ev(lambda a, b, c: kc.separable_conv2d(a, b, c, strides, padding, df, dil),
              fmt_in(x, df), dk, pk)
    check(fmt_out(r, df), expected, dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("strides,dil", [(1, 1), (2, 1), (1, 2)])
def test_separable_conv1d(padding, strides, dil, df, dt, mode, rng):
    x = randn(rng, (2, 13, 4), dt)
    dk = kernel(rng, (3, 4, 2), dt, 3)
    pk = kernel(rng, (1, 8, 3), dt, 8)
    pads = conv_pads(padding, [13], [3], [strides], [dil])
    expected = np_conv(np_depthwise(x, dk, [strides], [dil], pads), pk, [1], [1], [(0, 0)])
    r = kb.ev(lambda a, b, c: kc.separable_conv1d(a, b, c, strides, padding, df, dil),
              fmt_in(x, df), dk, pk, mode=mode)
    check(fmt_out(r, df), expected, dt)


# ---- pooling --------------------------------------------------------------------------------
POOL2D = [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (2, 3)), ((2, 3), (1, 2)), ((1, 1), (2, 2)),
          ((3, 3), (3, 3))]


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("pool_mode", ["max", "avg"])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("pool,strides", POOL2D)
def test_pool2d(pool, strides, padding, pool_mode, df, dt, rng):
    x = randn(rng, (2, 7, 8, 3), dt)
    pads = conv_pads(padding, [7, 8], pool, strides, [1, 1])
    expected = np_pool(x, pool, strides, pads, pool_mode)
    r = kb.ev(lambda a: kc.pool2d(a, pool, strides, padding, df, pool_mode), fmt_in(x, df))
    check(fmt_out(r, df), expected, dt)


def test_pool2d_avg_excludes_padding():
    x = np.ones((1, 3, 3, 1))
    r = kb.ev(lambda a: kc.pool2d(a, (2, 2), (2, 2), "same", LAST, "avg"), x)
    np.testing.assert_array_equal(r, np.ones((1, 2, 2, 1)))  # 1, not 0.5 / 0.25 at the border
    x = -np.ones((1, 3, 3, 1), np.float32)
    r = kb.ev(lambda a: kc.pool2d(a, (2, 2), (2, 2), "same", LAST, "max"), x)
    np.testing.assert_array_equal(r, -np.ones((1, 2, 2, 1), np.float32))  # padding is not 0


def test_pool2d_default_strides_and_unknown_dims(dt, mode, rng):
    x = randn(rng, (3, 6, 5, 16), dt)
    ph = kb.placeholder([-1, -1, -1, 16], dt)
    y = kc.pool2d(ph, (2, 2), None, "same", LAST, "avg")
    r = kb.Function([ph], [y])(x)[0]
    pads = conv_pads("same", [6, 5], [2, 2], [1, 1], [1, 1])
    check(r, np_pool(x, (2, 2), (1, 1), pads, "avg"), dt)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("pool_mode", ["max", "avg"])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("pool,strides", [((2, 2, 2), (2, 2, 2)), ((3, 1, 2), (1, 2, 2)),
                                          ((2, 3, 3), (3, 1, 2))])
def test_pool3d(pool, strides, padding, pool_mode, df, dt, rng):
    x = randn(rng, (2, 5, 6, 7, 3), dt)
    pads = conv_pads(padding, [5, 6, 7], pool, strides, [1, 1, 1])
    expected = np_pool(x, pool, strides, pads, pool_mode)
    r = kb.ev(lambda a: kc.pool3d(a, pool, strides, padding, df, pool_mode), fmt_in(x, df))
    check(fmt_out(r, df), expected, dt)


def test_pool2d_wide(dt, rng):
    x = randn(rng, (2, 12, 12, 64), dt)
    for df in [LAST, FIRST]:
        for pm in ["max", "avg"]:
            r = kb.ev(lambda a: kc.pool2d(a, (2, 2), (2, 2), "valid", df, pm), fmt_in(x, df))
            check(fmt_out(r, df), np_pool(x, (2, 2), (2, 2), [(0, 0)] * 2, pm), dt)


# ---- gradients ----------------------------------------------------------------------------------
def f32_matches_f64(build, *inputs, seed=0):
    """The float32 gradients (oneDNN backward primitives) equal the float64 ones (reference)."""
    inputs = [np.asarray(a, np.float64) for a in inputs]
    out = {}
    for dt in (F32, F64):
        arrs = [a.astype(kb.NP_OF[dt]) for a in inputs]
        phs, loss, grads = grads_of(build, arrs, dt, seed, nonlinear=True)
        out[dt] = kb.Function(phs, grads)(*arrs)
    for i, (g32, g64) in enumerate(zip(out[F32], out[F64])):
        assert g32.dtype == np.float32
        scale = max(1.0, float(np.max(np.abs(g64))))
        np.testing.assert_allclose(g32, g64, rtol=2e-4, atol=5e-5 * scale, err_msg=f"input {i}")


R = np.random.default_rng(7)


@pytest.mark.parametrize("padding,strides,dil,df", [
    ("valid", 1, 1, LAST), ("valid", 1, 1, FIRST), ("same", 2, 1, LAST), ("same", 2, 1, FIRST),
    ("causal", 1, 2, LAST), ("causal", 3, 1, LAST), ("same", 1, 2, FIRST)])
def test_conv1d_gradient(padding, strides, dil, df):
    x, k = R.standard_normal((2, 7, 3)), R.standard_normal((3, 3, 2))
    build = lambda a, b: kc.conv1d(a, b, strides, padding, df, dil)  # noqa: E731
    fd_check(build, fmt_in(x, df), k)
    f32_matches_f64(build, fmt_in(x, df), k)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding,strides,dil", [("valid", (1, 1), (1, 1)),
                                                 ("same", (2, 3), (1, 1)),
                                                 ("valid", (2, 1), (1, 1)),
                                                 ("same", (1, 1), (2, 2))])
def test_conv2d_gradient(padding, strides, dil, df):
    x, k = R.standard_normal((2, 6, 5, 3)), R.standard_normal((3, 2, 3, 2))
    build = lambda a, b: kc.conv2d(a, b, strides, padding, df, dil)  # noqa: E731
    fd_check(build, fmt_in(x, df), k)
    f32_matches_f64(build, fmt_in(x, df), k)


def test_conv2d_gradient_strided_1x1():
    """Strides larger than the kernel: some inputs get no gradient at all (zeros)."""
    x, k = R.standard_normal((2, 7, 6, 3)), R.standard_normal((1, 1, 3, 2))
    for df in [LAST, FIRST]:
        build = lambda a, b: kc.conv2d(a, b, (3, 2), "valid", df)  # noqa: E731
        g = fd_check(build, fmt_in(x, df), k)
        assert np.all(fmt_out(g[0], df)[:, 1::3] == 0)
        f32_matches_f64(build, fmt_in(x, df), k)


def test_conv2d_gradient_f32_large(rng):
    """oneDNN's backward primitives on a size with vectorized kernels, both layouts."""
    x, k = rng.standard_normal((2, 10, 10, 32)), rng.standard_normal((3, 3, 32, 16)) / 17
    for df in [LAST, FIRST]:
        for strides in [(1, 1), (2, 2)]:
            f32_matches_f64(lambda a, b: kc.conv2d(a, b, strides, "same", df), fmt_in(x, df), k)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_conv3d_gradient(df):
    x, k = R.standard_normal((1, 4, 3, 5, 2)), R.standard_normal((2, 2, 3, 2, 2))
    build = lambda a, b: kc.conv3d(a, b, (2, 1, 2), "same", df)  # noqa: E731
    fd_check(build, fmt_in(x, df), k)
    f32_matches_f64(build, fmt_in(x, df), k)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding,strides,out_sp,dil", [("valid", (2, 2), (7, 6), (1, 1)),
                                                        ("same", (2, 3), (6, 9), (1, 1)),
                                                        ("same", (1, 1), (3, 4), (2, 2))])
def test_conv2d_transpose_gradient(padding, strides, out_sp, dil, df):
    x, k = R.standard_normal((2, 3, 3, 2)), R.standard_normal((3, 2, 3, 2))
    oshape = (2, *out_sp, 3) if df == LAST else (2, 3, *out_sp)
    if dil == (2, 2):
        x = R.standard_normal((2, 3, 4, 2))
    build = lambda a, b: kc.conv2d_transpose(a, b, oshape, strides, padding, df, dil)  # noqa
    fd_check(build, fmt_in(x, df), k)
    f32_matches_f64(build, fmt_in(x, df), k)


def test_conv3d_transpose_gradient():
    x, k = R.standard_normal((1, 2, 3, 2, 2)), R.standard_normal((2, 2, 2, 3, 2))
    build = lambda a, b: kc.conv3d_transpose(a, b, (1, 4, 5, 4, 3), (2, 2, 2), "same")  # noqa
    fd_check(build, x, k)
    f32_matches_f64(build, x, k)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("padding,strides,dil,mult", [("valid", (1, 1), (1, 1), 2),
                                                      ("same", (2, 2), (1, 1), 1),
                                                      ("same", (1, 1), (2, 1), 3)])
def test_depthwise_conv2d_gradient(padding, strides, dil, mult, df):
    x, k = R.standard_normal((2, 5, 6, 3)), R.standard_normal((3, 3, 3, mult))
    build = lambda a, b: kc.depthwise_conv2d(a, b, strides, padding, df, dil)  # noqa: E731
    fd_check(build, fmt_in(x, df), k)
    f32_matches_f64(build, fmt_in(x, df), k)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_separable_conv2d_gradient(df):
    x = R.standard_normal((2, 5, 5, 2))
    dk, pk = R.standard_normal((3, 3, 2, 2)), R.standard_normal((1, 1, 4, 3))
    build = lambda a, b, c: kc.separable_conv2d(a, b, c, (2, 2), "same", df)  # noqa: E731
    fd_check(build, fmt_in(x, df), dk, pk)
    f32_matches_f64(build, fmt_in(x, df), dk, pk)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_separable_conv1d_gradient(df):
    x = R.standard_normal((2, 9, 3))
    dk, pk = R.standard_normal((3, 3, 2)), R.standard_normal((1, 6, 2))
    build = lambda a, b, c: kc.separable_conv1d(a, b, c, 1, "valid", df, 2)  # noqa: E731
    fd_check(build, fmt_in(x, df), dk, pk)
    f32_matches_f64(build, fmt_in(x, df), dk, pk)


def distinct(shape, rng):
    """Values with no ties (spaced well beyond the finite-difference step), shuffled."""
    n = int(np.prod(shape))
    return rng.permutation(np.arange(n) * 0.01 - n * 0.005).reshape(shape)


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("pool_mode", ["max", "avg"])
@pytest.mark.parametrize("pool,strides,padding", [((2, 2), (2, 2), "valid"),
                                                  ((3, 3), (2, 2), "same"),
                                                  ((3, 2), (1, 1), "same"),
                                                  ((1, 2), (2, 3), "valid")])
def test_pool2d_gradient(pool, strides, padding, pool_mode, df, rng):
    x = distinct((2, 5, 6, 3), rng)
    build = lambda a: kc.pool2d(a, pool, strides, padding, df, pool_mode)  # noqa: E731
    fd_check(build, fmt_in(x, df))
    f32_matches_f64(build, fmt_in(x, df))


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("pool,strides,padding", [((2, 2), (2, 2), "valid"),
                                                  ((2, 2), (2, 2), "same"),
                                                  ((2, 3), (3, 3), "same")])
def test_max_pool_gradient_with_ties(pool, strides, padding, df, rng):
    # Windows without overlap (the direct float32 loop): with ties (a relu's zeros, equal
    # values) the first maximum of each window in row-major order takes the gradient, as the
    # float64 reference loop; remainder rows and columns get 0.
    x = np.maximum(rng.integers(-2, 3, size=(2, 5, 7, 33)), 0).astype(np.float64)
    w = rng.standard_normal(kb.ev(lambda a: kc.pool2d(a, pool, strides, padding, df, "max"),
                                  fmt_in(x, df)).shape)
    grads = {}
    for dt in (F32, F64):
        xp = kb.placeholder(list(fmt_in(x, df).shape), dt)
        y = kc.pool2d(xp, pool, strides, padding, df, "max")
        loss = kb.op("sum", kb.op("multiply", y, kb.const(w.astype(kb.NP_OF[dt]))), None, 0, 0)
        grads[dt] = kb.Function([xp], kb.gradients(loss, [xp]))(
            fmt_in(x, df).astype(kb.NP_OF[dt]))[0]
    np.testing.assert_array_equal(grads[F32], grads[F64].astype(np.float32))
    assert np.count_nonzero(grads[F64]) <= w.size


@pytest.mark.parametrize("pool,strides,padding", [((2, 2), (2, 2), "valid"),
                                                  ((3, 3), (2, 2), "same"),
                                                  ((2, 3), (3, 3), "same")])
def test_max_pool_ties_and_nans(pool, strides, padding, rng):
    # Channels last, float32 (direct loops over blocks of 8 channels and a remainder): each
    # window's first maximum in row-major order, a NaN only where it is the window's first real
    # cell, as the float64 reference loop; overlapping windows and padded borders too.
    x = np.maximum(rng.integers(-2, 3, size=(2, 6, 7, 19)), 0).astype(np.float64)
    x[rng.random(x.shape) < 0.05] = np.nan
    r = {dt: kb.ev(lambda a: kc.pool2d(a, pool, strides, padding, LAST, "max"),
                   x.astype(kb.NP_OF[dt])) for dt in (F32, F64)}
    assert np.isnan(r[F64]).any() and not np.isnan(r[F64]).all()
    np.testing.assert_array_equal(r[F32], r[F64].astype(np.float32))


@pytest.mark.parametrize("pool_mode", ["max", "avg"])
def test_pool3d_gradient(pool_mode, rng):
    x = distinct((1, 4, 5, 3, 2), rng)
    build = lambda a: kc.pool3d(a, (2, 3, 2), (1, 2, 2), "same", FIRST, pool_mode)  # noqa: E731
    fd_check(build, x)
    f32_matches_f64(build, x)


# ---- second derivatives ---------------------------------------------------------------------
def second_order_check(build, wrt_first, inputs, seed=3):
    """l2 = sum(d loss / d inputs[wrt_first] * v) with loss = sum(tanh(build(...)) * w):
    its gradients w.r.t. every input against finite differences of l2."""
    inputs = [np.asarray(a, np.float64) for a in inputs]
    phs, loss, grads = grads_of(build, inputs, F64, seed, nonlinear=True)
    g = grads[wrt_first]
    l2 = weighted(g, seed + 1)
    g2 = kb.gradients(l2, phs)
    res = kb.Function(phs, g2)(*inputs)
    l2_f = kb.Function(phs, [l2])
    for i, gi in enumerate(res):
        fd = kb.central_differences(l2_f, inputs, i)
        np.testing.assert_allclose(gi, fd, rtol=1e-5, atol=1e-7, err_msg=f"input {i}")


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("df", [LAST, FIRST])
def test_conv2d_second_order(wrt, df):
    x, k = R.standard_normal((1, 5, 4, 2)) * 0.5, R.standard_normal((2, 3, 2, 2)) * 0.5
    build = lambda a, b: kc.conv2d(a, b, (2, 1), "same", df)  # noqa: E731
    second_order_check(build, wrt, [fmt_in(x, df), k])


@pytest.mark.parametrize("wrt", [0, 1])
def test_conv2d_transpose_second_order(wrt):
    x, k = R.standard_normal((1, 3, 3, 2)) * 0.5, R.standard_normal((3, 3, 2, 2)) * 0.5
    build = lambda a, b: kc.conv2d_transpose(a, b, (1, 6, 6, 2), (2, 2), "same")  # noqa: E731
    second_order_check(build, wrt, [x, k])


@pytest.mark.parametrize("pool_mode", ["max", "avg"])
def test_pool2d_second_order(pool_mode, rng):
    x = distinct((1, 5, 5, 2), rng) * 10

    def build(a):
        return kc.pool2d(a, (3, 3), (2, 2), "same", LAST, pool_mode)

    second_order_check(build, 0, [x])


def test_second_order_f32_matches_f64(rng):
    """Second derivatives through oneDNN's three convolution primitives in float32."""
    x, k = rng.standard_normal((2, 8, 8, 16)), rng.standard_normal((3, 3, 16, 16)) / 12
    out = {}
    for dt in (F32, F64):
        arrs = [x.astype(kb.NP_OF[dt]), k.astype(kb.NP_OF[dt])]
        phs, loss, grads = grads_of(lambda a, b: kc.conv2d(a, b, (1, 1), "same"), arrs, dt, 5,
                                    nonlinear=True)
        l2 = weighted(grads[0], 6)
        out[dt] = kb.Function(phs, kb.gradients(l2, phs))(*arrs)
    for g32, g64 in zip(out[F32], out[F64]):
        scale = max(1.0, float(np.max(np.abs(g64))))
        np.testing.assert_allclose(g32, g64, rtol=5e-4, atol=1e-4 * scale)


# ---- bad inputs ---------------------------------------------------------------------------------
def f32(shape):
    return const(np.zeros(shape, np.float32))


def expect_error(name, args, prefix, contains=""):
    msg = error_of(name, *args)
    assert msg.startswith(prefix + ": "), msg
    assert contains in msg, msg
    return msg


def test_conv_errors():
    x, k = f32((2, 8, 8, 3)), f32((3, 3, 3, 4))
    A = kc.convnd_args
    expect_error("conv2d", A(f32((2, 8, 3)), k), "conv2d", "x must have rank 4")
    msg = expect_error("conv2d", A(x, f32((3, 3, 4))), "conv2d")
    assert msg == "conv2d: kernel rank 3 does not match input rank 4"
    expect_error("conv2d", A(x, f32((3, 3, 5, 4))), "conv2d", "x has 3 channels")
    expect_error("conv2d", A(x, k, None, 7), "conv2d", "unknown padding 7")
    expect_error("conv2d", A(x, k, None, "causal"), "conv2d", "'same' or 'valid'")
    expect_error("conv2d", A(x, k, None, "valid", 5), "conv2d", "unknown data_format 5")
    expect_error("conv2d", A(x, k, (0, 1)), "conv2d", "strides must be positive")
    expect_error("conv2d", A(x, k, (-2, 1)), "conv2d", "strides must be positive")
    expect_error("conv2d", A(x, k, (1, 1, 1)), "conv2d", "strides must have 2 entries")
    expect_error("conv2d", A(x, k, None, "valid", None, (0, 1)), "conv2d",
                 "dilation_rate must be positive")
    expect_error("conv2d", A(x, k, (2, 2), "valid", None, (2, 1)), "conv2d",
                 "dilation_rate > 1 needs strides of 1")
    expect_error("conv2d", A(x, f32((9, 3, 3, 4))), "conv2d", "larger than the padded input")
    expect_error("conv2d", A(x, k, None, "valid", None, (4, 1)), "conv2d",
                 "larger than the padded input")
    expect_error("conv2d", A(x, const(np.zeros((3, 3, 3, 4)))), "conv2d", "float64")
    expect_error("conv2d", A(const(np.zeros((2, 8, 8, 3), np.int32)), k), "conv2d",
                 "x must be floating")
    expect_error("conv2d", A(None, k), "conv2d", "x is NULL")
    expect_error("conv2d", A(x, None), "conv2d", "kernel is NULL")
    expect_error("conv2d", (x, k, None, 2, 0, -1, None, 0), "conv2d", "strides is NULL")
    st = kb.lib.kb_conv2d(x, k, None, 0, 0, -1, None, 0, None)
    assert st != 0 and kb.lib.kb_last_error_message().decode().startswith("conv2d: ")
    expect_error("conv3d", A(x, k), "conv3d", "x must have rank 5")
    expect_error("conv3d", A(f32((1, 4, 4, 4, 2)), f32((2, 2, 2, 2, 3)), (1, 1)), "conv3d",
                 "strides must have 3 entries")


def test_conv1d_errors():
    x, k = f32((2, 8, 3)), f32((3, 3, 4))
    A = kc.conv1d_args
    expect_error("conv1d", A(x, k, 1, "causal", FIRST), "conv1d", "causal padding")
    expect_error("conv1d", A(x, k, 0), "conv1d", "strides must be positive")
    expect_error("conv1d", A(x, k, 2, "same", None, 2), "conv1d", "needs strides of 1")
    expect_error("conv1d", A(x, f32((3, 3, 3, 4))), "conv1d", "kernel rank 4 does not match")
    expect_error("conv1d", A(x, f32((9, 3, 4))), "conv1d", "larger than the padded input")
    expect_error("conv1d", A(x, f32((3, 2, 4)), 1, "valid", FIRST), "conv1d", "x has 8 channels")


def test_conv_errors_at_call_time(rng):
    """Spatial dims unknown when the graph is built: a too small input fails when called."""
    ph = kb.placeholder([-1, -1, -1, 3], F32)
    y = kc.conv2d(ph, f32((5, 5, 3, 2)))
    f = kb.Function([ph], [y])
    f(np.zeros((1, 6, 6, 3), np.float32))
    with pytest.raises(kb.KBError) as e:
        f(np.zeros((1, 4, 6, 3), np.float32))
    assert "conv2d: the kernel window (5) is larger than the padded input (4)" in str(e.value)


def test_conv_transpose_errors():
    x, k = f32((2, 4, 4, 3)), f32((3, 3, 5, 3))
    A = kc.transpose2d_args
    expect_error("conv2d_transpose", A(x, k, (2, 9, 9, 5), (2, 2), "same"), "conv2d_transpose",
                 "does not fit x")
    expect_error("conv2d_transpose", A(x, k, (2, 8, 8, 4), (2, 2), "same"), "conv2d_transpose",
                 "has 4 channels but the kernel")
    expect_error("conv2d_transpose", A(x, f32((3, 3, 5, 2)), (2, 8, 8, 5), (2, 2), "same"),
                 "conv2d_transpose", "x has 3 channels")
    expect_error("conv2d_transpose", A(x, k, (2, 8, 8)), "conv2d_transpose",
                 "output_shape (2, 8, 8) must have 4 entries")
    expect_error("conv2d_transpose", A(x, k, (3, 8, 8, 5), (2, 2), "same"), "conv2d_transpose",
                 "has batch 3 but x has 2")
    expect_error("conv2d_transpose", A(x, k, (2, 0, 8, 5)), "conv2d_transpose", "positive")
    expect_error("conv2d_transpose", A(x, k, (2, 8, 8, 5), None, "same", None, (2, 1)),
                 "conv2d_transpose", "dilation_rate entries must be equal")
    expect_error("conv2d_transpose", A(x, k, (2, 8, 8, 5), None, "causal"), "conv2d_transpose",
                 "'same' or 'valid'")
    expect_error("conv2d_transpose", (x, k, None, 0, None, 0, 0, -1, None, 0),
                 "conv2d_transpose", "output_shape is NULL")
    expect_error("deconv2d", A(x, k, (2, 9, 9, 5), (2, 2), "same"), "deconv2d", "does not fit x")
    expect_error("conv3d_transpose", kc.transpose3d_args(x, k, (2, 8, 8, 5)), "conv3d_transpose",
                 "x must have rank 5")
    x3, k3 = f32((1, 2, 2, 2, 3)), f32((2, 2, 2, 4, 3))
    expect_error("conv3d_transpose", kc.transpose3d_args(x3, k3, (1, 4, 4, 4, 4), (2, 2)),
                 "conv3d_transpose", "strides must have 3 entries")
    expect_error("conv3d_transpose", kc.transpose3d_args(x3, k3, (1, 4, 4, 4, 4), None, 9),
                 "conv3d_transpose", "unknown padding")


def test_depthwise_separable_errors():
    x = f32((2, 8, 8, 3))
    A = kc.convnd_args
    expect_error("depthwise_conv2d", A(x, f32((3, 3, 4, 2))), "depthwise_conv2d",
                 "x has 3 channels but depthwise_kernel")
    expect_error("depthwise_conv2d", A(x, f32((3, 3, 3))), "depthwise_conv2d",
                 "depthwise_kernel rank 3 does not match input rank 4")
    expect_error("depthwise_conv2d", A(x, f32((3, 3, 3, 2)), (2, 2), "same", None, (2, 2)),
                 "depthwise_conv2d", "needs strides of 1")
    S = kc.separable2d_args
    dk = f32((3, 3, 3, 2))
    expect_error("separable_conv2d", S(x, dk, f32((1, 1, 5, 4))), "separable_conv2d",
                 "expects 5 channels but the depthwise step gives 6")
    expect_error("separable_conv2d", S(x, dk, f32((2, 1, 6, 4))), "separable_conv2d",
                 "spatial size 1")
    expect_error("separable_conv2d", S(x, dk, None), "separable_conv2d",
                 "pointwise_kernel is NULL")
    x1 = f32((2, 8, 3))
    S1 = kc.separable1d_args
    expect_error("separable_conv1d", S1(x1, f32((3, 3, 2)), f32((1, 6, 4)), 1, "causal"),
                 "separable_conv1d", "'same' or 'valid'")
    expect_error("separable_conv1d", S1(x1, f32((3, 3, 2)), f32((1, 6, 4)), 1, "valid", 9),
                 "separable_conv1d", "unknown data_format 9")


def test_pool_errors():
    x = f32((2, 4, 4, 3))
    P = kc.pool_args
    expect_error("pool2d", P(x, (2, 2), None, "valid", None, 5), "pool2d", "unknown pool_mode 5")
    # padding is validated before pool_mode
    expect_error("pool2d", P(x, (2, 2), None, 9, None, 5), "pool2d", "unknown padding 9")
    expect_error("pool2d", P(x, (2, 2), None, "causal"), "pool2d", "'same' or 'valid'")
    expect_error("pool2d", P(x, None), "pool2d", "pool_size is NULL")
    expect_error("pool2d", P(x, (0, 2)), "pool2d", "pool_size must be positive")
    expect_error("pool2d", P(x, (2, 2), (1, 0)), "pool2d", "strides must be positive")
    expect_error("pool2d", P(x, (2, 2, 2)), "pool2d", "pool_size must have 2 entries")
    expect_error("pool2d", P(x, (5, 2)), "pool2d",
                 "pool window (5) is larger than the padded input (4)")
    expect_error("pool2d", P(f32((4, 4, 3)), (2, 2)), "pool2d", "x must have rank 4")
    expect_error("pool2d", P(x, (2, 2), None, "valid", 3), "pool2d", "unknown data_format 3")
    expect_error("pool2d", P(const(np.zeros((2, 4, 4, 3), np.int64)), (2, 2)), "pool2d",
                 "x must be floating")
    expect_error("pool3d", P(x, (2, 2, 2)), "pool3d", "x must have rank 5")
    expect_error("pool3d", P(f32((1, 4, 4, 4, 1)), (2, 2)), "pool3d",
                 "pool_size must have 3 entries")


@pytest.mark.parametrize("xs,ks", [((4, 12, 12, 32), (3, 3, 32, 32)),  # oneDNN: large
                                   ((2, 7, 6, 3), (3, 3, 3, 4)),  # oneDNN: few channels
                                   ((3, 6, 5, 9), (3, 3, 9, 5)),  # products of gathered windows
                                   ((2, 5, 6, 8), (1, 1, 8, 4))])  # products of x itself
def test_conv2d_channels_last_paths(xs, ks):
    """Channels last in float32: small problems over 8 channels or more are matrix products over
    gathered windows (their gradients too), the others oneDNN's kernels; both equal float64's
    loops, with a fused bias and relu too."""
    x, k = R.standard_normal(xs), R.standard_normal(ks)
    b = R.standard_normal(ks[-1])
    f32_matches_f64(lambda a, w: kc.conv2d(a, w, (1, 1), "same", LAST, (1, 1)), x, k)
    def fused(a, w, c):
        y = kb.op("bias_add", kc.conv2d(a, w, (1, 1), "same", LAST, (1, 1)), c, kb.CHANNELS_LAST)
        return kb.op("relu", y, 0.0, None, 0.0)
    f32_matches_f64(fused, x, k, b)
