"""A plan drops the steps whose values nothing reads (core/compile/drop_unread_steps.cpp): a value
named only for its shape (zeros_like of a product) or as a like operand (the sin(x) whose shape
sum's gradient broadcasts to) is not computed, and the results are unchanged."""
import numpy as np

import kb
from kb import F64, op, placeholder

SCRIPT = """
import sys, numpy as np, kb
from kb import op
a, b = kb.placeholder([3, 4], kb.F64), kb.placeholder([4, 5], kb.F64)
shape_only = op("zeros_like", op("dot", a, b), kb.F64, None)
kb.Function([a, b], [op("add", shape_only, kb.const(np.float64(1.0)))])(np.ones((3, 4)),
                                                                        np.ones((4, 5)))
"""


def test_a_value_read_only_for_its_shape_is_not_computed():
    assert "MatMul" not in kb.plan_steps(SCRIPT, "")


def test_values_unchanged():
    a, b = placeholder([3, 4], F64), placeholder([4, 5], F64)
    y = op("add", op("zeros_like", op("dot", a, b), F64, None), op("dot", a, b))
    rng = np.random.default_rng(3)
    av, bv = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(kb.Function([a, b], [y])(av, bv)[0], av @ bv, rtol=1e-12)


LIKE_SCRIPT = """
import sys, numpy as np, kb
from kb import op
x = kb.placeholder([3, 4], kb.F64)
# sum's gradient broadcasts the seed like sin(x): read for its shape alone, so not computed.
g = kb.gradients(op("sum", op("sin", x), None, 0, 0), [x])
kb.Function([x], g)(np.ones((3, 4)))
"""


def test_a_value_read_only_as_a_like_operand_is_not_computed():
    steps = kb.plan_steps(LIKE_SCRIPT, "", KB_FUSE="0")
    assert "Cos" in steps and "Sin" not in steps, steps


def test_like_operand_values_unchanged():
    x = placeholder([3, 4], F64)
    g = kb.gradients(op("sum", op("sin", x), None, 0, 0), [x])
    xv = np.random.default_rng(4).normal(size=(3, 4))
    np.testing.assert_allclose(kb.Function([x], g)(xv)[0], np.cos(xv), rtol=1e-12)
