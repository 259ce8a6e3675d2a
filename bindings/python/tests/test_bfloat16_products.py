"""bfloat16 products (dot, batch_dot, the convolutions and their gradients) against float32's on
the same bfloat16 values: on a CPU with bf16 arithmetic they run on oneDNN's bf16 kernels, else
on float32 kernels over widened copies; either way each result is the float32 product rounded
once to bfloat16 (accumulated in float32), so it is within half a bfloat16 step (2^-9 of its
value) of float32's, plus float32's own accumulation error."""
import numpy as np
import pytest

import kbackend as K

rng = np.random.default_rng(7)


def bf16_values(shape):
    """float32 values that bfloat16 holds exactly (8 significant bits)."""
    x = rng.standard_normal(shape).astype(np.float32)
    bits = x.view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def run_both(build, *arrays):
    """build(*tensors) evaluated on bfloat16 tensors (cast back to float32) and on float32 ones;
    also returns the scale of each value (build on the absolute values) for the tolerance."""
    outs = []
    for dtype in ("bfloat16", "float32"):
        ts = [K.cast(K.constant(a), dtype) for a in arrays]
        outs.append([K.eval(K.cast(y, "float32")) for y in build(*ts)])
    return outs


def assert_bf16_close(got, ref, scale, roundings=1):
    # Rounding to bfloat16 moves a value by at most half a step, 2^-8 of it; float32's
    # accumulation over k terms by about k * 2^-24 of the sum of their magnitudes. A result
    # rounded twice (a product, then a bias added to it) may also be off by the first rounding of
    # the product, a step of its scale.
    tol = 2.0**-8 * (np.abs(ref) + (roundings - 1) * scale) + 1e-5 * scale + 1e-30
    np.testing.assert_array_less(np.abs(got - ref), tol)


def check(build, *arrays, roundings=1):
    (got, ref) = run_both(build, *arrays)
    scale = run_both(build, *[np.abs(a) for a in arrays])[1]
    for g, r, s in zip(got, ref, scale):
        assert g.shape == r.shape
        assert np.isfinite(g).all()
        assert_bf16_close(g, r, np.abs(s) + np.abs(r), roundings)


@pytest.mark.parametrize("m,k,n", [(1, 7, 3), (33, 65, 17), (128, 256, 96)])
def test_dot(m, k, n):
    a, b = bf16_values((m, k)), bf16_values((k, n))
    check(lambda x, y: [K.dot(x, y), K.dot(K.transpose(y), K.transpose(x))], a, b)


def test_dot_bias_relu_and_gradient():
    a, b, c = bf16_values((40, 64)), bf16_values((64, 24)), bf16_values((24,))

    def build(x, w, bias):
        y = K.relu(K.bias_add(K.dot(x, w), bias))
        gx, gw = K.gradients(K.sum(y * y), [x, w])
        return [y, gx, gw]

    got, ref = run_both(build, a, b, c)
    scale = run_both(build, np.abs(a), np.abs(b), np.abs(c))[1][0]
    assert_bf16_close(got[0], ref[0], scale, roundings=2)
    for g, r in zip(got[1:], ref[1:]):
        assert np.isfinite(g).all()
        np.testing.assert_allclose(g, r, rtol=0.05, atol=0.05 * np.abs(r).max())


def test_batch_dot():
    a, b = bf16_values((6, 20, 32)), bf16_values((6, 32, 12))
    check(lambda x, y: [K.batch_dot(x, y, axes=(2, 1)), K.batch_dot(x, x, axes=(2, 2))], a, b)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("padding,strides", [("valid", (1, 1)), ("same", (2, 2))])
def test_conv2d_and_gradients(data_format, padding, strides):
    c, oc = 16, 24
    shape = (2, 11, 13, c) if data_format == "channels_last" else (2, c, 11, 13)
    x, k = bf16_values(shape), bf16_values((3, 3, c, oc))

    def forward(xt, kt):
        return K.conv2d(xt, kt, strides=strides, padding=padding, data_format=data_format)

    check(lambda xt, kt: [forward(xt, kt)], x, k)

    def build(xt, kt):
        y = forward(xt, kt)
        return [y] + K.gradients(K.sum(y * y), [xt, kt])

    got, ref = run_both(build, x, k)
    for g, r in zip(got, ref):
        assert g.shape == r.shape and np.isfinite(g).all()
        np.testing.assert_allclose(g, r, rtol=0.05, atol=0.02 * np.abs(r).max())


def test_conv2d_bias_relu_fused():
    x, k, b = bf16_values((1, 9, 9, 32)), bf16_values((3, 3, 32, 64)), bf16_values((64,))
    conv = lambda xt, kt, bt: [K.relu(K.bias_add(K.conv2d(xt, kt, padding="same"), bt))]
    check(conv, x, k, b, roundings=2)


def test_conv1d_and_depthwise():
    x, k = bf16_values((3, 40, 16)), bf16_values((5, 16, 8))
    check(lambda xt, kt: [K.conv1d(xt, kt, padding="causal")], x, k)
    x2, dk = bf16_values((2, 10, 10, 16)), bf16_values((3, 3, 16, 2))
    check(lambda xt, kt: [K.depthwise_conv2d(xt, kt, padding="same")], x2, dk)
