"""normalize_batch_in_training through its primitives (BatchNorm, BatchCenteredDot): which paths
take them, their precision (two-pass variance, double sums, 16-bit floats), sums that do not
depend on the thread count, and second derivatives. Values and first gradients of every path are
in test_batch_normalization.py."""
import ctypes
from ctypes import c_double, c_void_p

import numpy as np
import pytest

import kb
from kb import BF16, F16, F32, const, fd_check, i64, narrow_store, narrow_values, op
from kb import reduce_sum as total
from kb_layers import FUSED_EPS, np_moments
from kb_layers import normalize_batch_in_training as normalize_batch

lib = kb.lib


PLAN_SCRIPT = r"""
import sys
import numpy as np
import kb
from kb import reduce_sum as total
from kb_layers import normalize_batch_in_training as normalize_batch
shape, axes = {"nhwc": ((4, 3, 2, 5), [0, 1, 2]), "nchw": ((4, 3, 2, 5), [0, 2, 3]),
               "dense": ((6, 4), [0]), "two_kept": ((4, 3, 2, 5), [0, 1]),
               "apart": ((3, 5, 4), [1]), "gamma_per_row": ((3, 5, 4), [0, 1])}[sys.argv[1]]
x = kb.placeholder([-1] + list(shape[1:]), kb.F32)
c = int(np.prod([d for i, d in enumerate(shape) if i not in axes]))
gamma = kb.variable(np.ones((5, 1) if sys.argv[1] == "gamma_per_row" else c, np.float32))
normed, mean, var = normalize_batch(x, gamma, None, axes)
loss = total(kb.op("square", normed))
grads = kb.gradients(loss, [x, gamma])
kb.Function([x], [normed, mean, var] + grads)(np.ones(shape, np.float32))
"""


@pytest.mark.parametrize("case,primitives", [("nhwc", True), ("nchw", True), ("dense", True),
                                             ("two_kept", True), ("apart", False)])
def test_paths_with_adjacent_kept_axes_use_the_primitives(case, primitives):
    steps = kb.plan_steps(PLAN_SCRIPT, case)
    assert ("BatchNorm" in steps) == primitives, steps
    assert ("BatchCenteredDot" in steps) == primitives, steps
    if primitives:  # the variance's sum and the gradient's
        assert steps.count("BatchCenteredDot") == 2, steps


def test_parameters_that_only_broadcast_keep_the_composition():
    """A gamma of shape (5, 1) against x (3, 5, 4) normalized over [0, 1] broadcasts along the
    batch rows, not the channels: the regular path's composition keeps that meaning."""
    assert "BatchNorm" not in kb.plan_steps(PLAN_SCRIPT, "gamma_per_row")


@pytest.mark.parametrize("xs,axes", [((64, 3, 2, 5), [0, 1, 2]), ((64, 3, 2, 5), [0, 2, 3]),
                                     ((512, 4), [0])])
def test_variance_of_values_far_from_zero(xs, axes):
    """Two passes (the mean, then the squares of x - mean) in double: a float32 variance 1e-8 of
    the square of the mean stays exact to float32's precision, where E[x^2] - E[x]^2 would lose
    every digit."""
    rng = np.random.default_rng(1)
    x = (1e4 + rng.standard_normal(xs)).astype(np.float32)
    _, mean, var = normalize_batch(const(x), None, None, axes, 1e-3)
    r_mean, r_var = kb.run([mean, var])
    m, v = np_moments(x.astype(np.float64), axes)
    if axes == [0, 1, 2]:
        n = np.prod([xs[i] for i in axes])
        v = v * n / (n - 1)
    np.testing.assert_allclose(r_mean, m, rtol=1e-6)
    np.testing.assert_allclose(r_var, v, rtol=2e-4)


@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("xs,axes", [((8, 3, 2, 4), [0, 1, 2]), ((8, 4, 3, 2), [0, 2, 3])])
def test_16_bit_floats(dtype, xs, axes):
    """Computed in float, rounded once: within a few 16-bit ulps of the exact normalization of the
    16-bit inputs."""
    rng = np.random.default_rng(2)
    c = xs[3] if axes == [0, 1, 2] else xs[1]
    xv = narrow_store(rng.standard_normal(xs) * 2 + 1, dtype)
    gv = narrow_store(rng.standard_normal(c), dtype)
    bv = narrow_store(rng.standard_normal(c), dtype)
    x, gamma, beta = (kb.variable(a, dtype) for a in (xv, gv, bv))
    normed, mean, var = normalize_batch(x, gamma, beta, axes)
    r = [narrow_values(a, dtype).astype(np.float64) for a in kb.run([normed, mean, var])]
    x64 = narrow_values(xv, dtype).astype(np.float64)
    g64, b64 = (narrow_values(a, dtype).astype(np.float64) for a in (gv, bv))
    m, v = np_moments(x64, axes)
    shape = [1] * 4
    shape[3 if axes == [0, 1, 2] else 1] = c
    eps = FUSED_EPS if axes == [0, 1, 2] else 1e-3
    expected = ((x64 - m.reshape(shape)) / np.sqrt(v.reshape(shape) + eps) * g64.reshape(shape)
                + b64.reshape(shape))
    ulp = 2.0 ** -10 if dtype == F16 else 2.0 ** -7
    np.testing.assert_allclose(r[0], expected, rtol=4 * ulp, atol=8 * ulp)
    np.testing.assert_allclose(r[1], m, rtol=2 * ulp, atol=2 * ulp)
    n = np.prod([xs[i] for i in axes])
    v_ret = v * n / (n - 1) if axes == [0, 1, 2] else v
    np.testing.assert_allclose(r[2], v_ret, rtol=4 * ulp)


THREADS_SCRIPT = r"""
import sys
import numpy as np
import kb
from kb import reduce_sum as total
from kb_layers import normalize_batch_in_training as normalize_batch
kb.lib.kb_set_num_threads(int(sys.argv[1]))
rng = np.random.default_rng(3)
out = []
for shape, axes in [((64, 32, 32, 8), [0, 1, 2]), ((16, 8, 64, 64), [0, 2, 3])]:
    xv = rng.standard_normal(shape) + 3  # float64: a double sum split otherwise differs
    x = kb.variable(xv, kb.F64)
    normed, mean, var = normalize_batch(x, None, None, axes)
    loss = total(kb.op("multiply", normed, kb.const(xv[::-1].copy())))
    out += kb.run([mean, var] + kb.gradients(loss, [x]))
np.save(sys.argv[2], np.concatenate([a.ravel() for a in out]))
"""


def test_sums_do_not_depend_on_the_thread_count(tmp_path):
    one, two = kb.results_by_thread_count(THREADS_SCRIPT, tmp_path)
    np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("xs,axes", [((3, 2, 2, 3), [0, 1, 2]), ((3, 3, 2, 2), [0, 2, 3]),
                                     ((5, 3), [0])])
def test_second_derivatives(xs, axes):
    """The gradient of a weighted sum of the first gradient (as a gradient penalty takes it)
    against central finite differences of that first gradient, which the library computes."""
    rng = np.random.default_rng(4)
    c = xs[-1] if axes == list(range(len(xs) - 1)) else xs[1]
    w = const(rng.standard_normal(xs))

    def first_gradient(x, gamma):
        normed, mean, var = normalize_batch(x, gamma, None, axes)
        loss = op("add", total(op("multiply", op("tanh", normed), w)),
                  total(op("multiply", op("square", mean), op("sqrt", var))))
        return kb.gradients(loss, [x])[0]

    fd_check(first_gradient, rng.standard_normal(xs), rng.standard_normal(c), rtol=1e-5,
             atol=1e-6)


def status_of_normalize(x, gamma, beta, axes):
    outs = [c_void_p() for _ in range(3)]
    st = lib.kb_normalize_batch_in_training(x, gamma, beta, i64(axes), len(axes), c_double(1e-3),
                                            *[ctypes.byref(o) for o in outs])
    return st, lib.kb_last_error_message().decode()


def test_bad_parameters_keep_their_messages():
    x = const(np.zeros((2, 3, 4, 5), np.float32))
    st, msg = status_of_normalize(x, const(np.ones(3, np.float32)), None, [0, 1, 2])
    assert st != 0 and "gamma has shape (3,) (3 elements) but x has 5 channels" in msg, msg
    st, msg = status_of_normalize(x, None, const(np.ones(5, np.float32)), [0, 2, 3])
    assert st != 0 and "beta has shape (5,) (5 elements)" in msg, msg
    assert "has 3 positions outside the reduction axes" in msg, msg


def test_empty_batch_gives_nan_moments():
    """No values to average: the mean and variance are NaN (0 / 0), as the composition's."""
    x = kb.placeholder([-1, 3], F32)
    normed, mean, var = normalize_batch(x, None, None, [0])
    r = kb.Function([x], [normed, mean, var])(np.zeros((0, 3), np.float32))
    assert r[0].shape == (0, 3)
    assert np.isnan(r[1]).all() and np.isnan(r[2]).all()
