"""Shape functions against NumPy (docs/keras_semantics.md section 8)."""
import numpy as np
import pytest

import kb
from kb import assert_close, const, error_of, ev, handles, i64, op


def randn(rng, shape, dt):
    return rng.standard_normal(shape).astype(kb.NP_OF[dt])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_concatenate(axis, dt, rng):
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    for s in shapes[1:]:
        s[axis] += 1
    xs = [randn(rng, s, dt) for s in shapes]
    r = ev(lambda *ts: op("concatenate", handles(ts), len(ts), axis), *xs)
    assert_close(r, np.concatenate(xs, axis=axis), dt)


@pytest.mark.parametrize("axis", [-3, -4, -5])
def test_concatenate_negative_axis_modulo_rank(axis, dt, rng):
    # Keras: a negative axis becomes axis % rank, so -3 on rank 2 is axis 1
    xs = [randn(rng, (2, 2), dt) for _ in range(2)]
    r = ev(lambda *ts: op("concatenate", handles(ts), len(ts), axis), *xs)
    assert_close(r, np.concatenate(xs, axis=axis % 2), dt)


def test_concatenate_unknown_batch(dt, rng):
    a, b = kb.placeholder([-1, 2], dt), kb.placeholder([-1, 3], dt)
    out = op("concatenate", handles([a, b]), 2, -1)
    assert out.shape == (None, 5)
    f = kb.Function([a, b], [out])
    for n in (1, 6):
        x, y = randn(rng, (n, 2), dt), randn(rng, (n, 3), dt)
        assert_close(f(x, y)[0], np.concatenate([x, y], -1), dt)


def test_concatenate_single(dt):
    x = np.arange(6.0).reshape(2, 3).astype(kb.NP_OF[dt])
    assert_close(ev(lambda t: op("concatenate", handles([t]), 1, -1), x), x, dt)


@pytest.mark.parametrize("shape", [(6, 4), (-1, 2), (3, -1, 2), (24,), (2, 3, 4, 1)])
def test_reshape(shape, dt, mode, rng):
    x = randn(rng, (4, 3, 2), dt)
    assert_close(ev(lambda t: op("reshape", t, i64(shape), len(shape)), x, mode=mode),
                 x.reshape(shape), dt)


def dim_of(x, i):
    """K.shape(x)[i]: a scalar int32 tensor."""
    return op("gather", op("shape", x), const(np.int32(i)))


def test_reshape_to_dims_known_when_run(dt, rng):
    """reshape_to with two dims from K.shape(x) (TimeDistributed's reshape): the static shape
    keeps what is known, values and gradient follow the fed shapes, and a target that does
    not fit fails when the function runs."""
    p = kb.placeholder([-1, -1, 6], dt)
    entries = [dim_of(p, 0), dim_of(p, 1), const(np.int32(2)), const(np.int32(-1))]
    target = op("stack", handles(entries), 4, 0)
    y = op("reshape_to", p, target)
    assert y.shape == (None, None, 2, None)  # as TensorFlow's: x's element count is unknown
    w = randn(rng, (2, 3), dt)
    (g,) = kb.gradients(op("sum", op("multiply", y, const(w)), None, 0, 0), [p])
    f = kb.Function([p], [y, g])
    for shape in ((1, 5, 6), (4, 2, 6)):
        x = randn(rng, shape, dt)
        r = f(x)
        assert_close(r[0], x.reshape(shape[0], shape[1], 2, 3), dt)
        assert_close(r[1], np.broadcast_to(w.reshape(6), shape), dt)
    # a target known only from values: its kernel reads it when the function runs
    n = kb.placeholder([], kb.I32)
    minus_one = const(np.int32(-1))
    z = op("reshape_to", p, op("stack", handles([n, minus_one]), 2, 0))
    assert z.shape == (None, None)
    fz = kb.Function([p, n], [z])
    x = randn(rng, (2, 3, 6), dt)
    assert_close(fz(x, np.int32(4))[0], x.reshape(4, 9), dt)
    with pytest.raises(kb.KBError, match="cannot reshape"):
        fz(x, np.int32(5))
    # known when the graph is built: a plain reshape
    q = kb.placeholder([-1, 4, 6], dt)
    q1 = dim_of(q, 1)
    s = op("reshape_to", q, op("stack", handles([q1, minus_one]), 2, 0))
    assert s.shape == (4, None)


def test_tile_slice_arange_with_tensor_arguments(dt, rng):
    """tile_to, slice_to and arange_to with arguments from K.shape (a plan folds them: static
    ops) and from fed values (the CPU specializes them when the function runs), with their
    gradients; numbers known now give the static ops at once."""
    p = kb.placeholder([-1, -1, 3], dt)
    k = kb.placeholder([], kb.I32)
    one, two, zero = const(np.int32(1)), const(np.int32(2)), const(np.int32(0))
    minus_one = const(np.int32(-1))
    d1 = dim_of(p, 1)
    m_shape = [one, d1, one]
    m_value = [k, one, two]
    multiples = op("stack", handles(m_shape), 3, 0)
    fed_multiples = op("stack", handles(m_value), 3, 0)
    t1, t2 = op("tile_to", p, multiples), op("tile_to", p, fed_multiples)
    assert t1.shape == (None, None, 3) and t2.shape == (None, None, 6)
    starts = [zero, one, zero]
    sizes = [minus_one, k, two]
    start, size = op("stack", handles(starts), 3, 0), op("stack", handles(sizes), 3, 0)
    s1 = op("slice_to", p, start, size)
    assert s1.shape == (None, None, 2)
    r1 = op("arange_to", d1, None, one, kb.I32)
    r2 = op("arange_to", one, k, two, kb.F64)
    assert r1.shape == (None,) and r2.shape == (None,)
    loss = op("add", op("sum", op("square", t2), None, 0, 0), op("sum", op("square", s1), None, 0, 0))
    (g,) = kb.gradients(loss, [p])
    f = kb.Function([p, k], [t1, t2, s1, r1, r2, g])
    for shape, kv in (((2, 3, 3), 2), ((1, 4, 3), 3)):
        x = randn(rng, shape, dt)
        r = f(x, np.int32(kv))
        assert_close(r[0], np.tile(x, (1, shape[1], 1)), dt)
        assert_close(r[1], np.tile(x, (kv, 1, 2)), dt)
        assert_close(r[2], x[:, 1:1 + kv, 0:2], dt)
        np.testing.assert_array_equal(r[3], np.arange(shape[1], dtype=np.int32))
        np.testing.assert_array_equal(r[4], np.arange(1, kv, 2, dtype=np.float64))
        grad = 2 * x * kv * 2
        grad[:, 1:1 + kv, 0:2] += 2 * x[:, 1:1 + kv, 0:2]
        assert_close(r[5], grad, dt)
    # numbers known now: the static ops, folded (dims known when the graph is built too)
    q4 = kb.placeholder([-1, 4], dt)
    q4_dim = dim_of(q4, 1)
    assert op("arange_to", q4_dim, None, one, kb.I32).shape == (4,)
    assert op("one_hot_to", k, q4_dim).shape == (4,)
    c = op("arange_to", const(np.int32(5)), None, one, kb.I64)
    np.testing.assert_array_equal(kb.run(c), np.arange(5))
    q = const(np.ones((2, 3), np.float32))
    assert op("tile_to", q, const(np.array([2, 1], np.int32))).shape == (4, 3)
    assert op("slice_to", q, const(np.array([0, 1])), const(np.array([-1, 2]))).shape == (2, 2)
    assert "integer vector of 2" in error_of("tile_to", q, const(np.array([1.0, 2.0])))
    assert "integer vector of 2" in error_of("slice_to", q, const(np.array([0])), const(np.array([1])))
    with pytest.raises(kb.KBError, match="negative multiple"):
        kb.Function([k], [op("tile_to", q, op("stack", handles([k, one]), 2, 0))])(np.int32(-1))
    with pytest.raises(kb.KBError, match="step is zero"):
        kb.Function([k], [op("arange_to", zero, two, k, kb.I32)])(np.int32(0))


def test_one_hot_to():
    """num_classes a scalar tensor: from a fed value (a range made when the function runs) and
    known now (the constant range)."""
    idx = kb.placeholder([-1], kb.I32)
    n = kb.placeholder([], kb.I32)
    y = op("one_hot_to", idx, n)
    assert y.shape == (None, None)
    f = kb.Function([idx, n], [y])
    for classes in (3, 5):
        v = np.array([0, 2, 1, 2], np.int32)
        np.testing.assert_array_equal(f(v, np.int32(classes))[0], np.eye(classes)[v])
    three = const(np.int64(3))
    assert op("one_hot_to", idx, three).shape == (None, 3)
    assert "integer scalar" in error_of("one_hot_to", idx, const(np.float32(3)))
    assert "indices must be integers" in error_of("one_hot_to", const(np.ones(2, np.float32)), three)


def test_reshape_to_errors():
    x = const(np.ones((2, 3), np.float32))
    assert "integer vector" in error_of("reshape_to", x, const(np.ones(2, np.float32)))
    assert "integer vector" in error_of("reshape_to", x, const(np.ones((1, 2), np.int32)))
    assert "cannot reshape" in error_of("reshape_to", x, const(np.array([4, 2], np.int64)))
    assert "more than one -1" in error_of("reshape_to", x, const(np.array([-1, -1], np.int32)))
    assert error_of("reshape_to", None, x).startswith("reshape")


@pytest.mark.parametrize("pattern", [(0, 1, 2), (2, 0, 1), (1, 0, 2), (2, 1, 0)])
def test_permute_dimensions(pattern, dt, mode, rng):
    x = randn(rng, (2, 3, 4), dt)
    assert_close(ev(lambda t: op("permute_dimensions", t, i64(pattern), 3), x, mode=mode),
                 np.transpose(x, pattern), dt)


@pytest.mark.parametrize("rep", [0, 1, 2, 3])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_repeat_elements(rep, axis, dt, rng):
    x = randn(rng, (2, 3, 2), dt)
    assert_close(ev(lambda t: op("repeat_elements", t, rep, axis), x), np.repeat(x, rep, axis),
                 dt)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_repeat_elements_unknown_batch(axis, dt, rng):
    p = kb.placeholder([-1, 3], dt)
    f = kb.Function([p], [op("repeat_elements", p, 2, axis)])
    for n in (1, 4):
        x = randn(rng, (n, 3), dt)
        assert_close(f(x)[0], np.repeat(x, 2, axis), dt)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_repeat_elements_and_batch_flatten_two_unknown_dims(axis, dt, rng):
    p = kb.placeholder([-1, -1, 3], dt)
    rep, flat = op("repeat_elements", p, 2, axis), op("batch_flatten", p)
    assert rep.shape == (None, None, 6 if axis == 2 else 3)
    assert flat.shape == (None, None)
    (g,) = kb.gradients(op("sum", op("square", rep), None, 0, 0), [p])
    f = kb.Function([p], [rep, flat, g])
    for shape in ((1, 4, 3), (3, 2, 3)):
        x = randn(rng, shape, dt)
        r = f(x)
        assert_close(r[0], np.repeat(x, 2, axis), dt)
        assert_close(r[1], x.reshape(shape[0], -1), dt)
        assert_close(r[2], 4 * x, dt)  # each element appears twice in the sum of squares


def test_repeat(dt, mode, rng):
    x = randn(rng, (3, 4), dt)
    r = ev(lambda t: op("repeat", t, 5), x, mode=mode)
    assert_close(r, np.repeat(x[:, None, :], 5, axis=1), dt)


@pytest.mark.parametrize("xs,n", [((3,), (2,)), ((2, 3), (2, 1)), ((2, 3), (1, 3)),
                                  ((2, 1, 3), (2, 2, 2)), ((2, 3), (1, 1)), ((2, 3), (0, 2))])
def test_tile(xs, n, dt, mode, rng):
    x = randn(rng, xs, dt)
    assert_close(ev(lambda t: op("tile", t, i64(n), len(n)), x, mode=mode), np.tile(x, n), dt)


def test_flatten_and_batch_flatten(dt, mode, rng):
    x = randn(rng, (3, 2, 4), dt)
    assert_close(ev(lambda t: op("flatten", t), x, mode=mode), x.reshape(-1), dt)
    assert_close(ev(lambda t: op("batch_flatten", t), x, mode=mode), x.reshape(3, 8), dt)


def test_batch_flatten_unknown_batch(dt, rng):
    p = kb.placeholder([-1, 2, 3], dt)
    out = op("batch_flatten", p)
    assert out.shape == (None, 6)
    f = kb.Function([p], [out])
    for n in (1, 5):
        x = randn(rng, (n, 2, 3), dt)
        assert_close(f(x)[0], x.reshape(n, 6), dt)


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -2, -4])
def test_expand_dims(axis, dt, mode, rng):
    x = randn(rng, (2, 3, 4), dt)
    assert_close(ev(lambda t: op("expand_dims", t, axis), x, mode=mode), np.expand_dims(x, axis),
                 dt)


@pytest.mark.parametrize("axis", [1, -3, 3, -1])
def test_squeeze(axis, dt, rng):
    x = randn(rng, (2, 1, 3, 1), dt)
    assert_close(ev(lambda t: op("squeeze", t, axis), x), np.squeeze(x, axis), dt)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_stack(axis, dt, mode, rng):
    xs = [randn(rng, (2, 3), dt) for _ in range(4)]
    r = ev(lambda *ts: op("stack", handles(ts), len(ts), axis), *xs, mode=mode)
    assert_close(r, np.stack(xs, axis), dt)


@pytest.mark.parametrize("itype", [kb.I32, kb.I64, kb.U8])
def test_one_hot(itype):
    idx = np.array([[0, 3, 1], [2, 2, 0]], kb.NP_OF[itype])
    expected = np.eye(4, dtype=np.float32)[idx]
    assert_close(ev(lambda t: op("one_hot", t, 4), idx), expected, kb.F32)  # float32 always


def test_one_hot_out_of_range_is_zero_row():
    idx = np.array([-1, 5, 1], np.int64)
    expected = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 0]], np.float32)
    assert_close(ev(lambda t: op("one_hot", t, 3), idx), expected, kb.F32)


def test_one_hot_float64_floatx():
    kb.check(kb.lib.kb_set_floatx(kb.F64))
    r = ev(lambda t: op("one_hot", t, 2), np.array([1, 0], np.int32))
    assert_close(r, [[0, 1], [1, 0]], kb.F32)


@pytest.mark.parametrize("axes", [[0], [-1], [0, 2], [1, -1], [0, 1, 2], []], ids=str)
def test_reverse(axes, dt, mode, rng):
    x = randn(rng, (2, 3, 4), dt)
    r = ev(lambda t: op("reverse", t, i64(axes), len(axes)), x, mode=mode)
    assert_close(r, np.flip(x, tuple(axes)) if axes else x, dt)


@pytest.mark.parametrize("start,size", [((0, 0, 0), (2, 3, 4)), ((1, 0, 2), (1, 2, 2)),
                                        ((0, 1, 1), (-1, -1, 2)), ((1, 2, 3), (1, 1, 1)),
                                        ((0, 3, 0), (2, 0, 4))])
def test_slice(start, size, dt, rng):
    x = randn(rng, (2, 3, 4), dt)
    idx = tuple(slice(b, None if s == -1 else b + s) for b, s in zip(start, size))
    r = ev(lambda t: op("slice", t, i64(start), i64(size), 3), x)
    assert_close(r, x[idx], dt)


def test_slice_unknown_batch(dt, rng):
    p = kb.placeholder([-1, 4], dt)
    f = kb.Function([p], [op("slice", p, i64([0, 1]), i64([-1, 2]), 2)])
    for n in (1, 3):
        x = randn(rng, (n, 4), dt)
        assert_close(f(x)[0], x[:, 1:3], dt)


@pytest.mark.parametrize("itype", [kb.I32, kb.I64, kb.I16, kb.U8])
@pytest.mark.parametrize("ishape", [(4,), (2, 2), ()])
def test_gather(itype, ishape, dt, rng):
    ref = randn(rng, (5, 3), dt)
    idx = rng.integers(0, 5, ishape).astype(kb.NP_OF[itype])
    assert_close(ev(lambda r, i: op("gather", r, i), ref, idx), ref[idx], dt)


def test_gather_rank3_reference(dt, rng):
    ref = randn(rng, (4, 2, 3), dt)
    idx = np.array([[3, 0, 0], [1, 2, 3]], np.int32)
    r = ev(lambda a, i: op("gather", a, i), ref, idx)
    assert r.shape == (2, 3, 2, 3)
    assert_close(r, ref[idx], dt)


def np_strided(x, begin, end, strides, bm, em, sm, nm):
    idx = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if (nm >> i) & 1:
            idx.append(None)
        elif (sm >> i) & 1:
            idx.append(b)
        else:
            idx.append(slice(None if (bm >> i) & 1 else b, None if (em >> i) & 1 else e, s))
    return x[tuple(idx)]


STRIDED = [
    ([0, 0, 0], [2, 3, 4], [1, 1, 1], 0, 0, 0, 0),
    ([1, 0, 1], [2, 3, 4], [1, 2, 2], 0, 0, 0, 0),
    ([0, -1, 0], [0, 0, 0], [1, -1, 1], 0b101, 0b111, 0, 0),  # x[:, ::-1, :]
    ([-1, 2, 0], [0, 0, 4], [1, 1, 3], 0, 0b011, 0b001, 0),  # x[-1, 2:, ::3]
    ([0, 1], [0, 2], [1, 1], 0b01, 0b01, 0b10, 0),  # x[:, 1] (trailing axis whole)
    ([0, 0, 1], [0, 0, 3], [1, 1, 1], 0b01, 0b01, 0, 0b10),  # x[:, None, 1:3]
    ([1, -2, 3], [2, -4, 0], [1, -1, -2], 0, 0, 0, 0),
    ([5, 10, -10], [-5, -10, 10], [-1, -1, 1], 0, 0, 0, 0),  # clamped out-of-range bounds
    ([0], [0], [1], 0, 0, 0, 1),  # x[None]
]


@pytest.mark.parametrize("case", STRIDED, ids=str)
def test_strided_slice(case, dt, rng):
    x = randn(rng, (2, 3, 4), dt)
    begin, end, strides, bm, em, sm, nm = case
    n = len(begin)
    r = ev(lambda t: op("strided_slice", t, i64(begin), i64(end), i64(strides), n, bm, em, sm,
                        nm), x)
    assert_close(r, np_strided(x, begin, end, strides, bm, em, sm, nm), dt)


def test_shape_vector_unknown_batch(dt):
    p = kb.placeholder([-1, 3, 2], dt)
    f = kb.Function([p], [op("shape", p)])
    for n in (1, 4):
        assert_close(f(np.zeros((n, 3, 2), kb.NP_OF[dt]))[0], [n, 3, 2], kb.I32)


# ---- bad input ------------------------------------------------------------------------------
def x23():
    return const(np.ones((2, 3), np.float32))


def test_concatenate_errors():
    a, b = x23(), const(np.ones((2, 4), np.float32))
    assert error_of("concatenate", handles([a, b]), 2, 0).startswith("concatenate:")
    assert error_of("concatenate", handles([a, None]), 2, 0).startswith("concatenate:")
    assert error_of("concatenate", None, 2, 0).startswith("concatenate:")
    assert error_of("concatenate", handles([]), 0, 0).startswith("concatenate:")
    c = const(np.ones((2, 3), np.float64))
    assert error_of("concatenate", handles([a, c]), 2, 0).startswith("concatenate:")
    d = const(np.ones((2, 3, 1), np.float32))
    assert error_of("concatenate", handles([a, d]), 2, 0).startswith("concatenate:")
    assert error_of("concatenate", handles([a, a]), 2, 2).startswith("concatenate:")


def test_shape_errors():
    x = x23()
    assert error_of("reshape", x, i64([4, -1]), 2).startswith("reshape:")
    assert error_of("reshape", x, i64([-1, -1]), 2).startswith("reshape:")
    assert error_of("reshape", None, i64([6]), 1).startswith("reshape:")
    assert error_of("permute_dimensions", x, i64([0, 0]), 2).startswith("permute_dimensions:")
    assert error_of("permute_dimensions", x, i64([0]), 1).startswith("permute_dimensions:")
    assert error_of("permute_dimensions", x, i64([0, 2]), 2).startswith("permute_dimensions:")
    assert error_of("repeat_elements", x, 2, 2).startswith("repeat_elements:")
    assert error_of("repeat_elements", x, -1, 0).startswith("repeat_elements:")
    assert error_of("repeat", const(np.ones(3, np.float32)), 2).startswith("repeat:")
    assert error_of("tile", x, i64([2]), 1).startswith("tile:")
    assert error_of("expand_dims", x, 3).startswith("expand_dims:")
    assert error_of("expand_dims", x, -4).startswith("expand_dims:")
    assert error_of("squeeze", x, 0).startswith("squeeze:")
    assert error_of("squeeze", x, 2).startswith("squeeze:")
    assert error_of("stack", handles([x, const(np.ones((3, 2), np.float32))]), 2,
                    0).startswith("stack:")
    assert error_of("stack", handles([x, x]), 2, 3).startswith("stack:")
    assert error_of("one_hot", x, 3).startswith("one_hot:")
    assert error_of("one_hot", const(np.array([1], np.int32)), 0).startswith("one_hot:")
    assert error_of("reverse", x, i64([2]), 1).startswith("reverse:")
    assert error_of("slice", x, i64([0, 0]), i64([3, 1]), 2).startswith("slice:")
    assert error_of("slice", x, i64([0]), i64([1]), 1).startswith("slice:")
    assert error_of("gather", x, const(np.array([0.0]))).startswith("gather:")
    assert error_of("gather", None, const(np.array([0]))).startswith("gather:")
    assert error_of("strided_slice", x, i64([0, 0, 0]), i64([1, 1, 1]), i64([1, 1, 1]), 3, 0, 0,
                    0, 0).startswith("strided_slice:")
    assert error_of("strided_slice", x, i64([0]), i64([1]), i64([0]), 1, 0, 0, 0,
                    0).startswith("strided_slice:")
    for name in ("flatten", "batch_flatten", "shape"):
        assert error_of(name, None).startswith(name + ":")


def test_gather_out_of_range_fails_at_call():
    f = kb.Function([], [op("gather", x23(), const(np.array([2], np.int32)))])
    with pytest.raises(kb.KBError, match="gather"):
        f()
