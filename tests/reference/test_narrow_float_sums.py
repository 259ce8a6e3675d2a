"""Scattered sums into 16-bit float results (gather's gradient, densified duplicates, the
gradient of gather_nd, sparse products) are summed in float32 and rounded once, as the GPU sums
them. Summed in 16 bits instead, 3000 terms of 1 stall where the type's spacing reaches 2: at
2048 for float16 and 256 for bfloat16.
"""
import numpy as np
import pytest

from kb import (BF16, F16, const, gradients, i64, narrow_store, narrow_values, op, run,
                variable)

N = 3000  # terms added into one element
TYPES = [F16, BF16]


def ones(shape, dtype):
    return variable(narrow_store(np.ones(shape), dtype), dtype)


def rounded(a, dtype):
    """float32 values rounded to the 16-bit type, as float32."""
    return narrow_values(narrow_store(np.asarray(a, np.float32), dtype), dtype)


def total(x):
    return op("sum", x, None, 0, 0)


# Entry (0, 1) N times, (1, 2) five times, (1, 0) once: a (2, 3) result.
INDEX = np.array([[0, 1]] * N + [[1, 2]] * 5 + [[1, 0]], np.int64)
COUNTS = np.array([[0, N, 0], [1, 0, 5]], np.float32)


def sparse(values):
    return op("sparse_tensor", const(INDEX), values, i64([2, 3]), 2, None)


@pytest.mark.parametrize("dtype", TYPES)
def test_gather_gradient(dtype):
    x = ones((4, 2), dtype)
    idx = np.array([0] * N + [2] * 5 + [3], np.int32)
    (g,) = gradients(total(op("gather", x, const(idx))), [x])
    expected = np.array([[N, N], [0, 0], [5, 5], [1, 1]], np.float32)
    np.testing.assert_array_equal(narrow_values(run(g), dtype), rounded(expected, dtype))


@pytest.mark.parametrize("dtype", TYPES)
def test_duplicates_densify(dtype):
    d = op("to_dense", sparse(ones((len(INDEX),), dtype)))
    np.testing.assert_array_equal(narrow_values(run(d), dtype), rounded(COUNTS, dtype))


@pytest.mark.parametrize("dtype", TYPES)
def test_gather_nd_gradient(dtype):
    # d sum(dense(v) * w) / dv = gather_nd(w, INDEX); its gradient to w counts each entry's
    # duplicates (ScatterNd).
    v, w = ones((len(INDEX),), dtype), ones((2, 3), dtype)
    (gv,) = gradients(total(op("multiply", op("to_dense", sparse(v)), w)), [v])
    (gw,) = gradients(total(gv), [w])
    np.testing.assert_array_equal(narrow_values(run(gw), dtype), rounded(COUNTS, dtype))


@pytest.mark.parametrize("dtype", TYPES)
def test_sparse_product(dtype):
    b = np.array([[1, 2], [3, 1], [0.5, 4]], np.float32)  # exact in either type
    y = op("dot", sparse(ones((len(INDEX),), dtype)), variable(narrow_store(b, dtype), dtype))
    np.testing.assert_array_equal(narrow_values(run(y), dtype), rounded(COUNTS @ b, dtype))


@pytest.mark.parametrize("dtype", TYPES)
def test_random_terms_round_once(dtype):
    # Sums of N random terms: within one 16-bit rounding of the exact sum (summed in 16 bits,
    # float16 drifts by many of its ulps).
    rng = np.random.default_rng(7)
    terms = narrow_values(narrow_store(rng.uniform(0, 1, (N + 6, 2)), dtype), dtype)
    x = variable(narrow_store(terms, dtype), dtype)
    idx = np.array([0] * N + [1] * 6, np.int32)
    # gather's gradient, x's rows coming in: the rows of x summed by idx
    y = variable(narrow_store(np.zeros((2, 2)), dtype), dtype)
    (gy,) = gradients(total(op("multiply", op("gather", y, const(idx)), x)), [y])
    got = narrow_values(run(gy), dtype).astype(np.float64)
    exact = np.stack([terms[:N].astype(np.float64).sum(0), terms[N:].astype(np.float64).sum(0)])
    ulp = np.abs(rounded(exact, dtype).astype(np.float64)) * (2.0 ** -10 if dtype == F16
                                                              else 2.0 ** -7)
    assert np.all(np.abs(got - exact) <= ulp), (got, exact)
