"""rnn, map_fn, foldl, foldr over the C ABI, against NumPy reference loops."""
import ctypes
from ctypes import c_void_p

import numpy as np
import pytest

import kb
from kb import F64, Tensor, check, const, lib, placeholder, run, variable

STEP = kb.native.kb_step_function
MAP = kb.native.kb_map_function
FOLD = kb.native.kb_fold_function


def borrowed(h):
    """A Tensor for a handle the library lends to a callback."""
    lib.kb_tensor_retain(h)
    return Tensor(h)


def hand_over(t):
    """A new reference for the library to take over."""
    lib.kb_tensor_retain(t.h.value)
    return t.h.value


def make_step(fn):
    """fn(x, states) -> (output, new_states), with Tensors."""

    def step(_, x, states, n, out, new_states):
        try:
            o, ns = fn(borrowed(x), [borrowed(states[i]) for i in range(n)])
            lst = c_void_p()
            check(lib.kb_tensor_list_new(kb.handles(ns), len(ns), ctypes.byref(lst)))
            out[0] = hand_over(o)
            new_states[0] = lst.value
            return 0
        except Exception as e:  # noqa: BLE001 - reported to the library as a failure
            lib.kb_set_error(1, str(e).encode())
            return 1

    return STEP(step)


def rnn(fn, inputs, states, go_backwards=False, mask=None, constants=(), unroll=False):
    cb = make_step(fn)
    last, outs, new_states = c_void_p(), c_void_p(), c_void_p()
    check(lib.kb_rnn(cb, None, inputs.h, kb.handles(states), len(states), int(go_backwards),
                     mask.h if mask is not None else None, kb.handles(list(constants)),
                     len(constants), int(unroll), None, ctypes.byref(last), ctypes.byref(outs),
                     ctypes.byref(new_states)))
    return Tensor(last.value), Tensor(outs.value), kb.list_items(new_states.value)


def simple_cell(W, U, b=None):
    def fn(x, states):
        h = kb.op("add", kb.op("dot", x, W), kb.op("dot", states[0], U))
        if len(states) > 1:  # a constant
            h = kb.op("add", h, states[1])
        h = kb.op("tanh", h)
        return h, [h]
    return fn


def ref_rnn(x, h0, W, U, c=None, go_backwards=False, mask=None, symbolic=True):
    """NumPy: outputs (B, T, units), last output, final state."""
    B, T, _ = x.shape
    h = h0.copy()
    prev = np.zeros_like(h0)
    outs = []
    order = range(T - 1, -1, -1) if go_backwards else range(T)
    for t in order:
        new = np.tanh(x[:, t] @ W + h @ U + (0 if c is None else c))
        out = new
        if mask is not None:
            m = mask[:, t][:, None].astype(bool)
            out = np.where(m, new, h if symbolic else prev)
            new = np.where(m, new, h)
        h, prev = new, out
        outs.append(out)
    return np.stack(outs, 1), outs[-1], h


@pytest.fixture
def setup():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5, 4))
    h0 = rng.normal(size=(3, 6)) * 0.5
    W = rng.normal(size=(4, 6)) * 0.4
    U = rng.normal(size=(6, 6)) * 0.4
    return x, h0, W, U


@pytest.mark.parametrize("unroll", [False, True])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_rnn_values(setup, unroll, go_backwards):
    x, h0, W, U = setup
    xt = const(x)
    last, outs, states = rnn(simple_cell(variable(W, F64), variable(U, F64)), xt, [const(h0)],
                             go_backwards=go_backwards, unroll=unroll)
    r_outs, r_last, r_h = ref_rnn(x, h0, W, U, go_backwards=go_backwards)
    got = run([outs, last, states[0]])
    np.testing.assert_allclose(got[0], r_outs, rtol=1e-12)
    np.testing.assert_allclose(got[1], r_last, rtol=1e-12)
    np.testing.assert_allclose(got[2], r_h, rtol=1e-12)


@pytest.mark.parametrize("unroll", [False, True])
def test_rnn_mask(setup, unroll):
    x, h0, W, U = setup
    mask = np.array([[1, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=np.float64)
    last, outs, states = rnn(simple_cell(variable(W, F64), variable(U, F64)), const(x),
                             [const(h0)], mask=const(mask), unroll=unroll)
    r_outs, r_last, r_h = ref_rnn(x, h0, W, U, mask=mask, symbolic=not unroll)
    got = run([outs, last, states[0]])
    np.testing.assert_allclose(got[0], r_outs, rtol=1e-12)
    np.testing.assert_allclose(got[1], r_last, rtol=1e-12)
    np.testing.assert_allclose(got[2], r_h, rtol=1e-12)


def test_rnn_constants_and_unknown_length(setup):
    x, h0, W, U = setup
    c = np.linspace(-0.5, 0.5, 6)
    xp = placeholder([-1, -1, 4], F64)
    hp = placeholder([-1, 6], F64)
    last, outs, states = rnn(simple_cell(variable(W, F64), variable(U, F64)), xp, [hp],
                             constants=[const(c)])
    f = kb.Function([xp, hp], [outs, states[0]])
    for T in (5, 2):
        got = f(x[:, :T], h0)
        r_outs, _, r_h = ref_rnn(x[:, :T], h0, W, U, c=c)
        np.testing.assert_allclose(got[0], r_outs, rtol=1e-12)
        np.testing.assert_allclose(got[1], r_h, rtol=1e-12)


def lstm_like(W, U):
    def fn(x, states):
        h, c = states
        z = kb.op("add", kb.op("dot", x, W), kb.op("dot", h, U))
        c2 = kb.op("add", kb.op("multiply", c, kb.op("sigmoid", z)), kb.op("tanh", z))
        h2 = kb.op("multiply", kb.op("tanh", c2), kb.op("sigmoid", z))
        return h2, [h2, c2]
    return fn


def finite_difference(f, value, eps=1e-6):
    g = np.zeros_like(value)
    it = np.nditer(value, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        v = value.copy()
        v[i] += eps
        up = f(v)
        v[i] -= 2 * eps
        g[i] = (up - f(v)) / (2 * eps)
    return g


@pytest.mark.parametrize("cell", ["simple", "lstm"])
@pytest.mark.parametrize("masked", [False, True])
def test_rnn_gradients(setup, cell, masked):
    x, h0, W, U = setup
    rng = np.random.default_rng(1)
    wo = rng.normal(size=(3, 5, 6))
    mask = np.array([[1, 1, 0, 1, 1], [1, 0, 1, 0, 1], [1, 1, 1, 1, 1]], dtype=np.float64)

    def build(unroll, xv, Wv, Uv, h0v):
        xp, hp = placeholder([3, 5, 4], F64), placeholder([3, 6], F64)
        Wp, Up = placeholder([4, 6], F64), placeholder([6, 6], F64)
        fn = simple_cell(Wp, Up) if cell == "simple" else lstm_like(Wp, Up)
        st = [hp] if cell == "simple" else [hp, kb.op("multiply", hp, const(np.float64(0.5)))]
        last, outs, states = rnn(fn, xp, st, mask=const(mask) if masked else None, unroll=unroll)
        loss = kb.op("add", kb.op("sum", kb.op("multiply", outs, const(wo)), None, 0, 0),
                     kb.op("sum", kb.op("multiply", states[-1], states[0]), None, 0, 0))
        grads = kb.gradients(loss, [xp, Wp, Up, hp])
        return kb.Function([xp, Wp, Up, hp], [loss] + grads)

    args = [x, W, U, h0]
    sym = build(False, *args)(*args)
    unr = build(True, *args)(*args)
    for a, b in zip(sym, unr):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    f = build(False, *args)
    for k in range(4):
        def loss_at(v, k=k):
            vals = list(args)
            vals[k] = v
            return f(*vals)[0]
        np.testing.assert_allclose(sym[1 + k], finite_difference(loss_at, args[k]), rtol=1e-5,
                                   atol=1e-7)


def test_map_fn_and_gradient():
    rng = np.random.default_rng(2)
    e = rng.normal(size=(4, 3))
    cb = MAP(lambda _, x, out: _set(out, kb.op("square", borrowed(x))))
    out = c_void_p()
    ep = placeholder([-1, 3], F64)
    check(lib.kb_map_fn(cb, None, ep.h, None, -1, ctypes.byref(out)))
    y = Tensor(out.value)
    g = kb.gradients(kb.op("sum", y, None, 0, 0), [ep])[0]
    got = kb.Function([ep], [y, g])(e)
    np.testing.assert_allclose(got[0], e ** 2)
    np.testing.assert_allclose(got[1], 2 * e)


def _set(out, t):
    out[0] = hand_over(t)
    return 0


def fold(name, elems, init=None, fn="add"):
    cb = FOLD(lambda _, acc, x, out: _set(out, kb.op(fn, borrowed(acc), borrowed(x))))
    out = c_void_p()
    check(getattr(lib, "kb_" + name)(cb, None, elems.h, init.h if init else None, None,
                                    ctypes.byref(out)))
    return Tensor(out.value)


def test_foldl_foldr_order_matters_in_float32():
    e = np.array([1.0, 1e8, -1e8], dtype=np.float32)
    left = np.float32(0)
    for v in e:
        left = np.float32(left + v)
    right = np.float32(0)
    for v in e[::-1]:
        right = np.float32(right + v)
    assert left != right  # the summation order matters here
    got_l = run(fold("foldl", const(e), const(np.float32(0))))
    got_r = run(fold("foldr", const(e), const(np.float32(0))))
    assert got_l == left and got_r == right


def test_fold_without_initializer_and_gradient():
    rng = np.random.default_rng(3)
    e = rng.normal(size=(5, 2))
    ep = placeholder([5, 2], F64)
    prod_l = fold("foldl", ep, fn="multiply")
    g = kb.gradients(kb.op("sum", prod_l, None, 0, 0), [ep])[0]
    got = kb.Function([ep], [prod_l, g])(e)
    np.testing.assert_allclose(got[0], np.prod(e, 0), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.prod(e, 0) / e, rtol=1e-10)
    np.testing.assert_allclose(run(fold("foldr", const(e), fn="subtract")),
                               ((e[4] - e[3]) - e[2] - e[1]) - e[0], rtol=1e-12)


def test_errors(setup):
    x, h0, W, U = setup
    cell = simple_cell(variable(W, F64), variable(U, F64))
    with pytest.raises(kb.KBError, match=r"^\[\d\] rnn: input should be at least 3D"):
        rnn(cell, const(x[:, 0]), [const(h0)])
    with pytest.raises(kb.KBError, match=r"^\[\d\] rnn: unrolling requires a fixed number"):
        rnn(cell, placeholder([3, -1, 4], F64), [const(h0)], unroll=True)
    with pytest.raises(kb.KBError, match=r"^\[\d\] rnn: no initial states"):
        rnn(cell, const(x), [], mask=const(np.ones((3, 5))))

    def failing(x, states):
        raise RuntimeError("the cell refused")
    with pytest.raises(kb.KBError, match=r"^\[\d\] rnn: the callback failed: the cell refused"):
        rnn(failing, const(x), [const(h0)])


# ---- time-parallel work hoisted out of loop bodies (core/ops/loop_hoist.cpp) ----------------
def masked_cell(W, U, m):
    """x_t * m (a fixed mask) then dot with W: the chain before the product is hoisted too."""
    def fn(x, states):
        xm = kb.op("multiply", kb.op("add", x, const(np.float64(0.25))), m)
        h = kb.op("tanh", kb.op("add", kb.op("dot", xm, W), kb.op("dot", states[0], U)))
        return h, [h]
    return fn


@pytest.mark.parametrize("go_backwards", [False, True])
def test_hoisted_chain_values_and_gradients(setup, go_backwards):
    x, h0, W, U = setup
    m = np.random.default_rng(3).uniform(0.5, 1.5, size=(3, 4))

    def build(unroll):
        xp, Wp, Up = placeholder([3, 5, 4], F64), placeholder([4, 6], F64), placeholder([6, 6], F64)
        _, outs, states = rnn(masked_cell(Wp, Up, const(m)), xp, [const(h0)],
                              go_backwards=go_backwards, unroll=unroll)
        loss = kb.op("sum", kb.op("multiply", outs, outs), None, 0, 0)
        return kb.Function([xp, Wp, Up], [outs, states[0]] + kb.gradients(loss, [xp, Wp, Up]))

    sym, unr = build(False)(x, W, U), build(True)(x, W, U)
    r_outs, _, r_h = ref_rnn((x + 0.25) * m[:, None, :], h0, W, U, go_backwards=go_backwards)
    np.testing.assert_allclose(sym[0], r_outs, rtol=1e-12)
    np.testing.assert_allclose(sym[1], r_h, rtol=1e-12)
    for a, b in zip(sym, unr):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


HOIST_SCRIPT = """
import sys, numpy as np, kb, test_loops as tl
W = kb.variable(np.ones((4, 6)), kb.F64)
U = kb.variable(np.ones((6, 6)) * 0.1, kb.F64)
xp = kb.placeholder([3, 5, 4], kb.F64)
_, outs, _ = tl.rnn(tl.simple_cell(W, U), xp, [kb.const(np.zeros((3, 6)))])
kb.Function([xp], [outs])(np.zeros((3, 5, 4)))
"""


def test_input_projection_runs_outside_the_loop():
    # The plan of the function: one MatMul (x W over all steps) before the Loop; with the
    # rewrite off, none outside the loop (the body does both products per step).
    hoisted = kb.plan_steps(HOIST_SCRIPT, "", outermost=True)
    assert "MatMul" in hoisted[:hoisted.index("Loop")]
    plain = kb.plan_steps(HOIST_SCRIPT, "", outermost=True, KB_HOIST="0")
    assert "MatMul" not in plain[:plain.index("Loop")]


def test_second_derivative_through_the_reversed_gradient_loop(setup):
    # The gradient of a Loop is a Loop over the same sequences in the other direction; its own
    # gradient (a second derivative) walks forward again. Symbolic against unrolled.
    x, h0, W, U = setup

    def build(unroll):
        xp, Wp, Up = placeholder([3, 5, 4], F64), placeholder([4, 6], F64), placeholder([6, 6], F64)
        _, outs, _ = rnn(lstm_like(Wp, Up), xp, [const(h0), const(h0 * 0.5)], unroll=unroll)
        loss = kb.op("sum", kb.op("multiply", outs, outs), None, 0, 0)
        gU = kb.gradients(loss, [Up])[0]
        loss2 = kb.op("sum", kb.op("multiply", gU, gU), None, 0, 0)
        return kb.Function([xp, Wp, Up], kb.gradients(loss2, [xp, Wp, Up]))

    sym, unr = build(False)(x, W, U), build(True)(x, W, U)
    for a, b in zip(sym, unr):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_map_fn_of_a_product_is_one_product():
    # The whole body is the product: the loop then only slices the hoisted result.
    rng = np.random.default_rng(4)
    e, W = rng.normal(size=(5, 2, 3)), rng.normal(size=(3, 4))
    Wp = placeholder([3, 4], F64)
    cb = MAP(lambda _, x, out: _set(out, kb.op("dot", borrowed(x), Wp)))
    out = c_void_p()
    ep = placeholder([-1, 2, 3], F64)
    check(lib.kb_map_fn(cb, None, ep.h, None, -1, ctypes.byref(out)))
    y = Tensor(out.value)
    g = kb.gradients(kb.op("sum", kb.op("multiply", y, y), None, 0, 0), [ep, Wp])
    got = kb.Function([ep, Wp], [y] + g)(e, W)
    np.testing.assert_allclose(got[0], e @ W, rtol=1e-12)
    np.testing.assert_allclose(got[1], 2 * (e @ W) @ W.T, rtol=1e-12)
    np.testing.assert_allclose(got[2], 2 * np.einsum("tbi,tbj->ij", e, e @ W), rtol=1e-12)


def test_bias_and_weight_gradients_summed_after_the_loop(setup):
    # h U and + b inside the step: their gradients are one GEMM and one reduction over the
    # stacked per-step values; symbolic against unrolled, and b against finite differences.
    x, h0, W, U = setup
    b = np.linspace(-0.3, 0.3, 6)

    def cell(Wp, Up, bp):
        def fn(xt, states):
            z = kb.op("add", kb.op("dot", xt, Wp), kb.op("dot", states[0], Up))
            h = kb.op("tanh", kb.op("bias_add", z, bp, 0))
            return h, [h]
        return fn

    def build(unroll):
        xp, Wp, Up = placeholder([3, 5, 4], F64), placeholder([4, 6], F64), placeholder([6, 6], F64)
        bp = placeholder([6], F64)
        _, outs, _ = rnn(cell(Wp, Up, bp), xp, [const(h0)], unroll=unroll)
        loss = kb.op("sum", kb.op("multiply", outs, outs), None, 0, 0)
        return kb.Function([xp, Wp, Up, bp], [loss] + kb.gradients(loss, [xp, Wp, Up, bp]))

    sym, unr = build(False)(x, W, U, b), build(True)(x, W, U, b)
    for a, c in zip(sym, unr):
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)
    f = build(False)
    np.testing.assert_allclose(sym[4], finite_difference(lambda v: f(x, W, U, v)[0], b),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("go_backwards", [False, True])
def test_step_results_that_alias_states_views_and_each_other(setup, go_backwards):
    # The body writes its results straight into the stacked parts where it can; results that
    # are an unchanged state, a view (reshape) of another result, or one value returned twice
    # land elsewhere and are copied. Symbolic against unrolled, values and gradients.
    x, h0, W, U = setup

    def build(unroll):
        xp, hp = placeholder([3, 5, 4], F64), placeholder([3, 6], F64)
        Wp, Up = placeholder([4, 6], F64), placeholder([6, 6], F64)

        def fn(xt, states):
            h, c, k = states
            h2 = kb.op("tanh", kb.op("add", kb.op("dot", xt, Wp), kb.op("dot", h, Up)))
            flat = kb.op("reshape", kb.op("reshape", h2, kb.i64([18]), 1), kb.i64([3, 6]), 2)
            c2 = kb.op("add", c, flat)
            return h, [h2, c2, k]  # the output lags: the state read, not the one written

        k0 = kb.op("multiply", hp, const(np.float64(2.0)))
        last, outs, states = rnn(fn, xp, [hp, hp, k0], go_backwards=go_backwards, unroll=unroll)
        loss = kb.op("add", kb.op("sum", kb.op("multiply", outs, outs), None, 0, 0),
                     kb.op("sum", kb.op("multiply", states[1], states[2]), None, 0, 0))
        return kb.Function([xp, Wp, Up, hp],
                           [loss, outs, last] + list(states) + kb.gradients(loss, [xp, Wp, Up, hp]))

    sym, unr = build(False)(x, W, U, h0), build(True)(x, W, U, h0)
    for a, b in zip(sym, unr):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    # NumPy: outputs are the states read at each step.
    h, c = h0.copy(), h0.copy()
    outs = []
    for t in (range(4, -1, -1) if go_backwards else range(5)):
        outs.append(h)
        h2 = np.tanh(x[:, t] @ W + h @ U)
        h, c = h2, c + h2
    np.testing.assert_allclose(sym[1], np.stack(outs, 1), rtol=1e-12)
    np.testing.assert_allclose(sym[4], c, rtol=1e-12)
    np.testing.assert_allclose(sym[5], 2 * h0, rtol=1e-12)


def test_step_reads_a_value_computed_from_an_outer_placeholder(setup):
    # The body captures transpose(U) of the function's placeholder U: the body plan takes the
    # captured value as given and does not look for U itself.
    x, h0, W, U = setup
    xp, Wp, Up = placeholder([3, 5, 4], F64), placeholder([4, 6], F64), placeholder([6, 6], F64)

    def fn(xt, states):
        h = kb.op("tanh", kb.op("add", kb.op("dot", xt, Wp),
                                kb.op("dot", states[0], kb.op("transpose", Up))))
        return h, [h]

    _, outs, _ = rnn(fn, xp, [const(h0)])
    loss = kb.op("sum", kb.op("multiply", outs, outs), None, 0, 0)
    got = kb.Function([xp, Wp, Up], [outs] + kb.gradients(loss, [Up]))(x, W, U)
    expected, _, _ = ref_rnn(x, h0, W, U.T)
    np.testing.assert_allclose(got[0], expected, rtol=1e-12)
    f = kb.Function([xp, Wp, Up], [loss])
    np.testing.assert_allclose(got[1], finite_difference(lambda v: f(x, W, v)[0], U), rtol=1e-5,
                               atol=1e-7)
