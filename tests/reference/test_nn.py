"""Activations, losses, l2_normalize, bias_add, in_top_k (docs/keras_semantics.md
sections 11, 12)."""
import ctypes

import numpy as np
import pytest

import kb
from kb import assert_close, const, error_of, ev, i64, op


def randn(rng, shape, dt, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(kb.NP_OF[dt])


def np_relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Keras 2.2.4 TF relu, step by step."""
    if alpha != 0 and max_value is None and threshold == 0:
        return np.maximum(alpha * x, x)
    y = x * (x > threshold) if threshold != 0 else np.maximum(x, 0)
    if max_value is not None:
        y = np.clip(y, 0, max_value)
    if alpha != 0:
        y = y - alpha * np.maximum(threshold - x, 0)
    return y


RELU = [(0.0, None, 0.0), (0.2, None, 0.0), (0.0, 6.0, 0.0), (0.0, 1.5, 0.0), (0.3, 2.0, 0.0),
        (0.0, None, 0.5), (0.1, None, 0.5), (0.0, None, -0.5), (0.1, 2.0, 0.5), (0.2, 1.0, -0.7),
        (0.0, 1.0, -0.7), (1.5, None, 0.0)]


@pytest.mark.parametrize("alpha,max_value,threshold", RELU)
def test_relu(alpha, max_value, threshold, dt, mode, rng):
    x = randn(rng, (4, 6), dt, 2.0)
    x.flat[:4] = [threshold, 0.0, max_value or 3.0, -threshold]  # the kinks themselves
    mv = None if max_value is None else ctypes.byref(ctypes.c_double(max_value))
    r = ev(lambda t: op("relu", t, alpha, mv, threshold), x, mode=mode)
    assert_close(r, np_relu(x.astype(np.float64), alpha, max_value, threshold), dt)


def test_relu_net_result(dt):
    # x > theta -> min(x, max_value); x <= theta -> alpha * (x - theta); strict at theta
    x = np.array([-2.0, -0.5, -0.25, 0.0, 0.5, 1.0, 3.0], kb.NP_OF[dt])
    mv = ctypes.byref(ctypes.c_double(2.0))
    r = ev(lambda t: op("relu", t, 0.1, None, -0.5), x)
    assert_close(r, [-0.15, 0.0, -0.25, 0.0, 0.5, 1.0, 3.0], dt)
    r = ev(lambda t: op("relu", t, 0.1, mv, -0.5), x)  # values in (theta, 0) become 0
    assert_close(r, [-0.15, 0.0, 0.0, 0.0, 0.5, 1.0, 2.0], dt)
    r = ev(lambda t: op("relu", t, 0.0, None, 1.0), x)  # jumps at theta: x itself, not x-theta
    assert_close(r, [0, 0, 0, 0, 0, 0, 3.0], dt)


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_elu(alpha, dt, mode, rng):
    x = randn(rng, (3, 5), dt, 2.0)
    x.flat[0] = 0.0
    expected = np.where(x > 0, x, alpha * (np.exp(np.minimum(x, 0)) - 1))
    assert_close(ev(lambda t: op("elu", t, alpha), x, mode=mode), expected, dt)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACT = {
    "sigmoid": np_sigmoid,
    "hard_sigmoid": lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    "tanh": np.tanh,
    "softplus": lambda x: np.logaddexp(0, x),
    "softsign": lambda x: x / (1 + np.abs(x)),
}


@pytest.mark.parametrize("name", sorted(ACT))
def test_activation(name, dt, mode, rng):
    x = randn(rng, (4, 5), dt, 3.0)
    x.flat[:6] = [0.0, -2.5, 2.5, 40.0, -40.0, 1e-3]
    with np.errstate(over="ignore"):
        expected = ACT[name](x.astype(np.float64))
    assert_close(ev(lambda t: op(name, t), x, mode=mode), expected, dt)


def test_softplus_sigmoid_extremes(dt):
    x = np.array([-800.0, -100.0, 100.0, 800.0], kb.NP_OF[dt])
    x = x[np.isfinite(x)]
    with np.errstate(over="ignore"):
        assert_close(ev(lambda t: op("softplus", t), x), np.logaddexp(0, x.astype(float)), dt)
        assert_close(ev(lambda t: op("sigmoid", t), x), np_sigmoid(x.astype(float)), dt)


def np_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@pytest.mark.parametrize("shape,axis", [((5,), -1), ((5,), 0), ((3, 4), -1), ((3, 4), 0),
                                        ((2, 3, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), -3),
                                        ((2, 3, 4), 0)])
def test_softmax(shape, axis, dt, mode, rng):
    x = randn(rng, shape, dt, 3.0)
    x.flat[0] = 500.0  # stable: the max is subtracted
    r = ev(lambda t: op("softmax", t, axis), x, mode=mode)
    assert_close(r, np_softmax(x.astype(np.float64), axis), dt)


# ---- losses --------------------------------------------------------------------------------
def np_cce(target, output, axis=-1, eps=1e-7):
    p = output / np.sum(output, axis=axis, keepdims=True)
    p = np.clip(p, eps, 1 - eps)
    return -np.sum(target * np.log(p), axis=axis)


def np_cce_logits(target, logits):
    ls = logits - np.max(logits, -1, keepdims=True)
    ls = ls - np.log(np.sum(np.exp(ls), -1, keepdims=True))
    return -np.sum(target * ls, axis=-1)


@pytest.mark.parametrize("shape,axis", [((4, 5), -1), ((4, 5), 1), ((4, 5), 0), ((2, 3, 4), -1),
                                        ((2, 3, 4), 1), ((2, 3, 4), 0), ((2, 3, 4), 2)])
def test_categorical_crossentropy(shape, axis, dt, mode, rng):
    target = rng.random(shape).astype(kb.NP_OF[dt])
    output = (rng.random(shape) * 3).astype(kb.NP_OF[dt])  # not normalised
    output.flat[:2] = [0.0, 1e-12]  # clipped to eps after renormalisation
    r = ev(lambda t, o: op("categorical_crossentropy", t, o, 0, axis), target, output, mode=mode)
    assert_close(r, np_cce(target.astype(float), output.astype(float), axis), dt)


def test_categorical_crossentropy_clips_one(dt):
    # p = 1 is clipped to 1 - eps, p = 0 to eps
    target = np.array([[1.0, 0.0], [0.0, 1.0]], kb.NP_OF[dt])
    output = np.array([[1.0, 0.0], [1.0, 0.0]], kb.NP_OF[dt])
    eps = 1e-7
    expected = [-np.log(1 - eps), -np.log(eps)]
    r = ev(lambda t, o: op("categorical_crossentropy", t, o, 0, -1), target, output)
    assert_close(r, expected, dt, rtol=1e-5 if dt == kb.F32 else 1e-12)


def test_categorical_crossentropy_follows_epsilon(dt, rng):
    kb.check(kb.lib.kb_set_epsilon(1e-3))
    target = rng.random((3, 4)).astype(kb.NP_OF[dt])
    output = np.array([[0.0, 0.0, 1.0, 1.0]] * 3, kb.NP_OF[dt])
    r = ev(lambda t, o: op("categorical_crossentropy", t, o, 0, -1), target, output)
    assert_close(r, np_cce(target.astype(float), output.astype(float), -1, 1e-3), dt)


@pytest.mark.parametrize("shape,axis", [((4, 5), -1), ((4, 5), 0), ((2, 3, 4), -1),
                                        ((2, 3, 4), 1)])
def test_categorical_crossentropy_logits(shape, axis, dt, mode, rng):
    target = rng.random(shape).astype(kb.NP_OF[dt])
    logits = randn(rng, shape, dt, 5.0)
    logits.flat[0] = 300.0
    # from_logits: the last axis, whatever `axis` says; no clipping
    r = ev(lambda t, o: op("categorical_crossentropy", t, o, 1, axis), target, logits, mode=mode)
    assert_close(r, np_cce_logits(target.astype(float), logits.astype(float)), dt)


def np_scce(target, output, axis=-1, from_logits=False, eps=1e-7):
    out = np.moveaxis(output, axis, -1)
    if not from_logits:
        out = np.log(np.clip(out, eps, 1 - eps))
    c = out.shape[-1]
    logits = out.reshape(-1, c)
    t = target.reshape(-1).astype(np.int64)
    ls = logits - np.max(logits, -1, keepdims=True)
    ls = ls - np.log(np.sum(np.exp(ls), -1, keepdims=True))
    loss = -ls[np.arange(len(t)), t]
    return loss if output.ndim == 2 else loss.reshape(out.shape[:-1])


@pytest.mark.parametrize("from_logits", [0, 1])
@pytest.mark.parametrize("oshape,tshape,axis", [((6, 4), (6,), -1), ((6, 4), (6, 1), -1),
                                                ((6, 4), (6,), 1), ((2, 3, 4), (2, 3), -1),
                                                ((2, 3, 4), (6,), 2), ((2, 4, 3), (2, 3), 1),
                                                ((4, 6), (6,), 0)])
def test_sparse_categorical_crossentropy(oshape, tshape, axis, from_logits, dt, rng):
    c = oshape[axis]
    target = rng.integers(0, c, tshape)
    if from_logits:
        output = randn(rng, oshape, dt, 3.0)
    else:
        output = rng.random(oshape).astype(kb.NP_OF[dt])
        output.flat[:3] = [0.0, 1.0, 1e-12]
    expected = np_scce(target, output.astype(float), axis, from_logits)
    for ttype in (np.int32, np.int64, kb.NP_OF[dt]):
        r = ev(lambda t, o: op("sparse_categorical_crossentropy", t, o, from_logits, axis),
               target.astype(ttype), output)
        assert_close(r, expected, dt)


def test_sparse_categorical_crossentropy_renormalises_after_clipping(dt):
    # -log(clip(p)_t / sum_c clip(p)_c): not the order of categorical_crossentropy
    output = np.array([[0.0, 0.5, 0.25]], kb.NP_OF[dt])
    target = np.array([1], np.int32)
    r = ev(lambda t, o: op("sparse_categorical_crossentropy", t, o, 0, -1), target, output)
    assert_close(r, [-np.log(0.5 / (0.75 + 1e-7))], dt)


def test_sparse_categorical_crossentropy_unknown_batch(dt, rng):
    pt, po = kb.placeholder([-1], kb.I64), kb.placeholder([-1, 5], dt)
    f = kb.Function([pt, po], [op("sparse_categorical_crossentropy", pt, po, 0, -1)])
    for n in (1, 7):
        t, o = rng.integers(0, 5, n), rng.random((n, 5)).astype(kb.NP_OF[dt])
        assert_close(f(t, o)[0], np_scce(t, o.astype(float)), dt)


def test_sparse_categorical_crossentropy_unknown_classes(dt, rng):
    """The classes' count known only when the function runs (TensorFlow takes it), rank 3 with
    every dim unknown, from logits or probabilities; the gradient of the logits is
    softmax - one_hot."""
    pt, po = kb.placeholder([-1, -1], kb.I32), kb.placeholder([-1, -1, -1], dt)
    probs = op("sparse_categorical_crossentropy", pt, po, 0, -1)
    logits = op("sparse_categorical_crossentropy", pt, po, 1, -1)
    assert logits.shape == (None, None)
    (g,) = kb.gradients(op("sum", logits, None, 0, 0), [po])
    f = kb.Function([pt, po], [probs, logits, g])
    for shape in ((2, 3, 4), (1, 2, 7)):
        c = shape[-1]
        t = rng.integers(0, c, shape[:2]).astype(np.int32)
        o = rng.random(shape).astype(kb.NP_OF[dt])
        r = f(t, o)
        assert_close(r[0], np_scce(t, o.astype(float), -1, False), dt)
        assert_close(r[1], np_scce(t, o.astype(float), -1, True), dt)
        e = np.exp(o - o.max(-1, keepdims=True))
        assert_close(r[2], e / e.sum(-1, keepdims=True) - np.eye(c)[t], dt)


def np_bce(target, output, from_logits=False, eps=1e-7):
    """The clip bounds and 1 - p are rounded to output's dtype, as in TensorFlow."""
    z = output.astype(np.float64)
    if not from_logits:
        p = np.clip(output, output.dtype.type(eps), output.dtype.type(1 - eps))
        z = np.log(p.astype(np.float64) / (1 - p).astype(np.float64))
    return np.maximum(z, 0) - z * target + np.log1p(np.exp(-np.abs(z)))


@pytest.mark.parametrize("from_logits", [0, 1])
def test_binary_crossentropy(from_logits, dt, mode, rng):
    target = rng.random((4, 5)).astype(kb.NP_OF[dt])
    target.flat[:2] = [0.0, 1.0]
    if from_logits:
        output = randn(rng, (4, 5), dt, 4.0)
        output.flat[:2] = [-200.0, 200.0]
    else:
        output = rng.random((4, 5)).astype(kb.NP_OF[dt])
        output.flat[:4] = [0.0, 1.0, 1e-12, 1 - 1e-12]
    r = ev(lambda t, o: op("binary_crossentropy", t, o, from_logits), target, output, mode=mode)
    assert_close(r, np_bce(target.astype(float), output, from_logits), dt)


def np_l2_normalize(x, axis=None):
    return x / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), 1e-12))


@pytest.mark.parametrize("axes", [None, [-1], [0], [1], [0, 1], [-1, 0]], ids=str)
def test_l2_normalize(axes, dt, mode, rng):
    x = randn(rng, (3, 4), dt)
    x[1] = 0.0  # a zero row stays zero
    x[2] = [1e-7, -2e-7, 0.0, 1e-7]  # a tiny row: the epsilon sits inside the max
    r = ev(lambda t: op("l2_normalize", t, i64(axes), 0 if axes is None else len(axes)), x,
           mode=mode)
    assert_close(r, np_l2_normalize(x.astype(float), None if axes is None else tuple(axes)), dt)


def test_l2_normalize_tiny_values(dt):
    x = np.array([1e-7, 0.0], kb.NP_OF[dt])
    r = ev(lambda t: op("l2_normalize", t, None, 0), x)
    assert_close(r, [0.1, 0.0], dt)  # 1e-7 / sqrt(max(1e-14, 1e-12))


@pytest.mark.parametrize("xshape", [(2, 3), (2, 4, 3), (2, 4, 5, 3), (2, 2, 3, 4, 3),
                                    (2, 1, 2, 1, 2, 3)])
@pytest.mark.parametrize("fmt", [kb.CHANNELS_LAST, kb.CHANNELS_FIRST])
def test_bias_add_vector(xshape, fmt, dt, mode, rng):
    x = randn(rng, xshape, dt)
    channels_first = fmt == kb.CHANNELS_FIRST and 3 <= len(xshape) <= 5
    c = xshape[1] if channels_first else xshape[-1]
    bias = randn(rng, (c,), dt)
    if channels_first:
        expected = x + bias.reshape((1, c) + (1,) * (len(xshape) - 2))
    else:
        expected = x + bias
    r = ev(lambda t, b: op("bias_add", t, b, fmt), x, bias, mode=mode)
    assert_close(r, expected, dt)


@pytest.mark.parametrize("xshape", [(2, 4, 3), (2, 4, 5, 3), (2, 2, 3, 4, 3)])
def test_bias_add_full_channels_last(xshape, dt, rng):
    x = randn(rng, xshape, dt)
    bias = randn(rng, xshape[1:], dt)
    r = ev(lambda t, b: op("bias_add", t, b, kb.CHANNELS_LAST), x, bias)
    assert_close(r, x + bias[None], dt)


@pytest.mark.parametrize("xshape", [(2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 4, 5)])
def test_bias_add_full_channels_first(xshape, dt, rng):
    # bias given as (spatial..., C) is *reshaped* (not transposed) to (1, C, spatial...)
    x = randn(rng, xshape, dt)
    c, spatial = xshape[1], xshape[2:]
    bias = randn(rng, spatial + (c,), dt)
    expected = x + bias.reshape((1, c) + spatial)
    r = ev(lambda t, b: op("bias_add", t, b, kb.CHANNELS_FIRST), x, bias)
    assert_close(r, expected, dt)
    if len(xshape) == 4:  # the documented example: (b0, b1, b2) -> (1, b2, b0, b1)
        flat = bias.reshape(-1)
        b0, b1, b2 = bias.shape
        np.testing.assert_array_equal(flat.reshape(1, b2, b0, b1), bias.reshape((1, c) + spatial))


def test_bias_add_unknown_batch(dt, rng):
    p = kb.placeholder([-1, 3, 4], dt)
    bias = randn(rng, (3,), dt)
    f = kb.Function([p], [op("bias_add", p, const(bias), kb.CHANNELS_FIRST)])
    for n in (1, 3):
        x = randn(rng, (n, 3, 4), dt)
        assert_close(f(x)[0], x + bias[None, :, None], dt)


def np_in_top_k(pred, targets, k):
    t = pred[np.arange(len(targets)), targets]
    greater = np.sum(pred > t[:, None], axis=1)
    return np.all(np.isfinite(pred), axis=1) & (greater < k)


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("ttype", [np.int32, np.int64])
def test_in_top_k(k, ttype, dt):
    pred = np.array([[0.1, 0.5, 0.5, 0.2], [0.4, 0.3, 0.2, 0.1], [0.3, 0.3, 0.3, 0.3],
                     [0.1, np.nan, 0.9, 0.2], [0.0, 0.2, np.inf, 0.1], [5.0, 4.0, 4.0, 4.0]],
                    kb.NP_OF[dt])
    targets = np.array([2, 3, 0, 2, 1, 3], ttype)
    with np.errstate(invalid="ignore"):
        expected = np_in_top_k(pred, targets, k)
    r = ev(lambda p, t: op("in_top_k", p, t, k), pred, targets)
    assert_close(r, expected, kb.BOOL)


def test_in_top_k_ties_count_as_in():
    pred = np.array([[0.3, 0.3, 0.3, 0.3], [0.5, 0.5, 0.1, 0.9]], np.float32)
    r = ev(lambda p, t: op("in_top_k", p, t, 1), pred, np.array([3, 1], np.int32))
    np.testing.assert_array_equal(r, [True, False])
    r = ev(lambda p, t: op("in_top_k", p, t, 2), pred, np.array([3, 1], np.int32))
    np.testing.assert_array_equal(r, [True, True])


# ---- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ACT))
def test_activation_errors(name):
    assert error_of(name, None).startswith(name + ":")
    assert error_of(name, const(np.array([1, 2], np.int32))).startswith(name + ":")


def test_nn_errors():
    x = const(np.ones((2, 3), np.float32))
    xi = const(np.ones((2, 3), np.int32))
    assert error_of("relu", xi, 0.0, None, 0.0).startswith("relu:")
    assert error_of("relu", None, 0.0, None, 0.0).startswith("relu:")
    assert error_of("elu", xi, 1.0).startswith("elu:")
    assert error_of("softmax", x, 2).startswith("softmax:")
    assert error_of("softmax", x, -3).startswith("softmax:")
    assert error_of("softmax", xi, -1).startswith("softmax:")
    assert error_of("l2_normalize", x, i64([2]), 1).startswith("l2_normalize:")
    assert error_of("l2_normalize", xi, None, 0).startswith("l2_normalize:")
    assert error_of("l2_normalize", None, None, 0).startswith("l2_normalize:")


def test_loss_errors():
    t, o = const(np.ones((2, 3), np.float32)), const(np.ones((2, 3), np.float32))
    for name in ("categorical_crossentropy", "sparse_categorical_crossentropy"):
        ti = const(np.zeros(2, np.int32)) if name.startswith("sparse") else t
        assert error_of(name, ti, o, 0, -2).startswith(name + ":")  # only -1 or [0, rank)
        assert error_of(name, ti, o, 0, 2).startswith(name + ":")
        assert error_of(name, None, o, 0, -1).startswith(name + ":")
        assert error_of(name, ti, None, 0, -1).startswith(name + ":")
        assert error_of(name, ti, const(np.ones((2, 3), np.int32)), 0, -1).startswith(name + ":")
    assert error_of("categorical_crossentropy", t, const(np.ones((2, 4), np.float32)), 0,
                    -1).startswith("categorical_crossentropy:")
    assert error_of("categorical_crossentropy", const(np.ones((2, 3), np.float64)), o, 0,
                    -1).startswith("categorical_crossentropy:")
    assert error_of("binary_crossentropy", None, o, 0).startswith("binary_crossentropy:")
    assert error_of("binary_crossentropy", t, const(np.ones((2, 4), np.float32)),
                    0).startswith("binary_crossentropy:")
    assert error_of("binary_crossentropy", const(np.ones((2, 3), np.float64)), o,
                    0).startswith("binary_crossentropy:")
    assert error_of("sparse_categorical_crossentropy", const(np.zeros(3, np.int32)), o, 0,
                    -1).startswith("sparse_categorical_crossentropy:")


def test_bias_add_errors():
    x = const(np.ones((2, 3, 4), np.float32))
    assert error_of("bias_add", x, const(np.ones((1, 3, 4), np.float32)),
                    kb.CHANNELS_LAST).startswith("bias_add:")  # rank 3 bias for rank 3 x
    assert error_of("bias_add", x, const(np.ones(3, np.float32)),
                    kb.CHANNELS_LAST).startswith("bias_add:")
    assert error_of("bias_add", x, const(np.ones(4, np.float32)),
                    kb.CHANNELS_FIRST).startswith("bias_add:")
    assert error_of("bias_add", x, const(np.ones(4, np.float64)),
                    kb.CHANNELS_LAST).startswith("bias_add:")
    assert error_of("bias_add", x, const(np.ones(4, np.float32)), 7).startswith("bias_add:")
    assert error_of("bias_add", None, const(np.ones(4, np.float32)),
                    kb.CHANNELS_LAST).startswith("bias_add:")


def test_in_top_k_errors():
    p = const(np.ones((2, 3), np.float32))
    assert error_of("in_top_k", p, const(np.zeros(2, np.float32)), 1).startswith("in_top_k:")
    assert error_of("in_top_k", p, const(np.zeros(3, np.int32)), 1).startswith("in_top_k:")
    assert error_of("in_top_k", const(np.ones(3, np.float32)), const(np.zeros(3, np.int32)),
                    1).startswith("in_top_k:")
    assert error_of("in_top_k", None, const(np.zeros(2, np.int32)), 1).startswith("in_top_k:")
    f = kb.Function([], [op("in_top_k", p, const(np.array([0, 3], np.int32)), 1)])
    with pytest.raises(kb.KBError, match="in_top_k: target 3 is out of range"):
        f()


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_large(axis, dt, rng):
    x = randn(rng, (65, 257, 9), dt, 3.0)
    assert_close(ev(lambda t: op("softmax", t, axis), x), np_softmax(x.astype(float), axis), dt)


def test_losses_large(dt, rng):
    n, c = 1000, 37
    target = rng.integers(0, c, n)
    logits = randn(rng, (n, c), dt, 3.0)
    r = ev(lambda t, o: op("sparse_categorical_crossentropy", t, o, 1, -1), target, logits)
    assert_close(r, np_scce(target, logits.astype(float), -1, True), dt)
    onehot = np.eye(c)[target].astype(kb.NP_OF[dt])
    r = ev(lambda t, o: op("categorical_crossentropy", t, o, 1, -1), onehot, logits)
    assert_close(r, np_cce_logits(onehot.astype(float), logits.astype(float)), dt)
