"""The plan-time fusion of elementwise steps into one FusedElementwise step
(core/compile/fuse_elementwise.cpp): fused results equal the unfused plan's (KB_FUSE=0) exactly
(same operations in the same order per element) and NumPy's, for chains, trees, broadcasts,
casts, activations and a training step's gradient graph, in float32 and float64; values read
twice or returned are not fused away; the plans are checked with KB_LOG_PLAN=1 in a child
process.
"""
import ctypes

import numpy as np
import pytest

import kb
from kb import const, unfused

F32, F64 = kb.F32, kb.F64
DTYPES = [F32, F64]


def both(inputs, outputs, *values):
    """(fused results, unfused results) of one function of the inputs, built twice."""
    f, g = kb.Function(inputs, outputs), kb.Function(inputs, outputs)
    return f(*values), unfused(g, *values)


def same(fused, plain):
    assert len(fused) == len(plain)
    for a, p in zip(fused, plain):
        assert a.dtype == p.dtype and a.shape == p.shape
        np.testing.assert_array_equal(a, p)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def w1(x, w, b):
    return kb.op("multiply", kb.op("sigmoid", kb.op("add", kb.op("multiply", x, w), b)),
                 kb.op("tanh", x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 33), (3, 700), (2, 3, 1030), (5,)])
def test_w1_rows_broadcast(dtype, shape):
    rng = np.random.default_rng(1)
    nt = kb.NP_OF[dtype]
    xs = rng.standard_normal(shape).astype(nt)
    ws = rng.standard_normal(shape[-1:]).astype(nt)
    bs = rng.standard_normal(shape[-1:]).astype(nt)
    x = kb.placeholder([-1] + list(shape[1:]), dtype)
    y = w1(x, kb.variable(ws, dtype), kb.variable(bs, dtype))
    fused, plain = both([x], [y], xs)
    same(fused, plain)
    kb.assert_close(fused[0], np_sigmoid(xs * ws + bs) * np.tanh(xs), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_chain_tree_scalars_columns(dtype):
    """A tree with a scalar, a column and a full operand, unary and binary table ops."""
    rng = np.random.default_rng(2)
    nt = kb.NP_OF[dtype]
    xs = rng.standard_normal((4, 5, 300)).astype(nt)
    zs = rng.standard_normal((4, 5, 300)).astype(nt)
    col = rng.standard_normal((5, 1)).astype(nt)
    x, z = kb.placeholder([4, 5, 300], dtype), kb.placeholder([4, 5, 300], dtype)
    two = const(np.asarray(2.0, nt))
    a = kb.op("exp", kb.op("negative", kb.op("square", x)))            # chain
    c = kb.op("maximum", kb.op("multiply", z, two), const(col))       # scalar and column
    d = kb.op("divide", kb.op("add", a, c), kb.op("add", kb.op("abs", z), two))
    y = kb.op("subtract", kb.op("sqrt", kb.op("abs", d)), kb.op("sin", x))
    fused, plain = both([x, z], [y], xs, zs)
    same(fused, plain)
    e = (np.exp(-xs * xs) + np.maximum(zs * 2, col)) / (np.abs(zs) + 2)
    kb.assert_close(fused[0], np.sqrt(np.abs(e)) - np.sin(xs), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,small", [
    ((3, 5, 30, 37), [(1, 5, 1, 1), (3, 1, 1, 1), (1, 1, 1, 1)]),  # runs of one value per block
    ((4, 6, 40, 48), [(1, 1, 1, 48), (1, 1, 40, 48), (1, 6, 1, 48)]),  # repeating patterns
    ((2, 9, 7, 64), [(1, 1, 1, 64), (1, 9, 1, 1), (2, 1, 7, 1)])], ids=str)
def test_broadcast_operands_kept_between_blocks(dtype, shape, small):
    """Broadcast operands whose blocks repeat (one value, or a pattern with a period that does or
    does not divide the block) are kept between blocks; one of them is float32 cast inside the
    group. A second function of the same shapes runs in between, so nothing kept leaks."""
    rng = np.random.default_rng(9)
    nt = kb.NP_OF[dtype]
    xs, zs = [rng.standard_normal(shape).astype(nt) for _ in range(2)]
    ps = [rng.standard_normal(s).astype(nt) for s in small]
    qs = [rng.standard_normal(s).astype(nt) for s in small]
    p32 = rng.standard_normal(small[0]).astype(np.float32)
    x, z = kb.placeholder(list(shape), dtype), kb.placeholder(list(shape), dtype)

    def program(a, b, c, d):
        t = kb.op("add", kb.op("multiply", x, const(a)), kb.op("subtract", z, const(b)))
        u = kb.op("multiply", kb.op("tanh", t), const(c))
        return kb.op("add", u, kb.op("cast", const(d), dtype))

    def want(a, b, c, d):
        return np.tanh(xs * a + (zs - b)) * c + d.astype(nt)

    f, g = program(*ps, p32), program(*qs, -p32)
    fused, plain = both([x, z], [f, g], xs, zs)
    same(fused, plain)
    kb.assert_close(fused[0], want(*ps, p32), dtype)
    kb.assert_close(fused[1], want(*qs, -p32), dtype)
    one, other = kb.Function([x, z], [f]), kb.Function([x, z], [g])
    for _ in range(2):
        same(one(xs, zs), fused[:1])
        same(other(xs, zs), fused[1:])


@pytest.mark.parametrize("dtype", DTYPES)
def test_casts_and_activations(dtype):
    """Casts from other dtypes (int, bool, the other float) become converting loads."""
    rng = np.random.default_rng(3)
    nt = kb.NP_OF[dtype]
    other = F64 if dtype == F32 else F32
    xs = rng.standard_normal((6, 257)).astype(nt)
    os_ = rng.standard_normal((6, 257)).astype(kb.NP_OF[other])
    ks = rng.integers(-3, 4, (6, 257)).astype(np.int32)
    x = kb.placeholder([-1, 257], dtype)
    o = kb.placeholder([-1, 257], other)
    k = kb.placeholder([-1, 257], kb.I32)
    pos = kb.op("greater", x, const(np.zeros((), nt)))
    y = kb.op("multiply", kb.op("relu", kb.op("add", x, kb.op("cast", k, dtype)), 0.0, None, 0.0),
              kb.op("cast", pos, dtype))
    y = kb.op("add", y, kb.op("softplus", kb.op("tanh", kb.op("cast", o, dtype))))
    y = kb.op("add", y, kb.op("sigmoid", x))
    fused, plain = both([x, o, k], [y], xs, os_, ks)
    same(fused, plain)
    osn = os_.astype(nt)
    exp = np.maximum(xs + ks, 0) * (xs > 0) + np.log1p(np.exp(np.tanh(osn))) + np_sigmoid(xs)
    kb.assert_close(fused[0], exp, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_values_read_twice_or_returned(dtype):
    """An intermediate read by a non-elementwise step or returned stays a value of its own."""
    rng = np.random.default_rng(4)
    nt = kb.NP_OF[dtype]
    xs = rng.standard_normal((8, 130)).astype(nt)
    x = kb.placeholder([-1, 130], dtype)
    t = kb.op("tanh", kb.op("multiply", x, x))          # x read twice by one step
    u = kb.op("exp", t)
    s = kb.op("sum", t, None, 0, 0)                      # t read outside the elementwise tree
    y = kb.op("add", kb.op("multiply", u, t), kb.op("negative", u))  # t, u read twice inside
    fused, plain = both([x], [y, s, u], xs)
    same(fused, plain)
    tn = np.tanh(xs * xs)
    kb.assert_close(fused[0], np.exp(tn) * tn - np.exp(tn), dtype)
    kb.assert_close(fused[1], tn.sum(), dtype, rtol=1e-4)
    kb.assert_close(fused[2], np.exp(tn), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mlp_training_step_gradients(dtype):
    """The gradient graph of an MLP loss (sigmoid and relu layers, squared error) and an SGD
    update: fused and unfused plans give the same loss, gradients and updated variables."""
    rng = np.random.default_rng(5)
    nt = kb.NP_OF[dtype]
    xs = rng.standard_normal((16, 12)).astype(nt)
    ts = rng.standard_normal((16, 3)).astype(nt)
    w1s = (rng.standard_normal((12, 20)) / 3).astype(nt)
    b1s = (rng.standard_normal(20) / 3).astype(nt)
    w2s = (rng.standard_normal((20, 3)) / 3).astype(nt)
    results = []
    for fuse in (True, False):
        x, t = kb.placeholder([-1, 12], dtype), kb.placeholder([-1, 3], dtype)
        w1v, b1v, w2v = kb.variable(w1s, dtype), kb.variable(b1s, dtype), kb.variable(w2s, dtype)
        h = kb.op("add", kb.op("dot", x, w1v), b1v)
        h = kb.op("multiply", kb.op("sigmoid", h), kb.op("relu", h, 0.0, None, 0.0))
        o = kb.op("tanh", kb.op("dot", h, w2v))
        loss = kb.op("mean", kb.op("square", kb.op("subtract", o, t)), None, 0, 0)
        grads = kb.gradients(loss, [w1v, b1v, w2v])
        lr = const(np.asarray(0.1, nt))
        ups = [kb.op("update_sub", v, kb.op("multiply", g, lr)) for v, g in
               zip([w1v, b1v, w2v], grads)]
        f = kb.Function([x, t], [loss] + grads, ups)
        out = f(xs, ts) if fuse else unfused(f, xs, ts)
        out += [kb.to_numpy(v) for v in (w1v, b1v, w2v)]
        results.append(out)
    same(results[0], results[1])
    pre = xs @ w1s + b1s
    s = np_sigmoid(pre)
    h = s * np.maximum(pre, 0)
    o = np.tanh(h @ w2s)
    kb.assert_close(results[0][0], np.mean((o - ts) ** 2), dtype, rtol=1e-5)
    do = 2 * (o - ts) / o.size * (1 - o * o)
    kb.assert_close(results[0][3], h.T @ do, dtype, rtol=1e-4, atol=1e-6)
    dh = do @ w2s.T
    dpre = dh * (s * (1 - s) * np.maximum(pre, 0) + s * (pre > 0))
    kb.assert_close(results[0][2], dpre.sum(0), dtype, rtol=1e-4, atol=1e-6)
    kb.assert_close(results[0][1], xs.T @ dpre, dtype, rtol=1e-4, atol=1e-6)


PLAN_SCRIPT = r"""
import sys
import numpy as np
import kb
case = sys.argv[1]
x = kb.placeholder([-1, 64], kb.F32)
w = kb.variable(np.full(64, 0.5, np.float32))
b = kb.variable(np.full(64, 0.25, np.float32))
pre = kb.op("add", kb.op("multiply", x, w), b)
y = kb.op("multiply", kb.op("sigmoid", pre), kb.op("tanh", x))
outs = [y]
if case == "pre_is_output":
    outs = [y, pre]
elif case == "train":
    loss = kb.op("mean", y, None, 0, 0)
    outs = [loss] + kb.gradients(loss, [w, b])
elif case == "single":
    outs = [kb.op("tanh", x)]
elif case == "relu_grad":  # dy * (x > 0): the comparison goes into the fused step
    outs = [kb.op("multiply", kb.op("cast", kb.op("greater", x, kb.const(np.float32(0))),
                                    kb.F32), y)]
elif case == "sum_grad":  # d sum(sigmoid(x)) / dx: the seed's broadcast is loaded in place
    outs = kb.gradients(kb.op("sum", kb.op("sigmoid", x), None, 0, 0), [x])
elif case in ("half", "bfloat16"):
    h = kb.op("cast", x, kb.F16 if case == "half" else kb.BF16)
    outs = [kb.op("multiply", kb.op("sigmoid", kb.op("add", h, h)), kb.op("tanh", h))]
elif case == "mask_returned":  # the bool mask itself leaves the plan: not absorbed
    m = kb.op("greater", x, kb.const(np.float32(0)))
    outs = [m, kb.op("multiply", kb.op("cast", m, kb.F32), y)]
kb.Function([x], outs)(np.ones((4, 64), np.float32))
"""


def plan_steps(case, **env):
    return kb.plan_steps(PLAN_SCRIPT, case, **env)


def test_plans():
    assert plan_steps("forward") == ["FusedElementwise"]
    assert plan_steps("forward", KB_FUSE="0") == ["Mul", "Add", "Sigmoid", "Tanh", "Mul"]
    # The pre-activation is returned: two fused steps, the first computing it.
    assert plan_steps("pre_is_output") == ["FusedElementwise", "FusedElementwise"]
    assert plan_steps("single") == ["Tanh"]
    assert plan_steps("relu_grad") == ["FusedElementwise"]
    assert plan_steps("mask_returned") == ["Greater", "FusedElementwise"]
    assert "BroadcastLike" in plan_steps("sum_grad", KB_FUSE="0")
    assert "BroadcastLike" not in plan_steps("sum_grad")
    train = plan_steps("train")
    assert "FusedElementwise" in train, train
    assert len(train) < len(plan_steps("train", KB_FUSE="0")), train
    # float16 and bfloat16 groups: fused on the GPU, bfloat16's on the CPU too (the cast of x is
    # the converting load); the CPU's fused kernel declines float16's.
    for case in ("half", "bfloat16"):
        if kb.plan_devices(PLAN_SCRIPT, case) == ["cpu"] and case == "half":
            assert plan_steps(case) == ["Cast", "Add", "Sigmoid", "Tanh", "Mul"]
        else:
            assert plan_steps(case) == ["FusedElementwise"]


@pytest.mark.parametrize("dtype", [kb.F16, kb.BF16], ids=["float16", "bfloat16"])
def test_16_bit_float_groups(dtype):
    """A float16 or bfloat16 group computes in float and rounds every instruction's result to its
    type, as each unfused kernel stores its result: the fused values equal the unfused ones
    exactly."""
    rng = np.random.default_rng(6)
    def store(a):
        return kb.narrow_store(a, dtype)

    def values(s):
        return kb.narrow_values(s, dtype).astype(np.float64)

    xs = store(rng.standard_normal((7, 130)))
    ws = store(rng.standard_normal(130))
    bs = store(rng.standard_normal(130))
    os_ = rng.standard_normal((7, 130)).astype(np.float32)
    ks = rng.integers(-3, 4, (7, 130)).astype(np.int32)
    x = kb.placeholder([-1, 130], dtype)
    o = kb.placeholder([-1, 130], kb.F32)
    k = kb.placeholder([-1, 130], kb.I32)
    two = const(store(np.asarray(2.0)))
    y = w1(x, kb.variable(ws, dtype), kb.variable(bs, dtype))
    y = kb.op("add", y, kb.op("softplus", kb.op("tanh", kb.op("cast", o, dtype))))
    e = kb.op("exp", kb.op("negative", kb.op("square", x)))
    y = kb.op("add", y, kb.op("divide", e, kb.op("add", kb.op("abs", x), two)))
    y = kb.op("multiply", y, kb.op("cast", kb.op("add", k, k), dtype))
    fused, plain = both([x, o, k], [y], xs, os_, ks)
    same(fused, plain)
    x64, o64 = values(xs), values(store(os_))
    w64, b64 = values(ws), values(bs)
    ref = np_sigmoid(x64 * w64 + b64) * np.tanh(x64) + np.log1p(np.exp(np.tanh(o64)))
    ref = (ref + np.exp(-x64 * x64) / (np.abs(x64) + 2)) * (2 * ks)
    tol = 2e-2 if dtype == kb.F16 else 1e-1  # bfloat16 keeps 8 significant bits
    np.testing.assert_allclose(values(fused[0]), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cmp", ["greater", "greater_equal", "less", "less_equal", "equal",
                                 "not_equal"])
def test_comparisons_cast_to_float(dtype, cmp):
    """A comparison read only by a cast to float is computed in the fused step: 1 or 0 as the
    bool tensor cast would give, NaN comparing false (true for not_equal)."""
    rng = np.random.default_rng(5)
    nt = kb.NP_OF[dtype]
    xs = np.round(rng.standard_normal((6, 130)), 1).astype(nt)
    xs[0, :4] = [np.nan, 0.0, -0.0, np.inf]
    ts = np.round(rng.standard_normal(130), 1).astype(nt)
    dys = rng.standard_normal((6, 130)).astype(nt)
    x, dy = kb.placeholder([-1, 130], dtype), kb.placeholder([-1, 130], dtype)
    t = kb.variable(ts, dtype)
    mask = kb.op("cast", kb.op(cmp, x, t), dtype)
    y = kb.op("multiply", kb.op("add", mask, kb.op("square", dy)), dy)
    fused, plain = both([x, dy], [y], xs, dys)
    same(fused, plain)
    ref = getattr(np, cmp)(xs, ts).astype(nt)
    np.testing.assert_array_equal(fused[0], ((ref + dys * dys) * dys).astype(nt))


def bf16_round(a):
    """float64 values rounded to bfloat16 (through float32), as a bfloat16 store rounds them."""
    return kb.narrow_values(kb.narrow_store(np.asarray(a, np.float64), kb.BF16),
                            kb.BF16).astype(np.float64)


MIXED_SCRIPT = r"""
import ctypes
import sys
import numpy as np
import kb
x = kb.placeholder([-1, 64], kb.BF16)
s = kb.variable(np.full(64, 0.5, np.float32))
pre = kb.op("add", kb.op("multiply", kb.op("cast", x, kb.F32), s), s)
y = kb.op("relu", kb.op("cast", pre, kb.BF16), 0.0, ctypes.byref(ctypes.c_double(6.0)), 0.0)
if sys.argv[1] == "float_out":
    y = kb.op("add", kb.op("cast", y, kb.F32), s)
kb.Function([x], [y])(kb.narrow_store(np.ones((4, 64)), kb.BF16))
"""


def test_mixed_float32_bfloat16_plans():
    """On the CPU, a float32 computation between bfloat16 steps (Keras' BatchNormalization of a
    bfloat16 layer's output: cast up, scale and shift, cast down, activation) is one fused step,
    whichever dtype its result has; a GPU's fused programs are of one dtype."""
    for case in ("bf16_out", "float_out"):
        if kb.plan_devices(MIXED_SCRIPT, case) == ["cpu"]:
            assert kb.plan_steps(MIXED_SCRIPT, case) == ["FusedElementwise"], case
        assert "FusedElementwise" not in kb.plan_steps(MIXED_SCRIPT, case, KB_FUSE="0")


@pytest.mark.parametrize("out", [kb.BF16, F32], ids=["bfloat16_out", "float32_out"])
def test_mixed_float32_bfloat16_groups(out):
    """A group mixing float32 and bfloat16 steps computes in float32 and rounds exactly the
    values the unfused plan stores in bfloat16 (casts down, bfloat16 steps, an integer cast to
    bfloat16): fused equals unfused bit for bit, and NumPy's emulation of the roundings."""
    rng = np.random.default_rng(11)
    xs = kb.narrow_store(rng.standard_normal((5, 3, 70)) * 3, kb.BF16)
    scale = rng.standard_normal(70).astype(np.float32)
    shift = rng.standard_normal(70).astype(np.float32)
    gate = kb.narrow_store(rng.standard_normal(70), kb.BF16)
    ks = rng.integers(-2, 3, (5, 3, 70)).astype(np.int32)
    x = kb.placeholder([-1, 3, 70], kb.BF16)
    k = kb.placeholder([-1, 3, 70], kb.I32)
    norm = kb.op("add", kb.op("multiply", kb.op("cast", x, F32), kb.variable(scale)),
                 kb.variable(shift))                                       # float32
    six = ctypes.byref(ctypes.c_double(6.0))
    h = kb.op("relu", kb.op("cast", norm, kb.BF16), 0.0, six, 0.0)        # bfloat16
    h = kb.op("multiply", kb.op("add", h, kb.op("cast", k, kb.BF16)), kb.variable(gate, kb.BF16))
    y = kb.op("cast", h, F32) if out == F32 else h
    if out == F32:
        y = kb.op("subtract", kb.op("tanh", y), kb.variable(shift))
    fused, plain = both([x, k], [y], xs, ks)
    same(fused, plain)
    x64 = kb.narrow_values(xs, kb.BF16).astype(np.float64)
    n32 = (x64.astype(np.float32) * scale + shift).astype(np.float64)
    hr = bf16_round(np.clip(bf16_round(n32), 0, 6))
    hr = bf16_round(bf16_round(hr + ks) * kb.narrow_values(gate, kb.BF16))
    if out == F32:
        np.testing.assert_allclose(fused[0], np.tanh(hr) - shift, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(kb.narrow_values(fused[0], kb.BF16), hr)
