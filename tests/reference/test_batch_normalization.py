"""batch_normalization and normalize_batch_in_training (docs/keras_semantics.md section 11) against
NumPy references.

Values of every path (fused, broadcast, regular) in float32 and float64, with and without beta and
gamma, the returned (Bessel-corrected or not) variance and unknown batch sizes; first gradients by
central finite differences in float64; bad inputs, whose messages must start with the Keras
function's name. The primitives behind normalize_batch_in_training (their paths, precision and
second derivatives) are in test_batch_norm.py.
"""
import ctypes
from ctypes import c_void_p

import numpy as np
import pytest

import kb
from kb import const, error_of, i64, op
from kb_conv import randn, to_first
from kb import fd_check, reduce_sum
from kb_layers import FUSED_EPS, normalize_batch_in_training, np_moments

F32, F64 = kb.F32, kb.F64
lib = kb.lib


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    return op("batch_normalization", x, mean, var, beta, gamma, axis, epsilon)


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


R = np.random.default_rng(7)


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
