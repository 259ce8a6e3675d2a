"""The fold of a per-channel scale and shift after a convolution (BatchNormalization in
inference) into the convolution (core/compile/fold_conv_scales.cpp): conv(x, W) * s + t, then a
relu bounded or not (Keras' ReLU(max_value), relu6 as MobileNets have it), becomes one FusedConv
by the kernel W * s with t as its bias and the relu, bounded, as its post-op; for plain and
depthwise convolutions (channel multipliers 1 and 2), float32 and bfloat16 (between the casts of
Keras 3's mixed_bfloat16). Folded values equal the unfolded plan's (KB_FUSE=0) within the
rounding the fold moves, and NumPy's; the plans are checked with KB_LOG_PLAN=1.
"""
import ctypes

import numpy as np
import pytest

import kb
import kb_conv as kc
from kb import unfused

F32, BF16 = kb.F32, kb.BF16


def relu(y, max_value=None):
    bound = None if max_value is None else ctypes.byref(ctypes.c_double(max_value))
    return kb.op("relu", y, 0.0, bound, 0.0)


def np_conv(x, k, groups):
    """'same' cross-correlation, stride 1, x (N, H, W, C); k (kh, kw, C, O) for one group, or
    (kh, kw, C, M) depthwise (output channel c * M + m)."""
    kh, kw = k.shape[:2]
    xp = np.pad(x.astype(np.float64), [(0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)])
    h, w = x.shape[1:3]
    out = k.shape[3] if groups == 1 else k.shape[2] * k.shape[3]
    y = np.zeros(x.shape[:3] + (out,))
    for i in range(kh):
        for j in range(kw):
            win = xp[:, i:i + h, j:j + w]
            if groups == 1:
                y += np.einsum("nhwc,co->nhwo", win, k[i, j].astype(np.float64))
            else:
                y += np.einsum("nhwc,cm->nhwcm", win, k[i, j].astype(np.float64)).reshape(y.shape)
    return y


def conv(x, k, depthwise, strides=(1, 1)):
    if depthwise:
        return kc.depthwise_conv2d(x, k, strides, "same", kc.LAST)
    return kc.conv2d(x, k, strides, "same", kc.LAST)


def normalized(y, s, t, dtype):
    """y * s + t in float32, between casts when y is bfloat16 (Keras 3's mixed_bfloat16)."""
    if dtype == BF16:
        y = kb.op("cast", y, F32)
    y = kb.op("add", kb.op("multiply", y, s), t)
    return kb.op("cast", y, BF16) if dtype == BF16 else y


CASES = {"conv": (False, 6), "depthwise": (True, 1), "depthwise_x2": (True, 2)}


@pytest.mark.parametrize("dtype", [F32, BF16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("max_value", [None, 6.0, 0.75], ids=["relu", "relu6", "relu0.75"])
def test_folded_equals_unfolded_and_numpy(dtype, case, max_value):
    depthwise, m = CASES[case]
    rng = np.random.default_rng(21)
    xs = rng.standard_normal((2, 7, 6, 5)).astype(np.float32)
    ks = (rng.standard_normal((3, 3, 5, m)) / 2).astype(np.float32)
    oc = 5 * m if depthwise else m
    ss = rng.uniform(0.5, 2.0, oc).astype(np.float32)
    ts = rng.standard_normal(oc).astype(np.float32)
    if dtype == BF16:
        xs = kb.narrow_values(kb.narrow_store(xs, BF16), BF16)
        ks = kb.narrow_values(kb.narrow_store(ks, BF16), BF16)
    x = kb.placeholder([-1, 7, 6, 5], dtype)
    kv = kb.variable(kb.narrow_store(ks, BF16), BF16) if dtype == BF16 else kb.variable(ks)
    y = relu(normalized(conv(x, kv, depthwise), kb.variable(ss), kb.variable(ts), dtype),
             max_value)
    feed = kb.narrow_store(xs, BF16) if dtype == BF16 else xs
    f, g = kb.Function([x], [y]), kb.Function([x], [y])
    folded, plain = f(feed)[0], unfused(g, feed)[0]
    pre = np_conv(xs, ks, 5 if depthwise else 1) * ss + ts
    want = np.maximum(pre, 0)
    if max_value is not None:
        want = np.minimum(want, max_value)
    if dtype == BF16:
        folded = kb.narrow_values(folded, BF16).astype(np.float64)
        plain = kb.narrow_values(plain, BF16).astype(np.float64)
        tol = 2.0 ** -6 * np.abs(pre).max()  # the folded kernel is rounded once more
        np.testing.assert_allclose(folded, plain, rtol=0, atol=tol)
        np.testing.assert_allclose(folded, want, rtol=0, atol=tol)
    else:
        np.testing.assert_allclose(folded, plain, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(folded, want, rtol=1e-5, atol=1e-5)
    if max_value is not None:
        assert folded.max() <= max_value
        assert max_value == 6.0 or (folded == max_value).any()
    assert (folded == 0).any()


def test_strided_depthwise_and_bound_read_elsewhere():
    """Strides 2; and a relu whose value is also returned: the relu folds, its bound stays a
    step of its own (the returned relu is the convolution's result)."""
    rng = np.random.default_rng(22)
    xs = rng.standard_normal((2, 9, 8, 4)).astype(np.float32)
    k = kb.variable((rng.standard_normal((3, 3, 4, 2)) / 2).astype(np.float32))
    s = kb.variable(rng.uniform(0.5, 2.0, 8).astype(np.float32))
    t = kb.variable(rng.standard_normal(8).astype(np.float32))
    x = kb.placeholder([-1, 9, 8, 4], F32)
    pre = normalized(conv(x, k, True, (2, 2)), s, t, F32)
    r = relu(pre)
    six = kb.op("minimum", kb.op("maximum", r, kb.const(np.float32(0))), kb.const(np.float32(2)))
    outs = [relu(pre, 2.0)], [r, six]
    for o in outs:
        f, g = kb.Function([x], o), kb.Function([x], o)
        folded, plain = f(xs), unfused(g, xs)
        assert folded[0].shape == (2, 5, 4, 8)
        for a, b in zip(folded, plain):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


PLAN_SCRIPT = r"""
import ctypes
import sys
import numpy as np
import kb
import kb_conv as kc
case = sys.argv[1]
bf16 = case.endswith("bf16")
dt = kb.BF16 if bf16 else kb.F32
x = kb.placeholder([-1, 8, 8, 4], dt)
k = kb.variable(kb.narrow_store(np.full((3, 3, 4, 1), 0.1), dt) if bf16 else
                np.full((3, 3, 4, 1), 0.1, np.float32), dt)
y = kc.depthwise_conv2d(x, k, (1, 1), "same", kc.LAST)
if bf16:
    y = kb.op("cast", y, kb.F32)
y = kb.op("add", kb.op("multiply", y, kb.variable(np.full(4, 2.0, np.float32))),
          kb.variable(np.full(4, 0.5, np.float32)))
if bf16:
    y = kb.op("cast", y, kb.BF16)
y = kb.op("relu", y, 0.0, ctypes.byref(ctypes.c_double(6.0)), 0.0)
ones = np.ones((1, 8, 8, 4))
kb.Function([x], [y])(kb.narrow_store(ones, dt) if bf16 else ones.astype(np.float32))
"""


def test_plans():
    """The depthwise convolution, its BatchNormalization and relu6 run as one FusedConv; what
    is left computes the folded kernel (invariant: once per change of the weights; in bfloat16
    a fused group casting it)."""
    for case in ("f32", "bf16"):
        if kb.plan_devices(PLAN_SCRIPT, case) != ["cpu"]:
            continue  # the fold is the CPU's (a GPU plan fuses the epilogue alone)
        steps = kb.plan_steps(PLAN_SCRIPT, case)
        assert steps.count("FusedConv") == 1, steps
        for op in ("Conv", "Relu", "Minimum", "Maximum"):
            assert op not in steps, (case, steps)
        assert "Relu" in kb.plan_steps(PLAN_SCRIPT, case, KB_FUSE="0")


def zero_pad(x, pads, df=kc.LAST):
    flat = [p for pair in pads for p in pair]
    return kb.op("spatial_2d_padding", x, kb.i64(flat), len(flat), kc.FORMAT[df])


PAD_CASES = {  # (depthwise, padding, strides, data format)
    "conv_valid_strided": (False, "valid", (2, 2), kc.LAST),
    "depthwise_valid_strided": (True, "valid", (2, 2), kc.LAST),
    "conv_same": (False, "same", (1, 1), kc.LAST),        # its pads follow x's dims: not folded
    "channels_first": (False, "valid", (2, 2), kc.FIRST)}


@pytest.mark.parametrize("case", list(PAD_CASES))
def test_zero_padding_folds_into_the_convolution(case):
    """ZeroPadding2D ((0, 1), (1, 2)) before a convolution becomes the convolution's pads where
    they are explicit: the Pad step is gone and the values are the unfolded plan's and NumPy's;
    a padded value read twice is computed."""
    depthwise, padding, strides, df = PAD_CASES[case]
    rng = np.random.default_rng(23)
    xs = rng.standard_normal((2, 9, 8, 4)).astype(np.float32)
    ks = (rng.standard_normal((3, 3, 4, 2 if depthwise else 6)) / 2).astype(np.float32)
    xin = kc.fmt_in(xs, df)
    x = kb.placeholder([-1] + list(xin.shape[1:]), F32)
    p = zero_pad(x, ((0, 1), (1, 2)), df)
    if depthwise:
        y = kc.depthwise_conv2d(p, kb.variable(ks), strides, padding, df)
    else:
        y = kc.conv2d(p, kb.variable(ks), strides, padding, df)
    for outs in ([y], [y, p]):
        f, g = kb.Function([x], outs), kb.Function([x], outs)
        folded, plain = f(xin), unfused(g, xin)
        for a, b in zip(folded, plain):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    if padding == "valid" and df == kc.LAST:
        xp = np.pad(xs, [(0, 0), (0, 1), (1, 2), (0, 0)])
        full = np_conv(xp, ks, 4 if depthwise else 1)  # 'same' at stride 1; the valid windows:
        want = full[:, 1:-1:2, 1:-1:2][:, :folded[0].shape[1], :folded[0].shape[2]]
        np.testing.assert_allclose(folded[0], want, rtol=1e-5, atol=1e-5)


PAD_PLAN_SCRIPT = r"""
import sys
import numpy as np
import kb
import kb_conv as kc
x = kb.placeholder([-1, 9, 9, 4], kb.F32)
p = kb.op("spatial_2d_padding", x, kb.i64([0, 1, 0, 1]), 4, kc.FORMAT[kc.LAST])
k = kb.variable(np.full((3, 3, 4, 1), 0.1, np.float32))
y = kc.depthwise_conv2d(p, k, (2, 2), sys.argv[1], kc.LAST)
kb.Function([x], [y])(np.ones((1, 9, 9, 4), np.float32))
"""


def test_pad_plans():
    if kb.plan_devices(PAD_PLAN_SCRIPT, "valid") != ["cpu"]:
        pytest.skip("the pad fold is the CPU's (cuDNN's pads are the same on both sides)")
    assert kb.plan_steps(PAD_PLAN_SCRIPT, "valid") == ["Conv"]
    assert kb.plan_steps(PAD_PLAN_SCRIPT, "same") == ["Pad", "Conv"]
    assert kb.plan_steps(PAD_PLAN_SCRIPT, "valid", KB_FUSE="0") == ["Pad", "Conv"]
