"""The plan-time fusion of Conv -> bias add -> relu into one FusedConv (core/compile/fuse_epilogue.cpp):
fused results equal the unfused plan's (KB_FUSE=0) and NumPy's, gradients (taken on the unfused
graph before compilation) still match, and the plans contain FusedConv exactly where the
intermediate values have no other reader (KB_LOG_PLAN=1 in a child process).
"""
import numpy as np
import pytest

import kb
import kb_conv as kc
from kb import const, unfused

F32 = kb.F32
LAST, FIRST = "channels_last", "channels_first"
FORMAT = {LAST: kb.CHANNELS_LAST, FIRST: kb.CHANNELS_FIRST}


def np_conv_same(x, k):
    """3x3-style 'same' cross-correlation (odd kernel sizes), x (N, H, W, C), k (kh, kw, C, O)."""
    kh, kw = k.shape[:2]
    xp = np.pad(x.astype(np.float64), [(0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)])
    h, w = x.shape[1:3]
    y = np.zeros(x.shape[:3] + (k.shape[3],))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nhwc,co->nhwo", xp[:, i:i + h, j:j + w], k[i, j].astype(np.float64))
    return y


def to_fmt(a, df):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1)) if df == FIRST else a


def from_fmt(a, df):
    return np.moveaxis(a, 1, -1) if df == FIRST else a


def block(x, k, b, df, relu):
    """conv2d 'same' [+ bias_add] [+ relu]; returns (result, pre-activation)."""
    y = kc.conv2d(x, k, None, "same", df)
    if b is not None:
        y = kb.op("bias_add", y, b, FORMAT[df])
    pre = y
    if relu:
        y = kb.op("relu", y, 0.0, None, 0.0)
    return y, pre


@pytest.mark.parametrize("df", [LAST, FIRST])
@pytest.mark.parametrize("bias,relu", [(True, True), (True, False), (False, True)])
def test_fused_forward_equals_unfused_and_numpy(df, bias, relu):
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, 9, 7, 5)).astype(np.float32)
    ks = (rng.standard_normal((3, 3, 5, 6)) / 4).astype(np.float32)
    bs = rng.standard_normal(6).astype(np.float32)
    shape = [-1, 9, 7, 5] if df == LAST else [-1, 5, 9, 7]
    x = kb.placeholder(shape, F32)
    y, _ = block(x, kb.variable(ks), kb.variable(bs) if bias else None, df, relu)
    f, g = kb.Function([x], [y]), kb.Function([x], [y])
    fused = f(to_fmt(xs, df))[0]
    plain = unfused(g, to_fmt(xs, df))[0]
    expected = np_conv_same(xs, ks) + (bs if bias else 0)
    if relu:
        expected = np.maximum(expected, 0)
    kb.assert_close(from_fmt(fused, df), expected, F32)
    np.testing.assert_allclose(fused, plain, rtol=1e-6, atol=1e-6)
    # Another batch size: another plan, fused again.
    kb.assert_close(from_fmt(f(to_fmt(xs[:1], df))[0], df), expected[:1], F32)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_fused_depthwise_strided_equals_unfused(df):
    """Grouped convolutions (depthwise, strides 2, 'same') fuse with their bias and relu too."""
    rng = np.random.default_rng(3)
    shape = [-1, 7, 6, 4] if df == LAST else [-1, 4, 7, 6]
    xs = rng.standard_normal([2] + shape[1:]).astype(np.float32)
    k = kb.variable(rng.standard_normal((3, 3, 4, 2)).astype(np.float32))
    b = kb.variable(rng.standard_normal(8).astype(np.float32))
    x = kb.placeholder(shape, F32)
    y = kc.depthwise_conv2d(x, k, (2, 2), "same", df)
    y = kb.op("relu", kb.op("bias_add", y, b, FORMAT[df]), 0.0, None, 0.0)
    f, g = kb.Function([x], [y]), kb.Function([x], [y])
    fused, plain = f(xs)[0], unfused(g, xs)[0]
    assert fused.shape == ((2, 4, 3, 8) if df == LAST else (2, 8, 4, 3))
    assert (plain > 0).any() and (plain == 0).any()
    np.testing.assert_allclose(fused, plain, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("df", [LAST, FIRST])
def test_gradients_through_fused_plan(df):
    """loss = sum(relu(conv(x, k) + b) * w): the training function's plan is fused (the relu's
    gradient reads its output), and its gradients equal the unfused plan's and NumPy's."""
    rng = np.random.default_rng(11)
    xs = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    ks = (rng.standard_normal((3, 3, 3, 4)) / 3).astype(np.float32)
    bs = (rng.standard_normal(4) / 2).astype(np.float32)
    ws = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)
    shape = [-1, 6, 5, 3] if df == LAST else [-1, 3, 6, 5]
    x = kb.placeholder(shape, F32)
    k, b = kb.variable(ks), kb.variable(bs)
    y, _ = block(x, k, b, df, True)
    loss = kb.op("sum", kb.op("multiply", y, const(to_fmt(ws, df))), None, 0, 0)
    grads = kb.gradients(loss, [x, k, b])
    f, g = kb.Function([x], [loss] + grads), kb.Function([x], [loss] + grads)
    fused = f(to_fmt(xs, df))
    plain = unfused(g, to_fmt(xs, df))
    for a, p in zip(fused, plain):
        np.testing.assert_allclose(a, p, rtol=1e-5, atol=1e-5)
    pre = np_conv_same(xs, ks) + bs
    dpre = ws * (pre > 0)
    kb.assert_close(fused[0], np.sum(np.maximum(pre, 0) * ws), F32, rtol=1e-5)
    kb.assert_close(fused[3], dpre.sum(axis=(0, 1, 2)), F32, rtol=1e-5, atol=1e-5)
    xp = np.pad(xs.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)])
    dk = np.zeros(ks.shape)
    for i in range(3):
        for j in range(3):
            dk[i, j] = np.einsum("nhwc,nhwo->co", xp[:, i:i + 6, j:j + 5], dpre)
    kb.assert_close(fused[2], dk, F32, rtol=1e-4, atol=1e-5)


PLAN_SCRIPT = r"""
import sys
import numpy as np
import kb, kb_conv as kc
case = sys.argv[1]
x = kb.placeholder([-1, 8, 8, 2], kb.F32)
k = kb.variable(np.full((3, 3, 2, 4), 0.1, np.float32))
b = kb.variable(np.zeros(4, np.float32))
pre = kb.op("bias_add", kc.conv2d(x, k, None, "same"), b, kb.CHANNELS_LAST)
y = kb.op("relu", pre, 0.0, None, 0.0)
outs = [y]
if case == "train":
    loss = kb.op("mean", y, None, 0, 0)
    outs = [loss] + kb.gradients(loss, [k, b])
elif case == "preact_is_output":
    outs = [y, pre]
elif case == "dropout_after":
    outs = [kb.op("dropout", y, 0.5, None, 0, kb.i64([3]))]
kb.Function([x], outs)(np.ones((2, 8, 8, 2), np.float32))
"""


def plan_steps(case, **env):
    # The same steps on either device: the GPU has a FusedConv kernel too.
    return kb.plan_steps(PLAN_SCRIPT, case, **env)


def test_plans_fuse_where_nothing_else_reads_the_intermediates():
    assert plan_steps("forward") == ["FusedConv"]
    train = plan_steps("train")
    assert "FusedConv" in train and "Conv" not in train and "Relu" not in train, train
    assert "ConvBackwardFilter" in train
    # The pre-activation is an output: nothing to fuse but the bias.
    assert "Relu" in plan_steps("preact_is_output")
    assert "FusedConv" in plan_steps("preact_is_output")
    # A random node downstream would be copied by the rewrite (its draws are counted per node).
    assert "FusedConv" not in plan_steps("dropout_after")
    assert plan_steps("forward", KB_FUSE="0") == ["Conv", "Add", "Relu"]
