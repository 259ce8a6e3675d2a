"""Elementwise functions against NumPy (docs/keras_semantics.md section 7)."""
import math

import numpy as np
import pytest

import kb
from kb import assert_close, const, error_of, ev, op

UNARY = {
    "square": (np.square, "any"),
    "abs": (np.abs, "any"),
    "sqrt": (lambda x: np.sqrt(np.maximum(x, 0)), "any"),  # sqrt(negative) = 0
    "exp": (np.exp, "any"),
    "log": (np.log, "pos"),
    "round": (np.round, "any"),  # half to even
    "sign": (np.sign, "any"),
    "sin": (np.sin, "any"),
    "cos": (np.cos, "any"),
    "negative": (np.negative, "any"),
    "erf": (np.vectorize(math.erf), "any"),
}


def sample(rng, shape, kind, dtype):
    x = rng.standard_normal(shape) * 3
    if kind == "pos":
        x = np.abs(x) + 0.1
    return x.astype(kb.NP_OF[dtype])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dt, mode, rng):
    ref, kind = UNARY[name]
    x = sample(rng, (3, 2, 4), kind, dt)
    if kind == "any":
        x.flat[0] = 0.0
    assert_close(ev(lambda t: op(name, t), x, mode=mode), ref(x), dt)


def test_sqrt_of_negative_is_zero(dt):
    x = np.array([-4.0, -1e-30, 0.0, 4.0, -np.inf], kb.NP_OF[dt])
    assert_close(ev(lambda t: op("sqrt", t), x), [0, 0, 0, 2, 0], dt)


def test_round_half_to_even(dt):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49, -0.51, 1e6 + 0.5], kb.NP_OF[dt])
    assert_close(ev(lambda t: op("round", t), x), [-2, -2, -0, 0, 2, 2, 4, 0, -1, 1e6], dt)


def test_sign_and_log_edges(dt):
    x = np.array([-3.0, -0.0, 0.0, 2.0], kb.NP_OF[dt])
    assert_close(ev(lambda t: op("sign", t), x), [-1, 0, 0, 1], dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_close(ev(lambda t: op("log", t), x[1:]), np.log(x[1:]), dt)  # log(0) = -inf
        assert_close(ev(lambda t: op("log", t), x[:1]), [np.nan], dt)


@pytest.mark.parametrize("name,ref", [("square", np.square), ("abs", np.abs),
                                      ("negative", np.negative), ("sign", np.sign),
                                      ("round", lambda x: x)])  # tf.round: ints unchanged
@pytest.mark.parametrize("itype", [kb.I32, kb.I64])
def test_unary_integer(name, ref, itype):
    x = np.array([[-3, 0, 2], [7, -1, 5]], kb.NP_OF[itype])
    assert_close(ev(lambda t: op(name, t), x), ref(x), itype)


@pytest.mark.parametrize("a", [2.0, 3.0, 0.5, -1.0, -0.5, 0.0])
def test_pow(a, dt, mode, rng):
    x = sample(rng, (4, 3), "pos", dt)
    assert_close(ev(lambda t: op("pow", t, a), x, mode=mode), np.power(x, a), dt)


def test_pow_integer_exponent_of_negative(dt):
    x = np.array([-2.0, -0.5, 3.0], kb.NP_OF[dt])
    assert_close(ev(lambda t: op("pow", t, 3.0), x), x ** 3, dt)


@pytest.mark.parametrize("lo,hi", [(-1.0, 1.0), (0.0, np.inf), (-np.inf, 0.5), (0.5, -0.5),
                                   (2.0, 2.0)])
def test_clip(lo, hi, dt, mode, rng):
    x = sample(rng, (5, 4), "any", dt)
    expected = np.clip(x, lo, max(hi, lo))  # max < min: max := min, a constant result
    assert_close(ev(lambda t: op("clip", t, lo, hi), x, mode=mode), expected, dt)


def test_clip_integer():
    x = np.arange(-5, 6, dtype=np.int32)
    assert_close(ev(lambda t: op("clip", t, -2.0, 3.0), x), np.clip(x, -2, 3), kb.I32)
    # the bounds are converted to x's dtype first
    assert_close(ev(lambda t: op("clip", t, -2.7, 3.9), x), np.clip(x, -2, 3), kb.I32)


@pytest.mark.xfail(strict=True, raises=kb.KBError,
                   reason="pow accepts floating x only; Keras (tf.pow) also takes an integer x "
                   "with the exponent converted to x's dtype, which needs an integer Pow kernel")
@pytest.mark.parametrize("itype", [kb.I32, kb.I64])
def test_pow_integer(itype):
    x = np.array([-3, 0, 2, 5], kb.NP_OF[itype])
    assert_close(ev(lambda t: op("pow", t, 3.0), x), x ** 3, itype)


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
}
COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal,
    "lesser": np.less, "lesser_equal": np.less_equal,
}
# The last two: one operand a trailing block of the other (repeated in runs of whole periods, the
# last run partial), on either side.
SHAPES = [((2, 3), (2, 3)), ((3, 1), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((2, 3), ()),
          ((1, 3), (2, 1)), ((37, 3, 5), (1, 3, 5)), ((5,), (41, 7, 5))]


@pytest.mark.parametrize("sx,sy", SHAPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(name, sx, sy, dt, rng):
    x = sample(rng, sx, "any", dt)
    y = sample(rng, sy, "pos", dt)
    assert_close(ev(lambda a, b: op(name, a, b), x, y), BINARY[name](x, y), dt)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_placeholders(name, dt, rng):
    # both operands have an unknown first dimension; different batch sizes through one function
    px, py = kb.placeholder([-1, 3], dt), kb.placeholder([-1, 1], dt)
    f = kb.Function([px, py], [op(name, px, py)])
    for b in (1, 4, 7):
        x, y = sample(rng, (b, 3), "any", dt), sample(rng, (b, 1), "pos", dt)
        assert_close(f(x, y)[0], BINARY[name](x, y), dt)


@pytest.mark.parametrize("sx,sy", SHAPES)
@pytest.mark.parametrize("name", sorted(COMPARE))
def test_compare(name, sx, sy, dt, rng):
    # small integer values, so that ties occur
    x = rng.integers(-2, 3, sx).astype(kb.NP_OF[dt])
    y = rng.integers(-2, 3, sy).astype(kb.NP_OF[dt])
    assert_close(ev(lambda a, b: op(name, a, b), x, y), COMPARE[name](x, y), kb.BOOL)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum"])
def test_binary_integer(name):
    x = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    y = np.array([3, -1, 2], np.int32)
    assert_close(ev(lambda a, b: op(name, a, b), x, y), BINARY[name](x, y), kb.I32)


def test_divide_integer_truncates():
    x = np.array([7, -7, 6, 1], np.int32)
    y = np.array([2, 2, 3, 4], np.int32)
    assert_close(ev(lambda a, b: op("divide", a, b), x, y), [3, -3, 2, 0], kb.I32)


@pytest.mark.parametrize("itype", [kb.I8, kb.I16, kb.I32, kb.I64])
def test_divide_integer_edge_cases_do_not_trap(itype):
    # a zero divisor gives 0; the lowest value over -1 wraps to itself (x86 traps on it for 32
    # and 64 bits, which took the process down)
    nt = kb.NP_OF[itype]
    lo, hi = np.iinfo(nt).min, np.iinfo(nt).max
    x = np.array([lo, lo, hi, -5, 5, lo], nt)
    y = np.array([-1, 0, -1, -1, 0, 1], nt)
    assert_close(ev(lambda a, b: op("divide", a, b), x, y), np.array([lo, 0, -hi, 5, 0, lo], nt),
                 itype)


def test_compare_integer_and_bool():
    x = np.array([1, 2, 3], np.int64)
    assert_close(ev(lambda a, b: op("greater", a, b), x, np.int64(2)), [False, False, True],
                 kb.BOOL)
    b = np.array([True, False])
    assert_close(ev(lambda a, c: op("equal", a, c), b, np.array([True, True])), [True, False],
                 kb.BOOL)


@pytest.mark.parametrize("target", [kb.F32, kb.F64, kb.I32, kb.I64, kb.BOOL, kb.U8, kb.F16])
def test_cast_from_float(target, dt):
    x = np.array([-2.7, -1.0, -0.2, 0.0, 0.5, 1.9, 3.0], kb.NP_OF[dt])
    if target == kb.U8:
        x = np.abs(x)
    expected = x.astype(kb.NP_OF[target])  # float -> int truncates toward zero; bool: x != 0
    assert_close(ev(lambda t: op("cast", t, target), x), expected, target)


@pytest.mark.parametrize("src", [kb.I32, kb.I64, kb.BOOL, kb.I8, kb.U8])
def test_cast_to_float(src, dt):
    x = np.array([0, 1, 1, 0, 1, 1], kb.NP_OF[src]).reshape(2, 3)
    assert_close(ev(lambda t: op("cast", t, dt), x), x.astype(kb.NP_OF[dt]), dt)


# ---- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(UNARY) + ["stop_gradient"])
def test_unary_null(name):
    assert error_of(name, None).startswith(name + ":")


@pytest.mark.parametrize("name", sorted(BINARY) + sorted(COMPARE))
def test_binary_null(name):
    x = const(np.ones(3, np.float32))
    assert error_of(name, None, x).startswith(name + ":")
    assert error_of(name, x, None).startswith(name + ":")


def test_null_output_pointer():
    x = const(np.ones(3, np.float32))
    assert kb.lib.kb_square(x, None) != 0
    assert kb.lib.kb_last_error_message().decode().startswith("square:")


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "cos"])
def test_unary_integer_rejected(name):
    msg = error_of(name, const(np.array([1, 2], np.int32)))
    assert msg.startswith(name + ":")


def test_pow_clip_bad_input():
    assert error_of("pow", None, 2.0).startswith("pow:")
    assert error_of("clip", None, 0.0, 1.0).startswith("clip:")
    assert error_of("clip", const(np.array([True])), 0.0, 1.0).startswith("clip:")
    assert error_of("clip", const(np.ones(2)), np.nan, 1.0).startswith("clip:")


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "equal", "less"])
def test_binary_incompatible(name):
    x, y = const(np.ones((2, 3), np.float32)), const(np.ones((4,), np.float32))
    assert error_of(name, x, y).startswith(name + ":")
    # mixed float dtypes are not promoted (TensorFlow raises)
    z = const(np.ones((2, 3), np.float64))
    assert error_of(name, x, z).startswith(name + ":")


def test_cast_bad_dtype():
    x = const(np.ones(3, np.float32))
    assert error_of("cast", x, 42).startswith("cast:")
    assert error_of("cast", x, kb.DEFAULT).startswith("cast:")
    assert error_of("cast", None, kb.F32).startswith("cast:")


@pytest.mark.parametrize("sx,sy", [((300, 257), (257,)), ((300, 1), (1, 257)),
                                   ((7, 1, 513), (65, 1)), ((100003,), ())])
@pytest.mark.parametrize("name", ["add", "divide", "maximum", "greater"])
def test_binary_large(name, sx, sy, dt, rng):
    x, y = sample(rng, sx, "any", dt), sample(rng, sy, "pos", dt)
    ref = BINARY.get(name) or COMPARE[name]
    expected = ref(x, y)
    r = ev(lambda a, b: op(name, a, b), x, y)
    assert_close(r, expected, kb.BOOL if name == "greater" else dt)


def test_unary_large(dt, rng):
    x = sample(rng, (1000, 257), "any", dt)
    assert_close(ev(lambda t: op("exp", op("sin", t)), x), np.exp(np.sin(x)), dt)
