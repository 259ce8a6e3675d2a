"""switch, in_train_phase, in_test_phase, the Keras function list, CTC: against NumPy."""
import ctypes
from ctypes import c_int32, c_void_p

import numpy as np
import pytest

import kb
from kb import F32, F64, Function, Tensor, check, const, error_of, lib, op, placeholder, run

BRANCH = kb.native.kb_branch_function
TENSOR_TENSOR, TRAIN_FALSE, TRAIN_TRUE = -1, 0, 1
PRINT_SINK = kb.native.kb_print_sink

def learning_phase():
    out = c_void_p()
    check(lib.kb_learning_phase(ctypes.byref(out)))
    return Tensor(out.value)


def uses_lp(t):
    v = c_int32()
    check(lib.kb_tensor_uses_learning_phase(t, ctypes.byref(v)))
    return v.value


def make_branch(fn, calls):
    def cb(_, out):
        try:
            calls.append(1)
            t = fn()
            lib.kb_tensor_retain(t.h.value)
            out[0] = t.h.value
            return 0
        except Exception as e:  # noqa: BLE001
            lib.kb_set_error(1, str(e).encode())
            return 1
    return BRANCH(cb)


class Printed:
    """Collects what print_tensor writes while active."""

    def __enter__(self):
        self.text = []
        self.sink = PRINT_SINK(lambda s, _: self.text.append(s.decode()))
        check(lib.kb_set_print_sink(self.sink, None))
        return self

    def __exit__(self, *a):
        check(lib.kb_set_print_sink(PRINT_SINK(), None))


def call_with_phase(inputs, outputs, values, phase):
    """Runs a function with the learning phase fixed to `phase` (a scope around the call)."""
    f = Function(inputs, outputs)
    check(lib.kb_learning_phase_scope_push(phase))
    try:
        return f(*values)
    finally:
        check(lib.kb_learning_phase_scope_pop())


# ---- switch -----------------------------------------------------------------------------------
def test_switch_scalar_condition_values_and_shapes():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3))
    b = b.astype(np.float32)
    c = placeholder([], kb.BOOL)
    r = op("switch", c, const(a), const(b))
    assert r.shape == (2, 3)
    np.testing.assert_array_equal(run(r, [(c, np.array(True))]), a)
    np.testing.assert_array_equal(run(r, [(c, np.array(False))]), b)
    # A float condition is cast to bool.
    cf = placeholder([], F32)
    r = op("switch", cf, const(a), const(b))
    np.testing.assert_array_equal(run(r, [(cf, np.array(0.0, np.float32))]), b)


def test_switch_constant_condition_branches_of_different_shapes():
    a, b = np.ones((2, 3), np.float32), np.zeros((4,), np.float32)
    r = op("switch", const(np.array(True)), const(a), const(b))
    assert r.shape is None
    np.testing.assert_array_equal(run(r), a)
    r = op("switch", const(np.array(False)), const(a), const(b))
    np.testing.assert_array_equal(run(r), b)
    # Different shapes with a condition only known when called: a clear error.
    c = placeholder([], kb.BOOL)
    r = op("switch", c, const(a), const(b))
    with pytest.raises(kb.KBError, match="switch"):
        run(r, [(c, np.array(True))])


@pytest.mark.parametrize("cshape,xshape", [((3,), (3, 4)), ((3, 4), (3, 4)), ((3, 1), (3, 4, 2)),
                                           ((3,), (3,)), ((1, 4), (3, 4))])
def test_switch_condition_lines_up_with_leading_axes(cshape, xshape):
    rng = np.random.default_rng(1)
    cond = rng.random(cshape) > 0.5
    a = rng.standard_normal(xshape)
    b = rng.standard_normal(xshape)
    c = cond.reshape(cshape + (1,) * (len(xshape) - len(cshape)))
    expected = np.where(np.broadcast_to(c, xshape), a, b)
    r = run(op("switch", const(cond), const(a), const(b)))
    np.testing.assert_array_equal(r, expected)


def test_switch_gradient():
    x = kb.variable(np.array([1.0, -2.0, 3.0]), F64)
    c = placeholder([3], kb.BOOL)
    y = op("switch", c, op("square", x), op("negative", x))
    g = kb.gradients(_sum(y), [x])[0]
    cond = np.array([True, False, True])
    np.testing.assert_allclose(run(g, [(c, cond)]), np.where(cond, 2 * np.array([1, -2, 3.]), -1))
    cs = placeholder([], kb.BOOL)
    y = op("switch", cs, op("square", x), op("negative", x))
    g = kb.gradients(_sum(y), [x])[0]
    np.testing.assert_allclose(run(g, [(cs, np.array(True))]), [2, -4, 6])
    np.testing.assert_allclose(run(g, [(cs, np.array(False))]), [-1, -1, -1])


def _sum(t):
    return op("sum", t, None, 0, 0)


def test_switch_bad_inputs():
    a3, a2 = const(np.ones((2, 3))), const(np.ones((3, 2)))
    msg = error_of("switch", const(np.ones((2, 3, 1), bool)), a3, a3)
    assert msg.startswith("switch") and "rank" in msg
    assert error_of("switch", const(np.ones(2, bool)), a3, a2).startswith("switch")
    assert error_of("switch", const(np.ones(2, bool)), a3,
                    const(np.ones((2, 3), np.float32))).startswith("switch")
    assert error_of("switch", const(np.ones(4, bool)), a3, a3).startswith("switch")
    assert error_of("switch", None, a3, a3).startswith("switch")
    assert error_of("switch_fn", const(np.array(True)), BRANCH(), None, BRANCH(),
                    None).startswith("switch")


def test_switch_fn_callbacks():
    calls = []
    a = const(np.full((2,), 5.0))
    then = make_branch(lambda: op("square", a), calls)
    other = make_branch(lambda: const(np.zeros(2)), calls)
    c = placeholder([], kb.BOOL)
    r = op("switch_fn", c, then, None, other, None)
    assert len(calls) == 2  # both built, once each
    np.testing.assert_array_equal(run(r, [(c, np.array(True))]), [25.0, 25.0])

    def failing():
        raise ValueError("branch exploded")
    msg = error_of("switch_fn", c, then, None, make_branch(failing, []), None)
    assert msg.startswith("switch") and "branch exploded" in msg


# ---- in_train_phase / in_test_phase --------------------------------------------------------------
def test_in_train_phase_learning_phase_values_and_flag():
    x = placeholder([2], F32)
    train, test = op("square", x), op("negative", x)
    r = op("in_train_phase", train, test, None, TENSOR_TENSOR)
    assert uses_lp(r) == 1
    v = np.array([2.0, -3.0], np.float32)
    np.testing.assert_array_equal(call_with_phase([x], [r], [v], 1)[0], v * v)
    np.testing.assert_array_equal(call_with_phase([x], [r], [v], 0)[0], -v)
    np.testing.assert_array_equal(run(r, [(x, v)]), -v)  # not set: test mode
    t = op("in_test_phase", train, test, None, TENSOR_TENSOR)
    assert uses_lp(t) == 1
    np.testing.assert_array_equal(call_with_phase([x], [t], [v], 1)[0], -v)
    np.testing.assert_array_equal(call_with_phase([x], [t], [v], 0)[0], v * v)


def test_in_train_phase_learning_phase_fed_as_input():
    x = placeholder([2], F32)
    lp = learning_phase()
    r = op("in_train_phase", op("square", x), op("negative", x), None, TENSOR_TENSOR)
    v = np.array([2.0, -3.0], np.float32)
    f = Function([x, lp], [r])
    np.testing.assert_array_equal(f(v, np.array(True))[0], v * v)
    np.testing.assert_array_equal(f(v, np.array(False))[0], -v)


def test_learning_phase_fed_as_input_prunes_the_other_branch():
    # Keras feeds the learning phase as a function input: each fed value gets a plan of its own
    # that computes only the branch it selects, and the branches may differ in shape.
    x = placeholder([2], F32)
    lp = learning_phase()
    train = op("print_tensor", op("square", x), b"TRAIN BRANCH")
    test = op("print_tensor", op("negative", x), b"TEST BRANCH")
    r = op("in_train_phase", train, test, None, TENSOR_TENSOR)
    f = Function([x, lp], [r])
    v = np.array([2.0, -3.0], np.float32)
    for phase in (0, 1, 0, 1):
        with Printed() as p:
            out = f(v, np.array(bool(phase)))[0]
        np.testing.assert_array_equal(out, v * v if phase else -v)
        assert any(("TRAIN" if phase else "TEST") in s for s in p.text), p.text
        assert not any(("TEST" if phase else "TRAIN") in s for s in p.text), p.text
    s = op("switch", lp, const(np.ones((2, 2), np.float32)), x)
    g = Function([x, lp], [s])
    assert g(v, np.array(True))[0].shape == (2, 2)
    np.testing.assert_array_equal(g(v, np.array(False))[0], v)


def test_in_train_phase_fixed_and_tensor_training():
    a, b = const(np.array([1.0])), const(np.array([2.0]))
    r = op("in_train_phase", a, b, None, TRAIN_TRUE)
    assert run(r)[0] == 1.0 and uses_lp(r) == 0
    assert run(op("in_train_phase", a, b, None, TRAIN_FALSE))[0] == 2.0
    assert run(op("in_test_phase", a, b, None, TRAIN_TRUE))[0] == 2.0
    t = placeholder([], kb.BOOL)
    r = op("in_train_phase", a, b, t, TENSOR_TENSOR)
    assert uses_lp(r) == 0
    assert run(r, [(t, np.array(True))])[0] == 1.0
    assert run(r, [(t, np.array(False))])[0] == 2.0


def test_in_train_phase_branches_of_different_shapes():
    a, b = const(np.ones((2, 2))), const(np.zeros(3))
    r = op("in_train_phase", a, b, None, TENSOR_TENSOR)
    assert call_with_phase([], [r], [], 1)[0].shape == (2, 2)
    assert call_with_phase([], [r], [], 0)[0].shape == (3,)


def test_unused_branch_is_not_computed():
    x = placeholder([2], F32)
    train = op("print_tensor", op("square", x), b"TRAIN BRANCH")
    test = op("print_tensor", op("negative", x), b"TEST BRANCH")
    r = op("in_train_phase", train, test, None, TENSOR_TENSOR)
    v = np.array([1.0, 2.0], np.float32)
    with Printed() as p:
        call_with_phase([x], [r], [v], 0)
    assert any("TEST BRANCH" in s for s in p.text) and not any("TRAIN" in s for s in p.text)
    with Printed() as p:
        call_with_phase([x], [r], [v], 1)
    assert any("TRAIN BRANCH" in s for s in p.text) and not any("TEST" in s for s in p.text)
    # A select with a constant scalar condition is pruned the same way.
    s = op("switch", const(np.array(True)), train, test)
    with Printed() as p:
        run(s, [(x, v)])
    assert not any("TEST" in s for s in p.text)


def test_in_train_phase_fn_callbacks():
    calls_x, calls_alt = [], []
    a = const(np.array([3.0]))
    fx = make_branch(lambda: op("square", a), calls_x)
    falt = make_branch(lambda: op("negative", a), calls_alt)
    r = op("in_train_phase_fn", fx, None, falt, None, None, TRAIN_FALSE)
    assert run(r)[0] == -3.0 and calls_x == [] and calls_alt == [1]
    r = op("in_train_phase_fn", fx, None, falt, None, None, TENSOR_TENSOR)
    assert uses_lp(r) == 1
    assert call_with_phase([], [r], [], 1)[0][0] == 9.0
    r = op("in_test_phase_fn", fx, None, falt, None, None, TENSOR_TENSOR)
    assert call_with_phase([], [r], [], 1)[0][0] == -3.0


def test_in_train_phase_bad_inputs():
    a = const(np.array([1.0]))
    assert error_of("in_train_phase", a, a, None, 7).startswith("in_train_phase")
    assert error_of("in_train_phase", a, None, None, TENSOR_TENSOR).startswith("in_train_phase")
    assert error_of("in_train_phase", a, a, const(np.array(True)),
                    TRAIN_TRUE).startswith("in_train_phase")
    assert error_of("in_test_phase", None, a, None, TENSOR_TENSOR).startswith("in_test_phase")
    assert error_of("in_train_phase_fn", BRANCH(), None, BRANCH(), None, None,
                    TENSOR_TENSOR).startswith("in_train_phase")


# ---- coverage of the Keras backend function list ----------------------------------------------
def test_every_keras_function_has_a_kb_function():
    import os
    import re
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "keras_functions.txt"), encoding="utf-8") as f:
        entries = []
        for line in f:
            name, _, reason = line.partition("#")
            if name.strip():
                entries.append((name.strip(), reason.strip()))
    with open(os.path.join(here, "..", "..", "include", "kbackend.h"), encoding="utf-8") as f:
        declared = set(re.findall(r"\bkb_([a-z0-9_]+)\s*\(", f.read()))
    assert len(entries) == 155, len(entries)
    missing = [n for n, r in entries if n not in declared and not r]
    stale = [n for n, r in entries if n in declared and r]
    marked = [f"{n} ({r})" for n, r in entries if n not in declared and r]
    print("Keras functions still missing (marked):", ", ".join(marked) or "none")
    assert not missing, f"Keras functions without a kb_ function: {missing}"
    assert not stale, f"marked as missing in keras_functions.txt but declared: {stale}"


def test_static_value_folds_shape_arithmetic():
    x = placeholder([-1, 5, 7], F32)
    shape = op("shape", x)
    # K.shape(x)[1] * 2 + K.shape(x)[2]: the dims are known when the graph is built
    one = op("gather", shape, const(np.int32(1)))
    two = op("gather", shape, const(np.int32(2)))
    expr = op("add", op("multiply", one, const(np.int32(2))), two)
    got = kb.to_numpy(op("static_value", expr))
    assert got.dtype == np.int32 and got.shape == () and int(got) == 17
    np.testing.assert_array_equal(kb.to_numpy(op("static_value", const(np.arange(3.0)))),
                                  [0, 1, 2])
    # the batch dim is known only when a function runs; placeholders and variables never fold
    batch = op("gather", shape, const(np.int32(0)))
    assert "known only when a function runs" in error_of("static_value", batch)
    assert "depends on a Placeholder" in error_of("static_value", op("add", x, x))
    v = kb.variable(np.ones(2, np.float32))
    assert "depends on a Variable" in error_of("static_value", v)
    assert "NULL" in error_of("static_value", None)
