"""Reductions, cumulative ops and arg reductions against NumPy (docs/keras_semantics.md
section 6)."""
import numpy as np
import pytest

import kb
from kb import assert_close, const, error_of, ev, i64, op


def np_logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


REDUCE = {"max": np.max, "min": np.min, "sum": np.sum, "prod": np.prod, "mean": np.mean,
          "var": np.var, "std": np.std, "logsumexp": np_logsumexp}
AXES = [None, 0, 1, -1, -3, [0, 2], [-1, 0], [2, 1, 0], [1]]


def reduce(name, axes, keepdims):
    def f(t):
        ax = None if axes is None else np.atleast_1d(axes)
        return op(name, t, i64(ax), 0 if ax is None else len(ax), int(keepdims))
    return f


def np_axes(axes):
    return None if axes is None else tuple(np.atleast_1d(axes).tolist())


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce(name, axes, keepdims, dt, rng):
    x = (rng.standard_normal((2, 3, 4)) + 0.5).astype(kb.NP_OF[dt])
    expected = REDUCE[name](x.astype(np.float64), axis=np_axes(axes), keepdims=keepdims)
    assert_close(ev(reduce(name, axes, keepdims), x), expected, dt)


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_unknown_batch(name, dt, rng):
    p = kb.placeholder([-1, 5], dt)
    f = kb.Function([p], [reduce(name, -1, False)(p), reduce(name, 0, True)(p),
                          reduce(name, None, False)(p)])
    for b in (1, 3, 8):
        x = rng.standard_normal((b, 5)).astype(kb.NP_OF[dt])
        r = f(x)
        assert_close(r[0], REDUCE[name](x, axis=-1), dt)
        assert_close(r[1], REDUCE[name](x, axis=0, keepdims=True), dt)
        assert_close(r[2], REDUCE[name](x), dt)


@pytest.mark.parametrize("name", ["sum", "max", "mean", "any"])
def test_reduce_empty_axis_list_is_identity(name, dt):
    x = np.array([[1.0, 0.0], [2.0, 3.0]], kb.NP_OF[dt])
    r = ev(lambda t: op(name, t, i64([]), 0, 0), x)
    assert r.shape == (2, 2)
    np.testing.assert_array_equal(r, x if name != "any" else x != 0)


@pytest.mark.parametrize("name", ["max", "min", "sum", "prod"])
@pytest.mark.parametrize("itype", [kb.I32, kb.I64])
def test_reduce_integer(name, itype):
    x = np.array([[1, -2, 3], [4, 5, -6]], kb.NP_OF[itype])
    assert_close(ev(reduce(name, 1, False), x), REDUCE[name](x, axis=1), itype)
    assert_close(ev(reduce(name, None, True), x), REDUCE[name](x, keepdims=True), itype)


def test_mean_of_integers_truncates():
    x = np.array([[1, 2], [3, 6], [-3, 0], [-7, -8]], np.int32)
    # TF's integer mean divides with truncation toward zero; the dtype stays int32
    assert_close(ev(reduce("mean", 1, False), x), [1, 4, -1, -7], kb.I32)
    assert_close(ev(reduce("mean", None, False), x), 0, kb.I32)  # -6 / 8 -> 0


def test_mean_and_var_of_bool_use_floatx():
    x = np.array([[True, False, True, True], [False, False, False, True]])
    assert_close(ev(reduce("mean", 1, False), x), [0.75, 0.25], kb.F32)
    assert_close(ev(reduce("var", 1, False), x), np.var(x.astype(float), axis=1), kb.F32)
    assert_close(ev(reduce("std", None, False), x), np.std(x.astype(float)), kb.F32)


def test_var_is_population_variance(dt):
    x = np.array([1.0, 2.0, 3.0, 4.0], kb.NP_OF[dt])
    assert_close(ev(reduce("var", None, False), x), 1.25, dt)
    assert_close(ev(reduce("std", 0, True), x), [np.sqrt(1.25)], dt)


def test_logsumexp_stable(dt):
    x = np.array([1e4, 1e-4], kb.NP_OF[dt])
    assert_close(ev(reduce("logsumexp", None, False), x), 1e4, dt)
    x = np.array([[-1e4, -1e4 + np.log(3.0)], [1000.0, 1000.0]], kb.NP_OF[dt])
    assert_close(ev(reduce("logsumexp", 1, False), x), [-1e4 + np.log(4.0), 1000 + np.log(2.0)],
                 dt, rtol=1e-6)
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 2.0]], kb.NP_OF[dt])
    assert_close(ev(reduce("logsumexp", -1, True), x), [[-np.inf], [np.inf], [2.0]], dt)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", [None, 0, -1, [0, 1]], ids=str)
@pytest.mark.parametrize("name,ref", [("any", np.any), ("all", np.all)])
def test_any_all(name, ref, axes, keepdims, dt):
    x = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [2.0, -1.0, 3.0]], kb.NP_OF[dt])
    expected = ref(x != 0, axis=np_axes(axes), keepdims=keepdims)
    assert_close(ev(reduce(name, axes, keepdims), x), expected, kb.BOOL)


@pytest.mark.parametrize("name,ref", [("any", np.any), ("all", np.all)])
@pytest.mark.parametrize("src", [kb.BOOL, kb.I32])
def test_any_all_bool_and_int(name, ref, src):
    x = np.array([[1, 0, 1], [1, 1, 1], [0, 0, 0]], kb.NP_OF[src])
    assert_close(ev(reduce(name, 1, False), x), ref(x != 0, axis=1), kb.BOOL)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("name,ref", [("cumsum", np.cumsum), ("cumprod", np.cumprod)])
def test_cumulative(name, ref, axis, dt, mode, rng):
    x = (rng.standard_normal((3, 2, 4)) * 0.5 + 1).astype(kb.NP_OF[dt])
    assert_close(ev(lambda t: op(name, t, axis), x, mode=mode), ref(x, axis=axis), dt)


@pytest.mark.parametrize("name,ref", [("cumsum", np.cumsum), ("cumprod", np.cumprod)])
def test_cumulative_integer(name, ref):
    x = np.array([[1, 2, 3], [-1, 4, 2]], np.int32)
    assert_close(ev(lambda t: op(name, t, 0), x), ref(x, axis=0), kb.I32)
    assert_close(ev(lambda t: op(name, t, 1), x), ref(x, axis=1), kb.I32)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("name,ref", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_arg_reduce(name, ref, axis, dt, mode, rng):
    x = rng.standard_normal((3, 4, 5)).astype(kb.NP_OF[dt])
    assert_close(ev(lambda t: op(name, t, axis), x, mode=mode), ref(x, axis=axis), kb.I64)


@pytest.mark.parametrize("name,ref", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_arg_reduce_ties_and_ints(name, ref, dt):
    x = np.array([[1.0, 3.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0], [5.0, -1.0, 5.0, -1.0]],
                 kb.NP_OF[dt])
    assert_close(ev(lambda t: op(name, t, -1), x), ref(x, axis=-1), kb.I64)  # the first one
    xi = x.astype(np.int32)
    assert_close(ev(lambda t: op(name, t, 0), xi), ref(xi, axis=0), kb.I64)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduce_empty_axis(name):
    # No position to name: an error when the graph is built (dim known) or when fed (unknown);
    # an empty output over a non-empty axis is fine.
    x = np.zeros((0, 3), np.float32)
    assert "empty" in error_of(name, const(x), 0)
    p = kb.placeholder([-1, 3])
    with pytest.raises(kb.KBError, match="empty") as e:
        kb.run(op(name, p, 0), [(p, x)])
    assert e.value.status == 1  # KB_ERROR_INVALID_ARGUMENT
    assert ev(lambda t: op(name, t, 1), x, mode="ph").shape == (0,)
    assert ev(lambda t: op(name, t, 0), np.ones((4, 3), np.float32), mode="ph").tolist() == [0] * 3


# ---- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(REDUCE) + ["any", "all"])
def test_reduce_bad_input(name):
    x = const(np.ones((2, 3), np.float32))
    assert error_of(name, None, None, 0, 0).startswith(name + ":")
    for bad in ([2], [-3], [0, 5]):
        assert error_of(name, x, i64(bad), len(bad), 0).startswith(name + ":")
    assert error_of(name, x, None, 2, 0).startswith(name + ":")  # NULL axes with a count


def test_reduce_dtype_errors():
    b = const(np.array([True, False]))
    assert error_of("sum", b, None, 0, 0).startswith("sum:")
    assert error_of("prod", b, None, 0, 0).startswith("prod:")
    assert error_of("logsumexp", const(np.array([1, 2], np.int32)), None, 0, 0).startswith(
        "logsumexp:")


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "argmax", "argmin"])
def test_axis_bad_input(name):
    x = const(np.ones((2, 3), np.float32))
    assert error_of(name, None, 0).startswith(name + ":")
    assert error_of(name, x, 2).startswith(name + ":")
    assert error_of(name, x, -3).startswith(name + ":")
    assert error_of(name, const(np.float32(1.0)), 0).startswith(name + ":")


# ---- larger inputs (the parallel and blocked kernel paths) ------------------------------------
@pytest.mark.parametrize("axes", [None, 0, 1, 2, [0, 2], [1, 2], [0, 1]], ids=str)
@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "var", "logsumexp", "prod"])
def test_reduce_large(name, axes, dt, rng):
    x = rng.standard_normal((37, 129, 67))
    if name == "prod":
        x = 1 + x * 1e-3
    x = x.astype(kb.NP_OF[dt])
    expected = REDUCE[name](x.astype(np.float64), axis=np_axes(axes))
    assert_close(ev(reduce(name, axes, False), x), expected, dt, rtol=1e-4 if dt == kb.F32
                 else 1e-10)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("name", ["cumsum", "argmax", "argmin"])
def test_axis_ops_large(name, axis, dt, rng):
    x = rng.standard_normal((33, 65, 129)).astype(kb.NP_OF[dt])
    if name == "cumsum":
        assert_close(ev(lambda t: op(name, t, axis), x), np.cumsum(x.astype(float), axis), dt,
                     rtol=1e-4 if dt == kb.F32 else 1e-10, atol=1e-4 if dt == kb.F32 else 1e-10)
    else:
        ref = np.argmax if name == "argmax" else np.argmin
        assert_close(ev(lambda t: op(name, t, axis), x), ref(x, axis), kb.I64)


def test_reduce_empty(dt):
    x = np.zeros((0, 3), kb.NP_OF[dt])
    assert_close(ev(reduce("sum", 0, False), x), np.zeros(3), dt)
    assert_close(ev(reduce("prod", 0, False), x), np.ones(3), dt)
    assert_close(ev(reduce("sum", 1, False), x), np.zeros(0), dt)
    assert_close(ev(reduce("any", None, False), x), False, kb.BOOL)
    assert_close(ev(reduce("all", None, False), x), True, kb.BOOL)


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("shape,axes", [((64, 30, 30, 32), [0, 1, 2]),  # a bias gradient
                                         ((3, 20000, 7), [1]),
                                         ((20, 900, 16), [0, 1]),
                                         ((5000, 33), [0])])
def test_large_reductions_keeping_the_last_axis(name, shape, axes):
    # the reduced axes come before kept ones: rows of accumulators, the axis split in parts
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    got = ev(reduce(name, axes, False), x)
    want = REDUCE[name](x.astype(np.float64), axis=tuple(axes))
    assert_close(got, want, kb.F32, rtol=1e-5, atol=1e-5)
    # the same result whatever the thread count: the partial sums are combined in a fixed order
    np.testing.assert_array_equal(got, ev(reduce(name, axes, False), x))
