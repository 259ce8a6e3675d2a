"""Elementwise steps write into the storage of an input that dies at that step and that nothing
else holds (core/compile/plan.cpp, Step::in_place): results as NumPy's for the patterns where
reading and writing the same memory could go wrong, fused and unfused."""
import numpy as np
import pytest

import kb
from kb import const, op, unfused


def cases():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((33, 70))
    b = rng.standard_normal((33, 70))
    row = rng.standard_normal(70)

    def t(x):
        return op("tanh", x)
    return [
        # (name, build(a, b, row), NumPy)
        ("square of a dying value", lambda A, B, R: op("multiply", t(A), t(A)),
         np.tanh(a) * np.tanh(a)),
        ("both operands dying", lambda A, B, R: op("subtract", t(A), op("exp", B)),
         np.tanh(a) - np.exp(b)),
        ("dying value plus a broadcast row",
         lambda A, B, R: op("add", op("exp", A), op("sin", R)), np.exp(a) + np.sin(row)),
        ("row broadcast against a dying value",
         lambda A, B, R: op("maximum", op("cos", R), op("abs", A)),
         np.maximum(np.cos(row), np.abs(a))),
        ("chain", lambda A, B, R: op("sqrt", op("abs", op("sin", op("tanh", A)))),
         np.sqrt(np.abs(np.sin(np.tanh(a))))),
        ("value read again later", lambda A, B, R: op("add", op("multiply", t(A), B), t(A)),
         np.tanh(a) * b + np.tanh(a)),
    ], a, b, row


@pytest.mark.parametrize("dt", [kb.F32, kb.F64])
@pytest.mark.parametrize("fuse", [True, False])
def test_results(dt, fuse):
    cs, a, b, row = cases()
    nt = kb.NP_OF[dt]
    for name, build, expected in cs:
        A, B = kb.placeholder([-1, 70], dt), kb.placeholder([-1, 70], dt)
        R = const(row.astype(nt))
        f = kb.Function([A, B], [build(A, B, R)])
        args = (a.astype(nt), b.astype(nt))
        got = f(*args)[0] if fuse else unfused(f, *args)[0]
        kb.assert_close(got, expected, dt, err_msg=name)
        # the inputs the caller holds are never written
        assert np.array_equal(args[0], a.astype(nt)) and np.array_equal(args[1], b.astype(nt))


def test_cast_in_place_and_returned_values_kept():
    a = np.arange(-5, 5, dtype=np.float32) * 1.5
    A = kb.placeholder([10], kb.F32)
    e = op("exp", A)
    i = op("cast", op("round", e), kb.I32)  # same element size: may reuse the float storage
    f = kb.Function([A], [i, op("add", op("log", e), A)])
    got = unfused(f, a)
    np.testing.assert_array_equal(got[0], np.round(np.exp(a)).astype(np.int32))
    kb.assert_close(got[1], a + a, kb.F32)
