"""Numerical stability at extreme inputs (docs/keras_semantics.md sections 6, 11, 12).

softmax, logsumexp, categorical_crossentropy, sparse_categorical_crossentropy and
binary_crossentropy (each from logits and from probabilities), sigmoid, softplus, tanh and
l2_normalize, in float32 and float64, at +-1e4, +-1e30 (float32) / +-1e300 (float64), subnormals
(float32 1e-40, float64 5e-324), zeros, mixed rows such as [1e4, 0, -1e4], NaN and +-inf; and the
gradients that are cheap to check there (softmax, logsumexp, the cross-entropies from logits,
sigmoid, softplus, tanh), which must stay finite.

The C ABI has no log_softmax (include/kbackend.h); its LogSoftmax primitive is reached through
categorical_crossentropy(from_logits=1), whose extreme rows are checked below.

The references are float64 NumPy computed carefully: the maximum subtracted before exp
(log-sum-exp), log1p / np.logaddexp for softplus and the logistic loss, the sigmoid of a negative
argument as exp(x) / (1 + exp(x)). Where Keras' TensorFlow backend rounds a constant to the
tensor's dtype (clip bounds, 1 - p), the reference does the same before continuing in float64.

Where the library departs from the mathematical value in the way TensorFlow does (softmax of a
row holding +inf, the logistic loss at infinite logits, l2_normalize whose sum of squares
overflows, a zero target times a -inf log-probability), the test asserts that documented
behaviour and says so. Four defects these tests found are fixed: the CPU's log-softmax
subtracted max + log(sum) as one term, maximum/minimum (so clip and l2_normalize) dropped a NaN,
and the sparse crossentropy from logits multiplied a -inf log-probability by a zero one-hot.
"""

import numpy as np
import pytest

import kb
from kb import F32, F64, assert_close, ev, i64, op

NP = kb.NP_OF
EPS = 1e-7  # K.epsilon(), the default the conftest restores after each test

# ---- tolerances ------------------------------------------------------------------------------
# One unit in the last place at 1: float32 2^-23 = 1.19e-7, float64 2^-52 = 2.2e-16.
ULP = {F32: 2.0 ** -23, F64: 2.0 ** -52}
# Relative, float32: 8 ulp (9.5e-7). The float32 exp, log, tanh and sigmoid are within 2 ulp
# (test_float_functions.py); subtracting a row's maximum from values near it is exact, and the
# row's sum, the division (softmax, l2_normalize), log(sum) + max (logsumexp) or
# (x - max) - log(sum) (log_softmax) add a few half-ulp roundings on top.
# Relative, float64: 64 ulp (1.4e-14). std::exp / std::log are within 1 ulp; the rest is the same
# handful of roundings. Both are far tighter than the failures looked for here (NaN, inf, 0 or a
# naive formula's total loss of precision).
RTOL = {F32: 8 * ULP[F32], F64: 64 * ULP[F64]}
# Absolute, for results that are differences of O(1) quantities and may be 0 (a loss of ~0 from
# x - max - log(sum), a gradient softmax - onehot, a probability next to 0): 8 ulp of 1 (float32)
# and 64 ulp of 1 (float64), i.e. the relative tolerance at the scale of the terms subtracted.
ATOL1 = {F32: 8 * ULP[F32], F64: 64 * ULP[F64]}
# Absolute, for results that are themselves subnormal (float64 5e-324 / 1e-6 in l2_normalize):
# 4 subnormal spacings, as a subnormal carries only the bits above the smallest one.
SUB_ATOL = {F32: 4 * float(np.finfo(np.float32).smallest_subnormal),
            F64: 4 * float(np.finfo(np.float64).smallest_subnormal)}

BIG = {F32: 1e30, F64: 1e300}       # far beyond exp's range, its square beyond the dtype's
HUGE = {F32: 3e38, F64: 1e308}      # near the largest finite value: HUGE - (-HUGE) overflows
TINY = {F32: 1e-40, F64: 5e-324}    # subnormal (float64 5e-324: the smallest one)
EDGE = {F32: 1e19, F64: 1e150}      # the largest scale whose squares still sum finitely

INF, NAN = np.inf, np.nan


def close(actual, expected, dt, rtol=None, atol=0.0):
    """actual (dtype dt) against the float64 reference rounded to dt; NaN matches NaN only,
    an infinity only the same infinity."""
    __tracebackhide__ = True  # the failing test's own line is the one to read
    try:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            assert_close(actual, np.asarray(expected, np.float64), dt,
                         rtol=RTOL[dt] if rtol is None else rtol, atol=atol)
    except AssertionError as e:
        # raised afresh here: pytest then formats no NumPy frames (parsing NumPy's testing
        # sources for each of the expected failures below would cost seconds)
        raise AssertionError(str(e)) from None


def arr(rows, dt):
    with np.errstate(over="ignore"):
        return np.array(rows, np.float64).astype(NP[dt])


def f64(a):
    return np.asarray(a, np.float64)


def grads_of(build, arrays, wrt):
    """The gradients of sum(build(*placeholders)) with respect to arrays[i], i in wrt."""
    phs = [kb.placeholder(list(a.shape), kb.CODE_OF[a.dtype]) for a in arrays]
    loss = op("sum", build(*phs), None, 0, 0)
    f = kb.Function(phs, kb.gradients(loss, [phs[i] for i in wrt]))
    return f(*arrays)


# ---- float64 references --------------------------------------------------------------------
def ref_log_softmax(x, axis=-1):
    """(x - max) - log(sum(exp(x - max))): exp never overflows, the largest term is exactly 1."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = x - np.max(x, axis, keepdims=True)
        return s - np.log(np.sum(np.exp(s), axis, keepdims=True))


def ref_softmax(x, axis=-1):
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x - np.max(x, axis, keepdims=True))
        return e / np.sum(e, axis, keepdims=True)


def ref_logsumexp(x, axis=None):
    """tf.reduce_logsumexp: M = max with a non-finite M replaced by 0, log(sum(exp(x - M))) + M."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        m = np.max(x, axis, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        r = np.log(np.sum(np.exp(x - m), axis, keepdims=True)) + m
    return np.squeeze(r, axis)


def ref_sigmoid(x):
    """1 / (1 + exp(-x)) for x >= 0, exp(x) / (1 + exp(x)) below: no overflow, no cancellation,
    relative accuracy down to the smallest results."""
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0, e) / (1.0 + e)


def ref_softplus(x):
    with np.errstate(invalid="ignore"):  # NaN in, NaN out
        return np.logaddexp(0.0, x)  # log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|))


def ref_logistic_loss(z, t):
    """sigmoid_cross_entropy_with_logits as TensorFlow writes it (IEEE float64 throughout)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z)))


def clip_bounds(dt):
    """clip_by_value's bounds converted to the tensor's dtype, as float64."""
    t = NP[dt]
    return float(t(EPS)), float(t(1 - EPS))


# ---- inputs ------------------------------------------------------------------------------------
def extreme_row_table(dt):
    """Rows of 3 logits on which a naive exp(x) / sum overflows, underflows or loses everything."""
    b, s = BIG[dt], TINY[dt]
    return {"1e4,0,-1e4": [1e4, 0.0, -1e4],              # mixed: the answer is [1, 0, 0]
            "near-1e4": [-1e4, -1e4 + 1, -1e4 + 2],      # naive exp underflows to 0 / 0
            "near1e4": [1e4, 1e4 - 1, 1e4 - 2],          # naive exp overflows to inf / inf
            "big,0,-big": [b, 0.0, -b],
            "-big,big,-big": [-b, b, -b],
            "big_tie": [b, b, b],                        # a tie far out: 1/3 each
            "-big_tie": [-b, -b, -b],
            "-big,-big,0": [-b, -b, 0.0],
            "tiny,0,-tiny": [s, 0.0, -s],                # subnormals: ~1/3 each
            "tiny_tie": [s, s, s],
            "zeros": [0.0, 0.0, 0.0],
            "ordinary": [0.5, -1.25, 2.0]}               # an ordinary row for comparison


ROW_IDS = list(extreme_row_table(F32))


def extreme_rows(dt, ids=None):
    table = extreme_row_table(dt)
    return arr([table[i] for i in (ids or ROW_IDS)], dt)


def overflowing_rows(dt):
    """x - max of these overflows to -inf; exp(-inf) = 0 is still the right share."""
    h = HUGE[dt]
    return arr([[h, -h, 0.0], [-h, 0.0, h]], dt)


# ---- softmax -------------------------------------------------------------------------------
@pytest.mark.parametrize("transposed", [False, True], ids=["axis-1", "axis0"])
def test_softmax_extreme_rows(transposed, dt, mode):
    x = np.concatenate([extreme_rows(dt), overflowing_rows(dt)])
    expected = ref_softmax(f64(x))
    if transposed:  # the same rows as columns: the strided (non-last-axis) path
        r = ev(lambda t: op("softmax", t, 0), np.ascontiguousarray(x.T), mode=mode).T
    else:
        r = ev(lambda t: op("softmax", t, -1), x, mode=mode)
    assert np.all(np.isfinite(r))
    # shares next to 0 (exp(-1e4) = 0): absolute 8 ulp of 1 (float32) / 64 ulp (float64)
    close(r, expected, dt, atol=ATOL1[dt])
    np.testing.assert_allclose(np.sum(f64(r), -1), 1.0, rtol=0, atol=4 * ATOL1[dt])


def test_softmax_inf_and_nan(dt, mode):
    x = arr([[0.5, -1.0, 2.0],
             [NAN, 0.0, 1.0],       # NaN: that row NaN, the others unaffected
             [-INF, 0.0, 1.0],      # -inf: a share of exactly 0, the rest as without it
             [-INF, -INF, 3.0],
             [1.0, 2.0, 3.0]], dt)
    r = ev(lambda t: op("softmax", t, -1), x, mode=mode)
    e01 = ref_softmax(np.array([0.0, 1.0]))
    expected = [ref_softmax(f64(x[0])), [NAN] * 3, [0.0, e01[0], e01[1]], [0.0, 0.0, 1.0],
                ref_softmax(f64(x[4]))]
    close(r, expected, dt, atol=ATOL1[dt])


def test_softmax_plus_inf_gives_nan_as_tensorflow(dt, mode):
    # The limit of softmax with +inf entries is 1 / (their count) there and 0 elsewhere. TensorFlow
    # (Keras 2.2.4 over TF 1.x) subtracts the row's maximum: inf - inf = NaN, and the whole row is
    # NaN. kbackend's Softmax counts a maximum that is not finite as 0 (as tf.reduce_logsumexp
    # does; core/cpu/reduce.cpp, core/kernel_plans/device_softmax.h): exp(inf) / inf = NaN at the infinite
    # entries, exp(x) / inf = 0 at the others. Both give NaN where the limit is finite; asserted
    # is kbackend's documented row. An all -inf row is 0 / 0 = NaN in both (no limit: every
    # share is "0"), and the finite row next to them is unaffected.
    x = arr([[INF, 0.0, 1.0], [INF, INF, 0.0], [-INF, -INF, -INF], [1.0, 0.0, -1.0]], dt)
    r = ev(lambda t: op("softmax", t, -1), x, mode=mode)
    close(r, [[NAN, 0.0, 0.0], [NAN, NAN, 0.0], [NAN] * 3, ref_softmax(f64(x[3]))], dt,
          atol=ATOL1[dt])


# ---- logsumexp -----------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, None], ids=["axis-1", "axis0", "all"])
def test_logsumexp_extreme_rows(axis, dt, mode):
    x = np.concatenate([extreme_rows(dt), overflowing_rows(dt)])
    if axis == 0:
        x = np.ascontiguousarray(x.T)
    if axis is None:  # one row at a time over all axes (a whole (1, 3) tensor)
        for row in x:
            r = ev(lambda t: op("logsumexp", t, None, 0, 0), row[None, :], mode=mode)
            assert r.shape == ()
            # log(3) + 0 for a zero row: absolute 8 / 64 ulp of 1 covers results near 0
            close(r, ref_logsumexp(f64(row)[None, :], None), dt, atol=ATOL1[dt])
        return
    r = ev(lambda t: op("logsumexp", t, i64([axis]), 1, 0), x, mode=mode)
    assert np.all(np.isfinite(r))
    close(r, ref_logsumexp(f64(x), axis), dt, atol=ATOL1[dt])


def test_logsumexp_keepdims_large(dt, mode):
    b = BIG[dt]
    x = arr([[b, b], [-b, -b], [1e4, 1e4], [-1e4, -1e4]], dt)
    r = ev(lambda t: op("logsumexp", t, i64([1]), 1, 1), x, mode=mode)
    assert r.shape == (4, 1)
    # b + log 2 rounds to b; -1e4 + log 2 keeps its fraction to the dtype's precision
    close(r, [[b], [-b], [1e4 + np.log(2)], [-1e4 + np.log(2)]], dt)


def test_logsumexp_inf_and_nan(dt, mode):
    x = arr([[NAN, 0.0, 1.0],       # NaN: NaN in that row only
             [INF, 0.0, 1.0],       # +inf: +inf (M is not finite, so M = 0 and exp(inf) = inf)
             [INF, -INF, 0.0],
             [-INF, 0.0, 1.0],      # -inf: contributes exp(-inf) = 0
             [-INF, -INF, -INF],    # log(0) = -inf
             [INF, NAN, 0.0],
             [1.0, 2.0, 3.0]], dt)
    r = ev(lambda t: op("logsumexp", t, i64([-1]), 1, 0), x, mode=mode)
    close(r, [NAN, INF, INF, np.logaddexp(0.0, 1.0), -INF, NAN, ref_logsumexp(f64(x[6]))], dt)


# ---- categorical_crossentropy, from logits (LogSoftmax) --------------------------------------
TARGETS = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.25, 0.25, 0.5]])


def logits_and_targets(rows, dt):
    """Every row with every target of TARGETS."""
    x = np.repeat(rows, len(TARGETS), axis=0)
    t = np.tile(TARGETS, (len(rows), 1)).astype(NP[dt])
    return t, x


@pytest.mark.parametrize("row", ROW_IDS)
def test_categorical_crossentropy_logits_extreme(row, dt, mode):
    t, x = logits_and_targets(extreme_rows(dt, [row]), dt)
    r = ev(lambda a, b: op("categorical_crossentropy", a, b, 1, -1), t, x, mode=mode)
    assert np.all(np.isfinite(r))
    # -sum(t * log_softmax): exactly 0 up to roundings of O(1) terms for a sure right answer
    close(r, -np.sum(f64(t) * ref_log_softmax(f64(x)), -1), dt, atol=ATOL1[dt])


def test_categorical_crossentropy_logits_inf_and_nan(dt, mode):
    x = arr([[NAN, 0.0, 1.0],       # NaN: that row's loss NaN only
             [0.0, -INF, 1.0],      # target on the -inf class: an infinite loss, rightly
             [2.0, 0.0, -1.0]], dt)
    t = arr([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.25, 0.25, 0.5]], dt)
    r = ev(lambda a, b: op("categorical_crossentropy", a, b, 1, -1), t, x, mode=mode)
    close(r, [NAN, INF, -np.sum(f64(t[2]) * ref_log_softmax(f64(x[2])))], dt)


def test_categorical_crossentropy_logits_zero_target_on_minus_inf_as_tensorflow(dt, mode):
    # TF 1.x softmax_cross_entropy_with_logits forms sum(labels * (log(sum_exp) - shifted)):
    # a zero label on a -inf logit (or a logit whose distance to the maximum overflows) is
    # 0 * inf = NaN, although the class's share, and so its term, is 0. A +inf logit gives
    # inf - inf = NaN. Documented behaviour (the same formula); the finite row is unaffected.
    h = HUGE[dt]
    x = arr([[0.0, -INF, 1.0], [h, -h, 0.0], [INF, 0.0, 1.0], [1.0, 0.0, 2.0]], dt)
    t = arr([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], dt)
    r = ev(lambda a, b: op("categorical_crossentropy", a, b, 1, -1), t, x, mode=mode)
    close(r, [NAN, NAN, NAN, -ref_log_softmax(f64(x[3]))[2]], dt)


# ---- categorical_crossentropy, from probabilities ------------------------------------------
def ref_cce_probs(t, out, dt):
    """Keras: p = out / sum(out), clip(p, eps, 1 - eps) (bounds in the dtype), -sum(t log p)."""
    lo, hi = clip_bounds(dt)
    p = f64(out) / np.sum(f64(out), -1, keepdims=True)
    return -np.sum(f64(t) * np.log(np.clip(p, lo, hi)), -1)


def probability_rows(dt):
    b, s = BIG[dt], TINY[dt]
    return arr([[1.0, 0.0, 0.0],        # a sure prediction: 1 - eps and eps after the clip
                [b, 0.0, 0.0],          # huge unnormalised values: p = [1, 0, 0]
                [b, b, 0.0],
                [b, b, b],
                [1e4, 1.0, 0.0],
                [s, 0.0, 0.0],          # subnormals: s / s = 1
                [s, s, s],
                [s, 1.0, 0.0],          # s / 1 is below eps: clipped up
                [0.2, 0.3, 0.5]], dt)


def test_categorical_crossentropy_probabilities_extreme(dt, mode):
    t, o = logits_and_targets(probability_rows(dt), dt)
    r = ev(lambda a, b: op("categorical_crossentropy", a, b, 0, -1), t, o, mode=mode)
    assert np.all(np.isfinite(r))
    # -log(1 - eps) ~ 1e-7 for a sure right answer: absolute 8 / 64 ulp of 1
    close(r, ref_cce_probs(t, o, dt), dt, atol=ATOL1[dt])


@pytest.mark.parametrize("case", [
    "nan",
    "zero_row",  # p = 0 / sum(0) = NaN, kept by clip
])
def test_categorical_crossentropy_probabilities_nan(case, dt, mode):
    bad = [NAN, 0.5, 0.5] if case == "nan" else [0.0, 0.0, 0.0]
    o = arr([[0.2, 0.3, 0.5], bad, [0.5, 0.25, 0.25]], dt)
    t = arr([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], dt)
    r = ev(lambda a, b: op("categorical_crossentropy", a, b, 0, -1), t, o, mode=mode)
    close(r, [-np.log(0.5), NAN, -np.log(0.5)], dt)  # NaN in that row only


# ---- sparse_categorical_crossentropy ----------------------------------------------------------
def sparse_cases(rows):
    """Every row with every class as the target."""
    return np.repeat(np.arange(3)[None, :], len(rows), 0).reshape(-1), np.repeat(rows, 3, 0)


@pytest.mark.parametrize("row", ROW_IDS)
def test_sparse_categorical_crossentropy_logits_extreme(row, dt, mode):
    t, x = sparse_cases(extreme_rows(dt, [row]))
    r = ev(lambda a, b: op("sparse_categorical_crossentropy", a, b, 1, -1), t, x,
                      mode=mode)
    assert np.all(np.isfinite(r))
    expected = -ref_log_softmax(f64(x))[np.arange(len(t)), t]
    close(r, expected, dt, atol=ATOL1[dt])  # a loss of ~0: absolute 8 / 64 ulp of 1


def test_sparse_categorical_crossentropy_logits_inf_and_nan(dt, mode):
    x = arr([[NAN, 0.0, 1.0], [0.0, -INF, 1.0], [2.0, 0.0, -1.0]], dt)
    t = np.array([0, 1, 2])
    r = ev(lambda a, b: op("sparse_categorical_crossentropy", a, b, 1, -1), t, x, mode=mode)
    close(r, [NAN, INF, -ref_log_softmax(f64(x[2]))[2]], dt)  # the -inf class as the target


def test_sparse_categorical_crossentropy_logits_minus_inf_off_target(dt, mode):
    h = HUGE[dt]
    x = arr([[0.0, -INF, 1.0], [h, -h, 0.0], [1.0, 2.0, 3.0]], dt)
    t = np.array([0, 0, 2])
    r = ev(lambda a, b: op("sparse_categorical_crossentropy", a, b, 1, -1), t, x, mode=mode)
    close(r, [np.logaddexp(0.0, 1.0), 0.0, -ref_log_softmax(f64(x[2]))[2]], dt, atol=ATOL1[dt])


def ref_scce_probs(t, out, dt):
    """Keras: q = clip(out, eps, 1 - eps) (bounds in the dtype), then -log(q_t / sum(q))."""
    lo, hi = clip_bounds(dt)
    q = np.clip(f64(out), lo, hi)
    return -(np.log(q[np.arange(len(t)), t]) - np.log(np.sum(q, -1)))


def test_sparse_categorical_crossentropy_probabilities_extreme(dt, mode):
    rows = np.concatenate([probability_rows(dt), arr([[0.0, 0.0, 0.0]], dt)])  # zeros: log 3
    t, o = sparse_cases(rows)
    r = ev(lambda a, b: op("sparse_categorical_crossentropy", a, b, 0, -1), t, o, mode=mode)
    assert np.all(np.isfinite(r))
    close(r, ref_scce_probs(t, o, dt), dt, atol=ATOL1[dt])  # losses near 0: 8 / 64 ulp of 1


def test_sparse_categorical_crossentropy_probabilities_nan(dt, mode):
    o = arr([[0.2, 0.3, 0.5], [NAN, 0.5, 0.5], [0.5, 0.25, 0.25]], dt)
    t = np.array([2, 1, 0])
    r = ev(lambda a, b: op("sparse_categorical_crossentropy", a, b, 0, -1), t, o, mode=mode)
    close(r, [ref_scce_probs([2], o[:1], dt)[0], NAN, ref_scce_probs([0], o[2:], dt)[0]], dt)


# ---- binary_crossentropy -----------------------------------------------------------------------
BCE_T = [0.0, 0.25, 0.5, 1.0]  # exact binary fractions: z * t is exact, no cancellation noise


def grid(values, dt):
    z, t = np.meshgrid(values, BCE_T, indexing="ij")
    return arr(t, dt), arr(z, dt)


def test_binary_crossentropy_logits_extreme(dt, mode):
    b, s = BIG[dt], TINY[dt]
    t, z = grid([-b, -1e4, -30.0, -1.0, -s, 0.0, s, 1.0, 30.0, 1e4, b], dt)
    r = ev(lambda a, c: op("binary_crossentropy", a, c, 1), t, z, mode=mode)
    assert np.all(np.isfinite(r))
    # max(z,0) - z t + log1p(exp(-|z|)) is itself the careful formula; a loss near 0 (z = 1e4,
    # t = 1) is a difference of O(z) terms computed exactly: absolute 8 / 64 ulp of 1
    close(r, ref_logistic_loss(f64(z), f64(t)), dt, atol=ATOL1[dt])


def test_binary_crossentropy_logits_inf_as_tensorflow(dt, mode):
    # TensorFlow's sigmoid_cross_entropy_with_logits, max(z, 0) - z t + log1p(exp(-|z|)), gives
    # inf - inf or 0 * inf = NaN at z = +inf (t > 0 / t = 0) and at z = -inf with t = 0, where
    # the limits are 0, inf and 0; z = -inf with t > 0 is +inf, rightly. Documented behaviour.
    # NaN in z or t is NaN.
    t = arr([0.0, 0.5, 1.0, 0.0, 0.5, 1.0, 0.5, NAN], dt)
    z = arr([INF, INF, INF, -INF, -INF, -INF, NAN, 1.0], dt)
    r = ev(lambda a, c: op("binary_crossentropy", a, c, 1), t, z, mode=mode)
    close(r, [NAN, NAN, NAN, NAN, INF, INF, NAN, NAN], dt)


def ref_bce_probs(t, out, dt):
    """Keras: p = clip(out, eps, 1 - eps), z = log(p / (1 - p)), with the clip bounds and 1 - p
    rounded to the dtype as in TensorFlow; then the logistic loss in float64."""
    p = np.clip(out, NP[dt](EPS), NP[dt](1 - EPS))
    z = np.log(f64(p) / f64(NP[dt](1) - p))
    return ref_logistic_loss(z, f64(t))


def test_binary_crossentropy_probabilities_extreme(dt, mode):
    b, s = BIG[dt], TINY[dt]
    t, o = grid([-INF, -b, -1e4, 0.0, s, 1e-12, 0.5, 1 - 1e-12, 1.0, 1e4, b, INF], dt)
    r = ev(lambda a, c: op("binary_crossentropy", a, c, 0), t, o, mode=mode)
    assert np.all(np.isfinite(r))
    # log(p / (1 - p)) adds one dtype rounding of the ratio to the log's: 8 / 64 ulp; losses
    # near 0 (p clipped to 1 - eps, t = 1): absolute 8 / 64 ulp of 1
    close(r, ref_bce_probs(t, o, dt), dt, atol=ATOL1[dt])


def test_binary_crossentropy_probabilities_nan(dt, mode):
    t = arr([1.0, 0.0, 1.0], dt)
    o = arr([0.5, NAN, 0.25], dt)
    r = ev(lambda a, c: op("binary_crossentropy", a, c, 0), t, o, mode=mode)
    close(r, [np.log(2.0), NAN, np.log(4.0)], dt)


# ---- sigmoid, softplus, tanh -----------------------------------------------------------------
def activation_inputs(dt):
    b, s = BIG[dt], TINY[dt]
    xs = [-INF, -b, -1e4, -80.0, -30.0, -1.0, -s, 0.0, s, 1.0, 30.0, 80.0, 1e4, b, INF, NAN]
    if dt == F64:
        xs += [-1e30, 1e30, -700.0, 700.0]  # float64: float32's extremes, and exp(-700) ~ 1e-304
    return arr(xs, dt)


ACT_REF = {"sigmoid": ref_sigmoid, "softplus": ref_softplus, "tanh": np.tanh}


@pytest.mark.parametrize("name", sorted(ACT_REF))
def test_activation_extremes(name, dt, mode):
    # sigmoid(+-inf) = 1 / 0, tanh(+-inf) = +-1, softplus(-inf) = 0, softplus(+inf) = inf;
    # sigmoid(-80) ~ 1.8e-35 and softplus(-80) keep their relative accuracy (a naive
    # log(1 + exp(x)) is 0 there), tanh(subnormal) is the subnormal itself: relative 8 / 64 ulp,
    # no absolute slack
    x = activation_inputs(dt)
    r = ev(lambda t: op(name, t), x, mode=mode)
    close(r, ACT_REF[name](f64(x)), dt)
    assert np.isnan(r[np.isnan(x)]).all() and not np.isnan(r[~np.isnan(x)]).any()


# ---- l2_normalize ------------------------------------------------------------------------------
def ref_l2_normalize(x, axis=-1):
    """x / sqrt(max(sum(x^2), 1e-12)), the TF formula, in float64 from the dtype's values."""
    return x / np.sqrt(np.maximum(np.sum(x * x, axis, keepdims=True), 1e-12))


def test_l2_normalize_extreme(dt, mode):
    e, s = EDGE[dt], TINY[dt]
    x = arr([[1e4, 0.0, -1e4],
             [e, -e, 0.0],          # squares near the dtype's largest value: still finite
             [-e, e, e],
             [s, 0.0, -s],          # squares underflow to 0: the 1e-12 floor, s / 1e-6
             [0.0, 0.0, 0.0],       # stays 0
             [3.0, 4.0, 0.0]], dt)
    r = ev(lambda t: op("l2_normalize", t, i64([-1]), 1), x, mode=mode)
    close(r, ref_l2_normalize(f64(x)), dt, atol=SUB_ATOL[dt])


def test_l2_normalize_overflow_as_tensorflow(dt, mode):
    # tf.nn.l2_normalize is x * rsqrt(max(sum(x^2), eps)): when a square overflows to inf the
    # row is x / inf = 0 (and inf / inf = NaN for an infinite entry), although the limit is
    # finite ([1, 0, 0] and [1/sqrt(2), ...]). Documented behaviour; the other rows unaffected.
    b = BIG[dt]
    x = arr([[b, 0.0, 0.0], [b, -b, 1.0], [INF, 1.0, 0.0], [3.0, 0.0, 4.0]], dt)
    r = ev(lambda t: op("l2_normalize", t, i64([-1]), 1), x, mode=mode)
    close(r, [[0.0, 0.0, 0.0], [0.0, -0.0, 0.0], [NAN, 0.0, 0.0], [0.6, 0.0, 0.8]], dt)


def test_l2_normalize_nan_row(dt, mode):
    x = arr([[3.0, 4.0, 0.0], [NAN, 1.0, 2.0], [0.0, 0.0, 2.0]], dt)
    r = ev(lambda t: op("l2_normalize", t, i64([-1]), 1), x, mode=mode)
    close(r, [[0.6, 0.8, 0.0], [NAN] * 3, [0.0, 0.0, 1.0]], dt)


# ---- gradients at extreme inputs -------------------------------------------------------------
@pytest.mark.parametrize("row", ROW_IDS)
def test_softmax_crossentropy_logits_gradient(row, dt):
    t, x = logits_and_targets(extreme_rows(dt, [row]), dt)
    (g,) = grads_of(lambda a, b: op("categorical_crossentropy", a, b, 1, -1), [t, x], [1])
    assert np.all(np.isfinite(g))
    # softmax(x) * sum(t) - t: differences of probabilities, absolute 8 / 64 ulp of 1
    close(g, ref_softmax(f64(x)) * np.sum(f64(t), -1, keepdims=True) - f64(t), dt,
          atol=ATOL1[dt])


@pytest.mark.parametrize("row", ROW_IDS)
def test_sparse_softmax_crossentropy_logits_gradient(row, dt):
    t, x = sparse_cases(extreme_rows(dt, [row]))
    (g,) = grads_of(lambda a, b: op("sparse_categorical_crossentropy", a, b, 1, -1),
                         [t, x], [1])
    assert np.all(np.isfinite(g))
    close(g, ref_softmax(f64(x)) - np.eye(3)[t], dt, atol=ATOL1[dt])  # softmax - onehot


def test_softmax_gradient(dt):
    x = extreme_rows(dt)
    w = np.tile(arr([0.5, -1.0, 2.0], dt), (len(x), 1))
    (g,) = grads_of(lambda a, b: op("multiply", op("softmax", a, -1), b), [x, w], [0])
    assert np.all(np.isfinite(g))
    y = ref_softmax(f64(x))
    close(g, y * (f64(w) - np.sum(y * f64(w), -1, keepdims=True)), dt, atol=ATOL1[dt])


def test_logsumexp_gradient(dt):
    x = extreme_rows(dt)
    (g,) = grads_of(lambda a: op("logsumexp", a, i64([-1]), 1, 0), [x], [0])
    assert np.all(np.isfinite(g))
    close(g, ref_softmax(f64(x)), dt, atol=ATOL1[dt])  # softmax: shares next to 0


GRAD_REF = {
    "sigmoid": lambda x: ref_sigmoid(x) * ref_sigmoid(-x),   # s (1 - s) without cancellation
    "softplus": ref_sigmoid,
    "tanh": lambda x: 1.0 / np.cosh(x) ** 2,
}


@pytest.mark.parametrize("name", sorted(GRAD_REF))
def test_activation_gradient(name, dt):
    b = BIG[dt]
    x = arr([-b, -1e4, -1.0, 0.0, 1.0, 1e4, b], dt)
    (g,) = grads_of(lambda a: op(name, a), [x], [0])
    assert np.all(np.isfinite(g))
    with np.errstate(over="ignore"):
        expected = GRAD_REF[name](f64(x))
    # s (1 - s) and 1 - tanh^2 are formed from the output as in TensorFlow: at |x| = 1 they lose
    # a few ulp of 1 to the subtraction, hence the absolute 8 / 64 ulp of 1
    close(g, expected, dt, atol=ATOL1[dt])


def test_binary_crossentropy_logits_gradient(dt):
    b = BIG[dt]
    t, z = grid([-b, -1e4, -1.0, 1.0, 1e4, b], dt)
    (g,) = grads_of(lambda a, c: op("binary_crossentropy", a, c, 1), [t, z], [1])
    assert np.all(np.isfinite(g))
    close(g, ref_sigmoid(f64(z)) - f64(t), dt, atol=ATOL1[dt])  # sigmoid(z) - t
