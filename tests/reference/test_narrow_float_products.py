"""float16 and bfloat16 products on the CPU: the 16-bit operands are widened to float32, the
float32 kernel runs, and its result is rounded once to the 16-bit type (core/cpu/widen); or, for
bfloat16 on a CPU with bf16 arithmetic, oneDNN's bf16 kernels accumulate in float32 and round
once (subnormals counting as zero).

An outer product (an inner dimension of 1) makes every result one float32 product, which is exact
for 16-bit operands (at most 22 significant bits), so the stored value must be NumPy's float32
product rounded to nearest even, bit for bit: subnormals, ties, overflow to inf, inf and NaN
included. Sizes not a multiple of 8 also check the tails of the vectorized conversions.
"""
import numpy as np
import pytest

import kb
from kb import BF16, F16, const, op, run

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0, 6.0e-8, -6.0e-8, 3 * 2.0 ** -24,
           2.0 ** -14, 0.5, 1.5, 1 + 2.0 ** -10, 3.0, 1.0 / 3.0]


def operand(rng, n, dtype):
    """n 16-bit values: the specials, then random ones of every magnitude the type holds."""
    top = 15 if dtype == F16 else 120
    mags = 2.0 ** rng.uniform(-26 if dtype == F16 else -130, top, n - len(SPECIAL))
    signs = rng.choice([-1.0, 1.0], n - len(SPECIAL))
    return kb.narrow_store(np.concatenate([SPECIAL, signs * mags]).astype(np.float32), dtype)


def rounded_outer(x, y, dtype):
    """NumPy's float32 outer product of two 16-bit vectors, rounded to their dtype. On a CPU with
    bfloat16 arithmetic, whose bf16 kernels compute bfloat16 products, subnormal operands and
    results count as zero there, as TensorFlow's and PyTorch's do on it."""
    a, b = kb.narrow_values(x, dtype), kb.narrow_values(y, dtype)
    daz = dtype == BF16 and kb.native_bf16_products()
    if daz:
        a, b = kb.flush_subnormals(a), kb.flush_subnormals(b)
    product = a[:, None] * b[None, :]
    return kb.narrow_store(kb.flush_subnormals(product) if daz else product, dtype)


def bits_equal(got, expected):
    """Same bits, except that any NaN matches any NaN and a zero matches a zero of either sign
    (a GEMM adds its product to a zero accumulator)."""
    g, e = got.view(np.uint16), expected.view(np.uint16)
    nan_g = (g & 0x7FFF) > (0x7C00 if got.dtype == np.float16 else 0x7F80)
    nan_e = (e & 0x7FFF) > (0x7C00 if expected.dtype == np.float16 else 0x7F80)
    np.testing.assert_array_equal(nan_g, nan_e)
    zero = (e & 0x7FFF) == 0
    np.testing.assert_array_equal((g & 0x7FFF)[zero], 0)
    keep = ~nan_e & ~zero
    np.testing.assert_array_equal(g[keep], e[keep])


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("n,m", [(301, 203), (8, 8), (5, 3)])
def test_outer_product_rounds_once(dtype, n, m):
    rng = np.random.default_rng(7 + n)
    x = operand(rng, max(n, len(SPECIAL) + 1), dtype)[:n]
    y = operand(rng, max(m, len(SPECIAL) + 1), dtype)[::-1][:m]
    got = run(op("dot", const(x.reshape(n, 1)), const(y.reshape(1, m))))
    with np.errstate(invalid="ignore", over="ignore"):
        expected = rounded_outer(x, y, dtype)
    assert got.dtype == expected.dtype
    bits_equal(got, expected)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_subnormal_ties_round_to_even(dtype):
    # k * 2^-24 times 0.5 lies halfway between float16's subnormal neighbours for odd k (ties to
    # even); in bfloat16, (1 + 2^-7) * 1.5 = 1.5 + 2^-7 + 2^-8 is halfway between 1.5 + 2^-7 and
    # 1.5 + 2^-6 (rounds up to the even one), (1 + 3 * 2^-7) * 0.5 is exact.
    if dtype == F16:
        x = (np.arange(1, 20, dtype=np.float32) * 2.0 ** -24).astype(np.float16)
        y = np.array([0.5], np.float16)
    else:
        x = kb.bf16_bits(np.float32([1 + 2.0 ** -7, 1 + 3 * 2.0 ** -7, 3.0, 2.0 ** -126 * 3]))
        y = kb.bf16_bits(np.float32([1 + 2.0 ** -7, 0.5, 1.5]))
    got = run(op("dot", const(x.reshape(-1, 1)), const(y.reshape(1, -1))))
    bits_equal(got, rounded_outer(x, y, dtype))
