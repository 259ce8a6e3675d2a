"""Gradients against central finite differences in float64.

For each differentiable function f: loss = sum(f(x) * w) with a fixed random w; the gradient of
the loss with respect to each float64 input is compared with (loss(x + h) - loss(x - h)) / 2h.
Inputs are sampled away from kinks (relu thresholds, abs at 0, max ties, clip bounds).
"""
import ctypes

import numpy as np
import pytest

import kb
from kb import const, handles, i64, op, reduce_sum

H = 1e-6
RTOL, ATOL = 1e-5, 1e-7


def weighted_loss(y, seed):
    """sum(y * w) for a fixed random w of y's (concrete) shape."""
    shape = y.shape
    w = np.random.default_rng(seed).standard_normal(shape) + 0.3
    return reduce_sum(op("multiply", y, const(w)))


def fd_check(build, *inputs, wrt=None, seed=0):
    """Checks the gradients of sum(build(*placeholders) * w) with respect to inputs[wrt]."""
    inputs = [np.asarray(a, np.float64) for a in inputs]
    wrt = range(len(inputs)) if wrt is None else wrt
    phs = [kb.placeholder(list(a.shape), kb.F64) for a in inputs]
    y = build(*phs)
    assert y.dtype == kb.F64
    loss = weighted_loss(y, seed)
    grads = kb.gradients(loss, [phs[i] for i in wrt])
    res = kb.Function(phs, grads)(*inputs)
    loss_f = kb.Function(phs, [loss])
    for g, i in zip(res, wrt):
        assert g.dtype == np.float64 and g.shape == inputs[i].shape
        fd = kb.central_differences(loss_f, inputs, i)
        np.testing.assert_allclose(g, fd, rtol=RTOL, atol=ATOL, err_msg=f"input {i}")
    return res


R = np.random.default_rng(99)


def randn(*shape, away=None, margin=0.1):
    """Standard normal samples, moved at least `margin` away from each value in `away`."""
    x = R.standard_normal(shape)
    for a in away or []:
        close = np.abs(x - a) < margin
        x[close] = a + np.where(x[close] >= a, margin, -margin) * 1.5
    return x


def pos(*shape):
    return np.abs(R.standard_normal(shape)) + 0.3


def u(name, *args):
    return lambda t: op(name, t, *args)


def b(name):
    return lambda x, y: op(name, x, y)


def red(name, axes=None, keepdims=0):
    ax = None if axes is None else np.atleast_1d(axes)
    return lambda t: op(name, t, i64(ax), 0 if ax is None else len(ax), keepdims)


def relu(alpha, max_value, threshold):
    mv = None if max_value is None else ctypes.byref(ctypes.c_double(max_value))
    return lambda t: op("relu", t, alpha, mv, threshold)


# ---- elementwise ----------------------------------------------------------------------------
ELEMENTWISE = {
    "square": (u("square"), [randn(3, 4)]),
    "abs": (u("abs"), [randn(3, 4, away=[0])]),
    "sqrt": (u("sqrt"), [pos(3, 4)]),
    "exp": (u("exp"), [randn(3, 4)]),
    "log": (u("log"), [pos(3, 4)]),
    "sin": (u("sin"), [randn(3, 4)]),
    "cos": (u("cos"), [randn(3, 4)]),
    "erf": (u("erf"), [randn(3, 4)]),
    "negative": (u("negative"), [randn(3, 4)]),
    "round": (u("round"), [np.array([0.2, 1.3, -0.7, 2.9])]),
    "sign": (u("sign"), [randn(4, away=[0])]),
    "pow3": (u("pow", 3.0), [randn(3, 4)]),
    "pow0.5": (u("pow", 0.5), [pos(3, 4)]),
    "pow-1.5": (u("pow", -1.5), [pos(3, 4)]),
    "clip": (u("clip", -0.5, 0.7), [randn(4, 5, away=[-0.5, 0.7], margin=0.05)]),
    "clip_max_below_min": (u("clip", 0.5, -0.5), [randn(3, 3)]),
    "clip_no_max": (u("clip", -0.3, np.inf), [randn(4, 4, away=[-0.3], margin=0.05)]),
    "cast": (u("cast", kb.F64), [randn(2, 3)]),
    "identity": (lambda t: op("identity", t, None), [randn(2, 3)]),
    "zeros_like": (lambda t: op("zeros_like", t, kb.DEFAULT, None), [randn(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name):
    build, inputs = ELEMENTWISE[name]
    fd_check(build, *inputs)


@pytest.mark.parametrize("sx,sy", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)),
                                   ((), (2, 2)), ((3, 1, 2), (4, 1))])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "minimum"])
def test_binary(name, sx, sy):
    x = randn(*sx)
    y = pos(*sy) if name == "divide" else randn(*sy)
    while name in ("maximum", "minimum") and np.min(np.abs(np.subtract(x, y))) < 0.05:
        x, y = randn(*sx), randn(*sy)  # no ties
    fd_check(b(name), x, y)


def test_stop_gradient():
    # d/dx sum(stop_gradient(exp(x)) * x * w) = exp(x) * w
    x, w = randn(2, 3), randn(2, 3)
    p = kb.placeholder([2, 3], kb.F64)
    y = op("multiply", op("multiply", op("stop_gradient", op("exp", p)), p), const(w))
    g = kb.Function([p], kb.gradients(reduce_sum(y), [p]))(x)[0]
    np.testing.assert_allclose(g, np.exp(x) * w, rtol=1e-12)


# ---- reduce ----------------------------------------------------------------------------------
REDUCE_AXES = [None, 1, -1, [0, 2], 0]


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axes", REDUCE_AXES, ids=str)
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min",
                                  "logsumexp"])
def test_reduce(name, axes, keepdims):
    x = randn(2, 3, 4) + (1.5 if name == "prod" else 0)
    fd_check(red(name, axes, keepdims), x)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative(name, axis):
    fd_check(u(name, axis), randn(3, 4) + (1.0 if name == "cumprod" else 0))


@pytest.mark.parametrize("axes", [None, 1, [0, 2]], ids=str)
def test_prod_with_zeros(axes):
    # TensorFlow's prod gradient is the product of the other elements, also at a zero
    x = randn(2, 3, 4) + 1.5
    x[0, 1, 2] = 0.0
    x[1, 2, 0] = x[1, 2, 3] = 0.0  # two zeros in some reductions: a zero gradient there
    fd_check(red("prod", axes, 0), x)
    fd_check(red("prod", axes, 1), x)


@pytest.mark.xfail(strict=True, reason="cumprod's gradient divides by x, as TensorFlow 1.x "
                   "_CumprodGrad does, so it is NaN at a zero input; a zero-safe rule is not "
                   "implemented")
def test_cumprod_with_zero():
    x = randn(5)
    x[2] = 0.0
    fd_check(u("cumprod", 0), x)


# ---- shape -----------------------------------------------------------------------------------
SHAPE = {
    "reshape": (u("reshape", i64([4, -1]), 2), [randn(2, 3, 2)]),
    "permute": (u("permute_dimensions", i64([2, 0, 1]), 3), [randn(2, 3, 4)]),
    "repeat_elements": (u("repeat_elements", 3, -1), [randn(2, 3)]),
    "repeat_elements0": (u("repeat_elements", 2, 0), [randn(2, 3)]),
    "repeat": (u("repeat", 3), [randn(2, 3)]),
    "tile": (u("tile", i64([2, 1, 3]), 3), [randn(2, 1, 2)]),
    "flatten": (u("flatten"), [randn(2, 3, 2)]),
    "batch_flatten": (u("batch_flatten"), [randn(2, 3, 2)]),
    "expand_dims": (u("expand_dims", -1), [randn(2, 3)]),
    "squeeze": (u("squeeze", 1), [randn(3, 1, 2)]),
    "reverse": (u("reverse", i64([0, -1]), 2), [randn(3, 4)]),
    "slice": (u("slice", i64([1, 0, 1]), i64([1, -1, 2]), 3), [randn(2, 3, 4)]),
    "strided_slice": (u("strided_slice", i64([0, -1, 1]), i64([0, 0, 4]), i64([1, -1, 2]), 3,
                        0b011, 0b011, 0, 0), [randn(2, 3, 5)]),
    "strided_slice_shrink": (u("strided_slice", i64([1, 0]), i64([2, 0]), i64([1, 1]), 2, 0,
                               0b10, 0b01, 0), [randn(3, 4)]),
    "gather": (lambda t: op("gather", t, const(np.array([[0, 2], [2, 2], [3, 0]], np.int32))),
               [randn(4, 3)]),
    "transpose": (u("transpose"), [randn(2, 3, 4)]),
}


@pytest.mark.parametrize("name", sorted(SHAPE))
def test_shape(name):
    build, inputs = SHAPE[name]
    fd_check(build, *inputs)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("name", ["concatenate", "stack"])
def test_concatenate_stack(name, axis):
    fd_check(lambda *ts: op(name, handles(ts), len(ts), axis), randn(2, 3), randn(2, 3),
             randn(2, 3))


# ---- linalg ----------------------------------------------------------------------------------
@pytest.mark.parametrize("xs,ys", [((2, 3), (3, 4)), ((2, 3), (4, 3, 2)), ((3,), (2, 3, 2)),
                                   ((2, 3, 4), (4, 2)), ((2, 2, 3), (2, 3, 2))])
def test_dot(xs, ys):
    fd_check(b("dot"), randn(*xs), randn(*ys))


@pytest.mark.parametrize("xs,ys,axes", [((3, 4), (3, 4), (1, 1)), ((3, 4), (3, 4), (0, 0)),
                                        ((3, 3), (3, 3), None), ((2, 3), (2, 3, 4), None),
                                        ((2, 3), (2, 4, 3), (1, 2)), ((2, 4, 3), (2, 3), (2, 1)),
                                        ((2, 3, 4), (2, 3, 2), (1, 1)),
                                        ((2, 3, 4), (2, 4, 2), None),
                                        ((2, 3, 4), (2, 2, 4), (2, 2)),
                                        ((2, 2, 3, 4), (2, 2, 4, 3), (3, 2))], ids=str)
def test_batch_dot(xs, ys, axes):
    ax = None if axes is None else i64(axes)
    fd_check(lambda x, y: op("batch_dot", x, y, ax), randn(*xs), randn(*ys))


@pytest.mark.parametrize("eq,shapes", [("abc,cde->abde", [(2, 3, 4), (4, 2, 3)]),
                                       ("aecd,abcd->acbe", [(2, 3, 2, 2), (2, 2, 2, 2)]),
                                       ("...b,bc->...c", [(2, 3, 4), (4, 2)]),
                                       ("abc,d->ac", [(2, 3, 2), (3,)]),
                                       ("ij->ji", [(2, 3)])], ids=str)
def test_einsum(eq, shapes):
    fd_check(lambda *ts: op("einsum", eq.encode(), kb.handles(ts), len(ts)),
             *[randn(*s) for s in shapes])


# ---- nn --------------------------------------------------------------------------------------
RELU = [(0.0, None, 0.0), (0.2, None, 0.0), (0.0, 6.0, 0.0), (0.0, 1.0, 0.0), (0.3, 1.0, 0.0),
        (0.0, None, 0.5), (0.1, None, 0.5), (0.1, 1.2, -0.5), (0.2, None, -0.7)]


@pytest.mark.parametrize("alpha,max_value,threshold", RELU)
def test_relu(alpha, max_value, threshold):
    kinks = [threshold, 0.0] + ([max_value] if max_value is not None else [])
    fd_check(relu(alpha, max_value, threshold), randn(4, 5, away=kinks, margin=0.05) * 1.5)


ACTIVATIONS = {
    "elu": (u("elu", 0.7), [randn(3, 4, away=[0])]),
    "sigmoid": (u("sigmoid"), [randn(3, 4) * 3]),
    "hard_sigmoid": (u("hard_sigmoid"), [randn(3, 4, away=[-2.5, 2.5]) * 2]),
    "tanh": (u("tanh"), [randn(3, 4)]),
    "softplus": (u("softplus"), [randn(3, 4) * 3]),
    "softsign": (u("softsign"), [randn(3, 4, away=[0])]),
    "softmax-1": (u("softmax", -1), [randn(3, 4)]),
    "softmax0": (u("softmax", 0), [randn(3, 4)]),
    "softmax1_rank3": (u("softmax", 1), [randn(2, 3, 2)]),
    "l2_normalize_all": (u("l2_normalize", None, 0), [randn(3, 4)]),
    "l2_normalize_-1": (u("l2_normalize", i64([-1]), 1), [randn(3, 4)]),
    "l2_normalize_01": (u("l2_normalize", i64([0, 1]), 2), [randn(2, 2, 3)]),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation(name):
    build, inputs = ACTIVATIONS[name]
    fd_check(build, *inputs)


def prob(*shape):
    return R.random(shape) * 0.8 + 0.1


@pytest.mark.parametrize("shape,axis", [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1)])
def test_categorical_crossentropy(shape, axis):
    fd_check(lambda t, o: op("categorical_crossentropy", t, o, 0, axis), prob(*shape),
             prob(*shape))


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4)])
def test_categorical_crossentropy_logits(shape):
    target, logits = prob(*shape), randn(*shape) * 2
    g = fd_check(lambda t, o: op("categorical_crossentropy", t, o, 1, -1), target, logits,
                 wrt=[1])
    assert g[0].shape == shape
    # no gradient flows into the target (TF 1 softmax_cross_entropy_with_logits)
    pt, po = kb.placeholder(list(shape), kb.F64), kb.placeholder(list(shape), kb.F64)
    loss = reduce_sum(op("categorical_crossentropy", pt, po, 1, -1))
    gt = kb.Function([pt, po], kb.gradients(loss, [pt]))(target, logits)[0]
    np.testing.assert_array_equal(gt, np.zeros(shape))


@pytest.mark.parametrize("from_logits", [0, 1])
@pytest.mark.parametrize("oshape,target,axis", [((3, 4), [0, 3, 1], -1),
                                                ((2, 3, 4), [[0, 1, 3], [2, 2, 0]], -1),
                                                ((2, 4, 3), [[0, 1, 3], [2, 2, 0]], 1)], ids=str)
def test_sparse_categorical_crossentropy(oshape, target, axis, from_logits):
    t = const(np.array(target, np.int64))
    x = randn(*oshape) if from_logits else prob(*oshape)
    fd_check(lambda o: op("sparse_categorical_crossentropy", t, o, from_logits, axis), x)


@pytest.mark.parametrize("from_logits", [0, 1])
def test_binary_crossentropy(from_logits):
    x = randn(3, 4) * 2 if from_logits else prob(3, 4)
    fd_check(lambda t, o: op("binary_crossentropy", t, o, from_logits), prob(3, 4), x)


@pytest.mark.parametrize("xshape,bshape,fmt", [((2, 3), (3,), kb.CHANNELS_LAST),
                                               ((2, 3), (3,), kb.CHANNELS_FIRST),
                                               ((2, 3, 4), (4,), kb.CHANNELS_LAST),
                                               ((2, 3, 4), (3,), kb.CHANNELS_FIRST),
                                               ((2, 3, 2, 2), (3,), kb.CHANNELS_FIRST),
                                               ((2, 3, 4), (3, 4), kb.CHANNELS_LAST),
                                               ((2, 3, 4), (4, 3), kb.CHANNELS_FIRST),
                                               ((2, 3, 2, 4), (2, 4, 3), kb.CHANNELS_FIRST)],
                         ids=str)
def test_bias_add(xshape, bshape, fmt):
    fd_check(lambda x, bias: op("bias_add", x, bias, fmt), randn(*xshape), randn(*bshape))


# ---- variables, unknown batch, second derivatives -------------------------------------------
def test_gradient_wrt_variable():
    """A dense layer: d loss / d kernel, d loss / d bias for float64 variables."""
    x = randn(5, 3)
    k0, b0 = randn(3, 2), randn(2)
    kv, bv = kb.variable(k0, kb.F64), kb.variable(b0, kb.F64)
    y = op("tanh", op("bias_add", op("dot", const(x), kv), bv, kb.CHANNELS_LAST))
    loss = weighted_loss(y, 3)
    gk, gb = kb.run(kb.gradients(loss, [kv, bv]))
    loss_f = kb.Function([], [loss])

    def fd(var, v0):
        out = np.zeros_like(v0)
        for j in range(v0.size):
            vals = []
            for s in (H, -H):
                v = v0.copy()
                v.flat[j] += s
                kb.check(kb.lib.kb_set_value_data(var, v.ctypes.data, kb.F64, i64(v.shape),
                                                  v.ndim))
                vals.append(loss_f()[0])
            out.flat[j] = (vals[0] - vals[1]) / (2 * H)
        kb.check(kb.lib.kb_set_value_data(var, v0.ctypes.data, kb.F64, i64(v0.shape), v0.ndim))
        return out

    np.testing.assert_allclose(gk, fd(kv, k0), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(gb, fd(bv, b0), rtol=RTOL, atol=ATOL)


def test_gradient_unknown_batch():
    p = kb.placeholder([-1, 3], kb.F64)
    w = const(randn(3, 2))
    y = op("softmax", op("dot", p, w), -1)
    loss = reduce_sum(op("multiply", y, const(np.array([0.3, -1.2]))))
    g = kb.gradients(loss, [p])
    f, loss_f = kb.Function([p], g), kb.Function([p], [loss])
    for n in (1, 4):
        x = randn(n, 3)
        np.testing.assert_allclose(f(x)[0], kb.central_differences(loss_f, [x], 0), rtol=RTOL,
                                   atol=ATOL)


def test_unconnected_gradient_is_zero():
    p, q = kb.placeholder([2], kb.F64), kb.placeholder([2], kb.F64)
    g = kb.gradients(reduce_sum(op("exp", p)), [q])
    np.testing.assert_array_equal(kb.Function([p, q], g)(np.ones(2), np.ones(2))[0], 0)


def grad_of(build, seed):
    """x -> d sum(build(x) * w) / dx, as a graph."""
    def g(x):
        return kb.gradients(weighted_loss(build(x), seed), [x])[0]
    return g


def square_exp(t):
    return op("multiply", op("square", t), op("exp", t))


SECOND = {
    "tanh": u("tanh"),
    "square_exp": square_exp,
    "sigmoid": u("sigmoid"),
    "softmax": u("softmax", -1),
    "log_softplus": lambda t: op("log", op("softplus", t)),
    "prod": red("prod", 1),
    "logsumexp": red("logsumexp", 0),
    "elu": u("elu", 0.5),
    "l2_normalize": u("l2_normalize", None, 0),
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivative(name):
    fd_check(grad_of(SECOND[name], 5), randn(3, 4, away=[0]), seed=6)


def test_second_derivative_values():
    # d2/dx2 tanh = -2 tanh (1 - tanh^2); d2/dx2 x^2 e^x = (x^2 + 4x + 2) e^x
    x = randn(6)
    p = kb.placeholder([6], kb.F64)
    g1 = kb.gradients(reduce_sum(op("tanh", p)), [p])[0]
    g2 = kb.gradients(reduce_sum(g1), [p])[0]
    h1 = kb.gradients(reduce_sum(square_exp(p)), [p])[0]
    h2 = kb.gradients(reduce_sum(h1), [p])[0]
    r = kb.Function([p], [g2, h2])(x)
    t = np.tanh(x)
    np.testing.assert_allclose(r[0], -2 * t * (1 - t * t), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r[1], (x * x + 4 * x + 2) * np.exp(x), rtol=1e-12)


def test_mixed_second_derivative():
    # d/dy of d/dx sum(sin(x * y) * w)
    x, y = randn(2, 3), randn(3)

    def build(a, c):
        loss = weighted_loss(op("sin", op("multiply", a, c)), 8)
        return kb.gradients(loss, [a])[0]
    fd_check(build, x, y, seed=9)
