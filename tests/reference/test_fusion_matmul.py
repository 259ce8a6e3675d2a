"""The plan-time fusion of MatMul -> bias add -> relu into one FusedMatMul
(core/compile/fuse_epilogue.cpp; on the CPU oneDNN's matmul primitive with bias and relu
post-ops, or the GEMM followed by one epilogue pass; on the GPU cuBLASLt's epilogues): fused
results equal the unfused plan's (KB_FUSE=0) and NumPy's for the shapes on either path,
gradients still match, and the plans contain FusedMatMul exactly where the intermediate values
have no other reader.
"""
import numpy as np
import pytest

import kb
from kb import const, unfused

F32 = kb.F32


def dense(x, w, b, relu, bias_op="bias_add"):
    y = kb.op("dot", x, w)
    if b is not None:
        y = kb.op("bias_add", y, b, kb.CHANNELS_LAST) if bias_op == "bias_add" else kb.op("add", y, b)
    return kb.op("relu", y, 0.0, None, 0.0) if relu else y


# (rows, inner, columns): small ones take sgemm and the epilogue pass, the others oneDNN's
# matmul primitive (at least 64 columns, at most 2^27 multiply-adds).
SHAPES = [(5, 7, 3), (33, 70, 65), (128, 96, 256)]


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("bias,relu", [(True, True), (True, False), (False, True)])
def test_fused_forward_equals_unfused_and_numpy(m, k, n, bias, relu):
    rng = np.random.default_rng(m + n)
    xs = rng.standard_normal((m, k)).astype(np.float32)
    ws = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    bs = rng.standard_normal(n).astype(np.float32)
    x = kb.placeholder([-1, k], F32)
    y = dense(x, kb.variable(ws), kb.variable(bs) if bias else None, relu)
    f, g = kb.Function([x], [y]), kb.Function([x], [y])
    fused, plain = f(xs)[0], unfused(g, xs)[0]
    expected = xs.astype(np.float64) @ ws + (bs if bias else 0)
    if relu:
        expected = np.maximum(expected, 0)
        assert (plain == 0).any() and (plain > 0).any()
    kb.assert_close(fused, expected, F32, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused, plain, rtol=1e-5, atol=1e-5)
    # Another batch size: another plan, fused again.
    kb.assert_close(f(xs[:3])[0], expected[:3], F32, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(65,), (1, 65)])
def test_bias_added_with_add_of_either_shape(shape):
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((40, 30)).astype(np.float32)
    ws = rng.standard_normal((30, 65)).astype(np.float32)
    bs = rng.standard_normal(shape).astype(np.float32)
    x = kb.placeholder([-1, 30], F32)
    y = dense(x, const(ws), kb.variable(bs), True, bias_op="add")
    f = kb.Function([x], [y])
    expected = np.maximum(xs.astype(np.float64) @ ws + bs, 0)
    kb.assert_close(f(xs)[0], expected, F32, rtol=1e-5, atol=1e-5)


def test_gradients_through_fused_plan():
    """An MLP's loss and gradients (the relu's gradient reads its output): the training plan is
    fused, and its values equal the unfused plan's and NumPy's."""
    rng = np.random.default_rng(11)
    xs = rng.standard_normal((48, 20)).astype(np.float32)
    w1s = (rng.standard_normal((20, 80)) / 4).astype(np.float32)
    b1s = (rng.standard_normal(80) / 2).astype(np.float32)
    w2s = (rng.standard_normal((80, 70)) / 8).astype(np.float32)
    b2s = (rng.standard_normal(70) / 2).astype(np.float32)
    ts = rng.standard_normal((48, 70)).astype(np.float32)
    x = kb.placeholder([-1, 20], F32)
    w1, b1, w2, b2 = (kb.variable(v) for v in (w1s, b1s, w2s, b2s))
    y = dense(dense(x, w1, b1, True), w2, b2, False)
    loss = kb.op("sum", kb.op("multiply", y, const(ts)), None, 0, 0)
    grads = kb.gradients(loss, [x, w1, b1, w2, b2])
    f, g = kb.Function([x], [loss] + grads), kb.Function([x], [loss] + grads)
    fused, plain = f(xs), unfused(g, xs)
    for a, p in zip(fused, plain):
        np.testing.assert_allclose(a, p, rtol=1e-4, atol=1e-4)
    x64 = xs.astype(np.float64)
    pre = x64 @ w1s + b1s
    h = np.maximum(pre, 0)
    dpre = (ts @ w2s.T) * (pre > 0)
    kb.assert_close(fused[0], np.sum((h @ w2s + b2s) * ts), F32, rtol=1e-4)
    kb.assert_close(fused[1], dpre @ w1s.T, F32, rtol=1e-4, atol=1e-4)
    kb.assert_close(fused[2], x64.T @ dpre, F32, rtol=1e-4, atol=1e-4)
    kb.assert_close(fused[3], dpre.sum(axis=0), F32, rtol=1e-4, atol=1e-4)
    kb.assert_close(fused[4], h.T @ ts, F32, rtol=1e-4, atol=1e-4)
    kb.assert_close(fused[5], ts.sum(axis=0), F32, rtol=1e-4, atol=1e-4)


PLAN_SCRIPT = r"""
import sys
import numpy as np
import kb
case = sys.argv[1]
x = kb.placeholder([-1, 6], kb.F32)
w = kb.variable(np.full((6, 4), 0.1, np.float32))
b = kb.variable(np.zeros(4, np.float32))
pre = kb.op("bias_add", kb.op("dot", x, w), b, kb.CHANNELS_LAST)
y = kb.op("relu", pre, 0.0, None, 0.0)
outs = [y]
feed = np.ones((2, 6), np.float32)
if case == "train":
    loss = kb.op("mean", y, None, 0, 0)
    outs = [loss] + kb.gradients(loss, [w, b])
elif case == "preact_is_output":
    outs = [y, pre]
elif case == "batched":
    x = kb.placeholder([-1, 3, 6], kb.F32)
    y = kb.op("relu", kb.op("add", kb.op("batch_dot", x, x, kb.i64([2, 2])),
              const(np.zeros(3, np.float32))), 0.0, None, 0.0)
    outs, feed = [y], np.ones((2, 3, 6), np.float32)
kb.Function([x], outs)(feed)
"""


def plan_steps(case, **env):
    # Either device: the GPU has a FusedMatMul kernel too (cuBLASLt's epilogues).
    return kb.plan_steps(PLAN_SCRIPT.replace("const(", "kb.const("), case, **env)


def test_plans_fuse_where_nothing_else_reads_the_intermediates():
    assert plan_steps("forward") == ["FusedMatMul"]
    train = plan_steps("train")
    assert "FusedMatMul" in train and "Relu" not in train, train
    assert train.count("MatMul") == 1, train  # the kernel's gradient
    # The pre-activation is an output: nothing to fuse but the bias.
    assert "Relu" in plan_steps("preact_is_output")
    assert "FusedMatMul" in plan_steps("preact_is_output")
    assert plan_steps("forward", KB_FUSE="0") == ["MatMul", "Add", "Relu"]


def test_products_with_batch_axes_are_not_fused():
    assert "FusedMatMul" not in plan_steps("batched")
