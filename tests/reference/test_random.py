"""random_uniform, random_normal, truncated_normal, random_binomial, their _like forms (the shape
of a tensor, taken when a function runs) and dropout (docs/keras_semantics.md sections 11 and 14).

Random tensors by their moments over large samples, same seed -> same numbers, successive calls ->
new numbers; dropout's mask, scaling, noise_shape and gradient; bad inputs, whose messages must
start with the Keras function's name.
"""
import ctypes
from ctypes import c_int64

import numpy as np
import pytest

import kb
from kb import const, error_of, i64, op
from kb_conv import randn
from kb import reduce_sum

F32, F64 = kb.F32, kb.F64
lib = kb.lib


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
