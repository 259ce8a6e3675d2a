"""dot, batch_dot, transpose against NumPy (docs/keras_semantics.md section 5)."""
import numpy as np
import pytest

import kb
from kb import assert_close, const, error_of, ev, i64, op


def randn(rng, shape, dt):
    return rng.standard_normal(shape).astype(kb.NP_OF[dt])


@pytest.mark.parametrize("xs,ys", [((2, 3), (3, 4)), ((2, 3), (4, 3, 5)), ((3,), (4, 3, 5)),
                                   ((2, 3, 4), (4, 5)), ((2, 3, 4), (3, 4, 2)),
                                   ((2, 3, 4), (4, 2)), ((1, 2, 3, 4), (2, 4, 3)),
                                   ((5, 1), (1, 6))])
def test_dot(xs, ys, dt, rng):
    x, y = randn(rng, xs, dt), randn(rng, ys, dt)
    r = ev(lambda a, b: op("dot", a, b), x, y)
    assert_close(r, np.dot(x.astype(np.float64), y), dt)


def test_dot_unknown_batch(dt, rng):
    p = kb.placeholder([-1, 3, 4], dt)
    w = randn(rng, (4, 5), dt)
    w3 = randn(rng, (2, 4, 5), dt)
    out, out3 = op("dot", p, const(w)), op("dot", p, const(w3))
    assert out.shape == (None, 3, 5)
    assert out3.shape == (None, 3, 2, 5)
    f = kb.Function([p], [out, out3])
    for n in (1, 4):
        x = randn(rng, (n, 3, 4), dt)
        r = f(x)
        assert_close(r[0], np.dot(x, w), dt)
        assert_close(r[1], np.dot(x, w3), dt)


def test_dot_several_unknown_dims(dt, rng):
    """x of (None, None, 4) (Dense over sequences of unknown length), and of rank 4 with three
    unknown dims; y of rank 2 and 3. The result keeps x's leading dims as they are at run time,
    and the gradient reaches x with x's shape."""
    w = randn(rng, (4, 5), dt)
    w3 = randn(rng, (2, 4, 5), dt)
    p = kb.placeholder([-1, -1, 4], dt)
    p4 = kb.placeholder([-1, -1, -1, 4], dt)
    out, out3, out4 = op("dot", p, const(w)), op("dot", p, const(w3)), op("dot", p4, const(w))
    assert out.shape == (None, None, 5)
    assert out3.shape == (None, None, 2, 5)
    assert out4.shape == (None, None, None, 5)
    (g,) = kb.gradients(op("sum", op("square", out3), None, 0, 0), [p])
    f = kb.Function([p, p4], [out, out3, out4, g])
    for n, t in ((1, 7), (3, 2)):
        x, x4 = randn(rng, (n, t, 4), dt), randn(rng, (n, t, 2, 4), dt)
        r = f(x, x4)
        assert_close(r[0], np.dot(x, w), dt)
        assert_close(r[1], np.dot(x, w3), dt)
        assert_close(r[2], np.dot(x4, w), dt)
        y3 = np.dot(x.astype(np.float64), w3)
        assert_close(r[3], np.einsum("ntij,ikj->ntk", 2 * y3, w3), dt)


def test_dot_y_of_unknown_dims(dt, rng):
    """y of rank 3 whose first dim is known only when the function runs (TensorFlow takes it),
    x of rank 1, 2 and 3; the contracted dim must be known on one side."""
    py = kb.placeholder([-1, 4, 5], dt)
    p1, p2, p3 = kb.placeholder([4], dt), kb.placeholder([-1, 4], dt), kb.placeholder([-1, -1, 4], dt)
    o1, o2, o3 = op("dot", p1, py), op("dot", p2, py), op("dot", p3, py)
    assert o1.shape == (None, 5) and o2.shape == (None, None, 5)
    assert o3.shape == (None, None, None, 5)
    (g,) = kb.gradients(op("sum", op("square", o3), None, 0, 0), [py])
    f = kb.Function([p1, p2, p3, py], [o1, o2, o3, g])
    for m in (1, 3):
        x1, x2, x3 = randn(rng, (4,), dt), randn(rng, (2, 4), dt), randn(rng, (2, 3, 4), dt)
        y = randn(rng, (m, 4, 5), dt)
        r = f(x1, x2, x3, y)
        for got, x in zip(r[:3], (x1, x2, x3)):
            assert_close(got, np.dot(x.astype(np.float64), y), dt)
        y3 = np.dot(x3.astype(np.float64), y)
        assert_close(r[3], np.einsum("abmj,abi->mij", 2 * y3, x3), dt)
    unknown_k = kb.placeholder([2, 3, -1], dt)
    assert "contracted dimension" in error_of("dot", unknown_k, kb.placeholder([2, -1, 5], dt))


def np_batch_dot(x, y, axes):
    """A NumPy emulation of Keras 2.2.4 TF batch_dot (the algorithm of section 5)."""
    xn, yn = x.ndim, y.ndim
    if axes is None:
        axes = (xn - 1, yn - 2)
    diff = abs(xn - yn)
    if xn > yn:
        y = y.reshape(y.shape + (1,) * diff)
    elif yn > xn:
        x = x.reshape(x.shape + (1,) * diff)
    r = x.ndim
    if r == 2:
        if axes[0] == axes[1]:
            out = np.sum(x * y, axis=axes[0])
        else:
            out = np.sum(x.T * y, axis=axes[1])
    else:
        xa = np.swapaxes(x, -1, -2) if axes[0] != r - 1 else x
        ya = np.swapaxes(y, -1, -2) if axes[1] == r - 1 else y
        out = np.matmul(xa, ya)
    if diff:
        idx = xn + yn - 3 if xn > yn else xn - 1
        out = np.squeeze(out, tuple(range(idx, idx + diff)))
    if out.ndim == 1:
        out = out[:, None]
    return out


B, N, M, P, K = 3, 4, 2, 5, 2
# (x shape, y shape, axes, expected shape, einsum) from the table of section 5
BATCH_DOT = [
    ((B, N), (B, N), 1, (B, 1), "bi,bi->b"),
    ((B, N), (B, N), (1, 1), (B, 1), "bi,bi->b"),
    ((B, N), (B, N), 0, (N, 1), "bi,bi->i"),
    ((N, N), (N, N), None, (N, 1), "ji,ij->j"),
    ((B, N), (B, N, M), 1, (B, M), "bn,bnm->bm"),
    ((B, N), (B, N, M), None, (B, M), "bn,bnm->bm"),
    ((B, N), (B, M, N), (1, 2), (B, M), "bn,bmn->bm"),
    ((B, M, N), (B, N), (2, 1), (B, M), "bmn,bn->bm"),
    ((B, N, M), (B, N), (1, 1), (B, M), "bnm,bn->bm"),
    ((B, M, N), (B, N, P), None, (B, M, P), "bmn,bnp->bmp"),
    ((B, M, N), (B, N, P), (2, 1), (B, M, P), "bmn,bnp->bmp"),
    ((B, N, M), (B, N, P), (1, 1), (B, M, P), "bnm,bnp->bmp"),
    ((B, M, N), (B, P, N), (2, 2), (B, M, P), "bmn,bpn->bmp"),
    ((B, N, M), (B, N, P), -1, (B, M, P), "bnm,bnp->bmp"),
    ((B, N, M), (B, N, P), 0, (B, M, P), "bnm,bnp->bmp"),
    ((B, K, M, N), (B, K, N, P), (3, 2), (B, K, M, P), "bkmn,bknp->bkmp"),
]


@pytest.mark.parametrize("case", BATCH_DOT, ids=str)
def test_batch_dot(case, dt, rng):
    xs, ys, axes, shape, eq = case
    x, y = randn(rng, xs, dt), randn(rng, ys, dt)
    ax = None if axes is None else i64(np.broadcast_to(axes, 2))
    r = ev(lambda a, b: op("batch_dot", a, b, ax), x, y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    expected = np_batch_dot(x64, y64, None if axes is None else tuple(np.broadcast_to(axes, 2)))
    if shape is not None:
        assert expected.shape == shape
    if eq is not None:
        e = np.einsum(eq, x64, y64)
        np.testing.assert_allclose(expected, e.reshape(shape), rtol=1e-12)
    assert_close(r, expected, dt)


@pytest.mark.parametrize("case", [c for c in BATCH_DOT if c[0][0] == B and c[1][0] == B
                                  and c[2] != 0], ids=str)
def test_batch_dot_unknown_batch(case, dt, rng):
    xs, ys, axes, _, _ = case
    ax = None if axes is None else i64(np.broadcast_to(axes, 2))
    px, py = kb.placeholder([-1] + list(xs[1:]), dt), kb.placeholder([-1] + list(ys[1:]), dt)
    f = kb.Function([px, py], [op("batch_dot", px, py, ax)])
    for n in (1, 5):
        x, y = randn(rng, (n,) + xs[1:], dt), randn(rng, (n,) + ys[1:], dt)
        expected = np_batch_dot(x.astype(np.float64), y.astype(np.float64),
                                None if axes is None else tuple(np.broadcast_to(axes, 2)))
        assert_close(f(x, y)[0], expected, dt)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)])
def test_transpose(shape, dt, mode, rng):
    x = randn(rng, shape, dt)
    assert_close(ev(lambda t: op("transpose", t), x, mode=mode), x.T, dt)


# ---- bad input ------------------------------------------------------------------------------
def test_dot_errors():
    a, b = const(np.ones((2, 3), np.float32)), const(np.ones((4, 5), np.float32))
    assert error_of("dot", a, b).startswith("dot:")
    assert error_of("dot", a, None).startswith("dot:")
    v = const(np.ones(3, np.float32))
    assert error_of("dot", v, v).startswith("dot:")  # rank <= 2: both must be matrices
    assert error_of("dot", const(np.ones((2, 3, 4), np.float32)), v).startswith("dot:")
    assert error_of("dot", a, const(np.ones((3, 2), np.float64))).startswith("dot:")
    assert error_of("dot", const(np.ones((2, 2, 3), np.float32)),
                    const(np.ones((4, 2, 5), np.float32))).startswith("dot:")


def test_batch_dot_errors():
    a = const(np.ones((2, 3), np.float32))
    assert error_of("batch_dot", a, None, None).startswith("batch_dot:")
    assert error_of("batch_dot", const(np.ones(3, np.float32)), a, None).startswith("batch_dot:")
    x, y = const(np.ones((2, 3, 4), np.float32)), const(np.ones((2, 5, 6), np.float32))
    assert error_of("batch_dot", x, y, None).startswith("batch_dot:")
    z = const(np.ones((3, 4, 6), np.float32))  # batch dims differ
    assert error_of("batch_dot", x, z, None).startswith("batch_dot:")
    assert error_of("transpose", None).startswith("transpose:")


@pytest.mark.parametrize("xs,ys", [((130, 257), (257, 67)), ((3, 70, 129), (129, 65)),
                                   ((65, 33), (4, 33, 70))])
def test_dot_large(xs, ys, dt, rng):
    x, y = randn(rng, xs, dt), randn(rng, ys, dt)
    assert_close(ev(lambda a, b: op("dot", a, b), x, y), np.dot(x.astype(float), y), dt,
                 rtol=1e-4 if dt == kb.F32 else 1e-10, atol=1e-4 if dt == kb.F32 else 1e-10)


@pytest.mark.parametrize("axes", [None, (2, 2), (1, 1)], ids=str)
def test_batch_dot_large(axes, dt, rng):
    x, y = randn(rng, (9, 65, 70), dt), randn(rng, (9, 65, 70) if axes else (9, 70, 33), dt)
    ax = None if axes is None else i64(axes)
    r = ev(lambda a, b: op("batch_dot", a, b, ax), x, y)
    assert_close(r, np_batch_dot(x.astype(float), y.astype(float), axes), dt,
                 rtol=1e-4 if dt == kb.F32 else 1e-10, atol=1e-4 if dt == kb.F32 else 1e-10)


def test_transpose_large(dt, rng):
    x = randn(rng, (33, 130, 67), dt)
    assert_close(ev(lambda t: op("transpose", t), x), x.T, dt)
    assert_close(ev(lambda t: op("permute_dimensions", t, i64([1, 0, 2]), 3), x),
                 x.transpose(1, 0, 2), dt)


EINSUM = [  # (equation, operand shapes): Keras' EinsumDense and attention equations among them
    ("ab,bc->ac", [(2, 3), (3, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("abc,cde->abde", [(2, 3, 4), (4, 2, 3)]),
    ("abcd,cde->abe", [(2, 3, 2, 4), (2, 4, 5)]),
    ("aecd,abcd->acbe", [(2, 5, 3, 4), (2, 6, 3, 4)]),
    ("acbe,aecd->abcd", [(2, 3, 6, 5), (2, 5, 3, 4)]),
    ("...b,bc->...c", [(2, 3, 4), (4, 5)]),
    ("b...,bc->c...", [(4, 2, 3), (4, 5)]),
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit output
    ("i,j->ij", [(3,), (4,)]),  # outer product
    ("ij,ij->i", [(3, 4), (3, 4)]),  # batch, nothing contracted but summed
    ("ijk,j->ik", [(2, 3, 4), (3,)]),
    ("abc,d->ac", [(2, 3, 4), (5,)]),  # labels of one operand summed alone
    ("ij->ji", [(2, 3)]),
    ("ijk->k", [(2, 3, 4)]),
    ("i...->...", [(3, 2, 4)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum(eq, shapes, dt, rng):
    xs = [randn(rng, s, dt) for s in shapes]
    r = ev(lambda *ts: op("einsum", eq.encode(), kb.handles(ts), len(ts)), *xs)
    assert_close(r, np.einsum(eq, *[x.astype(np.float64) for x in xs]), dt)


def test_einsum_unknown_dims(dt, rng):
    """Attention's equations on (None, None, heads, dim) projections: the dims at run time."""
    q, k = kb.placeholder([-1, -1, 2, 3], dt), kb.placeholder([-1, -1, 2, 3], dt)
    out = op("einsum", b"aecd,abcd->acbe", kb.handles([k, q]), 2)
    assert out.shape == (None, 2, None, None)
    f = kb.Function([q, k], [out])
    for b, t, s in ((1, 4, 5), (3, 2, 2)):
        x, y = randn(rng, (b, t, 2, 3), dt), randn(rng, (b, s, 2, 3), dt)
        assert_close(f(x, y)[0], np.einsum("aecd,abcd->acbe", y, x), dt)


@pytest.mark.parametrize("eq,shapes,message", [
    ("ab,bc->ac", [(2, 3), (4, 5)], "subscript 'b' is dim 3 of the first operand and 4"),
    ("abc,cd->abd", [(2, 3), (3, 4)], "names 3 dims of an operand of rank 2"),
    ("ii->i", [(3, 3)], "repeats a subscript"),
    ("ab,bc->az", [(2, 3), (3, 4)], "'z' of the output is not a subscript"),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)], "one or two operands"),
    ("a1,bc->ac", [(2, 3), (3, 4)], "is not a subscript"),
])
def test_einsum_refusals(eq, shapes, message, rng):
    ts = [const(randn(rng, s, kb.F32)) for s in shapes]
    assert message in error_of("einsum", eq.encode(), kb.handles(ts), len(ts))


def test_einsum_null_equation():
    assert "equation is NULL" in error_of("einsum", None, kb.handles([const(np.ones(2))]), 1)
