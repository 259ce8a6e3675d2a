"""bfloat16 (kb_data_type KB_BFLOAT16): stored in 16 bits, computed in float32, rounded to nearest
even on every store, as float16 is.

NumPy has no bfloat16, so tensors go in and out as uint16 arrays of their bits (kb.py), and the
references round NumPy's float32 results with kb.bf16_bits. A single correctly rounded float32
operation (add, multiply, divide, sqrt, ...) followed by that rounding is what the kernels must
store bit for bit; functions with longer computations (exp, reductions, products, convolutions,
gradients) are checked against float64 within bfloat16's precision (8 significant bits).
"""
import ctypes

import numpy as np
import pytest

import kb
import kb_conv as kc
from kb import BF16, F32, F64, I32, bf16_bits, bf16_values, const, gradients, op, run

ULP = 2.0 ** -7  # bfloat16's spacing at 1


def bf(a):
    """A bfloat16 constant holding float values (rounded)."""
    return const(bf16_bits(a))


def values(bits):
    assert bits.dtype == np.uint16, bits.dtype
    return bf16_values(bits).astype(np.float64)


def close(bits, ref, rtol=2 * ULP, atol=0.0):
    np.testing.assert_allclose(values(bits), ref, rtol=rtol, atol=atol)


@pytest.fixture
def rng():
    return np.random.default_rng(20261123)


# ---- the type --------------------------------------------------------------------------------
def test_size_and_placeholder():
    x = kb.placeholder([2, -1], BF16)
    assert x.dtype == BF16 and x.shape == (2, None)
    c = bf([1.5, -2.0, 3.0])
    n = ctypes.c_size_t()
    kb.check(kb.lib.kb_tensor_nbytes(c, ctypes.byref(n)))
    assert n.value == 6
    np.testing.assert_array_equal(kb.to_numpy(c), [0x3FC0, 0xC000, 0x4040])


def test_cast_from_float32_rounds_to_nearest_even():
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1); 1 + 3*2^-8 ties up to
    # 1 + 2^-6; just above a tie rounds up; the largest finite float32 overflows to inf; NaN is
    # the canonical 0x7fff; subnormals and -0 keep their bits' meaning.
    xs = np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -8 + 2.0 ** -20, -(1 + 2.0 ** -8),
                   3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan, 1e-40, -0.0, 0.0,
                   65504.0, 1e-30, 123456.78, -7.0e-3], np.float32)
    got = run(op("cast", const(xs), BF16))
    assert got.dtype == np.uint16
    expected = np.array([0x3F80, 0x3F82, 0x3F81, 0xBF80, 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FFF],
                        np.uint16)
    np.testing.assert_array_equal(got[:9], expected)
    np.testing.assert_array_equal(got, bf16_bits(xs))


def test_casts_between_types(rng):
    xs = (rng.standard_normal(300) * 100).astype(np.float32)
    b = bf(xs)
    # bfloat16 -> float32 / float64 is exact.
    np.testing.assert_array_equal(run(op("cast", b, F32)), bf16_values(bf16_bits(xs)))
    np.testing.assert_array_equal(run(op("cast", b, F64)), values(bf16_bits(xs)))
    # -> int32 truncates toward zero, as every float cast does.
    np.testing.assert_array_equal(run(op("cast", b, I32)),
                                  np.trunc(values(bf16_bits(xs))).astype(np.int32))
    # float16 -> bfloat16 through float32 (exact) then one rounding.
    h = xs.astype(np.float16)
    np.testing.assert_array_equal(run(op("cast", const(h), BF16)),
                                  bf16_bits(h.astype(np.float32)))
    # int32 -> bfloat16: 257 is a tie between 256 and 258 (ties to even: 256).
    ints = np.array([257, 259, -257, 1 << 20, 12345], np.int32)
    np.testing.assert_array_equal(run(op("cast", const(ints), BF16)),
                                  bf16_bits(ints.astype(np.float32)))


# ---- elementwise: one float32 operation, one rounding ----------------------------------------
EXACT_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum}


@pytest.mark.parametrize("name", sorted(EXACT_BINARY))
@pytest.mark.parametrize("mode", ["const", "ph"])
def test_binary_is_float32_rounded_once(name, mode, rng):
    a = bf16_values(bf16_bits(rng.standard_normal((5, 67)) * 3))
    c = bf16_values(bf16_bits(rng.standard_normal(67) + 0.1))  # broadcast along rows
    if mode == "const":
        got = run(op(name, const(bf16_bits(a)), const(bf16_bits(c))))
    else:
        x, y = kb.placeholder([-1, 67], BF16), kb.placeholder([67], BF16)
        got = run(op(name, x, y), [(x, bf16_bits(a)), (y, bf16_bits(c))])
    np.testing.assert_array_equal(got, bf16_bits(EXACT_BINARY[name](a, c)))


@pytest.mark.parametrize("name,ref", [("sqrt", np.sqrt), ("square", np.square), ("abs", np.abs),
                                      ("negative", np.negative), ("round", np.round),
                                      ("sign", np.sign)])
def test_unary_is_float32_rounded_once(name, ref, rng):
    a = bf16_values(bf16_bits(np.abs(rng.standard_normal(500)) * 40 + 0.01))
    if name != "sqrt":
        a = a * np.where(rng.random(500) < 0.5, -1, 1).astype(np.float32)
    got = run(op(name, const(bf16_bits(a))))
    np.testing.assert_array_equal(got, bf16_bits(ref(a)))


@pytest.mark.parametrize("name,ref", [
    ("exp", np.exp), ("log", np.log), ("tanh", np.tanh), ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
    ("softplus", lambda v: np.log1p(np.exp(v))), ("sin", np.sin), ("cos", np.cos)])
def test_transcendental(name, ref, rng):
    a = values(bf16_bits(rng.uniform(0.05, 4, 400) * np.where(rng.random(400) < 0.5, -1, 1)))
    if name == "log":
        a = np.abs(a)
    got = run(op(name, const(bf16_bits(a))))
    # Rounded once from a float32 within a few float32 ulps: within half a bfloat16 ulp plus a
    # hair of the exact value.
    close(got, ref(a), rtol=ULP / 2 * 1.01, atol=1e-30)


def test_comparisons_give_bool(rng):
    a, c = bf16_bits(rng.standard_normal(100)), bf16_bits(rng.standard_normal(100))
    got = run(op("greater", const(a), const(c)))
    np.testing.assert_array_equal(got, bf16_values(a) > bf16_values(c))


# ---- reductions, products, convolutions ------------------------------------------------------
@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("max", np.max),
                                      ("min", np.min)])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_reductions_accumulate_in_float(name, ref, axis, rng):
    # 3000 terms of about 1: a bfloat16 accumulator would lose most of them (1 + 2^-8 == 1).
    a = bf16_bits(rng.uniform(0.5, 1.5, (3000, 7)))
    axes = None if axis is None else kb.i64([axis])
    got = run(op(name, const(a), axes, 0 if axis is None else 1, 0))
    expected = ref(values(a), axis=axis)
    if name in ("max", "min"):
        np.testing.assert_array_equal(got, bf16_bits(expected))
    else:
        close(got, expected, rtol=ULP)


def test_softmax(rng):
    a = bf16_bits(rng.standard_normal((6, 50)) * 3)
    v = values(a)
    e = np.exp(v - v.max(-1, keepdims=True))
    close(run(op("softmax", const(a), -1)), e / e.sum(-1, keepdims=True), rtol=ULP, atol=1e-6)


@pytest.mark.parametrize("shapes", [((17, 40), (40, 9)), ((3, 5, 64), (3, 64, 6))])
def test_dot_accumulates_in_float(shapes, rng):
    a = bf16_bits(rng.standard_normal(shapes[0]))
    b = bf16_bits(rng.standard_normal(shapes[1]))
    name = "dot" if len(shapes[0]) == 2 else None
    if name:
        got = run(op("dot", const(a), const(b)))
    else:
        got = run(op("batch_dot", const(a), const(b), kb.i64([2, 1])))
    exact = values(a) @ values(b)
    scale = np.abs(values(a)) @ np.abs(values(b))
    err = np.abs(values(got) - exact)
    assert np.all(err <= ULP / 2 * np.abs(exact) + 1e-6 * scale), err.max()


def test_conv2d_and_pooling(rng):
    x = bf16_bits(rng.standard_normal((2, 9, 8, 3)))
    k = bf16_bits(rng.standard_normal((3, 3, 3, 5)) / 5)
    got = run(kc.conv2d(const(x), const(k), (2, 1), "same"))
    from test_conv import conv_pads, np_conv, np_pool
    pads = conv_pads("same", [9, 8], [3, 3], [2, 1], [1, 1])
    exact = np_conv(values(x), values(k), [2, 1], [1, 1], pads)
    close(got, exact, rtol=ULP, atol=1e-3)
    # Max pooling picks stored values: exact.
    got = run(kc.pool2d(const(x), (3, 2), (2, 2), "valid", "channels_last", "max"))
    np.testing.assert_array_equal(
        got, bf16_bits(np_pool(values(x), (3, 2), (2, 2), [(0, 0), (0, 0)], "max")))
    got = run(kc.pool2d(const(x), (3, 3), (2, 2), "same", "channels_last", "avg"))
    pads = conv_pads("same", [9, 8], [3, 3], [2, 2], [1, 1])
    close(got, np_pool(values(x), (3, 3), (2, 2), pads, "avg"), rtol=ULP, atol=1e-3)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_gradients(padding, rng):
    """The data and filter gradients (float32 kernels on widened copies) against the float32
    gradients of the same values, within bfloat16's rounding of the result."""
    xs = bf16_bits(rng.standard_normal((2, 7, 6, 3)))
    ks = bf16_bits(rng.standard_normal((3, 2, 3, 4)) / 4)
    # The seed of the gradients (exact in both types).
    ws = bf16_values(bf16_bits(rng.standard_normal((2, 3, 5, 4) if padding == "valid" else
                                                   (2, 4, 6, 4))))
    grads = {}
    for dt, store in ((BF16, lambda a: bf16_bits(a)), (F32, lambda a: a.astype(np.float32))):
        x = kb.variable(store(bf16_values(xs)), dt)
        k = kb.variable(store(bf16_values(ks)), dt)
        y = kc.conv2d(x, k, (2, 1), padding)
        loss = op("sum", op("multiply", y, const(store(ws))), None, 0, 0)
        grads[dt] = run(gradients(loss, [x, k]))
    for g16, g32 in zip(grads[BF16], grads[F32]):
        assert g16.dtype == np.uint16
        scale = np.abs(g32).max()
        np.testing.assert_allclose(values(g16), g32, rtol=ULP, atol=ULP * scale / 8)


# ---- gradients and a training step -----------------------------------------------------------
def test_gradients_of_a_dense_layer(rng):
    xs = bf16_bits(rng.standard_normal((16, 12)))
    ws = bf16_bits(rng.standard_normal((12, 4)) / 3)
    bs = bf16_bits(rng.standard_normal(4) / 3)
    x = kb.placeholder([-1, 12], BF16)
    w, b = kb.variable(ws, BF16), kb.variable(bs, BF16)
    h = op("tanh", op("add", op("dot", x, w), b))
    loss = op("mean", op("square", h), None, 0, 0)
    gw, gb = gradients(loss, [w, b])
    assert gw.dtype == BF16 and gb.dtype == BF16
    got_loss, got_w, got_b = run([loss, gw, gb], [(x, xs)])
    xv, wv, bv = values(xs), values(ws), values(bs)
    hv = np.tanh(xv @ wv + bv)
    dpre = 2 * hv / hv.size * (1 - hv * hv)
    close(got_loss, np.mean(hv * hv), rtol=4 * ULP)
    # Each stored intermediate (h, the seed, dpre) is rounded to bfloat16 on the way: a few ulps
    # of the sum of the terms' magnitudes (the sums cancel).
    scale_w, scale_b = np.abs(xv.T) @ np.abs(dpre), np.abs(dpre).sum(0)
    assert np.all(np.abs(values(got_w) - xv.T @ dpre) <= 4 * ULP * scale_w)
    assert np.all(np.abs(values(got_b) - dpre.sum(0)) <= 4 * ULP * scale_b)


def test_training_step_updates_variables(rng):
    ws = bf16_bits(rng.standard_normal((8, 1)))
    w = kb.variable(ws, BF16)
    x = kb.placeholder([-1, 8], BF16)
    loss = op("sum", op("square", op("dot", x, w)), None, 0, 0)
    (g,) = gradients(loss, [w])
    lr = bf(np.float32(0.01))
    f = kb.Function([x], [loss], [op("update_sub", w, op("multiply", g, lr))])
    xs = bf16_bits(rng.standard_normal((4, 8)))
    before = np.sum((values(xs) @ values(ws)) ** 2)
    losses = [float(values(f(xs)[0])) for _ in range(5)]
    assert abs(losses[0] - before) <= 4 * ULP * before
    assert losses[-1] < losses[0]
    assert kb.to_numpy(w).dtype == np.uint16


# ---- random and errors -----------------------------------------------------------------------
def test_random_uniform():
    seed = ctypes.c_int64(7)
    v = op("random_uniform_variable", kb.i64([4000]), 1, -2.0, 3.0, BF16, None,
           ctypes.byref(seed))
    assert v.dtype == BF16
    r = values(kb.to_numpy(v))
    assert r.min() >= -2 and r.max() <= 3 and abs(r.mean() - 0.5) < 0.1
    # Every value is a bfloat16: rounding it again changes nothing.
    np.testing.assert_array_equal(bf16_bits(r), kb.to_numpy(v))


def test_random_uniform_stays_below_its_upper_bound():
    # u in [0, 1) takes 8 random bits, exact in bfloat16: with more, a u just below 1 would round
    # up to 1 (about one draw in 500 with float16's 11 bits).
    seed = ctypes.c_int64(11)
    variable = op("random_uniform_variable", kb.i64([20000]), 1, 0.0, 1.0, BF16, None,
                  ctypes.byref(seed))
    draw = op("random_uniform", kb.i64([20000]), 1, 0.0, 1.0, BF16, ctypes.byref(seed))
    for r in (values(kb.to_numpy(variable)), values(run(draw))):
        assert r.min() >= 0 and r.max() < 1
        assert len(np.unique(r)) == 256  # every multiple of 2^-8 in [0, 1)


def test_floatx_stays_a_keras_type():
    st = kb.lib.kb_set_floatx(BF16)
    assert st != 0 and "set_floatx" in kb.lib.kb_last_error_message().decode()
    fx = ctypes.c_int32()
    kb.check(kb.lib.kb_floatx(ctypes.byref(fx)))
    assert fx.value == F32


def test_integer_only_functions_reject_it():
    msg = kb.error_of("one_hot", bf(np.array([1.0, 2.0])), 4)
    assert "one_hot" in msg
