"""The CPU's float32 exp, tanh and sigmoid (branch-free polynomials, core/ops/scalar_funcs.h)
against float64 NumPy: within 2 ulp everywhere, including arguments whose intermediate products
would be subnormal (tiny arguments), the subnormal results of exp and the saturated ends."""
import numpy as np
import pytest

from kb import ev, op

F32 = np.float32


def sweep():
    rng = np.random.default_rng(5)
    mags = np.concatenate([10.0 ** rng.uniform(-44, 2, 20000), rng.uniform(0, 90, 5000),
                           np.arange(-150, 130) * np.log(2.0)])  # exp's range reduction edges
    x = np.concatenate([mags, -mags, [0.0, 1e-45, 2.0 ** -13, 2.0 ** -33, 88.7, -87.3, -103.9]])
    return x.astype(F32)


def ulp_distance(a, b):
    """|a - b| in float32 ulps (b the float64 reference rounded to float32)."""
    ia = a.view(np.int32).astype(np.int64)
    ib = b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, np.int64(-2 ** 31) - ia, ia)  # monotone integer order of floats
    ib = np.where(ib < 0, np.int64(-2 ** 31) - ib, ib)
    return np.abs(ia - ib)


REFS = {
    "exp": np.exp,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
}


@pytest.mark.parametrize("name", sorted(REFS))
def test_within_two_ulp(name):
    x = sweep()
    if name == "exp":
        x = x[x < 88.7]  # above: inf, checked below
    with np.errstate(all="ignore"):
        expected = REFS[name](x.astype(np.float64)).astype(F32)
    r = ev(lambda t: op(name, t), x)
    d = ulp_distance(r, expected)
    worst = np.argmax(d)
    assert d[worst] <= 2, (name, x[worst], r[worst], expected[worst])


def test_tiny_arguments_exact():
    x = np.array([1e-20, -3e-30, 1e-12, -2e-5, 1e-40, 0.0, -0.0], F32)
    t = ev(lambda v: op("tanh", v), x)
    assert np.array_equal(t.view(np.int32), x.view(np.int32))  # tanh(x) = x, -0 kept
    assert np.all(ev(lambda v: op("exp", v), x[x != F32(-2e-5)]) == 1.0)


def test_saturated_ends():
    x = np.array([89.0, 200.0, -200.0, -104.0, np.inf, -np.inf, np.nan], F32)
    e = ev(lambda v: op("exp", v), x)
    assert np.isinf(e[0]) and np.isinf(e[1]) and e[2] == 0 and e[3] == 0
    assert np.isinf(e[4]) and e[5] == 0 and np.isnan(e[6])
    t = ev(lambda v: op("tanh", v), x)
    assert t[1] == 1 and t[2] == -1 and t[4] == 1 and t[5] == -1 and np.isnan(t[6])
