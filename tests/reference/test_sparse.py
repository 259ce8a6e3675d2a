"""Sparse tensors (COO): creation from COO/CSR, to_dense, dot, concatenate, sparse placeholders,
ctc_label_dense_to_sparse, gradients through them; against NumPy."""
import ctypes
from ctypes import POINTER, c_int32, c_int64, c_void_p

import numpy as np
import pytest

import kb
from kb import (F32, F64, I32, I64, CODE_OF, Tensor, check, const, error_of, gradients, handles,
                i64, lib, list_items, op, run, to_numpy, variable)

I64P = POINTER(c_int64)


def coo(indices, values, shape, dtype=F32):
    idx = np.ascontiguousarray(np.asarray(indices, np.int64).reshape(-1, len(shape)))
    val = np.ascontiguousarray(values)
    return op("sparse_from_coo", idx.ctypes.data_as(I64P), val.ctypes.data, CODE_OF[val.dtype],
              len(val), i64(shape), len(shape), dtype, None)


def csr(indptr, cols, values, shape, dtype=F32):
    ip = np.ascontiguousarray(indptr, np.int64)
    c = np.ascontiguousarray(cols, np.int64)
    v = np.ascontiguousarray(values)
    return op("sparse_from_csr", ip.ctypes.data_as(I64P), c.ctypes.data_as(I64P), v.ctypes.data,
              CODE_OF[v.dtype], shape[0], shape[1], dtype, None)


def dense_of(indices, values, shape, dtype=np.float32):
    d = np.zeros(shape, dtype)
    for ix, v in zip(np.asarray(indices).reshape(-1, len(shape)), values):
        d[tuple(ix)] += v
    return d


def is_sparse(t):
    out = c_int32()
    check(lib.kb_is_sparse(t, ctypes.byref(out)))
    return bool(out.value)


def parts(t):
    outs = [c_void_p(), c_void_p(), c_void_p()]
    check(lib.kb_sparse_parts(t, *[ctypes.byref(o) for o in outs]))
    return [Tensor(o.value) for o in outs]


def random_coo(rng, shape, nnz):
    flat = rng.choice(int(np.prod(shape)), size=nnz, replace=False)
    return np.stack(np.unravel_index(flat, shape), axis=1), rng.standard_normal(nnz)


def sparse_placeholder(shape, dtype=F32, name=None):
    return op("placeholder", i64(shape), len(shape), 0, dtype, 1, name and name.encode())


def call(f_inputs, outputs, values):
    """kb_function(f_inputs, outputs) called with tensors (sparse values included)."""
    f = c_void_p()
    check(lib.kb_function(handles(f_inputs), len(f_inputs), handles(outputs), len(outputs),
                          handles([]), 0, ctypes.byref(f)))
    try:
        out = c_void_p()
        check(lib.kb_function_call(f, handles(values), len(values), ctypes.byref(out)))
        return [to_numpy(t) for t in list_items(out.value)]
    finally:
        lib.kb_function_release(f)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_coo_densifies_and_duplicates_add(dtype):
    np_t = kb.NP_OF[dtype]
    idx = [[0, 1], [2, 3], [0, 1], [1, 0]]
    val = np.array([1.5, -2.0, 0.25, 4.0])
    s = coo(idx, val, (3, 4), dtype)
    assert is_sparse(s)
    kb.assert_close(to_numpy(op("eval", s)), dense_of(idx, val, (3, 4), np_t), dtype)
    d = op("to_dense", s)
    assert not is_sparse(d)
    kb.assert_close(run(d), dense_of(idx, val, (3, 4), np_t), dtype)
    # a plain function of a sparse tensor sees its dense value
    kb.assert_close(run(op("exp", s)), np.exp(dense_of(idx, val, (3, 4), np_t)), dtype)
    assert s.shape == (3, 4) and s.dtype == dtype


def test_to_dense_of_a_dense_tensor_is_itself():
    x = const(np.ones((2, 2), np.float32))
    assert not is_sparse(x)
    np.testing.assert_array_equal(run(op("to_dense", x)), np.ones((2, 2)))


def test_parts_and_rank3():
    rng = np.random.default_rng(0)
    idx, val = random_coo(rng, (2, 3, 4), 7)
    s = coo(idx, val, (2, 3, 4), F64)
    i, v, ds = parts(s)
    np.testing.assert_array_equal(run(i), idx)
    np.testing.assert_allclose(run(v), val)
    np.testing.assert_array_equal(run(ds), [2, 3, 4])
    np.testing.assert_allclose(run(s), dense_of(idx, val, (2, 3, 4), np.float64))


def test_csr_matches_its_dense_matrix():
    # [[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 4, 0]]
    indptr, cols, vals = [0, 2, 2, 4], [1, 3, 0, 2], np.array([1.0, 2.0, 3.0, 4.0])
    s = csr(indptr, cols, vals, (3, 4), F64)
    np.testing.assert_allclose(run(s), [[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 4, 0]])
    empty = csr([0, 0, 0], [], np.zeros(0), (2, 5))
    np.testing.assert_array_equal(run(empty), np.zeros((2, 5)))


@pytest.mark.parametrize("dtype", [F32, F64])
def test_dot_sparse_dense(dtype):
    rng = np.random.default_rng(1)
    idx, val = random_coo(rng, (5, 6), 9)
    b = rng.standard_normal((6, 3)).astype(kb.NP_OF[dtype])
    s = coo(idx, val, (5, 6), dtype)
    out = op("dot", s, const(b))
    assert out.shape == (5, 3)
    kb.assert_close(run(out), dense_of(idx, val, (5, 6), kb.NP_OF[dtype]) @ b, dtype)


def test_dot_gradient_wrt_dense_operand():
    rng = np.random.default_rng(2)
    idx, val = random_coo(rng, (4, 5), 8)
    a = dense_of(idx, val, (4, 5), np.float64)
    b0 = rng.standard_normal((5, 3))
    w = rng.standard_normal((4, 3))
    b = variable(b0, F64)
    loss = op("sum", op("multiply", op("dot", coo(idx, val, (4, 5), F64), b), const(w)), None, 0,
              0)
    np.testing.assert_allclose(run(loss), np.sum(a @ b0 * w), rtol=1e-12)
    (g,) = gradients(loss, [b])
    np.testing.assert_allclose(run(g), a.T @ w, rtol=1e-12)


def test_gradients_reach_the_values():
    # values come from a float "labels" variable through ctc_label_dense_to_sparse
    rng = np.random.default_rng(3)
    lab0 = rng.standard_normal((3, 4))
    lengths = np.array([2, 0, 4], np.int32)
    mask = np.arange(4)[None, :] < lengths[:, None]
    labels = variable(lab0, F64)
    s = op("ctc_label_dense_to_sparse", labels, const(lengths))
    w = rng.standard_normal((3, 4))
    loss = op("sum", op("multiply", op("to_dense", s), const(w)), None, 0, 0)
    (g,) = gradients(loss, [labels])
    np.testing.assert_allclose(run(g), w * mask, rtol=1e-12)
    b = rng.standard_normal((4, 2))
    v = rng.standard_normal((3, 2))
    loss2 = op("sum", op("multiply", op("dot", s, const(b)), const(v)), None, 0, 0)
    (g2,) = gradients(loss2, [labels])
    np.testing.assert_allclose(run(g2), (v @ b.T) * mask, rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_sparse(axis):
    rng = np.random.default_rng(4)
    shapes = [(2, 3), (2, 3), (2, 3)] if axis == 0 else [(2, 3), (2, 1), (2, 4)]
    if axis == 0:
        shapes = [(2, 3), (1, 3), (3, 3)]
    parts_np, ts = [], []
    for sh in shapes:
        idx, val = random_coo(rng, sh, 2)
        parts_np.append(dense_of(idx, val, sh))
        ts.append(coo(idx, val, sh))
    c = op("concatenate", handles(ts), len(ts), axis)
    assert is_sparse(c)
    expected = np.concatenate(parts_np, axis=axis)
    assert c.shape == expected.shape
    np.testing.assert_allclose(run(c), expected, rtol=1e-6)
    ds = parts(c)[2]
    np.testing.assert_array_equal(run(ds), expected.shape)


def test_concatenate_sparse_and_dense_is_dense():
    s = coo([[0, 0]], np.array([5.0]), (1, 2))
    d = const(np.ones((1, 2), np.float32))
    c = op("concatenate", handles([s, d]), 2, 0)
    assert not is_sparse(c)
    np.testing.assert_allclose(run(c), [[5, 0], [1, 1]])


def test_sparse_placeholder_fed_with_sparse_values():
    rng = np.random.default_rng(5)
    x = sparse_placeholder([-1, 6], F32, "x")
    assert is_sparse(x)
    w = rng.standard_normal((6, 2)).astype(np.float32)
    y = op("dot", x, const(w))
    doubled = op("multiply", op("to_dense", x), const(np.float32(2)))
    rows = op("sum", doubled, i64([1]), 1, 0)
    for batch, nnz in [(4, 5), (7, 11), (3, 0)]:
        idx, val = random_coo(rng, (batch, 6), nnz)
        a = dense_of(idx, val, (batch, 6))
        value = coo(idx, val, (batch, 6))
        got_y, got_d, got_r = call([x], [y, doubled, rows], [value])
        np.testing.assert_allclose(got_y, a @ w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_d, 2 * a, rtol=1e-6)
        np.testing.assert_allclose(got_r, 2 * a.sum(1), rtol=1e-5, atol=1e-6)


def test_sparse_placeholder_gradient_to_weights():
    rng = np.random.default_rng(6)
    x = sparse_placeholder([-1, 5], F64)
    w0 = rng.standard_normal((5, 3))
    w = variable(w0, F64)
    loss = op("sum", op("square", op("dot", x, w)), None, 0, 0)
    (g,) = gradients(loss, [w])
    idx, val = random_coo(rng, (4, 5), 6)
    a = dense_of(idx, val, (4, 5), np.float64)
    (got,) = call([x], [g], [coo(idx, val, (4, 5), F64)])
    np.testing.assert_allclose(got, a.T @ (2 * a @ w0), rtol=1e-12)


@pytest.mark.parametrize("dtype", [I32, I64, F32])
def test_ctc_label_dense_to_sparse(dtype):
    labels = np.array([[1, 2, 3, 9], [4, 5, 9, 9], [9, 9, 9, 9]], kb.NP_OF[dtype])
    lengths = np.array([3, 2, 0], np.int32)
    s = op("ctc_label_dense_to_sparse", const(labels), const(lengths))
    assert is_sparse(s) and s.dtype == dtype and s.shape == (3, 4)
    i, v, ds = parts(s)
    np.testing.assert_array_equal(run(i), [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]])
    np.testing.assert_array_equal(run(v), [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(run(ds), [3, 4])
    np.testing.assert_array_equal(run(s), labels * (np.arange(4)[None] < lengths[:, None]))


def test_ctc_label_dense_to_sparse_with_fed_shapes():
    lab = kb.placeholder([-1, -1], I32)
    ln = kb.placeholder([-1], I32)
    s = op("ctc_label_dense_to_sparse", lab, ln)
    i, v, _ = parts(s)
    labels = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    lengths = np.array([1, 4, 2], np.int32)
    got_i, got_v, got_d = run([i, v, op("to_dense", s)], [(lab, labels), (ln, lengths)])
    mask = np.arange(4)[None] < lengths[:, None]
    np.testing.assert_array_equal(got_i, np.argwhere(mask))
    np.testing.assert_array_equal(got_v, labels[mask])
    np.testing.assert_array_equal(got_d, labels * mask)


def bad_coo(indices, values, shape):
    idx = np.ascontiguousarray(np.asarray(indices, np.int64))
    val = np.ascontiguousarray(values, np.float32)
    return error_of("sparse_from_coo", idx.ctypes.data_as(I64P), val.ctypes.data,
                    CODE_OF[val.dtype], len(val), i64(shape), len(shape), F32, None)


def test_bad_input():
    assert "out of range" in bad_coo([[0, 4]], [1.0], (2, 4))
    assert "out of range" in bad_coo([[-1, 0]], [1.0], (2, 4))
    assert "invalid dense dimension" in bad_coo([[0, 0]], [1.0], (2, -3))
    assert "at least one axis" in error_of("sparse_from_coo", None, None, F32, 0, None, 0, F32,
                                           None)
    ip = np.array([0, 2, 1], np.int64)
    assert "indptr" in error_of("sparse_from_csr", ip.ctypes.data_as(I64P), ip.ctypes.data_as(I64P),
                                np.ones(3, np.float32).ctypes.data, F32, 2, 3, F32, None)
    s = coo([[0, 0]], np.array([1.0]), (2, 3))
    assert "not aligned" in error_of("dot", s, const(np.ones((4, 2), np.float32)))
    assert "not sparse" in error_of("sparse_parts", const(np.ones(2, np.float32)),
                                    ctypes.byref(c_void_p()), ctypes.byref(c_void_p()))
    assert "shape or ndim" in error_of("placeholder", None, 0, -1, F32, 1, None)
    assert "shape (batch, max_length)" in error_of(
        "ctc_label_dense_to_sparse", const(np.ones(3, np.int32)), const(np.ones(3, np.int32)))
    assert "lengths" in error_of("ctc_label_dense_to_sparse", const(np.ones((2, 3), np.int32)),
                                 const(np.ones(3, np.int32)))


def test_feeding_errors():
    x = sparse_placeholder([-1, 3])
    y = op("to_dense", x)
    f = c_void_p()
    check(lib.kb_function(handles([x]), 1, handles([y]), 1, handles([]), 0, ctypes.byref(f)))
    try:
        out = c_void_p()
        dense = const(np.ones((2, 3), np.float32))
        assert lib.kb_function_call(f, handles([dense]), 1, ctypes.byref(out)) != 0
        assert "sparse placeholder" in lib.kb_last_error_message().decode()
        wrong = coo([[0, 1]], np.array([1.0]), (2, 5))  # 5 columns for a (?, 3) placeholder
        assert lib.kb_function_call(f, handles([wrong]), 1, ctypes.byref(out)) != 0
        assert "does not match" in lib.kb_last_error_message().decode()
        good = coo([[1, 2]], np.array([7.0]), (2, 3))
        check(lib.kb_function_call(f, handles([good]), 1, ctypes.byref(out)))
        (got,) = [to_numpy(t) for t in list_items(out.value)]
        np.testing.assert_array_equal(got, [[0, 0, 0], [0, 0, 7]])
    finally:
        lib.kb_function_release(f)




def test_sparse_tensor_from_symbolic_values_and_its_gradient():
    idx = np.array([[0, 2], [1, 0], [1, 2]], np.int64)
    v0 = np.array([1.0, -2.0, 3.0])
    v = variable(v0, F64)
    s = op("sparse_tensor", const(idx), op("multiply", v, const(np.float64(2))), i64([2, 3]), 2,
           None)
    assert is_sparse(s)
    np.testing.assert_allclose(run(s), dense_of(idx, 2 * v0, (2, 3), np.float64))
    w = np.arange(6.0).reshape(2, 3)
    loss = op("sum", op("multiply", s, const(w)), None, 0, 0)
    (g,) = gradients(loss, [v])
    np.testing.assert_allclose(run(g), 2 * w[idx[:, 0], idx[:, 1]])
    # coordinates computed by the graph are checked when it runs
    far = op("sparse_tensor", op("add", const(idx), const(np.int64(5))), v, i64([2, 3]), 2, None)
    with pytest.raises(kb.KBError, match="out of range"):
        run(far)
    assert "out of range" in error_of("sparse_tensor", const(idx), v, i64([1, 3]), 2, None)
    assert "indices have 1 columns" in error_of("sparse_tensor", const(idx[:, :1]), v, i64([2, 3]), 2, None)
