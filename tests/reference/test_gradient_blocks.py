"""Gradients of tensors cut into blocks (the gates of an LSTM kernel): when the blocks tile an
axis, the gradient is one concatenation of the blocks' gradients instead of a zero-padded tensor
per block summed; otherwise (a gap, the same block twice, blocks on different axes) the padded
gradients are summed as before. Values against NumPy in every case."""
import numpy as np
import pytest

import kb
from kb import F64, i64, op, placeholder

SCRIPT = """
import sys, numpy as np, kb
from kb import i64, op
case = sys.argv[1]
x = kb.placeholder([3, 8], kb.F64)
cols = {"tiles": [(0, 2), (2, 6), (6, 8)], "gap": [(0, 2), (4, 8)]}[case]
parts = [op("slice", x, i64([0, a]), i64([3, b - a]), 2) for a, b in cols]
loss = None
for k, p in enumerate(parts):
    t = op("sum", op("multiply", p, p), None, 0, 0)
    loss = t if loss is None else op("add", loss, t)
kb.Function([x], kb.gradients(loss, [x]))(np.ones((3, 8)))
"""


def grad_of_blocks(blocks, scale_by_block=True):
    """d/dx of sum_k (k+1) * sum(block_k(x)^2) for x (3, 8) cut into column blocks."""
    rng = np.random.default_rng(7)
    xv = rng.normal(size=(3, 8))
    x = placeholder([3, 8], F64)
    loss = None
    expected = np.zeros_like(xv)
    for k, (a, b) in enumerate(blocks):
        p = op("slice", x, i64([0, a]), i64([3, b - a]), 2)
        w = float(k + 1) if scale_by_block else 1.0
        t = op("sum", op("multiply", op("multiply", p, p), kb.const(np.float64(w))), None, 0, 0)
        loss = t if loss is None else op("add", loss, t)
        expected[:, a:b] += 2 * w * xv[:, a:b]
    got = kb.Function([x], kb.gradients(loss, [x]))(xv)[0]
    return got, expected


@pytest.mark.parametrize("blocks", [
    [(0, 2), (2, 6), (6, 8)],          # tiles the axis: one Concat
    [(6, 8), (0, 2), (2, 6)],          # the same, sliced out of order
    [(0, 2), (4, 8)],                  # a gap: summed padded gradients
    [(0, 4), (0, 4), (4, 8)],          # one block twice: its gradients added, then joined
    [(0, 3), (2, 8)],                  # overlapping blocks
])
def test_values(blocks):
    got, expected = grad_of_blocks(blocks)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_blocks_on_rows_and_columns():
    rng = np.random.default_rng(8)
    xv = rng.normal(size=(4, 6))
    x = placeholder([4, 6], F64)
    top = op("slice", x, i64([0, 0]), i64([2, 6]), 2)
    left = op("slice", x, i64([0, 0]), i64([4, 3]), 2)
    right = op("slice", x, i64([0, 3]), i64([4, 3]), 2)
    loss = op("add", op("sum", op("multiply", top, top), None, 0, 0),
              op("add", op("sum", left, None, 0, 0),
                 op("sum", op("multiply", right, kb.const(np.float64(3.0))), None, 0, 0)))
    got = kb.Function([x], kb.gradients(loss, [x]))(xv)[0]
    expected = np.zeros_like(xv)
    expected[:2] += 2 * xv[:2]
    expected[:, :3] += 1
    expected[:, 3:] += 3
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_tiling_blocks_join_into_one_concat():
    steps = kb.plan_steps(SCRIPT, "tiles")
    assert "Concat" in steps and "StridedSliceGrad" not in steps
    steps = kb.plan_steps(SCRIPT, "gap")
    assert steps.count("StridedSliceGrad") == 2 and "Concat" not in steps
