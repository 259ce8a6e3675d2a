"""Sparse tensors from Python: scipy.sparse values, sparse placeholders fed with them, to_dense,
dot and concatenate kept sparse, ctc_label_dense_to_sparse."""
import numpy as np
import pytest
import scipy.sparse as sp

import kbackend as K


def test_scipy_matrix_becomes_a_sparse_tensor():
    m = sp.random(5, 7, density=0.3, format="csr", random_state=0, dtype=np.float32)
    s = K.sparse_tensor(K.constant(np.argwhere(m.toarray() != 0), dtype="int64"),
                        K.constant(m.toarray()[m.toarray() != 0]), (5, 7))
    assert K.is_sparse(s)
    np.testing.assert_allclose(K.eval(s), m.toarray())
    assert not K.is_sparse(K.to_dense(s))
    np.testing.assert_allclose(K.eval(K.to_dense(s)), m.toarray())


def test_scipy_values_as_function_arguments_and_for_dense_inputs():
    m = sp.random(4, 3, density=0.5, format="csr", random_state=4, dtype=np.float32)
    d = K.placeholder(shape=(None, 3))  # a sparse value for a dense input is densified
    np.testing.assert_allclose(K.function([d], [d * 2])([m])[0], 2 * m.toarray())


def test_function_fed_with_scipy_sparse():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    x = K.placeholder(shape=(None, 6), sparse=True)
    assert K.is_sparse(x)
    f = K.function([x], [K.dot(x, K.constant(w)), K.sum(K.to_dense(x), axis=1)])
    for rows in (3, 8):
        m = sp.random(rows, 6, density=0.4, format="csr", random_state=rows)
        y, s = f([m])
        np.testing.assert_allclose(y, m.toarray() @ w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s, m.toarray().sum(1), rtol=1e-5, atol=1e-6)


def test_sparse_concatenate_and_dot_gradient():
    a = sp.random(3, 4, density=0.5, format="coo", random_state=2, dtype=np.float64)
    b = sp.random(2, 4, density=0.5, format="coo", random_state=3, dtype=np.float64)
    x = K.placeholder(shape=(None, 4), sparse=True, dtype="float64")
    y = K.placeholder(shape=(None, 4), sparse=True, dtype="float64")
    c = K.concatenate([x, y], axis=0)
    assert K.is_sparse(c)
    w = K.variable(np.arange(8.0).reshape(4, 2), dtype="float64")
    loss = K.sum(K.dot(c, w))
    (g,) = K.gradients(loss, [w])
    dense, grad = K.function([x, y], [K.to_dense(c), g])([a, b])
    stacked = np.vstack([a.toarray(), b.toarray()])
    np.testing.assert_allclose(dense, stacked)
    np.testing.assert_allclose(grad, stacked.T @ np.ones((5, 2)))


def test_ctc_label_dense_to_sparse():
    labels = np.array([[3, 1, 0], [2, 0, 0]], np.int32)
    s = K.ctc_label_dense_to_sparse(labels, np.array([2, 1], np.int32))
    assert K.is_sparse(s)
    np.testing.assert_array_equal(K.eval(s), [[3, 1, 0], [2, 0, 0]])
    idx, vals, shape = K.sparse_parts(s)
    np.testing.assert_array_equal(K.eval(idx), [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(K.eval(vals), [3, 1, 2])
    np.testing.assert_array_equal(K.eval(shape), [2, 3])


def test_feeding_a_dense_array_to_a_sparse_placeholder_is_an_error():
    x = K.placeholder(shape=(None, 2), sparse=True)
    f = K.function([x], [K.to_dense(x)])
    with pytest.raises(Exception, match="sparse placeholder"):
        f([np.ones((1, 2), np.float32)])


def test_sparse_from_coo_and_csr():
    want = np.array([[1, 0, 2], [0, 0, 3]], np.float32)
    coo = K.sparse_from_coo([[0, 0], [0, 2], [1, 2]], np.array([1, 2, 3], np.float32), (2, 3))
    assert K.is_sparse(coo)
    np.testing.assert_array_equal(K.eval(K.to_dense(coo)), want)
    csr = K.sparse_from_csr([0, 2, 3], [0, 2, 2], np.array([1.0, 2.0, 3.0]), 3, dtype="float32")
    np.testing.assert_array_equal(K.eval(K.to_dense(csr)), want)
    with pytest.raises(ValueError, match="nnz x rank"):
        K.sparse_from_coo([[0, 0]], np.array([1, 2], np.float32), (2, 3))
    with pytest.raises(ValueError, match="rows \\+ 1 offsets"):
        K.sparse_from_csr([0, 2], [0, 2, 2], np.array([1, 2, 3], np.float32), 3)
