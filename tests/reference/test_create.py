"""Creation functions (docs/keras_semantics.md section 2)."""
import ctypes

import numpy as np
import pytest

import kb
from kb import assert_close, const, error_of, i64, op, run, to_numpy


def set_floatx(code):
    kb.check(kb.lib.kb_set_floatx(code))


def is_variable(t):
    """Only variables can be updated."""
    st, _ = kb.status_of("update", t, t)
    return st == 0


@pytest.mark.parametrize("src", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8])
def test_variable_default_dtype_is_floatx(src, dt):
    set_floatx(dt)
    a = np.array([[1, 0, 3], [4, 5, 0]]).astype(src)
    v = kb.variable(a)
    assert is_variable(v)
    assert v.shape == (2, 3)
    assert_close(to_numpy(v), a.astype(kb.NP_OF[dt]), dt)
    assert_close(run(v), a.astype(kb.NP_OF[dt]), dt)


@pytest.mark.parametrize("dtype", [kb.F32, kb.F64, kb.I32, kb.I64, kb.BOOL])
def test_variable_explicit_dtype(dtype, rng):
    a = rng.standard_normal((3, 2)) * 3
    v = kb.variable(a, dtype)
    assert v.dtype == dtype
    assert_close(to_numpy(v), a.astype(kb.NP_OF[dtype]), dtype)


def test_variable_scalar_and_empty(dt):
    assert_close(to_numpy(kb.variable(np.array(2.5), dt)), 2.5, dt)
    v = kb.variable(np.zeros((0, 3)), dt)
    assert v.shape == (0, 3)
    assert to_numpy(v).shape == (0, 3)


def constant(value, dtype=kb.DEFAULT, shape=None):
    a = np.require(np.asarray(value), requirements="C")
    return op("constant", a.ctypes.data, kb.CODE_OF[a.dtype], i64(a.shape), a.ndim, dtype,
              i64(shape), 0 if shape is None else len(shape), None)


def test_constant_own_shape(dt, rng):
    a = rng.standard_normal((2, 3))
    c = constant(a, dt)
    assert not is_variable(c)
    assert_close(run(c), a, dt)


def test_constant_default_dtype_is_floatx(dt):
    set_floatx(dt)
    assert_close(run(constant(np.array([1, 2], np.int32))), [1, 2], dt)


def test_constant_scalar_fills_shape(dt):
    assert_close(run(constant(np.array(7.5), dt, (2, 3))), np.full((2, 3), 7.5), dt)
    assert_close(run(constant(np.array([7.5]), dt, (2, 2))), np.full((2, 2), 7.5), dt)


def test_constant_short_list_repeats_last(dt):
    r = run(constant(np.array([1.0, 2.0, 3.0]), dt, (2, 3)))
    assert_close(r, [[1, 2, 3], [3, 3, 3]], dt)
    r = run(constant(np.array([[1.0, 2.0], [3.0, 4.0]]), dt, (5,)))  # flat order
    assert_close(r, [1, 2, 3, 4, 4], dt)


def test_constant_exact_reshape_and_int(dt):
    r = run(constant(np.arange(6.0), dt, (3, 2)))
    assert_close(r, np.arange(6.0).reshape(3, 2), dt)
    r = run(constant(np.array([1.9, -1.9]), kb.I32, (3,)))
    assert_close(r, [1, -1, -1], kb.I32)


def test_constant_errors():
    assert error_of("constant", None, kb.F32, i64([2]), 1, kb.DEFAULT, None, 0,
                    None).startswith("constant:")
    a = np.arange(6.0)
    assert error_of("constant", a.ctypes.data, kb.F64, i64(a.shape), 1, kb.DEFAULT, i64([2, 2]),
                    2, None).startswith("constant:")  # too many values
    assert error_of("constant", a.ctypes.data, kb.F64, i64(a.shape), 1, 99, None, 0,
                    None).startswith("constant:")
    e = np.zeros(0)
    assert error_of("constant", e.ctypes.data, kb.F64, i64([0]), 1, kb.DEFAULT, i64([2]), 1,
                    None).startswith("constant:")


def test_placeholder_shapes(dt, rng):
    p = kb.placeholder([-1, 3], dt)
    assert p.shape == (None, 3) and p.dtype == dt
    flag = ctypes.c_int32()
    kb.check(kb.lib.kb_is_placeholder(p, ctypes.byref(flag)))
    assert flag.value == 1
    assert kb.placeholder(None, dt, ndim=2).shape == (None, None)
    assert kb.placeholder([], dt, ndim=3).shape == (None, None, None)  # shape () with ndim
    assert kb.placeholder([], dt).shape == ()
    assert kb.placeholder(None, dt, ndim=-1).shape is None  # unknown rank
    assert kb.placeholder([2, 3], kb.DEFAULT).dtype == kb.F32
    set_floatx(kb.F64)
    assert kb.placeholder([2], kb.DEFAULT).dtype == kb.F64


def test_placeholder_fed_values_are_cast(dt):
    p = kb.placeholder([-1, 2], dt)
    f = kb.Function([p], [op("identity", p, None)])
    assert_close(f(np.array([[1, 2], [3, 4]], np.int32))[0], [[1, 2], [3, 4]], dt)
    assert_close(f(np.ones((5, 2)))[0], np.ones((5, 2)), dt)


def test_placeholder_unknown_rank(dt, rng):
    p = kb.placeholder(None, dt, ndim=-1)
    f = kb.Function([p], [op("square", p)])
    for shape in ((3,), (2, 2), ()):
        x = rng.standard_normal(shape).astype(kb.NP_OF[dt])
        assert_close(f(x)[0], x * x, dt)


def test_placeholder_errors():
    assert error_of("placeholder", i64([-2]), 1, 0, kb.F32, 0, None).startswith("placeholder:")
    assert error_of("placeholder", i64([2]), 1, 0, 42, 0, None).startswith("placeholder:")
    assert kb.lib.kb_placeholder(i64([2]), 1, 0, kb.F32, 0, None, None) != 0


@pytest.mark.parametrize("name,fill", [("zeros", 0.0), ("ones", 1.0)])
@pytest.mark.parametrize("shape", [(2, 3), (4,), (), (2, 1, 3)])
def test_zeros_ones(name, fill, shape, dt):
    v = op(name, i64(shape), len(shape), dt, None)
    assert is_variable(v)
    assert v.shape == shape
    assert_close(run(v), np.full(shape, fill), dt)


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_zeros_ones_dtypes_and_empty(name, dt):
    set_floatx(dt)
    assert op(name, i64([2]), 1, kb.DEFAULT, None).dtype == dt
    v = op(name, i64([3]), 1, kb.I32, None)
    assert_close(run(v), np.full(3, 1 if name == "ones" else 0), kb.I32)
    e = op(name, i64([0, 3]), 2, dt, None)  # a zero dimension: a plain tensor
    assert not is_variable(e)
    assert run(e).shape == (0, 3)
    assert error_of(name, i64([-1, 2]), 2, dt, None).startswith(name + ":")


@pytest.mark.parametrize("n", [0, 1, 4])
def test_eye(n, dt):
    v = op("eye", n, dt, None)
    assert is_variable(v)
    assert_close(run(v), np.eye(n), dt)


def test_eye_default_and_errors(dt):
    set_floatx(dt)
    assert_close(run(op("eye", 3, kb.DEFAULT, None)), np.eye(3), dt)
    assert_close(run(op("eye", 2, kb.I64, None)), np.eye(2), kb.I64)
    assert error_of("eye", -1, dt, None).startswith("eye:")


@pytest.mark.parametrize("name,fill", [("zeros_like", 0), ("ones_like", 1)])
@pytest.mark.parametrize("src", [kb.F32, kb.F64, kb.I32, kb.BOOL])
def test_zeros_ones_like(name, fill, src, rng):
    x = const(rng.standard_normal((2, 3)).astype(kb.NP_OF[src]))
    r = op(name, x, kb.DEFAULT, None)  # dtype None: x's dtype, not floatx
    assert not is_variable(r)
    assert_close(run(r), np.full((2, 3), fill), src)
    assert_close(run(op(name, x, kb.F64, None)), np.full((2, 3), fill), kb.F64)


@pytest.mark.parametrize("name,fill", [("zeros_like", 0), ("ones_like", 1)])
def test_zeros_ones_like_unknown_batch(name, fill, dt):
    p = kb.placeholder([-1, 3], dt)
    f = kb.Function([p], [op(name, p, kb.DEFAULT, None)])
    for n in (1, 4):
        assert_close(f(np.zeros((n, 3)))[0], np.full((n, 3), fill), dt)


def test_identity(dt, rng):
    x = rng.standard_normal((3, 2)).astype(kb.NP_OF[dt])
    v = kb.variable(x, dt)
    i = op("identity", v, None)
    assert not is_variable(i)
    assert_close(run(i), x, dt)
    assert error_of("identity", None, None).startswith("identity:")
    assert error_of("zeros_like", None, kb.DEFAULT, None).startswith("zeros_like:")
    assert error_of("ones_like", None, kb.DEFAULT, None).startswith("ones_like:")


def arange(start, stop=None, step=1.0, dtype=kb.DEFAULT):
    s = None if stop is None else ctypes.byref(ctypes.c_double(stop))
    return run(op("arange", float(start), s, float(step), dtype))


@pytest.mark.parametrize("args", [(5,), (0,), (2, 7), (7, 2, -1), (1, 10, 3), (-3, 3),
                                  (10, 0, -3), (3, 3), (5, 2)], ids=str)
def test_arange_int32_default(args):
    assert_close(arange(*args), np.arange(*args), kb.I32)


def test_arange_negative_start_without_stop_is_empty():
    r = arange(-3)
    assert r.shape == (0,) and r.dtype == np.int32


@pytest.mark.parametrize("args", [(0, 1, 0.25), (0.5, 3.0, 0.5), (1, -1, -0.4), (2.5,)],
                         ids=str)
def test_arange_float(args, dt):
    assert_close(arange(*args, dtype=dt), np.arange(*args), dt)


def test_arange_other_dtypes_and_errors():
    assert_close(arange(0, 4, 1, kb.I64), np.arange(4), kb.I64)
    assert error_of("arange", 0.0, None, 0.0, kb.DEFAULT).startswith("arange:")
    assert error_of("arange", 0.0, None, 1.0, 42).startswith("arange:")


OUT_OF_MEMORY = 5  # KB_ERROR_OUT_OF_MEMORY


def test_arange_beyond_a_gigabyte_is_refused():
    """A range is filled on the host: past 1 GiB the call fails with out-of-memory, not the
    process (a sparse crossentropy over a declared 2^31 classes asked for 16 GiB)."""
    status, message = kb.status_of("arange", 0.0, ctypes.byref(ctypes.c_double(2.0 ** 28 + 1)),
                                   1.0, kb.F32)
    assert status == OUT_OF_MEMORY and message.startswith("arange:"), (status, message)
    assert arange(0, 2 ** 20, 1, kb.F32).shape == (2 ** 20,)


def random_var(kind, shape, a, b, dtype, seed):
    s = None if seed is None else ctypes.byref(ctypes.c_int64(seed))
    return op("random_%s_variable" % kind, i64(shape), len(shape), a, b, dtype, None, s)


@pytest.mark.parametrize("low,high", [(0.0, 1.0), (-3.0, 5.0), (2.0, 2.5)])
def test_random_uniform_variable(low, high, dt):
    n = 20000
    v = random_var("uniform", (n // 100, 100), low, high, dt, 42)
    assert is_variable(v) and v.shape == (n // 100, 100) and v.dtype == dt
    x = to_numpy(v).astype(np.float64)
    assert x.min() >= low and x.max() <= high
    width = high - low
    assert abs(x.mean() - (low + high) / 2) < 5 * width / np.sqrt(12 * n)
    assert abs(x.var() - width ** 2 / 12) < 5 * width ** 2 * np.sqrt(1 / 180 / n)
    hist = np.histogram(x, bins=10, range=(low, high))[0]
    assert np.all(np.abs(hist - n / 10) < 5 * np.sqrt(n / 10))


@pytest.mark.parametrize("mean,scale", [(0.0, 1.0), (3.0, 0.5), (-2.0, 4.0)])
def test_random_normal_variable(mean, scale, dt):
    n = 20000
    v = random_var("normal", (n,), mean, scale, dt, 7)
    assert is_variable(v) and v.dtype == dt
    x = to_numpy(v).astype(np.float64)
    assert abs(x.mean() - mean) < 5 * scale / np.sqrt(n)
    assert abs(x.std() - scale) < 5 * scale / np.sqrt(2 * n)
    z = (x - mean) / scale
    assert abs(np.mean(z ** 3)) < 5 * np.sqrt(6 / n)  # skewness
    assert abs(np.mean(z ** 4) - 3) < 5 * np.sqrt(24 / n)  # kurtosis
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.02


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_random_seed_reproducibility(kind, dt):
    a = to_numpy(random_var(kind, (50,), 0.0, 1.0, dt, 123))
    b = to_numpy(random_var(kind, (50,), 0.0, 1.0, dt, 123))
    c = to_numpy(random_var(kind, (50,), 0.0, 1.0, dt, 124))
    d = to_numpy(random_var(kind, (50,), 0.0, 1.0, dt, None))
    e = to_numpy(random_var(kind, (50,), 0.0, 1.0, dt, None))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(d, e)
    assert len(np.unique(a)) == 50
    # a variable's value is drawn once: evaluating twice gives the same value
    v = random_var(kind, (5,), 0.0, 1.0, dt, None)
    np.testing.assert_array_equal(run(v), run(v))


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_random_variable_errors(kind):
    name = "random_%s_variable" % kind
    assert error_of(name, i64([3]), 1, 0.0, 1.0, kb.I32, None, None).startswith(name + ":")
    assert error_of(name, i64([-1]), 1, 0.0, 1.0, kb.F32, None, None).startswith(name + ":")
    set_floatx(kb.F64)
    assert random_var(kind, (2,), 0.0, 1.0, kb.DEFAULT, 1).dtype == kb.F64


def test_variable_errors():
    a = np.ones(3)
    assert error_of("variable", None, kb.F64, i64([3]), 1, kb.DEFAULT, None).startswith(
        "variable:")
    assert error_of("variable", a.ctypes.data, 42, i64([3]), 1, kb.DEFAULT, None).startswith(
        "variable:")
    assert error_of("variable", a.ctypes.data, kb.F64, i64([3]), 1, 42, None).startswith(
        "variable:")
    assert error_of("variable", a.ctypes.data, kb.F64, i64([-3]), 1, kb.DEFAULT,
                    None).startswith("variable:")
