"""A plan drops the steps whose values nothing reads (core/compile/plan.cpp): a value named only
for its shape (zeros_like of a product) is not computed, and the results are unchanged."""
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
