"""A compiled function reuses the last call's plan when the inputs have its dtypes and dims: calls
that alternate shapes, dtypes, the fixed learning phase or a fed learning phase still get the
plan of their own signature."""
import numpy as np

import kb
from kb import F32, Function, check, lib, op, placeholder
import test_control_ctc as cc


def test_alternating_shapes_and_dtypes():
    x = placeholder([-1, 3], F32)
    f = Function([x], [op("sum", op("square", x), kb.i64([1]), 1, 0)])
    rng = np.random.default_rng(5)
    values = [rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(4, 3)),
              rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)]
    for v in values + values[::-1]:
        got = f(v)[0]
        assert got.dtype == np.float32 and got.shape == (v.shape[0],)
        np.testing.assert_allclose(got, (v.astype(np.float32) ** 2).sum(1), rtol=1e-6)


def test_fixed_learning_phase_changing_between_calls():
    x = placeholder([2], F32)
    r = op("in_train_phase", op("square", x), op("negative", x), None, cc.TENSOR_TENSOR)
    f = Function([x], [r])
    v = np.array([2.0, -3.0], np.float32)
    for phase in (1, 0, 0, 1, 1, 0):
        check(lib.kb_learning_phase_scope_push(phase))
        try:
            out = f(v)[0]
        finally:
            check(lib.kb_learning_phase_scope_pop())
        np.testing.assert_array_equal(out, v * v if phase else -v)
    np.testing.assert_array_equal(f(v)[0], -v)  # no phase set: test mode


def test_fed_learning_phase_changing_between_calls():
    x = placeholder([2], F32)
    lp = cc.learning_phase()
    r = op("in_train_phase", op("square", x), op("negative", x), None, cc.TENSOR_TENSOR)
    f = Function([x, lp], [r])
    v = np.array([2.0, -3.0], np.float32)
    for phase in (1, 1, 0, 0, 1):
        np.testing.assert_array_equal(f(v, np.array(bool(phase)))[0], v * v if phase else -v)
