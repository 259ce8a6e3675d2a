"""Last-axis rows of float32 run vectorized kernels (core/cpu/row_kernels.cpp): softmax, the log
softmax of crossentropy from logits, and the row sum; lengths across the lane (64) and block
(1024) edges, special values agreeing with the float64 path, results independent of the row's
position and of threading."""
import numpy as np
import pytest

from kb import F32, F64, assert_close, ev, i64, op

LENGTHS = [1, 3, 63, 64, 65, 127, 1023, 1024, 1025, 2048 + 77, 4096]


def np_softmax(x):
    e = np.exp(x - np.max(x, -1, keepdims=True))
    return e / np.sum(e, -1, keepdims=True)


def np_log_softmax(x):
    s = x - np.max(x, -1, keepdims=True)
    return s - np.log(np.sum(np.exp(s), -1, keepdims=True))


def row_sum(t):
    return op("sum", t, i64([-1]), 1, 0)


@pytest.mark.parametrize("n", LENGTHS)
def test_softmax_rows(n, rng):
    x = (rng.standard_normal((5, n)) * 4).astype(np.float32)
    assert_close(ev(lambda t: op("softmax", t, -1), x), np_softmax(x.astype(float)), F32)


@pytest.mark.parametrize("n", LENGTHS)
def test_log_softmax_rows(n, rng):
    x = (rng.standard_normal((5, n)) * 4).astype(np.float32)
    w = rng.random((5, n)).astype(np.float32)
    r = ev(lambda t, o: op("categorical_crossentropy", t, o, 1, -1), w, x)
    expected = -np.sum(w * np_log_softmax(x.astype(float)), -1)
    assert_close(r, expected, F32, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


@pytest.mark.parametrize("n", LENGTHS)
def test_sum_rows(n, rng):
    x = (rng.standard_normal((7, n)) + 0.25).astype(np.float32)
    expected = np.sum(x.astype(float), -1)
    # float32 rounding of each partial sum: bounded by a few ulps of sum |x|
    bound = 4 * np.finfo(np.float32).eps * np.sum(np.abs(x.astype(float)), -1)
    r = ev(row_sum, x)
    assert r.dtype == np.float32
    assert np.all(np.abs(r.astype(float) - expected) <= bound + 1e-30)


def test_rows_do_not_depend_on_position(rng):
    # Rows spread over both threads (a large matrix) equal the same rows computed alone.
    x = rng.standard_normal((512, 1000)).astype(np.float32)
    big_s, big_p = ev(row_sum, x), ev(lambda t: op("softmax", t, -1), x)
    for i in (0, 255, 256, 511):
        assert np.array_equal(big_s[i:i + 1], ev(row_sum, x[i:i + 1]))
        assert np.array_equal(big_p[i:i + 1], ev(lambda t: op("softmax", t, -1), x[i:i + 1]))


SPECIAL = [[np.inf, 1.0, 2.0], [-np.inf, 1.0, 2.0], [np.nan, 1.0, 2.0], [1.0, np.nan, np.inf],
           [-np.inf, -np.inf, -np.inf], [np.inf, np.inf, 0.0], [88.0, -104.0, 0.0],
           [3e38, -3e38, 0.0]]


@pytest.mark.parametrize("row", SPECIAL, ids=str)
@pytest.mark.parametrize("n", [3, 67])
def test_special_values_match_float64_path(row, n):
    # The float64 kernel is the plain loop; the float32 one must put NaN, inf and 0 in the same
    # places, and agree elsewhere.
    x = np.zeros((2, n))
    x[:, :3] = row
    x[1] = np.roll(x[1], n - 3)  # the special values at the row's end too
    with np.errstate(all="ignore"):
        for fn in (lambda t: op("softmax", t, -1), row_sum):
            r32 = ev(fn, x.astype(np.float32)).astype(float)
            r64 = ev(fn, x.astype(np.float64))
            assert np.array_equal(np.isnan(r32), np.isnan(r64)), (r32, r64)
            finite = np.isfinite(r64)
            assert np.array_equal(r32[~finite & ~np.isnan(r64)], r64[~finite & ~np.isnan(r64)])
            np.testing.assert_allclose(r32[finite], r64[finite], rtol=2e-5, atol=1e-30)


def test_float64_rows_unchanged(rng):
    x = rng.standard_normal((3, 1030))
    assert_close(ev(lambda t: op("softmax", t, -1), x), np_softmax(x), F64)
    assert_close(ev(row_sum, x), np.sum(x, -1), F64)


def test_large_results_stream_the_same_values(rng):
    # A result of 8 MiB and more is written with non-temporal stores: the same bits as a small one.
    x = (rng.standard_normal((1030, 2048)) * 3).astype(np.float32)
    big = ev(lambda t: op("softmax", t, -1), x)
    for i in (0, 517, 1029):
        assert np.array_equal(big[i:i + 1], ev(lambda t: op("softmax", t, -1), x[i:i + 1]))
    w = rng.random((1030, 2048)).astype(np.float32)
    cce = lambda t, o: op("categorical_crossentropy", t, o, 1, -1)  # noqa: E731 - log softmax
    big = ev(cce, w, x)
    for i in (3, 1028):
        assert np.array_equal(big[i:i + 1], ev(cce, w[i:i + 1], x[i:i + 1]))


def test_log_softmax_special_values():
    # With an infinite logit: NaN there and -inf elsewhere, as the float64 loop; NaN for a NaN row.
    x = np.array([[np.inf, 1.0, 2.0], [np.nan, np.inf, 0.0], [1.0, 2.0, 3.0]])
    w = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, 0, 1.0]])
    cce = lambda t, o: op("categorical_crossentropy", t, o, 1, -1)  # noqa: E731
    with np.errstate(all="ignore"):
        r32, r64 = ev(cce, w.astype(np.float32), x.astype(np.float32)), ev(cce, w, x)
    assert np.array_equal(np.isnan(r32), np.isnan(r64)) and np.isnan(r32[:2]).all()
    np.testing.assert_allclose(r32[2], r64[2], rtol=1e-6)


@pytest.mark.parametrize("rows", [1, 2, 7, 2049])
@pytest.mark.parametrize("inner", [3, 16, 17, 40, 64, 65])
def test_column_sums(rows, inner, rng):
    # Sums over the leading axis (a bias gradient): narrow rows add 16 columns at a time in
    # registers, even and odd rows apart, the columns past the last 16 and wide rows one row
    # at a time; float64 partial sums, so each equals the float64 sum rounded once.
    x = (rng.standard_normal((rows, inner)) + 0.25).astype(np.float32)
    r = ev(lambda t: op("sum", t, i64([0]), 1, 0), x)
    np.testing.assert_array_equal(r, np.sum(x.astype(np.float64), 0).astype(np.float32))
